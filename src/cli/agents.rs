//! `graft agent …`: adding, listing and changing agents (SPEC §7).

use super::{format_time, person};
use crate::service::Graft;
use clap::Subcommand;

/// `graft agent …`
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Create an agent and print its token (shown once).
    Add {
        /// Unique name.
        name: String,
        /// Working-set cap, 1 to 500.
        #[arg(long)]
        cap: Option<i64>,
        /// Idle window in days, 1 to 3650.
        #[arg(long)]
        window: Option<i64>,
        /// Harness label (claude-code, cursor, hermes, …).
        #[arg(long)]
        harness: Option<String>,
        /// A starter template (graft template list): the rule promotes its tools at once.
        #[arg(long, value_name = "TEMPLATE")]
        starter: Option<String>,
    },
    /// Show or change an agent's starter set: the tools the rule promotes for it when
    /// they are added or the set is applied.
    Starter {
        /// Agent name.
        name: String,
        #[command(subcommand)]
        action: StarterAction,
    },
    /// List agents.
    List,
    /// Change an agent's name, cap, idle window or token budget (the rule reads them at
    /// the next sweep).
    Set {
        /// Current name.
        name: String,
        /// New name.
        #[arg(long = "name")]
        new_name: Option<String>,
        /// Working-set cap, 1 to 500.
        #[arg(long)]
        cap: Option<i64>,
        /// Idle window in days, 1 to 3650.
        #[arg(long)]
        window: Option<i64>,
        /// Token budget: most tokens its working set's tool definitions should cost,
        /// 1,000 to 500,000, or `none`. The sweep trims to it as to the cap.
        #[arg(long, value_parser = budget_arg, allow_hyphen_values = true)]
        token_budget: Option<BudgetArg>,
        /// The client it runs in (vscode, cursor, codex, claude-code, hermes, openclaw,
        /// other), whose tool limits then apply, or `none`.
        #[arg(long)]
        harness: Option<String>,
    },
    /// Show an agent: its settings, its working set with each tool's tokens, and what
    /// the next sweep would demote.
    Show {
        /// Agent name.
        name: String,
    },
    /// Refuse an agent's token from now on and end its sessions; its working set, history
    /// and approvals are kept.
    Disable {
        /// Agent name.
        name: String,
    },
    /// Let a disabled agent's token in again.
    Enable {
        /// Agent name.
        name: String,
    },
    /// Give an agent a new token and print it (shown once); the old one stops at once.
    Rotate {
        /// Agent name.
        name: String,
    },
    /// Remove an agent: its token and sessions end, its working set is demoted (History:
    /// the agent was removed), its history is kept under its name, which no new agent can take.
    Remove {
        /// Agent name.
        name: String,
        /// Confirm (the removal cannot be undone).
        #[arg(long)]
        yes: bool,
    },
}

/// `graft agent NAME starter …`
#[derive(Debug, Subcommand)]
pub enum StarterAction {
    /// Print the starter set: its template, each tool and whether it is promoted.
    List,
    /// Add tools (VENDOR__NAME) to the agent's own starter tools; the rule promotes them.
    Add {
        #[arg(required = true, value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Take tools off the agent's own starter tools (nothing is demoted).
    Remove {
        #[arg(required = true, value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Promote every starter tool not in the working set again (after a sweep).
    Apply,
    /// Use a template (or `--none`); the rule promotes the template's tools.
    Template {
        /// Template name.
        #[arg(required_unless_present = "none", conflicts_with = "none")]
        template: Option<String>,
        /// Use no template.
        #[arg(long)]
        none: bool,
    },
}

/// A working set against its limits: "working set: 5 tools (cap 20), 3,210 tokens
/// (token budget 8,000)" (issue 29).
fn set_in_words(size: i64, cap: i64, tokens: i64, budget: Option<i64>) -> String {
    use crate::console::words::{count, grouped};
    let budget = budget
        .map(|b| format!(" (token budget {})", grouped(b)))
        .unwrap_or_default();
    format!(
        "working set: {} (cap {cap}), {}{budget}",
        count(size, "tool"),
        crate::console::words::tokens(tokens)
    )
}

/// A `--harness` value: one the console offers (its value or its label, any case), or
/// `none`. Errors: the values there are.
fn harness_arg(s: &str) -> anyhow::Result<Option<&'static str>> {
    use crate::console::words::HARNESSES;
    if s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    HARNESSES
        .iter()
        .find(|(v, l)| v.eq_ignore_ascii_case(s.trim()) || l.eq_ignore_ascii_case(s.trim()))
        .map(|(v, _)| Some(*v))
        .ok_or_else(|| {
            let values: Vec<&str> = HARNESSES.iter().map(|(v, _)| *v).collect();
            anyhow::anyhow!(
                "unknown harness {s:?}: use one of {}, or none",
                values.join(", ")
            )
        })
}

/// A `--token-budget` value: tokens, or `none` to clear the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetArg(pub Option<i64>);

fn budget_arg(s: &str) -> Result<BudgetArg, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(BudgetArg(None));
    }
    let n: i64 = s
        .replace([',', '_'], "")
        .parse()
        .map_err(|_| format!("{s:?} is not a number of tokens (or none)"))?;
    crate::domain::check_token_budget(n).map(|n| BudgetArg(Some(n)))
}

/// Prints what applying a starter set did: promoted, skipped, and what the next sweep
/// would demote (issue 31.4).
pub(super) fn print_applied(a: &crate::service::Applied) {
    use crate::console::words::{cause_in_words, count};
    if a.promoted.is_empty() && !a.skipped.is_empty() {
        println!(
            "Agent {}: the rule promoted nothing ({}).",
            a.agent,
            set_in_words(a.size, a.cap, a.tokens, a.token_budget)
        );
    } else if a.promoted.is_empty() {
        println!(
            "Agent {}: its starter tools are in the working set already ({}).",
            a.agent,
            set_in_words(a.size, a.cap, a.tokens, a.token_budget)
        );
    } else {
        println!(
            "Agent {}: the rule promoted {}: {} ({}).",
            a.agent,
            count(a.promoted.len() as i64, "starter tool"),
            a.promoted.join(", "),
            set_in_words(a.size, a.cap, a.tokens, a.token_budget)
        );
    }
    for (_, why) in &a.skipped {
        // the reason names the tool
        println!("  not promoted: {why}");
    }
    if !a.would_demote.is_empty() {
        println!("The next sweep would demote:");
        for (t, c) in &a.would_demote {
            println!("  {t} ({})", cause_in_words(*c));
        }
    }
}

/// `graft agent show NAME`: settings, the working set with each tool's tokens, the
/// total against the cap and budget, and what the next sweep would demote.
async fn show(graft: &Graft, name: &str) -> anyhow::Result<()> {
    use crate::console::words::{cause_in_words, count, harness_in_words, tokens};
    let a = graft.agent_by_name(name).await?;
    let state = if a.removed_at.is_some() {
        " (removed)"
    } else if a.disabled_at.is_some() {
        " (disabled)"
    } else {
        ""
    };
    println!(
        "Agent {}{state}: {}, idle window {}, {}; last seen {}.",
        a.name,
        a.harness
            .as_deref()
            .map(harness_in_words)
            .unwrap_or_else(|| "no harness named".into()),
        count(a.idle_window_days, "day"),
        a.token_budget
            .map(|b| format!("token budget {}", tokens(b)))
            .unwrap_or_else(|| "no token budget".into()),
        format_time(a.last_seen_at)
    );
    let view = graft.working_set_view(a.id).await?;
    let total: i64 = view.iter().map(|e| e.entry.tool.tokens.unwrap_or(0)).sum();
    let words = set_in_words(view.len() as i64, a.cap, total, a.token_budget);
    // a sentence of its own: its first letter in upper case
    let mut letters = words.chars();
    let first = letters.next().map(|c| c.to_uppercase().to_string());
    println!("{}{}.", first.unwrap_or_default(), letters.as_str());
    for e in &view {
        let t = &e.entry.tool;
        println!(
            "  {:<48} {:>14}  {}",
            format!("{}__{}", t.vendor, t.name),
            t.tokens.map(tokens).unwrap_or_else(|| "not counted".into()),
            match e.last_used_at {
                Some(_) => format!("last used {}", format_time(e.last_used_at)),
                None => "never called".into(),
            }
        );
    }
    if let Some(w) = crate::clients::client_limit_warning(
        a.harness.as_deref(),
        view.len() as i64,
        crate::clients::Reader::Person,
    ) {
        println!("{w}");
    }
    let next = Graft::sweep_preview(&a, &view, graft.clock_now());
    if !next.is_empty() {
        println!("The next sweep would demote:");
        for (t, c) in &next {
            println!("  {t} ({})", cause_in_words(*c));
        }
    }
    Ok(())
}

async fn starter(graft: &Graft, name: &str, action: StarterAction) -> anyhow::Result<()> {
    let who = person();
    match action {
        StarterAction::List => {
            let s = graft.starter_set(name).await?;
            match &s.template {
                Some(t) => println!("Agent {name} uses the starter template {t}."),
                None => println!("Agent {name} uses no starter template."),
            }
            if s.entries.is_empty() {
                println!("Its starter set is empty: graft agent starter {name} add VENDOR__NAME");
            }
            for e in s.entries {
                let from = match (e.own, e.from_template) {
                    (true, true) => "own, template",
                    (true, false) => "own",
                    _ => "template",
                };
                let tool = format!("{}__{}", e.tool.vendor, e.tool.name);
                let state = if let Some(why) = &e.unusable {
                    format!("cannot be promoted: {why}")
                } else if e.promoted {
                    "promoted".to_string()
                } else {
                    "not in the working set".to_string()
                };
                let approval = if e.unusable.is_some() {
                    String::new()
                } else if e.denied {
                    format!(
                        "  (denied: its calls are refused; graft approve {name} {tool} allows it)"
                    )
                } else if e.awaits_approval {
                    format!("  (its first call waits for approval: graft approve {name} {tool} approves it now)")
                } else {
                    String::new()
                };
                println!("  {tool}  [{from}]  {state}{approval}");
            }
        }
        StarterAction::Add { tools } => {
            print_applied(&graft.edit_agent_starter(&who, name, &tools, &[]).await?)
        }
        StarterAction::Remove { tools } => {
            graft.edit_agent_starter(&who, name, &[], &tools).await?;
            println!(
                "Took {} off agent {name}'s starter tools; nothing was demoted.",
                tools.join(", ")
            );
        }
        StarterAction::Apply => print_applied(&graft.apply_starter(&who, name).await?),
        StarterAction::Template { template, .. } => {
            let applied = graft
                .set_agent_template(&who, name, template.as_deref())
                .await?;
            match &template {
                Some(t) => println!("Agent {name} uses the starter template {t} now."),
                None => println!(
                    "Agent {name} uses no starter template now; its working set keeps what it has."
                ),
            }
            if !applied.promoted.is_empty() || !applied.skipped.is_empty() {
                print_applied(&applied);
            }
        }
    }
    Ok(())
}

/// `graft agent …` (SPEC §7).
pub(super) async fn agent(graft: &Graft, command: AgentCommand) -> anyhow::Result<()> {
    match command {
        AgentCommand::Add {
            name,
            cap,
            window,
            harness,
            starter,
        } => {
            let (agent, token, applied) = graft
                .add_agent_with_starter(&name, harness.as_deref(), cap, window, starter.as_deref())
                .await?;
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::AgentAdd,
                    &agent.name,
                    starter
                        .as_deref()
                        .map(|s| format!("starter template {s}"))
                        .as_deref(),
                )
                .await?;
            println!(
                "Created agent {} (cap {}, idle window {}).",
                agent.name,
                agent.cap,
                crate::console::words::count(agent.idle_window_days, "day")
            );
            if let Some(a) = &applied {
                print_applied(a);
            }
            println!("Its token, shown this once (Graft keeps only a hash):");
            println!("{token}");
        }
        AgentCommand::Starter { name, action } => starter(graft, &name, action).await?,
        AgentCommand::List => {
            let agents = graft.list_agents().await?;
            if agents.is_empty() {
                println!("No agents yet: graft agent add NAME");
            }
            println!(
                "{:<24} {:<14} {:>9} {:>17} {:>7}  last seen",
                "name", "harness", "set/cap", "tokens/budget", "window"
            );
            for a in agents {
                let disabled = if a.removed_at.is_some() {
                    "  (removed)"
                } else if a.disabled_at.is_some() {
                    "  (disabled)"
                } else {
                    ""
                };
                let tokens = match a.token_budget {
                    Some(b) => format!(
                        "{}/{}",
                        crate::console::words::grouped(a.tokens),
                        crate::console::words::grouped(b)
                    ),
                    None => crate::console::words::grouped(a.tokens),
                };
                println!(
                    "{:<24} {:<14} {:>9} {:>17} {:>6}d  {}{disabled}",
                    a.name,
                    a.harness.unwrap_or_else(|| "-".into()),
                    format!("{}/{}", a.size, a.cap),
                    tokens,
                    a.idle_window_days,
                    format_time(a.last_seen_at)
                );
            }
        }
        AgentCommand::Set {
            name,
            new_name,
            cap,
            window,
            token_budget,
            harness,
        } => {
            // checked before anything is written
            let harness = harness.as_deref().map(harness_arg).transpose()?;
            let mut a = graft
                .set_agent_settings(
                    &name,
                    new_name.as_deref(),
                    cap,
                    window,
                    token_budget.map(|b| b.0),
                )
                .await?;
            if let Some(h) = harness {
                a = graft.set_agent_harness(&a.name, h).await?;
            }
            let detail = crate::service::audit::agent_settings_detail(&a, &name);
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::AgentEdit,
                    &a.name,
                    Some(&detail),
                )
                .await?;
            let budget = a
                .token_budget
                .map(|b| format!("token budget {}", crate::console::words::tokens(b)))
                .unwrap_or_else(|| "no token budget".into());
            let client = a
                .harness
                .as_deref()
                .map(|h| format!(", harness {}", crate::console::words::harness_in_words(h)))
                .unwrap_or_default();
            println!(
                "Agent {}: cap {}, idle window {}, {budget}{client}. The rule applies them at the next sweep.",
                a.name,
                a.cap,
                crate::console::words::count(a.idle_window_days, "day")
            );
        }
        AgentCommand::Show { name } => show(graft, &name).await?,
        AgentCommand::Disable { name } => {
            let a = graft.set_agent_disabled(&person(), &name, true).await?;
            println!(
                "Agent {} is disabled: its token is refused and its sessions ended. Its working set, history and approvals are kept (graft agent enable {} lets it in again).",
                a.name, a.name
            );
        }
        AgentCommand::Enable { name } => {
            let a = graft.set_agent_disabled(&person(), &name, false).await?;
            println!(
                "Agent {} is enabled: its current token works again.",
                a.name
            );
        }
        AgentCommand::Remove { name, yes } => {
            if !yes {
                let a = graft.agent_by_name(&name).await?;
                let n = graft.working_set(a.id).await?.len() as i64;
                anyhow::bail!(
                    "removing agent {} ends its token and sessions and demotes its {}; it cannot be undone. Run it again with --yes",
                    a.name,
                    crate::console::words::count(n, "tool")
                );
            }
            let a = graft.remove_agent(&person(), &name).await?;
            println!(
                "Removed agent {}: its token is refused (by a running server within about a second), its working set demoted; its history is kept under its name, which no new agent can take.",
                a.name
            );
        }
        AgentCommand::Rotate { name } => {
            let a = graft.agent_by_name(&name).await?;
            let token = graft.rotate_token(a.id).await?;
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::AgentRotateToken,
                    &a.name,
                    None,
                )
                .await?;
            println!(
                "Agent {}: a new token; the old one stopped working and its sessions ended.",
                a.name
            );
            println!("The new token, shown this once (Graft keeps only a hash):");
            println!("{token}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harnesses_are_read_by_value_or_label_in_any_case() {
        assert_eq!(harness_arg("VS Code").unwrap(), Some("vscode"));
        assert_eq!(harness_arg("CURSOR").unwrap(), Some("cursor"));
        assert_eq!(harness_arg("none").unwrap(), None);
        let e = harness_arg("VSCodeX").unwrap_err().to_string();
        assert!(e.contains("use one of claude-code, cursor, vscode"), "{e}");
    }
}
