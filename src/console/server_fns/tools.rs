//! The toolbox in the console (SPEC §6): search, browse by vendor or by use, one tool's
//! versions, notes and calls.

#[cfg(feature = "ssr")]
use crate::console::server_fns::{call_item, signed_in, with_status, ConsoleError, CALLS_SHOWN};
use crate::console::server_fns::{CallItem, ConsoleResult};
#[cfg(feature = "ssr")]
use crate::console::words::{actor_in_words, does_in_words, mark_bidi, promoted_by_in_words};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A toolbox hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitItem {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The first sentence of its description (160 characters at most).
    pub description: String,
    /// Relevance, 0–1, two decimals.
    pub score: String,
    /// Whether the agent asked about has it promoted.
    pub promoted: bool,
    /// readOnlyHint.
    pub read_only: bool,
    /// destructiveHint.
    pub destructive: bool,
    /// Tokens of its served definition (issue 29.1); `None` while not counted.
    #[serde(default)]
    pub tokens: Option<i64>,
}

/// A toolbox search's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchData {
    /// Up to [`SEARCH_PER_PAGE`] hits of this page, best first.
    pub hits: Vec<HitItem>,
    /// Matches in all.
    pub total: usize,
    /// The query as the person typed it (empty: no search yet).
    #[serde(default)]
    pub query: String,
    /// Tools in the toolbox.
    pub toolbox: i64,
    /// Whether search ranks by meaning too (an embedding model is loaded); else words
    /// only.
    pub semantic: bool,
    /// This page, from 1 ([`SEARCH_PER_PAGE`] hits a page).
    #[serde(default)]
    pub page: i64,
    /// Pages in all (at least 1; the console pages through the 500 best matches).
    #[serde(default)]
    pub pages: i64,
}

/// A tool as the Toolbox lists it when browsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowseItem {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The first sentence of its description (160 characters at most), plain text.
    pub description: String,
    /// What a call does, in words: `reads`, `writes` or `deletes` ([`does_in_words`]).
    pub does: String,
    /// Calls that reached the vendor, every agent's together.
    pub calls: i64,
    /// The last such call (ms).
    pub last_used_at: Option<i64>,
    /// Tokens of its served definition (issue 29.1); `None` while not counted.
    #[serde(default)]
    pub tokens: Option<i64>,
}

/// The Toolbox browsed without a query (issue 14.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowseData {
    /// The server's clock (ms).
    pub now: i64,
    /// Every vendor: `(slug, display name, tools)`, by slug.
    pub vendors: Vec<(String, String, i64)>,
    /// The vendor shown (none: all).
    pub vendor: Option<String>,
    /// `name` or `use`.
    pub sort: String,
    /// One page of tools.
    pub tools: Vec<BrowseItem>,
    /// Tools in all (of the vendor shown).
    pub total: i64,
    /// The page shown (from 1).
    pub page: i64,
    /// Tools per page.
    pub per_page: i64,
}

/// A version of a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionItem {
    /// Number.
    pub version: i64,
    pub method: String,
    /// Path template.
    pub path: String,
    pub description: String,
    /// Who wrote it, in words.
    pub author: String,
    /// When (ms).
    pub created_at: i64,
    /// `[readOnly, destructive, idempotent, openWorld]`.
    pub hints: [bool; 4],
    /// Binding, pretty JSON.
    pub binding: String,
    /// Input schema, pretty JSON.
    pub input_schema: String,
    /// The description rendered from CommonMark as safe HTML (issue 28.10:
    /// [`crate::domain::rendered::markdown_html`]; raw HTML shown as text).
    #[serde(default)]
    pub description_html: String,
    /// What changed from the version before (none for the first): `(kind, line)` with
    /// kind `same`, `removed`, `added` or `gap`, over the method and path, description,
    /// input schema, binding and hints, as lines.
    #[serde(default)]
    pub changes: Vec<(String, String)>,
}

/// The tool page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolData {
    /// The server's clock (ms).
    pub now: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Operation it was imported from.
    pub operation_id: Option<String>,
    /// Every version, newest first.
    pub versions: Vec<VersionItem>,
    /// `(agent, promoted by in words)` of the agents that have it promoted.
    pub holders: Vec<(String, String)>,
    /// `(author, text, ms)`, oldest first.
    pub notes: Vec<(String, String, i64)>,
    /// The connection its calls use: `(label, why)`.
    pub connection: Option<(String, String)>,
    /// Its newest calls by any agent (20 at most), newest first.
    pub calls: Vec<CallItem>,
    /// Whether an agent's first call needs a person's approval (a write, or a
    /// definition an agent wrote).
    #[serde(default)]
    pub gated: bool,
    /// When a re-import retired it (ms): its operation left the vendor's document.
    #[serde(default)]
    pub retired_at: Option<i64>,
    /// Whether its vendor is disabled.
    #[serde(default)]
    pub vendor_disabled: bool,
    /// Whether its vendor was removed (it is disabled too).
    #[serde(default)]
    pub vendor_removed: bool,
    /// What find_tool learned from agents' picks (issue 24.3): `(phrase, agents, newest
    /// pick in ms)`, strongest first.
    #[serde(default)]
    pub learned: Vec<(String, usize, i64)>,
    /// Tokens of its current version's served definition (issue 29.1): what it costs an
    /// agent's context once promoted; `None` while not counted.
    #[serde(default)]
    pub tokens: Option<i64>,
    /// Whether a person may publish a new version here (issue 28.10): not an MCP
    /// server's tool, not retired, its vendor not removed.
    #[serde(default)]
    pub editable: bool,
    /// The current description as written (the form's text; the page shows it rendered).
    #[serde(default)]
    pub source_description: String,
    /// The tool's own default connection's id; `None`: its vendor's default serves it.
    #[serde(default)]
    pub chosen_connection: Option<i64>,
    /// Its vendor's live connections: `(id, label)`.
    #[serde(default)]
    pub live_connections: Vec<(i64, String)>,
    /// The "Try it" form's fields (none for an MCP server's tool, or a schema too wide).
    #[serde(default)]
    pub try_fields: Vec<super::TryField>,
    /// Whether "Try it" takes the whole input as JSON (a schema with no `properties`
    /// object, or more than a form shows).
    #[serde(default)]
    pub try_json: bool,
}

/// A version as the diff between versions reads it: one fact or JSON line per line.
#[cfg(feature = "ssr")]
fn version_text(v: &crate::service::VersionView) -> String {
    let pretty = |s: &str| {
        serde_json::from_str::<serde_json::Value>(s)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| s.to_string())
    };
    format!(
        "{} {}\nhints: readOnlyHint {}, destructiveHint {}, idempotentHint {}, openWorldHint {}\n\ndescription:\n{}\n\ninput schema:\n{}\n\nbinding:\n{}\n",
        v.method,
        v.path_template,
        v.read_only_hint,
        v.destructive_hint,
        v.idempotent_hint,
        v.open_world_hint,
        v.description,
        pretty(&v.input_schema),
        pretty(&v.binding)
    )
}

/// A diff line as the page takes it: `(kind, text)`.
#[cfg(feature = "ssr")]
fn change_pair(line: crate::domain::rendered::DiffLine) -> (String, String) {
    use crate::domain::rendered::DiffLine;
    match line {
        DiffLine::Same(t) => ("same".into(), t),
        DiffLine::Removed(t) => ("removed".into(), t),
        DiffLine::Added(t) => ("added".into(), t),
        DiffLine::Gap => ("gap".into(), "…".into()),
    }
}

/// Hits a page of the console's search.
pub const SEARCH_PER_PAGE: i64 = 50;

/// The toolbox search (the same search as `find_tool`); `agent` marks what that agent
/// has promoted; `vendor` (a slug) keeps that vendor's hits among the 500 best
/// matches (the words alone: the vendor's name is not added to them, so a tool is not a
/// match for being the vendor's); `page` (from 1, default 1) of [`SEARCH_PER_PAGE`] hits
/// (issue 28.12; a page past the last shows the last). An empty query answers no hits.
/// Errors: an unknown agent or vendor.
#[server(prefix = "/api", endpoint = "search_tools")]
pub async fn search_tools(
    query: String,
    agent: Option<String>,
    vendor: Option<String>,
    page: Option<i64>,
) -> ConsoleResult<SearchData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let toolbox = g.toolbox_size().await?;
        let semantic = g.search_status().model.is_some();
        if query.trim().is_empty() {
            return Ok(SearchData {
                hits: vec![],
                total: 0,
                query: String::new(),
                toolbox,
                semantic,
                page: 1,
                pages: 1,
            });
        }
        let agent_id = match agent.filter(|a| !a.is_empty()) {
            Some(a) => Some(g.agent_by_name(&a).await?.id),
            None => None,
        };
        let typed = query.trim().to_string();
        let vendor = vendor.filter(|v| !v.trim().is_empty());
        if let Some(v) = &vendor {
            g.vendor(v).await?;
        }
        // a page past the last (an old link, a hand-edited address) shows the last, as
        // the Toolbox's browsing does: past the ranking's depth here, past the last
        // match in the service
        let last_reachable = (crate::service::SEARCH_DEPTH as i64) / SEARCH_PER_PAGE;
        let (r, page) = g
            .search_tools_page(
                agent_id,
                &typed,
                vendor.as_deref(),
                page.unwrap_or(1).clamp(1, last_reachable) as usize,
                SEARCH_PER_PAGE as usize,
            )
            .await?;
        let reach = r.total.min(crate::service::SEARCH_DEPTH) as i64;
        Ok(SearchData {
            hits: r
                .hits
                .into_iter()
                .map(|h| HitItem {
                    vendor: h.vendor,
                    name: h.name,
                    description: h.description,
                    score: format!("{:.2}", h.score),
                    promoted: h.promoted,
                    read_only: h.read_only_hint,
                    destructive: h.destructive_hint,
                    tokens: h.tokens,
                })
                .collect(),
            total: r.total,
            query: typed,
            toolbox,
            semantic,
            page: page as i64,
            pages: ((reach + SEARCH_PER_PAGE - 1) / SEARCH_PER_PAGE).max(1),
        })
    })
    .await
}

/// The Toolbox without a query (issue 14.2): page `page` (from 1; 50 tools a page) of
/// `vendor`'s tools (a slug; none or empty: every vendor), sorted by `sort` (`name`, the
/// default and what any other value gives, or `use`: most calls first). Errors: an
/// unknown vendor.
#[server(prefix = "/api", endpoint = "browse_tools")]
pub async fn browse_tools(
    vendor: Option<String>,
    sort: Option<String>,
    page: Option<i64>,
) -> ConsoleResult<BrowseData> {
    with_status(async move {
        const PER_PAGE: i64 = 50;
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let vendor = vendor.filter(|v| !v.trim().is_empty());
        // an unknown order (a stale or mistyped link) sorts by name
        let (order, sort) = match sort.as_deref() {
            Some("use") => (crate::service::BrowseOrder::Use, "use"),
            _ => (crate::service::BrowseOrder::Name, "name"),
        };
        let page = page.unwrap_or(1).clamp(1, i64::MAX / PER_PAGE);
        let (mut rows, total) = g
            .browse_tools(vendor.as_deref(), order, PER_PAGE, (page - 1) * PER_PAGE)
            .await?;
        let pages = ((total + PER_PAGE - 1) / PER_PAGE).max(1);
        let page = if page > pages {
            // past the end (the toolbox shrank): the last page
            let (last, _) = g
                .browse_tools(vendor.as_deref(), order, PER_PAGE, (pages - 1) * PER_PAGE)
                .await?;
            rows = last;
            pages
        } else {
            page
        };
        Ok(BrowseData {
            now: g.clock_now(),
            vendors: g.vendor_tool_counts().await?,
            vendor,
            sort: sort.to_string(),
            tools: rows
                .into_iter()
                .map(|r| BrowseItem {
                    description: crate::domain::search::text::first_sentence(
                        &crate::domain::search::text::plain_text(&r.description),
                        160,
                    ),
                    does: does_in_words(Some(&r.method), r.read_only_hint, r.destructive_hint)
                        .to_string(),
                    vendor: r.vendor,
                    name: r.name,
                    calls: r.calls,
                    last_used_at: r.last_used_at,
                    tokens: r.tokens,
                })
                .collect(),
            total,
            page,
            per_page: PER_PAGE,
        })
    })
    .await
}

/// A tool page: versions (newest first), hints, binding, holders, notes, connection.
#[server(prefix = "/api", endpoint = "tool")]
pub async fn tool(vendor: String, name: String) -> ConsoleResult<ToolData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let d = match state.graft.tool_detail(&vendor, &name).await {
            Err(ServiceError::ToolNotFound(_)) => {
                // the service's words speak to an agent ("call find_tool")
                return Err(ConsoleError::Refused(format!(
                    "There is no tool {vendor}__{name} in the toolbox. Search the Toolbox for the one you mean."
                )));
            }
            other => other?,
        };
        let filter = crate::service::CallFilter {
            tool_id: Some(d.tool.id),
            ..Default::default()
        };
        let calls = state.graft.calls(&filter, CALLS_SHOWN).await?;
        let gated = crate::service::approvals::gated(&d.tool);
        let learned = state
            .graft
            .learned_phrases(&d.tool.vendor, &d.tool.name)
            .await?
            .into_iter()
            .map(|l| (l.phrase, l.agents, l.last_at))
            .collect();
        let pretty = |s: &str| {
            serde_json::from_str::<serde_json::Value>(s)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or_else(|_| s.to_string())
        };
        let mut versions: Vec<VersionItem> = d
            .versions
            .iter()
            .zip(d.authors.iter())
            .enumerate()
            .map(|(i, (v, author))| VersionItem {
                description_html: crate::domain::rendered::markdown_html(&mark_bidi(
                    &v.description,
                )),
                changes: match i.checked_sub(1).and_then(|p| d.versions.get(p)) {
                    Some(before) => crate::domain::rendered::line_changes(
                        &mark_bidi(&version_text(before)),
                        &mark_bidi(&version_text(v)),
                        2,
                    )
                    .into_iter()
                    .map(change_pair)
                    .collect(),
                    None => vec![],
                },
                version: v.version,
                method: v.method.clone(),
                path: v.path_template.clone(),
                description: mark_bidi(&v.description),
                author: actor_in_words(author),
                created_at: v.created_at,
                hints: [
                    v.read_only_hint,
                    v.destructive_hint,
                    v.idempotent_hint,
                    v.open_world_hint,
                ],
                binding: pretty(&v.binding),
                input_schema: pretty(&v.input_schema),
            })
            .collect();
        versions.reverse();
        let choice = state.graft.tool_connection_choice(&vendor, &name).await?;
        let editable = d.tool.method != crate::domain::mcp_vendor::MCP_METHOD
            && d.tool.retired_at.is_none()
            && d.tool.vendor_removed_at.is_none();
        Ok(ToolData {
            editable,
            source_description: d.tool.description.clone(),
            chosen_connection: choice.chosen,
            live_connections: choice.live,
            try_json: serde_json::from_str::<serde_json::Value>(&d.tool.input_schema)
                .ok()
                .and_then(|s| s.get("properties").and_then(|p| p.as_object()).map(|p| p.len()))
                .is_none_or(|n| n > crate::domain::try_form::MAX_FIELDS),
            try_fields: if d.tool.method == crate::domain::mcp_vendor::MCP_METHOD {
                vec![]
            } else {
                super::tool_edit::try_fields(&d.tool.input_schema)
            },
            now: state.graft.clock_now(),
            vendor: d.tool.vendor,
            name: d.tool.name,
            operation_id: d.tool.operation_id,
            versions,
            holders: d
                .promoted_for
                .into_iter()
                .map(|p| (p.agent, promoted_by_in_words(p.promoted_by).to_string()))
                .collect(),
            notes: d
                .notes
                .into_iter()
                .map(|n| (actor_in_words(&n.author), mark_bidi(&n.body), n.created_at))
                .collect(),
            connection: d.connection,
            calls: calls.into_iter().map(call_item).collect(),
            gated,
            retired_at: d.tool.retired_at,
            vendor_disabled: d.tool.vendor_disabled_at.is_some(),
            vendor_removed: d.tool.vendor_removed_at.is_some(),
            tokens: d.tool.tokens,
            learned,
        })
    })
    .await
}

/// Forgets what find_tool learned for a tool from agents' picks (issue 24.3): its
/// phrases stop lifting it at once. Needs its second step (`confirm` = `yes`).
/// Errors: `Refused` (not confirmed, unknown tool).
#[server(prefix = "/api", endpoint = "clear_learned")]
pub async fn clear_learned(
    vendor: String,
    name: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        crate::console::server_fns::confirmed(
            confirm.as_deref(),
            "clearing what find_tool learned cannot be undone",
        )?;
        state
            .graft
            .clear_learned(&Actor::Person(person.name), &vendor, &name)
            .await?;
        leptos_axum::redirect(&format!(
            "/tools/{}/{}#learned",
            crate::console::words::segment(&vendor),
            crate::console::words::segment(&name)
        ));
        Ok(())
    })
    .await
}

/// A person says what a call of a tool does (issue 28.7): `does` is `reads` (readOnlyHint
/// true: no approval needed), `writes` (a change) or `deletes` (a write that may destroy
/// data, destructiveHint). A new version with those hints, named after the person; agents
/// holding the tool get list_changed; nothing is written when the hints already say so.
/// Errors: `Invalid` (another `does`), `NotFound` (unknown tool).
#[server(prefix = "/api", endpoint = "set_tool_hints")]
pub async fn set_tool_hints(vendor: String, name: String, does: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let (read_only, destructive) = match does.trim() {
            "reads" => (true, false),
            "writes" => (false, false),
            "deletes" => (false, true),
            other => {
                return Err(ConsoleError::field(
                    "does",
                    format!(
                        "{:?} is not reads, writes or deletes",
                        crate::domain::openapi::truncate_chars(other, 40)
                    ),
                ))
            }
        };
        let tool = state.graft.tool(&vendor, &name).await?;
        // the write rule itself (SPEC §4.4): a method that writes whatever its hints
        if read_only && crate::domain::approval::writes(&tool.method, true) {
            return Err(ConsoleError::field(
                "does",
                format!(
                    "a {} sends data to {}: Graft treats it as a write whatever its hints",
                    tool.method, tool.vendor
                ),
            ));
        }
        // a read repeated changes nothing more (idempotent); a write is not assumed so
        let idempotent = if read_only {
            true
        } else {
            tool.idempotent_hint && !tool.read_only_hint
        };
        if tool.read_only_hint != read_only
            || tool.destructive_hint != destructive
            || tool.idempotent_hint != idempotent
        {
            let change = crate::service::authoring::HintChange {
                read_only: Some(read_only),
                destructive: Some(destructive),
                idempotent: Some(idempotent),
                ..Default::default()
            };
            state
                .graft
                .set_hints(&Actor::Person(person.name), &vendor, &name, change)
                .await?;
        }
        leptos_axum::redirect(&format!(
            "/tools/{}/{}#hints",
            crate::console::words::segment(&vendor),
            crate::console::words::segment(&name)
        ));
        Ok(())
    })
    .await
}
