//! Queries of the sweep (SPEC §5) and of agent settings.

use super::{Conn, DbResult, Pool};

/// One row of the sweep's read: an agent's settings and one of its entries with usage.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SweepRow {
    /// Agent.
    pub agent_id: i64,
    /// Agent name.
    pub agent: String,
    /// Cap.
    pub cap: i64,
    /// Idle window (days).
    pub idle_window_days: i64,
    /// Tool.
    pub tool_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Promotion time (ms).
    pub promoted_at: i64,
    /// Last use (ms).
    pub last_used_at: Option<i64>,
}

/// Every working-set entry of every agent with its usage, ordered by agent.
pub async fn select_sweep_rows(pool: &Pool) -> DbResult<Vec<SweepRow>> {
    sqlx::query_as(
        "SELECT a.id AS agent_id, a.name AS agent, a.cap, a.idle_window_days, ws.tool_id, vd.slug AS vendor, t.name, \
         ws.promoted_at, u.last_used_at \
         FROM working_set ws JOIN agents a ON a.id = ws.agent_id JOIN tools t ON t.id = ws.tool_id \
         JOIN vendors vd ON vd.id = t.vendor_id \
         LEFT JOIN tool_usage u ON u.agent_id = ws.agent_id AND u.tool_id = ws.tool_id \
         ORDER BY ws.agent_id",
    )
    .fetch_all(pool)
    .await
}

/// Deletes an entry only if it is still as planned: same `promoted_at`, and a
/// `last_used_at` equal to the planned one (`-1` = never used). Returns whether it
/// deleted (a concurrent call, re-promotion or sweep makes it a no-op).
pub async fn delete_entry_as_planned(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    promoted_at: i64,
    last_used_at: i64,
) -> DbResult<bool> {
    let r = sqlx::query(
        "DELETE FROM working_set WHERE agent_id = $1 AND tool_id = $2 AND promoted_at = $3 \
         AND COALESCE((SELECT last_used_at FROM tool_usage WHERE agent_id = $1 AND tool_id = $2), -1) = $4",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(promoted_at)
    .bind(last_used_at)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Updates an agent's name, cap and idle window.
pub async fn update_agent_settings(
    pool: &Pool,
    id: i64,
    name: &str,
    cap: i64,
    idle_window_days: i64,
) -> DbResult<()> {
    sqlx::query("UPDATE agents SET name = $1, cap = $2, idle_window_days = $3 WHERE id = $4")
        .bind(name)
        .bind(cap)
        .bind(idle_window_days)
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// `(agent id, tool id)` of working-set entries of the given tools.
pub async fn select_entries_of_tools(
    conn: &mut Conn,
    tool_ids: &[i64],
) -> DbResult<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for id in tool_ids {
        let rows: Vec<(i64, i64)> =
            sqlx::query_as("SELECT agent_id, tool_id FROM working_set WHERE tool_id = $1")
                .bind(id)
                .fetch_all(&mut *conn)
                .await?;
        out.extend(rows);
    }
    Ok(out)
}

/// Tools whose calls use a connection: those with it as default, plus — when it is the
/// vendor's only active connection — the vendor's tools without a default.
pub async fn select_tools_using_connection(
    conn: &mut Conn,
    connection_id: i64,
) -> DbResult<Vec<i64>> {
    sqlx::query_scalar(
        "SELECT t.id FROM tools t WHERE t.default_connection_id = $1 \
         UNION \
         SELECT t.id FROM tools t JOIN connections c ON c.vendor_id = t.vendor_id \
         WHERE c.id = $1 AND t.default_connection_id IS NULL AND c.revoked_at IS NULL \
         AND (SELECT COUNT(*) FROM connections o WHERE o.vendor_id = c.vendor_id AND o.revoked_at IS NULL) = 1",
    )
    .bind(connection_id)
    .fetch_all(conn)
    .await
}
