//! `graft webhook`: the team's webhook (issue 28.3), as the console's Settings page
//! sets it.

use super::person;
use crate::domain::notify::Format;
use crate::service::notify::SecretChoice;
use crate::service::Graft;

/// `graft webhook …`.
#[derive(Debug, clap::Subcommand)]
pub enum WebhookCommand {
    /// Show the webhook (its URL cut after the first path segment, which can hold a
    /// token, and no secret, unless --secret).
    Show {
        /// Print the whole URL and the signing secret too (for the receiver).
        #[arg(long)]
        secret: bool,
    },
    /// Set the webhook: where notices go, their format and the vendor error threshold.
    /// Prints the secret when Graft made one.
    Set {
        /// Where notices are posted (https://… or http://…) [default: the one set]. A
        /// Slack URL holds a token: pass it in GRAFT_WEBHOOK_URL to keep it out of the
        /// shell's history.
        #[arg(env = "GRAFT_WEBHOOK_URL", hide_env_values = true)]
        url: Option<String>,
        /// `graft` (JSON with type, timestamp, text, data) or `slack` ({"text"})
        /// [default: the one set, else graft].
        #[arg(long)]
        format: Option<String>,
        /// Failed calls of one vendor within 5 minutes that make a notice (1–1000)
        /// [default: the one set, else 5].
        #[arg(long)]
        error_threshold: Option<i64>,
        /// The signing secret to use (whsec_ and base64) [default: the one set, or a new one].
        #[arg(long, env = "GRAFT_WEBHOOK_SECRET", hide_env_values = true)]
        secret: Option<String>,
        /// Make a new signing secret.
        #[arg(long, conflicts_with = "secret")]
        new_secret: bool,
    },
    /// Remove the webhook: no notices are sent after this.
    Clear,
    /// Send a test notice now and say what the receiver answered.
    Test,
}

/// Runs a `graft webhook` command.
pub(super) async fn webhook(graft: &Graft, c: WebhookCommand) -> anyhow::Result<()> {
    match c {
        WebhookCommand::Show { secret } => match graft.webhook().await? {
            None => println!("No webhook is set (graft webhook set URL)."),
            Some(w) => {
                match secret {
                    true => println!(
                        "url              {}",
                        graft.webhook_url().await?.unwrap_or_default()
                    ),
                    false => println!("url              {}", w.url),
                }
                println!("format           {}", w.format.as_str());
                println!(
                    "error threshold  {} failed calls of one vendor within {} minutes",
                    w.error_threshold,
                    crate::service::notify::ERROR_WINDOW_MINUTES
                );
                println!("set by           {}", w.changed_by);
                if secret {
                    println!(
                        "secret           {}",
                        graft.webhook_secret().await?.unwrap_or_default()
                    );
                }
            }
        },
        WebhookCommand::Set {
            url,
            format,
            error_threshold,
            secret,
            new_secret,
        } => {
            let set = graft.webhook().await?;
            let format = match format {
                Some(f) => Format::parse(f.trim())
                    .ok_or_else(|| anyhow::anyhow!("--format is graft or slack, not {f:?}"))?,
                None => set.as_ref().map_or(Format::Graft, |w| w.format),
            };
            let error_threshold = error_threshold
                .or(set.as_ref().map(|w| w.error_threshold))
                .unwrap_or(5);
            let choice = match (secret, new_secret) {
                (Some(s), _) => SecretChoice::Given(s),
                (None, true) => SecretChoice::New,
                (None, false) => SecretChoice::Keep,
            };
            let made = graft
                .set_webhook(
                    &person(),
                    url.as_deref().unwrap_or_default(),
                    format,
                    error_threshold,
                    choice,
                )
                .await?;
            let shown = graft.webhook().await?.map(|w| w.url).unwrap_or_default();
            println!("Notices go to {shown} ({} format).", format.as_str());
            if let Some(s) = made {
                println!("Signing secret (give it to the receiver): {s}");
            }
        }
        WebhookCommand::Clear => {
            if graft.clear_webhook(&person()).await? {
                println!("The webhook is removed.");
            } else {
                println!("No webhook was set.");
            }
        }
        WebhookCommand::Test => match graft.test_webhook(&person()).await? {
            Ok(status) => println!("Delivered: the receiver answered {status}."),
            Err(why) => anyhow::bail!("not delivered: {why}"),
        },
    }
    Ok(())
}
