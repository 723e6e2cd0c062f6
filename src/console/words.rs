//! The one place where causes, states, harnesses and counts become words (SPEC §1's
//! glossary), shared by the console's pages, the CLI and MCP answers.

#[cfg(feature = "ssr")]
use crate::domain::{Cause, HistoryAction, PromotedBy};
use serde::{Deserialize, Serialize};

/// `text` with every character that could hide or reorder what a person reads made
/// visible ([`crate::domain::markup::visible`]; security review 32.16).
#[cfg(feature = "ssr")]
pub fn mark_bidi(text: &str) -> String {
    crate::domain::markup::visible(text)
}

/// Whether an HTTP method only reads by SPEC §4.4's write rule (GET, HEAD, OPTIONS, any
/// case; and an MCP vendor's tool, method `MCP`, which reads when its readOnlyHint says
/// so, SPEC §10.2): the console's side of `domain::approval::writes`, which the browser
/// build lacks.
pub fn reads_by_method(method: &str) -> bool {
    matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS" | "MCP"
    )
}

/// What a tool's call does, in words a person reads (issue 14.2): `deletes` when its
/// destructiveHint is set; `writes` by Graft's write rule (SPEC §4.4: a method other
/// than GET, HEAD or OPTIONS, or readOnlyHint false); else `reads`. Without the method
/// (a search hit) the hints alone decide.
pub fn does_in_words(method: Option<&str>, read_only: bool, destructive: bool) -> &'static str {
    let safe_method = method.is_none_or(reads_by_method);
    if destructive {
        "deletes"
    } else if read_only && safe_method {
        "reads"
    } else {
        "writes"
    }
}

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

pub use crate::clients::{
    client_limit_warning, harness_of_client, ClientLimit, Reader, CLIENT_LIMITS,
    CLIENT_LIMIT_MARGIN, OWN_TOOLS, OWN_TOOLS_TOKENS,
};

/// A harness value in words (its label when it is one the form offers).
pub fn harness_in_words(h: &str) -> String {
    HARNESSES
        .iter()
        .find(|(v, _)| *v == h)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| h.to_string())
}

/// Who a stored actor is, in words: `person:ana` reads "ana", `agent:3` "agent 3",
/// anything else (`rule`) as stored.
pub fn actor_in_words(actor: &str) -> String {
    match actor.strip_prefix("person:") {
        Some(name) => name.to_string(),
        None => actor.replace(':', " "),
    }
}

#[cfg(feature = "ssr")]
/// A history row's cause in words, naming the person behind it when there was one
/// (issue 28.8): `actor` is the stored `person:<name>`, `agent:<id>` or `rule`. A
/// person's own promotion or demotion reads "by ana"; a removal they caused reads
/// "<the cause>, by ana".
pub fn cause_by_in_words(cause: Cause, actor: &str) -> String {
    match (cause, actor.strip_prefix("person:")) {
        (Cause::Console, Some(name)) => format!("by {name}"),
        (_, Some(name)) => format!("{}, by {name}", cause_in_words(cause)),
        _ => cause_in_words(cause).to_string(),
    }
}

/// History causes in the words of SPEC §6.
#[cfg(feature = "ssr")]
pub fn cause_in_words(cause: Cause) -> &'static str {
    match cause {
        Cause::Agent => "the agent asked",
        Cause::Publish => "published by the agent",
        Cause::Console => "a person in the console",
        Cause::Idle => "unused past the idle window",
        Cause::Cap => "over the working-set cap",
        Cause::Budget => "over the token budget",
        Cause::ConnectionRevoked => "its connection was revoked",
        Cause::Retired => "its operation left the vendor's document",
        Cause::VendorDisabled => "its vendor was disabled",
        Cause::VendorRemoved => "its vendor was removed",
        Cause::AgentRemoved => "the agent was removed",
        Cause::UpstreamRemoved => "removed by its server",
        // SPEC §1: Graft itself promoting the starter set a person gave the agent
        Cause::Rule => "the starter set",
    }
}

/// `promoted_by` in the words of the seed page's Promoted by column.
#[cfg(feature = "ssr")]
pub fn promoted_by_in_words(by: PromotedBy) -> &'static str {
    match by {
        PromotedBy::Agent => "the agent",
        PromotedBy::Publish => "a publish",
        PromotedBy::Console => "a person",
        PromotedBy::Rule => "the rule",
    }
}

/// A history action in the words of the agent page's History table.
#[cfg(feature = "ssr")]
pub fn action_in_words(action: HistoryAction) -> &'static str {
    match action {
        HistoryAction::Promote => "promoted",
        HistoryAction::Demote => "demoted",
    }
}

/// Percent-encodes one path segment of a console link (UTF-8; agent names, vendor slugs
/// and tool names are `[A-Za-z0-9._-]` and stay as they are).
pub fn segment(s: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.');
    percent_encoding::utf8_percent_encode(s, KEEP).to_string()
}

/// Why a working set is over its cap, in words (issue 28.4), or `None` when it is not:
/// the cap trims only tools never called since their promotion (SPEC §5), so `called`
/// tools of `size` stay until the idle window of `idle_days` days demotes them.
pub fn over_cap_in_words(size: i64, cap: i64, called: i64, idle_days: i64) -> Option<String> {
    (size > cap).then(|| {
        format!(
            "{} for a cap of {cap}: {} called since promotion {} kept, because the cap trims only tools not called since their promotion. Unused for {}, a tool leaves at the sweep.",
            count(size, "tool"),
            count(called, "tool"),
            if called == 1 { "is" } else { "are" },
            count(idle_days, "day"),
        )
    })
}

pub use crate::numbers::{count, grouped, tokens};

/// What an OpenAPI import did, for the page that follows the upload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    /// Vendor slug.
    pub vendor: String,
    /// Operations in the document.
    pub operations: usize,
    /// Tools created.
    pub imported: usize,
    /// Their names.
    #[serde(default)]
    pub created: Vec<String>,
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
    /// An MCP vendor's writes its server now calls reads: kept writes until a person
    /// marks them read-only.
    #[serde(default)]
    pub writes_kept: Vec<String>,
    /// Working-set entries demoted because their tool retired.
    #[serde(default)]
    pub demoted: usize,
    /// Approvals asked again: a new version changed what the call does.
    #[serde(default)]
    pub approvals_reset: usize,
    /// `(agent, tool)` of each grant asked again, by name.
    #[serde(default)]
    pub asked_again: Vec<(String, String)>,
    /// A preview of a re-upload: nothing was written (issue 28.11).
    #[serde(default)]
    pub preview: bool,
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
    /// Applied from a preview that said something else (the toolbox changed since):
    /// the preview's headline (issue 28.11).
    #[serde(default)]
    pub differs_from_preview: Option<String>,
    /// Or why nothing was imported.
    pub error: Option<String>,
}

/// New tools an import's history names one by one; past this it gives their number.
const NEW_LISTED: usize = 100;

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
                n => format!(", {} demoted", count(n as i64, "working-set entry")),
            };
            parts.push(format!(
                "{} retired (gone from the document{demoted})",
                self.retired.len()
            ));
        }
        if self.approvals_reset > 0 {
            // a few are named: the person knows whose agent will ask
            let whose = match self.asked_again.len() {
                1..=3 => format!(
                    " ({})",
                    self.asked_again
                        .iter()
                        .map(|(agent, tool)| format!("{agent} for {tool}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => String::new(),
            };
            parts.push(format!(
                "{} asked again{whose}",
                count(self.approvals_reset as i64, "approval")
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
        let ops = count(self.operations as i64, "operation");
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
            created: r.created,
            renamed: r.renamed,
            skipped: r.skipped,
            withheld: r.withheld,
            updated: r.updated,
            unchanged: r.unchanged,
            restored: r.restored,
            retired: r.retired,
            kept: r.kept,
            writes_kept: r.writes_kept,
            demoted: r.demoted,
            approvals_reset: r.approvals_reset,
            asked_again: r.asked_again,
            preview: r.preview,
            brought_back: r.brought_back,
            moved: r.moved,
            adopted_base_url: r.adopted_base_url,
            origin_moved: r.origin_moved,
            differs_from_preview: None,
            error: None,
        }
    }
}

impl ImportSummary {
    /// Which tools the import updated (and what changed), retired, restored and left
    /// alone, one line each, for the import history.
    pub fn details(&self) -> Vec<String> {
        // new tools by name, unless a first import made hundreds
        let mut out: Vec<String> = match self.created.len() {
            0 => Vec::new(),
            n if n > NEW_LISTED => vec![format!("new: {n} tools (see the Toolbox)")],
            _ => self.created.iter().map(|n| format!("new {n}")).collect(),
        };
        out.extend(
            self.updated
                .iter()
                .map(|(n, what)| format!("updated {n}: {what}")),
        );
        out.extend(
            self.retired
                .iter()
                .map(|n| format!("retired {n}: gone from the document, or from its server's list")),
        );
        out.extend(self.writes_kept.iter().map(|n| {
            format!("kept {n} a write: its server now says it only reads; a person marks it read-only on its page")
        }));
        out.extend(self.restored.iter().map(|n| format!("restored {n}")));
        out.extend(self.asked_again.iter().map(|(agent, tool)| {
            format!("asked again {tool} of agent {agent}: what its calls do changed, so its approval waits for a person")
        }));
        out.extend(
            self.kept
                .iter()
                .map(|n| format!("left alone {n}: an agent wrote its current version")),
        );
        // kept with the import, so the names can be looked up later (issue 28.11)
        out.extend(
            self.renamed
                .iter()
                .map(|(op, n)| format!("named {n}: operation {op}")),
        );
        out.extend(
            self.skipped
                .iter()
                .map(|(op, why)| format!("skipped operation {op}: {why}")),
        );
        out.extend(self.moved.iter().map(|(old, new)| {
            format!("renamed an agent's tool {old} to {new}: the document has an operation of that name")
        }));
        out
    }
}

/// A call outcome label (`graft_tool_calls_total`'s, issue 30.1) in the Activity page's
/// words.
pub fn outcome_label_in_words(label: &str) -> &'static str {
    match label {
        "ok" => "ok",
        "dry_run" => "dry run",
        "approval_required" => "waits for approval",
        "tool_error" => "tool error",
        "refused" => "refused",
        "vendor_error" => "vendor error",
        _ => "other",
    }
}

/// A working-set change label (`graft_working_set_changes_total`'s cause) in the
/// Activity page's words.
pub fn change_label_in_words(label: &str) -> &'static str {
    match label {
        "promote" => "promoted",
        "published" => "published by the agent",
        "rule" => "the starter set",
        "demote" => "demoted",
        "idle" => "unused past the idle window",
        "cap" => "over the cap",
        "budget" => "over the token budget",
        "revoked" => "connection revoked",
        "retired" => "operation retired",
        "disabled" => "vendor disabled",
        "removed" => "vendor or agent removed",
        _ => "other",
    }
}

/// An MCP vendor's server in words: `MCP server at URL` or `local MCP server: COMMAND
/// (in DIR)`.
#[cfg(feature = "ssr")]
pub fn server_words(v: &crate::service::VendorView) -> String {
    match (&v.mcp_url, &v.mcp_command) {
        (Some(url), _) => format!("MCP server at {url}"),
        (None, Some(command)) => {
            let argv: Vec<String> = serde_json::from_str(command).unwrap_or_default();
            let dir = v
                .mcp_cwd
                .as_deref()
                .map(|d| format!(" (in {d})"))
                .unwrap_or_default();
            format!(
                "local MCP server: {}{dir}",
                crate::domain::mcp_vendor::join_command(&argv)
            )
        }
        (None, None) => v.base_url.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_group_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(-1234567), "-1,234,567");
        assert_eq!(tokens(1), "1 token");
        assert_eq!(tokens(500000), "500,000 tokens");
    }

    #[test]
    fn an_over_cap_set_says_why() {
        assert_eq!(over_cap_in_words(3, 3, 3, 21), None);
        let w = over_cap_in_words(7, 3, 5, 1).unwrap();
        assert!(
            w.starts_with("7 tools for a cap of 3: 5 tools called since promotion are kept"),
            "{w}"
        );
        assert!(
            w.ends_with("Unused for 1 day, a tool leaves at the sweep."),
            "{w}"
        );
        assert!(over_cap_in_words(2, 1, 1, 21)
            .unwrap()
            .contains("1 tool called since promotion is kept"));
    }

    #[test]
    fn link_segments_are_percent_encoded_utf8() {
        assert_eq!(segment("hermes-1.a_b"), "hermes-1.a_b");
        assert_eq!(segment("a b/c?"), "a%20b%2Fc%3F");
        assert_eq!(segment("é"), "%C3%A9");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn causes_read_as_the_spec_words_them() {
        assert_eq!(
            cause_in_words(Cause::parse("agent").unwrap()),
            "the agent asked"
        );
        assert_eq!(
            cause_in_words(Cause::parse("publish").unwrap()),
            "published by the agent"
        );
        assert_eq!(
            cause_in_words(Cause::parse("console").unwrap()),
            "a person in the console"
        );
        assert_eq!(cause_by_in_words(Cause::Console, "person:ana"), "by ana");
        assert_eq!(actor_in_words("person:ana"), "ana");
        assert_eq!(actor_in_words("agent:3"), "agent 3");
        assert_eq!(
            cause_by_in_words(Cause::VendorRemoved, "person:ana"),
            format!("{}, by ana", cause_in_words(Cause::VendorRemoved))
        );
        assert_eq!(
            cause_by_in_words(Cause::Idle, "rule"),
            cause_in_words(Cause::Idle)
        );
        assert_eq!(
            cause_in_words(Cause::parse("idle").unwrap()),
            "unused past the idle window"
        );
        assert_eq!(
            cause_in_words(Cause::parse("rule").unwrap()),
            "the starter set"
        );
        assert_eq!(
            promoted_by_in_words(PromotedBy::parse("rule").unwrap()),
            "the rule"
        );
        assert_eq!(
            cause_in_words(Cause::parse("cap").unwrap()),
            "over the working-set cap"
        );
        assert_eq!(
            cause_in_words(Cause::parse("connection_revoked").unwrap()),
            "its connection was revoked"
        );
    }
}
