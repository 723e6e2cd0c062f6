//! What one agent may make Graft do, per instance (security review 32.8): one token
//! could otherwise grow the database without bound (refused-call rows, published
//! versions) or hold every worker.
//!
//! - Tool calls (first-class and `run_tool`): at most `calls_per_minute` (a token bucket
//!   that refills evenly), and `concurrent_calls` at once. A call past either is answered
//!   `rate_limited` with when to retry, and not written to the calls log: the limit
//!   exists so that the log cannot be flooded.
//! - `acquire` and `publish`: at most `authoring_per_hour`; an agent-authored tool has
//!   at most `versions_per_tool` versions, and an agent authors `tools_per_agent` tools
//!   at most.
//! - `promote` and `demote`: at most `changes_per_hour` (each writes a history row,
//!   which is kept for ever).
//! - The calls log keeps `calls_retention_days` days; the scheduled sweep deletes older
//!   rows.
//!
//! With several instances each keeps its own counts, so an agent spread over `n`
//! instances gets up to `n` times the rates.

use super::{Actor, Graft, ServiceError, ServiceResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The limits (README "Limits"); environment variables in parentheses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Tool calls per agent per minute (`GRAFT_AGENT_CALLS_PER_MINUTE`, default 600).
    pub calls_per_minute: u32,
    /// Tool calls of one agent running at once (`GRAFT_AGENT_CONCURRENT_CALLS`, 16).
    pub concurrent_calls: usize,
    /// `acquire` and `publish` per agent per hour (`GRAFT_AGENT_AUTHORING_PER_HOUR`, 60).
    pub authoring_per_hour: u32,
    /// Versions of one agent-authored tool (`GRAFT_AGENT_VERSIONS_PER_TOOL`, 100).
    pub versions_per_tool: i64,
    /// Tools one agent may author (`GRAFT_AGENT_TOOLS`, 500).
    pub tools_per_agent: i64,
    /// `promote` and `demote` per agent per hour (`GRAFT_AGENT_CHANGES_PER_HOUR`, 600):
    /// each writes a history row, which is never deleted.
    pub changes_per_hour: u32,
    /// Days the calls log keeps (`GRAFT_CALLS_RETENTION_DAYS`, 90).
    pub calls_retention_days: i64,
    /// Calls whose request and answer the log keeps for the console's call detail, the
    /// newest (`GRAFT_CALL_DETAILS_KEPT`, 10,000; issue 28.9; up to ~12 KB each).
    pub call_details_kept: i64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            calls_per_minute: 600,
            concurrent_calls: 16,
            authoring_per_hour: 60,
            versions_per_tool: 100,
            tools_per_agent: 500,
            changes_per_hour: 600,
            calls_retention_days: 90,
            call_details_kept: 10_000,
        }
    }
}

impl Quotas {
    /// The limits from the environment (each variable optional). Errors: a value that
    /// is not a positive whole number, naming the variable.
    pub fn from_env() -> Result<Self, String> {
        fn var<T: std::str::FromStr + PartialOrd + From<u8>>(
            name: &str,
            default: T,
        ) -> Result<T, String> {
            match std::env::var(name) {
                Ok(v) => v
                    .trim()
                    .parse::<T>()
                    .ok()
                    .filter(|n| *n >= T::from(1u8))
                    .ok_or_else(|| format!("{name} {v:?} is not a whole number of at least 1")),
                Err(_) => Ok(default),
            }
        }
        let d = Self::default();
        Ok(Self {
            calls_per_minute: var("GRAFT_AGENT_CALLS_PER_MINUTE", d.calls_per_minute)?,
            concurrent_calls: var::<u32>("GRAFT_AGENT_CONCURRENT_CALLS", d.concurrent_calls as u32)?
                as usize,
            authoring_per_hour: var("GRAFT_AGENT_AUTHORING_PER_HOUR", d.authoring_per_hour)?,
            versions_per_tool: var::<u32>(
                "GRAFT_AGENT_VERSIONS_PER_TOOL",
                d.versions_per_tool as u32,
            )?
            .into(),
            tools_per_agent: var::<u32>("GRAFT_AGENT_TOOLS", d.tools_per_agent as u32)?.into(),
            changes_per_hour: var("GRAFT_AGENT_CHANGES_PER_HOUR", d.changes_per_hour)?,
            calls_retention_days: var::<u32>(
                "GRAFT_CALLS_RETENTION_DAYS",
                d.calls_retention_days as u32,
            )?
            .into(),
            call_details_kept: var::<u32>("GRAFT_CALL_DETAILS_KEPT", d.call_details_kept as u32)?
                .into(),
        })
    }
}

/// A token bucket: `capacity` tokens, refilled at `capacity / period`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Which budget a request spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Spend {
    /// A tool call.
    Call,
    /// An `acquire` or `publish`.
    Authoring,
    /// A `promote` or `demote`.
    Change,
}

/// The counts (in memory).
#[derive(Debug, Default)]
pub struct Meter {
    buckets: Mutex<HashMap<(i64, Spend), Bucket>>,
    running: Mutex<HashMap<i64, Arc<tokio::sync::Semaphore>>>,
}

/// Most agents' buckets kept before full ones are forgotten.
const BUCKETS: usize = 16_384;

impl Meter {
    /// Spends one unit of `agent_id`'s `spend` budget under `q`. Errors: how long until
    /// one unit is back.
    pub fn spend(&self, q: &Quotas, agent_id: i64, spend: Spend) -> Result<(), Duration> {
        let (capacity, period) = match spend {
            Spend::Call => (q.calls_per_minute as f64, 60.0),
            Spend::Authoring => (q.authoring_per_hour as f64, 3600.0),
            Spend::Change => (q.changes_per_hour as f64, 3600.0),
        };
        let rate = capacity / period;
        let now = Instant::now();
        let mut buckets = self.buckets.lock().expect("meter lock");
        if buckets.len() >= BUCKETS {
            // a full bucket is as good as none
            buckets.retain(|(_, s), b| {
                let cap = match s {
                    Spend::Call => q.calls_per_minute as f64,
                    Spend::Authoring => q.authoring_per_hour as f64,
                    Spend::Change => q.changes_per_hour as f64,
                };
                b.tokens < cap - 0.5
            });
        }
        let b = buckets.entry((agent_id, spend)).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        b.tokens = (b.tokens + now.duration_since(b.at).as_secs_f64() * rate).min(capacity);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rate).max(Duration::from_secs(1)))
        }
    }

    /// A slot among `agent_id`'s `q.concurrent_calls` calls at once, held until dropped;
    /// `None` when all are taken.
    pub fn running(&self, q: &Quotas, agent_id: i64) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let sem = self
            .running
            .lock()
            .expect("meter lock")
            .entry(agent_id)
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(q.concurrent_calls)))
            .clone();
        sem.try_acquire_owned().ok()
    }
}

impl Graft {
    /// Spends one of an agent's promotions and demotions per hour (security review
    /// 32.8: each writes a history row); people and the rule are not metered.
    /// Errors: `Busy` saying when to try again.
    pub(crate) fn spend_change(&self, actor: &Actor) -> ServiceResult<()> {
        self.spend_hourly(actor, Spend::Change, |q| {
            format!(
                "this agent promoted or demoted more than {} times in the last hour (GRAFT_AGENT_CHANGES_PER_HOUR)",
                q.changes_per_hour
            )
        })
    }

    /// Spends one of an agent's `spend` (an hourly budget); people and the rule are not
    /// metered. Errors: `Busy`, `refused(quotas)` (what the agent went past), then
    /// `: nothing was changed; try again in {n} s`.
    pub(super) fn spend_hourly(
        &self,
        actor: &Actor,
        spend: Spend,
        refused: impl FnOnce(&Quotas) -> String,
    ) -> ServiceResult<()> {
        let Actor::Agent(agent_id) = actor else {
            return Ok(());
        };
        let q = &self.inner.quotas;
        self.inner
            .meter
            .spend(q, *agent_id, spend)
            .map_err(|wait| ServiceError::Busy {
                message: format!(
                    "{}: nothing was changed; try again in {} s",
                    refused(q),
                    wait.as_secs().max(1)
                ),
                retry_after: wait,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_run_out_per_agent_and_say_when_they_come_back() {
        let q = Quotas {
            calls_per_minute: 3,
            concurrent_calls: 2,
            authoring_per_hour: 1,
            ..Quotas::default()
        };
        let m = Meter::default();
        for _ in 0..3 {
            assert!(m.spend(&q, 1, Spend::Call).is_ok());
        }
        let wait = m.spend(&q, 1, Spend::Call).unwrap_err();
        assert!(
            wait >= Duration::from_secs(1) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        // another agent, and another budget, are untouched
        assert!(m.spend(&q, 2, Spend::Call).is_ok());
        assert!(m.spend(&q, 1, Spend::Authoring).is_ok());
        assert!(m.spend(&q, 1, Spend::Authoring).unwrap_err() > Duration::from_secs(3000));
        let a = m.running(&q, 1).unwrap();
        let _b = m.running(&q, 1).unwrap();
        assert!(m.running(&q, 1).is_none());
        drop(a);
        assert!(m.running(&q, 1).is_some());
    }
}
