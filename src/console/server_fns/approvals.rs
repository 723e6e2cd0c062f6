//! Approvals in the console (SPEC §4.4, §6): the list, and granting or refusing one.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{confirmed, signed_in, split_tool, with_status, ConsoleError};
#[cfg(feature = "ssr")]
use crate::console::words::mark_bidi;
#[cfg(feature = "ssr")]
use crate::service::Actor;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// An approval row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalItem {
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

/// The Approvals page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalsData {
    /// The server's clock (ms).
    pub now: i64,
    /// Pending first.
    pub approvals: Vec<ApprovalItem>,
}

#[cfg(feature = "ssr")]
pub(crate) fn approval_item(a: crate::service::ApprovalView) -> ApprovalItem {
    ApprovalItem {
        agent: a.agent,
        vendor: a.vendor,
        name: a.name,
        state: a.state.as_str().into(),
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
        let granted = !grant && state.graft.approval_granted(&agent, vendor, name).await?;
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
