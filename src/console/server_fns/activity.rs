//! The Activity page's data (issue 30.4): what the agents did over the last 24 hours or
//! 30 days, and one agent's calls per day.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{signed_in, with_status};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Calls that reached one vendor in the range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VendorLatencyItem {
    /// The vendor's slug.
    pub vendor: String,
    /// Calls sent to it (answered, or timed out or refused).
    pub calls: i64,
    /// Of those, error answers and calls that could not reach it.
    pub errors: i64,
    /// Median duration (ms), estimated from buckets.
    pub p50_ms: f64,
    /// 95th percentile (ms), estimated from buckets.
    pub p95_ms: f64,
    /// The longest duration (ms).
    pub max_ms: i64,
}

/// `/activity` (issue 30.4): counts per time bucket over the range, oldest bucket first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActivityData {
    /// The server's clock (ms).
    pub now: i64,
    /// `24h` or `30d`.
    pub range: String,
    /// The first bucket's start (ms).
    pub from: i64,
    /// One bucket's length (ms).
    pub bucket_ms: i64,
    /// Outcome labels (`ok`, `dry_run`, …), the order of each bucket's call counts.
    pub outcomes: Vec<String>,
    /// Calls per bucket by outcome.
    pub calls: Vec<Vec<i64>>,
    /// Cause labels (`promote`, `idle`, …), the order of each bucket's change counts.
    pub causes: Vec<String>,
    /// Working-set changes per bucket by cause.
    pub changes: Vec<Vec<i64>>,
    /// Vendors by calls, most first.
    pub vendors: Vec<VendorLatencyItem>,
    /// Approvals waiting now.
    pub pending: i64,
    /// When the longest-waiting approval was asked for (ms).
    pub oldest_pending_at: Option<i64>,
}

/// What every agent did over `range` (`24h`, else `30d`; anything else reads as `24h`).
/// Errors: not signed in, database faults.
#[server(prefix = "/api", endpoint = "activity")]
pub async fn activity(range: String) -> ConsoleResult<ActivityData> {
    with_status(async move {
        use crate::service::ActivityRange;
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let range = ActivityRange::parse(&range).unwrap_or(ActivityRange::Day);
        let a = g.activity(range).await?;
        Ok(ActivityData {
            now: a.to - 1,
            range: range.as_str().to_string(),
            from: a.from,
            bucket_ms: range.bucket_ms(),
            outcomes: crate::metrics::CallOutcome::ALL
                .iter()
                .map(|o| o.as_str().to_string())
                .collect(),
            calls: a.calls.iter().map(|b| b.to_vec()).collect(),
            causes: crate::metrics::CHANGE_CAUSES
                .iter()
                .map(|c| c.to_string())
                .collect(),
            changes: a.changes.iter().map(|b| b.to_vec()).collect(),
            vendors: a
                .vendors
                .into_iter()
                .map(|v| VendorLatencyItem {
                    vendor: v.vendor,
                    calls: v.calls,
                    errors: v.errors,
                    p50_ms: v.p50_ms,
                    p95_ms: v.p95_ms,
                    max_ms: v.max_ms,
                })
                .collect(),
            pending: a.pending,
            oldest_pending_at: a.oldest_pending_at,
        })
    })
    .await
}
