//! Queries of the sweep (SPEC §5) and of agent settings.

use super::{Conn, DbResult, Pool};
use crate::domain::{Cause, HistoryAction};
use crate::on_db;
use sqlx::FromRow;

/// The working-set entries, with usage, of every agent the rule may touch as of `now`:
/// agents with a token budget, over their cap, or with an entry whose idle clock is older
/// than their window (the rows are `(agent id, tool id, promoted_at, last_used_at,
/// tokens of the current version or 0)`, ordered by agent), so a sweep with nothing to
/// do reads few entries.
///
/// The one statement that differs by backend, for speed (same rows on both): SQLite
/// finds the agents fastest with a correlated count and EXISTS per agent (0.3 s at
/// 10,000 agents x 45 entries), PostgreSQL with one grouped pass over the entries (0.3 s,
/// where the correlated form takes 1.2 s).
pub async fn select_sweep_entries(
    pool: &Pool,
    now: i64,
) -> DbResult<Vec<(i64, i64, i64, Option<i64>, i64)>> {
    let touched = match pool {
        Pool::Sqlite(_) => {
            "SELECT a.id FROM agents a WHERE \
               a.token_budget IS NOT NULL \
               OR (SELECT COUNT(*) FROM working_set w WHERE w.agent_id = a.id) > a.cap \
               OR EXISTS (SELECT 1 FROM working_set w LEFT JOIN tool_usage v ON v.agent_id = w.agent_id AND v.tool_id = w.tool_id \
                          WHERE w.agent_id = a.id \
                          AND (CASE WHEN v.last_used_at > w.promoted_at THEN v.last_used_at ELSE w.promoted_at END) \
                              < $1 - a.idle_window_days * 86400000)"
        }
        Pool::Postgres(_) => {
            "SELECT w.agent_id FROM working_set w JOIN agents a ON a.id = w.agent_id \
             LEFT JOIN tool_usage v ON v.agent_id = w.agent_id AND v.tool_id = w.tool_id \
             GROUP BY w.agent_id, a.cap, a.idle_window_days, a.token_budget \
             HAVING a.token_budget IS NOT NULL OR COUNT(*) > a.cap \
               OR MIN(CASE WHEN v.last_used_at > w.promoted_at THEN v.last_used_at ELSE w.promoted_at END) \
                  < $1 - a.idle_window_days * 86400000"
        }
    };
    let sql = format!(
        "SELECT ws.agent_id, ws.tool_id, ws.promoted_at, u.last_used_at, \
         COALESCE((SELECT v.tokens FROM tool_versions v WHERE v.tool_id = ws.tool_id ORDER BY v.version DESC LIMIT 1), 0) \
         FROM working_set ws \
         LEFT JOIN tool_usage u ON u.agent_id = ws.agent_id AND u.tool_id = ws.tool_id \
         WHERE ws.agent_id IN ({touched}) ORDER BY ws.agent_id, ws.tool_id"
    );
    on_db!(pool, |e| sqlx::query_as(&sql).bind(now).fetch_all(e).await)
}

/// Number of working-set entries in all.
pub async fn count_entries(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM working_set"
    )
    .fetch_one(e)
    .await)
}

/// `(id, name, cap, idle window days, token budget)` of every agent.
#[allow(clippy::type_complexity)]
pub async fn select_agent_rules(
    pool: &Pool,
) -> DbResult<Vec<(i64, String, i64, i64, Option<i64>)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, name, cap, idle_window_days, token_budget FROM agents"
    )
    .fetch_all(e)
    .await)
}

/// `(tool id, vendor slug, name)` of every tool.
pub async fn select_tool_names_all(pool: &Pool) -> DbResult<Vec<(i64, String, String)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT t.id, vd.slug, t.name FROM tools t JOIN vendors vd ON vd.id = t.vendor_id",
    )
    .fetch_all(e)
    .await)
}

/// One planned demotion as the write checks it: `(agent id, tool id, promoted_at,
/// last_used_at or -1)`.
pub type PlannedRow = (i64, i64, i64, i64);

/// Most planned rows in one statement (4 bound values each, well under SQLite's 32,766).
pub const PLANNED_PER_STATEMENT: usize = 4000;

/// Deletes, in one statement, each planned entry that is still as planned (same
/// `promoted_at`, same `last_used_at`); returns the `(agent id, tool id)` it deleted.
/// A concurrent call, re-promotion or sweep makes an entry drop out of the result.
pub async fn delete_entries_as_planned(
    conn: &mut Conn,
    planned: &[PlannedRow],
) -> DbResult<Vec<(i64, i64)>> {
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let mut agents: Vec<i64> = planned.iter().map(|p| p.0).collect();
    agents.sort_unstable();
    agents.dedup();
    on_db!(conn, |e| {
        let mut qb = sqlx::QueryBuilder::new("DELETE FROM working_set WHERE agent_id IN (");
        let mut sep = qb.separated(", ");
        for a in &agents {
            sep.push_bind(*a);
        }
        qb.push(
        ") AND (agent_id, tool_id, promoted_at, COALESCE((SELECT u.last_used_at FROM tool_usage u \
         WHERE u.agent_id = working_set.agent_id AND u.tool_id = working_set.tool_id), -1)) IN (VALUES ",
    );
        for (i, (a, t, p, l)) in planned.iter().enumerate() {
            if i > 0 {
                qb.push(", ");
            }
            qb.push("(");
            qb.push_bind(*a);
            qb.push(", ");
            qb.push_bind(*t);
            qb.push(", ");
            qb.push_bind(*p);
            qb.push(", ");
            qb.push_bind(*l);
            qb.push(")");
        }
        qb.push(") RETURNING agent_id, tool_id");
        qb.build_query_as::<(i64, i64)>().fetch_all(e).await
    })
}

/// Appends demotion history rows `(agent id, tool id, cause)` in one statement.
pub async fn insert_demotions(
    conn: &mut Conn,
    rows: &[(i64, i64, Cause)],
    actor: &str,
    now: i64,
) -> DbResult<()> {
    for chunk in rows.chunks(PLANNED_PER_STATEMENT) {
        on_db!(conn, |e| {
            let mut qb = sqlx::QueryBuilder::new(
                "INSERT INTO history (agent_id, tool_id, action, cause, actor, at) ",
            );
            qb.push_values(chunk, |mut b, (a, t, c)| {
                b.push_bind(*a)
                    .push_bind(*t)
                    .push_bind(HistoryAction::Demote.as_str())
                    .push_bind(c.as_str())
                    .push_bind(actor)
                    .push_bind(now);
            });
            qb.build().execute(e).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(())
}

/// `(agent id, tool id)` of working-set entries of the given tools.
pub async fn select_entries_of_tools(
    conn: &mut Conn,
    tool_ids: &[i64],
) -> DbResult<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for id in tool_ids {
        let rows: Vec<(i64, i64)> = on_db!(conn, |e| sqlx::query_as(
            "SELECT agent_id, tool_id FROM working_set WHERE tool_id = $1"
        )
        .bind(id)
        .fetch_all(e)
        .await)?;
        out.extend(rows);
    }
    Ok(out)
}

/// One demotion of a past sweep (a history row of cause `idle`, `cap` or `budget`).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct SweptRow {
    pub agent: String,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// `Idle`, `Cap` or `Budget`.
    #[sqlx(try_from = "String")]
    pub cause: Cause,
    /// When the sweep ran (ms).
    pub at: i64,
}

/// What the newest sweep that demoted anything demoted (issue 14.1's overview): each of
/// its history rows (one sweep writes them all at one time), by agent and tool; empty
/// when no sweep has demoted anything yet.
pub async fn select_last_sweep(pool: &Pool) -> DbResult<Vec<SweptRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT ag.name AS agent, vd.slug AS vendor, t.name, h.cause, h.at FROM history h \
         JOIN agents ag ON ag.id = h.agent_id JOIN tools t ON t.id = h.tool_id \
         JOIN vendors vd ON vd.id = t.vendor_id \
         WHERE h.cause IN ('idle', 'cap', 'budget') AND h.at = (SELECT MAX(x.at) FROM history x WHERE x.cause IN ('idle', 'cap', 'budget')) \
         ORDER BY ag.name, vd.slug, t.name",
    )
    .fetch_all(e).await
    })
}

/// The PostgreSQL advisory-lock key of the scheduled sweep ("gsweep" in ASCII).
pub const SWEEP_LOCK_KEY: i64 = 0x0000_6773_7765_6570;

/// On PostgreSQL, takes the scheduled sweep's lock (`pg_try_advisory_xact_lock`) in a
/// transaction of its own and returns that transaction, which holds the lock until it
/// is dropped (or its connection dies with its instance); `None` when another instance
/// holds it (SPEC §5, issue 11: one sweep at a time across instances). SQLite has one
/// server per file and answers `None` too: callers check the backend first.
/// Errors: the database failed.
pub async fn try_sweep_lock(pool: &Pool) -> DbResult<Option<Conn>> {
    let Pool::Postgres(p) = pool else {
        return Ok(None);
    };
    let mut tx = p.begin().await?;
    // this transaction waits, idle, while the sweep runs on other connections: the
    // session's 10 s idle timeout (which frees a stalled writer's lock) must not end it;
    // a frozen instance still gives the sweep up after 15 minutes
    sqlx::query("SET LOCAL idle_in_transaction_session_timeout = '15min'")
        .execute(&mut *tx)
        .await?;
    let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(SWEEP_LOCK_KEY)
        .fetch_one(&mut *tx)
        .await?;
    Ok(got.then_some(Conn::PostgresTx(tx)))
}
