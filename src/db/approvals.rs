//! Queries of approvals (SPEC §4.4): pending, decided, carried to new versions.

use super::{Conn, DbResult, Pool};
use crate::domain::approval::ApprovalState;
use crate::{execute, on_db};
use sqlx::FromRow;

/// Every granted approval of a vendor's tools becomes a pending request again, saying
/// `changed`; returns the agents whose approvals moved.
pub async fn reset_vendor_approvals(
    conn: &mut Conn,
    vendor_id: i64,
    changed: &str,
    now: i64,
) -> DbResult<Vec<i64>> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "UPDATE approvals SET state = 'pending', changed = $2, requested_at = $3, decided_at = NULL, \
         decided_by = NULL WHERE state = 'granted' AND tool_id IN (SELECT id FROM tools WHERE vendor_id = $1) \
         RETURNING agent_id",
    )
    .bind(vendor_id)
    .bind(changed)
    .bind(now)
    .fetch_all(e)
    .await
    })
}

/// An `approvals` row with names.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ApprovalRow {
    pub agent_id: i64,
    pub agent: String,
    pub tool_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    #[sqlx(try_from = "String")]
    pub state: ApprovalState,
    /// When first asked (ms).
    pub requested_at: i64,
    /// When decided (ms).
    pub decided_at: Option<i64>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// The tool version asked for or decided on (none for rows older than versions).
    pub version: Option<i64>,
    /// Why a granted approval went back to pending: what a new version changed.
    pub changed: Option<String>,
    /// What the person approves (listings only, [`select_approvals`]): the request of
    /// the version asked for or decided on, else the current one.
    #[sqlx(flatten)]
    pub request: ApprovalRequest,
}

/// The request an approval is for (issue 14.4): the version's method, path template and
/// description, and the input of the newest call that asked (redacted as the calls log
/// keeps it). Empty outside listings.
#[derive(Debug, Clone, Default, FromRow, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// HTTP method (upper case).
    #[sqlx(default)]
    pub method: Option<String>,
    /// Path template, e.g. `/pets/{petId}`.
    #[sqlx(default)]
    pub path: Option<String>,
    /// The version's description.
    #[sqlx(default)]
    pub description: Option<String>,
    /// The input of the newest call that asked for approval.
    #[sqlx(default)]
    pub input: Option<String>,
    /// The version's binding (JSON): the headers, cookies and query parameters the
    /// call sends besides its body.
    #[sqlx(default)]
    pub binding: Option<String>,
}

const APPROVAL_SELECT: &str = "SELECT a.agent_id, ag.name AS agent, a.tool_id, v.slug AS vendor, t.name, a.state, \
     a.requested_at, a.decided_at, a.decided_by, a.version, a.changed FROM approvals a JOIN agents ag ON ag.id = a.agent_id \
     JOIN tools t ON t.id = a.tool_id JOIN vendors v ON v.id = t.vendor_id";

/// The approval of one agent for one tool.
pub async fn select_approval(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
) -> DbResult<Option<ApprovalRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{APPROVAL_SELECT} WHERE a.agent_id = $1 AND a.tool_id = $2"
    ))
    .bind(agent_id)
    .bind(tool_id)
    .fetch_optional(e)
    .await)
}

/// Every approval but those of a removed vendor's tools, pending first, then newest,
/// with the request each is for ([`ApprovalRequest`]).
pub async fn select_approvals(pool: &Pool) -> DbResult<Vec<ApprovalRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT a.agent_id, ag.name AS agent, a.tool_id, v.slug AS vendor, t.name, a.state, \
         a.requested_at, a.decided_at, a.decided_by, a.version, a.changed, \
         UPPER(tv.method) AS method, tv.path_template AS path, tv.description, tv.binding, \
         (SELECT c.input FROM tool_calls c WHERE c.agent_id = a.agent_id AND c.tool_id = a.tool_id \
          AND c.error_code = 'approval_required' AND c.version = COALESCE(a.version, c.version) \
          ORDER BY c.id DESC LIMIT 1) AS input \
         FROM approvals a JOIN agents ag ON ag.id = a.agent_id \
         JOIN tools t ON t.id = a.tool_id JOIN vendors v ON v.id = t.vendor_id \
         LEFT JOIN tool_versions tv ON tv.tool_id = a.tool_id AND tv.version = COALESCE(a.version, \
          (SELECT MAX(x.version) FROM tool_versions x WHERE x.tool_id = a.tool_id)) \
         WHERE v.removed_at IS NULL AND ag.removed_at IS NULL \
         ORDER BY CASE a.state WHEN 'pending' THEN 0 ELSE 1 END, a.requested_at DESC, a.agent_id, a.tool_id",
    )
    .fetch_all(e).await
    })
}

/// Records a pending request for tool version `version` unless a row exists (a pending
/// row reset by a new version takes the version asked for now).
pub async fn insert_pending_approval(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
    version: i64,
    now: i64,
) -> DbResult<()> {
    execute!(pool, "INSERT INTO approvals (agent_id, tool_id, state, requested_at, version) VALUES ($1, $2, 'pending', $3, $4) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET version = excluded.version WHERE approvals.state = 'pending'", agent_id, tool_id, now, version)?;
    Ok(())
}

/// A new version `version` of a tool changed what its calls do (`changed` says what):
/// every granted or pending approval of it is now a pending request for that version
/// (issue 12.15), so a person never approves a version they were not shown; denials
/// stand. Returns the agents whose approval was reset.
pub async fn reset_approvals(
    conn: &mut Conn,
    tool_id: i64,
    version: i64,
    changed: &str,
    now: i64,
) -> DbResult<Vec<i64>> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "UPDATE approvals SET state = 'pending', changed = $2, requested_at = $3, decided_at = NULL, decided_by = NULL, \
         version = $4 WHERE tool_id = $1 AND state IN ('granted', 'pending') RETURNING agent_id",
    )
    .bind(tool_id)
    .bind(changed)
    .bind(now)
    .bind(version)
    .fetch_all(e).await
    })
}

/// A new version `version` of a tool that changes nothing in its calls: the tool's
/// granted and pending approvals now stand for (or ask about) that version.
pub async fn carry_approvals(conn: &mut Conn, tool_id: i64, version: i64) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE approvals SET version = $2 WHERE tool_id = $1 AND state IN ('granted', 'pending')",
        tool_id,
        version
    )?;
    Ok(())
}

/// A grant found at call time for another version than the current one (a decision
/// that raced a publish): it becomes a pending request for `version`, saying why.
pub async fn repend_approval(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
    version: i64,
    changed: &str,
    now: i64,
) -> DbResult<()> {
    execute!(pool, "UPDATE approvals SET state = 'pending', version = $3, changed = $4, requested_at = $5, decided_at = NULL, decided_by = NULL \
         WHERE agent_id = $1 AND tool_id = $2", agent_id, tool_id, version, changed, now)?;
    Ok(())
}

/// Sets an approval's decision on tool version `version` (creating the row when the
/// person decides first); clears what a reset said changed.
#[allow(clippy::too_many_arguments)]
pub async fn upsert_approval_decision(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
    version: i64,
    state: ApprovalState,
    by: &str,
    now: i64,
) -> DbResult<()> {
    execute!(pool, "INSERT INTO approvals (agent_id, tool_id, state, requested_at, decided_at, decided_by, version) VALUES ($1, $2, $3, $4, $4, $5, $6) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET state = excluded.state, decided_at = excluded.decided_at, decided_by = excluded.decided_by, \
         version = excluded.version, changed = NULL", agent_id, tool_id, state.as_str(), now, by, version)?;
    Ok(())
}

/// Number of approvals waiting for a person's decision (not those of a removed vendor's
/// tools).
pub async fn count_pending_approvals(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM approvals a JOIN tools t ON t.id = a.tool_id \
         JOIN vendors v ON v.id = t.vendor_id WHERE a.state = 'pending' AND v.removed_at IS NULL",
    )
    .fetch_one(e)
    .await)
}

/// When the longest-waiting approval was asked for (ms; the same approvals as
/// [`count_pending_approvals`]), `None` when none waits.
pub async fn oldest_pending_approval(pool: &Pool) -> DbResult<Option<i64>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT MIN(a.requested_at) FROM approvals a JOIN tools t ON t.id = a.tool_id \
         JOIN vendors v ON v.id = t.vendor_id WHERE a.state = 'pending' AND v.removed_at IS NULL",
    )
    .fetch_one(e)
    .await)
}
