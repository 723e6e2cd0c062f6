//! `graft approval list`, `graft approve`, `graft deny` (SPEC §4.4).

use super::{format_time, person, split_tool};
use crate::service::Graft;
use clap::Subcommand;

/// `graft approval …`
#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// List approvals, pending first, with the reason of each denial.
    List {
        /// Only this agent's.
        #[arg(long)]
        agent: Option<String>,
        /// Only this vendor's tools'.
        #[arg(long)]
        vendor: Option<String>,
        /// Only those in this state.
        #[arg(long, value_parser = ["pending", "granted", "denied"])]
        state: Option<String>,
    },
    /// Approve a tool for every agent whose approval waits for VERSION.
    ApprovePending {
        /// The tool as VENDOR__NAME.
        tool: String,
        /// The version you looked at (`graft approval list` shows it): refused when a
        /// newer version exists.
        #[arg(long)]
        version: i64,
    },
}

/// The arguments of `graft approve`.
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    pub agent: String,
    /// The tool as VENDOR__NAME.
    pub tool: String,
    /// The version you looked at (`graft approval list` shows it): refused when a
    /// newer version exists.
    #[arg(long)]
    pub version: Option<i64>,
}

/// The arguments of `graft deny`.
#[derive(Debug, clap::Args)]
pub struct DenyArgs {
    pub agent: String,
    /// The tool as VENDOR__NAME.
    pub tool: String,
    /// Why (at most 500 characters): the agent's refused calls say it.
    #[arg(long)]
    pub reason: Option<String>,
}

/// `graft approval …` (SPEC §7).
pub(super) async fn approval(graft: &Graft, command: ApprovalCommand) -> anyhow::Result<()> {
    match command {
        ApprovalCommand::List {
            agent,
            vendor,
            state,
        } => {
            let filter = crate::service::ApprovalFilter {
                agent,
                vendor,
                state: state
                    .map(crate::domain::approval::ApprovalState::try_from)
                    .transpose()
                    .map_err(anyhow::Error::msg)?,
            };
            let all = graft.approvals_where(&filter).await?;
            if all.is_empty() {
                println!("No approvals here.");
            }
            for a in all {
                let decided = a
                    .decided_by
                    .map(|by| {
                        let by = crate::console::words::actor_in_words(&by);
                        format!(" by {by} {}", format_time(a.decided_at))
                    })
                    .unwrap_or_default();
                let version = a.version.map(|v| format!(" v{v}")).unwrap_or_default();
                let approved = a
                    .decisions
                    .first()
                    .is_some_and(|d| d.state == crate::domain::approval::ApprovalState::Granted);
                let said = if approved {
                    "approved before; a new version changed"
                } else {
                    "a new version since it asked changed"
                };
                let changed = a
                    .changed
                    .map(|c| format!(" ({said}: {c})"))
                    .unwrap_or_default();
                println!(
                    "{:<8} {:<20} {}__{}{version}  asked {}{decided}{changed}",
                    a.state.as_str(),
                    a.agent,
                    a.vendor,
                    a.name,
                    format_time(Some(a.requested_at))
                );
                let shown = crate::domain::markup::visible;
                if let (Some(m), Some(p)) = (&a.request.method, &a.request.path) {
                    println!("    {m} {}", shown(p));
                }
                if let Some(i) = &a.request.input {
                    println!("    input of the call that asked {}", shown(i));
                }
                if let Some(r) = a.reason.as_ref().filter(|_| a.state.as_str() == "denied") {
                    println!("    reason the agent is told: {}", shown(r));
                }
            }
        }
        ApprovalCommand::ApprovePending { tool, version } => {
            let (vendor, name) = split_tool(&tool)?;
            let names = graft
                .grant_pending_approvals(&person(), vendor, name, version)
                .await?;
            if names.is_empty() {
                println!("No agent waits for {tool} version {version}.");
            } else {
                println!(
                    "Approved {tool} version {version} for {}.",
                    names.join(", ")
                );
            }
        }
    }
    Ok(())
}

/// `graft approve` (SPEC §7).
pub(super) async fn approve(graft: &Graft, args: ApproveArgs) -> anyhow::Result<()> {
    let ApproveArgs {
        agent,
        tool,
        version,
    } = args;
    let (vendor, name) = split_tool(&tool)?;
    let how = crate::service::DecideHow {
        grant: true,
        seen: version,
        reason: None,
    };
    graft
        .decide_approval_seen(&person(), &agent, vendor, name, &how)
        .await?;
    println!("Approved: {agent} may run {tool}.");
    Ok(())
}

/// `graft deny` (SPEC §7).
pub(super) async fn deny(graft: &Graft, args: DenyArgs) -> anyhow::Result<()> {
    let DenyArgs {
        agent,
        tool,
        reason,
    } = args;
    let (vendor, name) = split_tool(&tool)?;
    let how = crate::service::DecideHow {
        grant: false,
        seen: None,
        reason: reason.as_deref(),
    };
    let row = graft
        .decide_approval_seen(&person(), &agent, vendor, name, &how)
        .await?;
    match row.reason {
        Some(r) => println!("Denied: {agent} may not run {tool}; its calls are told: {r}"),
        None => println!("Denied: {agent} may not run {tool}."),
    }
    Ok(())
}
