//! Queries of what find_tool learns from agents' picks (issue 24.3): each agent's last
//! search, and the evidence that a phrase means a tool.

use super::{DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// Keeps `agent_id`'s last find_tool: its task words (`phrase`, payload stripped), the
/// ids of the tools it answered (`hits`, comma-separated) and when (ms). Replaces the one
/// before.
pub async fn upsert_recent_search(
    pool: &Pool,
    agent_id: i64,
    phrase: &str,
    hits: &str,
    at: i64,
) -> DbResult<()> {
    execute!(
        pool,
        "INSERT INTO recent_searches (agent_id, phrase, hits, at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (agent_id) DO UPDATE SET phrase = excluded.phrase, hits = excluded.hits, at = excluded.at",
        agent_id,
        phrase,
        hits,
        at
    )?;
    Ok(())
}

/// `agent_id`'s last find_tool as [`upsert_recent_search`] kept it: `(phrase, hits, ms)`.
pub async fn select_recent_search(
    pool: &Pool,
    agent_id: i64,
) -> DbResult<Option<(String, String, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT phrase, hits, at FROM recent_searches WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_optional(e)
    .await)
}

/// Forgets `agent_id`'s last search (it taught a tool, or taught nothing); how many rows
/// went (0 or 1).
pub async fn delete_recent_search(pool: &Pool, agent_id: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM recent_searches WHERE agent_id = $1",
        agent_id
    )
}

/// Forgets every agent's search made before `before` (ms).
pub async fn delete_recent_searches_before(pool: &Pool, before: i64) -> DbResult<u64> {
    execute!(pool, "DELETE FROM recent_searches WHERE at < $1", before)
}

/// Takes back what `agent_id`'s picks taught about `tool_id`; how many rows went.
pub async fn delete_agent_tool_evidence(pool: &Pool, agent_id: i64, tool_id: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM search_evidence WHERE agent_id = $1 AND tool_id = $2",
        agent_id,
        tool_id
    )
}

/// Keeps `agent_id`'s newest `keep` pieces of evidence and drops the rest.
pub async fn trim_agent_evidence(pool: &Pool, agent_id: i64, keep: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM search_evidence WHERE agent_id = $1 AND at < \
         (SELECT at FROM search_evidence WHERE agent_id = $1 ORDER BY at DESC LIMIT 1 OFFSET $2)",
        agent_id,
        keep - 1
    )
}

/// Records that `agent_id` picked `tool_id` after asking for `phrase` (at `at`, ms): one
/// row per tool, agent and phrase, whose time moves to the newest pick.
pub async fn upsert_evidence(
    pool: &Pool,
    tool_id: i64,
    agent_id: i64,
    phrase: &str,
    at: i64,
) -> DbResult<()> {
    execute!(
        pool,
        "INSERT INTO search_evidence (tool_id, agent_id, phrase, at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (tool_id, agent_id, phrase) DO UPDATE SET at = excluded.at",
        tool_id,
        agent_id,
        phrase,
        at
    )?;
    Ok(())
}

/// One piece of evidence: an agent picked the tool after asking for the phrase.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct EvidenceRow {
    pub tool_id: i64,
    pub agent_id: i64,
    /// The request's task words, lower case, space-separated.
    pub phrase: String,
    /// The newest pick, ms.
    pub at: i64,
}

/// Every piece of evidence of agents that are not disabled, by tool and phrase.
pub async fn select_evidence(pool: &Pool) -> DbResult<Vec<EvidenceRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
            "SELECT e.tool_id, e.agent_id, e.phrase, e.at FROM search_evidence e \
         JOIN agents a ON a.id = e.agent_id WHERE a.disabled_at IS NULL \
         ORDER BY e.tool_id, e.phrase, e.agent_id",
        )
        .fetch_all(e)
        .await
    })
}

/// One tool's evidence, by phrase.
pub async fn select_tool_evidence(pool: &Pool, tool_id: i64) -> DbResult<Vec<EvidenceRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT tool_id, agent_id, phrase, at FROM search_evidence WHERE tool_id = $1 ORDER BY phrase, agent_id"
    )
    .bind(tool_id)
    .fetch_all(e)
    .await
    })
}

/// Forgets what was learned for one tool; how many rows went.
pub async fn delete_tool_evidence(pool: &Pool, tool_id: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM search_evidence WHERE tool_id = $1",
        tool_id
    )
}
