//! The sweep (SPEC §5): reads every working set with its usage, plans with
//! [`crate::domain::sweep::plan_agent`], and demotes in transactions that re-check each
//! row against what was planned, so a tool called or re-promoted meanwhile is kept and two
//! sweeps at once demote each entry once. Each agent that lost tools gets one
//! list_changed per sweep. Also: agent settings edits, and revoking a connection.

use super::{Actor, Graft, ServiceResult};
use crate::db::{self, sweep as q};
use crate::domain::sweep::{plan_agent, AgentRule, SweepEntry};
use crate::domain::{Cause, HistoryAction};
use serde::Serialize;
use std::collections::HashMap;

/// One demotion of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SweptTool {
    #[serde(skip)]
    pub tool_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// `Idle` or `Cap`.
    pub cause: Cause,
    /// Promotion time (ms).
    pub promoted_at: i64,
    /// Last use (ms), if ever.
    pub last_used_at: Option<i64>,
}

/// What a sweep did (or, as a dry run, would do) for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentSweep {
    pub agent_id: i64,
    pub agent: String,
    /// Cap at the sweep.
    pub cap: i64,
    /// Idle window (days) at the sweep.
    pub idle_window_days: i64,
    /// Token budget at the sweep, if any (issue 29.2).
    pub token_budget: Option<i64>,
    /// Entries before the sweep.
    pub before: usize,
    /// Demotions, idle first, then cap, then budget.
    pub demoted: Vec<SweptTool>,
}

/// The result of one sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// The sweep's `now` (ms).
    pub now: i64,
    /// Whether nothing was changed (a preview).
    pub dry_run: bool,
    /// Working-set entries checked (all of them; only those of agents the rule may
    /// touch are read in full).
    pub entries: usize,
    /// Agents that lost (or would lose) tools.
    pub agents: Vec<AgentSweep>,
}

impl SweepReport {
    /// Demotions in all.
    pub fn demotions(&self) -> usize {
        self.agents.iter().map(|a| a.demoted.len()).sum()
    }
}

impl Graft {
    /// The periodic sweep's run as of `now`: on PostgreSQL only the instance that gets
    /// the sweep lock sweeps (the others answer `None`: one sweep at a time, each entry
    /// demoted once, one list_changed per agent); on SQLite it always sweeps.
    /// Errors: database faults.
    pub async fn sweep_scheduled(&self, now: i64) -> ServiceResult<Option<SweepReport>> {
        let _lock = match self.pool() {
            db::Pool::Postgres(_) => match q::try_sweep_lock(self.pool()).await? {
                Some(held) => Some(held),
                None => return Ok(None),
            },
            db::Pool::Sqlite(_) => None,
        };
        let report = self.sweep_once(now, false).await?;
        // the calls log keeps GRAFT_CALLS_RETENTION_DAYS (security review 32.8)
        let cutoff = now - self.inner.quotas.calls_retention_days * 86_400_000;
        match db::delete_calls_before(self.pool(), cutoff).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                deleted = n,
                days = self.inner.quotas.calls_retention_days,
                "calls log: older calls deleted"
            ),
            Err(e) => tracing::warn!(error = ?e, "pruning the calls log failed"),
        }
        // and the details of the newest GRAFT_CALL_DETAILS_KEPT calls only (issue 28.9)
        let kept = self.inner.quotas.call_details_kept;
        if let Err(e) = db::prune_call_details(self.pool(), kept).await {
            tracing::warn!(error = ?e, "pruning the calls' details failed");
        }
        Ok(Some(report))
    }

    /// One sweep as of `now` (ms since the epoch): the idle rule, then the cap rule, for
    /// every agent (SPEC §5), its history rows written at `now`. With `dry_run`, plans
    /// only. Errors: database faults.
    pub async fn sweep_once(&self, now: i64, dry_run: bool) -> ServiceResult<SweepReport> {
        self.sweep_at(now, now, dry_run).await
    }

    /// A sweep planned as of `as_of` (ms; a person's "what if", `graft sweep --at`) and,
    /// unless `dry_run`, applied now: its history rows carry the real time, never a
    /// future one (issue 28.4). The report's `now` is `as_of`. Errors: database faults.
    pub async fn sweep_as_of(&self, as_of: i64, dry_run: bool) -> ServiceResult<SweepReport> {
        self.sweep_at(as_of, self.now(), dry_run).await
    }

    async fn sweep_at(
        &self,
        now: i64,
        written_at: i64,
        dry_run: bool,
    ) -> ServiceResult<SweepReport> {
        let started = std::time::Instant::now();
        let report = self.sweep_planned(now, written_at, dry_run).await?;
        if !dry_run {
            self.inner.metrics.sweep(started.elapsed().as_secs_f64());
        }
        Ok(report)
    }

    async fn sweep_planned(
        &self,
        now: i64,
        written_at: i64,
        dry_run: bool,
    ) -> ServiceResult<SweepReport> {
        let total = q::count_entries(self.pool()).await? as usize;
        let rows = q::select_sweep_entries(self.pool(), now).await?;
        let rules: HashMap<i64, (String, AgentRule)> = q::select_agent_rules(self.pool())
            .await?
            .into_iter()
            .map(|(id, name, cap, idle_window_days, token_budget)| {
                (
                    id,
                    (
                        name,
                        AgentRule {
                            cap,
                            idle_window_days,
                            token_budget,
                        },
                    ),
                )
            })
            .collect();
        let mut report = SweepReport {
            now,
            dry_run,
            entries: total,
            agents: Vec::new(),
        };
        let mut names: Option<HashMap<i64, (String, String)>> = None;
        let mut entries: Vec<SweepEntry> = Vec::with_capacity(64);
        let mut start = 0;
        while start < rows.len() {
            let agent_id = rows[start].0;
            entries.clear();
            let mut end = start;
            while end < rows.len() && rows[end].0 == agent_id {
                let (_, tool_id, promoted_at, last_used_at, tokens) = rows[end];
                entries.push(SweepEntry {
                    tool_id,
                    promoted_at,
                    last_used_at,
                    tokens,
                });
                end += 1;
            }
            start = end;
            let Some((agent, rule)) = rules.get(&agent_id) else {
                continue;
            };
            let plan = plan_agent(*rule, &entries, now);
            if plan.is_empty() {
                continue;
            }
            if names.is_none() {
                let all = q::select_tool_names_all(self.pool()).await?;
                names = Some(all.into_iter().map(|(id, v, n)| (id, (v, n))).collect());
            }
            let names = names.as_ref().expect("loaded above");
            let demoted = plan
                .iter()
                .map(|d| {
                    let (vendor, name) = names.get(&d.entry.tool_id).cloned().unwrap_or_default();
                    SweptTool {
                        tool_id: d.entry.tool_id,
                        vendor,
                        name,
                        cause: d.cause,
                        promoted_at: d.entry.promoted_at,
                        last_used_at: d.entry.last_used_at,
                    }
                })
                .collect();
            report.agents.push(AgentSweep {
                agent_id,
                agent: agent.clone(),
                cap: rule.cap,
                token_budget: rule.token_budget,
                idle_window_days: rule.idle_window_days,
                before: entries.len(),
                demoted,
            });
        }
        if dry_run {
            return Ok(report);
        }
        // write: each planned demotion re-checked against its row, in batches
        let mut done: std::collections::HashSet<(i64, i64)> = std::collections::HashSet::new();
        let mut batch: Vec<q::PlannedRow> = Vec::new();
        let mut causes: HashMap<(i64, i64), Cause> = HashMap::new();
        let mut pending = report.agents.iter().peekable();
        while pending.peek().is_some() {
            batch.clear();
            while let Some(a) = pending.peek() {
                if !batch.is_empty() && batch.len() + a.demoted.len() > q::PLANNED_PER_STATEMENT {
                    break;
                }
                for d in &a.demoted {
                    batch.push((
                        a.agent_id,
                        d.tool_id,
                        d.promoted_at,
                        d.last_used_at.unwrap_or(-1),
                    ));
                    causes.insert((a.agent_id, d.tool_id), d.cause);
                }
                pending.next();
            }
            let mut tx = self.write_tx().await?;
            let deleted = q::delete_entries_as_planned(&mut tx, &batch).await?;
            let rows: Vec<(i64, i64, Cause)> =
                deleted.iter().map(|k| (k.0, k.1, causes[k])).collect();
            q::insert_demotions(&mut tx, &rows, &Actor::Rule.label(), written_at).await?;
            for cause in [Cause::Idle, Cause::Cap, Cause::Budget] {
                let n = rows.iter().filter(|r| r.2 == cause).count() as u64;
                tx.record(HistoryAction::Demote, cause, n);
            }
            tx.commit().await?;
            let mut agents: Vec<i64> = deleted.iter().map(|k| k.0).collect();
            agents.sort_unstable();
            agents.dedup();
            self.changed(&agents).await;
            done.extend(deleted);
        }
        for a in report.agents.iter_mut() {
            let id = a.agent_id;
            a.demoted.retain(|d| done.contains(&(id, d.tool_id)));
        }
        report.agents.retain(|a| !a.demoted.is_empty());
        Ok(report)
    }
}

impl Graft {
    /// What the newest sweep that demoted anything demoted, all at one time; empty when
    /// no sweep has demoted anything.
    pub async fn last_sweep(&self) -> ServiceResult<Vec<db::sweep::SweptRow>> {
        Ok(db::sweep::select_last_sweep(&self.inner.pool).await?)
    }
}
