//! Approvals of write tools (SPEC §4.4): the rule applied to a tool, deciding, listing.

use super::run::RunAnswer;
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, ApprovalRow, ToolRow};
use crate::domain::approval::{needs_approval, writes, ApprovalState, Authorship};
use serde_json::{json, Value};

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
        // a grant stands for the version it was given on (a new version that changes
        // nothing carries it forward); one for another version raced a publish
        if let Some(a) = approval.as_mut().filter(|a| {
            a.state == ApprovalState::Granted && a.version.is_some_and(|v| v != tool.version)
        }) {
            let why = format!(
                "the approval was given for version {}",
                a.version.unwrap_or_default()
            );
            db::repend_approval(
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
        }
        match approval.as_ref().map(|a| a.state) {
            Some(ApprovalState::Granted) => {}
            Some(ApprovalState::Denied) => {
                return Ok(Some(RunAnswer::err(
                    "approval_denied",
                    format!("a person denied this agent the use of {qualified}"),
                    json!({"tool": qualified}),
                )))
            }
            _ => {
                db::insert_pending_approval(
                    self.pool(),
                    agent_id,
                    tool.id,
                    tool.version,
                    self.now(),
                )
                .await?;
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
        Ok(db::select_approvals(self.pool()).await?)
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
        self.decide_approval_seen(actor, agent, vendor, name, grant, None)
            .await
    }

    /// [`Graft::decide_approval`] on the tool version the person was shown (`seen`, the
    /// version the console's row named): refused with `Conflict` when a newer version
    /// exists, so nobody approves a definition they did not see (issue 12.15).
    pub async fn decide_approval_seen(
        &self,
        actor: &Actor,
        agent: &str,
        vendor: &str,
        name: &str,
        grant: bool,
        seen: Option<i64>,
    ) -> ServiceResult<ApprovalRow> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Invalid(
                "only a person can decide an approval".into(),
            ));
        };
        let a = self.agent_by_name(agent).await?;
        super::alive(&a)?;
        let t = self.tool(vendor, name).await?;
        if t.vendor_removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {vendor} was removed: its tools' approvals cannot be decided until it is brought back (import its document again)"
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
        db::upsert_approval_decision(
            self.pool(),
            a.id,
            t.id,
            t.version,
            state,
            &format!("person:{person}"),
            self.now(),
        )
        .await?;
        Ok(db::select_approval(self.pool(), a.id, t.id)
            .await?
            .expect("decided row exists"))
    }

    /// Approvals waiting for a person's decision (the console's nav shows the count).
    pub async fn pending_approvals(&self) -> ServiceResult<i64> {
        Ok(db::count_pending_approvals(self.pool()).await?)
    }
}
