//! Tool versions (SPEC §2 tool_versions): the row a new version writes, and what changed
//! between two versions (for approvals, renames and History's notes).

use super::ServiceError;
use crate::db;
use crate::domain;
use crate::domain::tool::{Hints, ToolDraft};
use serde_json::Value;

/// Hints a person sets (`None` keeps the current value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HintChange {
    /// readOnlyHint.
    pub read_only: Option<bool>,
    /// destructiveHint.
    pub destructive: Option<bool>,
    /// idempotentHint.
    pub idempotent: Option<bool>,
    /// openWorldHint.
    pub open_world: Option<bool>,
}

/// The fields of a version that `publish` may change (every one optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionChange {
    /// New description.
    pub description: Option<String>,
    /// New method.
    pub method: Option<String>,
    /// New path template.
    pub path: Option<String>,
    /// New input schema.
    pub input_schema: Option<Value>,
    /// New query properties.
    pub query: Option<Vec<String>>,
    /// New header properties.
    pub headers: Option<Vec<String>>,
    /// New body encoding.
    pub body_encoding: Option<String>,
    /// The version the change was written against (the console's edit form): the
    /// publish is refused with `Conflict` when the tool is at another version by then,
    /// so nobody overwrites a version they did not see. `None`: on top of the newest.
    pub base_version: Option<i64>,
}

/// `Conflict`: `vendor__name` is at version `now`, not `base` that a change was made
/// from.
pub(super) fn stale(vendor: &str, name: &str, base: i64, now: i64) -> ServiceError {
    ServiceError::Conflict(format!(
        "{vendor}__{name} is at version {now} now, not version {base} that this change was made from: look at it again"
    ))
}

/// What a new version changes in what a call does (issue 12.15), in words, or `None`:
/// the method, the path template, where inputs go (query, headers, cookies, defaults),
/// the body encoding or fixed headers, or a read becoming a write; for an MCP vendor's
/// tool also its description (issue 27.6). A new description or schema of an HTTP tool
/// alone changes nothing here.
pub fn call_change(old: &db::ToolRow, new: &ToolDraft, hints: Hints) -> Option<String> {
    let mut what: Vec<String> = Vec::new();
    if !old.method.eq_ignore_ascii_case(&new.method) {
        what.push(format!("method {} → {}", old.method, new.method));
    }
    if old.path_template != new.path_template {
        what.push(format!(
            "path {} → {}",
            old.path_template, new.path_template
        ));
    }
    let ob: crate::domain::tool::Binding = serde_json::from_str(&old.binding).unwrap_or_default();
    let nb = &new.binding;
    if ob.path != nb.path
        || ob.query != nb.query
        || ob.headers != nb.headers
        || ob.cookies != nb.cookies
        || ob.styles != nb.styles
    {
        what.push("where the inputs go (path, query, headers, cookies)".into());
    }
    if ob.body != nb.body
        || ob.body_property != nb.body_property
        || ob.body_styles != nb.body_styles
    {
        what.push("the body encoding".into());
    }
    if ob.fixed_headers != nb.fixed_headers || ob.defaults != nb.defaults {
        what.push("the headers or default values Graft sends".into());
    }
    // an MCP vendor's tool does what its server says it does: a person approved the
    // description they read (issue 27.6), so a new one asks again
    if new.method == crate::domain::mcp_vendor::MCP_METHOD && old.description != new.description {
        what.push("the server's description of what it does".into());
    }
    let was_write = crate::domain::approval::writes(&old.method, old.read_only_hint);
    if !was_write && crate::domain::approval::writes(&new.method, hints.read_only_hint) {
        what.push("a read became a write".into());
    } else if was_write && !old.destructive_hint && hints.destructive_hint {
        what.push("a write became one that may delete or overwrite data".into());
    }
    (!what.is_empty()).then(|| what.join("; "))
}

/// The stored form of a draft version (SPEC §2 `tool_versions`), with its binding as JSON
/// and the hints to store (an author's follow the method; a person's are their own).
pub(crate) fn version_row<'a>(
    d: &'a crate::domain::tool::ToolDraft,
    binding: &'a serde_json::Value,
    hints: crate::domain::tool::Hints,
    authored_by: &'a str,
) -> db::NewVersion<'a> {
    db::NewVersion {
        title: d.title.as_deref(),
        description: &d.description,
        input_schema: &d.input_schema,
        output_schema: d.output_schema.as_ref(),
        method: &d.method,
        path_template: &d.path_template,
        binding,
        hints: [
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ],
        authored_by,
        search_text: serde_json::to_string(&domain::search::enrich::enrich_draft(d))
            .unwrap_or_default(),
    }
}

/// What a re-imported operation changes in its tool's current version, in words (every
/// field: the call's shape as [`authoring::call_change`] words it, plus the title, the
/// description, the input schema and the hints), or `None` when nothing differs.
pub(crate) fn definition_change(
    old: &db::ToolRow,
    d: &crate::domain::tool::ToolDraft,
    binding: &serde_json::Value,
    hints: crate::domain::tool::Hints,
) -> Option<String> {
    let mut what: Vec<String> = Vec::new();
    if let Some(c) = call_change(old, d, hints) {
        what.push(c);
    } else if serde_json::from_str::<serde_json::Value>(&old.binding)
        .ok()
        .as_ref()
        != Some(binding)
    {
        what.push("the binding".into());
    }
    if old
        .output_schema
        .as_deref()
        .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
        != d.output_schema
    {
        what.push("the output schema".into());
    }
    if old.title != d.title {
        what.push("the title".into());
    }
    if old.description != d.description {
        what.push("the description".into());
    }
    if serde_json::from_str::<serde_json::Value>(&old.input_schema)
        .ok()
        .as_ref()
        != Some(&d.input_schema)
    {
        what.push("the input schema".into());
    }
    let old_hints = [
        old.read_only_hint,
        old.destructive_hint,
        old.idempotent_hint,
        old.open_world_hint,
    ];
    let new_hints = [
        hints.read_only_hint,
        hints.destructive_hint,
        hints.idempotent_hint,
        hints.open_world_hint,
    ];
    if old_hints != new_hints {
        what.push("the hints".into());
    }
    (!what.is_empty()).then(|| what.join("; "))
}
