//! `graft approval list`, `graft approve`, `graft deny` (SPEC §4.4).

use super::{format_time, person, split_tool};
use crate::service::Graft;
use clap::Subcommand;

/// `graft approval …`
#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// List approvals, pending first.
    List,
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
}

/// `graft approval …` (SPEC §7).
pub(super) async fn approval(graft: &Graft, command: ApprovalCommand) -> anyhow::Result<()> {
    match command {
        ApprovalCommand::List => {
            let all = graft.approvals().await?;
            if all.is_empty() {
                println!("No approvals yet.");
            }
            for a in all {
                let decided = a
                    .decided_by
                    .map(|by| format!(" by {by} {}", format_time(a.decided_at)))
                    .unwrap_or_default();
                let version = a.version.map(|v| format!(" v{v}")).unwrap_or_default();
                let changed = a
                    .changed
                    .map(|c| format!(" (approved before; a new version changed: {c})"))
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
    graft
        .decide_approval_seen(&person(), &agent, vendor, name, true, version)
        .await?;
    println!("Approved: {agent} may run {tool}.");
    Ok(())
}

/// `graft deny` (SPEC §7).
pub(super) async fn deny(graft: &Graft, args: DenyArgs) -> anyhow::Result<()> {
    let DenyArgs { agent, tool } = args;
    let (vendor, name) = split_tool(&tool)?;
    graft
        .decide_approval(&person(), &agent, vendor, name, false)
        .await?;
    println!("Denied: {agent} may not run {tool}.");
    Ok(())
}
