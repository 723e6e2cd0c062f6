//! `graft user …`: the people who sign in to the console (SPEC §6, §7).

use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;

/// `graft user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a person who can sign in to the console. The password is prompted for (twice),
    /// or read from the first line of standard input with --password-stdin.
    Add {
        /// Sign-in name.
        name: String,
        /// Read the password from standard input (for scripts).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Remove a person: they can no longer sign in, and their sessions end.
    Remove {
        /// Sign-in name.
        name: String,
    },
    /// Set a person's password (prompted, or --password-stdin); their sessions end.
    Password {
        /// Sign-in name.
        name: String,
        /// Read the password from standard input (for scripts).
        #[arg(long)]
        password_stdin: bool,
    },
}

/// A new password: the first line of standard input, or prompted twice on the terminal.
fn read_new_password(from_stdin: bool) -> anyhow::Result<String> {
    if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .context("cannot read the password from standard input")?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_string());
    }
    let first = rpassword::prompt_password("Password: ").context("cannot read the password")?;
    let second = rpassword::prompt_password("Again: ").context("cannot read the password")?;
    if first != second {
        anyhow::bail!("the two passwords differ; nothing changed");
    }
    Ok(first)
}

/// `graft user …` (SPEC §7).
pub(super) async fn user(graft: &Graft, command: UserCommand) -> anyhow::Result<()> {
    match command {
        UserCommand::Add {
            name,
            password_stdin,
        } => {
            let password = read_new_password(password_stdin)?;
            let person = graft.add_user(&name, &password).await?;
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::UserAdd,
                    &person.name,
                    None,
                )
                .await?;
            println!(
                "Added user {}: they can sign in to the console now.",
                person.name
            );
        }
        UserCommand::Remove { name } => {
            graft.remove_user(&name).await?;
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::UserRemove,
                    &name,
                    None,
                )
                .await?;
            println!("Removed user {name}; their sessions have ended.");
        }
        UserCommand::Password {
            name,
            password_stdin,
        } => {
            let password = read_new_password(password_stdin)?;
            graft.reset_password(&name, &password).await?;
            graft
                .audit(
                    &super::person(),
                    crate::domain::audit::AuditAction::PasswordChange,
                    &name,
                    Some("set on the command line"),
                )
                .await?;
            println!("Changed the password of {name}.");
        }
    }
    Ok(())
}
