//! `graft tool …`: one tool, its hints, notes, versions and search (SPEC §7).

use super::{format_time, person, split_tool};
use crate::console::words::promoted_by_in_words;
use crate::service::Graft;
use anyhow::Context;
use clap::Subcommand;

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
        /// Under each hit, why it ranked there: the score of each leg (words, meaning,
        /// what agents' picks taught), the fields the request's words matched, and the
        /// learned phrases. The hit's score also holds the vendor, action and variety
        /// factors, so it is not a sum of the legs.
        #[arg(long)]
        explain: bool,
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
    if let Some(at) = t.retired_at {
        let why = if t.method == crate::domain::mcp_vendor::MCP_METHOD {
            "its MCP server no longer lists it"
        } else {
            "its operation left the vendor's document"
        };
        out.push_str(&format!(
            "  retired {}: {why}; it runs nothing\n",
            super::format_time(Some(at))
        ));
    }
    if t.method == crate::domain::mcp_vendor::MCP_METHOD {
        out.push_str(&format!("  the MCP server's tool {:?}\n", t.path_template));
    } else {
        if let Some(op) = &t.operation_id {
            out.push_str(&format!("  operation: {op}\n"));
        }
        out.push_str(&format!("  {} {}\n", t.method, t.path_template));
    }
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
    let mut prev: Option<&crate::service::VersionView> = None;
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
            crate::console::words::actor_in_words(d.authors.get(i).unwrap_or(&v.authored_by))
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
    for p in &d.promoted_for {
        let by = promoted_by_in_words(p.promoted_by);
        out.push_str(&format!("  {} (promoted by {by})\n", p.agent));
    }
    out
}

/// `graft tool …` (SPEC §7).
pub(super) async fn tool(graft: &Graft, command: ToolCommand) -> anyhow::Result<()> {
    match command {
        ToolCommand::Show { tool } => {
            let (vendor, name) = split_tool(&tool)?;
            // agent-written text: nothing in it may move the terminal or hide a character
            print!(
                "{}",
                crate::domain::markup::visible(&describe_tool(
                    &graft.tool_detail(vendor, name).await?
                ))
            );
        }
        ToolCommand::Note { tool, text } => {
            let (vendor, name) = split_tool(&tool)?;
            graft.add_note(&person(), vendor, name, &text).await?;
            println!("Noted on {tool}.");
        }
        ToolCommand::Hints {
            tool,
            read_only,
            destructive,
            idempotent,
            open_world,
        } => {
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
        ToolCommand::Publish {
            tool,
            description,
            method,
            path,
            input_schema,
            query,
            headers,
            body_encoding,
        } => {
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
                base_version: None,
            };
            let p = graft.publish(&person(), None, vendor, name, change).await?;
            println!("Published {tool} version {}.", p.version);
        }
        ToolCommand::Connection { tool, connection } => {
            let (vendor, name) = split_tool(&tool)?;
            let id = match connection.as_str() {
                "none" => None,
                n => Some(
                    n.parse::<i64>()
                        .with_context(|| format!("{n:?} is not a connection id or \"none\""))?,
                ),
            };
            graft
                .set_tool_connection(&person(), vendor, name, id)
                .await?;
            println!(
                "{tool} now uses {}.",
                id.map(|i| format!("connection {i}"))
                    .unwrap_or_else(|| "the vendor's default connection".into())
            );
        }
        ToolCommand::Search {
            query,
            limit,
            explain,
        } => {
            let (found, why) = if explain {
                graft.explain_search(&query, limit).await?
            } else {
                (graft.search_tools(None, &query, limit).await?, Vec::new())
            };
            if graft.search_status().model.is_none() {
                eprintln!(
                    "(search matches words only: no embedding model; see scripts/get-model.sh)"
                );
            }
            if let Some(cut) = found.cut {
                eprintln!("({})", cut.note());
            }
            if found.hits.is_empty() {
                let read = crate::domain::search::read_part(&query).0;
                println!("No tool matches {read:?}.");
            }
            for (i, h) in found.hits.iter().enumerate() {
                let ro = if h.read_only_hint { " (read-only)" } else { "" };
                // the name first: scripts take the first word of each line
                println!(
                    "{}__{}{}  {:.2}  {}",
                    h.vendor, h.name, ro, h.score, h.description
                );
                if let Some(w) = why.get(i) {
                    let fields: Vec<String> = w
                        .fields
                        .iter()
                        .map(|(f, terms)| format!("{f} ({})", terms.join(", ")))
                        .collect();
                    println!(
                        "    words {:.2} · meaning {:.2} · learned {:.2} · matched: {}",
                        w.lexical,
                        w.semantic,
                        w.learned,
                        if fields.is_empty() {
                            "no field".to_string()
                        } else {
                            fields.join("; ")
                        }
                    );
                    if w.learned > 0.0 {
                        let taught = graft.learned_phrases(&h.vendor, &h.name).await?;
                        let shown: Vec<String> = taught
                            .iter()
                            .take(3)
                            .map(|l| format!("{:?}", l.phrase))
                            .collect();
                        println!("    learned from agents' picks after: {}", shown.join(", "));
                    }
                }
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
