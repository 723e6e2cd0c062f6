//! Queries of the call log and tool usage (SPEC §4, §5 idle clock).

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// Deletes the calls logged before `cutoff` (ms) and their counts, in one write
/// transaction: the slots of `call_counts` and days of `agent_call_days` that start
/// before `cutoff` go, and the one that straddles it is counted again from the calls
/// left, so the counts always equal the log. Returns how many calls.
pub async fn delete_calls_before(pool: &Pool, cutoff: i64) -> DbResult<u64> {
    let mut tx = pool.begin_write().await?;
    execute!(
        &mut tx,
        "DELETE FROM call_details WHERE call_id IN (SELECT id FROM tool_calls WHERE at < $1)",
        cutoff
    )?;
    let deleted = execute!(&mut tx, "DELETE FROM tool_calls WHERE at < $1", cutoff)?;
    execute!(&mut tx, "DELETE FROM call_counts WHERE slot < $1", cutoff)?;
    execute!(
        &mut tx,
        "DELETE FROM agent_call_days WHERE day < $1",
        cutoff
    )?;
    // the calls in [cutoff, the straddling slot's end): none when cutoff starts a slot
    let end = |width: i64| match slot_of(cutoff, width) {
        s if s == cutoff => cutoff,
        s => s + width,
    };
    for width in COUNT_WIDTHS_MS {
        execute!(
            &mut tx,
            &count_calls_sql(&[width], true),
            cutoff,
            end(width)
        )?;
    }
    execute!(&mut tx, &count_days_sql(true), cutoff, end(DAY_MS))?;
    tx.commit().await?;
    Ok(deleted)
}

/// One call-log row to insert.
#[derive(Debug, Clone)]
pub struct NewCall<'a> {
    pub agent_id: i64,
    pub tool_id: i64,
    /// Version that ran.
    pub version: i64,
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
    /// What was sent, redacted (JSON text; issue 28.9), when the vendor was asked.
    pub request: Option<&'a str>,
    /// What the vendor answered, redacted (JSON text), when it answered.
    pub response: Option<&'a str>,
}

/// Records a call (run it in one transaction): its `tool_calls` row; one more in its
/// rows of `call_counts` (at both [`COUNT_WIDTHS_MS`]) and `agent_call_days`, which the
/// Activity page and the agent page read (issue 30.4); and, when it reached the vendor
/// (`used`), its `tool_usage` (`last_used_at` = now, `calls` + 1).
pub async fn record_call(conn: &mut Conn, c: &NewCall<'_>, used: bool, now: i64) -> DbResult<()> {
    let id: i64 = on_db!(conn, |e| {
        sqlx::query_scalar("INSERT INTO tool_calls (agent_id, tool_id, version, dry_run, status, http_status, duration_ms, at, error_code, input, message) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id")
        .bind(c.agent_id).bind(c.tool_id).bind(c.version).bind(c.dry_run).bind(c.status).bind(c.http_status)
        .bind(c.duration_ms).bind(now).bind(c.error_code).bind(c.input).bind(c.message)
        .fetch_one(e).await
    })?;
    if c.request.is_some() || c.response.is_some() {
        execute!(
            conn,
            "INSERT INTO call_details (call_id, request, response) VALUES ($1, $2, $3)",
            id,
            c.request,
            c.response
        )?;
    }
    let sent = c.http_status.is_some() || c.error_code == Some("vendor_unreachable");
    let bucket = if sent {
        duration_bucket(c.duration_ms)
    } else {
        -1
    };
    let code = c.error_code.unwrap_or("");
    for width in COUNT_WIDTHS_MS {
        execute!(conn, "INSERT INTO call_counts (width_ms, slot, vendor_id, dry_run, error_code, duration_bucket, n, max_ms) \
             SELECT $1, $2, vendor_id, $3, $4, $5, 1, $7 FROM tools WHERE id = $6 \
             ON CONFLICT (width_ms, slot, vendor_id, dry_run, error_code, duration_bucket) DO UPDATE SET n = call_counts.n + 1, \
             max_ms = CASE WHEN excluded.max_ms > call_counts.max_ms THEN excluded.max_ms ELSE call_counts.max_ms END",
            width, slot_of(now, width), c.dry_run, code, bucket, c.tool_id, c.duration_ms)?;
    }
    execute!(
        conn,
        "INSERT INTO agent_call_days (agent_id, day, n) VALUES ($1, $2, 1) \
         ON CONFLICT (agent_id, day) DO UPDATE SET n = agent_call_days.n + 1",
        c.agent_id,
        slot_of(now, DAY_MS)
    )?;
    if used {
        execute!(conn, "INSERT INTO tool_usage (agent_id, tool_id, last_used_at, calls) VALUES ($1, $2, $3, 1) \
             ON CONFLICT (agent_id, tool_id) DO UPDATE SET last_used_at = excluded.last_used_at, calls = tool_usage.calls + 1", c.agent_id, c.tool_id, now)?;
    }
    Ok(())
}

/// Counts a call that reached the vendor: `last_used_at` = now, `calls` + 1.
pub async fn upsert_tool_usage(pool: &Pool, agent_id: i64, tool_id: i64, now: i64) -> DbResult<()> {
    execute!(pool, "INSERT INTO tool_usage (agent_id, tool_id, last_used_at, calls) VALUES ($1, $2, $3, 1) \
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET last_used_at = excluded.last_used_at, calls = tool_usage.calls + 1", agent_id, tool_id, now)?;
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
    pub tool_id: i64,
    pub version: i64,
    pub dry_run: bool,
    /// `ok` / `error`.
    pub status: String,
    /// Vendor status.
    pub http_status: Option<i64>,
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
    pub agent: String,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The version that ran.
    pub version: i64,
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
    /// The outcome in words a person reads: `ok`, `dry run`, or the error code's words
    /// ([`crate::domain::calls::error_words`]: `invalid input`, `waits for approval`,
    /// `vendor error`, `no default connection`, `cancelled`, …; `failed` otherwise).
    pub fn outcome(&self) -> &'static str {
        match (self.status.as_str(), self.error_code.as_deref()) {
            ("ok", _) if self.dry_run => "dry run",
            ("ok", _) => "ok",
            (_, Some(code)) => crate::domain::calls::error_words(code),
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

/// Upper bounds (ms, exclusive) of the call-duration buckets the activity queries count
/// in; a duration of at least the last bound falls in one more bucket. Roughly 1-2-5
/// steps from 1 ms to 2 minutes (the longest vendor timeout).
pub const DURATION_BOUNDS_MS: [i64; 16] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000,
];

/// One UTC day (ms).
pub const DAY_MS: i64 = 86_400_000;

/// The widths (ms) of the `call_counts` slots each call is counted in: 15 minutes (the
/// Activity page's last 24 hours) and one UTC day (its 30 days).
pub const COUNT_WIDTHS_MS: [i64; 2] = [900_000, DAY_MS];

/// The start (ms) of the slot of `width` ms that holds `at`: a multiple of `width` from
/// the Unix epoch, computed as the migrations' SQL does (`at - at % width`).
pub fn slot_of(at: i64, width: i64) -> i64 {
    at - at % width.max(1)
}

/// The index into [`DURATION_BOUNDS_MS`] of the first bound above `ms`, or its length.
pub fn duration_bucket(ms: i64) -> i64 {
    DURATION_BOUNDS_MS
        .iter()
        .position(|b| ms < *b)
        .unwrap_or(DURATION_BOUNDS_MS.len()) as i64
}

/// Calls of every agent in the `call_counts` slots of one width from `from`: by slot
/// start, vendor, dry run, error code (`''`: none) and duration bucket (an index into
/// [`DURATION_BOUNDS_MS`] for a call sent to the vendor, answered or
/// `vendor_unreachable`; `-1` for one not sent); `max_ms` is the longest of them (ms).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct CallCountRow {
    pub slot: i64,
    pub vendor_id: i64,
    pub dry_run: bool,
    pub error_code: String,
    pub duration_bucket: i64,
    pub n: i64,
    pub max_ms: i64,
}

/// [`CallCountRow`]s of the slots of `width_ms` that start in `[from, to)`: a range of
/// the primary key; the rows are slots × vendors × the codes and durations seen, however
/// many calls there were.
pub async fn select_call_counts(
    pool: &Pool,
    width_ms: i64,
    from: i64,
    to: i64,
) -> DbResult<Vec<CallCountRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT slot, vendor_id, dry_run, error_code, duration_bucket, n, max_ms FROM call_counts \
         WHERE width_ms = $1 AND slot >= $2 AND slot < $3",
    )
    .bind(width_ms)
    .bind(from)
    .bind(to)
    .fetch_all(e)
    .await)
}

/// `(day start, calls)` of one agent for the UTC days that start in `[from, to)`, oldest
/// first; days without calls are absent.
pub async fn select_agent_call_days(
    pool: &Pool,
    agent_id: i64,
    from: i64,
    to: i64,
) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT day, n FROM agent_call_days WHERE agent_id = $1 AND day >= $2 AND day < $3 \
         ORDER BY day",
    )
    .bind(agent_id)
    .bind(from)
    .bind(to)
    .fetch_all(e)
    .await)
}

/// The statement that adds the calls of `tool_calls` (those with `at` in `[$1, $2)`
/// when `in_range`) to `call_counts` at `widths`, as the migration that made the table
/// did; the rows it writes must not exist yet.
fn count_calls_sql(widths: &[i64], in_range: bool) -> String {
    let mut case = String::from(
        "CASE WHEN c.http_status IS NULL AND COALESCE(c.error_code, '') <> 'vendor_unreachable' THEN -1",
    );
    for (i, bound) in DURATION_BOUNDS_MS.iter().enumerate() {
        case.push_str(&format!(" WHEN c.duration_ms < {bound} THEN {i}"));
    }
    case.push_str(&format!(" ELSE {} END", DURATION_BOUNDS_MS.len()));
    let widths = widths
        .iter()
        .map(|w| format!("SELECT CAST({w} AS BIGINT) AS width_ms"))
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let range = if in_range {
        "WHERE c.at >= $1 AND c.at < $2"
    } else {
        ""
    };
    format!(
        "INSERT INTO call_counts (width_ms, slot, vendor_id, dry_run, error_code, duration_bucket, n, max_ms) \
         SELECT w.width_ms, c.at - (c.at % w.width_ms), t.vendor_id, c.dry_run, COALESCE(c.error_code, ''), {case}, COUNT(*), MAX(c.duration_ms) \
         FROM tool_calls c JOIN tools t ON t.id = c.tool_id CROSS JOIN ({widths}) w {range} \
         GROUP BY 1, 2, 3, 4, 5, 6"
    )
}

/// The statement that adds the calls of `tool_calls` (those in `[$1, $2)` when
/// `in_range`) to `agent_call_days`; the rows it writes must not exist yet.
fn count_days_sql(in_range: bool) -> String {
    let range = if in_range {
        "WHERE at >= $1 AND at < $2"
    } else {
        ""
    };
    format!(
        "INSERT INTO agent_call_days (agent_id, day, n) \
         SELECT agent_id, at - (at % {DAY_MS}), COUNT(*) FROM tool_calls {range} GROUP BY 1, 2"
    )
}

/// Counts the calls logged in `tool_calls` into `call_counts` and `agent_call_days` again
/// from nothing, in one write transaction (what the migration that made them did): for
/// calls written around [`record_call`], as the console benchmark does. Errors: database
/// faults.
pub async fn recount_calls(pool: &Pool) -> DbResult<()> {
    let mut tx = pool.begin_write().await?;
    execute!(&mut tx, "DELETE FROM call_counts")?;
    execute!(&mut tx, "DELETE FROM agent_call_days")?;
    execute!(&mut tx, &count_calls_sql(&COUNT_WIDTHS_MS, false))?;
    execute!(&mut tx, &count_days_sql(false))?;
    tx.commit().await
}

/// What one call sent and received (issue 28.9), as [`record_call`] kept it.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct CallDetailRow {
    /// The request as sent, redacted (JSON text).
    pub request: Option<String>,
    /// The vendor's answer, redacted (JSON text).
    pub response: Option<String>,
}

/// Call `id`'s row of the log, and its detail when one is kept.
pub async fn select_call(
    pool: &Pool,
    id: i64,
) -> DbResult<Option<(CallLogRow, Option<CallDetailRow>)>> {
    let filter = CallFilter {
        before: Some(id.saturating_add(1)),
        ..Default::default()
    };
    let Some(row) = select_call_log(pool, &filter, 1)
        .await?
        .into_iter()
        .find(|c| c.id == id)
    else {
        return Ok(None);
    };
    let detail = on_db!(pool, |e| sqlx::query_as(
        "SELECT request, response FROM call_details WHERE call_id = $1"
    )
    .bind(id)
    .fetch_optional(e)
    .await)?;
    Ok(Some((row, detail)))
}

/// Keeps the details of the newest `kept` calls only (by id): returns how many went.
pub async fn prune_call_details(pool: &Pool, kept: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM call_details WHERE call_id <= (SELECT MAX(id) FROM tool_calls) - $1",
        kept
    )
}
