//! The console's server functions (SPEC §6), thin wrappers over the same `Graft` service
//! methods the MCP adapter calls, so a person's change and an agent's change take one code
//! path. Each one requires a signed-in person (the session, `tower-sessions`) and acts as
//! `Actor::Person(name)`. The data types here travel to the browser as JSON and hold no
//! secret except a token being shown once.
//!
//! Errors are [`ConsoleError`]; a field's error names the field so the form shows it there.
//! Without JavaScript a form posts to `/api/<name>`, and Leptos redirects back to the page,
//! carrying an error in the URL (`__err`), which the page's `ServerAction` reads.

use leptos::prelude::*;
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use crate::console::server::{
    accepts_html, is_local_path, person_of, query_without, ConsoleState, Flash,
};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};

/// What a console call can answer instead of its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConsoleError {
    /// No signed-in person: sign in first.
    SignedOut,
    /// A form field's value breaks a rule; nothing was saved.
    Field {
        /// The input's name (`cap`, `window`, `name`, ...).
        field: String,
        /// The rule, as a sentence.
        message: String,
    },
    /// The request was refused (unknown agent or tool, a name taken, a rule): the reason.
    Refused(String),
    /// Too many requests of this kind for now (HTTP 429 with `Retry-After`): the reason.
    TooMany {
        /// The reason, as a sentence.
        message: String,
        /// Seconds until a new attempt is counted.
        retry_after: u64,
    },
    /// A fault on the server (details in its log, not here).
    Internal,
    /// The request did not reach the function (network, encoding).
    Transport(String),
}

impl std::fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SignedOut => write!(f, "You are signed out; sign in again."),
            Self::Field { message, .. } => write!(f, "{message}"),
            Self::Refused(m) => write!(f, "{m}"),
            Self::TooMany { message, .. } => write!(f, "{message}"),
            Self::Internal => write!(f, "Something went wrong on the server; see its log."),
            Self::Transport(m) => write!(f, "The request failed: {m}"),
        }
    }
}

impl FromServerFnError for ConsoleError {
    type Encoder = JsonEncoding;
    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        Self::Transport(value.to_string())
    }
}

impl ConsoleError {
    /// The message for `field`, if this error is about that field.
    pub fn at(&self, field: &str) -> Option<String> {
        match self {
            Self::Field { field: f, message } if f == field => Some(message.clone()),
            _ => None,
        }
    }

    /// The HTTP status this error is answered with.
    #[cfg(feature = "ssr")]
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode;
        match self {
            Self::SignedOut => StatusCode::UNAUTHORIZED,
            Self::Field { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Refused(_) | Self::Transport(_) => StatusCode::BAD_REQUEST,
            Self::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A field error.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::Field {
            field: field.into(),
            message: message.into(),
        }
    }
}

#[cfg(feature = "ssr")]
impl From<ServiceError> for ConsoleError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Internal(inner) => {
                tracing::error!(error = ?inner, "console call failed");
                Self::Internal
            }
            ServiceError::Busy {
                message,
                retry_after,
            } => Self::TooMany {
                message,
                retry_after: retry_after.as_secs().max(1),
            },
            other => Self::Refused(other.to_string()),
        }
    }
}

/// Result of a console call.
pub type ConsoleResult<T> = Result<T, ConsoleError>;

// ---------------------------------------------------------------- shapes

/// An agent row of the Agents page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentItem {
    /// Name (unique; the page address).
    pub name: String,
    /// Harness label.
    pub harness: Option<String>,
    /// Working-set size now.
    pub size: i64,
    /// Cap, 1..=500.
    pub cap: i64,
    /// Idle window, days.
    pub idle_window_days: i64,
    /// Last authenticated MCP request (ms since the epoch).
    pub last_seen_at: Option<i64>,
}

/// The Agents page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentsData {
    /// The server's clock (ms) for relative times.
    pub now: i64,
    /// Every agent by name.
    pub agents: Vec<AgentItem>,
}

/// A working-set entry as the harness sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryItem {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Promoted by, in words ("the agent", "a publish", "a person", "the rule").
    pub promoted_by: String,
    /// Promotion time (ms).
    pub promoted_at: i64,
    /// Last call (ms); `None` reads "never".
    pub last_used_at: Option<i64>,
    /// Calls by this agent.
    pub calls: i64,
}

/// A History row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryItem {
    /// `vendor__name`.
    pub tool: String,
    /// `promote` or `demote`.
    pub action: String,
    /// The cause in words (SPEC §6).
    pub cause: String,
    /// When (ms).
    pub at: i64,
}

/// An approval row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalItem {
    /// Agent name.
    pub agent: String,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// `pending`, `granted` or `denied`.
    pub state: String,
    /// When first asked (ms).
    pub requested_at: i64,
    /// When decided (ms).
    pub decided_at: Option<i64>,
    /// Who decided (`person:<name>`).
    pub decided_by: Option<String>,
    /// The tool version asked for or decided on.
    #[serde(default)]
    pub version: Option<i64>,
    /// What a newer version changed, when a grant went back to pending.
    #[serde(default)]
    pub changed: Option<String>,
    /// The request it is for: `METHOD /path/template`.
    #[serde(default)]
    pub request: Option<String>,
    /// The version's description, first sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// The input of the newest call that asked (redacted JSON text).
    #[serde(default)]
    pub input: Option<String>,
    /// Everything the call sends besides its body (security review 32.16): each fixed
    /// header with its value, each header, cookie and query parameter an input fills.
    #[serde(default)]
    pub sends: Vec<String>,
}

/// `text` with every character that could hide or reorder what a person reads made
/// visible ([`crate::domain::markup::visible`]; security review 32.16).
#[cfg(feature = "ssr")]
pub fn mark_bidi(text: &str) -> String {
    crate::domain::markup::visible(text)
}

/// The Agent page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentData {
    /// The server's clock (ms).
    pub now: i64,
    /// The agent.
    pub agent: AgentItem,
    /// Its working set, by vendor and name.
    pub entries: Vec<EntryItem>,
    /// One page of history, newest first.
    pub history: Vec<HistoryItem>,
    /// History rows in all.
    pub history_total: i64,
    /// The page shown (from 1).
    pub page: i64,
    /// Rows per page.
    pub per_page: i64,
    /// What the next sweep would demote: `(vendor__name, cause in words)`.
    pub preview: Vec<(String, String)>,
    /// Minutes until the next sweep.
    pub next_sweep_minutes: i64,
    /// This agent's approvals.
    pub approvals: Vec<ApprovalItem>,
    /// Working-set size after each change, `(ms, size)`, oldest first.
    pub sizes: Vec<(i64, i64)>,
    /// Its newest calls (20 at most), newest first, narrowed to `calls_outcome`.
    pub calls: Vec<CallItem>,
    /// The outcome the calls are narrowed to (`ok`, `failed`, `approval`, `dry-run`).
    pub calls_outcome: Option<String>,
    /// Whether older calls exist past the last one shown.
    pub calls_more: bool,
    /// The call id the list starts below, when it is not the newest page.
    #[serde(default)]
    pub calls_before: Option<i64>,
}

/// One call of the calls log (issue 14.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallItem {
    /// Call id (increasing; `before` of the next page).
    pub id: i64,
    /// Agent name.
    pub agent: String,
    /// `vendor__name`.
    pub tool: String,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The version that ran.
    pub version: i64,
    /// Whether it succeeded.
    pub ok: bool,
    /// The outcome in words (`ok`, `dry run`, `waits for approval`, `vendor error`, …).
    pub outcome: String,
    /// The vendor's HTTP status, when it answered.
    pub http_status: Option<i64>,
    /// The error told to the agent (redacted).
    pub message: Option<String>,
    /// The input, redacted JSON text.
    pub input: Option<String>,
    /// Duration (ms).
    pub duration_ms: i64,
    /// When (ms).
    pub at: i64,
}

/// A token shown once, with the configuration snippets of each client (CLIENTS.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenReveal {
    /// Agent name.
    pub agent: String,
    /// The bearer token (shown once, never stored in clear).
    pub token: String,
    /// The MCP endpoint URL.
    pub url: String,
    /// `(client, where it goes, text)`.
    pub snippets: Vec<(String, String, String)>,
}

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
}

/// A toolbox search's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchData {
    /// Up to 50 hits, best first.
    pub hits: Vec<HitItem>,
    /// Matches in all.
    pub total: usize,
    /// Tools in the toolbox.
    pub toolbox: i64,
    /// Whether search ranks by meaning too (an embedding model is loaded); else words
    /// only.
    pub semantic: bool,
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

/// What a tool's call does, in words a person reads (issue 14.2): `deletes` when its
/// destructiveHint is set; `writes` by Graft's write rule (SPEC §4.4: a method other
/// than GET, HEAD or OPTIONS, or readOnlyHint false); else `reads`. Without the method
/// (a search hit) the hints alone decide.
pub fn does_in_words(method: Option<&str>, read_only: bool, destructive: bool) -> &'static str {
    let safe_method = method
        .is_none_or(|m| matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS"));
    if destructive {
        "deletes"
    } else if read_only && safe_method {
        "reads"
    } else {
        "writes"
    }
}

/// A version of a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionItem {
    /// Number.
    pub version: i64,
    /// Method.
    pub method: String,
    /// Path template.
    pub path: String,
    /// Description.
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
}

/// A vendor row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorItem {
    /// Slug.
    pub slug: String,
    /// Display name.
    pub name: String,
    /// Base URL.
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
}

/// A vendor's page (issue 14.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorData {
    /// The server's clock (ms).
    pub now: i64,
    /// The vendor.
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
}

/// A connection row (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionItem {
    /// Id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Label.
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
}

/// What an OpenAPI import did, for the page that follows the upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    /// Vendor slug.
    pub vendor: String,
    /// Operations in the document.
    pub operations: usize,
    /// Tools created.
    pub imported: usize,
    /// `(operation, name)` renamed.
    pub renamed: Vec<(String, String)>,
    /// `(operation, reason)` left out.
    pub skipped: Vec<(String, String)>,
    /// `(operation, "header Authorization")`: declared parameters not offered to agents
    /// (Graft or the connection sets them).
    #[serde(default)]
    pub withheld: Vec<(String, String)>,
    /// `(tool name, what changed)` of tools that got a new version.
    #[serde(default)]
    pub updated: Vec<(String, String)>,
    /// Tools left as they were.
    #[serde(default)]
    pub unchanged: usize,
    /// Tools whose operation came back.
    #[serde(default)]
    pub restored: Vec<String>,
    /// Tools retired: their operation left the document.
    #[serde(default)]
    pub retired: Vec<String>,
    /// Tools left alone because an agent wrote their current version.
    #[serde(default)]
    pub kept: Vec<String>,
    /// Working-set entries demoted because their tool retired.
    #[serde(default)]
    pub demoted: usize,
    /// Whether the import brought a removed vendor back.
    #[serde(default)]
    pub brought_back: bool,
    /// `(old, new)` names of agents' tools the document's operations took the names of.
    #[serde(default)]
    pub moved: Vec<(String, String)>,
    /// The base URL taken from the document for the vendor it created.
    #[serde(default)]
    pub adopted_base_url: Option<String>,
    /// `(old origin, new origin)` when the import moved the vendor.
    #[serde(default)]
    pub origin_moved: Option<(String, String)>,
    /// Or why nothing was imported.
    pub error: Option<String>,
}

impl ImportSummary {
    /// The summary in one sentence (issue 14.3): what was added, updated, retired,
    /// restored, left alone and skipped; "nothing changed" when the document describes
    /// every tool as it is.
    pub fn headline(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.brought_back {
            parts.push("brought back (it had been removed)".into());
        }
        if self.imported > 0 {
            let noun = if self.imported == 1 { "tool" } else { "tools" };
            parts.push(format!("{} new {noun}", self.imported));
        }
        if !self.updated.is_empty() {
            parts.push(format!("{} updated (a new version)", self.updated.len()));
        }
        if !self.restored.is_empty() {
            parts.push(format!("{} restored", self.restored.len()));
        }
        if !self.retired.is_empty() {
            let demoted = match self.demoted {
                0 => String::new(),
                n => format!(
                    ", {} demoted",
                    super::components::count(n as i64, "working-set entry")
                ),
            };
            parts.push(format!(
                "{} retired (gone from the document{demoted})",
                self.retired.len()
            ));
        }
        if self.unchanged > 0 {
            parts.push(format!("{} unchanged", self.unchanged));
        }
        if !self.kept.is_empty() {
            parts.push(format!(
                "{} left alone (an agent wrote their current version)",
                self.kept.len()
            ));
        }
        if !self.skipped.is_empty() {
            parts.push(format!("{} operations skipped", self.skipped.len()));
        }
        let changed = self.imported
            + self.updated.len()
            + self.restored.len()
            + self.retired.len()
            + usize::from(self.brought_back);
        let ops = super::components::count(self.operations as i64, "operation");
        if parts.is_empty() {
            format!("Vendor {}, {ops}: nothing to import.", self.vendor)
        } else if changed == 0 {
            format!(
                "Nothing changed for vendor {} ({ops}): {}.",
                self.vendor,
                parts.join(", ")
            )
        } else {
            format!("Vendor {}, {ops}: {}.", self.vendor, parts.join(", "))
        }
    }
}

#[cfg(feature = "ssr")]
impl From<crate::service::ImportReport> for ImportSummary {
    fn from(r: crate::service::ImportReport) -> Self {
        Self {
            vendor: r.vendor,
            operations: r.operations,
            imported: r.imported,
            renamed: r.renamed,
            skipped: r.skipped,
            withheld: r.withheld,
            updated: r.updated,
            unchanged: r.unchanged,
            restored: r.restored,
            retired: r.retired,
            kept: r.kept,
            demoted: r.demoted,
            brought_back: r.brought_back,
            moved: r.moved,
            adopted_base_url: r.adopted_base_url,
            origin_moved: r.origin_moved,
            error: None,
        }
    }
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

impl ImportSummary {
    /// Which tools the import updated (and what changed), retired, restored and left
    /// alone, one line each, for the import history.
    pub fn details(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .updated
            .iter()
            .map(|(n, what)| format!("updated {n}: {what}"))
            .collect();
        out.extend(
            self.retired
                .iter()
                .map(|n| format!("retired {n}: its operation left the document")),
        );
        out.extend(self.restored.iter().map(|n| format!("restored {n}")));
        out.extend(
            self.kept
                .iter()
                .map(|n| format!("left alone {n}: an agent wrote its current version")),
        );
        out
    }
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
}

/// The Approvals page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalsData {
    /// The server's clock (ms).
    pub now: i64,
    /// Pending first.
    pub approvals: Vec<ApprovalItem>,
}

/// The home page (`/`, issue 14): what is set up yet, and an overview of the agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HomeData {
    /// The server's clock (ms).
    pub now: i64,
    /// Vendors in the toolbox.
    pub vendors: usize,
    /// Tools in the toolbox.
    pub tools: i64,
    /// Connections in use (revoked ones not counted).
    pub connections: usize,
    /// Every agent by name, with its working set's size.
    pub agents: Vec<AgentItem>,
    /// Approvals waiting for a person.
    pub pending: i64,
    /// When the newest sweep that demoted anything ran (ms).
    pub last_sweep_at: Option<i64>,
    /// What it demoted: `(agent, vendor__name, cause in words)`.
    pub last_sweep: Vec<(String, String, String)>,
    /// Minutes until the next sweep.
    pub next_sweep_minutes: i64,
    /// The newest calls of every agent (8 at most), newest first.
    pub calls: Vec<CallItem>,
    /// The newest failed calls of every agent (5 at most), newest first.
    pub failures: Vec<CallItem>,
}

/// What every page's frame shows beside the nav (issue 14.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NavData {
    /// Approvals waiting for a decision.
    pub pending: i64,
    /// Whether the signed-in person still uses the password generated at first start.
    pub password_generated: bool,
}

/// Largest OpenAPI document the console imports (Stripe's is about 4 MB).
pub const MAX_UPLOAD_BYTES: usize = 32 * 1024 * 1024;

/// The harnesses a New agent form offers, `(value, label)` (CLIENTS.md).
pub const HARNESSES: &[(&str, &str)] = &[
    ("claude-code", "Claude Code"),
    ("cursor", "Cursor"),
    ("vscode", "VS Code"),
    ("codex", "Codex CLI"),
    ("hermes", "Hermes"),
    ("openclaw", "OpenClaw"),
    ("other", "Other"),
];

/// A harness value in words (its label when it is one the form offers).
pub fn harness_in_words(h: &str) -> String {
    HARNESSES
        .iter()
        .find(|(v, _)| *v == h)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| h.to_string())
}

/// History causes in the words of SPEC §6.
pub fn cause_in_words(cause: &str) -> &'static str {
    match cause {
        "agent" => "the agent asked",
        "publish" => "published by the agent",
        "console" => "a person in the console",
        "idle" => "unused past the idle window",
        "cap" => "over the working-set cap",
        "connection_revoked" => "its connection was revoked",
        "retired" => "its operation left the vendor's document",
        "vendor_disabled" => "its vendor was disabled",
        "vendor_removed" => "its vendor was removed",
        "rule" => "the rule",
        _ => "unknown",
    }
}

/// `promoted_by` in the words of the seed page's Promoted by column.
pub fn promoted_by_in_words(by: &str) -> &'static str {
    match by {
        "agent" => "the agent",
        "publish" => "a publish",
        "console" => "a person",
        "rule" => "the rule",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------- helpers (server)

/// The state and the signed-in person, or `SignedOut`.
#[cfg(feature = "ssr")]
async fn signed_in() -> ConsoleResult<(ConsoleState, crate::service::people::Person)> {
    let state = use_context::<ConsoleState>().ok_or(ConsoleError::Internal)?;
    let session = session().await.map_err(|_| ConsoleError::SignedOut)?;
    let person = person_of(&state.graft, &session)
        .await
        .ok_or(ConsoleError::SignedOut)?;
    Ok((state, person))
}

/// This request's session (the session layer puts it on every console request).
#[cfg(feature = "ssr")]
async fn session() -> ConsoleResult<tower_sessions::Session> {
    leptos_axum::extract()
        .await
        .map_err(|_| ConsoleError::Internal)
}

/// Runs a server function's body and gives its error an HTTP status that says what it is
/// (422 a field, 400 refused, 401 signed out, 500 a fault) instead of 500 for all.
#[cfg(feature = "ssr")]
async fn with_status<T>(
    body: impl std::future::Future<Output = ConsoleResult<T>>,
) -> ConsoleResult<T> {
    let result = body.await;
    // a plain form post (no JavaScript) is redirected back to its page with the error in
    // the URL: its 302 stays
    let form_post = is_form_post();
    if let (Err(e), Some(res), false) = (
        &result,
        use_context::<leptos_axum::ResponseOptions>(),
        form_post,
    ) {
        res.set_status(e.status());
        if let ConsoleError::TooMany { retry_after, .. } = e {
            if let Ok(v) = http::HeaderValue::from_str(&retry_after.to_string()) {
                res.insert_header(http::header::RETRY_AFTER, v);
            }
        }
    }
    result
}

/// Whether this request is a plain form post (no JavaScript: the browser asks for HTML).
#[cfg(feature = "ssr")]
fn is_form_post() -> bool {
    use_context::<http::request::Parts>().is_some_and(|p| accepts_html(&p.headers))
}

/// After a plain form post that succeeded, goes back to the page it came from with
/// `saved=<what>` so the page can say so (a hydrated page reads the action's value).
#[cfg(feature = "ssr")]
fn back_saying_saved(what: &str) {
    if !is_form_post() {
        return;
    }
    let Some(referer) = use_context::<http::request::Parts>().and_then(|p| {
        p.headers
            .get(http::header::REFERER)
            .and_then(|v| v.to_str().ok())
            .and_then(|r| url::Url::parse(r).ok())
    }) else {
        return;
    };
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query_without(
            referer.query().unwrap_or(""),
            &["saved", "__err", "__path"],
        ))
        .append_pair("saved", what)
        .finish();
    let target = format!("{}?{query}", referer.path());
    if is_local_path(&target) {
        leptos_axum::redirect(&target);
    }
}

/// Parses a whole number typed in a field. Errors: a field error naming the field.
#[cfg(feature = "ssr")]
fn number(field: &str, label: &str, text: &str) -> ConsoleResult<i64> {
    text.trim()
        .parse::<i64>()
        .map_err(|_| ConsoleError::field(field, format!("{label} must be a whole number")))
}

#[cfg(feature = "ssr")]
fn agent_item(a: crate::service::AgentSummary) -> AgentItem {
    AgentItem {
        name: a.name,
        harness: a.harness,
        size: a.size,
        cap: a.cap,
        idle_window_days: a.idle_window_days,
        last_seen_at: a.last_seen_at,
    }
}

#[cfg(feature = "ssr")]
fn approval_item(a: crate::db::ApprovalRow) -> ApprovalItem {
    ApprovalItem {
        agent: a.agent,
        vendor: a.vendor,
        name: a.name,
        state: a.state,
        requested_at: a.requested_at,
        decided_at: a.decided_at,
        decided_by: a.decided_by,
        version: a.version,
        changed: a.changed.map(|c| mark_bidi(&c)),
        request: a
            .request
            .method
            .zip(a.request.path)
            .map(|(m, p)| mark_bidi(&format!("{m} {p}"))),
        description: a.request.description.map(|d| {
            mark_bidi(&crate::domain::search::text::first_sentence(
                &crate::domain::search::text::plain_text(&d),
                200,
            ))
        }),
        input: a.request.input.map(|i| mark_bidi(&i)),
        sends: a
            .request
            .binding
            .as_deref()
            .and_then(|b| serde_json::from_str::<crate::domain::tool::Binding>(b).ok())
            .map(|b| {
                let mut out: Vec<String> = b
                    .fixed_headers
                    .iter()
                    .map(|(k, v)| format!("header {k}: {v}"))
                    .collect();
                out.extend(
                    b.headers
                        .iter()
                        .map(|(p, k)| format!("header {k} (from the input {p})")),
                );
                out.extend(
                    b.cookies
                        .iter()
                        .map(|(p, k)| format!("cookie {k} (from the input {p})")),
                );
                out.extend(
                    b.query
                        .iter()
                        .map(|(p, k)| format!("query parameter {k} (from the input {p})")),
                );
                out.into_iter().map(|l| mark_bidi(&l)).collect()
            })
            .unwrap_or_default(),
    }
}

/// A calls-log row for the console.
#[cfg(feature = "ssr")]
fn call_item(c: crate::db::CallLogRow) -> CallItem {
    CallItem {
        id: c.id,
        outcome: if c.dry_run && c.status != "ok" {
            format!("{} (dry run)", c.outcome())
        } else {
            c.outcome().to_string()
        },
        ok: c.status == "ok",
        tool: format!("{}__{}", c.vendor, c.name),
        agent: c.agent,
        vendor: c.vendor,
        name: c.name,
        version: c.version,
        http_status: c.http_status,
        // the first sentence: an approval's message goes on to what the agent should
        // tell its user
        message: c
            .message
            .map(|m| crate::domain::search::text::first_sentence(&m, 200)),
        input: c.input,
        duration_ms: c.duration_ms,
        at: c.at,
    }
}

/// Calls the console shows on one page.
#[cfg(feature = "ssr")]
const CALLS_SHOWN: i64 = 20;

/// Percent-encodes one path segment of a console link (UTF-8; agent names, vendor slugs
/// and tool names are `[A-Za-z0-9._-]` and stay as they are).
pub fn segment(s: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.');
    percent_encoding::utf8_percent_encode(s, KEEP).to_string()
}

// ---------------------------------------------------------------- sign-in

/// Signs a person in: checks the password (argon2), stores the person in a new session
/// (the id is cycled against fixation) and goes to `next` (a local path) or `/`.
/// Errors: `Refused` for a wrong name or password (one message for both).
#[server(prefix = "/api", endpoint = "login")]
pub async fn login(name: String, password: String, next: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let state = use_context::<ConsoleState>().ok_or(ConsoleError::Internal)?;
        let session = session().await?;
        // the client's address (the accept loop puts it on every request; a proxy in
        // front makes it the proxy's)
        let address = client_address(&state).await;
        match state.sign_ins.attempt(&name, address) {
            Err(r) => {
                return Err(ConsoleError::TooMany {
                    message: r.message,
                    retry_after: r.wait.as_secs().max(1),
                })
            }
            Ok(crate::console::server::Attempt::After(wait)) => tokio::time::sleep(wait).await,
            Ok(crate::console::server::Attempt::Go) => {}
        }
        let person = match state.graft.sign_in(&name, &password).await {
            Ok(p) => p,
            Err(e @ ServiceError::Busy { .. }) => {
                // never checked: not a failed attempt
                state.sign_ins.refund(&name, address);
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let Some(person) = person else {
            return Err(ConsoleError::Refused("Wrong name or password.".into()));
        };
        state.sign_ins.succeeded(&name, address);
        crate::console::server::start_session(&session, &person)
            .await
            .map_err(|_| ConsoleError::Internal)?;
        let next = next
            .filter(|n| is_local_path(n))
            .unwrap_or_else(|| "/".into());
        leptos_axum::redirect(&next);
        Ok(())
    })
    .await
}

/// The address of the client of this request, for throttling
/// ([`crate::console::server::client_address`]).
#[cfg(feature = "ssr")]
async fn client_address(state: &ConsoleState) -> std::net::IpAddr {
    let peer = leptos_axum::extract::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .await
        .map(|c| c.0.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let headers = use_context::<http::request::Parts>()
        .map(|p| p.headers)
        .unwrap_or_default();
    crate::console::server::client_address(peer, &headers, &state.trusted_proxies)
}

/// Signs out: deletes the session and goes to `/login`.
#[server(prefix = "/api", endpoint = "logout")]
pub async fn logout() -> ConsoleResult<()> {
    with_status(async move {
        let session = session().await?;
        session.flush().await.map_err(|_| ConsoleError::Internal)?;
        leptos_axum::redirect("/login");
        Ok(())
    })
    .await
}

/// The signed-in person's name.
#[server(prefix = "/api", endpoint = "whoami")]
pub async fn whoami() -> ConsoleResult<String> {
    with_status(async move { Ok(signed_in().await?.1.name) }).await
}

/// Changes the signed-in person's password. Errors: at `current` (wrong), `new` (too
/// short), `confirm` (different).
#[server(prefix = "/api", endpoint = "change_password")]
pub async fn change_password(current: String, new: String, confirm: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if new != confirm {
            return Err(ConsoleError::field(
                "confirm",
                "the two new passwords differ",
            ));
        }
        if let Err(e) = crate::service::people::check_password(&new) {
            return Err(ConsoleError::field("new", e.to_string()));
        }
        // checking the current password is a sign-in: counted and throttled alike
        // (security review 32.14 follow-up: a stolen session must not guess it)
        let address = client_address(&state).await;
        if let Err(r) = state.sign_ins.attempt(&person.name, address) {
            return Err(ConsoleError::TooMany {
                message: r.message,
                retry_after: r.wait.as_secs().max(1),
            });
        }
        match state
            .graft
            .change_password(&person.name, &current, &new)
            .await
        {
            Ok(renewed) => {
                state.sign_ins.succeeded(&person.name, address);
                // the person's other sessions ended; this one carries on at the new epoch
                let session = session().await?;
                crate::console::server::start_session(&session, &renewed)
                    .await
                    .map_err(|_| ConsoleError::Internal)?;
                back_saying_saved("password");
                Ok(())
            }
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("current", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

// ---------------------------------------------------------------- home

/// The frame's data: pending approvals, and whether the signed-in person should change
/// the password Graft generated at first start.
#[server(prefix = "/api", endpoint = "nav")]
pub async fn nav() -> ConsoleResult<NavData> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        Ok(NavData {
            pending: state.graft.pending_approvals().await?,
            password_generated: state.graft.password_is_generated(person.id).await?,
        })
    })
    .await
}

/// The home page: the three first steps (a vendor imported, a connection added, an
/// agent created) and an overview (agents and their sets, pending approvals).
#[server(prefix = "/api", endpoint = "home")]
pub async fn home() -> ConsoleResult<HomeData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let now = g.clock_now();
        let swept = g.last_sweep().await?;
        let last_sweep_at = swept.first().map(|r| r.4);
        let last_sweep = swept
            .into_iter()
            .map(|(agent, vendor, name, cause, _)| {
                let cause = cause_in_words(&cause).to_string();
                (agent, format!("{vendor}__{name}"), cause)
            })
            .collect();
        let failed = crate::db::CallFilter {
            outcome: Some(crate::db::CallOutcome::Failed),
            ..Default::default()
        };
        Ok(HomeData {
            now,
            last_sweep_at,
            last_sweep,
            next_sweep_minutes: state.minutes_to_next_sweep(now),
            calls: g
                .calls(&Default::default(), 8)
                .await?
                .into_iter()
                .map(call_item)
                .collect(),
            failures: g
                .calls(&failed, 5)
                .await?
                .into_iter()
                .map(call_item)
                .collect(),
            vendors: g.vendors().await?.len(),
            tools: g.toolbox_size().await?,
            connections: g
                .connections()
                .await?
                .iter()
                .filter(|c| c.revoked_at.is_none())
                .count(),
            agents: g.list_agents().await?.into_iter().map(agent_item).collect(),
            pending: g.pending_approvals().await?,
        })
    })
    .await
}

// ---------------------------------------------------------------- agents

/// The Agents page: every agent with its size, cap, window and last seen.
#[server(prefix = "/api", endpoint = "agents")]
pub async fn agents() -> ConsoleResult<AgentsData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let agents = state.graft.list_agents().await?;
        Ok(AgentsData {
            now: state.graft.clock_now(),
            agents: agents.into_iter().map(agent_item).collect(),
        })
    })
    .await
}

/// Checks the agent form's fields one by one so each error lands at its field.
#[cfg(feature = "ssr")]
fn check_agent_fields(name: &str, cap: &str, window: &str) -> ConsoleResult<(String, i64, i64)> {
    use crate::domain;
    let name = domain::check_agent_name(name.trim()).map_err(|m| ConsoleError::field("name", m))?;
    let cap = number("cap", "cap", cap)?;
    domain::check_cap(cap).map_err(|m| ConsoleError::field("cap", m))?;
    let window = number("window", "idle window", window)?;
    domain::check_idle_window(window).map_err(|m| ConsoleError::field("window", m))?;
    Ok((name, cap, window))
}

/// Maps a taken name to the `name` field.
#[cfg(feature = "ssr")]
fn name_taken(e: ServiceError) -> ConsoleError {
    match e {
        ServiceError::Conflict(m) => ConsoleError::field("name", m),
        other => other.into(),
    }
}

/// Creates an agent (SPEC §6 New agent) and goes to the page that shows its token once.
/// Errors: at `name` (rules, taken), `cap` (1..=500), `window` (1..=3650 days).
#[server(prefix = "/api", endpoint = "add_agent")]
pub async fn add_agent(
    name: String,
    harness: String,
    cap: String,
    window: String,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let (name, cap, window) = check_agent_fields(&name, &cap, &window)?;
        if !harness.is_empty() && !HARNESSES.iter().any(|(v, _)| *v == harness) {
            return Err(ConsoleError::field(
                "harness",
                "choose a harness from the list",
            ));
        }
        let (agent, token) = state
            .graft
            .add_agent(&name, Some(harness.as_str()), Some(cap), Some(window))
            .await
            .map_err(name_taken)?;
        tracing::info!(agent = %agent.name, by = %person.name, "agent created in the console");
        let id = state
            .flash
            .put(&person.name, Flash::Token(agent.name.clone(), token));
        leptos_axum::redirect(&format!(
            "/agents/{}/token?reveal={id}",
            segment(&agent.name)
        ));
        Ok(())
    })
    .await
}

/// Changes an agent's name, cap and idle window (SPEC §6 "Name, cap and idle window");
/// the rule reads them at the next sweep. Nothing is saved when a field is wrong. A new
/// name moves the page to its new address.
#[server(prefix = "/api", endpoint = "edit_agent")]
pub async fn edit_agent(
    agent: String,
    name: String,
    cap: String,
    window: String,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let (name, cap, window) = check_agent_fields(&name, &cap, &window)?;
        let a = state
            .graft
            .set_agent(&agent, Some(&name), Some(cap), Some(window))
            .await
            .map_err(name_taken)?;
        if a.name != agent {
            leptos_axum::redirect(&format!("/agents/{}?saved=agent", segment(&a.name)));
        } else {
            back_saying_saved("agent");
        }
        Ok(())
    })
    .await
}

/// Refuses a destructive action that was not confirmed (issue 14.5): the console's
/// second step sends `confirm=yes`. Errors: `Refused` saying what the action does and
/// that nothing was done (the step is not a field the person fills).
#[cfg(feature = "ssr")]
fn confirmed(confirm: Option<&str>, what: &str) -> ConsoleResult<()> {
    match confirm {
        Some("yes") => Ok(()),
        _ => Err(ConsoleError::Refused(format!(
            "Nothing was done: {what}, so it needs its second step (confirm)."
        ))),
    }
}

/// Gives an agent a new token and goes to the page that shows it once. The old token
/// stops working at once, so it must be confirmed: `confirm` = `yes`. Errors: `Refused`
/// (not confirmed, unknown agent).
#[server(prefix = "/api", endpoint = "rotate_token")]
pub async fn rotate_token(agent: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "rotating the token stops the old one at once",
        )?;
        let a = state.graft.agent_by_name(&agent).await?;
        let token = state.graft.rotate_token(a.id).await?;
        tracing::info!(agent = %a.name, by = %person.name, "token rotated in the console");
        let id = state
            .flash
            .put(&person.name, Flash::Token(a.name.clone(), token));
        leptos_axum::redirect(&format!("/agents/{}/token?reveal={id}", segment(&a.name)));
        Ok(())
    })
    .await
}

/// The token of `agent` kept for this person under `reveal`, taken (a second read finds
/// nothing), with the client snippets. `None` once shown, expired (10 minutes), or kept
/// for another agent. Errors: `Refused` for an unknown agent (the page answers 404).
#[server(prefix = "/api", endpoint = "take_token")]
pub async fn take_token(agent: String, reveal: String) -> ConsoleResult<Option<TokenReveal>> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let row = state.graft.agent_by_name(&agent).await?;
        let (wanted, harness) = (row.name, row.harness);
        let Some(Flash::Token(agent, token)) = state.flash.take(&person.name, &reveal) else {
            return Ok(None);
        };
        if agent != wanted {
            return Ok(None);
        }
        let url = format!("{}/mcp", state.public_url.trim_end_matches('/'));
        let mut snippets = crate::console::snippets::all(&agent, &url, &token);
        // the client chosen when the agent was made comes first
        if let Some(label) = harness.as_deref().map(harness_in_words) {
            snippets.sort_by_key(|(client, _, _)| *client != label);
        }
        Ok(Some(TokenReveal {
            snippets,
            agent,
            token,
            url,
        }))
    })
    .await
}

/// The Agent page's data; `page` of History counts from 1 (20 rows a page); its recent
/// calls are narrowed to `outcome` (`ok`, `failed`, `approval`, `dry-run`; none, empty or
/// anything else: all) and start below call id `before` (the next page).
#[server(prefix = "/api", endpoint = "agent")]
pub async fn agent(
    name: String,
    page: i64,
    outcome: Option<String>,
    before: Option<i64>,
) -> ConsoleResult<AgentData> {
    with_status(async move {
        const PER_PAGE: i64 = 20;
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let a = g.agent_by_name(&name).await?;
        let now = g.clock_now();
        let entries = g.working_set_view(a.id).await?;
        let history_total = g.history_count(a.id).await?;
        let pages = ((history_total + PER_PAGE - 1) / PER_PAGE).max(1);
        let page = page.clamp(1, pages);
        let history = g.history(a.id, PER_PAGE, (page - 1) * PER_PAGE).await?;
        let preview =
            crate::service::Graft::sweep_preview(&a, &entries, state.next_sweep_at().max(now));
        // an unknown outcome (a stale or mistyped link) shows every call
        let outcome = outcome
            .as_deref()
            .map(str::trim)
            .and_then(crate::db::CallOutcome::parse);
        let filter = crate::db::CallFilter {
            agent_id: Some(a.id),
            outcome,
            before,
            ..Default::default()
        };
        let mut calls = g.calls(&filter, CALLS_SHOWN + 1).await?;
        let calls_more = calls.len() as i64 > CALLS_SHOWN;
        calls.truncate(CALLS_SHOWN as usize);
        let approvals = g
            .approvals()
            .await?
            .into_iter()
            .filter(|x| x.agent_id == a.id)
            .map(approval_item)
            .collect();
        Ok(AgentData {
            now,
            agent: AgentItem {
                size: entries.len() as i64,
                name: a.name,
                harness: a.harness,
                cap: a.cap,
                idle_window_days: a.idle_window_days,
                last_seen_at: a.last_seen_at,
            },
            entries: entries
                .into_iter()
                .map(|e| EntryItem {
                    vendor: e.entry.tool.vendor,
                    name: e.entry.tool.name,
                    // the full text is on the tool's page
                    description: crate::domain::openapi::truncate_chars(
                        &e.entry.tool.description,
                        200,
                    ),
                    promoted_by: promoted_by_in_words(&e.entry.promoted_by).into(),
                    promoted_at: e.entry.promoted_at,
                    last_used_at: e.last_used_at,
                    calls: e.calls,
                })
                .collect(),
            history: history
                .into_iter()
                .map(|h| HistoryItem {
                    tool: format!("{}__{}", h.vendor, h.name),
                    action: h.action,
                    cause: cause_in_words(&h.cause).into(),
                    at: h.at,
                })
                .collect(),
            history_total,
            page,
            per_page: PER_PAGE,
            preview: preview
                .into_iter()
                .map(|(t, c)| (t, cause_in_words(&c).to_string()))
                .collect(),
            next_sweep_minutes: state.minutes_to_next_sweep(now),
            approvals,
            sizes: g.size_over_time(a.id).await?,
            calls: calls.into_iter().map(call_item).collect(),
            calls_outcome: outcome.map(|o| o.as_str().to_string()),
            calls_more,
            calls_before: before,
        })
    })
    .await
}

/// Promotes a tool for an agent as this person (history cause `console`; list_changed
/// reaches that agent only). `tool` is `vendor__name`.
#[server(prefix = "/api", endpoint = "promote")]
pub async fn promote(agent: String, tool: String) -> ConsoleResult<()> {
    with_status(move_tool(agent, tool, true)).await
}

/// Demotes a tool for an agent as this person (history cause `console`).
#[server(prefix = "/api", endpoint = "demote")]
pub async fn demote(agent: String, tool: String) -> ConsoleResult<()> {
    with_status(move_tool(agent, tool, false)).await
}

/// Promotes (or demotes) `tool` (`vendor__name`) for `agent` as the signed-in person.
#[cfg(feature = "ssr")]
async fn move_tool(agent: String, tool: String, promote: bool) -> ConsoleResult<()> {
    let (state, person) = signed_in().await?;
    let a = state.graft.agent_by_name(&agent).await?;
    let (vendor, name) = split_tool(&tool)?;
    let actor = Actor::Person(person.name);
    if promote {
        state.graft.promote_tool(&actor, a.id, vendor, name).await?;
    } else {
        state.graft.demote_tool(&actor, a.id, vendor, name).await?;
    }
    Ok(())
}

#[cfg(feature = "ssr")]
fn split_tool(tool: &str) -> ConsoleResult<(&str, &str)> {
    tool.split_once("__")
        .ok_or_else(|| ConsoleError::Refused(format!("{tool:?} is not vendor__name")))
}

// ---------------------------------------------------------------- toolbox

/// The toolbox search (the same search as `find_tool`); `agent` marks what that agent
/// has promoted; `vendor` (a slug) keeps that vendor's hits only, ranked as when the
/// query names the vendor. An empty query answers no hits.
#[server(prefix = "/api", endpoint = "search_tools")]
pub async fn search_tools(
    query: String,
    agent: Option<String>,
    vendor: Option<String>,
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
                toolbox,
                semantic,
            });
        }
        let agent_id = match agent.filter(|a| !a.is_empty()) {
            Some(a) => Some(g.agent_by_name(&a).await?.id),
            None => None,
        };
        let mut query: String = query.chars().take(200).collect();
        let vendor = vendor.filter(|v| !v.trim().is_empty());
        if let Some(v) = &vendor {
            g.vendor(v).await?;
            // a vendor named in the query ranks its tools first (find_tool's rule)
            query = format!("{query} {v}");
        }
        let mut r = g.search_tools(agent_id, &query, 50).await?;
        if let Some(v) = &vendor {
            r.hits.retain(|h| &h.vendor == v);
            r.total = r.hits.len();
        }
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
                })
                .collect(),
            total: r.total,
            toolbox,
            semantic,
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
            Some("use") => (crate::db::BrowseOrder::Use, "use"),
            _ => (crate::db::BrowseOrder::Name, "name"),
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
        let filter = crate::db::CallFilter {
            tool_id: Some(d.tool.id),
            ..Default::default()
        };
        let calls = state.graft.calls(&filter, CALLS_SHOWN).await?;
        let gated = crate::service::approvals::gated(&d.tool);
        let pretty = |s: &str| {
            serde_json::from_str::<serde_json::Value>(s)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or_else(|_| s.to_string())
        };
        let mut versions: Vec<VersionItem> = d
            .versions
            .iter()
            .zip(d.authors.iter())
            .map(|(v, author)| VersionItem {
                version: v.version,
                method: v.method.clone(),
                path: v.path_template.clone(),
                description: mark_bidi(&v.description),
                author: author.clone(),
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
        Ok(ToolData {
            now: state.graft.clock_now(),
            vendor: d.tool.vendor,
            name: d.tool.name,
            operation_id: d.tool.operation_id,
            versions,
            holders: d
                .promoted_for
                .into_iter()
                .map(|(_, agent, by)| (agent, promoted_by_in_words(&by).to_string()))
                .collect(),
            notes: d
                .notes
                .into_iter()
                .map(|n| (n.author.replace(':', " "), mark_bidi(&n.body), n.created_at))
                .collect(),
            connection: d.connection,
            calls: calls.into_iter().map(call_item).collect(),
            gated,
            retired_at: d.tool.retired_at,
            vendor_disabled: d.tool.vendor_disabled_at.is_some(),
            vendor_removed: d.tool.vendor_removed_at.is_some(),
        })
    })
    .await
}

// ---------------------------------------------------------------- vendors

/// The Vendors page; `import` names the summary of an upload just done.
#[server(prefix = "/api", endpoint = "vendors")]
pub async fn vendors(import: Option<String>) -> ConsoleResult<VendorsData> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let import = match import.and_then(|id| state.flash.take(&person.name, &id)) {
            Some(Flash::Import(s)) => Some(*s),
            _ => None,
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
                .map(connection_item)
                .collect(),
            vendors,
            import,
            imports,
            removed: state.graft.removed_vendors().await?,
        })
    })
    .await
}

#[cfg(feature = "ssr")]
fn vendor_item(v: crate::db::VendorRow) -> VendorItem {
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
    }
}

#[cfg(feature = "ssr")]
fn connection_item(c: crate::service::connections::ConnectionInfo) -> ConnectionItem {
    ConnectionItem {
        id: c.id,
        vendor: c.vendor,
        label: c.label,
        kind: c.auth_kind,
        name: c.name,
        created_at: c.created_at,
        revoked_at: c.revoked_at,
        suspended: c.suspended,
    }
}

#[cfg(feature = "ssr")]
fn import_item(
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
                .map(connection_item)
                .collect(),
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
    base_url: String,
    confirm_move: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if name.trim().is_empty() {
            return Err(ConsoleError::field("name", "give the vendor a name"));
        }
        crate::service::check_vendor_name(name.trim())
            .map_err(|m| ConsoleError::field("name", m))?;
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

/// Confirms a vendor's connections at its new base URL (after a move to another origin).
/// Errors: `Refused` when none waits.
#[server(prefix = "/api", endpoint = "confirm_connections")]
pub async fn confirm_connections(slug: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .confirm_connections(&Actor::Person(person.name), &slug)
            .await?;
        back_saying_saved("connections");
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

/// Adds a connection; the secret is sealed and never shown again (write-only).
/// Errors: at `label` (empty, too long, taken), `kind`, `name` (missing or not a valid
/// header or parameter name), `secret` (missing, short, not `user:password` for basic)
/// or `vendor` (unknown, removed); the rules are
/// [`crate::service::connections::check_connection`]'s.
#[server(prefix = "/api", endpoint = "add_connection")]
pub async fn add_connection(
    vendor: String,
    label: String,
    kind: String,
    name: String,
    secret: String,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let name = Some(name.trim()).filter(|n| !n.is_empty());
        let secret = Some(secret.trim_end_matches(['\r', '\n'])).filter(|s| !s.is_empty());
        crate::service::connections::check_connection(label.trim(), &kind, name, secret)
            .map_err(|(field, m)| ConsoleError::field(field, m))?;
        let c = match state
            .graft
            .add_connection(&vendor, label.trim(), &kind, name, secret)
            .await
        {
            Ok(c) => c,
            Err(ServiceError::Conflict(m)) => return Err(ConsoleError::field("label", m)),
            Err(ServiceError::VendorNotFound(m) | ServiceError::Invalid(m)) => {
                return Err(ConsoleError::field("vendor", m))
            }
            Err(e) => return Err(e.into()),
        };
        tracing::info!(connection = c.id, vendor = %c.vendor, by = %person.name, "connection added in the console");
        back_saying_saved("connection");
        Ok(())
    })
    .await
}

/// Revokes a connection; the tools whose calls use it are demoted in every working set
/// (cause `connection_revoked`, SPEC §5). Must be confirmed: `confirm` = `yes`.
/// Errors: `Refused` (not confirmed, no such connection, revoked already).
#[server(prefix = "/api", endpoint = "revoke_connection")]
pub async fn revoke_connection(id: i64, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "revoking a connection fails the calls that use it and demotes their tools",
        )?;
        state
            .graft
            .revoke_connection(&Actor::Person(person.name), id)
            .await?;
        Ok(())
    })
    .await
}

// ---------------------------------------------------------------- approvals

/// Every approval, pending first.
#[server(prefix = "/api", endpoint = "approvals")]
pub async fn approvals() -> ConsoleResult<ApprovalsData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        Ok(ApprovalsData {
            now: state.graft.clock_now(),
            approvals: state
                .graft
                .approvals()
                .await?
                .into_iter()
                .map(approval_item)
                .collect(),
        })
    })
    .await
}

/// Decides one agent's use of one write tool (SPEC §4.4): `grant`, `deny`, or `revoke`
/// (a granted one becomes denied; granting again restores it). Taking back a grant —
/// `revoke`, or `deny` of one granted meanwhile — must be confirmed: `confirm` = `yes`.
/// Errors: `Refused` (not confirmed, unknown decision or version, no such approval).
#[server(prefix = "/api", endpoint = "decide")]
pub async fn decide(
    agent: String,
    tool: String,
    decision: String,
    version: Option<String>,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        // the version the row showed: approving a newer one needs another look
        let seen = match version.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            Some(v) => Some(v.parse::<i64>().map_err(|_| {
                ConsoleError::Refused(format!("version {v:?} is not a version number"))
            })?),
            None => None,
        };
        let (state, person) = signed_in().await?;
        let (vendor, name) = split_tool(&tool)?;
        let grant = match decision.as_str() {
            "grant" => true,
            "deny" | "revoke" => false,
            other => return Err(ConsoleError::Refused(format!("unknown decision {other:?}"))),
        };
        // taking back a grant refuses the agent's calls: a revoke, or a deny clicked on
        // a page that showed the approval pending before someone granted it
        let granted = !grant
            && state.graft.approvals().await?.iter().any(|a| {
                a.agent == agent && a.vendor == vendor && a.name == name && a.state == "granted"
            });
        if decision == "revoke" || granted {
            confirmed(
                confirm.as_deref(),
                "taking back a granted approval refuses the agent's calls of the tool",
            )?;
        }
        state
            .graft
            .decide_approval_seen(
                &Actor::Person(person.name),
                &agent,
                vendor,
                name,
                grant,
                seen,
            )
            .await?;
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_segments_are_percent_encoded_utf8() {
        assert_eq!(segment("hermes-1.a_b"), "hermes-1.a_b");
        assert_eq!(segment("a b/c?"), "a%20b%2Fc%3F");
        assert_eq!(segment("é"), "%C3%A9");
    }

    #[test]
    fn causes_read_as_the_spec_words_them() {
        assert_eq!(cause_in_words("agent"), "the agent asked");
        assert_eq!(cause_in_words("publish"), "published by the agent");
        assert_eq!(cause_in_words("console"), "a person in the console");
        assert_eq!(cause_in_words("idle"), "unused past the idle window");
        assert_eq!(cause_in_words("cap"), "over the working-set cap");
        assert_eq!(
            cause_in_words("connection_revoked"),
            "its connection was revoked"
        );
    }
}
