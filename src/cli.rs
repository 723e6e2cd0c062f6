//! The `graft` command line (SPEC §7), with clap, over the service layer. Every error is
//! one line on stderr and a non-zero exit.

use crate::config::Settings;
use crate::server::Application;
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
    /// Manage vendors.
    #[command(subcommand)]
    Vendor(VendorCommand),
    /// Import every operation of an OpenAPI document (2.0, 3.0, 3.1; JSON or YAML) as tools.
    ImportOpenapi {
        /// The document.
        file: PathBuf,
        /// The vendor the tools belong to (created when missing).
        #[arg(long)]
        vendor: String,
        /// Base URL of the vendor's API (default: the document's server).
        #[arg(long)]
        base_url: Option<String>,
        /// Confirm a --base-url that moves an existing vendor to another origin (its
        /// connections are suspended until confirmed there, its approvals go back to
        /// pending).
        #[arg(long)]
        yes: bool,
    },
    /// Search, show and annotate toolbox tools.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Manage vendor credentials (secrets are stored encrypted and never shown again).
    #[command(subcommand)]
    Connection(ConnectionCommand),
    /// List approvals of write tools, pending first.
    #[command(subcommand)]
    Approval(ApprovalCommand),
    /// Run one sweep now (the idle rule, then the cap rule) and print what it demoted.
    Sweep {
        /// Sweep as of this time (RFC 3339, e.g. 2026-12-24T12:00:00Z) instead of now.
        #[arg(long)]
        at: Option<String>,
        /// Only print what the sweep would demote; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Let an agent run a write tool (its first call asked for approval).
    Approve {
        /// Agent name.
        agent: String,
        /// The tool as VENDOR__NAME.
        tool: String,
        /// The version you looked at (`graft approval list` shows it): refused when a
        /// newer version exists.
        #[arg(long)]
        version: Option<i64>,
    },
    /// Manage the people who sign in to the console.
    #[command(subcommand)]
    User(UserCommand),
    /// Show the calls log, newest first: every call of every agent (first-class and
    /// through run_tool, dry runs and refused ones) with its outcome and redacted input.
    Calls {
        /// Only this agent's calls.
        #[arg(long)]
        agent: Option<String>,
        /// Only calls of this tool (VENDOR__NAME).
        #[arg(long)]
        tool: Option<String>,
        /// Only failed calls (refused by Graft or by the vendor).
        #[arg(long, conflicts_with = "outcome")]
        failed: bool,
        /// Only calls with this outcome: ok, failed, approval or dry-run.
        #[arg(long)]
        outcome: Option<String>,
        /// How many calls (1–500).
        #[arg(long, default_value_t = 20)]
        limit: i64,
    },
    /// Refuse an agent the use of a write tool.
    Deny {
        /// Agent name.
        agent: String,
        /// The tool as VENDOR__NAME.
        tool: String,
    },
    /// Database tools.
    #[command(subcommand)]
    Db(DbCommand),
    /// The secret key that seals connection secrets.
    #[command(subcommand)]
    Key(KeyCommand),
}

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
        /// none, bearer, header, query or basic (secret "user:password").
        #[arg(long)]
        kind: String,
        /// The header or query parameter that carries the secret (header, query).
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

/// `graft approval …`
#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// List approvals, pending first.
    List,
}

fn split_tool(qualified: &str) -> anyhow::Result<(&str, &str)> {
    crate::domain::names::split_qualified(qualified).ok_or_else(|| {
        anyhow::anyhow!("{qualified:?} is not VENDOR__NAME (e.g. stripe__post_customers)")
    })
}

/// `graft agent …`
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Create an agent and print its token (shown once).
    Add {
        /// Unique name.
        name: String,
        /// Working-set cap, 1 to 500.
        #[arg(long)]
        cap: Option<i64>,
        /// Idle window in days, 1 to 3650.
        #[arg(long)]
        window: Option<i64>,
        /// Harness label (claude-code, cursor, hermes, …).
        #[arg(long)]
        harness: Option<String>,
    },
    /// List agents.
    List,
    /// Change an agent's name, cap or idle window (the rule reads them at the next sweep).
    Set {
        /// Current name.
        name: String,
        /// New name.
        #[arg(long = "name")]
        new_name: Option<String>,
        /// Working-set cap, 1 to 500.
        #[arg(long)]
        cap: Option<i64>,
        /// Idle window in days, 1 to 3650.
        #[arg(long)]
        window: Option<i64>,
    },
}

/// `graft vendor …`
#[derive(Debug, Subcommand)]
pub enum VendorCommand {
    /// Create a vendor.
    Add {
        /// Slug: a-z, 0-9 and '-', at most 31 characters.
        slug: String,
        /// Base URL of its API.
        #[arg(long)]
        base_url: String,
        /// Display name.
        #[arg(long)]
        name: Option<String>,
        /// Keep this OpenAPI document on the vendor without importing its operations;
        /// agents acquire the operations they need.
        #[arg(long)]
        openapi: Option<PathBuf>,
    },
    /// List vendors.
    List,
    /// Change a vendor: its name, its base URL, or whether it is enabled. Disabling
    /// demotes its tools from every working set and refuses their calls until enabled.
    Set {
        /// The vendor's slug.
        slug: String,
        /// New display name.
        #[arg(long)]
        name: Option<String>,
        /// New base URL (absolute http or https).
        #[arg(long)]
        base_url: Option<String>,
        /// Disable the vendor.
        #[arg(long, conflicts_with = "enable")]
        disable: bool,
        /// Enable the vendor again.
        #[arg(long)]
        enable: bool,
        /// Mark the vendor internal: its calls may go to private and link-local
        /// addresses (never otherwise).
        #[arg(long, conflicts_with = "no_internal")]
        internal: bool,
        /// Take the internal mark off.
        #[arg(long)]
        no_internal: bool,
        /// A parameter of the vendor's operations that carries the connection's secret
        /// although the document declares it as an ordinary one (Slack's `token`);
        /// repeatable. Its tools are imported again from the stored document: the
        /// parameter is no longer an input, and the secret is put in it.
        #[arg(long = "credential-param", conflicts_with = "no_credential_params")]
        credential_param: Vec<String>,
        /// Forget the credential parameters: only the security schemes' carry the secret.
        #[arg(long)]
        no_credential_params: bool,
        /// Confirm a base URL on another origin (scheme, host or port): the vendor's
        /// connections are suspended until confirmed there and its approvals go back to
        /// pending. Without it Graft says so and changes nothing.
        #[arg(long)]
        yes: bool,
    },
    /// Remove a vendor: its tools are demoted from every working set and refuse calls,
    /// its connections are revoked (secrets dropped) and it leaves the lists; its tools,
    /// calls and history stay for the record. Importing its document again brings it
    /// back.
    Remove {
        /// The vendor's slug.
        slug: String,
        /// Confirm (without it, Graft says what removing would do and changes nothing).
        #[arg(long)]
        yes: bool,
    },
}

/// `graft tool …`
#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Search the toolbox as find_tool does: one line per hit, `VENDOR__NAME  SCORE  DESCRIPTION`, best first.
    Search {
        /// Words to look for.
        query: String,
        /// Most hits to show (1 to 50).
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Show a tool: every version with what changed, hints, notes, the agents that have it.
    Show {
        /// VENDOR__NAME.
        tool: String,
    },
    /// Add a note to a tool (kept forever).
    Note {
        /// VENDOR__NAME.
        tool: String,
        /// The note.
        text: String,
    },
    /// Set a tool's hints (a new version; agents cannot do this).
    Hints {
        /// VENDOR__NAME.
        tool: String,
        /// readOnlyHint.
        #[arg(long)]
        read_only: Option<bool>,
        /// destructiveHint.
        #[arg(long)]
        destructive: Option<bool>,
        /// idempotentHint.
        #[arg(long)]
        idempotent: Option<bool>,
        /// openWorldHint.
        #[arg(long)]
        open_world: Option<bool>,
    },
    /// Publish a new version of a tool as a person (agents may publish only tools they
    /// authored): give any field to change. A change of what the call does (method,
    /// path, where inputs go, body encoding) sets the tool's approvals back to pending.
    Publish {
        /// VENDOR__NAME.
        tool: String,
        /// New description.
        #[arg(long)]
        description: Option<String>,
        /// New HTTP method.
        #[arg(long)]
        method: Option<String>,
        /// New path template (after the vendor's base URL), e.g. /v1/items/{id}.
        #[arg(long)]
        path: Option<String>,
        /// A file holding the new input schema (JSON).
        #[arg(long, value_name = "FILE")]
        input_schema: Option<std::path::PathBuf>,
        /// Input properties sent as query parameters (comma-separated).
        #[arg(long, value_delimiter = ',')]
        query: Option<Vec<String>>,
        /// Input properties sent as headers (comma-separated).
        #[arg(long, value_delimiter = ',')]
        headers: Option<Vec<String>>,
        /// Body encoding: json or form.
        #[arg(long)]
        body_encoding: Option<String>,
    },
    /// Set the connection a tool's calls use (default: the vendor's only active one).
    Connection {
        /// VENDOR__NAME.
        tool: String,
        /// Connection id, or "none" to clear.
        connection: String,
    },
}

/// A tool in words (`graft tool show`): current version, every version with what
/// changed from the one before, notes, and the agents that have it promoted.
pub fn describe_tool(d: &crate::service::authoring::ToolDetail) -> String {
    let t = &d.tool;
    let mut out = format!(
        "{}__{} (version {} of {})\n",
        t.vendor,
        t.name,
        t.version,
        d.versions.len()
    );
    if let Some(op) = &t.operation_id {
        out.push_str(&format!("  operation: {op}\n"));
    }
    out.push_str(&format!("  {} {}\n", t.method, t.path_template));
    match &d.connection {
        Some((label, why)) => out.push_str(&format!("  connection: {label} ({why})\n")),
        None => out.push_str("  connection: none (calls carry no credential)\n"),
    }
    out.push_str(&format!(
        "  hints: readOnly={} destructive={} idempotent={} openWorld={}\n",
        t.read_only_hint, t.destructive_hint, t.idempotent_hint, t.open_world_hint
    ));
    out.push_str(&format!(
        "  {}\n",
        t.description.lines().next().unwrap_or("")
    ));
    out.push_str("Versions:\n");
    let mut prev: Option<&crate::db::VersionRow> = None;
    for (i, v) in d.versions.iter().enumerate() {
        let mut changes = Vec::new();
        if let Some(p) = prev {
            if p.description != v.description {
                changes.push("description".to_string());
            }
            if p.method != v.method || p.path_template != v.path_template {
                changes.push(format!(
                    "{} {} -> {} {}",
                    p.method, p.path_template, v.method, v.path_template
                ));
            }
            if p.input_schema != v.input_schema {
                changes.push("input schema".to_string());
            }
            if p.binding != v.binding {
                changes.push("binding".to_string());
            }
            if (
                p.read_only_hint,
                p.destructive_hint,
                p.idempotent_hint,
                p.open_world_hint,
            ) != (
                v.read_only_hint,
                v.destructive_hint,
                v.idempotent_hint,
                v.open_world_hint,
            ) {
                changes.push("hints".to_string());
            }
        }
        let what = if prev.is_none() {
            "first version".to_string()
        } else if changes.is_empty() {
            "no change".into()
        } else {
            format!("changed: {}", changes.join(", "))
        };
        out.push_str(&format!(
            "  v{} {} by {}: {what}\n",
            v.version,
            format_time(Some(v.created_at)),
            d.authors
                .get(i)
                .cloned()
                .unwrap_or_else(|| v.authored_by.clone())
        ));
        prev = Some(v);
    }
    out.push_str("Notes:\n");
    if d.notes.is_empty() {
        out.push_str("  (none)\n");
    }
    for n in &d.notes {
        out.push_str(&format!(
            "  {} {}: {}\n",
            format_time(Some(n.created_at)),
            n.author,
            n.body
        ));
    }
    out.push_str("Promoted for:\n");
    if d.promoted_for.is_empty() {
        out.push_str("  (no agent)\n");
    }
    for (_, name, by) in &d.promoted_for {
        out.push_str(&format!("  {name} (promoted by {by})\n"));
    }
    out
}

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
        "Sweep as of {when}{}: {verb} {} tools of {} agents ({} entries checked).\n",
        if r.dry_run {
            " (dry run, nothing changed)"
        } else {
            ""
        },
        r.demotions(),
        r.agents.len(),
        r.entries
    ));
    for a in &r.agents {
        out.push_str(&format!(
            "{} (cap {}, idle window {} days, {} tools before):\n",
            a.agent, a.cap, a.idle_window_days, a.before
        ));
        for d in &a.demoted {
            let why = match d.cause.as_str() {
                "idle" => format!(
                    "idle: unused past the idle window (last used {}, promoted {})",
                    format_time(d.last_used_at),
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

fn person() -> crate::service::Actor {
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "cli".into());
    crate::service::Actor::Person(user)
}

fn format_time(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| "never".into())
}

/// Runs the command line. Errors are returned for `main` to print as one line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let addr = match &cli.command {
        Some(Command::Serve { addr }) => addr.clone(),
        _ => None,
    };
    let settings = Settings::from_env(cli.data_dir.clone(), cli.database_url.clone(), addr)
        .map_err(anyhow::Error::msg)?;
    if let (Some(Command::Db(DbCommand::Copy { .. })), Ok(o)) = (
        &cli.command,
        <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(&settings.database_url),
    ) {
        // moving up copies an installation that exists: a mistyped --data-dir must not
        // make a new one
        anyhow::ensure!(
            o.get_filename().is_file(),
            "there is no SQLite database at {} to copy (is --data-dir or DATABASE_URL right?)",
            o.get_filename().display()
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
    match cli.command.unwrap_or(Command::Serve { addr: None }) {
        Command::Serve { .. } => {
            graft.check_secret_key().await?;
            if settings.secret_key_file.is_some() && settings.data_dir.join("secret.key").exists() {
                tracing::warn!(
                    old = %settings.data_dir.join("secret.key").display(),
                    "GRAFT_SECRET_KEY_FILE is set, but a key file is still beside the database: delete it once Graft runs with the new one (a copy of the data directory would otherwise still open the secrets it sealed)"
                );
            }
            let status = graft.search_status();
            match &status.model {
                Some(model) => {
                    tracing::info!(%model, "search ranks by words and meaning (sentence embeddings)")
                }
                None => tracing::warn!(
                    model_dir = %settings.default_model_dir().display(),
                    "search is lexical-only: no embedding model (run scripts/get-model.sh, or set GRAFT_EMBEDDING_MODEL)"
                ),
            }
            // embeddings a new model or another process's import lack, before serving
            embed_with_bar(&graft).await?;
            if let Some(password) = graft.ensure_admin().await? {
                tracing::warn!(
                    "created the console user admin with password {password} (shown this once; change it on the Account page)"
                );
            }
            let listener = tokio::net::TcpListener::bind(settings.addr)
                .await
                .with_context(|| format!("cannot listen on {}", settings.addr))?;
            let app = Application::build(&settings, graft, listener).await?;
            let mut addr = app.local_addr()?;
            if !addr.ip().is_loopback()
                && settings.public_url.is_none()
                && settings.allowed_hosts.is_empty()
            {
                tracing::warn!(
                    %addr,
                    "the console and /mcp answer only requests addressed to loopback names (localhost, 127.0.0.1): set GRAFT_PUBLIC_URL, or GRAFT_ALLOWED_HOSTS, to the name clients use to reach this machine"
                );
            }
            if addr.ip().is_unspecified() {
                // the address to print is one a browser can open here
                addr.set_ip(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
            }
            let https = settings
                .public_url
                .as_deref()
                .is_some_and(|u| u.starts_with("https://"));
            if !https && !addr.ip().is_loopback() {
                tracing::warn!(
                    %addr,
                    "the console is served over plain HTTP on an address others can reach: passwords and the session cookie cross the network in the clear, and the cookie goes to every port of this host. Put Graft behind HTTPS and set GRAFT_PUBLIC_URL=https://… (sessions over plain HTTP end after {} idle hours)",
                    crate::console::server::PLAIN_HTTP_IDLE_HOURS
                );
            }
            tracing::info!(%addr, "graft serving MCP at http://{addr}/mcp and the console at http://{addr}/");
            app.run().await?;
            tracing::info!("graft stopped");
        }
        Command::Agent(AgentCommand::Add {
            name,
            cap,
            window,
            harness,
        }) => {
            let (agent, token) = graft
                .add_agent(&name, harness.as_deref(), cap, window)
                .await?;
            println!(
                "Created agent {} (cap {}, idle window {} days).",
                agent.name, agent.cap, agent.idle_window_days
            );
            println!("Its token, shown this once (Graft keeps only a hash):");
            println!("{token}");
        }
        Command::User(UserCommand::Add {
            name,
            password_stdin,
        }) => {
            let password = read_new_password(password_stdin)?;
            let person = graft.add_user(&name, &password).await?;
            println!(
                "Added user {}: they can sign in to the console now.",
                person.name
            );
        }
        Command::User(UserCommand::Remove { name }) => {
            graft.remove_user(&name).await?;
            println!("Removed user {name}; their sessions have ended.");
        }
        Command::User(UserCommand::Password {
            name,
            password_stdin,
        }) => {
            let password = read_new_password(password_stdin)?;
            graft.reset_password(&name, &password).await?;
            println!("Changed the password of {name}.");
        }
        Command::Agent(AgentCommand::List) => {
            let agents = graft.list_agents().await?;
            if agents.is_empty() {
                println!("No agents yet: graft agent add NAME");
            }
            println!(
                "{:<24} {:<14} {:>9} {:>7}  last seen",
                "name", "harness", "set/cap", "window"
            );
            for a in agents {
                println!(
                    "{:<24} {:<14} {:>9} {:>6}d  {}",
                    a.name,
                    a.harness.unwrap_or_else(|| "-".into()),
                    format!("{}/{}", a.size, a.cap),
                    a.idle_window_days,
                    format_time(a.last_seen_at)
                );
            }
        }
        Command::Agent(AgentCommand::Set {
            name,
            new_name,
            cap,
            window,
        }) => {
            let a = graft
                .set_agent(&name, new_name.as_deref(), cap, window)
                .await?;
            println!(
                "Agent {}: cap {}, idle window {} days. The rule applies them at the next sweep.",
                a.name, a.cap, a.idle_window_days
            );
        }
        Command::Db(DbCommand::Copy { to }) => {
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
            if graft.pool().backend() != crate::db::Backend::Sqlite {
                anyhow::bail!(
                    "graft db copy copies from SQLite; this installation is on {}",
                    graft.pool().backend().as_str()
                );
            }
            let target = crate::db::connect(&to)
                .await
                .with_context(|| format!("cannot open the database {}", without_password(&to)))?;
            let copied = crate::db::copy::copy_sqlite_to_postgres(graft.pool(), &target)
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
        Command::Sweep { at, dry_run } => {
            let now = match at {
                Some(t) => chrono::DateTime::parse_from_rfc3339(&t)
                    .with_context(|| {
                        format!("--at {t:?} is not an RFC 3339 time (e.g. 2026-12-24T12:00:00Z)")
                    })?
                    .with_timezone(&chrono::Utc),
                None => chrono::Utc::now(),
            };
            let report = graft.sweep_once(now.timestamp_millis(), dry_run).await?;
            print!("{}", describe_sweep(&report));
        }
        Command::Vendor(VendorCommand::Add {
            slug,
            base_url,
            name,
            openapi,
        }) => {
            let text = match &openapi {
                Some(f) => Some(
                    std::fs::read_to_string(f)
                        .with_context(|| format!("cannot read {}", f.display()))?,
                ),
                None => None,
            };
            if let Some(t) = &text {
                // check the document before creating anything
                crate::domain::openapi::parse_document(t)
                    .and_then(|d| crate::domain::openapi::spec_version(&d).map(|_| ()))
                    .map_err(anyhow::Error::msg)?;
            }
            let back = graft.removed_vendor_tools(&slug).await?;
            let v = graft.add_vendor(&slug, name.as_deref(), &base_url).await?;
            match back {
                Some(n) => println!(
                    "Brought back the removed vendor {} ({}) at {}: its {} are in search again; its connections stay revoked.",
                    v.slug,
                    v.display_name,
                    v.base_url,
                    crate::console::components::count(n, "tool")
                ),
                None => println!(
                    "Created vendor {} ({}) at {}.",
                    v.slug, v.display_name, v.base_url
                ),
            }
            if let Some(t) = text {
                let n = graft.store_document(&v.slug, &t).await?;
                embed_with_bar(&graft).await?;
                println!("Stored its OpenAPI document ({n} operations) without importing them: agents acquire the ones they need.");
            }
        }
        Command::Vendor(VendorCommand::List) => {
            let vendors = graft.vendors().await?;
            let removed = graft.removed_vendors().await?;
            if vendors.is_empty() && removed.is_empty() {
                println!(
                    "No vendors yet: import one with graft import-openapi FILE --vendor SLUG."
                );
            }
            for v in vendors {
                let state = if v.disabled_at.is_some() {
                    "  (disabled)"
                } else {
                    ""
                };
                println!(
                    "{:<20} {:<30} {}{state}",
                    v.slug, v.display_name, v.base_url
                );
            }
            if !removed.is_empty() {
                println!(
                    "Removed (importing a document under one brings it back): {}",
                    removed.join(", ")
                );
            }
        }
        Command::Vendor(VendorCommand::Set {
            slug,
            name,
            base_url,
            disable,
            enable,
            internal,
            no_internal,
            credential_param,
            no_credential_params,
            yes,
        }) => {
            let enabled = match (disable, enable) {
                (true, _) => Some(false),
                (_, true) => Some(true),
                _ => None,
            };
            let mark = match (internal, no_internal) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            };
            let moved = match base_url.as_deref() {
                Some(u) => graft.origin_move(&slug, u).await?,
                None => None,
            };
            if let (Some((old, new)), false) = (&moved, yes) {
                anyhow::bail!(
                    "the base URL moves vendor {slug} from {old} to {new}: its connections would be suspended until a person confirms them there (graft connection confirm {slug}) and its approvals would go back to pending; nothing was changed: run again with --yes to confirm"
                );
            }
            if !credential_param.is_empty() || no_credential_params {
                let report = graft
                    .set_vendor_credential_params(&person(), &slug, &credential_param)
                    .await?;
                match (credential_param.is_empty(), report) {
                    (true, _) => println!("Vendor {slug}: only its security schemes' parameters carry the secret."),
                    (false, Some(r)) => println!(
                        "Vendor {slug}: {} carry the connection's secret; imported again: {}",
                        credential_param.join(", "),
                        crate::console::api::ImportSummary::from(r).headline()
                    ),
                    (false, None) => println!(
                        "Vendor {slug}: {} will carry the connection's secret from its next import.",
                        credential_param.join(", ")
                    ),
                }
                if name.is_none() && base_url.is_none() && enabled.is_none() && mark.is_none() {
                    return Ok(());
                }
            }
            if let Some(internal) = mark {
                let v = graft
                    .set_vendor_internal(&person(), &slug, internal)
                    .await?;
                println!(
                    "Vendor {} is {}.",
                    v.slug,
                    if v.internal {
                        "internal: its calls may go to private and link-local addresses"
                    } else {
                        "not internal: its calls go to public addresses only"
                    }
                );
                if name.is_none() && base_url.is_none() && enabled.is_none() {
                    return Ok(());
                }
            }
            let (v, demoted) = graft
                .set_vendor(
                    &person(),
                    &slug,
                    name.as_deref(),
                    base_url.as_deref(),
                    enabled,
                )
                .await?;
            if let Some((old, new)) = &moved {
                println!(
                    "Moved from {old} to {new}: its connections are suspended until you confirm them there (graft connection confirm {}), and its approvals are pending again.",
                    v.slug
                );
            }
            let state = if v.disabled_at.is_some() {
                "disabled"
            } else {
                "enabled"
            };
            println!(
                "Vendor {}: {} at {}, {state}.",
                v.slug, v.display_name, v.base_url
            );
            if demoted > 0 {
                println!(
                    "Demoted its tools from {}.",
                    if demoted == 1 {
                        "1 working set entry".to_string()
                    } else {
                        format!("{demoted} working-set entries")
                    }
                );
            }
        }
        Command::Vendor(VendorCommand::Remove { slug, yes }) => {
            use crate::console::components::count;
            let v = graft.live_vendor(&slug).await?;
            if !yes {
                let (tools, entries) = graft.vendor_counts(v.id).await?;
                let live = graft
                    .connections()
                    .await?
                    .iter()
                    .filter(|c| c.vendor == v.slug && c.revoked_at.is_none())
                    .count();
                anyhow::bail!(
                    "removing vendor {} takes its {} out of use, demotes them from {} and revokes {}; nothing was changed: run again with --yes to confirm",
                    v.slug,
                    count(tools, "tool"),
                    count(entries, "working-set entry"),
                    count(live as i64, "connection"),
                );
            }
            let (demoted, revoked) = graft.remove_vendor(&person(), &slug).await?;
            println!(
                "Removed vendor {}: demoted {}, revoked {}. Its tools stay in the record; importing its document again brings it back.",
                v.slug,
                count(demoted as i64, "working-set entry"),
                count(revoked, "connection"),
            );
        }
        Command::ImportOpenapi {
            file,
            vendor,
            base_url,
            yes,
        } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            if let (Some(u), false) = (base_url.as_deref(), yes) {
                if let Ok(Some((old, new))) = graft.origin_move(&vendor, u).await {
                    anyhow::bail!(
                        "--base-url moves vendor {vendor} from {old} to {new}: its connections would be suspended until a person confirms them there (graft connection confirm {vendor}) and its approvals would go back to pending; nothing was changed: run again with --yes to confirm"
                    );
                }
            }
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} operations")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_message(format!("importing {}", file.display()));
            let report = graft
                .import_openapi_by(
                    &person(),
                    &vendor,
                    &text,
                    base_url.as_deref(),
                    &mut |done, total| {
                        if total >= 100 {
                            bar.set_length(total as u64);
                            bar.set_position(done as u64);
                        }
                    },
                )
                .await;
            bar.finish_and_clear();
            let report = report?;
            embed_with_bar(&graft).await?;
            let summary = crate::console::api::ImportSummary::from(report.clone());
            println!("{}", summary.headline());
            if let Some(url) = &report.adopted_base_url {
                println!(
                    "Base URL {url}, taken from the document's servers: every call of these tools goes there (graft vendor set {} --base-url … to change it).",
                    report.vendor
                );
            }
            if let Some((old, new)) = &report.origin_moved {
                println!(
                    "Moved from {old} to {new}: its connections are suspended until you confirm them there (graft connection confirm {}), and its approvals are pending again.",
                    report.vendor
                );
            }
            for (old, new) in &report.moved {
                println!(
                    "  renamed an agent's tool {v}__{old} to {v}__{new}: the document's operation takes its name",
                    v = report.vendor
                );
            }
            for (name, what) in &report.updated {
                println!("  updated {}__{name}: {what}", report.vendor);
            }
            for name in &report.retired {
                println!(
                    "  retired {}__{name}: its operation left the document",
                    report.vendor
                );
            }
            for name in &report.restored {
                println!("  restored {}__{name}", report.vendor);
            }
            for name in &report.kept {
                println!(
                    "  left alone {}__{name}: an agent wrote its current version",
                    report.vendor
                );
            }
            if !report.renamed.is_empty() {
                println!(
                    "Renamed (shortened to fit 52 characters, or told apart from another tool):"
                );
                for (op, name) in &report.renamed {
                    println!("  {op} -> {}__{name}", report.vendor);
                }
            }
            if !report.skipped.is_empty() {
                println!("Skipped:");
                for (op, reason) in &report.skipped {
                    println!("  {op}: {reason}");
                }
            }
            if !report.withheld.is_empty() {
                println!("Parameters not offered to agents (Graft or the connection sets them):");
                for (op, param) in &report.withheld {
                    println!("  {op}: {param}");
                }
            }
        }
        Command::Connection(ConnectionCommand::Add {
            vendor,
            label,
            kind,
            name,
            secret_env,
            secret_stdin,
        }) => {
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
        Command::Connection(ConnectionCommand::List) => {
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
        Command::Connection(ConnectionCommand::Revoke { id }) => {
            let (c, demoted) = graft.revoke_connection(&person(), id).await?;
            println!("Revoked connection {} ({}) of {}; its secret is deleted; demoted {demoted} working-set entries that used it.", c.id, c.label, c.vendor);
        }
        Command::Connection(ConnectionCommand::Confirm { vendor }) => {
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
        Command::Key(KeyCommand::Rotate { yes }) => {
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
        Command::Calls {
            agent,
            tool,
            failed,
            outcome,
            limit,
        } => {
            use crate::db::{CallFilter, CallOutcome};
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
        }
        Command::Approval(ApprovalCommand::List) => {
            let all = graft.approvals().await?;
            if all.is_empty() {
                println!("No approvals yet.");
            }
            for a in all {
                let decided = a
                    .decided_by
                    .map(|by| format!(" by {by} {}", format_time(a.decided_at)))
                    .unwrap_or_default();
                let version = a.version.map(|v| format!(" v{v}")).unwrap_or_default();
                let changed = a
                    .changed
                    .map(|c| format!(" (approved before; a new version changed: {c})"))
                    .unwrap_or_default();
                println!(
                    "{:<8} {:<20} {}__{}{version}  asked {}{decided}{changed}",
                    a.state,
                    a.agent,
                    a.vendor,
                    a.name,
                    format_time(Some(a.requested_at))
                );
                let shown = crate::domain::markup::visible;
                if let (Some(m), Some(p)) = (&a.request.method, &a.request.path) {
                    println!("    {m} {}", shown(p));
                }
                if let Some(i) = &a.request.input {
                    println!("    input of the call that asked {}", shown(i));
                }
            }
        }
        Command::Approve {
            agent,
            tool,
            version,
        } => {
            let (vendor, name) = split_tool(&tool)?;
            graft
                .decide_approval_seen(&person(), &agent, vendor, name, true, version)
                .await?;
            println!("Approved: {agent} may run {tool}.");
        }
        Command::Deny { agent, tool } => {
            let (vendor, name) = split_tool(&tool)?;
            graft
                .decide_approval(&person(), &agent, vendor, name, false)
                .await?;
            println!("Denied: {agent} may not run {tool}.");
        }
        Command::Tool(ToolCommand::Show { tool }) => {
            let (vendor, name) = split_tool(&tool)?;
            // agent-written text: nothing in it may move the terminal or hide a character
            print!(
                "{}",
                crate::domain::markup::visible(&describe_tool(
                    &graft.tool_detail(vendor, name).await?
                ))
            );
        }
        Command::Tool(ToolCommand::Note { tool, text }) => {
            let (vendor, name) = split_tool(&tool)?;
            graft.add_note(&person(), vendor, name, &text).await?;
            println!("Noted on {tool}.");
        }
        Command::Tool(ToolCommand::Hints {
            tool,
            read_only,
            destructive,
            idempotent,
            open_world,
        }) => {
            let (vendor, name) = split_tool(&tool)?;
            let change = crate::service::authoring::HintChange {
                read_only,
                destructive,
                idempotent,
                open_world,
            };
            let v = graft.set_hints(&person(), vendor, name, change).await?;
            println!("Published {tool} version {v} with the new hints.");
        }
        Command::Tool(ToolCommand::Publish {
            tool,
            description,
            method,
            path,
            input_schema,
            query,
            headers,
            body_encoding,
        }) => {
            let (vendor, name) = split_tool(&tool)?;
            let input_schema = match input_schema {
                Some(file) => {
                    let text = std::fs::read_to_string(&file)
                        .with_context(|| format!("cannot read {}", file.display()))?;
                    Some(
                        serde_json::from_str(&text)
                            .with_context(|| format!("{} is not JSON", file.display()))?,
                    )
                }
                None => None,
            };
            let change = crate::service::authoring::VersionChange {
                description,
                method,
                path,
                input_schema,
                query,
                headers,
                body_encoding,
            };
            let p = graft.publish(&person(), None, vendor, name, change).await?;
            println!("Published {tool} version {}.", p.version);
        }
        Command::Tool(ToolCommand::Connection { tool, connection }) => {
            let (vendor, name) = split_tool(&tool)?;
            let id = match connection.as_str() {
                "none" => None,
                n => Some(
                    n.parse::<i64>()
                        .with_context(|| format!("{n:?} is not a connection id or \"none\""))?,
                ),
            };
            graft.set_tool_connection(vendor, name, id).await?;
            println!(
                "{tool} now uses {}.",
                id.map(|i| format!("connection {i}"))
                    .unwrap_or_else(|| "the vendor's only active connection".into())
            );
        }
        Command::Tool(ToolCommand::Search { query, limit }) => {
            let found = graft.search_tools(None, &query, limit).await?;
            if graft.search_status().model.is_none() {
                eprintln!(
                    "(search matches words only: no embedding model; see scripts/get-model.sh)"
                );
            }
            if found.hits.is_empty() {
                println!("No tool matches {query:?}.");
            }
            for h in &found.hits {
                let ro = if h.read_only_hint { " (read-only)" } else { "" };
                // the name first: scripts take the first word of each line
                println!(
                    "{}__{}{}  {:.2}  {}",
                    h.vendor, h.name, ro, h.score, h.description
                );
            }
            if found.total > found.hits.len() {
                println!(
                    "… {} of {} matches shown (--limit).",
                    found.hits.len(),
                    found.total
                );
            }
        }
    }
    Ok(())
}

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
