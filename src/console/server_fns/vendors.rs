//! Vendors and connections in the console (SPEC §6): import summaries, a vendor's
//! page, state, internal flag, connections added and revoked.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{back_saying_saved, signed_in, with_status, ConsoleError, Flash};
#[cfg(feature = "ssr")]
use crate::console::words::segment;
use crate::console::words::ImportSummary;
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A vendor row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorItem {
    pub slug: String,
    /// Display name.
    pub name: String,
    pub base_url: String,
    /// Whether an OpenAPI document is stored.
    pub has_document: bool,
    /// Whether a person disabled it.
    #[serde(default)]
    pub disabled: bool,
    /// When a person removed it (ms).
    #[serde(default)]
    pub removed_at: Option<i64>,
    /// The connection kind its document calls for (`bearer`, `header`, `query`,
    /// `basic`), which the connection form starts with.
    #[serde(default)]
    pub auth_kind: Option<String>,
    /// The header or query parameter name its document's API key scheme names.
    #[serde(default)]
    pub auth_name: Option<String>,
    /// A person marked it internal: its calls may reach private and link-local
    /// addresses (security review 32.7).
    #[serde(default)]
    pub internal: bool,
    /// `openapi` or `mcp` (SPEC §10.2).
    #[serde(default)]
    pub kind: String,
    /// An MCP vendor's server in words (`MCP server at URL`, `local MCP server: CMD`).
    #[serde(default)]
    pub server: Option<String>,
    /// An MCP vendor whose server is a local program: its connections are environment
    /// variables.
    #[serde(default)]
    pub local: bool,
    /// A remote MCP server a person authorized Graft at (OAuth tokens stored, sealed).
    #[serde(default)]
    pub oauth: bool,
}

/// An MCP vendor's server as its page shows it (issue 27.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Its state in this Graft server, in words (running since, restarting with the last
    /// error, not running).
    pub state: String,
    /// Whether it runs now.
    pub running: bool,
    /// When its tools/list was last read (ms).
    pub refreshed_at: Option<i64>,
    /// What went wrong the last time it was read or started.
    pub error: Option<String>,
}

/// A vendor's page (issue 14.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorData {
    /// The server's clock (ms).
    pub now: i64,
    pub vendor: VendorItem,
    /// Its tools (retired ones not counted).
    pub tools: i64,
    /// Working-set entries of its tools, every agent's.
    pub entries: i64,
    /// Its imports, newest first.
    pub imports: Vec<ImportItem>,
    /// Its connections, revoked ones too.
    #[serde(default)]
    pub connections: Vec<ConnectionItem>,
    /// An MCP vendor's server (issue 27.5).
    #[serde(default)]
    pub server: Option<ServerInfo>,
}

/// A connection row (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionItem {
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    pub label: String,
    /// `none`, `bearer`, `header`, `query`, `basic`.
    pub kind: String,
    /// Header or parameter name.
    pub name: Option<String>,
    /// Created (ms).
    pub created_at: i64,
    /// Revoked (ms).
    pub revoked_at: Option<i64>,
    /// Why it is suspended, when it is: its vendor moved to another origin (security
    /// review 32.5).
    #[serde(default)]
    pub suspended: Option<String>,
    /// When a call last used it (ms).
    #[serde(default)]
    pub last_used_at: Option<i64>,
    /// When its secret was last replaced in place (ms).
    #[serde(default)]
    pub secret_replaced_at: Option<i64>,
    /// Whether it is its vendor's default connection (issue 28.2).
    #[serde(default)]
    pub vendor_default: bool,
    /// Whether it can be made its vendor's default (not an MCP vendor's: those all
    /// apply at once).
    #[serde(default)]
    pub can_be_default: bool,
    /// Its last test in this Graft server: `(when (ms), passed, what happened)`.
    #[serde(default)]
    pub last_test: Option<(i64, bool, String)>,
}

/// One import in a vendor's import history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportItem {
    /// Vendor slug.
    pub vendor: String,
    /// When (ms).
    pub at: i64,
    /// Who, in words (`ops`, `the command line or a test`).
    pub by: String,
    /// Its summary in one sentence ([`ImportSummary::headline`]).
    pub headline: String,
    /// Which tools it updated, retired, restored or left alone, one line each.
    #[serde(default)]
    pub details: Vec<String>,
}

/// The Vendors page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorsData {
    /// The server's clock (ms).
    pub now: i64,
    /// Every vendor but removed ones.
    pub vendors: Vec<VendorItem>,
    /// Every connection of those vendors, revoked ones too.
    pub connections: Vec<ConnectionItem>,
    /// The summary of the import just done, when the page follows one.
    pub import: Option<ImportSummary>,
    /// The newest imports of every vendor (20 at most), newest first.
    #[serde(default)]
    pub imports: Vec<ImportItem>,
    /// Slugs of removed vendors (an import under one brings it back).
    #[serde(default)]
    pub removed: Vec<String>,
    /// Why something the person started did not finish (an MCP vendor's authorization).
    #[serde(default)]
    pub failed: Option<String>,
    /// An upload previewed and not applied yet: its id and what applying it would do
    /// (issue 28.11).
    #[serde(default)]
    pub preview: Option<(String, ImportSummary)>,
}

/// The Vendors page; `import` names the summary of an upload just done, `preview` an
/// upload previewed and not applied yet.
#[server(prefix = "/api", endpoint = "vendors")]
pub async fn vendors(
    import: Option<String>,
    preview: Option<String>,
) -> ConsoleResult<VendorsData> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let preview = preview.and_then(|id| {
            let summary = state.flash.peek_preview(&person.name, &id)?;
            Some((id, summary))
        });
        let (import, failed) = match import.and_then(|id| state.flash.take(&person.name, &id)) {
            Some(Flash::Import(s)) => (Some(*s), None),
            Some(Flash::Failed(why)) => (None, Some(why)),
            _ => (None, None),
        };
        let imports: Vec<ImportItem> = state
            .graft
            .recent_imports(20)
            .await?
            .into_iter()
            .map(|(v, by, at, report)| import_item(&v, (by, at, report)))
            .collect();
        let vendors: Vec<VendorItem> = state
            .graft
            .vendors()
            .await?
            .into_iter()
            .map(vendor_item)
            .collect();
        Ok(VendorsData {
            now: state.graft.clock_now(),
            // a removed vendor's connections (revoked) leave the list with it
            connections: state
                .graft
                .connections()
                .await?
                .into_iter()
                .filter(|c| vendors.iter().any(|v| v.slug == c.vendor))
                .map(|c| {
                    let mut item = connection_item(c);
                    item.last_test = state.graft.last_connection_test(item.id);
                    item
                })
                .collect(),
            vendors,
            import,
            imports,
            removed: state.graft.removed_vendors().await?,
            failed,
            preview,
        })
    })
    .await
}

#[cfg(feature = "ssr")]
pub(crate) fn vendor_item(v: crate::service::VendorView) -> VendorItem {
    let server = (v.kind == "mcp").then(|| crate::console::words::server_words(&v));
    VendorItem {
        slug: v.slug,
        name: v.display_name,
        base_url: v.base_url,
        has_document: v.has_document,
        disabled: v.disabled_at.is_some(),
        removed_at: v.removed_at,
        auth_kind: v.auth_kind,
        auth_name: v.auth_name,
        internal: v.internal,
        local: v.kind == "mcp" && v.mcp_url.is_none(),
        oauth: v.has_oauth,
        server,
        kind: v.kind,
    }
}

/// An MCP vendor's server state in words (issue 27.5).
#[cfg(feature = "ssr")]
fn server_info(g: &crate::service::Graft, v: &crate::service::VendorView) -> ServerInfo {
    use crate::service::mcp_vendors::ServerState;
    let when = |ms: i64| crate::console::components::utc(ms);
    let (state, running) = match g.mcp_server_state(v.id) {
        ServerState::Running {
            since,
            pid,
            protocol,
            server,
        } => (
            format!(
                "Running since {}{}, speaking MCP {protocol}{}.",
                when(since),
                pid.map(|p| format!(" (process {p})")).unwrap_or_default(),
                server
                    .map(|s| format!(" as {}", s.trim()))
                    .unwrap_or_default()
            ),
            true,
        ),
        ServerState::Restarting {
            attempt,
            last_error,
            retry_at,
        } => (
            format!(
                "Restarting (attempt {attempt}, next at {}): {last_error}",
                when(retry_at)
            ),
            false,
        ),
        ServerState::Stopped => (
            "Not running in this Graft server: it starts at the first call or read of its tools."
                .into(),
            false,
        ),
    };
    ServerInfo {
        state,
        running,
        refreshed_at: v.mcp_refreshed_at,
        error: v.mcp_error.clone(),
    }
}

#[cfg(feature = "ssr")]
pub(crate) fn connection_item(c: crate::service::connections::ConnectionInfo) -> ConnectionItem {
    ConnectionItem {
        id: c.id,
        vendor: c.vendor,
        label: c.label,
        kind: c.auth_kind,
        name: c.name,
        created_at: c.created_at,
        revoked_at: c.revoked_at,
        suspended: c.suspended,
        last_used_at: c.last_used_at,
        secret_replaced_at: c.secret_replaced_at,
        vendor_default: c.vendor_default,
        can_be_default: c.can_be_default,
        last_test: None,
    }
}

#[cfg(feature = "ssr")]
pub(crate) fn import_item(
    vendor: &str,
    (by, at, report): (String, i64, crate::service::ImportReport),
) -> ImportItem {
    let summary = ImportSummary::from(report);
    ImportItem {
        vendor: vendor.to_string(),
        at,
        by: by
            .strip_prefix("person:")
            .unwrap_or("the command line")
            .to_string(),
        headline: summary.headline(),
        details: summary.details(),
    }
}

/// A vendor's page: its settings, state, tools and import history.
#[server(prefix = "/api", endpoint = "vendor")]
pub async fn vendor(slug: String) -> ConsoleResult<VendorData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let v = g.vendor(&slug).await?;
        let (tools, entries) = g.vendor_counts(v.id).await?;
        Ok(VendorData {
            now: g.clock_now(),
            imports: g
                .imports(&v.slug)
                .await?
                .into_iter()
                .map(|i| import_item(&v.slug, i))
                .collect(),
            connections: g
                .connections()
                .await?
                .into_iter()
                .filter(|c| c.vendor == v.slug)
                .map(|c| {
                    let mut item = connection_item(c);
                    item.last_test = g.last_connection_test(item.id);
                    item
                })
                .collect(),
            server: (v.kind == "mcp").then(|| server_info(g, &v)),
            vendor: vendor_item(v),
            tools,
            entries,
        })
    })
    .await
}

/// Changes a vendor's name and base URL (both as shown in the form). Errors: at `name`
/// (empty) or `base_url` (not an absolute http or https URL).
#[server(prefix = "/api", endpoint = "edit_vendor")]
pub async fn edit_vendor(
    slug: String,
    name: String,
    base_url: Option<String>,
    confirm_move: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if name.trim().is_empty() {
            return Err(ConsoleError::field("name", "give the vendor a name"));
        }
        crate::service::check_vendor_name(name.trim())
            .map_err(|m| ConsoleError::field("name", m))?;
        // an MCP vendor's form has no base URL: only its name changes
        let Some(base_url) = base_url else {
            state
                .graft
                .set_vendor(&Actor::Person(person.name), &slug, Some(&name), None, None)
                .await?;
            back_saying_saved("vendor");
            return Ok(());
        };
        if let Err(e) = crate::service::check_base_url(&base_url) {
            return Err(ConsoleError::field("base_url", e.to_string()));
        }
        // a move to another origin suspends the connections and sets the approvals back
        // to pending: only when the person ticked that they mean it (security review 32.5)
        if let Some((old, new)) = state.graft.origin_move(&slug, &base_url).await? {
            if confirm_move.as_deref() != Some("yes") {
                return Err(ConsoleError::field(
                    "confirm_move",
                    format!("this moves the vendor from {old} to {new}: its connections will send nothing until you confirm them there, and its approvals go back to pending. Tick the box to move it"),
                ));
            }
        }
        state
            .graft
            .set_vendor(
                &Actor::Person(person.name),
                &slug,
                Some(&name),
                Some(&base_url),
                None,
            )
            .await?;
        back_saying_saved("vendor");
        Ok(())
    })
    .await
}

/// Marks a vendor internal (`internal` = `yes`) or not (`no`): an internal vendor's
/// calls may go to private and link-local addresses. Marking needs `confirm` = `yes`.
/// Errors: at `confirm`.
#[server(prefix = "/api", endpoint = "set_vendor_internal")]
pub async fn set_vendor_internal(
    slug: String,
    internal: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let internal = match internal.as_str() {
            "yes" => true,
            "no" => false,
            _ => return Err(ConsoleError::Refused("internal must be yes or no".into())),
        };
        if internal && confirm.as_deref() != Some("yes") {
            return Err(ConsoleError::field(
                "confirm",
                "tick the box: the vendor's calls may then reach this network's private addresses",
            ));
        }
        state
            .graft
            .set_vendor_internal(&Actor::Person(person.name), &slug, internal)
            .await?;
        back_saying_saved("internal");
        Ok(())
    })
    .await
}

/// Disables (`enabled` = `no`) or enables (`yes`) a vendor. Disabling demotes its tools
/// from every working set, so it must be confirmed: `confirm` = `yes` (a checkbox, which
/// works without JavaScript). Errors: at `confirm`.
#[server(prefix = "/api", endpoint = "set_vendor_state")]
pub async fn set_vendor_state(
    slug: String,
    enabled: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let enabled = match enabled.as_str() {
            "yes" => true,
            "no" => false,
            other => return Err(ConsoleError::Refused(format!("{other:?} is not yes or no"))),
        };
        if !enabled && confirm.as_deref() != Some("yes") {
            return Err(ConsoleError::field(
                "confirm",
                "tick the box to confirm: disabling demotes the vendor's tools from every working set",
            ));
        }
        state
            .graft
            .set_vendor(&Actor::Person(person.name), &slug, None, None, Some(enabled))
            .await?;
        Ok(())
    })
    .await
}

/// Removes a vendor ([`crate::service::Graft::remove_vendor`]): its tools are demoted
/// from every working set and refuse calls, its connections are revoked, and it leaves
/// the lists; its tools and history stay. Must be confirmed: `confirm` = `yes` (a
/// checkbox). Goes to the Vendors page, which says what was done
/// (`?removed=SLUG`). Errors: at `confirm`; `Refused` (no such vendor, removed already).
#[server(prefix = "/api", endpoint = "remove_vendor")]
pub async fn remove_vendor(slug: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if confirm.as_deref() != Some("yes") {
            return Err(ConsoleError::field(
                "confirm",
                "tick the box to confirm: removing demotes the vendor's tools from every working set and revokes its connections",
            ));
        }
        let (demoted, revoked) = state
            .graft
            .remove_vendor(&Actor::Person(person.name.clone()), &slug)
            .await?;
        tracing::info!(vendor = %slug, by = %person.name, demoted, revoked, "vendor removed in the console");
        leptos_axum::redirect(&format!("/vendors?removed={}", segment(&slug)));
        Ok(())
    })
    .await
}

/// Creates a vendor. Errors: at `slug` (rules, taken) or `base_url`.
#[server(prefix = "/api", endpoint = "add_vendor")]
pub async fn add_vendor(slug: String, name: String, base_url: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        if let Err(m) = crate::domain::names::VendorSlug::parse(slug.trim()) {
            return Err(ConsoleError::field("slug", m));
        }
        if let Err(e) = crate::service::check_base_url(base_url.trim()) {
            return Err(ConsoleError::field("base_url", e.to_string()));
        }
        crate::service::check_vendor_name(name.trim())
            .map_err(|m| ConsoleError::field("name", m))?;
        let back = state.graft.removed_vendor_tools(slug.trim()).await?;
        match state
            .graft
            .add_vendor(slug.trim(), Some(name.as_str()), base_url.trim())
            .await
        {
            Ok(v) if back.is_some() => {
                // a removed vendor is back: the Vendors page says so, not "created"
                leptos_axum::redirect(&format!("/vendors?back={}", segment(&v.slug)));
                Ok(())
            }
            Ok(_) => {
                back_saying_saved("vendor");
                Ok(())
            }
            Err(ServiceError::Conflict(m)) => Err(ConsoleError::field("slug", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}
