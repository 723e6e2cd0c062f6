//! Working sets (SPEC §3): promote, demote, history, and the tools an agent may call.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, EntryRow};
use crate::domain::audit::AuditAction;
use crate::domain::sweep::{plan_agent, AgentRule, SweepEntry};
use crate::domain::{Cause, HistoryAction, PromotedBy};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;

impl Graft {
    /// Whether a tool is in an agent's working set (from memory while nothing changed).
    pub async fn is_promoted(&self, agent_id: i64, tool_id: i64) -> ServiceResult<bool> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        let set = match hot.set(agent_id, epoch) {
            Some(s) => s,
            None => {
                let ids: HashSet<i64> = db::select_working_set_ids(&self.inner.pool, agent_id)
                    .await?
                    .into_iter()
                    .collect();
                let s = Arc::new(ids);
                hot.put_set(agent_id, epoch, s.clone());
                s
            }
        };
        Ok(set.contains(&tool_id))
    }

    /// The cache epoch: it changes whenever anything a call or a tool list reads
    /// changed (here, or in another process within a second); adapters key their own
    /// caches by it.
    pub fn cache_epoch(&self) -> u64 {
        self.inner.hot.epoch()
    }

    /// An agent's working set as `(tool id, current version)`, in `tools/list` order
    /// (vendor, name): a light read (no definitions).
    pub async fn working_set_versions(&self, agent_id: i64) -> ServiceResult<Vec<(i64, i64)>> {
        Ok(db::select_working_set_versions(&self.inner.pool, agent_id).await?)
    }

    /// The agent's working set, stable order (vendor, name), with each tool's current
    /// version.
    pub async fn working_set(&self, agent_id: i64) -> ServiceResult<Vec<EntryRow>> {
        Ok(db::select_working_set(&self.inner.pool, agent_id).await?)
    }

    /// Puts a tool in an agent's working set (SPEC §3.4 `promote`): working_set and
    /// history in one transaction, then one list_changed. Promoting a promoted tool is a
    /// no-op answering the size. Never fails on the cap (the sweep applies it).
    /// Errors: `ToolNotFound`, `AgentNotFound`.
    pub async fn promote_tool(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<SetSize> {
        self.spend_change(actor)?;
        let (by, cause) = match actor {
            Actor::Agent(_) => (PromotedBy::Agent, Cause::Agent),
            Actor::Person(_) => (PromotedBy::Console, Cause::Console),
            Actor::Rule => (PromotedBy::Rule, Cause::Rule),
        };
        let size = self
            .promote_as(actor, agent_id, vendor, name, by, cause)
            .await?;
        if let Actor::Person(_) = actor {
            let agent = self.agent(agent_id).await?;
            self.audit(
                actor,
                AuditAction::ToolPromote,
                &format!("{} → {vendor}__{name}", agent.name),
                None,
            )
            .await?;
        }
        Ok(size)
    }

    pub(crate) async fn promote_as(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
        by: PromotedBy,
        cause: Cause,
    ) -> ServiceResult<SetSize> {
        let agent = self.agent(agent_id).await?;
        super::alive(&agent)?;
        let tool = self.tool(vendor, name).await?;
        super::tools::usable(&tool)?;
        let mut tx = self.write_tx().await?;
        // the time is read once the write lock is held, so history's order by time is
        // the order the changes committed in
        let now = self.now();
        if !db::lock_live_agent(&mut tx, agent_id).await? {
            return Err(super::removed_agent(&agent.name));
        }
        let changed = promote_in(&mut tx, agent_id, tool.id, by, cause, actor, now).await?;
        let size = db::count_working_set(&mut tx, agent_id).await?;
        let tokens = db::working_set_tokens(&mut tx, agent_id).await?;
        tx.commit().await?;
        if changed {
            self.changed(&[agent_id]).await;
        }
        if let Actor::Agent(a) = actor {
            self.learn_from_pick(*a, &tool).await;
        }
        // past the budget the promotion stands (it is harmless); the answer says what the
        // next sweep would take back (issue 29.2)
        self.set_size(&agent, size, tokens, now, changed).await
    }

    /// Takes a tool out of an agent's working set (SPEC §3.4 `demote`): working_set and
    /// history in one transaction, then one list_changed.
    /// Errors: `ToolNotFound`, `NotPromoted`, `AgentNotFound`.
    pub async fn demote_tool(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<SetSize> {
        self.spend_change(actor)?;
        let cause = match actor {
            Actor::Agent(_) => Cause::Agent,
            Actor::Person(_) => Cause::Console,
            Actor::Rule => Cause::Rule,
        };
        let agent = self.agent(agent_id).await?;
        super::alive(&agent)?;
        let tool = self.tool(vendor, name).await?;
        let mut tx = self.write_tx().await?;
        let now = self.now();
        if demote_in(&mut tx, &[(agent_id, tool.id)], cause, actor, now).await? == 0 {
            return Err(ServiceError::NotPromoted(format!(
                "{vendor}__{name} is not in the working set"
            )));
        }
        let size = db::count_working_set(&mut tx, agent_id).await?;
        let tokens = db::working_set_tokens(&mut tx, agent_id).await?;
        tx.commit().await?;
        self.changed(&[agent_id]).await;
        if let Actor::Agent(a) = actor {
            self.unlearn_pick(*a, tool.id).await;
        }
        self.audit(
            actor,
            AuditAction::ToolDemote,
            &format!("{} → {vendor}__{name}", agent.name),
            None,
        )
        .await?;
        self.set_size(&agent, size, tokens, now, true).await
    }

    /// What a promotion or a demotion answers: the set's `size` and `tokens` after it,
    /// the agent's cap, budget and harness, and what the next sweep would demote.
    async fn set_size(
        &self,
        agent: &db::AgentRow,
        size: i64,
        tokens: i64,
        now: i64,
        changed: bool,
    ) -> ServiceResult<SetSize> {
        let would_demote = self.over_limits(agent, size, tokens, now).await?;
        Ok(SetSize {
            size,
            cap: agent.cap,
            tokens,
            token_budget: agent.token_budget,
            would_demote,
            harness: agent.harness.clone(),
            changed,
        })
    }

    /// A set of `size` entries costing `tokens` over the agent's cap or token budget:
    /// what the next sweep would demote for them (`vendor__name`, in its order); else
    /// empty, without reading the set.
    async fn over_limits(
        &self,
        agent: &db::AgentRow,
        size: i64,
        tokens: i64,
        now: i64,
    ) -> ServiceResult<Vec<String>> {
        if size <= agent.cap && agent.token_budget.is_none_or(|b| tokens <= b) {
            return Ok(Vec::new());
        }
        let view = self.working_set_view(agent.id).await?;
        Ok(Self::sweep_preview(agent, &view, now)
            .into_iter()
            .filter(|(_, c)| matches!(c, Cause::Cap | Cause::Budget))
            .map(|(t, _)| t)
            .collect())
    }

    /// An agent's history, newest first.
    pub async fn history(
        &self,
        agent_id: i64,
        limit: i64,
        offset: i64,
    ) -> ServiceResult<Vec<db::HistoryRow>> {
        Ok(db::select_history(&self.inner.pool, agent_id, limit, offset).await?)
    }

    /// An agent's working set with each entry's last use and calls (SPEC §6).
    pub async fn working_set_view(&self, agent_id: i64) -> ServiceResult<Vec<EntryView>> {
        let entries = self.working_set(agent_id).await?;
        let usage: std::collections::HashMap<i64, (i64, i64)> =
            db::select_agent_usage(self.pool(), agent_id)
                .await?
                .into_iter()
                .map(|(tool, at, calls)| (tool, (at, calls)))
                .collect();
        Ok(entries
            .into_iter()
            .map(|entry| {
                let u = usage.get(&entry.tool.id);
                EntryView {
                    last_used_at: u.map(|u| u.0),
                    calls: u.map(|u| u.1).unwrap_or(0),
                    entry,
                }
            })
            .collect())
    }

    /// What the next sweep would demote for `agent` as of `now` (ms), given its working
    /// set as [`Graft::working_set_view`] reads it: `(vendor__name, Idle, Cap or Budget)`
    /// pairs, idle first (SPEC §5; the same plan the sweep runs).
    pub fn sweep_preview(
        agent: &db::AgentRow,
        view: &[EntryView],
        now: i64,
    ) -> Vec<(String, Cause)> {
        let entries: Vec<SweepEntry> = view
            .iter()
            .map(|e| SweepEntry {
                tool_id: e.entry.tool.id,
                promoted_at: e.entry.promoted_at,
                last_used_at: e.last_used_at,
                tokens: e.entry.tool.tokens.unwrap_or(0),
            })
            .collect();
        let rule = AgentRule {
            cap: agent.cap,
            idle_window_days: agent.idle_window_days,
            token_budget: agent.token_budget,
        };
        plan_agent(rule, &entries, now)
            .iter()
            .filter_map(|d| {
                view.iter()
                    .find(|e| e.entry.tool.id == d.entry.tool_id)
                    .map(|e| {
                        (
                            format!("{}__{}", e.entry.tool.vendor, e.entry.tool.name),
                            d.cause,
                        )
                    })
            })
            .collect()
    }

    /// Number of history rows of an agent (for paging).
    pub async fn history_count(&self, agent_id: i64) -> ServiceResult<i64> {
        Ok(db::count_history(self.pool(), agent_id).await?)
    }

    /// The working-set size after each promotion and demotion, `(at ms, size)`, oldest
    /// first, from history (SPEC §2: history is never rewritten).
    pub async fn size_over_time(&self, agent_id: i64) -> ServiceResult<Vec<(i64, i64)>> {
        let steps = db::select_history_steps(self.pool(), agent_id).await?;
        let mut size = 0i64;
        Ok(steps
            .into_iter()
            .map(|(at, d)| {
                size = (size + d).max(0);
                (at, size)
            })
            .collect())
    }
}

/// A working set's size against its cap: the answer of `promote` and `demote`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetSize {
    /// Entries now.
    pub size: i64,
    /// The agent's cap.
    pub cap: i64,
    /// What the set's served definitions cost, in tokens (issue 29.1).
    pub tokens: i64,
    /// The agent's token budget, if any (issue 29.2).
    pub token_budget: Option<i64>,
    /// Over the cap or the budget: the tools (`vendor__name`) the next sweep would demote
    /// for them, in the order it would; else empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub would_demote: Vec<String>,
    /// The agent's harness (its client's limits, issue 29.3).
    #[serde(skip)]
    pub harness: Option<String>,
    /// Whether the call changed the set (false for a no-op promotion).
    #[serde(skip)]
    pub changed: bool,
}

/// In a transaction: puts a tool in an agent's working set unless it is there, with its
/// history row (SPEC §2: together or not at all). Returns whether the set changed.
pub(crate) async fn promote_in(
    conn: &mut super::WriteTx,
    agent_id: i64,
    tool_id: i64,
    by: PromotedBy,
    cause: Cause,
    actor: &Actor,
    now: i64,
) -> Result<bool, db::DbError> {
    let changed = db::insert_working_set_entry(conn, agent_id, tool_id, by, now).await?;
    if changed {
        db::insert_history(
            conn,
            agent_id,
            tool_id,
            HistoryAction::Promote,
            cause,
            &actor.label(),
            now,
        )
        .await?;
        conn.record(HistoryAction::Promote, cause, 1);
    }
    Ok(changed)
}

/// In a transaction: takes each `(agent, tool)` entry out of its working set with its
/// history row (`demote`, `cause`, by `actor`): the twin of [`promote_in`] for demotions
/// a change of the toolbox causes (a revoked connection, a retired tool, a disabled
/// vendor). Returns how many entries it took out.
pub(crate) async fn demote_in(
    conn: &mut super::WriteTx,
    entries: &[(i64, i64)],
    cause: Cause,
    actor: &Actor,
    now: i64,
) -> Result<u64, db::DbError> {
    let mut demoted = 0;
    for (agent_id, tool_id) in entries {
        // an entry another writer took out meanwhile gets no second history row
        if !db::delete_working_set_entry(conn, *agent_id, *tool_id).await? {
            continue;
        }
        demoted += 1;
        db::insert_history(
            conn,
            *agent_id,
            *tool_id,
            HistoryAction::Demote,
            cause,
            &actor.label(),
            now,
        )
        .await?;
    }
    conn.record(HistoryAction::Demote, cause, demoted);
    Ok(demoted)
}

/// One working-set entry as the console shows it (SPEC §6 Agent page).
#[derive(Debug, Clone)]
pub struct EntryView {
    /// The entry with its tool's current version.
    pub entry: db::EntryRow,
    /// Last call by this agent (ms), if any.
    pub last_used_at: Option<i64>,
    /// Calls by this agent.
    pub calls: i64,
}
