//! Starter sets (issue 31; SPEC §1 "promoted by" and "cause": rule): the tools a person
//! chooses for an agent before its first turn, as named templates ("support", "ops")
//! and as the agent's own list. The rule promotes each starter tool that is not in the
//! working set (Promoted by "the rule", History cause "the starter set", one
//! list_changed) when the agent is created, and when a person applies the set again.
//! When the set changes, the rule promotes what the change added (the tools added to
//! the agent's list, a new template's tools, a template's new tools); taking tools off a
//! list, or the template away, promotes and demotes nothing. The sweep treats starter
//! tools like any other: a person's list is a start, not a pin.

use super::working_set::promote_in;
use super::{unique_or, Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, AgentRow, TemplateRow, ToolRow};
use crate::domain::approval::ApprovalState;
use crate::domain::audit::AuditAction;
use crate::domain::{Cause, PromotedBy, MAX_CAP};
use std::collections::HashMap;

/// Most tools one starter list (a template, or an agent's own) may hold: the largest
/// cap, since more could never stay in a working set together.
pub const MAX_STARTER_TOOLS: usize = MAX_CAP as usize;

/// A starter template with its tools and the agents that use it.
#[derive(Debug, Clone)]
pub struct TemplateView {
    /// Unique name.
    pub name: String,
    /// Creation time (ms).
    pub created_at: i64,
    /// Its tools (current versions), in the order they were added.
    pub tools: Vec<ToolRow>,
    /// Names of the agents that use it, by name.
    pub agents: Vec<String>,
}

/// One tool of an agent's starter set, as its page shows it.
#[derive(Debug, Clone)]
pub struct StarterEntry {
    /// The tool (current version).
    pub tool: ToolRow,
    /// Listed in the agent's own starter tools (a person may take it off there).
    pub own: bool,
    /// Listed by the agent's template.
    pub from_template: bool,
    /// In the agent's working set now.
    pub promoted: bool,
    /// A write whose first call would wait for a person (SPEC §4.4): no decision on it
    /// for this agent yet.
    pub awaits_approval: bool,
    /// A person denied this agent the tool: its calls are refused (a person may still
    /// approve it).
    pub denied: bool,
    /// Why the rule cannot promote it (a retired tool, a disabled or removed vendor),
    /// as [`unusable_reason`] says it.
    pub unusable: Option<String>,
}

/// An agent's starter set.
#[derive(Debug, Clone)]
pub struct StarterView {
    /// The template it uses, if any.
    pub template: Option<String>,
    /// Its tools: its own and its template's, in the order they were added.
    pub entries: Vec<StarterEntry>,
}

/// What applying an agent's starter set did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The agent.
    pub agent: String,
    /// `vendor__name` of each tool the rule promoted now (those already in the working
    /// set are left as they are).
    pub promoted: Vec<String>,
    /// `(vendor__name, why)` of each starter tool the rule could not promote.
    pub skipped: Vec<(String, String)>,
    /// The working set's size afterwards.
    pub size: i64,
    /// The agent's cap.
    pub cap: i64,
    /// The working set's tokens afterwards (issue 29.1).
    pub tokens: i64,
    /// The agent's token budget, if any (issue 29.2).
    pub token_budget: Option<i64>,
    /// What the next sweep would demote now (SPEC §5): `(vendor__name, idle, cap or
    /// budget)`. A starter set larger than the cap or the token budget shows here before
    /// the sweep acts.
    pub would_demote: Vec<(String, Cause)>,
}

/// Checks a template name: the agent-name rules (1 to 64 of `[A-Za-z0-9._-]`).
/// Errors: the rule, in words.
pub fn check_template_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    // a leading '-' would read as a flag on the command line
    if name.starts_with('-') {
        return Err(format!(
            "template name {name:?} is invalid: it may not start with '-'"
        ));
    }
    crate::domain::check_agent_name(name).map_err(|_| {
        format!(
            "template name {name:?} is invalid: use 1 to 64 letters, digits, '-', '_' or '.' (not only dots)"
        )
    })
}

/// Why the rule cannot promote `t` (retired, its vendor disabled or removed), without
/// the tool's name where the reason starts with it (the row it is shown on names it);
/// `None` when it can be promoted.
pub fn unusable_reason(t: &ToolRow) -> Option<String> {
    super::tools::usable(t).err().map(|e| {
        let why = e.to_string();
        let name = format!("{}: ", qualified(t));
        why.strip_prefix(&name).map(str::to_string).unwrap_or(why)
    })
}

fn qualified(t: &ToolRow) -> String {
    format!("{}__{}", t.vendor, t.name)
}

fn people_only(actor: &Actor) -> ServiceResult<()> {
    match actor {
        Actor::Agent(_) => Err(ServiceError::Forbidden(
            "only a person can change starter sets".into(),
        )),
        _ => Ok(()),
    }
}

impl Graft {
    /// Every starter template, by name, with its counts of tools and agents.
    pub async fn starter_templates(&self) -> ServiceResult<Vec<TemplateRow>> {
        Ok(db::select_templates(self.pool()).await?)
    }

    async fn template_row(&self, name: &str) -> ServiceResult<TemplateRow> {
        db::select_template_by_name(self.pool(), name.trim())
            .await?
            .ok_or_else(|| {
                ServiceError::Invalid(format!("no starter template named {:?}", name.trim()))
            })
    }

    /// A template with its tools and agents. Errors: `Invalid` (no such template).
    pub async fn starter_template(&self, name: &str) -> ServiceResult<TemplateView> {
        let t = self.template_row(name).await?;
        self.template_view(t).await
    }

    async fn template_view(&self, t: TemplateRow) -> ServiceResult<TemplateView> {
        let ids = db::select_template_tool_ids(self.pool(), t.id).await?;
        let tools = self.tools_in_order(&ids).await?;
        let agents = db::select_template_agents(self.pool(), t.id)
            .await?
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        Ok(TemplateView {
            name: t.name,
            created_at: t.created_at,
            tools,
            agents,
        })
    }

    /// Tools by id in the order of `ids` (ids of no tool are left out).
    async fn tools_in_order(&self, ids: &[i64]) -> ServiceResult<Vec<ToolRow>> {
        let mut by_id: HashMap<i64, ToolRow> = self
            .tools_by_ids(ids)
            .await?
            .into_iter()
            .map(|t| (t.id, t))
            .collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    /// Resolves `vendor__name` references to usable tools, all or none.
    /// Errors: `Invalid` (not `vendor__name`), `ToolNotFound` (no such tool, or one that
    /// cannot be promoted: retired, its vendor disabled or removed).
    async fn starter_tools_named(&self, refs: &[String]) -> ServiceResult<Vec<ToolRow>> {
        too_many(refs.len())?;
        let mut out: Vec<ToolRow> = Vec::with_capacity(refs.len());
        for r in refs {
            let t = self.tool_named(r).await?;
            super::tools::usable(&t)?;
            if !out.iter().any(|o| o.id == t.id) {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// Creates a template listing `tools` (`vendor__name`, may be empty). Only people.
    /// Errors: `Invalid` (name rules, a bad reference, more than
    /// [`MAX_STARTER_TOOLS`]), `ToolNotFound`, `Conflict` (name taken), `Forbidden`.
    pub async fn create_starter_template(
        &self,
        actor: &Actor,
        name: &str,
        tools: &[String],
    ) -> ServiceResult<TemplateView> {
        people_only(actor)?;
        let name = check_template_name(name).map_err(ServiceError::Invalid)?;
        let tools = self.starter_tools_named(tools).await?;
        too_many(tools.len())?;
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let id = db::insert_template(&mut tx, &name, now)
            .await
            .map_err(|e| {
                unique_or(e, ServiceError::Conflict, || {
                    format!("a starter template named {name:?} exists already")
                })
            })?;
        for t in &tools {
            db::insert_template_tool(&mut tx, id, t.id, now).await?;
        }
        tx.commit().await?;
        tracing::info!(template = %name, tools = tools.len(), actor = %actor.label(), "starter template created");
        let detail = format!("created with {} tools", tools.len());
        self.audit(actor, AuditAction::Template, &name, Some(&detail))
            .await?;
        self.starter_template(&name).await
    }

    /// Adds `add` to a template's tools and takes `remove` off (`vendor__name` each),
    /// all or nothing. With `apply`, each agent that uses the template then gets its
    /// starter set applied ([`Graft::apply_starter`]): one list_changed per agent whose
    /// set changed. Taking a tool off the list demotes nothing. Only people.
    /// Errors: as [`Graft::create_starter_template`]; `Invalid` (no such template).
    pub async fn edit_starter_template(
        &self,
        actor: &Actor,
        name: &str,
        add: &[String],
        remove: &[String],
        apply: bool,
    ) -> ServiceResult<(TemplateView, Vec<Applied>)> {
        people_only(actor)?;
        let t = self.template_row(name).await?;
        let add = self.starter_tools_named(add).await?;
        let remove = self.removable_named(remove).await?;
        let mut listed: Vec<i64> = db::select_template_tool_ids(self.pool(), t.id).await?;
        self.all_listed(
            &remove,
            &listed,
            &format!("starter template {}", t.name),
            None,
        )
        .await?;
        listed.retain(|id| !remove.contains(id));
        listed.extend(
            add.iter()
                .map(|t| t.id)
                .filter(|id| !listed.contains(id))
                .collect::<Vec<_>>(),
        );
        too_many(listed.len())?;
        self.write_starter_edit(StarterList::Template(t.id), &remove, &add)
            .await?;
        let view = self.template_view(t.clone()).await?;
        let applied = if apply {
            let added: Vec<i64> = add.iter().map(|t| t.id).collect();
            self.apply_template_agents(t.id, Some(&added)).await?
        } else {
            Vec::new()
        };
        let detail = format!(
            "{} tools added, {} removed{}",
            add.len(),
            remove.len(),
            if apply {
                format!(", applied to {} agents", applied.len())
            } else {
                String::new()
            }
        );
        self.audit(actor, AuditAction::Template, &t.name, Some(&detail))
            .await?;
        Ok((view, applied))
    }

    /// Refuses to take tools off a list that does not hold them (`what` names the list;
    /// `template` names the agent's template when a tool comes from it).
    /// Errors: `Invalid`, naming the first such tool.
    async fn all_listed(
        &self,
        remove: &[i64],
        listed: &[i64],
        what: &str,
        template: Option<(&str, &[i64])>,
    ) -> ServiceResult<()> {
        let missing: Vec<i64> = remove
            .iter()
            .copied()
            .filter(|id| !listed.contains(id))
            .collect();
        let Some(t) = self.tools_in_order(&missing).await?.into_iter().next() else {
            return Ok(());
        };
        let mut msg = format!("{} is not on the {what}", qualified(&t));
        if let Some((name, ids)) = template.filter(|(_, ids)| ids.contains(&t.id)) {
            let _ = ids;
            msg.push_str(&format!(
                ": it comes from the template {name}, which is edited on its own"
            ));
        }
        Err(ServiceError::Invalid(msg))
    }

    /// Applies the starter set of every agent that uses a template (after a person
    /// edited it). Errors: `Invalid` (no such template), `Forbidden`.
    pub async fn apply_starter_template(
        &self,
        actor: &Actor,
        name: &str,
    ) -> ServiceResult<Vec<Applied>> {
        people_only(actor)?;
        let t = self.template_row(name).await?;
        let applied = self.apply_template_agents(t.id, None).await?;
        let detail = format!("applied to {} agents", applied.len());
        self.audit(actor, AuditAction::Template, &t.name, Some(&detail))
            .await?;
        Ok(applied)
    }

    /// Applies the starter set of each agent using a template: all of it, or only the
    /// tools `only` (ids) of it.
    async fn apply_template_agents(
        &self,
        template_id: i64,
        only: Option<&[i64]>,
    ) -> ServiceResult<Vec<Applied>> {
        let mut out = Vec::new();
        for (id, _) in db::select_template_agents(self.pool(), template_id).await? {
            let a = self.agent(id).await?;
            out.push(self.apply_starter_to(&a, only).await?);
        }
        Ok(out)
    }

    /// Deletes a template. The agents that used it keep their working sets and their
    /// own starter tools, and use no template from now on. Errors: `Invalid` (no such
    /// template), `Forbidden`.
    pub async fn delete_starter_template(&self, actor: &Actor, name: &str) -> ServiceResult<()> {
        people_only(actor)?;
        let t = self.template_row(name).await?;
        let mut tx = self.write_tx().await?;
        db::delete_template(&mut tx, t.id).await?;
        tx.commit().await?;
        self.state_changed().await;
        tracing::info!(template = %t.name, actor = %actor.label(), "starter template deleted");
        self.audit(actor, AuditAction::Template, &t.name, Some("deleted"))
            .await?;
        Ok(())
    }

    /// Tool ids for `vendor__name` references to take off a list: any tool, usable or
    /// not (a retired tool can be taken off). Errors: `Invalid`, `ToolNotFound`.
    async fn removable_named(&self, refs: &[String]) -> ServiceResult<Vec<i64>> {
        too_many(refs.len())?;
        let mut out = Vec::with_capacity(refs.len());
        for r in refs {
            out.push(self.tool_named(r).await?.id);
        }
        Ok(out)
    }

    /// The tool a `vendor__name` reference (trimmed) names, usable or not.
    /// Errors: `Invalid` (not `vendor__name`), `ToolNotFound`.
    async fn tool_named(&self, r: &str) -> ServiceResult<ToolRow> {
        let r = r.trim();
        let (vendor, name) = crate::domain::names::split_qualified(r).ok_or_else(|| {
            ServiceError::Invalid(format!(
                "{r:?} is not vendor__name (e.g. petstore__get_pet_by_id)"
            ))
        })?;
        self.tool(vendor, name).await.map_err(person_not_found)
    }

    /// Takes tools `remove` off starter list `list` and puts `add` on it, in one
    /// transaction. Errors: database faults.
    async fn write_starter_edit(
        &self,
        list: StarterList,
        remove: &[i64],
        add: &[ToolRow],
    ) -> ServiceResult<()> {
        let now = self.now();
        let mut tx = self.write_tx().await?;
        for id in remove {
            match list {
                StarterList::Template(t) => db::delete_template_tool(&mut tx, t, *id).await?,
                StarterList::Agent(a) => db::delete_agent_starter_tool(&mut tx, a, *id).await?,
            };
        }
        for tool in add {
            match list {
                StarterList::Template(t) => {
                    db::insert_template_tool(&mut tx, t, tool.id, now).await?
                }
                StarterList::Agent(a) => {
                    db::insert_agent_starter_tool(&mut tx, a, tool.id, now).await?
                }
            };
        }
        tx.commit().await?;
        Ok(())
    }

    /// An agent's starter set: its template and every tool of it, with whether each is
    /// promoted, waits for an approval, or cannot be promoted. Errors: `AgentNotFound`.
    pub async fn starter_set(&self, agent: &str) -> ServiceResult<StarterView> {
        let a = self.agent_by_name(agent).await?;
        let rows = db::select_starter_tools(self.pool(), a.id).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let tools = self.tools_in_order(&ids).await?;
        let flags: HashMap<i64, (bool, bool)> =
            rows.iter().map(|r| (r.0, (r.1 > 0, r.2 > 0))).collect();
        let promoted: std::collections::HashSet<i64> =
            db::select_working_set_ids(self.pool(), a.id)
                .await?
                .into_iter()
                .collect();
        let mut entries = Vec::with_capacity(tools.len());
        for tool in tools {
            let state = if super::approvals::gated(&tool) {
                db::select_approval(self.pool(), a.id, tool.id)
                    .await?
                    .map(|x| x.state)
            } else {
                Some(ApprovalState::Granted)
            };
            let denied = state == Some(ApprovalState::Denied);
            let awaits_approval = !denied && state != Some(ApprovalState::Granted);
            let (own, from_template) = flags.get(&tool.id).copied().unwrap_or_default();
            entries.push(StarterEntry {
                own,
                from_template,
                promoted: promoted.contains(&tool.id),
                awaits_approval,
                denied,
                unusable: unusable_reason(&tool),
                tool,
            });
        }
        let template = self.starter_set_template(&a).await?;
        Ok(StarterView { template, entries })
    }

    /// Adds `add` to an agent's own starter tools and takes `remove` off (`vendor__name`
    /// each), all or nothing, then applies its starter set: the rule promotes each
    /// starter tool not in the working set. Taking a tool off demotes nothing.
    /// Errors: `AgentNotFound`, `Invalid`, `ToolNotFound`, `Forbidden`.
    pub async fn edit_agent_starter(
        &self,
        actor: &Actor,
        agent: &str,
        add: &[String],
        remove: &[String],
    ) -> ServiceResult<Applied> {
        people_only(actor)?;
        let a = self.agent_by_name(agent).await?;
        super::alive(&a)?;
        let add = self.starter_tools_named(add).await?;
        let remove = self.removable_named(remove).await?;
        let rows = db::select_starter_tools(self.pool(), a.id).await?;
        let own_before: Vec<i64> = rows.iter().filter(|r| r.1 > 0).map(|r| r.0).collect();
        let from_template: Vec<i64> = rows.iter().filter(|r| r.2 > 0).map(|r| r.0).collect();
        let template_name = self.starter_set_template(&a).await?;
        self.all_listed(
            &remove,
            &own_before,
            &format!("agent {}'s own starter tools", a.name),
            template_name
                .as_deref()
                .map(|n| (n, from_template.as_slice())),
        )
        .await?;
        let own: Vec<i64> = own_before
            .into_iter()
            .filter(|id| !remove.contains(id))
            .collect();
        too_many(own.len() + add.iter().filter(|t| !own.contains(&t.id)).count())?;
        self.write_starter_edit(StarterList::Agent(a.id), &remove, &add)
            .await?;
        let added: Vec<i64> = add.iter().map(|t| t.id).collect();
        let detail = format!(
            "the agent's own starter tools: {} added, {} removed",
            add.len(),
            remove.len()
        );
        self.audit(actor, AuditAction::AgentEdit, &a.name, Some(&detail))
            .await?;
        self.apply_starter_to(&a, Some(&added)).await
    }

    /// The name of the template an agent uses, if any.
    async fn starter_set_template(&self, a: &AgentRow) -> ServiceResult<Option<String>> {
        Ok(match a.starter_template_id {
            Some(id) => db::select_templates(self.pool())
                .await?
                .into_iter()
                .find(|t| t.id == id)
                .map(|t| t.name),
            None => None,
        })
    }

    /// Makes an agent use a template (`None`: none), then applies its starter set.
    /// Errors: `AgentNotFound`, `Invalid` (no such template), `Forbidden`.
    pub async fn set_agent_template(
        &self,
        actor: &Actor,
        agent: &str,
        template: Option<&str>,
    ) -> ServiceResult<Applied> {
        people_only(actor)?;
        let a = self.agent_by_name(agent).await?;
        super::alive(&a)?;
        let id = match template.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => Some(self.template_row(t).await?.id),
            None => None,
        };
        let mut tx = self.write_tx().await?;
        db::update_agent_template(&mut tx, a.id, id).await?;
        tx.commit().await?;
        self.state_changed().await;
        let a = self.agent(a.id).await?;
        let tools = match id {
            Some(id) => db::select_template_tool_ids(self.pool(), id).await?,
            None => Vec::new(),
        };
        let detail = format!(
            "starter template: {}",
            template
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .unwrap_or("none")
        );
        self.audit(actor, AuditAction::AgentEdit, &a.name, Some(&detail))
            .await?;
        self.apply_starter_to(&a, Some(&tools)).await
    }

    /// Applies an agent's starter set again (a person's "re-apply"): brings back the
    /// starter tools the sweep or anyone demoted. Errors: `AgentNotFound`, `Forbidden`.
    pub async fn apply_starter(&self, actor: &Actor, agent: &str) -> ServiceResult<Applied> {
        people_only(actor)?;
        let a = self.agent_by_name(agent).await?;
        super::alive(&a)?;
        self.apply_starter_to(&a, None).await
    }

    /// The rule promotes each usable starter tool of `agent` (or only those of it in
    /// `only`, ids) that is not in its working set, in one transaction (Promoted by
    /// `rule`, cause `rule`, actor `rule`), then fires one list_changed when the set
    /// changed.
    pub(crate) async fn apply_starter_to(
        &self,
        agent: &AgentRow,
        only: Option<&[i64]>,
    ) -> ServiceResult<Applied> {
        let rows = db::select_starter_tools(self.pool(), agent.id).await?;
        let ids: Vec<i64> = rows
            .iter()
            .map(|r| r.0)
            .filter(|id| only.is_none_or(|o| o.contains(id)))
            .collect();
        let tools = self.tools_in_order(&ids).await?;
        let now = self.now();
        let mut promoted = Vec::new();
        let mut skipped = Vec::new();
        let mut tx = self.write_tx().await?;
        if !db::lock_live_agent(&mut tx, agent.id).await? {
            return Err(super::removed_agent(&agent.name));
        }
        for t in &tools {
            if let Err(e) = super::tools::usable(t) {
                // the reason names the tool already
                skipped.push((qualified(t), e.to_string()));
                continue;
            }
            if promote_in(
                &mut tx,
                agent.id,
                t.id,
                PromotedBy::Rule,
                Cause::Rule,
                &Actor::Rule,
                now,
            )
            .await?
            {
                promoted.push(qualified(t));
            }
        }
        let size = db::count_working_set(&mut tx, agent.id).await?;
        let tokens = db::working_set_tokens(&mut tx, agent.id).await?;
        tx.commit().await?;
        if !promoted.is_empty() {
            self.changed(&[agent.id]).await;
            tracing::info!(agent = %agent.name, promoted = promoted.len(), "the rule promoted the starter set");
        }
        let view = self.working_set_view(agent.id).await?;
        let would_demote = Self::sweep_preview(agent, &view, now);
        Ok(Applied {
            agent: agent.name.clone(),
            promoted,
            skipped,
            size,
            cap: agent.cap,
            tokens,
            token_budget: agent.token_budget,
            would_demote,
        })
    }

    /// Creates an agent ([`Graft::add_agent`]) that uses the template `starter` (when
    /// given) and applies its starter set at once, so its first tools/list holds it.
    /// Errors: as `add_agent`; `Invalid` (no such template; no agent is created then).
    pub async fn add_agent_with_starter(
        &self,
        name: &str,
        harness: Option<&str>,
        cap: Option<i64>,
        idle_window_days: Option<i64>,
        starter: Option<&str>,
    ) -> ServiceResult<(AgentRow, String, Option<Applied>)> {
        let template = match starter.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => Some(self.template_row(s).await?),
            None => None,
        };
        let (agent, token) = self.add_agent(name, harness, cap, idle_window_days).await?;
        let Some(t) = template else {
            return Ok((agent, token, None));
        };
        let mut tx = self.write_tx().await?;
        db::update_agent_template(&mut tx, agent.id, Some(t.id)).await?;
        tx.commit().await?;
        let agent = self.agent(agent.id).await?;
        let applied = self.apply_starter_to(&agent, None).await?;
        Ok((agent, token, Some(applied)))
    }
}

/// A list of starter tools: a template's, or an agent's own (by id).
#[derive(Clone, Copy)]
enum StarterList {
    Template(i64),
    Agent(i64),
}

fn too_many(n: usize) -> ServiceResult<()> {
    if n > MAX_STARTER_TOOLS {
        return Err(ServiceError::Invalid(format!(
            "a starter list holds at most {MAX_STARTER_TOOLS} tools (the largest cap); this would hold {n}"
        )));
    }
    Ok(())
}

/// A tool-not-found error in words for a person (the service's own names `find_tool`,
/// the agent's way to search).
fn person_not_found(e: ServiceError) -> ServiceError {
    match e {
        ServiceError::ToolNotFound(m) => ServiceError::ToolNotFound(m.replace(
            "; call find_tool to search it",
            " (graft tool search, or the console's Toolbox, finds tools)",
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_names_follow_agent_names_and_never_read_as_flags() {
        assert_eq!(check_template_name(" support ").unwrap(), "support");
        assert!(check_template_name("ops.v2").is_ok());
        for bad in ["", "a b", ".", "..", "--none", "-x", &"x".repeat(65)] {
            assert!(check_template_name(bad).is_err(), "{bad:?}");
        }
    }
}
