//! `graft calls`: the calls log (SPEC §4).

use super::split_tool;
use crate::service::Graft;

/// The arguments of `graft calls`.
#[derive(Debug, clap::Args)]
pub struct CallsArgs {
    /// Only this agent's calls.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only calls of this tool (VENDOR__NAME).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only failed calls (refused by Graft or by the vendor).
    #[arg(long, conflicts_with = "outcome")]
    pub failed: bool,
    /// Only calls with this outcome: ok, failed, approval or dry-run.
    #[arg(long)]
    pub outcome: Option<String>,
    /// How many calls (1–500).
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
}

/// `graft calls` (SPEC §7).
pub(super) async fn calls(graft: &Graft, args: CallsArgs) -> anyhow::Result<()> {
    let CallsArgs {
        agent,
        tool,
        failed,
        outcome,
        limit,
    } = args;
    use crate::service::{CallFilter, CallOutcome};
    let outcome = match (failed, outcome.as_deref()) {
        (true, _) => Some(CallOutcome::Failed),
        (false, None) => None,
        (false, Some(o)) => Some(CallOutcome::parse(o).ok_or_else(|| {
            anyhow::anyhow!("{o:?} is not an outcome: ok, failed, approval or dry-run")
        })?),
    };
    if !(1..=500).contains(&limit) {
        anyhow::bail!("--limit must be between 1 and 500, not {limit}");
    }
    let agent_id = match &agent {
        Some(a) => Some(graft.agent_by_name(a).await?.id),
        None => None,
    };
    let tool_id = match &tool {
        Some(t) => {
            let (vendor, name) = split_tool(t)?;
            match graft.tool(vendor, name).await {
                Ok(t) => Some(t.id),
                Err(crate::service::ServiceError::ToolNotFound(_)) => anyhow::bail!(
                    "no tool {vendor}__{name} in the toolbox: look it up with graft tool search WORDS"
                ),
                Err(e) => return Err(e.into()),
            }
        }
        None => None,
    };
    let filter = CallFilter {
        agent_id,
        tool_id,
        outcome,
        before: None,
    };
    let calls = graft.calls(&filter, limit).await?;
    if calls.is_empty() {
        println!("No calls match.");
    }
    for c in calls {
        let status = c
            .http_status
            .map(|s| format!(" HTTP {s}"))
            .unwrap_or_default();
        let at = chrono::DateTime::from_timestamp_millis(c.at)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        println!(
            "{at}  {:<20} {}__{} v{}  {}{status}  {} ms",
            c.agent,
            c.vendor,
            c.name,
            c.version,
            c.outcome(),
            c.duration_ms
        );
        if let Some(m) = &c.message {
            // the first sentence: an approval's message goes on to what the agent
            // should tell its user
            println!(
                "    {}",
                crate::domain::search::text::first_sentence(m, 200)
            );
        }
        if let Some(i) = &c.input {
            println!("    input {i}");
        }
    }
    Ok(())
}
