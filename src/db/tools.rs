//! Queries of tools (SPEC §2): versions, notes, imports, the toolbox's pages.

use super::{Conn, DbResult, Pool};
use crate::domain::PromotedBy;
use crate::{execute, on_db};
use serde_json::Value;
use sqlx::FromRow;

/// A tool with its current (newest) version, as lists and calls need it.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct ToolRow {
    /// Tool id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Name within the vendor.
    pub name: String,
    /// The OpenAPI operation key it came from.
    pub operation_id: Option<String>,
    /// Current version number.
    pub version: i64,
    pub title: Option<String>,
    pub description: String,
    /// Input schema (JSON text).
    pub input_schema: String,
    /// Output schema (JSON text).
    pub output_schema: Option<String>,
    /// HTTP method.
    pub method: String,
    pub path_template: String,
    /// Binding (JSON text).
    pub binding: String,
    /// MCP readOnlyHint.
    pub read_only_hint: bool,
    /// MCP destructiveHint.
    pub destructive_hint: bool,
    /// MCP idempotentHint.
    pub idempotent_hint: bool,
    /// MCP openWorldHint.
    pub open_world_hint: bool,
    /// Who made the current version: `agent:<id>`, `person:<name>` or `import`.
    pub authored_by: String,
    /// Who made version 1 (an agent-authored tool asks a person before its first call).
    pub first_author: String,
    /// The person whose hints the tool carries (they survive publishes), if any.
    pub hints_by: Option<String>,
    /// The person who marked the tool read-only, since the last version an agent wrote.
    pub read_only_by: Option<String>,
    /// When a re-import retired it (its operation left the document), ms.
    pub retired_at: Option<i64>,
    /// When its vendor was disabled, ms.
    pub vendor_disabled_at: Option<i64>,
    /// When its vendor was removed, ms (its vendor is disabled as well).
    pub vendor_removed_at: Option<i64>,
    /// Tokens of the current version's served definition (issue 29.1), `None` until
    /// counted.
    pub tokens: Option<i64>,
}

pub(crate) const TOOL_SELECT: &str = "SELECT t.id, vd.slug AS vendor, t.name, t.operation_id, v.version, v.title, v.description, \
     v.input_schema, v.output_schema, v.method, v.path_template, v.binding, v.read_only_hint, v.destructive_hint, \
     v.idempotent_hint, v.open_world_hint, v.authored_by, t.hints_by, t.read_only_by, t.retired_at, \
     vd.disabled_at AS vendor_disabled_at, vd.removed_at AS vendor_removed_at, \
     (SELECT f.authored_by FROM tool_versions f WHERE f.tool_id = t.id AND f.version = 1) AS first_author, v.tokens \
     FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
     JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id)";

/// A new tool version to insert.
#[derive(Debug, Clone)]
pub struct NewVersion<'a> {
    pub title: Option<&'a str>,
    pub description: &'a str,
    pub input_schema: &'a Value,
    pub output_schema: Option<&'a Value>,
    /// HTTP method.
    pub method: &'a str,
    pub path_template: &'a str,
    pub binding: &'a Value,
    /// Hints: read-only, destructive, idempotent, open-world.
    pub hints: [bool; 4],
    /// `agent:<id>`, `console:<user>` or `import`.
    pub authored_by: &'a str,
    /// The version's search text (JSON of `domain::search::SearchText`).
    pub search_text: String,
}

/// Inserts a tool and its version 1; returns the tool id. Errors: the name is taken.
pub async fn insert_tool(
    conn: &mut Conn,
    vendor_id: i64,
    name: &str,
    operation_id: Option<&str>,
    v: &NewVersion<'_>,
    now: i64,
) -> DbResult<i64> {
    let id: i64 = on_db!(conn, |e| {
        sqlx::query_scalar(
        "INSERT INTO tools (vendor_id, name, operation_id, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(vendor_id)
    .bind(name)
    .bind(operation_id)
    .bind(now)
    .fetch_one(e).await
    })?;
    insert_tool_version(conn, id, 1, v, now).await?;
    Ok(id)
}

/// Inserts version `version` of a tool.
pub async fn insert_tool_version(
    conn: &mut Conn,
    tool_id: i64,
    version: i64,
    v: &NewVersion<'_>,
    now: i64,
) -> DbResult<()> {
    execute!(conn, "INSERT INTO tool_versions (tool_id, version, title, description, input_schema, output_schema, method, \
         path_template, binding, read_only_hint, destructive_hint, idempotent_hint, open_world_hint, authored_by, created_at, search_text) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)", tool_id, version, v.title, v.description, v.input_schema.to_string(), v.output_schema.map(|s| s.to_string()), v.method, v.path_template, v.binding.to_string(), v.hints[0], v.hints[1], v.hints[2], v.hints[3], v.authored_by, now, &v.search_text)?;
    Ok(())
}

/// Names and operation keys of a vendor's tools.
pub async fn select_tool_names(
    pool: &Pool,
    vendor_id: i64,
) -> DbResult<Vec<(String, Option<String>)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT name, operation_id FROM tools WHERE vendor_id = $1"
    )
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// A tool by vendor slug and name, with its current version.
pub async fn select_tool(pool: &Pool, vendor: &str, name: &str) -> DbResult<Option<ToolRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TOOL_SELECT} WHERE vd.slug = $1 AND t.name = $2"
    ))
    .bind(vendor)
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// Number of tools in the toolbox.
pub async fn count_tools(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM tools t JOIN vendors v ON v.id = t.vendor_id \
         WHERE t.retired_at IS NULL AND v.removed_at IS NULL",
    )
    .fetch_one(e)
    .await)
}

/// Tools with their current version, by id.
pub async fn select_tools_by_ids(pool: &Pool, ids: &[i64]) -> DbResult<Vec<ToolRow>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(on_db!(pool, |e| {
            let mut qb = sqlx::QueryBuilder::new(format!("{TOOL_SELECT} WHERE t.id IN ("));
            let mut list = qb.separated(", ");
            for id in chunk {
                list.push_bind(*id);
            }
            qb.push(")");
            qb.build_query_as::<ToolRow>().fetch_all(e).await
        })?);
    }
    Ok(out)
}

/// A tool as the console's Toolbox lists it when browsing (issue 14.2): its current
/// version's method and hints, and its use summed over every agent.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct BrowseRow {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Current version's description.
    pub description: String,
    /// Current version's HTTP method (as stored).
    pub method: String,
    /// readOnlyHint.
    pub read_only_hint: bool,
    /// destructiveHint.
    pub destructive_hint: bool,
    /// Calls that reached the vendor, every agent's together.
    pub calls: i64,
    /// The last such call (ms), by any agent.
    pub last_used_at: Option<i64>,
    /// Tokens of its served definition (issue 29.1), `None` until counted.
    pub tokens: Option<i64>,
}

/// How the Toolbox orders tools when browsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowseOrder {
    /// By vendor slug, then name.
    Name,
    /// Most calls first, then by vendor slug and name.
    Use,
}

/// One page of the toolbox (`limit` tools from `offset`) of one vendor or all, in
/// `order`, with the number of tools in all.
pub async fn select_toolbox_page(
    pool: &Pool,
    vendor: Option<&str>,
    order: BrowseOrder,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<BrowseRow>, i64)> {
    let order_by = match order {
        BrowseOrder::Name => "vd.slug, t.name",
        BrowseOrder::Use => "calls DESC, vd.slug, t.name",
    };
    let rows = on_db!(pool, |e| {
        sqlx::query_as(&format!(
        "SELECT vd.slug AS vendor, t.name, v.description, v.method, v.read_only_hint, v.destructive_hint, \
         COALESCE(u.calls, 0) AS calls, u.last_used_at, v.tokens FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
         JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) \
         LEFT JOIN (SELECT tool_id, CAST(SUM(calls) AS BIGINT) AS calls, MAX(last_used_at) AS last_used_at FROM tool_usage GROUP BY tool_id) u \
         ON u.tool_id = t.id WHERE ($1 IS NULL OR vd.slug = $1) AND t.retired_at IS NULL AND vd.disabled_at IS NULL ORDER BY {order_by} LIMIT $2 OFFSET $3"
    ))
    .bind(vendor)
    .bind(limit)
    .bind(offset)
    .fetch_all(e).await
    })?;
    let total = on_db!(pool, |e| {
        sqlx::query_scalar(
        "SELECT COUNT(*) FROM tools t JOIN vendors vd ON vd.id = t.vendor_id WHERE ($1 IS NULL OR vd.slug = $1) AND t.retired_at IS NULL AND vd.disabled_at IS NULL",
    )
    .bind(vendor)
    .fetch_one(e).await
    })?;
    Ok((rows, total))
}

/// A tool with its newest version that import wrote (instead of its current one), when
/// there is one.
pub async fn select_last_imported_version(
    conn: &mut Conn,
    tool_id: i64,
) -> DbResult<Option<ToolRow>> {
    let sql = TOOL_SELECT.replace(
        "v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id)",
        "v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id AND authored_by = 'import')",
    ) + " WHERE t.id = $1";
    on_db!(conn, |e| sqlx::query_as(&sql)
        .bind(tool_id)
        .fetch_optional(e)
        .await)
}

/// Marks a tool retired at `at` (ms), or restores it (`None`).
pub async fn update_tool_retired(conn: &mut Conn, tool_id: i64, at: Option<i64>) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE tools SET retired_at = $2 WHERE id = $1",
        tool_id,
        at
    )?;
    Ok(())
}

/// Records an import of a vendor's document: who (`person:<name>`, `rule`), when (ms),
/// and its summary (JSON of the service's import report).
pub async fn insert_import(
    conn: &mut Conn,
    vendor_id: i64,
    actor: &str,
    at: i64,
    summary: &str,
) -> DbResult<()> {
    execute!(
        conn,
        "INSERT INTO imports (vendor_id, actor, at, summary) VALUES ($1, $2, $3, $4)",
        vendor_id,
        actor,
        at,
        summary
    )?;
    Ok(())
}

/// The newest `limit` imports of every vendor: `(vendor slug, actor, ms, summary JSON)`.
pub async fn select_recent_imports(
    pool: &Pool,
    limit: i64,
) -> DbResult<Vec<(String, String, i64, String)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT vd.slug, i.actor, i.at, i.summary FROM imports i JOIN vendors vd ON vd.id = i.vendor_id \
         ORDER BY i.at DESC, i.id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(e).await
    })
}

/// A vendor's imports, newest first: `(actor, ms, summary JSON)`.
pub async fn select_imports(pool: &Pool, vendor_id: i64) -> DbResult<Vec<(String, i64, String)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT actor, at, summary FROM imports WHERE vendor_id = $1 ORDER BY at DESC, id DESC",
    )
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// Every tool of a vendor with its current version, by name.
pub async fn select_vendor_tools(pool: &Pool, vendor: &str) -> DbResult<Vec<ToolRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TOOL_SELECT} WHERE vd.slug = $1 ORDER BY t.name"
    ))
    .bind(vendor)
    .fetch_all(e)
    .await)
}

/// One stored version of a tool.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct VersionRow {
    /// Version number.
    pub version: i64,
    pub title: Option<String>,
    pub description: String,
    /// Input schema (JSON text).
    pub input_schema: String,
    pub method: String,
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
    execute!(
        conn,
        "UPDATE tools SET hints_by = $1 WHERE id = $2",
        who,
        tool_id
    )?;
    Ok(())
}

/// Records who marked a tool read-only (`None`: nobody, or an agent wrote a version
/// since): an agent-written tool a person marked read-only runs without approval.
pub async fn update_read_only_by(conn: &mut Conn, tool_id: i64, who: Option<&str>) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE tools SET read_only_by = $1 WHERE id = $2",
        who,
        tool_id
    )?;
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
    execute!(
        conn,
        "UPDATE tools SET name = $1 WHERE id = $2",
        name,
        tool_id
    )?;
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
    execute!(
        conn,
        "INSERT INTO tool_notes (tool_id, author, body, created_at) VALUES ($1, $2, $3, $4)",
        tool_id,
        author,
        body,
        now
    )?;
    Ok(())
}

/// [`insert_note_in`] on a connection of its own.
pub async fn insert_note(
    pool: &Pool,
    tool_id: i64,
    author: &str,
    body: &str,
    now: i64,
) -> DbResult<()> {
    insert_note_in(&mut pool.acquire().await?, tool_id, author, body, now).await
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
pub async fn select_promoters(pool: &Pool, tool_id: i64) -> DbResult<Vec<PromoterRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT a.id AS agent_id, a.name AS agent, ws.promoted_by FROM working_set ws JOIN agents a ON a.id = ws.agent_id \
         WHERE ws.tool_id = $1 ORDER BY a.name",
    )
    .bind(tool_id)
    .fetch_all(e).await
    })
}

/// An agent that has a tool promoted.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct PromoterRow {
    pub agent_id: i64,
    pub agent: String,
    /// Who promoted it.
    #[sqlx(try_from = "String")]
    pub promoted_by: PromotedBy,
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

/// The current version of a tool whose served definition needs counting (issue 29.1):
/// never counted, or counted on another basis.
#[derive(Debug, Clone, FromRow)]
pub struct UncountedVersion {
    /// `tool_versions.id`.
    pub version_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// Input schema (JSON text).
    pub input_schema: String,
    /// Output schema (JSON text).
    pub output_schema: Option<String>,
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
    /// Binding (JSON text): an MCP vendor's tool serves its server's icons and `_meta`.
    pub binding: String,
}

/// Up to `limit` current tool versions whose `tokens` is missing or, with `recount`,
/// was counted on a basis other than `basis`, by version id.
pub async fn select_uncounted_versions(
    pool: &Pool,
    basis: &str,
    recount: bool,
    limit: i64,
) -> DbResult<Vec<UncountedVersion>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT v.id AS version_id, vd.slug AS vendor, t.name, v.title, v.description, v.input_schema, \
         v.output_schema, v.read_only_hint, v.destructive_hint, v.idempotent_hint, v.open_world_hint, v.binding \
         FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
         JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) \
         WHERE v.tokens IS NULL OR ($2 AND (v.tokens_basis IS NULL OR v.tokens_basis <> $1)) \
         ORDER BY v.id LIMIT $3",
    )
    .bind(basis)
    .bind(recount)
    .bind(limit)
    .fetch_all(e)
    .await
    })
}

/// Stores counted tokens `(version id, tokens)` with their basis.
pub async fn update_version_tokens(
    conn: &mut Conn,
    counted: &[(i64, i64)],
    basis: &str,
) -> DbResult<()> {
    for (id, tokens) in counted {
        execute!(
            conn,
            "UPDATE tool_versions SET tokens = $1, tokens_basis = $2 WHERE id = $3",
            *tokens,
            basis,
            *id
        )?;
    }
    Ok(())
}

/// `(tool id, tokens)` of the current versions of `ids` (unknown ids left out; `None`
/// while not counted).
pub async fn select_current_tokens(pool: &Pool, ids: &[i64]) -> DbResult<Vec<(i64, Option<i64>)>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(on_db!(pool, |e| {
            let mut qb = sqlx::QueryBuilder::new(
                "SELECT v.tool_id, v.tokens FROM tool_versions v \
                 WHERE v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = v.tool_id) \
                 AND v.tool_id IN (",
            );
            let mut list = qb.separated(", ");
            for id in chunk {
                list.push_bind(*id);
            }
            qb.push(")");
            qb.build_query_as::<(i64, Option<i64>)>().fetch_all(e).await
        })?);
    }
    Ok(out)
}

/// SQL for the tokens of tool `tool_col`'s current version, 0 while not counted.
pub(crate) fn current_tokens_sql(tool_col: &str) -> String {
    format!(
        "COALESCE((SELECT tv.tokens FROM tool_versions tv WHERE tv.tool_id = {tool_col} ORDER BY tv.version DESC LIMIT 1), 0)"
    )
}
