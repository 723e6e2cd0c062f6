//! The audit log (issue 28.8): one row per action a person took, newest last.

use super::{Conn, DbResult, Pool};
use crate::domain::audit::AuditAction;
use crate::{execute, on_db};
use sqlx::FromRow;

/// One recorded action (`audit_events`).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct AuditRow {
    pub id: i64,
    /// When (ms since the epoch).
    pub at: i64,
    /// The person's name.
    pub person: String,
    #[sqlx(try_from = "String")]
    pub action: AuditAction,
    /// What it was done to, as the console names it (`bot`, `acme__create_item`).
    pub target: String,
    /// A short line in words; never a secret.
    pub detail: Option<String>,
}

/// Appends one event, on `conn` (a pooled connection, or the transaction of the change
/// it records, so that both are written or neither).
pub async fn insert_audit(
    conn: &mut Conn,
    at: i64,
    person: &str,
    action: AuditAction,
    target: &str,
    detail: Option<&str>,
) -> DbResult<()> {
    execute!(
        conn,
        "INSERT INTO audit_events (at, person, action, target, detail) VALUES ($1, $2, $3, $4, $5)",
        at,
        person,
        action.as_str(),
        target,
        detail
    )?;
    Ok(())
}

/// What an audit listing lets through; each field, when set, must match (`target_has`
/// as a substring in any letter case, `since`/`until` as ms bounds, `until` exclusive).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    pub person: Option<String>,
    pub action: Option<AuditAction>,
    pub target_has: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Only events older than this id (the next page), newest first.
    pub before_id: Option<i64>,
    /// At most this many rows.
    pub limit: i64,
}

/// The events `q` lets through, newest first.
pub async fn select_audit(pool: &Pool, q: &AuditQuery) -> DbResult<Vec<AuditRow>> {
    // bound parameters only: a NULL filter admits every row
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, at, person, action, target, detail FROM audit_events \
         WHERE ($1 IS NULL OR person = $1) AND ($2 IS NULL OR action = $2) \
         AND ($3 IS NULL OR LOWER(target) LIKE $3 ESCAPE '\\') \
         AND ($4 IS NULL OR at >= $4) AND ($5 IS NULL OR at < $5) AND ($6 IS NULL OR id < $6) \
         ORDER BY id DESC LIMIT $7"
    )
    .bind(q.person.as_deref())
    .bind(q.action.map(|a| a.as_str()))
    .bind(q.target_has.as_deref().map(like_pattern))
    .bind(q.since)
    .bind(q.until)
    .bind(q.before_id)
    .bind(q.limit)
    .fetch_all(e)
    .await)
}

/// The names of everyone who has an event, sorted (the console's filter).
pub async fn select_audit_people(pool: &Pool) -> DbResult<Vec<String>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT DISTINCT person FROM audit_events ORDER BY person"
    )
    .fetch_all(e)
    .await)
}

/// A `LIKE` pattern that finds `text` anywhere, in lower case, its `%`, `_` and backslash
/// escaped (the query escapes with a backslash).
fn like_pattern(text: &str) -> String {
    let mut p = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}
