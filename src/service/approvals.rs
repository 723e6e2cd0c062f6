//! Approvals of write tools (SPEC §4.4): the rule applied to a tool, deciding, listing.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, ApprovalRow, ToolRow};
use crate::domain::approval::{needs_approval, ApprovalState, Authorship};

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
