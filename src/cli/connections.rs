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
        /// When the vendor has a live connection already: the new one becomes the
        /// vendor's default (its tools without a default of their own use it).
        #[arg(long, conflicts_with = "keep_default")]
        default: bool,
        /// When the vendor has a live connection already: calls keep using the current
        /// one (which becomes the default if there was none).
        #[arg(long)]
        keep_default: bool,
    },
    /// Make a connection its vendor's default: the vendor's tools without a default of
    /// their own use it (`--none` clears it).
    Default {
        /// Vendor slug.
        vendor: String,
        /// The connection's label.
        #[arg(required_unless_present = "none")]
        label: Option<String>,
        /// Clear the vendor's default.
        #[arg(long)]
        none: bool,
    },
    /// Replace a connection's secret in place (a rotated key): calls use the new one at
    /// once. The secret comes from an environment variable or standard input.
    Replace {
        /// Connection id (from `graft connection list`).
        id: i64,
        /// Read the new secret from this environment variable.
        #[arg(
            long,
            conflicts_with = "secret_stdin",
            required_unless_present = "secret_stdin"
        )]
        secret_env: Option<String>,
        /// Read the new secret from standard input (first line).
        #[arg(long)]
        secret_stdin: bool,
    },
    /// Try a connection with one harmless read of its vendor (a GET that takes no input),
    /// or, for an MCP vendor, a read of its server's tools.
    Test {
        /// Connection id (from `graft connection list`).
        id: i64,
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
            default,
            keep_default,
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
            use crate::service::connection_care::DefaultChoice;
            let choice = match (default, keep_default) {
                (true, _) => Some(DefaultChoice::New),
                (_, true) => Some(DefaultChoice::Current),
                _ => None,
            };
            let c = graft
                .add_connection_choosing(
                    &person(),
                    &vendor,
                    &label,
                    &kind,
                    name.as_deref(),
                    secret.as_deref(),
                    choice,
                )
                .await
                .map_err(|e| match e {
                    crate::service::ServiceError::Invalid(m) if m.contains("say which one") => {
                        anyhow::anyhow!("{m}: add --default (the new one) or --keep-default (the current one); nothing was added")
                    }
                    e => e.into(),
                })?;
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
                "{:>4}  {:<16} {:<20} {:<7} {:<16} {:<22} state",
                "id", "vendor", "label", "kind", "name", "last used"
            );
            for c in graft.connections().await? {
                let mut state = match c.revoked_at {
                    Some(t) => format!("revoked {}", format_time(Some(t))),
                    None => "active".into(),
                };
                if c.vendor_default {
                    state.push_str(", the vendor's default");
                }
                if let Some(t) = c.secret_replaced_at {
                    state.push_str(&format!(", secret replaced {}", format_time(Some(t))));
                }
                println!(
                    "{:>4}  {:<16} {:<20} {:<7} {:<16} {:<22} {state}",
                    c.id,
                    c.vendor,
                    c.label,
                    c.auth_kind,
                    c.name.unwrap_or_else(|| "-".into()),
                    format_time(c.last_used_at)
                );
            }
        }
        ConnectionCommand::Default {
            vendor,
            label,
            none,
        } => {
            let label = label.filter(|_| !none);
            graft
                .set_vendor_default_connection(&person(), &vendor, label.as_deref())
                .await?;
            match label {
                Some(l) => println!("{vendor}'s tools without a default of their own now use {l}."),
                None => println!("{vendor} has no default connection now."),
            }
        }
        ConnectionCommand::Replace {
            id,
            secret_env,
            secret_stdin,
        } => {
            let secret = if let Some(var) = secret_env {
                std::env::var(&var)
                    .with_context(|| format!("environment variable {var} is not set"))?
            } else {
                let _ = secret_stdin;
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .context("cannot read the secret from standard input")?;
                line
            };
            let c = graft
                .replace_connection_secret(&person(), id, &secret)
                .await?;
            println!(
                "Replaced the secret of connection {} ({}) of {}: calls use the new one now; the old one is deleted.",
                c.id, c.label, c.vendor
            );
        }
        ConnectionCommand::Test { id } => {
            let t = graft.test_connection(&person(), id).await?;
            println!("{}", t.message);
            if !t.ok {
                anyhow::bail!("the connection test did not pass");
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
