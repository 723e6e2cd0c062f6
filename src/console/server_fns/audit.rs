//! Who did what in the console (issue 28.8): the audit log, filtered and paged.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{signed_in, with_status, ConsoleError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Events on one page of the Audit page.
pub const AUDIT_SHOWN: usize = 50;

/// One event as the Audit page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditItem {
    pub id: i64,
    /// When (ms).
    pub at: i64,
    pub person: String,
    /// The stored action name (`approval.deny`).
    pub action: String,
    /// The action in words ("denied").
    pub what: String,
    pub target: String,
    pub detail: Option<String>,
}

/// The Audit page's data: a page of events, newest first, and what the filters offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditData {
    pub events: Vec<AuditItem>,
    /// The id to pass as `before` for the next (older) page, when there is one.
    pub older: Option<i64>,
    /// Everyone with an event.
    pub people: Vec<String>,
    /// Every action: (stored name, words).
    pub actions: Vec<(String, String)>,
    /// The server's clock (ms), for relative times.
    pub now: i64,
}

/// The audit log, newest first, [`AUDIT_SHOWN`] at a time, filtered by `person`,
/// `action` (a stored name), `target` (any part of it, any letter case) and `days`
/// (the last N days); `before` pages to older events. Errors: `Refused` for an unknown
/// action or a bad number of days; `SignedOut`.
#[server(prefix = "/api", endpoint = "audit_log")]
pub async fn audit_log(
    person: Option<String>,
    action: Option<String>,
    target: Option<String>,
    days: Option<String>,
    before: Option<String>,
) -> ConsoleResult<AuditData> {
    with_status(async move {
        let (st, _) = signed_in().await?;
        let number = |field: &str, v: Option<String>| -> ConsoleResult<Option<i64>> {
            match v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(t) => t
                    .parse::<i64>()
                    .map(Some)
                    .map_err(|_| ConsoleError::Refused(format!("{field} must be a whole number"))),
            }
        };
        let days = number("days", days)?;
        let before = number("before", before)?;
        let now = st.graft.clock_now();
        let mut q = crate::service::audit::audit_query(
            person.as_deref(),
            action.as_deref(),
            target.as_deref(),
            days,
            now,
        )
        .map_err(ConsoleError::Refused)?;
        q.before_id = before;
        q.limit = AUDIT_SHOWN as i64 + 1;
        let mut rows = st.graft.audit_events(&q).await?;
        let older = (rows.len() > AUDIT_SHOWN).then(|| rows[AUDIT_SHOWN - 1].id);
        rows.truncate(AUDIT_SHOWN);
        Ok(AuditData {
            events: rows
                .into_iter()
                .map(|r| AuditItem {
                    id: r.id,
                    at: r.at,
                    person: r.person,
                    action: r.action.as_str().into(),
                    what: r.action.in_words().into(),
                    target: r.target,
                    detail: r.detail,
                })
                .collect(),
            older,
            people: st.graft.audit_people().await?,
            actions: crate::domain::audit::AuditAction::ALL
                .iter()
                .map(|a| (a.as_str().to_string(), a.in_words().to_string()))
                .collect(),
            now,
        })
    })
    .await
}
