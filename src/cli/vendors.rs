//! `graft vendor …` and `graft import-openapi`: vendors and their documents (SPEC §2, §7).

use super::{embed_with_bar, format_time, person};
use crate::console::words::ImportSummary;
use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;
use std::path::PathBuf;

/// `graft vendor …`
#[derive(Debug, Subcommand)]
pub enum VendorCommand {
    /// Create a vendor: an HTTP API at a base URL (its tools come from an OpenAPI
    /// document), or an MCP server, remote (--mcp-url) or local (--mcp-command), whose
    /// tools come from its tools/list.
    #[command(group(clap::ArgGroup::new("server").required(true).args(["base_url", "mcp_url", "mcp_command"])))]
    Add {
        /// Slug: a-z, 0-9 and '-', at most 31 characters.
        slug: String,
        /// Base URL of its API.
        #[arg(long)]
        base_url: Option<String>,
        /// An MCP server over Streamable HTTP: its URL (https://…/mcp). Its credentials
        /// are connections (bearer, header or basic).
        #[arg(long)]
        mcp_url: Option<String>,
        /// A local MCP server over stdio: the program and its arguments as one string
        /// ("npx -y @modelcontextprotocol/server-everything"), split as a shell would
        /// split words but run without one. Its credentials are connections of kind env.
        #[arg(long)]
        mcp_command: Option<String>,
        /// The directory a local MCP server starts in (absolute; default: Graft's own).
        #[arg(long, requires = "mcp_command")]
        cwd: Option<String>,
        /// Display name.
        #[arg(long)]
        name: Option<String>,
        /// Keep this OpenAPI document on the vendor without importing its operations;
        /// agents acquire the operations they need.
        #[arg(long, requires = "base_url")]
        openapi: Option<PathBuf>,
    },
    /// List vendors.
    List,
    /// Read an MCP vendor's tools/list again now (Graft also does when its server says
    /// the list changed, and every GRAFT_MCP_REFRESH): new tools join the toolbox,
    /// changed ones get a new version, those gone are retired.
    Refresh {
        /// The vendor's slug.
        slug: String,
    },
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
    /// calls, history and stored document stay for the record. `graft vendor restore`
    /// (or importing its document again) brings it back.
    Remove {
        /// The vendor's slug.
        slug: String,
        /// Confirm (without it, Graft says what removing would do and changes nothing).
        #[arg(long)]
        yes: bool,
    },
    /// Bring a removed vendor back as it was (its base URL, document and tools; retired
    /// tools stay retired). Its connections stay revoked: add a new one.
    Restore {
        /// The vendor's slug.
        slug: String,
    },
}

/// The arguments of `graft import-openapi`.
#[derive(Debug, clap::Args)]
pub struct ImportOpenapiArgs {
    /// The document.
    pub file: PathBuf,
    /// The vendor the tools belong to (created when missing).
    #[arg(long)]
    pub vendor: String,
    /// Base URL of the vendor's API (default: the document's server).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Confirm a --base-url that moves an existing vendor to another origin (its
    /// connections are suspended until confirmed there, its approvals go back to
    /// pending).
    #[arg(long)]
    pub yes: bool,
}

/// `graft vendor …` (SPEC §7).
pub(super) async fn vendor(graft: &Graft, command: VendorCommand) -> anyhow::Result<()> {
    match command {
        VendorCommand::Add {
            slug,
            base_url,
            mcp_url,
            mcp_command,
            cwd,
            name,
            openapi,
        } => {
            use crate::domain::mcp_vendor::{split_command, Server};
            let server = match (mcp_url, mcp_command) {
                (Some(url), _) => Some(Server::Url(url)),
                (None, Some(line)) => Some(Server::Command {
                    argv: split_command(&line).map_err(anyhow::Error::msg)?,
                    cwd,
                }),
                (None, None) => None,
            };
            if let Some(server) = server {
                let (v, read) = graft
                    .add_mcp_vendor(&person(), &slug, name.as_deref(), &server)
                    .await?;
                println!(
                    "Created MCP vendor {} ({}), {}.",
                    v.slug,
                    v.display_name,
                    crate::console::words::server_words(&v)
                );
                match read {
                    Ok(r) => println!("{}", ImportSummary::from(r).headline()),
                    Err(why) => println!(
                        "Its tools could not be read yet: {why}
When the server is ready (a connection added, for instance), run graft vendor refresh {}.",
                        v.slug
                    ),
                }
                return Ok(());
            }
            let base_url = base_url.unwrap_or_default();
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
                    crate::console::words::count(n, "tool")
                ),
                None => println!(
                    "Created vendor {} ({}) at {}.",
                    v.slug, v.display_name, v.base_url
                ),
            }
            if let Some(t) = text {
                let n = graft.store_document(&v.slug, &t).await?;
                embed_with_bar(graft).await?;
                println!("Stored its OpenAPI document ({n} operations) without importing them: agents acquire the ones they need.");
            }
        }
        VendorCommand::List => {
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
                if v.kind == "mcp" {
                    let read = match (&v.mcp_error, v.mcp_refreshed_at) {
                        (Some(e), _) => format!("  (last read failed: {e})"),
                        (None, Some(at)) => format!("  (tools read {})", format_time(Some(at))),
                        (None, None) => "  (tools not read yet)".into(),
                    };
                    println!(
                        "{:<20} {:<30} {}{state}{read}",
                        v.slug,
                        v.display_name,
                        crate::console::words::server_words(&v)
                    );
                    continue;
                }
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
        VendorCommand::Set {
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
        } => {
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
                        ImportSummary::from(r).headline()
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
            let at = if v.kind == "mcp" {
                crate::console::words::server_words(&v)
            } else {
                format!("at {}", v.base_url)
            };
            println!("Vendor {}: {} {at}, {state}.", v.slug, v.display_name);
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
        VendorCommand::Refresh { slug } => {
            let r = graft.refresh_mcp_vendor(&person(), &slug).await?;
            println!("{}", ImportSummary::from(r).headline());
        }
        VendorCommand::Remove { slug, yes } => {
            use crate::console::words::count;
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
            let back = if v.kind == "mcp" {
                "adding an MCP server with its slug brings it back"
            } else {
                "graft vendor restore (or importing its document again) brings it back"
            };
            println!(
                "Removed vendor {}: demoted {}, revoked {}. Its tools stay in the record; {back}.",
                v.slug,
                count(demoted as i64, "working-set entry"),
                count(revoked, "connection"),
            );
        }
        VendorCommand::Restore { slug } => {
            let v = graft.restore_vendor(&person(), &slug).await?;
            println!(
                "Restored vendor {} at {}: its tools are in search and callable again. Add a connection (graft connection add {} …); agents promote its tools again.",
                v.slug, v.base_url, v.slug
            );
        }
    }
    Ok(())
}

/// `graft import-openapi` (SPEC §7).
pub(super) async fn import_openapi(graft: &Graft, args: ImportOpenapiArgs) -> anyhow::Result<()> {
    let ImportOpenapiArgs {
        file,
        vendor,
        base_url,
        yes,
    } = args;
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
    embed_with_bar(graft).await?;
    let summary = ImportSummary::from(report.clone());
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
    // new tools by name on a re-import (a first import's are all new: see graft tool list)
    if report.created.len() <= 100 && report.updated.len() + report.unchanged > 0 {
        for name in &report.created {
            println!("  new {}__{name}", report.vendor);
        }
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
        println!("Renamed (shortened to fit 52 characters, or told apart from another tool):");
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
    Ok(())
}
