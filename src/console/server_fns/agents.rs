//! Agents in the console (SPEC §6): list, add, edit, rotate a token, disable, remove,
//! and one agent's page: its working set, history, calls and approvals (promote and
//! demote: working_set.rs).

#[cfg(feature = "ssr")]
use crate::console::server_fns::{
    approval_item, back_saying_saved, confirmed, number, signed_in, with_status, ConsoleError,
    Flash, CALLS_SHOWN,
};
use crate::console::server_fns::{ApprovalItem, ConsoleResult};
#[cfg(feature = "ssr")]
use crate::console::words::{
    action_in_words, cause_by_in_words, cause_in_words, harness_in_words, promoted_by_in_words,
    segment, HARNESSES,
};
#[cfg(feature = "ssr")]
use crate::domain::audit::AuditAction as Audit;
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

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
    /// When a person disabled it (ms): its token is refused until it is enabled.
    #[serde(default)]
    pub disabled_at: Option<i64>,
    /// When a person removed it (ms): its page keeps its history, nothing else changes.
    #[serde(default)]
    pub removed_at: Option<i64>,
    /// What its working set costs, in tokens of the served definitions (issue 29.1).
    #[serde(default)]
    pub tokens: i64,
    /// Its token budget (issue 29.2), if any.
    #[serde(default)]
    pub token_budget: Option<i64>,
}

/// The Agents page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentsData {
    /// The server's clock (ms) for relative times.
    pub now: i64,
    /// Every agent by name.
    pub agents: Vec<AgentItem>,
    /// Every starter template's name (New agent's choice, issue 31).
    #[serde(default)]
    pub templates: Vec<String>,
}

/// A working-set entry as the harness sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryItem {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    pub description: String,
    /// Promoted by, in words ("the agent", "a publish", "a person", "the rule").
    pub promoted_by: String,
    /// Promotion time (ms).
    pub promoted_at: i64,
    /// Last call (ms); `None` reads "never".
    pub last_used_at: Option<i64>,
    /// Calls by this agent.
    pub calls: i64,
    /// Tokens of its served definition (issue 29.1); `None` while not counted.
    #[serde(default)]
    pub tokens: Option<i64>,
    /// Why its calls would go without a usable credential (issue 28.12), if so.
    #[serde(default)]
    pub connection_warning: Option<String>,
}

/// What the agent page's client configurations show where the token goes: Graft keeps
/// only its hash, so the token itself is shown once, at creation or rotation.
pub const TOKEN_PLACEHOLDER: &str = "YOUR_AGENT_TOKEN";

/// A History row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryItem {
    /// `vendor__name`.
    pub tool: String,
    /// `promoted` or `demoted`.
    pub action: String,
    /// The cause in words (SPEC §6).
    pub cause: String,
    /// When (ms).
    pub at: i64,
}

/// The Agent page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentData {
    /// The server's clock (ms).
    pub now: i64,
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
    /// Working-set tokens after each change, `(ms, tokens)`, oldest first, each tool
    /// counted at its current version (issue 29.1).
    #[serde(default)]
    pub token_steps: Vec<(i64, i64)>,
    /// Its calls per day over the last 30 days, `(day start ms, calls)`, oldest first
    /// (issue 30.4).
    #[serde(default)]
    pub calls_per_day: Vec<(i64, i64)>,
    /// A warning when its tool list nears or passes what its harness's client takes
    /// (issue 29.3).
    #[serde(default)]
    pub client_warning: Option<String>,
    /// Its newest calls (20 at most), newest first, narrowed to `calls_outcome`.
    pub calls: Vec<CallItem>,
    /// The outcome the calls are narrowed to (`ok`, `failed`, `approval`, `dry-run`).
    pub calls_outcome: Option<String>,
    /// Whether older calls exist past the last one shown.
    pub calls_more: bool,
    /// The call id the list starts below, when it is not the newest page.
    #[serde(default)]
    pub calls_before: Option<i64>,
    /// Each client's configuration with [`TOKEN_PLACEHOLDER`] where the token goes
    /// (issue 28.1), the agent's harness first.
    #[serde(default)]
    pub snippets: Vec<crate::console::snippets::Snippet>,
    /// Its starter set (issue 31).
    #[serde(default)]
    pub starter: crate::console::server_fns::StarterData,
    /// The OAuth clients acting as it (issue 26.4), newest first.
    #[serde(default)]
    pub oauth_clients: Vec<crate::console::server_fns::OAuthClientItem>,
    /// The URL an OAuth client is given: Graft's public MCP URL.
    #[serde(default)]
    pub mcp_url: String,
}

/// One call of the calls log (issue 14.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallItem {
    /// Call id (increasing; `before` of the next page).
    pub id: i64,
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
    pub agent: String,
    /// The bearer token (shown once, never stored in clear).
    pub token: String,
    /// The MCP endpoint URL.
    pub url: String,
    /// Each client's configuration.
    pub snippets: Vec<crate::console::snippets::Snippet>,
}

#[cfg(feature = "ssr")]
pub(crate) fn agent_item(a: crate::service::AgentSummary) -> AgentItem {
    AgentItem {
        name: a.name,
        harness: a.harness,
        size: a.size,
        cap: a.cap,
        idle_window_days: a.idle_window_days,
        last_seen_at: a.last_seen_at,
        disabled_at: a.disabled_at,
        removed_at: a.removed_at,
        tokens: a.tokens,
        token_budget: a.token_budget,
    }
}

/// A calls-log row for the console.
#[cfg(feature = "ssr")]
pub(crate) fn call_item(c: crate::service::CallView) -> CallItem {
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
        // agent- and vendor-written text: what could hide or reorder it made visible
        // (security review 32.16)
        message: c.message.map(|m| {
            crate::console::words::mark_bidi(&crate::domain::search::text::first_sentence(&m, 200))
        }),
        input: c.input.map(|i| crate::console::words::mark_bidi(&i)),
        duration_ms: c.duration_ms,
        at: c.at,
    }
}

/// The Agents page: every agent with its size, cap, window and last seen.
#[server(prefix = "/api", endpoint = "agents")]
pub async fn agents() -> ConsoleResult<AgentsData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let agents = state.graft.list_agents().await?;
        Ok(AgentsData {
            now: state.graft.clock_now(),
            // removed agents last: their pages keep their history
            agents: {
                let mut v: Vec<AgentItem> = agents.into_iter().map(agent_item).collect();
                v.sort_by_key(|a| a.removed_at.is_some());
                v
            },
            templates: state
                .graft
                .starter_templates()
                .await?
                .into_iter()
                .map(|t| t.name)
                .collect(),
        })
    })
    .await
}

/// Checks the agent form's fields one by one so each error lands at its field.
#[cfg(feature = "ssr")]
pub(crate) fn check_agent_fields(
    name: &str,
    cap: &str,
    window: &str,
) -> ConsoleResult<(String, i64, i64)> {
    use crate::domain;
    let name = domain::check_agent_name(name.trim()).map_err(|m| ConsoleError::field("name", m))?;
    let cap = number("cap", "cap", cap)?;
    domain::check_cap(cap).map_err(|m| ConsoleError::field("cap", m))?;
    let window = number("window", "idle window", window)?;
    domain::check_idle_window(window).map_err(|m| ConsoleError::field("window", m))?;
    Ok((name, cap, window))
}

/// Reads the token budget field (issue 29.2): empty or `none` is no budget; commas and spaces
/// between digits are allowed. Errors: at `token_budget` (not a number, out of
/// 1,000..=500,000).
#[cfg(feature = "ssr")]
pub(crate) fn check_budget_field(text: &str) -> ConsoleResult<Option<i64>> {
    let t: String = text
        .chars()
        .filter(|c| !matches!(c, ',' | ' ' | '_'))
        .collect();
    if t.is_empty() || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let n = number("token_budget", "token budget", &t)?;
    crate::domain::check_token_budget(n)
        .map(Some)
        .map_err(|m| ConsoleError::field("token_budget", m))
}

/// Maps a taken name to the `name` field.
#[cfg(feature = "ssr")]
pub(crate) fn name_taken(e: ServiceError) -> ConsoleError {
    match e {
        ServiceError::Conflict(m) => ConsoleError::field("name", m),
        other => other.into(),
    }
}

/// Creates an agent (SPEC §6 New agent) and goes to the page that shows its token once.
/// With `starter` (a template's name; empty: none) the rule promotes the template's tools
/// at once (issue 31). Errors: at `name` (rules, taken), `cap` (1..=500), `window`
/// (1..=3650 days), `starter` (no such template).
#[server(prefix = "/api", endpoint = "add_agent")]
pub async fn add_agent(
    name: String,
    harness: String,
    cap: String,
    window: String,
    starter: Option<String>,
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
        let starter = starter.filter(|s| !s.trim().is_empty());
        if let Some(s) = &starter {
            if !state
                .graft
                .starter_templates()
                .await?
                .iter()
                .any(|t| &t.name == s)
            {
                return Err(ConsoleError::field(
                    "starter",
                    format!("no starter template named {s:?}: choose one from the list"),
                ));
            }
        }
        let (agent, token, _) = state
            .graft
            .add_agent_with_starter(
                &name,
                Some(harness.as_str()),
                Some(cap),
                Some(window),
                starter.as_deref(),
            )
            .await
            .map_err(name_taken)?;
        tracing::info!(agent = %agent.name, by = %person.name, "agent created in the console");
        let said = starter.map(|s| format!("starter template {s}"));
        let by = Actor::Person(person.name.clone());
        (state.graft)
            .audit(&by, Audit::AgentAdd, &agent.name, said.as_deref())
            .await?;
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

/// Changes an agent's name, cap, idle window and token budget (SPEC §6 "Name, cap and
/// idle window"; issue 29.2); the rule reads them at the next sweep. The agent page's
/// form sends `budget_field` = `yes` beside `token_budget`, so that an empty budget
/// clears it (an empty field arrives as no field at all); a form without `budget_field`
/// (the Agents list's Edit) leaves the budget as it is. Nothing is saved when a field is
/// wrong. A new name moves the page to its new address.
#[server(prefix = "/api", endpoint = "edit_agent")]
pub async fn edit_agent(
    agent: String,
    name: String,
    cap: String,
    window: String,
    token_budget: Option<String>,
    budget_field: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let (name, cap, window) = check_agent_fields(&name, &cap, &window)?;
        let budget = match (token_budget.as_deref(), budget_field.is_some()) {
            (Some(t), _) => Some(check_budget_field(t)?),
            (None, true) => Some(None),
            (None, false) => None,
        };
        let a = state
            .graft
            .set_agent_settings(&agent, Some(&name), Some(cap), Some(window), budget)
            .await
            .map_err(name_taken)?;
        let detail = crate::service::audit::agent_settings_detail(&a, &agent);
        let by = Actor::Person(person.name);
        (state.graft)
            .audit(&by, Audit::AgentEdit, &a.name, Some(&detail))
            .await?;
        if a.name != agent {
            leptos_axum::redirect(&format!("/agents/{}?saved=agent", segment(&a.name)));
        } else {
            back_saying_saved("agent");
        }
        Ok(())
    })
    .await
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
        let by = Actor::Person(person.name.clone());
        (state.graft)
            .audit(&by, Audit::AgentRotateToken, &a.name, None)
            .await?;
        let id = state
            .flash
            .put(&person.name, Flash::Token(a.name.clone(), token));
        leptos_axum::redirect(&format!("/agents/{}/token?reveal={id}", segment(&a.name)));
        Ok(())
    })
    .await
}

/// Disables (`disabled` = `yes`) or enables (`no`) an agent (issue 28.1). Disabling
/// refuses its token at once and ends its sessions, so it must be confirmed: `confirm` =
/// `yes`. Errors: `Refused` (not confirmed, unknown agent or value).
#[server(prefix = "/api", endpoint = "set_agent_disabled")]
pub async fn set_agent_disabled(
    agent: String,
    disabled: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let disabled = match disabled.as_str() {
            "yes" => true,
            "no" => false,
            other => {
                return Err(ConsoleError::Refused(format!(
                    "disabled must be yes or no (got {other:?})"
                )))
            }
        };
        if disabled {
            confirmed(
                confirm.as_deref(),
                "disabling an agent refuses its token at once",
            )?;
        }
        let a = state
            .graft
            .set_agent_disabled(&Actor::Person(person.name), &agent, disabled)
            .await?;
        leptos_axum::redirect(&format!("/agents/{}", segment(&a.name)));
        Ok(())
    })
    .await
}

/// Removes an agent (issue 28.1) once confirmed (`confirm` = `yes`): its token and
/// sessions end, its working set is demoted, its history stays; goes to its page, under
/// the name it keeps. Errors: `Refused` (not confirmed, unknown agent).
#[server(prefix = "/api", endpoint = "remove_agent")]
pub async fn remove_agent(agent: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "removing an agent ends its token and demotes its working set for good",
        )?;
        let a = state
            .graft
            .remove_agent(&Actor::Person(person.name), &agent)
            .await?;
        leptos_axum::redirect(&format!("/agents/{}", segment(&a.name)));
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
            snippets.sort_by_key(|s| !s.client.starts_with(label.as_str()));
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
        let a_id = a.id;
        let url = format!("{}/mcp", state.public_url.trim_end_matches('/'));
        let mut snippets = crate::console::snippets::all(&a.name, &url, TOKEN_PLACEHOLDER);
        if let Some(label) = a.harness.as_deref().map(harness_in_words) {
            snippets.sort_by_key(|s| !s.client.starts_with(label.as_str()));
        }
        let now = g.clock_now();
        let entries = g.working_set_view(a.id).await?;
        let mut warnings = Vec::with_capacity(entries.len());
        for e in &entries {
            warnings.push(g.connection_warning(&e.entry.tool).await?);
        }
        let history_total = g.history_count(a.id).await?;
        let pages = ((history_total + PER_PAGE - 1) / PER_PAGE).max(1);
        let page = page.clamp(1, pages);
        let history = g.history(a.id, PER_PAGE, (page - 1) * PER_PAGE).await?;
        let preview =
            crate::service::Graft::sweep_preview(&a, &entries, state.next_sweep_at().max(now));
        let client_warning = crate::console::words::client_limit_warning(
            a.harness.as_deref(),
            entries.len() as i64,
            crate::console::words::Reader::Person,
        );
        // an unknown outcome (a stale or mistyped link) shows every call
        let outcome = outcome
            .as_deref()
            .map(str::trim)
            .and_then(crate::service::CallOutcome::parse);
        let filter = crate::service::CallFilter {
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
            agent: agent_item(crate::service::AgentSummary::new(
                a,
                entries.len() as i64,
                entries.iter().filter_map(|e| e.entry.tool.tokens).sum(),
            )),
            entries: entries
                .into_iter()
                .zip(warnings)
                .map(|(e, connection_warning)| EntryItem {
                    vendor: e.entry.tool.vendor,
                    name: e.entry.tool.name,
                    // the full text is on the tool's page
                    description: crate::domain::openapi::truncate_chars(
                        &e.entry.tool.description,
                        200,
                    ),
                    promoted_by: promoted_by_in_words(e.entry.promoted_by).into(),
                    promoted_at: e.entry.promoted_at,
                    last_used_at: e.last_used_at,
                    calls: e.calls,
                    tokens: e.entry.tool.tokens,
                    connection_warning,
                })
                .collect(),
            history: history
                .into_iter()
                .map(|h| HistoryItem {
                    tool: format!("{}__{}", h.vendor, h.name),
                    action: action_in_words(h.action).into(),
                    cause: cause_by_in_words(h.cause, &h.actor),
                    at: h.at,
                })
                .collect(),
            history_total,
            page,
            per_page: PER_PAGE,
            preview: preview
                .into_iter()
                .map(|(t, c)| (t, cause_in_words(c).to_string()))
                .collect(),
            next_sweep_minutes: state.minutes_to_next_sweep(now),
            approvals,
            sizes: g.size_over_time(a_id).await?,
            token_steps: g.tokens_over_time(a_id).await?,
            calls_per_day: g.agent_calls_per_day(a_id, 30).await?,
            client_warning,
            calls: calls.into_iter().map(call_item).collect(),
            calls_outcome: outcome.map(|o| o.as_str().to_string()),
            calls_more,
            calls_before: before,
            snippets,
            starter: crate::console::server_fns::starter_data(g, &name).await?,
            oauth_clients: crate::console::server_fns::oauth_clients(g, a_id).await?,
            mcp_url: url,
        })
    })
    .await
}
