//! Queries of working sets and their history (SPEC §3, §2 history).

use super::tools::{ToolRow, TOOL_SELECT};
use super::{Conn, DbResult, Pool};
use crate::domain::{Cause, HistoryAction, PromotedBy};
use crate::{execute, on_db};
use sqlx::FromRow;

/// A working-set entry with its tool's current version.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct EntryRow {
    #[sqlx(flatten)]
    pub tool: ToolRow,
    /// When it was promoted (ms).
    pub promoted_at: i64,
    /// Who promoted it.
    #[sqlx(try_from = "String")]
    pub promoted_by: PromotedBy,
}

/// The agent's working set in a stable order (vendor, name).
pub async fn select_working_set(pool: &Pool, agent_id: i64) -> DbResult<Vec<EntryRow>> {
    let sql = TOOL_SELECT.replacen(
        "SELECT t.id,",
        "SELECT ws.promoted_at, ws.promoted_by, t.id,",
        1,
    ) + " JOIN working_set ws ON ws.tool_id = t.id WHERE ws.agent_id = $1 ORDER BY vd.slug, t.name";
    on_db!(pool, |e| sqlx::query_as(&sql)
        .bind(agent_id)
        .fetch_all(e)
        .await)
}

/// An agent's working set as `(tool id, current version)`, ordered by vendor and name.
pub async fn select_working_set_versions(pool: &Pool, agent_id: i64) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT t.id, (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) FROM working_set ws \
         JOIN tools t ON t.id = ws.tool_id JOIN vendors vd ON vd.id = t.vendor_id \
         WHERE ws.agent_id = $1 ORDER BY vd.slug, t.name",
    )
    .bind(agent_id)
    .fetch_all(e).await
    })
}

/// Ids of the tools in an agent's working set.
pub async fn select_working_set_ids(pool: &Pool, agent_id: i64) -> DbResult<Vec<i64>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT tool_id FROM working_set WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}

/// Ids of the tools in an agent's working set, read in a transaction.
pub async fn select_working_set_ids_in(conn: &mut Conn, agent_id: i64) -> DbResult<Vec<i64>> {
    on_db!(conn, |e| sqlx::query_scalar(
        "SELECT tool_id FROM working_set WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}

/// Size of an agent's working set.
pub async fn count_working_set(conn: &mut Conn, agent_id: i64) -> DbResult<i64> {
    on_db!(conn, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM working_set WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_one(e)
    .await)
}

/// Adds an entry unless present; returns whether a row was inserted.
pub async fn insert_working_set_entry(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    promoted_by: PromotedBy,
    now: i64,
) -> DbResult<bool> {
    let r = execute!(conn, "INSERT INTO working_set (agent_id, tool_id, promoted_at, promoted_by) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (agent_id, tool_id) DO NOTHING", agent_id, tool_id, now, promoted_by.as_str())?;
    Ok(r == 1)
}

/// Removes an entry; returns whether a row was deleted.
pub async fn delete_working_set_entry(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
) -> DbResult<bool> {
    let r = execute!(
        conn,
        "DELETE FROM working_set WHERE agent_id = $1 AND tool_id = $2",
        agent_id,
        tool_id
    )?;
    Ok(r == 1)
}

/// Appends a history row.
pub async fn insert_history(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    action: HistoryAction,
    cause: Cause,
    actor: &str,
    now: i64,
) -> DbResult<()> {
    execute!(conn, "INSERT INTO history (agent_id, tool_id, action, cause, actor, at) VALUES ($1, $2, $3, $4, $5, $6)", agent_id, tool_id, action.as_str(), cause.as_str(), actor, now)?;
    Ok(())
}

/// A history row with the tool's qualified parts.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct HistoryRow {
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// What it did.
    #[sqlx(try_from = "String")]
    pub action: HistoryAction,
    /// Cause (SPEC §1).
    #[sqlx(try_from = "String")]
    pub cause: Cause,
    /// Who acted.
    pub actor: String,
    /// When (ms).
    pub at: i64,
}

/// An agent's history, newest first.
pub async fn select_history(
    pool: &Pool,
    agent_id: i64,
    limit: i64,
    offset: i64,
) -> DbResult<Vec<HistoryRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT h.id, vd.slug AS vendor, t.name, h.action, h.cause, h.actor, h.at FROM history h \
         JOIN tools t ON t.id = h.tool_id JOIN vendors vd ON vd.id = t.vendor_id \
         WHERE h.agent_id = $1 ORDER BY h.at DESC, h.id DESC LIMIT $2 OFFSET $3",
    )
    .bind(agent_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(e)
    .await)
}

/// Number of history rows of an agent.
pub async fn count_history(pool: &Pool, agent_id: i64) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM history WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_one(e)
    .await)
}

/// `(agent id, working-set size, its tokens)` of every agent with at least one entry.
pub async fn select_working_set_sizes(pool: &Pool) -> DbResult<Vec<(i64, i64, i64)>> {
    let sql = format!(
        "SELECT agent_id, COUNT(*), CAST(COALESCE(SUM({}), 0) AS BIGINT) FROM working_set GROUP BY agent_id",
        super::tools::current_tokens_sql("working_set.tool_id")
    );
    on_db!(pool, |e| sqlx::query_as(&sql).fetch_all(e).await)
}

/// Tokens of an agent's working set: the sum of its entries' current served definitions
/// (issue 29.1; entries not counted yet add 0).
pub async fn working_set_tokens(conn: &mut Conn, agent_id: i64) -> DbResult<i64> {
    let sql = format!(
        "SELECT CAST(COALESCE(SUM({}), 0) AS BIGINT) FROM working_set WHERE agent_id = $1",
        super::tools::current_tokens_sql("working_set.tool_id")
    );
    on_db!(conn, |e| sqlx::query_scalar(&sql)
        .bind(agent_id)
        .fetch_one(e)
        .await)
}

/// An agent's history as token steps, oldest first: `(at ms, +1 or -1, tokens of the
/// tool's current version or 0)` (the tokens over time of issue 29.1, counted at today's
/// versions).
pub async fn select_history_token_steps(
    pool: &Pool,
    agent_id: i64,
) -> DbResult<Vec<(i64, i64, i64)>> {
    let sql = format!(
        "SELECT at, CAST(CASE action WHEN 'promote' THEN 1 ELSE -1 END AS BIGINT), {} FROM history \
         WHERE agent_id = $1 ORDER BY at, id",
        super::tools::current_tokens_sql("history.tool_id")
    );
    on_db!(pool, |e| sqlx::query_as(&sql)
        .bind(agent_id)
        .fetch_all(e)
        .await)
}

/// `(tool_id, last_used_at, calls)` of every tool an agent has used (promoted or not).
pub async fn select_agent_usage(pool: &Pool, agent_id: i64) -> DbResult<Vec<(i64, i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT tool_id, last_used_at, calls FROM tool_usage WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}

/// `(at, +1 | -1)` of an agent's history, oldest first: the working-set size over time.
pub async fn select_history_steps(pool: &Pool, agent_id: i64) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT at, CAST(CASE action WHEN 'promote' THEN 1 ELSE -1 END AS BIGINT) FROM history \
         WHERE agent_id = $1 ORDER BY at, id",
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}

/// Working-set changes of every agent in `[from, to)` counted by time bucket (`(at -
/// from) / bucket_ms`), action and cause.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ChangeCountRow {
    pub bucket: i64,
    #[sqlx(try_from = "String")]
    pub action: HistoryAction,
    #[sqlx(try_from = "String")]
    pub cause: Cause,
    pub n: i64,
}

/// [`ChangeCountRow`]s of `[from, to)`: one scan of the `history_activity` index.
pub async fn select_change_counts(
    pool: &Pool,
    from: i64,
    to: i64,
    bucket_ms: i64,
) -> DbResult<Vec<ChangeCountRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT (at - $1) / $3 AS bucket, action, cause, COUNT(*) AS n FROM history \
         WHERE at >= $1 AND at < $2 GROUP BY 1, 2, 3",
    )
    .bind(from)
    .bind(to)
    .bind(bucket_ms.max(1))
    .fetch_all(e)
    .await)
}
