//! `graft db …`: moving an installation from SQLite to PostgreSQL (SPEC §9).

use super::without_password;
use crate::config::Settings;
use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;

/// `graft db …`
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy this SQLite database into an empty PostgreSQL database (every table, in one
    /// transaction; the counts are checked), to move an installation up to several
    /// instances. Stop Graft first. Connection secrets stay sealed: serve the copy with
    /// the same secret key (GRAFT_SECRET_KEY, or the data directory's secret.key).
    Copy {
        /// The PostgreSQL database to fill: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.
        /// Better left out: then it is read from GRAFT_COPY_TO, or asked for on the
        /// terminal (a password on the command line stays in shell history and the
        /// process list).
        #[arg(long)]
        to: Option<String>,
    },
}

/// `graft db …` (SPEC §7).
pub(super) async fn db(
    graft: &Graft,
    settings: &Settings,
    command: DbCommand,
) -> anyhow::Result<()> {
    match command {
        DbCommand::Copy { to } => {
            let to = match to {
                Some(to) => {
                    if url::Url::parse(&to).is_ok_and(|u| u.password().is_some()) {
                        eprintln!("note: the database password is on the command line (shell history, the process list); next time give the URL in GRAFT_COPY_TO or at the prompt");
                    }
                    to
                }
                None => match std::env::var("GRAFT_COPY_TO")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                {
                    Some(to) => to,
                    None => rpassword::prompt_password(
                        "PostgreSQL URL to copy into (postgres://…, not echoed): ",
                    )
                    .context("no --to, no GRAFT_COPY_TO, and no terminal to ask on")?
                    .trim()
                    .to_string(),
                },
            };
            if !(to.starts_with("postgres:") || to.starts_with("postgresql:")) {
                anyhow::bail!("--to must be a PostgreSQL URL (postgres://…)");
            }
            if graft.pool().backend() != crate::service::Backend::Sqlite {
                anyhow::bail!(
                    "graft db copy copies from SQLite; this installation is on {}",
                    graft.pool().backend().as_str()
                );
            }
            let target = crate::db::connect(&to) // arch: db copy
                .await
                .with_context(|| format!("cannot open the database {}", without_password(&to)))?;
            let copied = crate::db::copy::copy_sqlite_to_postgres(graft.pool(), &target) // arch: db copy
                .await
                .context("the copy failed")?;
            target.close().await;
            println!(
                "Copied {} into {} (counts checked on both sides):",
                without_password(&settings.database_url),
                without_password(&to)
            );
            for c in &copied {
                println!("  {:<14} {:>9}", c.table, c.rows);
            }
            println!(
                "Serve it with DATABASE_URL={} and the same secret key (GRAFT_SECRET_KEY, or {}); console users sign in again.",
                without_password(&to),
                settings.data_dir.join("secret.key").display()
            );
        }
    }
    Ok(())
}
