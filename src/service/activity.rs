//! What the agents did, counted over time for the console's Activity page (issue 30.4):
//! calls by outcome, latency by vendor, approvals waiting, working-set changes by cause;
//! and one agent's calls per day. Read from the calls log and history (SPEC §2) with one
//! grouped scan each, never row by row.

use super::{Graft, ServiceResult};
use crate::db;
use crate::domain::calls::quantile;
use crate::metrics::{change_cause, CallOutcome, CHANGE_CAUSES};
use std::collections::HashMap;

const MINUTE_MS: i64 = 60_000;
const DAY_MS: i64 = 24 * 60 * MINUTE_MS;

/// The time an Activity page covers, up to now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivityRange {
    /// The last 24 hours, in 15-minute buckets (96).
    Day,
    /// The last 30 days, in day buckets (30).
    Month,
}

impl ActivityRange {
    /// `24h` or `30d`; anything else is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "24h" => Some(Self::Day),
            "30d" => Some(Self::Month),
            _ => None,
        }
    }

    /// `24h` or `30d`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "24h",
            Self::Month => "30d",
        }
    }

    /// The length of one bucket (ms).
    pub fn bucket_ms(self) -> i64 {
        match self {
            Self::Day => 15 * MINUTE_MS,
            Self::Month => DAY_MS,
        }
    }

    /// How many buckets the range has.
    pub fn buckets(self) -> usize {
        match self {
            Self::Day => 96,
            Self::Month => 30,
        }
    }
}

/// Calls that reached one vendor in the range, and how long they took.
#[derive(Debug, Clone, PartialEq)]
pub struct VendorLatency {
    /// The vendor's slug.
    pub vendor: String,
    /// Calls that got an answer from it (any HTTP status).
    pub calls: i64,
    /// Of those, the ones counted as `vendor_error` (an error status).
    pub errors: i64,
    /// Median of the calls' durations (ms, Graft's work included), estimated from
    /// [`db::DURATION_BOUNDS_MS`] buckets.
    pub p50_ms: f64,
    /// 95th percentile, as `p50_ms`.
    pub p95_ms: f64,
}

/// What every agent did in one [`ActivityRange`].
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// The range.
    pub range: ActivityRange,
    /// Its start (ms): bucket `i` covers `[from + i × bucket_ms, from + (i + 1) × bucket_ms)`.
    pub from: i64,
    /// Its end: now (ms).
    pub to: i64,
    /// Calls per bucket, by outcome in [`CallOutcome::ALL`]'s order.
    pub calls: Vec<[i64; 6]>,
    /// Vendors by calls, most first.
    pub vendors: Vec<VendorLatency>,
    /// Working-set changes per bucket, by cause in [`CHANGE_CAUSES`]' order.
    pub changes: Vec<[i64; 11]>,
    /// Approvals waiting for a person now.
    pub pending: i64,
    /// When the longest-waiting one was asked for (ms).
    pub oldest_pending_at: Option<i64>,
}

impl Graft {
    /// The Activity of the agents over `range`, up to now. Errors: database faults.
    pub async fn activity(&self, range: ActivityRange) -> ServiceResult<Activity> {
        let to = self.now() + 1;
        let bucket_ms = range.bucket_ms();
        let n = range.buckets();
        let from = to - bucket_ms * n as i64;
        let pool = self.pool();
        let mut calls = vec![[0i64; 6]; n];
        for r in db::select_call_counts(pool, from, to, bucket_ms).await? {
            let outcome = CallOutcome::of(r.dry_run, r.error_code.as_deref());
            let at = CallOutcome::ALL
                .iter()
                .position(|o| *o == outcome)
                .unwrap_or(0);
            if let Some(b) = usize::try_from(r.bucket)
                .ok()
                .and_then(|b| calls.get_mut(b))
            {
                b[at] += r.n;
            }
        }
        let vendor_of: HashMap<i64, String> = db::sweep::select_tool_names_all(pool)
            .await?
            .into_iter()
            .map(|(id, vendor, _)| (id, vendor))
            .collect();
        // per vendor: (calls, errors, duration bucket counts)
        let mut by_vendor: HashMap<&str, (i64, i64, Vec<i64>)> = HashMap::new();
        let slots = db::DURATION_BOUNDS_MS.len() + 1;
        for r in db::select_latency_counts(pool, from, to).await? {
            let Some(vendor) = vendor_of.get(&r.tool_id) else {
                continue;
            };
            let v = by_vendor
                .entry(vendor.as_str())
                .or_insert_with(|| (0, 0, vec![0; slots]));
            v.0 += r.n;
            if r.failed {
                v.1 += r.n;
            }
            let d = usize::try_from(r.duration_bucket)
                .unwrap_or(0)
                .min(slots - 1);
            v.2[d] += r.n;
        }
        let bounds = &db::DURATION_BOUNDS_MS;
        let mut vendors: Vec<VendorLatency> = by_vendor
            .into_iter()
            .map(|(vendor, (calls, errors, hist))| VendorLatency {
                vendor: vendor.to_string(),
                calls,
                errors,
                p50_ms: quantile(&hist, bounds, 0.5).unwrap_or(0.0),
                p95_ms: quantile(&hist, bounds, 0.95).unwrap_or(0.0),
            })
            .collect();
        vendors.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.vendor.cmp(&b.vendor)));
        let mut changes = vec![[0i64; 11]; n];
        for r in db::select_change_counts(pool, from, to, bucket_ms).await? {
            let label = change_cause(r.action, r.cause);
            let at = CHANGE_CAUSES.iter().position(|c| *c == label).unwrap_or(0);
            if let Some(b) = usize::try_from(r.bucket)
                .ok()
                .and_then(|b| changes.get_mut(b))
            {
                b[at] += r.n;
            }
        }
        Ok(Activity {
            range,
            from,
            to,
            calls,
            vendors,
            changes,
            pending: db::count_pending_approvals(pool).await?,
            oldest_pending_at: db::oldest_pending_approval(pool).await?,
        })
    }

    /// One agent's calls per day over the last `days` days up to now: `(day start ms,
    /// calls)` for each day, oldest first (days without calls count 0). Errors: database
    /// faults.
    pub async fn agent_calls_per_day(
        &self,
        agent_id: i64,
        days: usize,
    ) -> ServiceResult<Vec<(i64, i64)>> {
        let to = self.now() + 1;
        let from = to - DAY_MS * days as i64;
        let mut out: Vec<(i64, i64)> = (0..days as i64).map(|i| (from + i * DAY_MS, 0)).collect();
        for (bucket, n) in
            db::select_agent_call_counts(self.pool(), agent_id, from, to, DAY_MS).await?
        {
            if let Some(slot) = usize::try_from(bucket).ok().and_then(|b| out.get_mut(b)) {
                slot.1 += n;
            }
        }
        Ok(out)
    }
}
