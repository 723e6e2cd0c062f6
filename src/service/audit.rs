//! Who did what (issue 28.8): the service records each action a person takes, and lists
//! them for the console's Audit page, its CSV export and `graft audit`.

use super::{Actor, Graft, ServiceResult};
use crate::db::{self, AuditQuery, AuditRow};
use crate::domain::audit::{clean_detail, AuditAction};

/// The most events one listing returns.
pub const AUDIT_PAGE_MAX: i64 = 10_000;

impl Graft {
    /// Records that a person did `action` to `target` (names as the console shows them),
    /// with an optional one-line `detail` (cut to
    /// [`crate::domain::audit::DETAIL_MAX_CHARS`]). Agents' and Graft's own actions are
    /// not a person's and are not recorded here (History and the calls log hold them).
    /// Never pass a secret. Errors: `Db`.
    pub async fn audit(
        &self,
        actor: &Actor,
        action: AuditAction,
        target: &str,
        detail: Option<&str>,
    ) -> ServiceResult<()> {
        if !matches!(actor, Actor::Person(_)) {
            return Ok(());
        }
        let mut conn = self.pool().acquire().await?;
        self.audit_in(&mut conn, actor, action, target, detail)
            .await
    }

    /// [`Graft::audit`] inside the write transaction `tx`, so the event is written with
    /// the change it records or not at all. Errors: `Db`.
    pub(crate) async fn audit_in(
        &self,
        tx: &mut db::Conn,
        actor: &Actor,
        action: AuditAction,
        target: &str,
        detail: Option<&str>,
    ) -> ServiceResult<()> {
        let Actor::Person(person) = actor else {
            return Ok(());
        };
        let detail = detail.map(clean_detail).filter(|d| !d.is_empty());
        db::insert_audit(tx, self.now(), person, action, target, detail.as_deref()).await?;
        Ok(())
    }

    /// The events `query` lets through, newest first; its `limit` is clamped to
    /// 1..=[`AUDIT_PAGE_MAX`]. Errors: `Db`.
    pub async fn audit_events(&self, query: &AuditQuery) -> ServiceResult<Vec<AuditRow>> {
        let q = AuditQuery {
            limit: query.limit.clamp(1, AUDIT_PAGE_MAX),
            ..query.clone()
        };
        Ok(db::select_audit(self.pool(), &q).await?)
    }

    /// Everyone with at least one event, by name (the Audit page's filter).
    /// Errors: `Db`.
    pub async fn audit_people(&self) -> ServiceResult<Vec<String>> {
        Ok(db::select_audit_people(self.pool()).await?)
    }
}

/// The filters of an audit listing as people type them (the Audit page's GET form, the
/// CSV link, `graft audit`): blank means any. `action` is a stored name
/// (`approval.deny`); `since_days` counts back from `now` (ms). Errors: a sentence for
/// an unknown action, or a number of days out of 1..=3650.
pub fn audit_query(
    person: Option<&str>,
    action: Option<&str>,
    target: Option<&str>,
    since_days: Option<i64>,
    now: i64,
) -> Result<AuditQuery, String> {
    let set = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(String::from);
    let action = match set(action) {
        None => None,
        Some(a) => Some(AuditAction::parse(&a).ok_or_else(|| {
            format!(
                "unknown action {a:?}: one of {}",
                AuditAction::ALL.map(AuditAction::as_str).join(", ")
            )
        })?),
    };
    let since = match since_days {
        None => None,
        Some(d) if (1..=3650).contains(&d) => Some(now - d * 86_400_000),
        Some(d) => return Err(format!("days must be between 1 and 3650 (got {d})")),
    };
    Ok(AuditQuery {
        person: set(person),
        action,
        target_has: set(target),
        since,
        until: None,
        before_id: None,
        limit: AUDIT_PAGE_MAX,
    })
}

/// The detail of an agent's edit (issue 28.8): its settings after it, and its old name
/// when it changed: `cap 20, idle window 7 days, token budget 5000, renamed from bot`.
pub fn agent_settings_detail(a: &db::AgentRow, was: &str) -> String {
    let mut said = format!("cap {}, idle window {} days", a.cap, a.idle_window_days);
    if let Some(b) = a.token_budget {
        said.push_str(&format!(", token budget {b}"));
    }
    if let Some(h) = &a.harness {
        said.push_str(&format!(", harness {h}"));
    }
    if a.name != was {
        said.push_str(&format!(", renamed from {was}"));
    }
    said
}

/// The events as CSV (RFC 4180: CRLF line ends, fields with a comma, quote or line
/// break quoted, quotes doubled), with a header row: `time` (RFC 3339, UTC), `person`,
/// `action`, `target`, `detail`. A field that a spreadsheet would read as a formula (it
/// starts with `=`, `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`
/// (OWASP's CSV injection advice).
pub fn audit_csv(rows: &[AuditRow]) -> String {
    let mut out = String::from("time,person,action,target,detail\r\n");
    for r in rows {
        let time = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(r.at)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .unwrap_or_default();
        let fields = [
            time.as_str(),
            r.person.as_str(),
            r.action.as_str(),
            r.target.as_str(),
            r.detail.as_deref().unwrap_or(""),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}

/// One CSV field, quoted when it must be and defused when a spreadsheet would run it.
fn csv_field(text: &str) -> String {
    let defused = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if defused.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", defused.replace('"', "\"\""))
    } else {
        defused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_it_must_and_defuses_formulas() {
        let row = AuditRow {
            id: 1,
            at: 0,
            person: "ana".into(),
            action: AuditAction::ApprovalDeny,
            target: "bot → acme__create_item".into(),
            detail: Some("=HYPERLINK(\"x\"), said \"no\"".into()),
        };
        assert_eq!(
            audit_csv(&[row]),
            "time,person,action,target,detail\r\n\
             1970-01-01T00:00:00.000Z,ana,approval.deny,bot → acme__create_item,\"'=HYPERLINK(\"\"x\"\"), said \"\"no\"\"\"\r\n"
        );
    }
}
