//! Starter sets in the console (issue 31): templates on the Starter templates pages, and each
//! agent's starter set on its page. Every change is a person's; the promotions it causes
//! are the rule's (Promoted by "the rule", History cause "the starter set").

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{
    back_saying_saved, confirmed, signed_in, with_status, ConsoleError,
};
#[cfg(feature = "ssr")]
use crate::console::words::segment;
#[cfg(feature = "ssr")]
use crate::service::Actor;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A template row of the Starter templates page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateItem {
    /// Unique name (the page address).
    pub name: String,
    /// Tools it lists.
    pub tools: i64,
    /// Agents that use it.
    pub agents: i64,
}

/// The Starter templates page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplatesData {
    /// Every template, by name.
    pub templates: Vec<TemplateItem>,
}

/// One tool of a starter list (a template's, or an agent's starter set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StarterToolItem {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Its description (first 200 characters).
    pub description: String,
    /// The current version (what "Approve now" approves).
    pub version: i64,
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: bool,
    /// Listed in the agent's own starter tools (agent pages only).
    pub own: bool,
    /// Listed by the agent's template (agent pages only).
    pub from_template: bool,
    /// In the agent's working set now (agent pages only).
    pub promoted: bool,
    /// A write whose calls need a person's approval (SPEC §4.4).
    pub needs_approval: bool,
    /// Its first call by the agent would wait for a person (agent pages only).
    pub awaits_approval: bool,
    /// A person denied the agent this tool (agent pages only).
    #[serde(default)]
    pub denied: bool,
    /// Why the rule cannot promote it (retired, vendor disabled or removed).
    pub unusable: Option<String>,
}

/// One template's page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateData {
    pub name: String,
    /// Its tools, in the order they were added.
    pub tools: Vec<StarterToolItem>,
    /// The agents that use it, by name.
    pub agents: Vec<String>,
}

/// An agent's starter set, on its page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StarterData {
    /// The template it uses.
    pub template: Option<String>,
    /// Every template's name (the choice of template).
    pub templates: Vec<String>,
    /// Its starter tools: its own and its template's.
    pub tools: Vec<StarterToolItem>,
}

#[cfg(feature = "ssr")]
fn tool_item(t: &crate::service::ToolView) -> StarterToolItem {
    StarterToolItem {
        vendor: t.vendor.clone(),
        name: t.name.clone(),
        description: crate::domain::openapi::truncate_chars(&t.description, 200),
        version: t.version,
        read_only: t.read_only_hint,
        destructive: t.destructive_hint,
        own: false,
        from_template: false,
        promoted: false,
        needs_approval: crate::service::approvals::gated(t),
        awaits_approval: false,
        denied: false,
        unusable: crate::service::unusable_reason(t),
    }
}

/// An agent's starter set for its page ([`crate::console::server_fns::agent`]).
#[cfg(feature = "ssr")]
pub(crate) async fn starter_data(
    g: &crate::service::Graft,
    agent: &str,
) -> ConsoleResult<StarterData> {
    let s = g.starter_set(agent).await?;
    Ok(StarterData {
        template: s.template,
        templates: g
            .starter_templates()
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect(),
        tools: s
            .entries
            .iter()
            .map(|e| StarterToolItem {
                own: e.own,
                from_template: e.from_template,
                promoted: e.promoted,
                awaits_approval: e.awaits_approval,
                denied: e.denied,
                ..tool_item(&e.tool)
            })
            .collect(),
    })
}

/// The `vendor__name` references of a form field: one per line, or separated by commas
/// or spaces; empty: none.
#[cfg(feature = "ssr")]
fn tool_refs(field: Option<String>) -> Vec<String> {
    field
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The Starter templates page: every template with its counts.
#[server(prefix = "/api", endpoint = "templates")]
pub async fn templates() -> ConsoleResult<TemplatesData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        Ok(TemplatesData {
            templates: state
                .graft
                .starter_templates()
                .await?
                .into_iter()
                .map(|t| TemplateItem {
                    name: t.name,
                    tools: t.tools,
                    agents: t.agents,
                })
                .collect(),
        })
    })
    .await
}

/// One template's page. Errors: `Refused` (no such template; the page answers 404).
#[server(prefix = "/api", endpoint = "template")]
pub async fn template(name: String) -> ConsoleResult<TemplateData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let t = state.graft.starter_template(&name).await?;
        Ok(TemplateData {
            tools: t.tools.iter().map(tool_item).collect(),
            name: t.name,
            agents: t.agents,
        })
    })
    .await
}

/// Creates a template (tools are added on its page) and goes to its page.
/// Errors: at `name` (rules, taken).
#[server(prefix = "/api", endpoint = "create_template")]
pub async fn create_template(name: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let t = state
            .graft
            .create_starter_template(&Actor::Person(person.name), &name, &[])
            .await
            .map_err(|e| match e {
                crate::service::ServiceError::Conflict(m)
                | crate::service::ServiceError::Invalid(m) => ConsoleError::field("name", m),
                other => other.into(),
            })?;
        leptos_axum::redirect(&format!("/starters/{}", segment(&t.name)));
        Ok(())
    })
    .await
}

/// Adds tools to a template (`add`) or takes them off (`remove`), `vendor__name` each
/// (several separated by commas, spaces or lines). With `apply` = `yes` the agents that
/// use the template get its new tools at once (one list_changed each).
/// Errors: `Refused` (no such template, tool or reference).
#[server(prefix = "/api", endpoint = "edit_template")]
pub async fn edit_template(
    template: String,
    add: Option<String>,
    remove: Option<String>,
    apply: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .edit_starter_template(
                &Actor::Person(person.name),
                &template,
                &tool_refs(add),
                &tool_refs(remove),
                apply.as_deref() == Some("yes"),
            )
            .await?;
        back_saying_saved("template");
        Ok(())
    })
    .await
}

/// Applies a template to every agent that uses it: the rule promotes each of its tools
/// an agent lacks.
#[server(prefix = "/api", endpoint = "apply_template")]
pub async fn apply_template(template: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .apply_starter_template(&Actor::Person(person.name), &template)
            .await?;
        back_saying_saved("applied");
        Ok(())
    })
    .await
}

/// Deletes a template (`confirm` = `yes`); its agents keep their working sets and own
/// starter tools. Goes to the Starter templates page.
#[server(prefix = "/api", endpoint = "delete_template")]
pub async fn delete_template(template: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "deleting a template takes it from the agents that use it",
        )?;
        state
            .graft
            .delete_starter_template(&Actor::Person(person.name), &template)
            .await?;
        leptos_axum::redirect("/starters");
        Ok(())
    })
    .await
}

/// Adds tools to an agent's own starter tools (`add`) or takes them off (`remove`),
/// then the rule promotes each starter tool not in its working set.
#[server(prefix = "/api", endpoint = "edit_starter")]
pub async fn edit_starter(
    agent: String,
    add: Option<String>,
    remove: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .edit_agent_starter(
                &Actor::Person(person.name),
                &agent,
                &tool_refs(add),
                &tool_refs(remove),
            )
            .await?;
        back_saying_saved("starter");
        Ok(())
    })
    .await
}

/// Makes an agent use a template (empty: none), then applies its starter set.
#[server(prefix = "/api", endpoint = "set_starter_template")]
pub async fn set_starter_template(agent: String, template: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .set_agent_template(&Actor::Person(person.name), &agent, Some(template.as_str()))
            .await?;
        back_saying_saved("starter");
        Ok(())
    })
    .await
}

/// Applies an agent's starter set again: the rule promotes each starter tool the sweep
/// (or anyone) demoted.
#[server(prefix = "/api", endpoint = "apply_starter")]
pub async fn apply_starter(agent: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .apply_starter(&Actor::Person(person.name), &agent)
            .await?;
        back_saying_saved("starter");
        Ok(())
    })
    .await
}
