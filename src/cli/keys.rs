//! `graft key rotate`: re-sealing every secret under a new key (SPEC §8).

use crate::config::Settings;
use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;

/// `graft key …`
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Re-seal every stored connection secret under a new random key (in one
    /// transaction), then store the new key where the current one came from: the key file
    /// (GRAFT_SECRET_KEY_FILE, else the data directory's secret.key) is replaced; a key
    /// from GRAFT_SECRET_KEY is printed once for you to set. Stop every `graft serve`
    /// first and start them again after: a running server keeps the old key.
    Rotate {
        /// Confirm (without it, Graft says what rotating would do and changes nothing).
        #[arg(long)]
        yes: bool,
    },
}

/// `graft key …` (SPEC §7).
pub(super) async fn key(
    graft: &Graft,
    settings: &Settings,
    command: KeyCommand,
) -> anyhow::Result<()> {
    match command {
        KeyCommand::Rotate { yes } => {
            let source = settings.key_source();
            let stored = graft
                .connections()
                .await?
                .iter()
                .filter(|c| c.revoked_at.is_none())
                .count();
            let where_ = match &source {
                crate::config::KeySource::Env => {
                    "GRAFT_SECRET_KEY (the new key is printed once)".to_string()
                }
                crate::config::KeySource::File(p) => format!("{} (replaced)", p.display()),
            };
            if !yes {
                anyhow::bail!(
                    "rotating re-seals the secrets of {stored} live connection(s) under a new key kept in {where_}; stop every graft serve first and start them again after; nothing was changed: run again with --yes"
                );
            }
            graft.check_secret_key().await?;
            let new = crate::service::secrets::SecretKey::generate();
            match &source {
                crate::config::KeySource::Env => {
                    let n = graft.reseal_secrets(&new).await?;
                    println!("Re-sealed {n} secret(s). Set GRAFT_SECRET_KEY to this new key (shown once) before starting graft again:");
                    println!("{}", new.to_hex());
                }
                crate::config::KeySource::File(path) => {
                    // the new key is on disk before the secrets move to it, so that no
                    // moment exists where nothing opens them
                    let pending = path.with_extension("key.new");
                    let _ = std::fs::remove_file(&pending);
                    new.write_new(&pending).map_err(anyhow::Error::msg)?;
                    let n = match graft.reseal_secrets(&new).await {
                        Ok(n) => n,
                        Err(e) => {
                            let _ = std::fs::remove_file(&pending);
                            return Err(e.into());
                        }
                    };
                    std::fs::rename(&pending, path).with_context(|| {
                        format!(
                            "the secrets are sealed under the key in {}, which could not replace {}: rename it by hand",
                            pending.display(),
                            path.display()
                        )
                    })?;
                    println!(
                        "Re-sealed {n} secret(s) under a new key, now in {}. Start graft serve again.",
                        path.display()
                    );
                }
            }
        }
    }
    Ok(())
}
