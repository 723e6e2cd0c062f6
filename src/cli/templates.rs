//! `graft template …`: starter templates, the named tool lists a person picks when
//! creating an agent (issue 31).

use super::agents::print_applied;
use super::{format_time, person};
use crate::service::Graft;
use clap::Subcommand;

/// `graft template …`
#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    /// List starter templates with their counts of tools and agents.
    List,
    /// Print a template's tools and the agents that use it.
    Show {
        /// Template name.
        name: String,
    },
    /// Create a template listing tools (VENDOR__NAME; may be none yet).
    Create {
        /// Unique name (letters, digits, '-', '_', '.').
        name: String,
        #[arg(value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Add tools to a template. With --apply, the rule promotes them at once for every
    /// agent that uses it; without, Graft says which agents would get them.
    Add {
        /// Template name.
        name: String,
        #[arg(required = true, value_name = "TOOL")]
        tools: Vec<String>,
        /// Apply the template to the agents that use it now.
        #[arg(long)]
        apply: bool,
    },
    /// Take tools off a template (nothing is demoted).
    Remove {
        /// Template name.
        name: String,
        #[arg(required = true, value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Apply a template to every agent that uses it: the rule promotes each of its
    /// tools an agent's working set lacks.
    Apply {
        /// Template name.
        name: String,
    },
    /// Delete a template; its agents keep their working sets and own starter tools.
    Delete {
        /// Template name.
        name: String,
        /// Confirm.
        #[arg(long)]
        yes: bool,
    },
}

/// `graft template …` (issue 31).
pub(super) async fn template(graft: &Graft, command: TemplateCommand) -> anyhow::Result<()> {
    let who = person();
    match command {
        TemplateCommand::List => {
            let all = graft.starter_templates().await?;
            if all.is_empty() {
                println!("No starter templates yet: graft template create NAME VENDOR__NAME…");
            }
            for t in all {
                println!(
                    "{:<24} {:>10} {:>10}  created {}",
                    t.name,
                    crate::console::words::count(t.tools, "tool"),
                    crate::console::words::count(t.agents, "agent"),
                    format_time(Some(t.created_at))
                );
            }
        }
        TemplateCommand::Show { name } => {
            let t = graft.starter_template(&name).await?;
            println!("Starter template {}:", t.name);
            for tool in &t.tools {
                println!("  {}__{}", tool.vendor, tool.name);
            }
            if t.tools.is_empty() {
                println!("  (no tools: graft template add {} VENDOR__NAME)", t.name);
            }
            if t.agents.is_empty() {
                println!(
                    "No agent uses it: graft agent add NAME --starter {}",
                    t.name
                );
            } else {
                println!("Used by: {}", t.agents.join(", "));
            }
        }
        TemplateCommand::Create { name, tools } => {
            let t = graft.create_starter_template(&who, &name, &tools).await?;
            println!(
                "Created starter template {} with {}. Give it to an agent: graft agent add NAME --starter {}",
                t.name,
                crate::console::words::count(t.tools.len() as i64, "tool"),
                t.name
            );
        }
        TemplateCommand::Add { name, tools, apply } => {
            let (t, applied) = graft
                .edit_starter_template(&who, &name, &tools, &[], apply)
                .await?;
            println!(
                "Starter template {} lists {} now.",
                t.name,
                crate::console::words::count(t.tools.len() as i64, "tool")
            );
            if apply {
                applied.iter().for_each(print_applied);
            } else if !t.agents.is_empty() {
                let who = match t.agents.len() {
                    1 => "1 agent uses it".to_string(),
                    n => format!("{n} agents use it"),
                };
                println!(
                    "{who} ({}): graft template apply {} promotes the new tools for them now.",
                    t.agents.join(", "),
                    t.name
                );
            }
        }
        TemplateCommand::Remove { name, tools } => {
            let (t, _) = graft
                .edit_starter_template(&who, &name, &[], &tools, false)
                .await?;
            println!(
                "Starter template {} lists {} now; working sets keep what they have.",
                t.name,
                crate::console::words::count(t.tools.len() as i64, "tool")
            );
        }
        TemplateCommand::Apply { name } => {
            let applied = graft.apply_starter_template(&who, &name).await?;
            if applied.is_empty() {
                println!("No agent uses starter template {name}.");
            }
            applied.iter().for_each(print_applied);
        }
        TemplateCommand::Delete { name, yes } => {
            if !yes {
                let t = graft.starter_template(&name).await?;
                anyhow::bail!(
                    "deleting starter template {} takes it from {}; their working sets keep what they have. Run it again with --yes",
                    t.name,
                    crate::console::words::count(t.agents.len() as i64, "agent")
                );
            }
            graft.delete_starter_template(&who, &name).await?;
            println!("Deleted starter template {name}; its agents keep their working sets.");
        }
    }
    Ok(())
}
