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
    },
    /// List agents.
    List,
    /// Change an agent's name, cap or idle window (the rule reads them at the next sweep).
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
    },
    /// Refuse an agent's token from now on and end its sessions; its working set, history
    /// and approvals are kept (issue 28.1).
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
}

/// `graft agent …` (SPEC §7).
pub(super) async fn agent(graft: &Graft, command: AgentCommand) -> anyhow::Result<()> {
    match command {
        AgentCommand::Add {
            name,
            cap,
            window,
            harness,
        } => {
            let (agent, token) = graft
                .add_agent(&name, harness.as_deref(), cap, window)
                .await?;
            println!(
                "Created agent {} (cap {}, idle window {} days).",
                agent.name, agent.cap, agent.idle_window_days
            );
            println!("Its token, shown this once (Graft keeps only a hash):");
            println!("{token}");
        }
        AgentCommand::List => {
            let agents = graft.list_agents().await?;
            if agents.is_empty() {
                println!("No agents yet: graft agent add NAME");
            }
            println!(
                "{:<24} {:<14} {:>9} {:>7}  last seen",
                "name", "harness", "set/cap", "window"
            );
            for a in agents {
                let disabled = if a.disabled_at.is_some() {
                    "  (disabled)"
                } else {
                    ""
                };
                println!(
                    "{:<24} {:<14} {:>9} {:>6}d  {}{disabled}",
                    a.name,
                    a.harness.unwrap_or_else(|| "-".into()),
                    format!("{}/{}", a.size, a.cap),
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
        } => {
            let a = graft
                .set_agent(&name, new_name.as_deref(), cap, window)
                .await?;
            println!(
                "Agent {}: cap {}, idle window {} days. The rule applies them at the next sweep.",
                a.name, a.cap, a.idle_window_days
            );
        }
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
        AgentCommand::Rotate { name } => {
            let a = graft.agent_by_name(&name).await?;
            let token = graft.rotate_token(a.id).await?;
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
