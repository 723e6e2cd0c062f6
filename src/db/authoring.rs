//! Queries of authored tools: versions, notes, stored documents.

use super::{Conn, DbResult, Pool};
use crate::on_db;
use sqlx::FromRow;

/// One stored version of a tool.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct VersionRow {
    /// Version number.
    pub version: i64,
    /// Title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Input schema (JSON text).
    pub input_schema: String,
    /// Method.
    pub method: String,
    /// Path template.
    pub path_template: String,
    /// Binding (JSON text).
    pub binding: String,
    /// readOnlyHint.
    pub read_only_hint: bool,
    /// destructiveHint.
    pub destructive_hint: bool,
    /// idempotentHint.
    pub idempotent_hint: bool,
    /// openWorldHint.
    pub open_world_hint: bool,
    /// `agent:<id>`, `person:<name>` or `import`.
    pub authored_by: String,
    /// When (ms).
    pub created_at: i64,
}

/// Every version of a tool, oldest first.
pub async fn select_versions(pool: &Pool, tool_id: i64) -> DbResult<Vec<VersionRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT version, title, description, input_schema, method, path_template, binding, read_only_hint, \
         destructive_hint, idempotent_hint, open_world_hint, authored_by, created_at FROM tool_versions \
         WHERE tool_id = $1 ORDER BY version",
    )
    .bind(tool_id)
    .fetch_all(e).await
    })
}

/// The newest version number of a tool (in a transaction, to number the next).
pub async fn select_max_version(conn: &mut Conn, tool_id: i64) -> DbResult<i64> {
    on_db!(conn, |e| sqlx::query_scalar(
        "SELECT MAX(version) FROM tool_versions WHERE tool_id = $1"
    )
    .bind(tool_id)
    .fetch_one(e)
    .await)
}

/// A note on a tool.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct NoteRow {
    /// Id.
    pub id: i64,
    /// `agent:<id>` or `person:<name>`.
    pub author: String,
    /// Text.
    pub body: String,
    /// When (ms).
    pub created_at: i64,
}

/// Records who (`person:<name>`, or `None` to forget) set a tool's hints: they survive
/// later publishes that keep the method (issue 12.15).
pub async fn update_hints_by(conn: &mut Conn, tool_id: i64, who: Option<&str>) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tools SET hints_by = $1 WHERE id = $2"
    )
    .bind(who)
    .bind(tool_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Records who marked a tool read-only (`None`: nobody, or an agent wrote a version
/// since): an agent-written tool a person marked read-only runs without approval.
pub async fn update_read_only_by(conn: &mut Conn, tool_id: i64, who: Option<&str>) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tools SET read_only_by = $1 WHERE id = $2"
    )
    .bind(who)
    .bind(tool_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Adds a note.
/// How many tools `author` (`agent:<id>`) wrote the first version of.
pub async fn count_tools_authored(pool: &Pool, author: &str) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM tool_versions WHERE version = 1 AND authored_by = $1",
    )
    .bind(author)
    .fetch_one(e)
    .await)
}

/// Renames a tool (an agent's tool whose name an imported operation takes; security
/// review 32.20). Errors: the name is taken.
pub async fn update_tool_name(conn: &mut Conn, tool_id: i64, name: &str) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tools SET name = $1 WHERE id = $2"
    )
    .bind(name)
    .bind(tool_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Adds a note to a tool inside a transaction.
pub async fn insert_note_in(
    conn: &mut Conn,
    tool_id: i64,
    author: &str,
    body: &str,
    now: i64,
) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "INSERT INTO tool_notes (tool_id, author, body, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(tool_id)
    .bind(author)
    .bind(body)
    .bind(now)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn insert_note(
    pool: &Pool,
    tool_id: i64,
    author: &str,
    body: &str,
    now: i64,
) -> DbResult<()> {
    on_db!(pool, |e| sqlx::query(
        "INSERT INTO tool_notes (tool_id, author, body, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(tool_id)
    .bind(author)
    .bind(body)
    .bind(now)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A tool's notes, oldest first.
pub async fn select_notes(pool: &Pool, tool_id: i64) -> DbResult<Vec<NoteRow>> {
    on_db!(pool, |e| {
        sqlx::query_as("SELECT id, author, body, created_at FROM tool_notes WHERE tool_id = $1 ORDER BY created_at, id")
        .bind(tool_id)
        .fetch_all(e).await
    })
}

/// Names of the agents that have a tool promoted, with promoted_by.
pub async fn select_promoters(pool: &Pool, tool_id: i64) -> DbResult<Vec<(i64, String, String)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT a.id, a.name, ws.promoted_by FROM working_set ws JOIN agents a ON a.id = ws.agent_id \
         WHERE ws.tool_id = $1 ORDER BY a.name",
    )
    .bind(tool_id)
    .fetch_all(e).await
    })
}

/// A vendor's stored OpenAPI document (JSON text).
pub async fn select_vendor_document(pool: &Pool, vendor_id: i64) -> DbResult<Option<String>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT openapi_document FROM vendors WHERE id = $1"
    )
    .bind(vendor_id)
    .fetch_one(e)
    .await)
}

/// The tool of a vendor made from an operation, if any.
pub async fn select_tool_by_operation(
    pool: &Pool,
    vendor_id: i64,
    operation_id: &str,
) -> DbResult<Option<String>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT name FROM tools WHERE vendor_id = $1 AND operation_id = $2"
    )
    .bind(vendor_id)
    .bind(operation_id)
    .fetch_optional(e)
    .await)
}
