//! What the agents did, counted over time for the console's Activity page (issue 30.4):
//! calls by outcome, latency by vendor, approvals waiting, working-set changes by cause;
//! and one agent's calls per day. Calls are read from the counts each call adds to when
//! it is logged (`call_counts`, `agent_call_days`: [`db::record_call`]), a few hundred
//! rows whatever the size of the calls log; changes from one grouped scan of history
//! (SPEC §2).

use super::{Graft, ServiceResult};
use crate::db;
use crate::domain::calls::quantile;
use crate::metrics::{change_cause, CallOutcome, CHANGE_CAUSES};
use std::collections::HashMap;

const DAY_MS: i64 = db::DAY_MS;

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

    /// The length of one bucket (ms): 15 minutes or one day, the widths calls are
    /// counted at.
    pub fn bucket_ms(self) -> i64 {
        match self {
            Self::Day => db::COUNT_WIDTHS_MS[0],
            Self::Month => db::COUNT_WIDTHS_MS[1],
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
    /// Calls sent to it: answered (any HTTP status), or `vendor_unreachable` (a timeout,
    /// a refused connection).
    pub calls: i64,
    /// Of those, the ones counted as a vendor error (an error status, or unreachable).
    pub errors: i64,
    /// Median of the calls' durations (ms, Graft's work included), estimated from
    /// [`db::DURATION_BOUNDS_MS`] buckets and never above `max_ms`.
    pub p50_ms: f64,
    /// 95th percentile, as `p50_ms`.
    pub p95_ms: f64,
    /// The longest of the calls' durations (ms).
    pub max_ms: i64,
}

/// What every agent did in one [`ActivityRange`].
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// The range.
    pub range: ActivityRange,
    /// Its start (ms), a multiple of the bucket's length from the Unix epoch (a
    /// quarter-hour or a UTC midnight): bucket `i` covers `[from + i × bucket_ms, from +
    /// (i + 1) × bucket_ms)`, and the last one holds now.
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
    /// The Activity of the agents over `range`, up to now: its buckets are the slots of
    /// `call_counts` (15 minutes, or UTC days), the last one holding now. Errors:
    /// database faults.
    pub async fn activity(&self, range: ActivityRange) -> ServiceResult<Activity> {
        let now = self.now();
        let to = now + 1;
        let bucket_ms = range.bucket_ms();
        let n = range.buckets();
        let from = db::slot_of(now, bucket_ms) - bucket_ms * (n as i64 - 1);
        let pool = self.pool();
        let slug_of: HashMap<i64, String> = db::select_vendors(pool)
            .await?
            .into_iter()
            .map(|v| (v.id, v.slug))
            .collect();
        let mut calls = vec![[0i64; 6]; n];
        // per vendor: (calls sent to it, errors, duration bucket counts, longest)
        let slots = db::DURATION_BOUNDS_MS.len() + 1;
        let mut by_vendor: HashMap<&str, (i64, i64, Vec<i64>, i64)> = HashMap::new();
        for r in db::select_call_counts(pool, bucket_ms, from, to).await? {
            let code = Some(r.error_code.as_str()).filter(|c| !c.is_empty());
            let outcome = CallOutcome::of(r.dry_run, code);
            let at = CallOutcome::ALL
                .iter()
                .position(|o| *o == outcome)
                .unwrap_or(0);
            if let Some(b) = usize::try_from((r.slot - from) / bucket_ms)
                .ok()
                .and_then(|b| calls.get_mut(b))
            {
                b[at] += r.n;
            }
            // a call not sent to its vendor has no duration bucket (-1)
            let (Ok(d), Some(vendor)) = (
                usize::try_from(r.duration_bucket),
                slug_of.get(&r.vendor_id),
            ) else {
                continue;
            };
            let v = by_vendor
                .entry(vendor.as_str())
                .or_insert_with(|| (0, 0, vec![0; slots], 0));
            v.0 += r.n;
            if outcome == CallOutcome::VendorError {
                v.1 += r.n;
            }
            v.2[d.min(slots - 1)] += r.n;
            v.3 = v.3.max(r.max_ms);
        }
        let bounds = &db::DURATION_BOUNDS_MS;
        let mut vendors: Vec<VendorLatency> = by_vendor
            .into_iter()
            .map(|(vendor, (calls, errors, hist, max_ms))| {
                // an estimate inside a wide bucket can pass every real duration
                let at = |q| quantile(&hist, bounds, q).unwrap_or(0.0).min(max_ms as f64);
                VendorLatency {
                    vendor: vendor.to_string(),
                    calls,
                    errors,
                    p50_ms: at(0.5),
                    p95_ms: at(0.95),
                    max_ms,
                }
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

    /// One agent's calls per UTC day over the last `days` days, today included: `(day
    /// start ms, calls)` for each day, oldest first (days without calls count 0); read
    /// from `agent_call_days`. Errors: database faults.
    pub async fn agent_calls_per_day(
        &self,
        agent_id: i64,
        days: usize,
    ) -> ServiceResult<Vec<(i64, i64)>> {
        let now = self.now();
        let from = db::slot_of(now, DAY_MS) - DAY_MS * (days as i64 - 1);
        let mut out: Vec<(i64, i64)> = (0..days as i64).map(|i| (from + i * DAY_MS, 0)).collect();
        for (day, n) in db::select_agent_call_days(self.pool(), agent_id, from, now + 1).await? {
            if let Some(slot) = usize::try_from((day - from) / DAY_MS)
                .ok()
                .and_then(|b| out.get_mut(b))
            {
                slot.1 += n;
            }
        }
        Ok(out)
    }
}
