//! `graft connection …`: vendor credentials (SPEC §4.3, §7).

use super::{format_time, person};
use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;

/// `graft connection …`
#[derive(Debug, Subcommand)]
pub enum ConnectionCommand {
    /// Add a connection to a vendor. The secret comes from an environment variable or
    /// standard input, never from the command line.
    Add {
        /// Vendor slug.
        vendor: String,
        /// A label, unique per vendor.
        #[arg(long)]
        label: String,
        /// none, bearer, header, query or basic (secret "user:password"); env for a
        /// local MCP server (one environment variable of its process).
        #[arg(long)]
        kind: String,
        /// The header, query parameter or environment variable that carries the secret
        /// (header, query, env).
        #[arg(long)]
        name: Option<String>,
        /// Read the secret from this environment variable.
        #[arg(long, conflicts_with = "secret_stdin")]
        secret_env: Option<String>,
        /// Read the secret from standard input (first line).
        #[arg(long)]
        secret_stdin: bool,
    },
    /// List connections (without secrets).
    List,
    /// Revoke a connection: calls that use it answer connection_revoked; its secret is
    /// deleted.
    Revoke {
        /// Connection id (from `graft connection list`).
        id: i64,
    },
    /// Confirm a vendor's connections at its new base URL: after its base URL moved to
    /// another origin (scheme, host or port), they send nothing until confirmed.
    Confirm {
        /// Vendor slug.
        vendor: String,
    },
}

/// `graft connection …` (SPEC §7).
pub(super) async fn connection(graft: &Graft, command: ConnectionCommand) -> anyhow::Result<()> {
    match command {
        ConnectionCommand::Add {
            vendor,
            label,
            kind,
            name,
            secret_env,
            secret_stdin,
        } => {
            let secret = if let Some(var) = secret_env {
                Some(
                    std::env::var(&var)
                        .with_context(|| format!("environment variable {var} is not set"))?,
                )
            } else if secret_stdin {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .context("cannot read the secret from standard input")?;
                Some(line)
            } else {
                None
            };
            let c = graft
                .add_connection(&vendor, &label, &kind, name.as_deref(), secret.as_deref())
                .await?;
            println!(
                "Added connection {} ({} {}) to {}{}",
                c.id,
                c.label,
                c.auth_kind,
                c.vendor,
                if c.auth_kind == "none" {
                    "."
                } else {
                    "; the secret is stored encrypted."
                }
            );
        }
        ConnectionCommand::List => {
            println!(
                "{:>4}  {:<16} {:<20} {:<7} {:<16} state",
                "id", "vendor", "label", "kind", "name"
            );
            for c in graft.connections().await? {
                let state = match c.revoked_at {
                    Some(t) => format!("revoked {}", format_time(Some(t))),
                    None => "active".into(),
                };
                println!(
                    "{:>4}  {:<16} {:<20} {:<7} {:<16} {state}",
                    c.id,
                    c.vendor,
                    c.label,
                    c.auth_kind,
                    c.name.unwrap_or_else(|| "-".into())
                );
            }
        }
        ConnectionCommand::Revoke { id } => {
            let (c, demoted) = graft.revoke_connection(&person(), id).await?;
            println!("Revoked connection {} ({}) of {}; its secret is deleted; demoted {demoted} working-set entries that used it.", c.id, c.label, c.vendor);
        }
        ConnectionCommand::Confirm { vendor } => {
            let v = graft.live_vendor(&vendor).await?;
            let n = graft.confirm_connections(&person(), &vendor).await?;
            println!(
                "Confirmed {} of {} at {}: calls use {} again.",
                if n == 1 {
                    "1 connection".to_string()
                } else {
                    format!("{n} connections")
                },
                v.slug,
                crate::service::origin_of(&v.base_url),
                if n == 1 { "it" } else { "them" }
            );
        }
    }
    Ok(())
}
