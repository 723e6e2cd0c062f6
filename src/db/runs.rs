//! Queries of running tools: connections, approvals, the call log and usage.

use super::{Conn, DbResult, Pool};
use crate::on_db;
use sqlx::FromRow;

/// A `connections` row (the secret stays sealed).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ConnectionRow {
    /// Id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Label.
    pub label: String,
    /// `none`, `bearer`, `header`, `query` or `basic`.
    pub auth_kind: String,
    /// Header or query parameter name (for `header` / `query`).
    pub header_or_param_name: Option<String>,
    /// Sealed secret (base64 of nonce || ciphertext).
    pub secret_ciphertext: Option<String>,
    /// Creation time (ms).
    pub created_at: i64,
    /// Revocation time (ms).
    pub revoked_at: Option<i64>,
    /// When the vendor's base URL moved to another origin (ms): the connection sends
    /// nothing until a person confirms it there (security review 32.5).
    pub suspended_at: Option<i64>,
    /// Why, in words (the old and new origin).
    pub suspended_reason: Option<String>,
}

const CONNECTION_SELECT: &str =
    "SELECT c.id, v.slug AS vendor, c.label, c.auth_kind, c.header_or_param_name, \
     c.secret_ciphertext, c.created_at, c.revoked_at, c.suspended_at, c.suspended_reason \
     FROM connections c JOIN vendors v ON v.id = c.vendor_id";

/// Deletes the calls logged before `cutoff` (ms); returns how many.
pub async fn delete_calls_before(pool: &Pool, cutoff: i64) -> DbResult<u64> {
    on_db!(pool, |e| sqlx::query(
        "DELETE FROM tool_calls WHERE at < $1"
    )
    .bind(cutoff)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))
}

/// Replaces a connection's sealed secret (a key rotation re-seals every secret).
pub async fn update_connection_secret(conn: &mut Conn, id: i64, sealed: &str) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE connections SET secret_ciphertext = $1 WHERE id = $2"
    )
    .bind(sealed)
    .bind(id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Suspends every live connection of a vendor (its base URL moved to another origin:
/// `why` says from where to where); returns how many.
pub async fn suspend_vendor_connections(
    conn: &mut Conn,
    vendor_id: i64,
    why: &str,
    now: i64,
) -> DbResult<u64> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE connections SET suspended_at = $1, suspended_reason = $2 \
         WHERE vendor_id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(why)
    .bind(vendor_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))
}

/// A person confirmed a vendor's connections at its current base URL; returns how many
/// were suspended.
pub async fn confirm_vendor_connections(conn: &mut Conn, vendor_id: i64) -> DbResult<u64> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE connections SET suspended_at = NULL, suspended_reason = NULL \
         WHERE vendor_id = $1 AND suspended_at IS NOT NULL",
    )
    .bind(vendor_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))
}

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

/// Inserts a connection; returns its id. Errors: the label is taken for the vendor.
pub async fn insert_connection(
    pool: &Pool,
    vendor_id: i64,
    label: &str,
    auth_kind: &str,
    name: Option<&str>,
    sealed: Option<&str>,
    now: i64,
) -> DbResult<i64> {
    on_db!(pool, |e| {
        sqlx::query_scalar(
        "INSERT INTO connections (vendor_id, label, auth_kind, header_or_param_name, secret_ciphertext, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(vendor_id)
    .bind(label)
    .bind(auth_kind)
    .bind(name)
    .bind(sealed)
    .bind(now)
    .fetch_one(e).await
    })
}

/// Every connection, by vendor and label.
pub async fn select_connections(pool: &Pool) -> DbResult<Vec<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} ORDER BY v.slug, c.label"
    ))
    .fetch_all(e)
    .await)
}

/// A vendor's connections.
pub async fn select_vendor_connections(
    pool: &Pool,
    vendor_id: i64,
) -> DbResult<Vec<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} WHERE c.vendor_id = $1 ORDER BY c.id"
    ))
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// One connection.
pub async fn select_connection(pool: &Pool, id: i64) -> DbResult<Option<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} WHERE c.id = $1"
    ))
    .bind(id)
    .fetch_optional(e)
    .await)
}

/// Marks a connection revoked and drops its sealed secret (a revoked secret is never
/// sent again, so it is not kept; security review 32.6); returns whether it was active.
pub async fn revoke_connection(conn: &mut Conn, id: i64, now: i64) -> DbResult<bool> {
    let r = on_db!(conn, |e| {
        sqlx::query(
        "UPDATE connections SET revoked_at = $1, secret_ciphertext = NULL WHERE id = $2 AND revoked_at IS NULL"
    )
    .bind(now)
    .bind(id)
    .execute(e)
    .await
    .map(|r| r.rows_affected())
    })?;
    Ok(r == 1)
}

/// Revokes every live connection of a vendor at `now` (ms) and drops the sealed secrets
/// of all of them (a removed vendor's credentials are not kept); returns how many were
/// live.
pub async fn revoke_vendor_connections(conn: &mut Conn, vendor_id: i64, now: i64) -> DbResult<i64> {
    let live: i64 = on_db!(conn, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM connections WHERE vendor_id = $1 AND revoked_at IS NULL",
    )
    .bind(vendor_id)
    .fetch_one(e)
    .await)?;
    on_db!(conn, |e| {
        sqlx::query(
        "UPDATE connections SET revoked_at = COALESCE(revoked_at, $1), secret_ciphertext = NULL WHERE vendor_id = $2",
    )
    .bind(now)
    .bind(vendor_id)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(live)
}

/// `(vendor id, default connection id)` of a tool.
pub async fn select_tool_connection(pool: &Pool, tool_id: i64) -> DbResult<(i64, Option<i64>)> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT vendor_id, default_connection_id FROM tools WHERE id = $1"
    )
    .bind(tool_id)
    .fetch_one(e)
    .await)
}

/// Sets (or clears) a tool's default connection.
pub async fn update_tool_connection(
    pool: &Pool,
    tool_id: i64,
    connection_id: Option<i64>,
) -> DbResult<()> {
    on_db!(pool, |e| sqlx::query(
        "UPDATE tools SET default_connection_id = $1 WHERE id = $2"
    )
    .bind(connection_id)
    .bind(tool_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// An `approvals` row with names.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ApprovalRow {
    /// Agent id.
    pub agent_id: i64,
    /// Agent name.
    pub agent: String,
    /// Tool id.
    pub tool_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// `pending`, `granted` or `denied`.
    pub state: String,
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
         WHERE v.removed_at IS NULL \
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
    on_db!(pool, |e| {
        sqlx::query(
        "INSERT INTO approvals (agent_id, tool_id, state, requested_at, version) VALUES ($1, $2, 'pending', $3, $4) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET version = excluded.version WHERE approvals.state = 'pending'",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(now)
    .bind(version)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
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
    on_db!(conn, |e| sqlx::query(
        "UPDATE approvals SET version = $2 WHERE tool_id = $1 AND state IN ('granted', 'pending')",
    )
    .bind(tool_id)
    .bind(version)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
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
    on_db!(pool, |e| {
        sqlx::query(
        "UPDATE approvals SET state = 'pending', version = $3, changed = $4, requested_at = $5, decided_at = NULL, decided_by = NULL \
         WHERE agent_id = $1 AND tool_id = $2",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(version)
    .bind(changed)
    .bind(now)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
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
    state: &str,
    by: &str,
    now: i64,
) -> DbResult<()> {
    on_db!(pool, |e| {
        sqlx::query(
        "INSERT INTO approvals (agent_id, tool_id, state, requested_at, decided_at, decided_by, version) VALUES ($1, $2, $3, $4, $4, $5, $6) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET state = excluded.state, decided_at = excluded.decided_at, decided_by = excluded.decided_by, \
         version = excluded.version, changed = NULL",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(state)
    .bind(now)
    .bind(by)
    .bind(version)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// One call-log row to insert.
#[derive(Debug, Clone)]
pub struct NewCall<'a> {
    /// Agent.
    pub agent_id: i64,
    /// Tool.
    pub tool_id: i64,
    /// Version that ran.
    pub version: i64,
    /// Dry run.
    pub dry_run: bool,
    /// `ok` or `error`.
    pub status: &'a str,
    /// Vendor's HTTP status, when it answered.
    pub http_status: Option<i64>,
    /// Duration (ms).
    pub duration_ms: i64,
    /// Error code, when `error`.
    pub error_code: Option<&'a str>,
    /// The input as the log keeps it (redacted JSON text, at most 4 KB).
    pub input: Option<&'a str>,
    /// The error told to the agent (redacted, at most 300 characters), when `error`.
    pub message: Option<&'a str>,
}

/// Records a call (run it in one transaction): its `tool_calls` row and, when it
/// reached the vendor (`used`), its `tool_usage` (`last_used_at` = now, `calls` + 1).
pub async fn record_call(conn: &mut Conn, c: &NewCall<'_>, used: bool, now: i64) -> DbResult<()> {
    on_db!(conn, |e| {
        sqlx::query(
        "INSERT INTO tool_calls (agent_id, tool_id, version, dry_run, status, http_status, duration_ms, at, error_code, input, message) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(c.agent_id)
    .bind(c.tool_id)
    .bind(c.version)
    .bind(c.dry_run)
    .bind(c.status)
    .bind(c.http_status)
    .bind(c.duration_ms)
    .bind(now)
    .bind(c.error_code)
    .bind(c.input)
    .bind(c.message)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    if used {
        on_db!(conn, |e| {
            sqlx::query(
            "INSERT INTO tool_usage (agent_id, tool_id, last_used_at, calls) VALUES ($1, $2, $3, 1) \
             ON CONFLICT (agent_id, tool_id) DO UPDATE SET last_used_at = excluded.last_used_at, calls = tool_usage.calls + 1",
        )
        .bind(c.agent_id)
        .bind(c.tool_id)
        .bind(now)
        .execute(e).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(())
}

/// Counts a call that reached the vendor: `last_used_at` = now, `calls` + 1.
pub async fn upsert_tool_usage(pool: &Pool, agent_id: i64, tool_id: i64, now: i64) -> DbResult<()> {
    on_db!(pool, |e| {
        sqlx::query(
        "INSERT INTO tool_usage (agent_id, tool_id, last_used_at, calls) VALUES ($1, $2, $3, 1) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET last_used_at = excluded.last_used_at, calls = tool_usage.calls + 1",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(now)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// `(last_used_at, calls)` of an agent's tool.
pub async fn select_tool_usage(
    pool: &Pool,
    agent_id: i64,
    tool_id: i64,
) -> DbResult<Option<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT last_used_at, calls FROM tool_usage WHERE agent_id = $1 AND tool_id = $2",
    )
    .bind(agent_id)
    .bind(tool_id)
    .fetch_optional(e)
    .await)
}

/// A call-log row.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct CallRow {
    /// Tool id.
    pub tool_id: i64,
    /// Version.
    pub version: i64,
    /// Dry run.
    pub dry_run: bool,
    /// `ok` / `error`.
    pub status: String,
    /// Vendor status.
    pub http_status: Option<i64>,
    /// Error code.
    pub error_code: Option<String>,
}

/// An agent's calls, oldest first.
pub async fn select_tool_calls(pool: &Pool, agent_id: i64) -> DbResult<Vec<CallRow>> {
    on_db!(pool, |e| {
        sqlx::query_as("SELECT tool_id, version, dry_run, status, http_status, error_code FROM tool_calls WHERE agent_id = $1 ORDER BY id")
        .bind(agent_id)
        .fetch_all(e).await
    })
}

/// Which calls of the log to read (issue 14.4); every field narrows, none reads all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallFilter {
    /// Only this agent's calls.
    pub agent_id: Option<i64>,
    /// Only calls of this tool.
    pub tool_id: Option<i64>,
    /// Only calls with this outcome.
    pub outcome: Option<CallOutcome>,
    /// Only calls older than this call id (the next page of a newest-first list).
    pub before: Option<i64>,
}

/// An outcome a calls list can be narrowed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The call succeeded (a dry run included).
    Ok,
    /// The call failed: refused by Graft (invalid input, a denied approval, the
    /// connection) or at the vendor (an error status, unreachable). A call that waits for
    /// a person's approval is not a failure (see `Approval`).
    Failed,
    /// The call waits for a person's approval, or was denied it.
    Approval,
    /// Dry runs only.
    DryRun,
}

impl CallOutcome {
    /// The outcome named `ok`, `failed`, `approval` or `dry-run` (`dry_run` too).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ok" => Some(Self::Ok),
            "failed" => Some(Self::Failed),
            "approval" => Some(Self::Approval),
            "dry-run" | "dry_run" => Some(Self::DryRun),
            _ => None,
        }
    }

    /// Its name, as [`CallOutcome::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Approval => "approval",
            Self::DryRun => "dry-run",
        }
    }
}

/// One call of the log with the names of its agent and tool.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct CallLogRow {
    /// Call id (increasing).
    pub id: i64,
    /// Agent name.
    pub agent: String,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The version that ran.
    pub version: i64,
    /// Dry run.
    pub dry_run: bool,
    /// `ok` / `error`.
    pub status: String,
    /// The vendor's HTTP status, when it answered.
    pub http_status: Option<i64>,
    /// Error code, when `error`.
    pub error_code: Option<String>,
    /// The error told to the agent (redacted), when `error` (none before migration 10).
    pub message: Option<String>,
    /// The input as logged (redacted JSON text; none before migration 10).
    pub input: Option<String>,
    /// Duration (ms).
    pub duration_ms: i64,
    /// When (ms).
    pub at: i64,
}

impl CallLogRow {
    /// The outcome in words a person reads: `ok`, `dry run`, `invalid input`, `waits
    /// for approval`, `approval denied`, `vendor error`, `vendor unreachable`,
    /// `connection revoked`, `no default connection`, `tool retired`, `vendor disabled`,
    /// `vendor removed`, `cancelled` (by the agent, issue 25.11).
    pub fn outcome(&self) -> &'static str {
        match (self.status.as_str(), self.error_code.as_deref()) {
            ("ok", _) if self.dry_run => "dry run",
            ("ok", _) => "ok",
            (_, Some("invalid_input")) => "invalid input",
            (_, Some("approval_required")) => "waits for approval",
            (_, Some("approval_denied")) => "approval denied",
            (_, Some("vendor_error")) => "vendor error",
            (_, Some("vendor_unreachable")) => "vendor unreachable",
            (_, Some("connection_revoked")) => "connection revoked",
            (_, Some("connection_ambiguous")) => "no default connection",
            (_, Some("tool_retired")) => "tool retired",
            (_, Some("vendor_disabled")) => "vendor disabled",
            (_, Some("vendor_removed")) => "vendor removed",
            (_, Some("cancelled")) => "cancelled",
            _ => "failed",
        }
    }
}

/// The newest `limit` calls that `filter` admits, newest first. Only the conditions
/// given are in the query, so SQLite walks the (agent_id, id) or (tool_id, id) index
/// instead of the whole log.
pub async fn select_call_log(
    pool: &Pool,
    filter: &CallFilter,
    limit: i64,
) -> DbResult<Vec<CallLogRow>> {
    on_db!(pool, |e| {
        let mut qb = sqlx::QueryBuilder::new(
        "SELECT c.id, ag.name AS agent, vd.slug AS vendor, t.name, c.version, c.dry_run, c.status, \
         c.http_status, c.error_code, c.message, c.input, c.duration_ms, c.at FROM tool_calls c \
         JOIN agents ag ON ag.id = c.agent_id JOIN tools t ON t.id = c.tool_id \
         JOIN vendors vd ON vd.id = t.vendor_id WHERE 1 = 1",
    );
        if let Some(a) = filter.agent_id {
            qb.push(" AND c.agent_id = ").push_bind(a);
        }
        if let Some(t) = filter.tool_id {
            qb.push(" AND c.tool_id = ").push_bind(t);
        }
        if let Some(b) = filter.before {
            qb.push(" AND c.id < ").push_bind(b);
        }
        qb.push(match filter.outcome {
            None => "",
            Some(CallOutcome::Ok) => " AND c.status = 'ok'",
            // waiting for a person is a step, not a failure: the Approval outcome lists it
            Some(CallOutcome::Failed) => {
                " AND c.status = 'error' AND COALESCE(c.error_code, '') <> 'approval_required'"
            }
            Some(CallOutcome::Approval) => {
                " AND c.error_code IN ('approval_required', 'approval_denied')"
            }
            Some(CallOutcome::DryRun) => " AND c.dry_run",
        });
        qb.push(" ORDER BY c.id DESC LIMIT ").push_bind(limit);
        qb.build_query_as().fetch_all(e).await
    })
}
