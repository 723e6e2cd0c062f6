//! `graft audit`: who did what (issue 28.8), as the console's Audit page shows it.

use crate::service::Graft;

/// The arguments of `graft audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Only this person's actions (a console name, or the CLI's OS user or --as name).
    #[arg(long)]
    pub person: Option<String>,
    /// Only this action, by its stored name (e.g. approval.deny, connection.revoke).
    #[arg(long)]
    pub action: Option<String>,
    /// Only actions whose target contains this text (any letter case).
    #[arg(long)]
    pub target: Option<String>,
    /// Only the last N days (1–3650).
    #[arg(long)]
    pub days: Option<i64>,
    /// How many events, newest first (1–10000).
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    /// Print CSV (RFC 4180, with a header row) instead of lines.
    #[arg(long)]
    pub csv: bool,
}

/// `graft audit` (issue 28.8): the newest events first, one per line, or CSV.
pub(super) async fn audit(graft: &Graft, args: AuditArgs) -> anyhow::Result<()> {
    let max = crate::service::audit::AUDIT_PAGE_MAX;
    if !(1..=max).contains(&args.limit) {
        anyhow::bail!("--limit must be between 1 and {max}, not {}", args.limit);
    }
    let mut q = crate::service::audit::audit_query(
        args.person.as_deref(),
        args.action.as_deref(),
        args.target.as_deref(),
        args.days,
        graft.clock_now(),
    )
    .map_err(anyhow::Error::msg)?;
    q.limit = args.limit;
    let rows = graft.audit_events(&q).await?;
    if args.csv {
        print!("{}", crate::service::audit::audit_csv(&rows));
        return Ok(());
    }
    if rows.is_empty() {
        println!("No action matches.");
    }
    for r in rows {
        let at = chrono::DateTime::from_timestamp_millis(r.at)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        let detail = r.detail.map(|d| format!(" ({d})")).unwrap_or_default();
        println!(
            "{at}  {:<16} {:<26} {}{detail}",
            r.person,
            r.action.as_str(),
            r.target
        );
    }
    Ok(())
}
