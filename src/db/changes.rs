//! Change events: which agents' working sets changed, for every instance (SPEC §3.5, §9).

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};

/// The PostgreSQL channel that announces change events (`LISTEN graft_changes`); see
/// [`insert_change_events`] for its payload.
pub const CHANGES_CHANNEL: &str = "graft_changes";

/// Records that agents' working sets changed, from process `origin` (SPEC §3.5).
///
/// On PostgreSQL the rows are written in one transaction holding the write lock
/// ([`WRITE_LOCK_KEY`]), so ids become visible in the order they were given (a reader's
/// cursor never passes an id that commits later), and the same transaction announces
/// them on [`CHANGES_CHANNEL`] (delivered at commit) with the payload
/// `"<origin> <id>,<id>,…"` (agent ids; `0` the toolbox, `-1` an agent's or a
/// connection's state), or `"<origin> *"` when the list would pass PostgreSQL's
/// 8,000-byte payload limit. Listeners read the rows themselves; the payload lets them
/// skip their own changes. SQLite's single writer already keeps ids in commit order.
/// Errors: the database failed; nothing was recorded.
pub async fn insert_change_events(
    pool: &Pool,
    agents: &[i64],
    origin: &str,
    now: i64,
) -> DbResult<()> {
    if agents.is_empty() {
        return Ok(());
    }
    let mut conn = match pool {
        Pool::Sqlite(_) => pool.acquire().await?,
        Pool::Postgres(_) => pool.begin_write().await?,
    };
    // 3 parameters a row: 1,000 rows stay under every backend's limit on parameters
    for chunk in agents.chunks(1000) {
        on_db!(conn, |e| {
            let mut qb =
                sqlx::QueryBuilder::new("INSERT INTO change_events (agent_id, origin, at) ");
            qb.push_values(chunk, |mut b, a| {
                b.push_bind(*a).push_bind(origin).push_bind(now);
            });
            qb.build().execute(e).await.map(|r| r.rows_affected())
        })?;
    }
    if let Conn::PostgresTx(tx) = &mut conn {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANGES_CHANNEL)
            .bind(change_payload(origin, agents))
            .execute(&mut **tx)
            .await?;
    }
    conn.commit().await
}

/// The [`CHANGES_CHANNEL`] payload of a change batch (see [`insert_change_events`]).
pub fn change_payload(origin: &str, agents: &[i64]) -> String {
    let ids: Vec<String> = agents.iter().map(i64::to_string).collect();
    let payload = format!("{origin} {}", ids.join(","));
    if payload.len() < 7_900 {
        payload
    } else {
        format!("{origin} *")
    }
}

/// The origin a [`CHANGES_CHANNEL`] payload names (its first word).
pub fn payload_origin(payload: &str) -> &str {
    payload.split(' ').next().unwrap_or("")
}

/// Change events after `after` from other origins: `(id, agent id)`.
pub async fn select_change_events(
    pool: &Pool,
    after: i64,
    origin: &str,
) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, agent_id FROM change_events WHERE id > $1 AND origin <> $2 ORDER BY id",
    )
    .bind(after)
    .bind(origin)
    .fetch_all(e)
    .await)
}

/// The newest change event id (0 when none).
pub async fn select_last_change_event(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COALESCE(MAX(id), 0) FROM change_events"
    )
    .fetch_one(e)
    .await)
}

/// Forgets change events older than `before` (ms), except the newest: `id` is SQLite's
/// rowid (no AUTOINCREMENT), so the next id is the largest present plus one, and an
/// emptied table would hand out ids again that other processes' cursors have passed
/// (they would never see those changes).
pub async fn delete_change_events_before(pool: &Pool, before: i64) -> DbResult<()> {
    execute!(
        pool,
        "DELETE FROM change_events WHERE at < $1 AND id < (SELECT MAX(id) FROM change_events)",
        before
    )?;
    Ok(())
}

/// PostgreSQL's announcements of change events (`LISTEN graft_changes`, SPEC §9): each
/// is the payload of [`change_payload`]. When the listening connection drops, sqlx's
/// listener connects and listens again, and [`ChangeListener::next`] says so (`None`), so
/// the caller reads whatever was recorded meanwhile.
pub struct ChangeListener(sqlx::postgres::PgListener);

/// What [`ChangeListener::next`] heard.
#[derive(Debug)]
pub enum Heard {
    /// An announcement; its payload names the origin that wrote it ([`payload_origin`]).
    Payload(String),
    /// The connection dropped and listens again: announcements may have been missed.
    Reconnected,
}

impl ChangeListener {
    /// Listens on [`CHANGES_CHANNEL`]; `None` on SQLite, which has no announcements (its
    /// readers poll `change_events`). Errors: the database refused or is unreachable.
    pub async fn connect(pool: &Pool) -> DbResult<Option<ChangeListener>> {
        let Pool::Postgres(p) = pool else {
            return Ok(None);
        };
        let mut l = sqlx::postgres::PgListener::connect_with(p).await?;
        l.listen(CHANGES_CHANNEL).await?;
        Ok(Some(ChangeListener(l)))
    }

    /// Waits for the next announcement. Errors: the connection was lost and could not be
    /// made again yet (call again after a pause).
    pub async fn next(&mut self) -> DbResult<Heard> {
        Ok(match self.0.try_recv().await? {
            Some(n) => Heard::Payload(n.payload().to_string()),
            None => Heard::Reconnected,
        })
    }
}
