//! Agents (SPEC §2): adding, listing, authenticating by token.

use super::{hash_token, new_token, unique_or};
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, AgentRow};
use crate::domain::audit::AuditAction;
use crate::domain::{self};
use serde::Serialize;
use std::collections::HashMap;

impl Graft {
    /// Ends every OAuth grant of an agent (its token rotated, or it was removed).
    pub(super) async fn revoke_agent_oauth(&self, agent_id: i64) -> ServiceResult<u64> {
        let mut tx = self.write_tx().await?;
        let n = db::revoke_agent_grants(&mut tx, agent_id, self.now()).await?;
        tx.commit().await?;
        Ok(n)
    }

    /// Creates an agent; returns it and its token, which is shown once and stored only
    /// as a hash. Errors: invalid name/cap/window, or the name is taken (`Conflict`).
    pub async fn add_agent(
        &self,
        name: &str,
        harness: Option<&str>,
        cap: Option<i64>,
        idle_window_days: Option<i64>,
    ) -> ServiceResult<(AgentRow, String)> {
        let name = domain::check_agent_name(name).map_err(ServiceError::Invalid)?;
        let cap =
            domain::check_cap(cap.unwrap_or(domain::DEFAULT_CAP)).map_err(ServiceError::Invalid)?;
        let window =
            domain::check_idle_window(idle_window_days.unwrap_or(domain::DEFAULT_IDLE_WINDOW_DAYS))
                .map_err(ServiceError::Invalid)?;
        let harness = harness.map(str::trim).filter(|h| !h.is_empty());
        if let Some(h) = harness {
            if h.chars().count() > 40 || h.chars().any(char::is_control) {
                return Err(ServiceError::Invalid(
                    "a harness label is at most 40 characters, without control characters".into(),
                ));
            }
        }
        let token = new_token();
        let id = db::insert_agent(
            &self.inner.pool,
            &name,
            harness,
            &hash_token(&token),
            cap,
            window,
            self.now(),
        )
        .await
        .map_err(|e| {
            unique_or(e, ServiceError::Conflict, || {
                format!("an agent named {name:?} exists already (a removed agent keeps its name with its history)")
            })
        })?;
        let agent = db::select_agent(&self.inner.pool, id)
            .await?
            .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("agent vanished")))?;
        self.state_changed().await;
        Ok((agent, token))
    }

    /// Every agent with its working-set size, by name.
    pub async fn list_agents(&self) -> ServiceResult<Vec<AgentSummary>> {
        let agents = db::select_agents(&self.inner.pool).await?;
        // two queries for any number of agents (the console lists them all)
        let sizes: HashMap<i64, (i64, i64)> = db::select_working_set_sizes(&self.inner.pool)
            .await?
            .into_iter()
            .map(|(agent, size, tokens)| (agent, (size, tokens)))
            .collect();
        Ok(agents
            .into_iter()
            .map(|a| {
                let (size, tokens) = sizes.get(&a.id).copied().unwrap_or_default();
                AgentSummary::new(a, size, tokens)
            })
            .collect())
    }

    /// The agent a bearer token belongs to, or `None`. Records `last_seen_at` (at most
    /// once a minute per agent).
    pub async fn authenticate(&self, token: &str) -> ServiceResult<Option<AgentRow>> {
        let hash = hash_token(token);
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        let agent = match hot.agent(&hash, epoch) {
            Some(a) => a,
            None => {
                let a = db::select_agent_by_token_hash(&self.inner.pool, &hash).await?;
                hot.put_agent(hash, epoch, a.clone());
                a
            }
        };
        // a disabled or removed agent's token is refused like an unknown one (issue 28.1)
        let Some(agent) = agent.filter(|a| a.disabled_at.is_none() && a.removed_at.is_none())
        else {
            return Ok(None);
        };
        let now = self.now();
        if hot.seen_due(&agent, now, LAST_SEEN_RESOLUTION_MS) {
            db::update_agent_last_seen(&self.inner.pool, agent.id, now).await?;
        }
        Ok(Some(agent))
    }

    /// Sets the harness a person says an agent runs in (`None`: not said; the next
    /// client to initialize names it). Its client's limits follow (issue 29.3).
    /// Errors: `AgentNotFound`, `Invalid` (empty or over 64 characters).
    pub async fn set_agent_harness(
        &self,
        name: &str,
        harness: Option<&str>,
    ) -> ServiceResult<db::AgentRow> {
        let a = self.agent_by_name(name).await?;
        super::alive(&a)?;
        let harness = harness.map(str::trim);
        if harness.is_some_and(|h| h.is_empty() || h.chars().count() > 64) {
            return Err(ServiceError::Invalid(
                "harness must be 1 to 64 characters (e.g. vscode, cursor, codex, claude-code)"
                    .into(),
            ));
        }
        db::update_agent_harness(self.pool(), a.id, harness).await?;
        self.state_changed().await;
        self.agent(a.id).await
    }

    /// Records the harness an agent's client named in `initialize` (`clientInfo.name`,
    /// read by [`crate::clients::harness_of_client`]) when a person chose none, so
    /// that its client's limits apply (issue 29.3). A harness already set stays.
    /// Errors: database faults.
    pub async fn note_client(&self, agent_id: i64, client_name: &str) -> ServiceResult<()> {
        let Some(h) = crate::clients::harness_of_client(client_name) else {
            return Ok(());
        };
        if db::update_agent_harness_if_unset(self.pool(), agent_id, h).await? {
            tracing::info!(
                agent_id,
                harness = h,
                client = client_name,
                "an agent's harness was read from its client"
            );
            self.state_changed().await;
        }
        Ok(())
    }

    /// Gives an agent a new token (shown once, stored as a hash); the old one stops
    /// working at its next request. Errors: `AgentNotFound`.
    pub async fn rotate_token(&self, agent_id: i64) -> ServiceResult<String> {
        super::alive(&self.agent(agent_id).await?)?;
        let token = new_token();
        if !db::update_agent_token(self.pool(), agent_id, &hash_token(&token)).await? {
            return Err(ServiceError::AgentNotFound(format!(
                "no agent with id {agent_id}"
            )));
        }
        // its OAuth clients' tokens end with the old token (issue 26.4)
        let revoked = self.revoke_agent_oauth(agent_id).await?;
        self.state_changed().await;
        let ended = self.end_sessions(agent_id).await;
        tracing::info!(
            agent = agent_id,
            channels = ended,
            oauth_clients = revoked,
            "token rotated: the old token's streams end"
        );
        Ok(token)
    }

    /// Disables (`disabled`) or enables an agent (issue 28.1). A disabled agent's token
    /// is refused (401, as an unknown one) and its open sessions and streams end, here
    /// and in every other process; its working set, history, approvals and token are
    /// kept, so enabling it makes the same token work again. Returns the agent as it is
    /// now. Errors: `AgentNotFound`, `Invalid` (an agent as the actor).
    pub async fn set_agent_disabled(
        &self,
        actor: &Actor,
        name: &str,
        disabled: bool,
    ) -> ServiceResult<AgentRow> {
        if matches!(actor, Actor::Agent(_)) {
            return Err(ServiceError::Invalid(
                "only a person can disable or enable an agent".into(),
            ));
        }
        let a = self.agent_by_name(name).await?;
        super::alive(&a)?;
        if a.disabled_at.is_some() != disabled {
            let at = disabled.then(|| self.now());
            db::update_agent_disabled(self.pool(), a.id, at).await?;
            self.state_changed().await;
            // a disabled agent's picks stop teaching search (issue 24.3)
            self.forget_learned();
            if disabled {
                let ended = self.end_sessions(a.id).await;
                tracing::info!(agent = a.id, channels = ended, actor = %actor.label(), "agent disabled: its streams end");
            } else {
                tracing::info!(agent = a.id, actor = %actor.label(), "agent enabled");
            }
            let action = if disabled {
                AuditAction::AgentDisable
            } else {
                AuditAction::AgentEnable
            };
            self.audit(actor, action, &a.name, None).await?;
        }
        self.agent(a.id).await
    }

    /// Removes an agent (issue 28.1): its token and sessions end (here at once, in every
    /// other process within about a second), its working set is demoted with cause
    /// `agent_removed` (one list_changed), its own starter tools, pending approvals and
    /// what its searches taught go; its history stays under the row, which keeps its
    /// name (no new agent can take it, so a page or link left open never acts on
    /// another agent). Only people. Returns the removed row.
    /// Errors: `AgentNotFound`, `Forbidden` (an agent as the actor), `Invalid` (removed
    /// already).
    pub async fn remove_agent(&self, actor: &Actor, name: &str) -> ServiceResult<AgentRow> {
        if matches!(actor, Actor::Agent(_)) {
            return Err(ServiceError::Forbidden(
                "only a person can remove an agent".into(),
            ));
        }
        let a = self.agent_by_name(name).await?;
        super::alive(&a)?;
        let mut tx = self.write_tx().await?;
        // read under the write lock: history's order by time is the commit order
        let now = self.now();
        // first: the row lock, so a concurrent promotion waits and is then refused
        if !db::update_agent_removed(&mut tx, a.id, &hash_token(&new_token()), now).await? {
            return Err(ServiceError::Invalid(format!(
                "agent {} was removed already",
                a.name
            )));
        }
        let entries: Vec<(i64, i64)> = db::select_working_set_ids_in(&mut tx, a.id)
            .await?
            .into_iter()
            .map(|t| (a.id, t))
            .collect();
        super::working_set::demote_in(
            &mut tx,
            &entries,
            crate::domain::Cause::AgentRemoved,
            actor,
            now,
        )
        .await?;
        crate::db::revoke_agent_grants(&mut tx, a.id, now).await?;
        tx.commit().await?;
        self.changed(&[a.id]).await;
        self.state_changed().await;
        self.forget_learned();
        let ended = self.end_sessions(a.id).await;
        tracing::info!(agent = a.id, name = %a.name, demoted = entries.len(), channels = ended, actor = %actor.label(), "agent removed");
        let detail = format!(
            "{} demoted",
            crate::numbers::count(entries.len() as i64, "tool")
        );
        self.audit(actor, AuditAction::AgentRemove, &a.name, Some(&detail))
            .await?;
        self.agent(a.id).await
    }

    /// Ends an agent's open sessions and listen streams here and tells every other
    /// process to end theirs (SPEC §3.1; security review 32.9): after a rotation or when
    /// the agent is disabled. Returns how many channels ended here.
    pub(super) async fn end_sessions(&self, agent_id: i64) -> usize {
        let ended = self.inner.hub.disconnect(agent_id);
        if let Err(e) = crate::db::insert_change_events(
            self.pool(),
            &[super::TOKEN_ROTATED - agent_id],
            self.origin(),
            self.clock_now(),
        )
        .await
        {
            tracing::warn!(error = ?e, "cannot tell other processes to end an agent's streams");
        }
        ended
    }

    /// Changes an agent's name, cap and idle window (each optional). The rule reads them
    /// at the next sweep; nothing else changes now.
    /// Errors: `AgentNotFound`, `Invalid` (cap 1..=500, window 1..=3650, name rules),
    /// `Conflict` (name taken).
    pub async fn set_agent(
        &self,
        name: &str,
        new_name: Option<&str>,
        cap: Option<i64>,
        window: Option<i64>,
    ) -> ServiceResult<db::AgentRow> {
        self.set_agent_settings(name, new_name, cap, window, None)
            .await
    }

    /// [`Graft::set_agent`] and the token budget (issue 29.2): `Some(Some(n))` sets it
    /// (1,000..=500,000 tokens), `Some(None)` clears it, `None` leaves it. Every value
    /// is checked before anything is written. Errors: as `set_agent`, and `Invalid` for a
    /// budget out of range.
    pub async fn set_agent_settings(
        &self,
        name: &str,
        new_name: Option<&str>,
        cap: Option<i64>,
        window: Option<i64>,
        token_budget: Option<Option<i64>>,
    ) -> ServiceResult<db::AgentRow> {
        let a = self.agent_by_name(name).await?;
        super::alive(&a)?;
        let new_name =
            domain::check_agent_name(new_name.unwrap_or(&a.name)).map_err(ServiceError::Invalid)?;
        let cap = domain::check_cap(cap.unwrap_or(a.cap)).map_err(ServiceError::Invalid)?;
        let window = domain::check_idle_window(window.unwrap_or(a.idle_window_days))
            .map_err(ServiceError::Invalid)?;
        let budget = match token_budget {
            None => a.token_budget,
            Some(None) => None,
            Some(Some(n)) => Some(domain::check_token_budget(n).map_err(ServiceError::Invalid)?),
        };
        db::update_agent_settings(self.pool(), a.id, &new_name, cap, window, budget)
            .await
            .map_err(|e| {
                unique_or(e, ServiceError::Conflict, || {
                    format!("an agent named {new_name:?} exists already")
                })
            })?;
        self.state_changed().await;
        self.agent(a.id).await
    }
}

/// The agent a request to `/mcp` authenticated as, by its bearer token (SPEC §3): the
/// transport puts it on the request, the MCP adapter reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthedAgent {
    /// Agent id.
    pub id: i64,
    /// Agent name.
    pub name: String,
}

/// An agent with its working-set size.
#[derive(Debug, Clone, Serialize)]
pub struct AgentSummary {
    pub id: i64,
    pub name: String,
    /// Harness label.
    pub harness: Option<String>,
    /// Working-set cap.
    pub cap: i64,
    /// Idle window, days.
    pub idle_window_days: i64,
    /// Tools in the working set now.
    pub size: i64,
    /// What they cost, in tokens of their served definitions (issue 29.1).
    pub tokens: i64,
    /// The agent's token budget, if any (issue 29.2).
    pub token_budget: Option<i64>,
    /// Last authenticated request (ms since the epoch).
    pub last_seen_at: Option<i64>,
    /// When a person disabled it (ms), if it is disabled.
    pub disabled_at: Option<i64>,
    /// When a person removed it (ms); it keeps its name, which no new agent can take.
    pub removed_at: Option<i64>,
}

impl AgentSummary {
    /// Agent `a` with `size` tools in its working set, costing `tokens`.
    pub fn new(a: AgentRow, size: i64, tokens: i64) -> Self {
        AgentSummary {
            size,
            tokens,
            token_budget: a.token_budget,
            id: a.id,
            name: a.name,
            harness: a.harness,
            cap: a.cap,
            idle_window_days: a.idle_window_days,
            last_seen_at: a.last_seen_at,
            disabled_at: a.disabled_at,
            removed_at: a.removed_at,
        }
    }
}

/// How often `last_seen_at` is written at most, per agent (ms).
pub(crate) const LAST_SEEN_RESOLUTION_MS: i64 = 60_000;
