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
    /// The reason the person gave with a denial (issue 28.6; at most
    /// [`crate::domain::approval::REASON_MAX_CHARS`] characters), which the agent's next
    /// call receives; none once granted.
    pub reason: Option<String>,
    /// What the person approves (listings only, [`select_approvals`]): the request of
    /// the version asked for or decided on, else the current one.
    #[sqlx(flatten)]
    pub request: ApprovalRequest,
    /// Every decision a person made on this approval, newest first (listings only,
    /// [`select_decisions`]; at most [`DECISIONS_SHOWN`] + 1, the last one only telling
    /// that older decisions exist).
    #[sqlx(skip)]
    pub decisions: Vec<DecisionRow>,
}

/// Decisions kept per approval in a listing ([`ApprovalRow::decisions`]).
pub const DECISIONS_SHOWN: usize = 10;

/// One decision of a person on one agent's use of one tool (issue 28.6): a row of
/// `approval_decisions`, which keeps every decision (the `approvals` row holds the
/// latest only).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct DecisionRow {
    pub agent_id: i64,
    pub tool_id: i64,
    /// The tool version decided on (none for decisions older than versions).
    pub version: Option<i64>,
    /// `Granted` or `Denied`.
    #[sqlx(try_from = "String")]
    pub state: ApprovalState,
    /// Who decided: `person:<name>`.
    pub decided_by: String,
    /// The reason given with a denial.
    pub reason: Option<String>,
    /// When (ms).
    pub decided_at: i64,
}

/// A person's decision to write ([`decide_approval`]).
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    pub agent_id: i64,
    pub tool_id: i64,
    /// The tool version decided on.
    pub version: i64,
    /// `Granted` or `Denied`.
    pub state: ApprovalState,
    /// `person:<name>`.
    pub by: &'a str,
    /// A denial's reason (ignored for a grant).
    pub reason: Option<&'a str>,
    /// When (ms).
    pub at: i64,
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
     a.requested_at, a.decided_at, a.decided_by, a.version, a.changed, a.reason FROM approvals a JOIN agents ag ON ag.id = a.agent_id \
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
         a.requested_at, a.decided_at, a.decided_by, a.version, a.changed, a.reason, \
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
/// row reset by a new version takes the version asked for now). Returns whether this
/// call made the request (a new row): of calls racing for the same pair, one does, so
/// people are told once.
pub async fn insert_pending_approval(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
    version: i64,
    now: i64,
) -> DbResult<bool> {
    let made = execute!(pool, "INSERT INTO approvals (agent_id, tool_id, state, requested_at, version) VALUES ($1, $2, 'pending', $3, $4) \
         ON CONFLICT (agent_id, tool_id) DO NOTHING", agent_id, tool_id, now, version)?;
    if made == 0 {
        execute!(pool, "UPDATE approvals SET version = $3 WHERE agent_id = $1 AND tool_id = $2 AND state = 'pending'",
            agent_id, tool_id, version)?;
    }
    Ok(made == 1)
}

/// A new version `version` of a tool changed what its calls do (`changed` says what):
/// every granted or pending approval of it is now a pending request for that version
/// (issue 12.15), so a person never approves a version they were not shown; denials
/// stand, now for that version (so a person can still grant it from the console). A
/// request already pending for an earlier change keeps what that one said, followed by
/// `changed`. Returns the agents whose grant was reset (a request already pending was
/// asked of people before, so it is not counted).
pub async fn reset_approvals(
    conn: &mut Conn,
    tool_id: i64,
    version: i64,
    changed: &str,
    now: i64,
) -> DbResult<Vec<i64>> {
    denials_follow(conn, tool_id, version).await?;
    // one write transaction: the grants read here are the ones updated below
    let granted: Vec<i64> = on_db!(conn, |e| {
        sqlx::query_scalar(
            "SELECT agent_id FROM approvals WHERE tool_id = $1 AND state = 'granted'",
        )
        .bind(tool_id)
        .fetch_all(e)
        .await
    })?;
    on_db!(conn, |e| {
        sqlx::query(
            "UPDATE approvals SET state = 'pending', \
         changed = CASE WHEN state = 'pending' AND changed IS NOT NULL AND length(changed) < 1000 \
         THEN changed || '; ' || $2 ELSE $2 END, \
         requested_at = $3, decided_at = NULL, decided_by = NULL, \
         version = $4 WHERE tool_id = $1 AND state IN ('granted', 'pending')",
        )
        .bind(tool_id)
        .bind(changed)
        .bind(now)
        .bind(version)
        .execute(e)
        .await
        .map(|_| ())
    })?;
    Ok(granted)
}

/// A new version `version` of a tool that changes nothing in its calls: the tool's
/// approvals, granted, pending or denied, now stand for (or ask about) that version.
pub async fn carry_approvals(conn: &mut Conn, tool_id: i64, version: i64) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE approvals SET version = $2 WHERE tool_id = $1",
        tool_id,
        version
    )?;
    Ok(())
}

/// A denial stands for a tool's new version `version`: its row names that version, so a
/// person who changes their mind grants what the tool does now (the decision kept in
/// `approval_decisions` still names the version denied).
async fn denials_follow(conn: &mut Conn, tool_id: i64, version: i64) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE approvals SET version = $2 WHERE tool_id = $1 AND state = 'denied'",
        tool_id,
        version
    )?;
    Ok(())
}

/// A grant found at call time for another version than the current one (a decision
/// that raced a publish): it becomes a pending request for `version`, saying why.
/// Returns whether this call moved it (of racing calls, one does).
pub async fn repend_approval(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
    version: i64,
    changed: &str,
    now: i64,
) -> DbResult<bool> {
    let moved = execute!(pool, "UPDATE approvals SET state = 'pending', version = $3, changed = $4, requested_at = $5, decided_at = NULL, decided_by = NULL \
         WHERE agent_id = $1 AND tool_id = $2 AND state = 'granted' AND version <> $3", agent_id, tool_id, version, changed, now)?;
    Ok(moved == 1)
}

/// Writes a person's decision (issue 28.6): the approval's row (created when the person
/// decides first) takes the decision, its version and, for a denial, its reason, and
/// forgets what a reset said changed; the decision is appended to `approval_decisions`.
/// One write transaction.
pub async fn decide_approval(pool: &Pool, d: &Decision<'_>) -> DbResult<()> {
    let mut tx = pool.begin_write().await?;
    write_decision(&mut tx, d).await?;
    tx.commit().await?;
    Ok(())
}

async fn write_decision(conn: &mut Conn, d: &Decision<'_>) -> DbResult<()> {
    let reason = d.reason.filter(|_| d.state == ApprovalState::Denied);
    execute!(conn, "INSERT INTO approvals (agent_id, tool_id, state, requested_at, decided_at, decided_by, version, reason) \
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET state = excluded.state, decided_at = excluded.decided_at, \
         decided_by = excluded.decided_by, version = excluded.version, reason = excluded.reason, changed = NULL",
         d.agent_id, d.tool_id, d.state.as_str(), d.at, d.by, d.version, reason)?;
    execute!(conn, "INSERT INTO approval_decisions (agent_id, tool_id, version, state, decided_by, reason, decided_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
         d.agent_id, d.tool_id, d.version, d.state.as_str(), d.by, reason, d.at)?;
    Ok(())
}

/// Grants, in one write transaction, every approval of `tool_id` that is pending for
/// version `version` (issue 28.6, "approve all pending for this tool"), of agents not
/// removed (a disabled agent's grant waits with it); each grant is logged as one
/// decision by `by`.
/// Returns the names of the agents granted, by name.
pub async fn grant_pending(
    pool: &Pool,
    tool_id: i64,
    version: i64,
    by: &str,
    now: i64,
) -> DbResult<Vec<(i64, String)>> {
    let mut tx = pool.begin_write().await?;
    let waiting: Vec<(i64, String)> = on_db!(&mut tx, |e| sqlx::query_as(
        "SELECT a.agent_id, ag.name FROM approvals a JOIN agents ag ON ag.id = a.agent_id \
         WHERE a.tool_id = $1 AND a.state = 'pending' AND a.version = $2 \
         AND ag.removed_at IS NULL ORDER BY ag.name"
    )
    .bind(tool_id)
    .bind(version)
    .fetch_all(e)
    .await)?;
    for (agent_id, _) in &waiting {
        let d = Decision {
            agent_id: *agent_id,
            tool_id,
            version,
            state: ApprovalState::Granted,
            by,
            reason: None,
            at: now,
        };
        write_decision(&mut tx, &d).await?;
    }
    tx.commit().await?;
    Ok(waiting)
}

/// The newest [`DECISIONS_SHOWN`] + 1 decisions of each (agent, tool) pair, newest first
/// within a pair (a window function: SQLite ≥ 3.25 and PostgreSQL both have it); the
/// one past [`DECISIONS_SHOWN`] tells a listing that older ones exist.
pub async fn select_decisions(pool: &Pool) -> DbResult<Vec<DecisionRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT agent_id, tool_id, version, state, decided_by, reason, decided_at FROM \
         (SELECT d.*, ROW_NUMBER() OVER (PARTITION BY agent_id, tool_id ORDER BY id DESC) AS n \
          FROM approval_decisions d) x WHERE n <= $1 ORDER BY agent_id, tool_id, id DESC"
    )
    .bind(DECISIONS_SHOWN as i64 + 1)
    .fetch_all(e)
    .await)
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
