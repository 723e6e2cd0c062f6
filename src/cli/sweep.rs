//! `graft sweep`: one sweep now, or a dry run (SPEC §5).

use super::format_time;
use crate::console::words::count;
use crate::domain::Cause;
use crate::service::Graft;
use anyhow::Context;

/// A sweep report in words, for people (`graft sweep`).
pub fn describe_sweep(r: &crate::service::sweep::SweepReport) -> String {
    let when = format_time(Some(r.now));
    let verb = if r.dry_run { "would demote" } else { "demoted" };
    let mut out = String::new();
    if r.agents.is_empty() {
        out.push_str(&format!(
            "Sweep as of {when}{}: nothing to demote ({} working-set entries checked).\n",
            if r.dry_run { " (dry run)" } else { "" },
            r.entries
        ));
        return out;
    }
    out.push_str(&format!(
        "Sweep as of {when}{}: {verb} {} of {} ({} entries checked).\n",
        if r.dry_run {
            " (dry run, nothing changed)"
        } else {
            ""
        },
        count(r.demotions() as i64, "tool"),
        count(r.agents.len() as i64, "agent"),
        r.entries
    ));
    for a in &r.agents {
        out.push_str(&format!(
            "{} (cap {}{}, idle window {}, {} before):\n",
            a.agent,
            a.cap,
            a.token_budget
                .map(|b| format!(", token budget {}", crate::numbers::grouped(b)))
                .unwrap_or_default(),
            count(a.idle_window_days, "day"),
            count(a.before as i64, "tool")
        ));
        for d in &a.demoted {
            let why = match d.cause {
                Cause::Idle => format!(
                    "idle: unused past the idle window (last used {}, promoted {})",
                    format_time(d.last_used_at),
                    format_time(Some(d.promoted_at))
                ),
                Cause::Budget => format!(
                    "budget: over the token budget, never called since its promotion {}",
                    format_time(Some(d.promoted_at))
                ),
                _ => format!(
                    "cap: over the working-set cap, never called since its promotion {}",
                    format_time(Some(d.promoted_at))
                ),
            };
            out.push_str(&format!("  {verb} {}__{}: {why}\n", d.vendor, d.name));
        }
    }
    out
}

/// The arguments of `graft sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Preview a sweep as of this time (RFC 3339, e.g. 2026-12-24T12:00:00Z) instead of
    /// now: what it would demote; nothing changes without --commit.
    #[arg(long)]
    pub at: Option<String>,
    /// With --at: apply that sweep now (its history carries the real time).
    #[arg(long, requires = "at")]
    pub commit: bool,
    /// Only print what the sweep would demote; change nothing.
    #[arg(long, conflicts_with = "commit")]
    pub dry_run: bool,
}

/// `graft sweep` (SPEC §7).
pub(super) async fn sweep(graft: &Graft, args: SweepArgs) -> anyhow::Result<()> {
    let SweepArgs {
        at,
        commit,
        dry_run,
    } = args;
    let Some(t) = at else {
        let report = graft
            .sweep_once(chrono::Utc::now().timestamp_millis(), dry_run)
            .await?;
        print!("{}", describe_sweep(&report));
        if !dry_run {
            audit_sweep(graft, None, &report).await?;
        }
        return Ok(());
    };
    let as_of = chrono::DateTime::parse_from_rfc3339(&t)
        .with_context(|| format!("--at {t:?} is not an RFC 3339 time (e.g. 2026-12-24T12:00:00Z)"))?
        .with_timezone(&chrono::Utc);
    // a sweep as of another time is a preview unless the person commits it (issue 28.4)
    let report = graft
        .sweep_as_of(as_of.timestamp_millis(), dry_run || !commit)
        .await?;
    print!("{}", describe_sweep(&report));
    if !commit && !dry_run {
        println!("(A preview as of {t}: nothing changed. Add --commit to apply it now.)");
    } else if commit {
        println!("(Planned as of {t}, applied now: history records the real time.)");
        audit_sweep(graft, Some(&as_of.to_rfc3339()), &report).await?;
    }
    Ok(())
}

/// Records a sweep the person applied (issue 28.4, 28.8): its detail says how many
/// entries it demoted and, for a sweep planned as of another time, that time.
async fn audit_sweep(
    graft: &Graft,
    as_of: Option<&str>,
    report: &crate::service::sweep::SweepReport,
) -> anyhow::Result<()> {
    let demoted = count(report.demotions() as i64, "working-set entry");
    let detail = match as_of {
        Some(t) => format!("as of {t}: {demoted} demoted"),
        None => format!("{demoted} demoted"),
    };
    graft
        .audit(
            &super::person(),
            crate::domain::audit::AuditAction::SweepRun,
            "all agents",
            Some(&detail),
        )
        .await?;
    Ok(())
}
