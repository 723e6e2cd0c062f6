//! Approvals of write tools (SPEC §4.4): the rule applied to a tool, deciding, listing.

use super::run_answer::RunAnswer;
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, ApprovalRow, ToolRow};
use crate::domain::approval::{clean_reason, needs_approval, writes, ApprovalState, Authorship};
use crate::domain::audit::AuditAction;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Decisions a listing shows per approval, newest first (issue 28.6): an
/// [`ApprovalView`]'s `decisions` holds one more when older ones exist.
pub const DECISIONS_SHOWN: usize = db::DECISIONS_SHOWN;

/// Which approvals a listing shows (issue 28.6; the Approvals page's filters and
/// `graft approval list`): each field, when set, must match exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalFilter {
    /// The agent's name.
    pub agent: Option<String>,
    /// The vendor's slug.
    pub vendor: Option<String>,
    /// The approval's state.
    pub state: Option<ApprovalState>,
}

impl ApprovalFilter {
    /// Whether `row` passes every condition set.
    pub fn admits(&self, row: &ApprovalRow) -> bool {
        self.agent.as_ref().is_none_or(|a| *a == row.agent)
            && self.vendor.as_ref().is_none_or(|v| *v == row.vendor)
            && self.state.is_none_or(|s| s == row.state)
    }
}

/// How a person decides one approval ([`Graft::decide_approval_seen`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct DecideHow<'a> {
    /// Grant (true) or deny.
    pub grant: bool,
    /// The tool version the person was shown, when known: a grant of an older one is
    /// refused.
    pub seen: Option<i64>,
    /// A denial's reason for the agent (issue 28.6).
    pub reason: Option<&'a str>,
}

/// The name of the person deciding, or `Invalid` when the actor is not a person: only
/// people decide approvals, an agent's own client never can (SPEC §4.4).
fn decider(actor: &Actor) -> ServiceResult<&str> {
    match actor {
        Actor::Person(person) => Ok(person),
        _ => Err(ServiceError::Invalid(
            "only a person can decide an approval".into(),
        )),
    }
}

/// Whether a call of `tool` (its newest version) waits for a person first: the rule of
/// SPEC §4.4 ([`needs_approval`]) read from the tool's row.
pub fn gated(tool: &ToolRow) -> bool {
    needs_approval(
        &tool.method,
        tool.read_only_hint,
        &Authorship {
            first_author: &tool.first_author,
            authored_by: &tool.authored_by,
            version: tool.version,
            from_document: tool.operation_id.is_some(),
            read_only_by: tool.read_only_by.as_deref(),
        },
    )
}

impl Graft {
    /// The approval rule of SPEC §4.4 for a call of `tool` (span `approval check` when it is
    /// gated: a write, or a tool or version an agent authored): `None` when this agent may
    /// run this version; else the answer
    /// (`approval_denied`, or `approval_required` with the pending approval written and a
    /// link for the person).
    pub(super) async fn approval_check(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        qualified: &str,
        method: &str,
    ) -> ServiceResult<Option<RunAnswer>> {
        if !gated(tool) {
            return Ok(None);
        }
        let span = crate::trace_span!("approval check");
        let decide = self.approval_decision(agent_id, tool, qualified, method);
        let decided = tracing::Instrument::instrument(decide, span.clone()).await;
        // what it decided: `granted` (the call goes on), or the answer's code
        if let Ok(answer) = &decided {
            let decision = match answer {
                None => "granted",
                Some(a) => a.code().unwrap_or("granted"),
            };
            crate::telemetry::set(&span, "graft.approval.decision", decision);
        }
        decided
    }

    /// [`Graft::approval_check`] of a gated tool.
    async fn approval_decision(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        qualified: &str,
        method: &str,
    ) -> ServiceResult<Option<RunAnswer>> {
        let mut approval = db::select_approval(self.pool(), agent_id, tool.id).await?;
        // a new request (none before, or a grant of an older version), made by this call
        // and not by one racing it: people are told
        let mut asked_anew = false;
        let mut raced = false;
        // a grant stands for the version it was given on (a new version that changes
        // nothing carries it forward); one for another version raced a publish
        if let Some(a) = approval.as_mut().filter(|a| {
            a.state == ApprovalState::Granted && a.version.is_some_and(|v| v != tool.version)
        }) {
            let why = format!(
                "the approval was given for version {}",
                a.version.unwrap_or_default()
            );
            asked_anew = db::repend_approval(
                self.pool(),
                agent_id,
                tool.id,
                tool.version,
                &why,
                self.now(),
            )
            .await?;
            a.state = ApprovalState::Pending;
            a.changed = Some(why);
            raced = !asked_anew;
        }
        if raced {
            // another call or a person changed the row first: it says what holds now
            approval = db::select_approval(self.pool(), agent_id, tool.id).await?;
        }
        match approval.as_ref().map(|a| a.state) {
            Some(ApprovalState::Granted) => {}
            Some(ApprovalState::Denied) => {
                // the person's reason reaches the agent, which can relay it (issue 28.6)
                let reason = approval.as_ref().and_then(|a| a.reason.clone());
                let mut details = json!({"tool": qualified});
                let why = match &reason {
                    Some(r) => {
                        details["reason"] = Value::String(r.clone());
                        format!(", saying: {r}")
                    }
                    None => String::new(),
                };
                return Ok(Some(RunAnswer::err(
                    "approval_denied",
                    format!("a person denied this agent the use of {qualified}{why}"),
                    details,
                )));
            }
            _ => {
                let made = db::insert_pending_approval(
                    self.pool(),
                    agent_id,
                    tool.id,
                    tool.version,
                    self.now(),
                )
                .await?;
                // of calls racing for the same request, the one that made it tells people
                asked_anew |= made;
                let agent = self.agent(agent_id).await?;
                let url = format!(
                    "{}/approvals?agent={}&tool={qualified}",
                    self.inner.public_url, agent.name
                );
                let why = if writes(method, tool.read_only_hint) {
                    format!("which changes data at {}", tool.vendor)
                } else {
                    "which an agent wrote".to_string()
                };
                let changed = approval
                    .as_ref()
                    .and_then(|a| a.changed.as_deref())
                    .map(|c| {
                        format!(
                            " Version {} is new since the last decision: {c}.",
                            tool.version
                        )
                    })
                    .unwrap_or_default();
                let tell = format!(
                    "Graft needs a person's approval before {} can run {qualified} version {} ({method} {}), {why}.{changed} Please approve it at {url} (or run: graft approve {} {qualified}), then tell me to try again.",
                    agent.name, tool.version, tool.path_template, agent.name
                );
                let mut details = json!({"approvalUrl": url, "tellUser": tell, "tool": qualified, "version": tool.version});
                if let Some(c) = approval.as_ref().and_then(|a| a.changed.clone()) {
                    details["changed"] = Value::String(c);
                }
                if asked_anew {
                    self.console_changed(super::live::APPROVALS).await;
                    self.notify(crate::domain::notify::Notice::ApprovalRequested {
                        agent: agent.name.clone(),
                        tool: qualified.to_string(),
                        version: tool.version,
                        url: url.clone(),
                    })
                    .await;
                }
                let lead = if writes(method, tool.read_only_hint) {
                    format!("{qualified} writes, and its first use needs a person's approval")
                } else {
                    format!("{qualified} version {} was written by an agent, and its first use needs a person's approval", tool.version)
                };
                return Ok(Some(RunAnswer::err(
                    "approval_required",
                    format!("{lead}; nothing was sent.{changed} Tell your user: {tell}"),
                    details,
                )));
            }
        }
        Ok(None)
    }

    /// Every approval, pending first.
    pub async fn approvals(&self) -> ServiceResult<Vec<ApprovalRow>> {
        self.approvals_where(&ApprovalFilter::default()).await
    }

    /// The approvals `filter` lets through, pending first, then newest; each with its
    /// latest decisions ([`ApprovalRow::decisions`], newest first).
    pub async fn approvals_where(
        &self,
        filter: &ApprovalFilter,
    ) -> ServiceResult<Vec<ApprovalRow>> {
        let mut rows: Vec<ApprovalRow> = db::select_approvals(self.pool())
            .await?
            .into_iter()
            .filter(|a| filter.admits(a))
            .collect();
        if rows.is_empty() {
            return Ok(rows);
        }
        let mut by_pair: HashMap<(i64, i64), Vec<db::DecisionRow>> = HashMap::new();
        for d in db::select_decisions(self.pool()).await? {
            by_pair.entry((d.agent_id, d.tool_id)).or_default().push(d);
        }
        for row in &mut rows {
            row.decisions = by_pair
                .remove(&(row.agent_id, row.tool_id))
                .unwrap_or_default();
        }
        Ok(rows)
    }

    /// Whether `agent` holds a granted approval of `vendor__name`: refusing it now takes
    /// back a grant, which refuses the agent's calls (the console asks to confirm).
    /// Errors: `AgentNotFound`, `ToolNotFound`.
    pub async fn approval_granted(
        &self,
        agent: &str,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<bool> {
        let a = self.agent_by_name(agent).await?;
        let t = self.tool(vendor, name).await?;
        Ok(db::select_approval(self.pool(), a.id, t.id)
            .await?
            .is_some_and(|a| a.state == ApprovalState::Granted))
    }

    /// A person's decision on one agent's use of one write tool (SPEC §4.4): `granted`
    /// or `denied`. Only people decide; an agent's own client never can.
    /// Errors: `AgentNotFound`, `ToolNotFound`, `Invalid` (an agent as the actor).
    pub async fn decide_approval(
        &self,
        actor: &Actor,
        agent: &str,
        vendor: &str,
        name: &str,
        grant: bool,
    ) -> ServiceResult<ApprovalRow> {
        let how = DecideHow {
            grant,
            ..DecideHow::default()
        };
        self.decide_approval_seen(actor, agent, vendor, name, &how)
            .await
    }

    /// [`Graft::decide_approval`] on the tool version the person was shown (`how.seen`,
    /// the version the console's row named): a grant is refused with `Conflict` when a
    /// newer version exists, so nobody approves a definition they did not see (issue
    /// 12.15); a denial keeps `how.reason` ([`clean_reason`]), which the agent's next
    /// call receives (issue 28.6). Every decision is logged with the person's name.
    /// Errors: `AgentNotFound`, `ToolNotFound`, `Invalid` (an agent as the actor, a
    /// removed agent or vendor, a reason with a grant, a reason too long), `Conflict`.
    pub async fn decide_approval_seen(
        &self,
        actor: &Actor,
        agent: &str,
        vendor: &str,
        name: &str,
        how: &DecideHow<'_>,
    ) -> ServiceResult<ApprovalRow> {
        let DecideHow {
            grant,
            seen,
            reason,
        } = *how;
        let person = decider(actor)?;
        let reason = match reason.map(clean_reason).transpose() {
            Ok(r) => r.flatten(),
            Err(e) => return Err(ServiceError::Invalid(e)),
        };
        if grant && reason.is_some() {
            return Err(ServiceError::Invalid(
                "a reason goes with a denial: an approval takes none".into(),
            ));
        }
        let a = self.agent_by_name(agent).await?;
        super::alive(&a)?;
        let t = self.tool(vendor, name).await?;
        if t.vendor_removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {vendor} was removed: its tools' approvals cannot be decided until it is brought back (Restore on its page, graft vendor restore, or importing its document again)"
            )));
        }
        if let Some(v) = seen.filter(|v| *v != t.version && grant) {
            return Err(ServiceError::Conflict(format!(
                "{vendor}__{name} is at version {} now, not version {v} that you were shown: look at it again before approving",
                t.version
            )));
        }
        let state = if grant {
            ApprovalState::Granted
        } else {
            ApprovalState::Denied
        };
        let by = format!("person:{person}");
        let decision = db::Decision {
            agent_id: a.id,
            tool_id: t.id,
            version: t.version,
            state,
            by: &by,
            reason: reason.as_deref(),
            at: self.now(),
        };
        db::decide_approval(self.pool(), &decision).await?;
        self.console_changed(super::live::APPROVALS).await;
        tracing::info!(agent = %a.name, tool = %format!("{vendor}__{name}"), version = t.version,
            decision = state.as_str(), by = %person, "approval decided");
        let detail = match &reason {
            Some(r) => format!("version {}, saying: {r}", t.version),
            None => format!("version {}", t.version),
        };
        let action = if grant {
            AuditAction::ApprovalGrant
        } else {
            AuditAction::ApprovalDeny
        };
        self.audit(
            actor,
            action,
            &format!("{} → {vendor}__{name}", a.name),
            Some(&detail),
        )
        .await?;
        db::select_approval(self.pool(), a.id, t.id)
            .await?
            .ok_or_else(|| {
                ServiceError::Invalid(format!(
                    "the approval of {vendor}__{name} for {agent} is gone"
                ))
            })
    }

    /// Grants every approval of `vendor__name` that waits for version `seen` (issue
    /// 28.6: "approve all pending for this tool"), in one write transaction, each logged
    /// as the person's decision (a removed agent's are not listed, so not granted). Returns
    /// the names of the agents granted (none when nothing waited). Errors:
    /// `ToolNotFound`, `Invalid` (an agent as the actor, a removed vendor), `Conflict`
    /// (the tool is at another version than `seen`: look again first).
    pub async fn grant_pending_approvals(
        &self,
        actor: &Actor,
        vendor: &str,
        name: &str,
        seen: i64,
    ) -> ServiceResult<Vec<String>> {
        let person = decider(actor)?;
        let t = self.tool(vendor, name).await?;
        if t.vendor_removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {vendor} was removed: its tools' approvals cannot be decided until it is brought back (Restore on its page, graft vendor restore, or importing its document again)"
            )));
        }
        if t.version != seen {
            return Err(ServiceError::Conflict(format!(
                "{vendor}__{name} is at version {} now, not version {seen} that you were shown: look at it again before approving",
                t.version
            )));
        }
        let granted = db::grant_pending(
            self.pool(),
            t.id,
            seen,
            &format!("person:{person}"),
            self.now(),
        )
        .await?;
        let names: Vec<String> = granted.into_iter().map(|(_, n)| n).collect();
        if !names.is_empty() {
            self.console_changed(super::live::APPROVALS).await;
        }
        tracing::info!(tool = %format!("{vendor}__{name}"), version = seen, agents = names.len(),
            by = %person, "pending approvals granted");
        if !names.is_empty() {
            self.audit(
                actor,
                AuditAction::ApprovalGrant,
                &format!("{} → {vendor}__{name}", names.join(", ")),
                Some(&format!("version {seen}, every agent waiting")),
            )
            .await?;
        }
        Ok(names)
    }

    /// Approvals waiting for a person's decision (the console's nav shows the count).
    pub async fn pending_approvals(&self) -> ServiceResult<i64> {
        Ok(db::count_pending_approvals(self.pool()).await?)
    }
}
