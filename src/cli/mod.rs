//! The `graft` command line (SPEC §7), with clap, over the service layer. Every error is
//! one line on stderr and a non-zero exit.

use crate::config::Settings;
use crate::service::{Graft, SystemClock};
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

/// `println!` that ends the program quietly when standard output is closed (`graft agent
/// list | head`) instead of panicking on the broken pipe.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod agents;
mod approvals;
mod audit;
mod calls;
mod connections;
mod db;
mod keys;
mod serve;
mod sweep;
mod templates;
mod tools;
mod users;
mod vendors;
mod webhook;

pub use agents::AgentCommand;
pub use approvals::{ApprovalCommand, ApproveArgs, DenyArgs};
pub use audit::AuditArgs;
pub use calls::CallsArgs;
pub use connections::ConnectionCommand;
pub use db::DbCommand;
pub use keys::KeyCommand;
pub use sweep::SweepArgs;
pub use templates::TemplateCommand;
pub use tools::{describe_tool, ToolCommand};
pub use users::UserCommand;
pub use vendors::{ImportOpenapiArgs, VendorCommand};
pub use webhook::WebhookCommand;

/// Graft: a tool server for AI agents — one shared toolbox of vendor API tools, a
/// working set per agent, over MCP.
#[derive(Debug, Parser)]
#[command(name = "graft", version, about)]
pub struct Cli {
    /// Directory for Graft's data (the SQLite database). [env: GRAFT_DATA_DIR] [default: data]
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// Database URL. [env: DATABASE_URL] [default: sqlite://<data-dir>/graft.db?mode=rwc]
    #[arg(long, global = true)]
    pub database_url: Option<String>,
    /// The person a decision or change is recorded under (approvals' "decided by", a
    /// version's author). [default: the OS user: $USER, then $LOGNAME]
    #[arg(long = "as", value_name = "NAME", global = true)]
    pub as_person: Option<String>,
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP at /mcp and the console on one port.
    Serve {
        /// Address to listen on. [env: GRAFT_ADDR] [default: 127.0.0.1:3000]
        #[arg(long)]
        addr: Option<String>,
    },
    /// Manage agents.
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Manage starter templates: tool lists the rule promotes for new agents.
    #[command(subcommand)]
    Template(TemplateCommand),
    /// Manage vendors.
    #[command(subcommand)]
    Vendor(VendorCommand),
    /// Import every operation of an OpenAPI document (2.0, 3.0, 3.1; JSON or YAML) as tools.
    ImportOpenapi(ImportOpenapiArgs),
    /// Search, show and annotate toolbox tools.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Manage vendor credentials (secrets are stored encrypted and never shown again).
    #[command(subcommand)]
    Connection(ConnectionCommand),
    /// List approvals of write tools, pending first.
    #[command(subcommand)]
    Approval(ApprovalCommand),
    /// Run one sweep now (the idle rule, then the cap, then the token budget) and print
    /// what it demoted.
    Sweep(SweepArgs),
    /// Let an agent run a write tool (its first call asked for approval).
    Approve(ApproveArgs),
    /// Manage the people who sign in to the console.
    #[command(subcommand)]
    User(UserCommand),
    /// Show the calls log, newest first: every call of every agent (first-class and
    /// through run_tool, dry runs and refused ones) with its outcome and redacted input.
    Calls(CallsArgs),
    /// Refuse an agent the use of a write tool.
    Deny(DenyArgs),
    /// Who did what: each action a person took in the console or here (sign-ins,
    /// imports, removals, revocations, rotations, approvals, denials, setting changes,
    /// publications), newest first.
    Audit(AuditArgs),
    /// The team's webhook: notices of approvals asked for, failing vendors and refused
    /// connections, signed (Standard Webhooks) and retried.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// Database tools.
    #[command(subcommand)]
    Db(DbCommand),
    /// The secret key that seals connection secrets.
    #[command(subcommand)]
    Key(KeyCommand),
}

fn split_tool(qualified: &str) -> anyhow::Result<(&str, &str)> {
    crate::domain::names::split_qualified(qualified).ok_or_else(|| {
        anyhow::anyhow!("{qualified:?} is not VENDOR__NAME (e.g. stripe__post_customers)")
    })
}

/// A database URL without the password of its user info (for messages).
fn without_password(url: &str) -> String {
    // a fragment means an unencoded `#` (in a password, say): not a URL to trust
    if let Ok(mut u) = url::Url::parse(url)
        .map_err(|_| ())
        .and_then(|u| match u.fragment() {
            Some(_) => Err(()),
            None => Ok(u),
        })
    {
        if u.password().is_some() {
            let _ = u.set_password(Some("***"));
        }
        // libpq-style `?password=…` (and `sslpassword`, `passfile`), and anything that
        // may carry one (`options=-c …`), too
        if u.query().is_some() {
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .map(|(k, v)| {
                    let k_low = k.to_ascii_lowercase();
                    let hidden = k_low.contains("pass")
                        || k_low.starts_with("options")
                        || v.to_ascii_lowercase().contains("pass");
                    (
                        k.into_owned(),
                        if hidden { "***".into() } else { v.into_owned() },
                    )
                })
                .collect();
            u.query_pairs_mut().clear().extend_pairs(pairs);
        }
        return u.to_string();
    }
    // not a URL (an unencoded `@` or `#` in the password, say): keep only the scheme and
    // what follows the last `@`
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        _ => url.to_string(),
    }
}

/// The person at the command line (history and approvals record `person:<user>`).
/// Computes the embeddings the toolbox lacks (after an import, or with a new model),
/// with a progress bar on a terminal. Nothing to do without a model.
async fn embed_with_bar(graft: &Graft) -> anyhow::Result<()> {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} texts ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message("embedding the toolbox for semantic search");
    let n = graft
        .embed_toolbox(&mut |done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .await;
    bar.finish_and_clear();
    let n = n?;
    if n > 0 {
        tracing::info!(texts = n, "embedded the toolbox for semantic search");
    }
    Ok(())
}

/// The name `--as` gave, set once when the command line is read.
static AS_PERSON: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The person the CLI acts as (issue 28.6): `--as NAME`, else the OS user ($USER, then
/// $LOGNAME, then the password database's name of the process's user, as `id -un`
/// says), else "cli".
fn person() -> crate::service::Actor {
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty())
    };
    let user = AS_PERSON
        .get()
        .cloned()
        .or_else(|| env("USER"))
        .or_else(|| env("LOGNAME"))
        .or_else(os_user)
        .unwrap_or_else(|| "cli".into());
    crate::service::Actor::Person(user)
}

/// The name of the process's real user in the password database (getpwuid_r(3)), when
/// it has one: a service or a container often runs without $USER and $LOGNAME.
fn os_user() -> Option<String> {
    #[cfg(unix)]
    {
        let mut buf = vec![0 as libc::c_char; 4096];
        // SAFETY: an all-zero passwd is a valid value of a plain C struct; getpwuid_r
        // fills it with pointers into `buf`, which outlives every read below
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer passed is valid for the length given
        let rc = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut found,
            )
        };
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        // SAFETY: pw_name points at a NUL-terminated string inside `buf`
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        let name = name.to_string_lossy().trim().to_string();
        (!name.is_empty()).then_some(name)
    }
    #[cfg(not(unix))]
    None
}

fn format_time(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| "never".into())
}

/// Runs the command line. Errors are returned for `main` to print as one line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    // an MCP vendor's local server runs as Graft's own user: it must not read Graft's
    // environment (its secret key, its database URL) through /proc/<pid>/environ, nor
    // attach to Graft with ptrace; a non-dumpable process allows neither (issue 27.6)
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_DUMPABLE) changes only this process's dumpable flag
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    if let Some(name) = cli.as_person.as_deref().map(str::trim) {
        if name.is_empty()
            || name.chars().count() > 64
            || name
                .chars()
                .any(|c| c.is_control() || crate::domain::markup::hides(c))
        {
            anyhow::bail!(
                "--as takes a person's name: 1 to 64 characters, no control, invisible or direction characters"
            );
        }
        let _ = AS_PERSON.set(name.to_string());
    }
    let addr = match &cli.command {
        Some(Command::Serve { addr }) => addr.clone(),
        _ => None,
    };
    let settings = Settings::from_env(cli.data_dir.clone(), cli.database_url.clone(), addr)
        .map_err(anyhow::Error::msg)?;
    if let (Some(Command::Db(DbCommand::Copy { .. })), Some(file)) = (
        &cli.command,
        crate::db::sqlite_file(&settings.database_url), // arch: db copy
    ) {
        // moving up copies an installation that exists: a mistyped --data-dir must not
        // make a new one
        anyhow::ensure!(
            file.is_file(),
            "there is no SQLite database at {} to copy (is --data-dir or DATABASE_URL right?)",
            file.display()
        );
    }
    if settings.database_url.starts_with("sqlite:") {
        settings.ensure_data_dir().with_context(|| {
            format!(
                "cannot create data directory {}",
                settings.data_dir.display()
            )
        })?;
    }
    let config = settings.service_config().map_err(anyhow::Error::msg)?;
    let graft = Graft::open(&settings.database_url, Arc::new(SystemClock), config)
        .await
        .with_context(|| {
            format!(
                "cannot open the database {}",
                without_password(&settings.database_url)
            )
        })?;
    let command = cli.command.unwrap_or(Command::Serve { addr: None });
    let serving = matches!(command, Command::Serve { .. });
    let result = match command {
        Command::Serve { .. } => serve::serve(graft.clone(), &settings).await,
        Command::Agent(c) => agents::agent(&graft, c).await,
        Command::Template(c) => templates::template(&graft, c).await,
        Command::User(c) => users::user(&graft, c).await,
        Command::Db(c) => db::db(&graft, &settings, c).await,
        Command::Vendor(c) => vendors::vendor(&graft, c).await,
        Command::Connection(c) => connections::connection(&graft, c).await,
        Command::Key(c) => keys::key(&graft, &settings, c).await,
        Command::Approval(c) => approvals::approval(&graft, c).await,
        Command::Tool(c) => tools::tool(&graft, c).await,
        Command::ImportOpenapi(a) => vendors::import_openapi(&graft, a).await,
        Command::Sweep(a) => sweep::sweep(&graft, a).await,
        Command::Approve(a) => approvals::approve(&graft, a).await,
        Command::Calls(a) => calls::calls(&graft, a).await,
        Command::Deny(a) => approvals::deny(&graft, a).await,
        Command::Audit(a) => audit::audit(&graft, a).await,
        Command::Webhook(c) => webhook::webhook(&graft, c).await,
    };
    // a command that read an MCP vendor's tools started its server: it ends here, with
    // its process group, before the process exits (issue 27.4)
    graft.stop_mcp_servers().await;
    // notices the command caused (an approval asked again, a connection test that
    // failed) are posted before the process exits, retries included, within a bound
    if !serving && !graft.flush_notices(NOTICE_FLUSH).await {
        eprintln!(
            "warning: a webhook notice was not delivered within {} s; see graft webhook show",
            NOTICE_FLUSH.as_secs()
        );
    }
    result
}

/// How long a command waits on exit for the webhook notices it caused.
const NOTICE_FLUSH: std::time::Duration = std::time::Duration::from_secs(25);

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn database_urls_are_printed_without_their_passwords() {
        for (url, shown) in [
            (
                "postgres://graft:s3cret@db:5432/graft",
                "postgres://graft:***@db:5432/graft",
            ),
            (
                "postgres://graft:pa%40ss@db/graft",
                "postgres://graft:***@db/graft",
            ),
            (
                "postgres://graft@db/graft?password=s3cret&sslmode=require",
                "postgres://graft@db/graft?password=***&sslmode=require",
            ),
            // not a URL: an unencoded `@` and `/` in the password
            (
                "postgres://graft:p@ss:w/rd#x@db/graft",
                "postgres://***@db/graft",
            ),
            (
                "postgres://graft:s3@cret#x@db/graft",
                "postgres://***@db/graft",
            ),
            (
                "postgres://graft@db/graft?PASS=s3cret",
                "postgres://graft@db/graft?PASS=***",
            ),
            ("sqlite:///tmp/g.db?mode=rwc", "sqlite:///tmp/g.db?mode=rwc"),
        ] {
            let printed = without_password(url);
            assert_eq!(printed, shown);
            assert!(
                !printed.contains("s3cret") && !printed.contains("ss:w"),
                "{printed}"
            );
        }
    }
}
