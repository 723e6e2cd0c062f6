//! Queries of agents (SPEC §2): rows, tokens, settings, last seen.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// An `agents` row.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct AgentRow {
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// Harness label (e.g. "hermes").
    pub harness: Option<String>,
    /// Working-set cap, 1..=500.
    pub cap: i64,
    /// Idle window in days, 1..=3650.
    pub idle_window_days: i64,
    /// Creation time (ms).
    pub created_at: i64,
    /// Last authenticated request (ms).
    pub last_seen_at: Option<i64>,
    /// When a person disabled it (ms); its tokens are refused until it is enabled.
    pub disabled_at: Option<i64>,
    /// The starter template it uses (issue 31), if any.
    pub starter_template_id: Option<i64>,
    /// When a person removed it (ms): its token was replaced and its working set
    /// demoted; the row and its name stay for History.
    pub removed_at: Option<i64>,
    /// Most tokens its working set's definitions should cost (issue 29.2), if any.
    pub token_budget: Option<i64>,
}

const AGENT_COLUMNS: &str =
    "id, name, harness, cap, idle_window_days, created_at, last_seen_at, disabled_at, starter_template_id, removed_at, token_budget";

/// Inserts an agent; returns its id. Errors: the name or token hash is taken (unique).
pub async fn insert_agent(
    pool: &Pool,
    name: &str,
    harness: Option<&str>,
    token_hash: &str,
    cap: i64,
    idle_window_days: i64,
    now: i64,
) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "INSERT INTO agents (name, harness, token_hash, cap, idle_window_days, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(name)
    .bind(harness)
    .bind(token_hash)
    .bind(cap)
    .bind(idle_window_days)
    .bind(now)
    .fetch_one(e)
    .await)
}

/// How many agents exist that were not removed (the `/metrics` gauge, issue 30.1).
pub async fn count_agents(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM agents WHERE removed_at IS NULL"
    )
    .fetch_one(e)
    .await)
}

/// Every agent, by name.
pub async fn select_agents(pool: &Pool) -> DbResult<Vec<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents ORDER BY name"
    ))
    .fetch_all(e)
    .await)
}

/// The agent holding a token hash.
pub async fn select_agent_by_token_hash(
    pool: &Pool,
    token_hash: &str,
) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE token_hash = $1"
    ))
    .bind(token_hash)
    .fetch_optional(e)
    .await)
}

/// The agent with a name.
pub async fn select_agent_by_name(pool: &Pool, name: &str) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE name = $1"
    ))
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// The agent with an id.
pub async fn select_agent(pool: &Pool, id: i64) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(e)
    .await)
}

/// Sets `last_seen_at`.
pub async fn update_agent_last_seen(pool: &Pool, id: i64, now: i64) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE agents SET last_seen_at = $1 WHERE id = $2",
        now,
        id
    )?;
    Ok(())
}

/// Replaces an agent's token hash; whether the agent exists.
pub async fn update_agent_token(pool: &Pool, agent_id: i64, token_hash: &str) -> DbResult<bool> {
    let r = execute!(
        pool,
        "UPDATE agents SET token_hash = $1 WHERE id = $2",
        token_hash,
        agent_id
    )?;
    Ok(r == 1)
}

/// Sets or clears `disabled_at`; whether the agent exists.
pub async fn update_agent_disabled(
    pool: &Pool,
    id: i64,
    disabled_at: Option<i64>,
) -> DbResult<bool> {
    let r = execute!(
        pool,
        "UPDATE agents SET disabled_at = $1 WHERE id = $2",
        disabled_at,
        id
    )?;
    Ok(r == 1)
}

/// Sets (or clears) an agent's harness.
pub async fn update_agent_harness(pool: &Pool, id: i64, harness: Option<&str>) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE agents SET harness = $1 WHERE id = $2",
        harness,
        id
    )?;
    Ok(())
}

/// Sets an agent's harness when it has none (a client seen at initialize, issue 29.3);
/// returns whether it was set.
pub async fn update_agent_harness_if_unset(pool: &Pool, id: i64, harness: &str) -> DbResult<bool> {
    let n = execute!(
        pool,
        "UPDATE agents SET harness = $1 WHERE id = $2 AND harness IS NULL",
        harness,
        id
    )?;
    Ok(n == 1)
}

/// Updates an agent's name, cap, idle window and token budget.
pub async fn update_agent_settings(
    pool: &Pool,
    id: i64,
    name: &str,
    cap: i64,
    idle_window_days: i64,
    token_budget: Option<i64>,
) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE agents SET name = $1, cap = $2, idle_window_days = $3, token_budget = $4 WHERE id = $5",
        name,
        cap,
        idle_window_days,
        token_budget,
        id
    )?;
    Ok(())
}

/// Marks an agent removed (issue 28.1), in a transaction, as its first statement (on
/// PostgreSQL the row lock makes a concurrent [`lock_live_agent`] wait for this one):
/// its token hash becomes `token_hash` (a hash of nothing anyone holds), `removed_at`
/// and (unless set) `disabled_at` become `now`; its own starter tools, last search,
/// search evidence and pending approvals go. It keeps its name, which no new agent can
/// take. Whether it existed and was not removed already.
pub async fn update_agent_removed(
    conn: &mut Conn,
    id: i64,
    token_hash: &str,
    now: i64,
) -> DbResult<bool> {
    let r = execute!(
        &mut *conn,
        "UPDATE agents SET token_hash = $2, removed_at = $3, \
         disabled_at = COALESCE(disabled_at, $3), starter_template_id = NULL \
         WHERE id = $1 AND removed_at IS NULL",
        id,
        token_hash,
        now
    )?;
    if r == 0 {
        return Ok(false);
    }
    for sql in [
        "DELETE FROM agent_starter_tools WHERE agent_id = $1",
        "DELETE FROM recent_searches WHERE agent_id = $1",
        "DELETE FROM search_evidence WHERE agent_id = $1",
        "DELETE FROM approvals WHERE agent_id = $1 AND state = 'pending'",
    ] {
        execute!(&mut *conn, sql, id)?;
    }
    Ok(true)
}

/// In a transaction that changes an agent's working set: takes the agent's row lock
/// (PostgreSQL; SQLite's write lock serializes anyway) and says whether the agent is
/// still there and not removed, so that a promotion racing a removal either commits
/// first (and is demoted by it) or is refused.
pub async fn lock_live_agent(conn: &mut Conn, id: i64) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "UPDATE agents SET removed_at = removed_at WHERE id = $1 AND removed_at IS NULL",
        id
    )? == 1)
}
