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
    /// The reason given with the denial, which the agent's calls receive (issue 28.6).
    #[serde(default)]
    pub reason: Option<String>,
    /// The decisions people made on it, newest first (issue 28.6); at most the latest
    /// ten.
    #[serde(default)]
    pub decisions: Vec<DecisionItem>,
    /// Whether older decisions exist than those in `decisions`.
    #[serde(default)]
    pub older_decisions: bool,
    /// How many agents' approvals of this tool wait for this same version, this one
    /// included (the Approvals page offers to approve them all when more than one).
    #[serde(default)]
    pub waiting: usize,
}

/// One decision a person made on an approval (issue 28.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionItem {
    /// The version decided on.
    pub version: Option<i64>,
    /// `granted` or `denied`.
    pub state: String,
    /// The person's name.
    pub by: String,
    /// When (ms).
    pub at: i64,
    /// A denial's reason.
    pub reason: Option<String>,
}

/// The Approvals page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalsData {
    /// The server's clock (ms).
    pub now: i64,
    /// The approvals the filter lets through, pending first.
    pub approvals: Vec<ApprovalItem>,
    /// How many approvals there are without the filter.
    pub total: usize,
    /// The agents and vendors with approvals, by name (the filter's choices).
    pub agents: Vec<String>,
    pub vendors: Vec<String>,
    /// The filter applied: agent, vendor, state (empty when not set).
    pub filter: (String, String, String),
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
        reason: a.reason.map(|r| mark_bidi(&r)),
        older_decisions: a.decisions.len() > crate::service::approvals::DECISIONS_SHOWN,
        decisions: a
            .decisions
            .into_iter()
            .take(crate::service::approvals::DECISIONS_SHOWN)
            .map(|d| DecisionItem {
                version: d.version,
                state: d.state.as_str().into(),
                by: mark_bidi(&crate::console::words::actor_in_words(&d.decided_by)),
                at: d.decided_at,
                reason: d.reason.map(|r| mark_bidi(&r)),
            })
            .collect(),
        waiting: 0,
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

/// The approvals of `agent`, `vendor` and in `state` (each optional; empty is any;
/// issue 28.6), pending first. Errors: `Refused` (an unknown state).
#[server(prefix = "/api", endpoint = "approvals")]
pub async fn approvals(
    agent: Option<String>,
    vendor: Option<String>,
    state: Option<String>,
) -> ConsoleResult<ApprovalsData> {
    with_status(async move {
        let set = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let (agent, vendor, wanted) = (set(agent), set(vendor), set(state));
        let state_filter = match wanted.as_deref() {
            None => None,
            Some(s) => Some(
                crate::domain::approval::ApprovalState::try_from(s.to_string()).map_err(|_| {
                    ConsoleError::Refused(format!(
                        "unknown state {s:?}: pending, granted or denied"
                    ))
                })?,
            ),
        };
        let (st, _) = signed_in().await?;
        let all = st.graft.approvals().await?;
        let filter = crate::service::ApprovalFilter {
            agent: agent.clone(),
            vendor: vendor.clone(),
            state: state_filter,
        };
        let waiting = |x: &crate::service::ApprovalView| {
            all.iter()
                .filter(|y| {
                    y.tool_id == x.tool_id
                        && y.state == crate::domain::approval::ApprovalState::Pending
                        && y.version == x.version
                })
                .count()
        };
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v.dedup();
            v
        };
        let agents = sorted(all.iter().map(|a| a.agent.clone()).collect());
        let vendors = sorted(all.iter().map(|a| a.vendor.clone()).collect());
        let approvals = all
            .iter()
            .filter(|a| filter.admits(a))
            .map(|a| {
                let n = waiting(a);
                ApprovalItem {
                    waiting: if a.state == crate::domain::approval::ApprovalState::Pending {
                        n
                    } else {
                        0
                    },
                    ..approval_item(a.clone())
                }
            })
            .collect();
        Ok(ApprovalsData {
            now: st.graft.clock_now(),
            approvals,
            total: all.len(),
            agents,
            vendors,
            filter: (
                agent.unwrap_or_default(),
                vendor.unwrap_or_default(),
                wanted.unwrap_or_default(),
            ),
        })
    })
    .await
}

/// Approves, for every agent it waits for, the tool `tool` (`vendor__name`) at the
/// version the person was shown (issue 28.6: "approve all pending for this tool");
/// answers the agents approved. Errors: `Refused` (a newer version: look again; a
/// version that is not a number; a removed vendor).
#[server(prefix = "/api", endpoint = "approve_pending")]
pub async fn approve_pending(tool: String, version: String) -> ConsoleResult<Vec<String>> {
    with_status(async move {
        let seen = version.trim().parse::<i64>().map_err(|_| {
            ConsoleError::Refused(format!("version {version:?} is not a version number"))
        })?;
        let (state, person) = signed_in().await?;
        let (vendor, name) = split_tool(&tool)?;
        Ok(state
            .graft
            .grant_pending_approvals(&Actor::Person(person.name), vendor, name, seen)
            .await?)
    })
    .await
}

/// Decides one agent's use of one write tool (SPEC §4.4): `grant`, `deny`, or `revoke`
/// (a granted one becomes denied; granting again restores it); a denial may carry a
/// `reason` the agent's calls receive (issue 28.6; at most 500 characters). Taking back a grant —
/// `revoke`, or `deny` of one granted meanwhile — must be confirmed: `confirm` = `yes`.
/// Errors: `Refused` (not confirmed, unknown decision or version, no such approval).
#[server(prefix = "/api", endpoint = "decide")]
pub async fn decide(
    agent: String,
    tool: String,
    decision: String,
    version: Option<String>,
    confirm: Option<String>,
    reason: Option<String>,
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
                &crate::service::DecideHow {
                    grant,
                    seen,
                    reason: reason.as_deref().filter(|_| !grant),
                },
            )
            .await?;
        Ok(())
    })
    .await
}
