//! One agent's page (SPEC §6): its working set, promote, the sweep's preview, history
//! and calls.

use super::approvals::approvals_table;
use super::starters::{starter_card, StarterActions};
use super::tables::{calls_table, CallColumns};
use crate::console::components::{
    does_badge, error_of, hits_pager, hits_span, loaded, saved, snippet_view, Confirm, DataTable,
    FieldError, FormError, Frame, LoadError, SizeChart, StackedBars, When,
};
use crate::console::server_fns::{
    agent, search_tools, AgentData, ConsoleResult, Decide, Demote, EditAgent, Promote, RemoveAgent,
    RevokeOauthClient, RotateToken, SearchData, SetAgentDisabled, TOKEN_PLACEHOLDER,
};
use crate::console::server_fns::{ApplyStarter, EditStarter, SetStarterTemplate};
use crate::console::words::{count, does_in_words, harness_in_words, over_cap_in_words, segment};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/agents/:name`: the working set, promote, the chart, settings, history, approvals.
#[component]
pub fn AgentPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let edit = ServerAction::<EditAgent>::new();
    let promote_action = ServerAction::<Promote>::new();
    let demote_action = ServerAction::<Demote>::new();
    let decide_action = ServerAction::<Decide>::new();
    let rotate = ServerAction::<RotateToken>::new();
    let disable = ServerAction::<SetAgentDisabled>::new();
    let remove = ServerAction::<RemoveAgent>::new();
    let revoke_oauth = ServerAction::<RevokeOauthClient>::new();
    let starter = StarterActions {
        edit: ServerAction::<EditStarter>::new(),
        template: ServerAction::<SetStarterTemplate>::new(),
        apply: ServerAction::<ApplyStarter>::new(),
        decide: decide_action,
    };
    let name = move || params.read().get("name").unwrap_or_default();
    let page = move || {
        query
            .read()
            .get("page")
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(1)
    };
    let q = move || query.read().get("q").unwrap_or_default();
    let outcome = move || query.read().get("calls");
    let before = move || {
        query
            .read()
            .get("before")
            .and_then(|b| b.parse::<i64>().ok())
    };
    // its working set, approvals and calls change while the page is open (issue 28.3)
    let live = crate::console::live::changes(&["agents", "approvals", "calls"]);
    let data = Resource::new(
        move || {
            (
                name(),
                page(),
                outcome(),
                before(),
                live.get() as usize
                    + edit.version().get()
                    + promote_action.version().get()
                    + demote_action.version().get()
                    + decide_action.version().get()
                    + disable.version().get()
                    + remove.version().get()
                    + revoke_oauth.version().get()
                    + starter.edit.version().get()
                    + starter.template.version().get()
                    + starter.apply.version().get(),
            )
        },
        |(n, p, o, b, _)| agent(n, p, o, b),
    );
    let hits_page = move || query.read().get("hp").and_then(|p| p.parse::<i64>().ok());
    let hits = Resource::new(
        move || (q(), name(), hits_page(), promote_action.version().get()),
        |(q, n, p, _)| search_tools(q, Some(n), None, p),
    );
    let sq = move || query.read().get("sq").unwrap_or_default();
    let starter_hits = Resource::new(
        move || (sq(), starter.edit.version().get()),
        |(q, _)| search_tools(q, None, None, None),
    );
    let errs = [
        error_of(promote_action),
        error_of(demote_action),
        error_of(decide_action),
        error_of(rotate),
        error_of(disable),
        error_of(remove),
        error_of(starter.edit),
        error_of(starter.template),
        error_of(starter.apply),
    ];
    let action_err = Signal::derive(move || errs.iter().find_map(|e| e.get()));
    let edit_err = error_of(edit);
    let saved = saved(edit, "agent");
    let starter_saved = {
        let (a, b, c) = (
            crate::console::components::saved(starter.edit, "starter"),
            crate::console::components::saved(starter.template, "starter"),
            crate::console::components::saved(starter.apply, "starter"),
        );
        Signal::derive(move || a.get() || b.get() || c.get())
    };
    view! {
        <Frame title=untrack(name) refresh=decide_action.version()>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let d = match data.await {
                        Ok(d) => d,
                        Err(e) => return view! { <h1>{name()}</h1><LoadError err=e/> }.into_any(),
                    };
                    let a = d.agent.clone();
                    let (n_h1, n_hits, n_hidden, n_name, n_rotate) = (a.name.clone(), a.name.clone(), a.name.clone(), a.name.clone(), a.name.clone());
                    let (n_disable, n_remove) = (a.name.clone(), a.name.clone());
                    let disabled_at = a.disabled_at;
                    let removed_at = a.removed_at;
                    let now = d.now;
                    let per_day: Vec<Vec<i64>> = d.calls_per_day.iter().map(|(_, n)| vec![*n]).collect();
                    let per_day_from = d.calls_per_day.first().map(|(t, _)| *t).unwrap_or(now);
                    let (cap_input, set_cap_input) = signal(a.cap);
                    view! {
                        <h1>"Agent "{n_h1}</h1>
                        <p class="muted">
                            {a.harness.as_deref().map(|h| format!("{} · ", harness_in_words(h)))}
                            {format!("{} of {} · {} · idle window {} · last seen ", a.size, count(a.cap, "tool"), tokens_of_budget(a.tokens, a.token_budget), count(a.idle_window_days, "day"))}
                            {match a.last_seen_at { Some(t) => view! { <When at=t now/> }.into_any(), None => "never".into_any() }}
                        </p>
                        {removed_at.map(|t| view! {
                            <p class="warning" role="status">"Removed "<When at=t now/>": its token is refused and its working set was demoted. Its history is kept here; nothing else about it can change."</p>
                        })}
                        {disabled_at.filter(|_| removed_at.is_none()).map(|t| view! {
                            <p class="warning" role="status">"Disabled "<When at=t now/>": its token is refused. Its working set, history and approvals are kept; enable it below to let it in again."</p>
                        })}
                        <FormError err=action_err/>
                        <section class="card">
                            <h2>"Working set"</h2>
                            {d.client_warning.clone().map(|w| view! { <p class="warning client-limit" role="note">{w}</p> })}
                            {working_set_table(&d, demote_action)}
                        </section>
                        <section class="card" hidden=removed_at.is_some() id="starter">
                            <h2>"Starter set"</h2>
                            {move || starter_saved.get().then(|| view! { <p class="ok" role="status">"Saved. The working set above shows what the rule promoted."</p> })}
                            {starter_card(a.name.clone(), a.cap, d.preview.len(), d.starter.clone(), untrack(sq), starter_hits, starter)}
                        </section>
                        <section class="card" hidden=removed_at.is_some() id="promote">
                            <h2>"Promote from the toolbox"</h2>
                            <form method="get" action="#promote" class="search" role="search">
                                <label>"Search the toolbox"<input type="search" name="q" value=untrack(q) placeholder="e.g. list users"/></label>
                                <button type="submit">"Search"</button>
                            </form>
                            {promote_hits(hits, n_hits, promote_action)}
                        </section>
                        <section class="card">
                            <h2>"Working-set size"</h2>
                            <SizeChart sizes=d.sizes.clone() now cap=a.cap/>
                        </section>
                        <section class="card" id="tokens">
                            <h2>"Working-set tokens"</h2>
                            <p class="muted">{format!("What the agent's working set costs its model's context, each tool counted at its current version. Graft's own {} tools add {} to every agent's list; the token budget counts the working set only.", crate::clients::OWN_TOOLS, crate::numbers::tokens(crate::clients::OWN_TOOLS_TOKENS))}</p>
                            <SizeChart sizes=d.token_steps.clone() now cap=a.token_budget what="Working-set tokens" limit_label="budget"/>
                        </section>
                        <section class="card" id="calls-per-day">
                            <h2>"Calls per day"</h2>
                            <StackedBars
                                buckets=per_day.clone()
                                series=vec!["calls".to_string()]
                                from=per_day_from
                                bucket_ms=86_400_000
                                unit="calls per day, last 30 days"
                                what="calls"
                            />
                        </section>
                        <section class="card" hidden=removed_at.is_some() id="settings">
                            <h2>"Name, cap, idle window and token budget"</h2>
                            <FormError err=edit_err/>
                            {move || saved.get().then(|| view! { <p class="ok" role="status">"Saved. The rule reads these at the next sweep."</p> })}
                            <ActionForm action=edit attr:class="grid-form" attr:novalidate=true>
                                <input type="hidden" name="agent" value=n_hidden/>
                                <label>"Name"<input name="name" value=n_name/></label>
                                <FieldError err=edit_err field="name"/>
                                <label>"Cap (1–500 tools)"
                                    <input name="cap" type="number" min="1" max="500" value=a.cap.to_string()
                                        on:input=move |ev| set_cap_input.set(event_target_value(&ev).trim().parse().unwrap_or(0))/>
                                </label>
                                <FieldError err=edit_err field="cap"/>
                                <label>"Idle window (1–3650 days)"<input name="window" type="number" min="1" max="3650" value=a.idle_window_days.to_string()/></label>
                                <FieldError err=edit_err field="window"/>
                                <input type="hidden" name="budget_field" value="yes"/>
                                <label>"Token budget for its working set (1,000–500,000 tokens; empty for none)"
                                    <input name="token_budget" inputmode="numeric" placeholder="none" value=a.token_budget.map(|b| b.to_string()).unwrap_or_default()/>
                                </label>
                                <FieldError err=edit_err field="token_budget"/>
                                <button type="submit">"Save"</button>
                            </ActionForm>
                            {move || cap_warning(cap_input.get()).map(|w| view! { <p class="warning" role="note">{w}</p> })}
                            <p class="muted">{format!("Changes take effect at the next sweep (in {} min).", d.next_sweep_minutes)}</p>
                            {sweep_preview(&d.preview)}
                        </section>
                        <section class="card" id="history">
                            <h2>"History"</h2>
                            {history_table(&d)}
                        </section>
                        <section class="card" id="calls">
                            <h2>"Recent calls"</h2>
                            {calls_filter(&d)}
                            {calls_table(d.calls.clone(), now, CallColumns::Tool, if d.calls_outcome.is_some() || d.calls_before.is_some() { "No calls match." } else { "No calls yet." })}
                            {calls_pager(&d)}
                        </section>
                        <section class="card" hidden=removed_at.is_some()>
                            <h2>"Approvals"</h2>
                            {approvals_table(d.approvals.clone(), now, decide_action, None)}
                        </section>
                        <section class="card" hidden=removed_at.is_some() id="token">
                            <h2>"Token"</h2>
                            <p>"A new token replaces the old one at once; the agent's client needs the new one."</p>
                            <Confirm label="Rotate token".to_string()>
                                <p>"The old token stops working at once: the agent's client is refused until it is given the new token, which the next page shows once."</p>
                                <ActionForm action=rotate>
                                    <input type="hidden" name="agent" value=n_rotate/>
                                    <input type="hidden" name="confirm" value="yes"/>
                                    <button type="submit" class="danger solid">"Rotate the token now"</button>
                                </ActionForm>
                            </Confirm>
                        </section>
                        <section class="card" hidden=removed_at.is_some() id="connect">
                            <details>
                                <summary><h2 class="inline">"Connect a client"</h2></summary>
                                <p>{format!("Each client's configuration for this agent. Put the agent's token where {TOKEN_PLACEHOLDER} stands: Graft keeps only a hash of it, so it was shown once, when the agent was created or its token rotated (")}<a href="#token">"rotate it"</a>" for a new one)."</p>
                                {d.snippets.clone().into_iter().map(|s| snippet_view(s, true)).collect_view()}
                            </details>
                        </section>
                        {oauth_card(&d, now, revoke_oauth, removed_at.is_some())}
                        <section class="card" id="access" hidden=removed_at.is_some()>
                            <h2>"Access"</h2>
                            {match disabled_at {
                                None => view! {
                                    <p>"Disabling refuses the agent's token at once and ends its open sessions; its working set, history and approvals are kept."</p>
                                    <Confirm label="Disable agent".to_string()>
                                        <p>"The agent's client is refused from now on, until a person enables it again."</p>
                                        <ActionForm action=disable>
                                            <input type="hidden" name="agent" value=n_disable/>
                                            <input type="hidden" name="disabled" value="yes"/>
                                            <input type="hidden" name="confirm" value="yes"/>
                                            <button type="submit" class="danger solid">"Disable the agent now"</button>
                                        </ActionForm>
                                    </Confirm>
                                }.into_any(),
                                Some(_) => view! {
                                    <p>"Enabling lets the agent's current token in again."</p>
                                    <ActionForm action=disable>
                                        <input type="hidden" name="agent" value=n_disable/>
                                        <input type="hidden" name="disabled" value="no"/>
                                        <button type="submit">"Enable the agent"</button>
                                    </ActionForm>
                                }.into_any(),
                            }}
                            <p>"Removing retires the agent for good: its token and sessions end, its working set is demoted, its history stays on this page under its name, which no new agent can take."</p>
                            <Confirm label="Remove agent".to_string()>
                                <p>"This cannot be undone: the agent's client is refused, and its tools leave its working set (History: the agent was removed)."</p>
                                <ActionForm action=remove>
                                    <input type="hidden" name="agent" value=n_remove/>
                                    <input type="hidden" name="confirm" value="yes"/>
                                    <button type="submit" class="danger solid">"Remove the agent now"</button>
                                </ActionForm>
                            </Confirm>
                        </section>
                    }.into_any()
                })}
            </Transition>
        </Frame>
    }
}

pub(crate) fn working_set_table(
    d: &AgentData,
    demote_action: ServerAction<Demote>,
) -> impl IntoView {
    if d.entries.is_empty() {
        return view! { <p class="muted">"Empty: the agent sees only Graft's own calls. It promotes tools with find_tool and promote, or you can below."</p> }.into_any();
    }
    let now = d.now;
    let agent = d.agent.name.clone();
    let called = d
        .entries
        .iter()
        .filter(|e| e.last_used_at.is_some_and(|u| u >= e.promoted_at))
        .count() as i64;
    let a = &d.agent;
    let over_cap = over_cap_in_words(a.size, a.cap, called, a.idle_window_days);
    let over_budget = a.token_budget.filter(|b| a.tokens > *b).map(|b| {
        format!(
            "{} over the token budget of {}: the next sweep demotes tools not called since their promotion, oldest first, until the set fits; tools called since their promotion stay.",
            crate::console::words::tokens(a.tokens - b),
            crate::console::words::grouped(b)
        )
    });
    let entries = d.entries.clone();
    view! {
        {over_cap.map(|w| view! { <p class="muted" role="note">{w}</p> })}
        {over_budget.map(|w| view! { <p class="muted" role="note">{w}</p> })}
        <DataTable class="working-set" head=view! { <th>"Tool"</th><th>"Description"</th><th>"Promoted by"</th><th>"Promoted"</th><th>"Last used"</th><th>"Calls"</th><th>"Tokens"</th><th></th> }.into_any()>
                    {entries.into_iter().map(|e| {
                        let tool = format!("{}__{}", e.vendor, e.name);
                        let href = format!("/tools/{}/{}", segment(&e.vendor), segment(&e.name));
                        let agent = agent.clone();
                        let (t1, t2, t3, t4) = (tool.clone(), tool.clone(), tool.clone(), tool.clone());
                        view! {
                            <tr data-tool=t1>
                                <td><a href=href><code>{t2}</code></a></td>
                                <td class="desc">{e.description.clone()}{e.connection_warning.clone().map(|w| {
                                    let vendor_href = format!("/vendors/{}#connections", segment(&e.vendor));
                                    view! { <span class="warning connection-warning" role="note">{w}" "<a href=vendor_href>"Add a connection"</a></span> }
                                })}</td>
                                <td class="promoted-by" data-label="Promoted by">{e.promoted_by.clone()}</td>
                                <td data-label="Promoted"><When at=e.promoted_at now/></td>
                                <td class="last-used" data-label="Last used">{match e.last_used_at {
                                    Some(t) => view! { <When at=t now/> }.into_any(),
                                    None => view! { <span>"never"</span> }.into_any(),
                                }}</td>
                                <td class="num calls" data-label="Calls">{e.calls}</td>
                                <td class="num tokens" data-label="Tokens">{e.tokens.map(crate::console::words::grouped).unwrap_or_else(|| "…".into())}</td>
                                <td>
                                    <ActionForm action=demote_action>
                                        <input type="hidden" name="agent" value=agent/>
                                        <input type="hidden" name="tool" value=t3/>
                                        <button type="submit" class="danger" aria-label=format!("Demote {t4}")>"Demote"</button>
                                    </ActionForm>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </DataTable>
    }
    .into_any()
}

/// "3,210 tokens" or "3,210 of 8,000 tokens" (the header's token figure, issue 29).
fn tokens_of_budget(tokens: i64, budget: Option<i64>) -> String {
    match budget {
        Some(b) => format!(
            "{} of {} tokens",
            crate::console::words::grouped(tokens),
            crate::console::words::grouped(b)
        ),
        None => crate::console::words::tokens(tokens),
    }
}

pub(crate) fn promote_hits(
    hits: Resource<ConsoleResult<SearchData>>,
    agent: String,
    promote_action: ServerAction<Promote>,
) -> impl IntoView {
    view! {
        {loaded(hits, "Searching…", move |s| match s {
                        s if s.hits.is_empty() && s.query.is_empty() => view! { <p class="muted">"Search by vendor, name or description."</p> }.into_any(),
                        s if s.hits.is_empty() => view! { <p class="muted no-match" role="status">{format!("No tool matches {:?}. Try other words, or browse the Toolbox; an agent can author a tool with acquire.", s.query)}</p> }.into_any(),
                        s => view! {
                            <p class="muted">{hits_span(s.page, s.hits.len(), s.total)}</p>
                            {let (agent, q) = (agent.clone(), s.query.clone());
                             hits_pager(s.page, s.pages, move |p| format!("/agents/{}?q={}&hp={p}#promote", segment(&agent), segment(&q)))}
                            <ul class="hits">
                                {s.hits.into_iter().map(|h| {
                                    let tool = format!("{}__{}", h.vendor, h.name);
                                    let agent = agent.clone();
                                    let (t1, t2, t3, t4) = (tool.clone(), tool.clone(), tool.clone(), tool.clone());
                                    view! {
                                        <li data-tool=t1>
                                            <code>{t2}</code>" "
                                            {does_badge(does_in_words(None, h.read_only, h.destructive))}
                                            <span class="desc">{h.description}</span>
                                            {h.tokens.map(|n| view! { <span class="muted tokens">{format!(" ({})", crate::console::words::tokens(n))}</span> })}
                                            <span class="muted score" title="how well it matches the query: higher is better">{format!(" score {}", h.score)}</span>
                                            {if h.promoted {
                                                view! { <span class="badge">"promoted"</span> }.into_any()
                                            } else {
                                                view! {
                                                    <ActionForm action=promote_action attr:class="inline">
                                                        <input type="hidden" name="agent" value=agent/>
                                                        <input type="hidden" name="tool" value=t3/>
                                                        <button type="submit" aria-label=format!("Promote {t4}")>"Promote"</button>
                                                    </ActionForm>
                                                }.into_any()
                                            }}
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any(),
        })}
    }
}

pub(crate) fn sweep_preview(preview: &[(String, String)]) -> impl IntoView {
    if preview.is_empty() {
        return view! { <p class="preview">"The next sweep would demote nothing."</p> }.into_any();
    }
    view! {
        <div class="preview">
            <p>"The next sweep would demote:"</p>
            <ul>{preview.iter().cloned().map(|(t, c)| view! { <li><code>{t}</code>" — "{c}</li> }).collect_view()}</ul>
        </div>
    }
    .into_any()
}

pub(crate) fn history_table(d: &AgentData) -> impl IntoView {
    if d.history.is_empty() {
        return view! { <p class="muted">"Nothing yet."</p> }.into_any();
    }
    let now = d.now;
    let pages = ((d.history_total + d.per_page - 1) / d.per_page).max(1);
    let base = format!("/agents/{}", segment(&d.agent.name));
    let link = move |p: i64| format!("{base}?page={p}#history");
    let history = d.history.clone();
    view! {
        <DataTable class="history" head=view! { <th>"When"</th><th>"Tool"</th><th>"Change"</th><th>"Cause"</th> }.into_any()>
                    {history.into_iter().map(|h| view! {
                        <tr>
                            <td><When at=h.at now/></td>
                            <td><code>{h.tool}</code></td>
                            <td>{h.action}</td>
                            <td class="cause" data-label="Cause">{h.cause}</td>
                        </tr>
                    }).collect_view()}
                </DataTable>
        <nav class="pager" aria-label="History pages">
            {(d.page > 1).then(|| view! { <a href=link(d.page - 1)>"Newer"</a> })}
            <span>{format!("Page {} of {} ({} changes)", d.page, pages, d.history_total)}</span>
            {(d.page < pages).then(|| view! { <a href=link(d.page + 1)>"Older"</a> })}
        </nav>
    }
    .into_any()
}

/// Links that narrow an agent's calls to one outcome (plain links: they work without
/// JavaScript).
pub(crate) fn calls_filter(d: &AgentData) -> impl IntoView {
    let base = format!("/agents/{}", segment(&d.agent.name));
    let current = d.calls_outcome.clone().unwrap_or_default();
    let choices = [
        ("", "All"),
        ("failed", "Failed"),
        ("approval", "Approvals"),
        ("dry-run", "Dry runs"),
        ("ok", "Succeeded"),
    ];
    view! {
        <nav class="filters" aria-label="Calls by outcome">
            {choices.into_iter().map(|(value, label)| {
                let href = if value.is_empty() { format!("{base}#calls") } else { format!("{base}?calls={value}#calls") };
                let here = (current == value).then_some("page");
                view! { <a href=href aria-current=here>{label}</a> }
            }).collect_view()}
        </nav>
    }
}

/// Links to an agent's newest calls (when an older page is shown) and older ones (when
/// there are more).
pub(crate) fn calls_pager(d: &AgentData) -> impl IntoView {
    let base = format!("/agents/{}", segment(&d.agent.name));
    let filter = d.calls_outcome.as_ref().map(|o| format!("calls={o}"));
    let link = |before: Option<i64>| {
        let query: Vec<String> = filter
            .iter()
            .cloned()
            .chain(before.map(|b| format!("before={b}")))
            .collect();
        if query.is_empty() {
            format!("{base}#calls")
        } else {
            format!("{base}?{}#calls", query.join("&"))
        }
    };
    let newest = d.calls_before.is_some().then(|| link(None));
    let older = d
        .calls
        .last()
        .filter(|_| d.calls_more)
        .map(|c| link(Some(c.id)));
    (newest.is_some() || older.is_some()).then(|| {
        view! {
            <nav class="pager" aria-label="Calls pages">
                {newest.map(|h| view! { <a href=h>"Newest calls"</a> })}
                {older.map(|h| view! { <a href=h>"Older calls"</a> })}
            </nav>
        }
    })
}

/// Client-side limits of tools per request (CLIENTS.md): a warning, not a refusal.
pub(crate) fn cap_warning(cap: i64) -> Option<&'static str> {
    if cap > 128 - crate::clients::OWN_TOOLS {
        Some("Above 122 tools (128 with Graft's own 6), VS Code and OpenAI models refuse the request; keep the cap at 122 or less for those clients.")
    } else if cap > 40 {
        Some("Above 40 tools, Cursor's tool choice degrades.")
    } else {
        None
    }
}

/// The OAuth clients acting as the agent (issue 26.4), each with its Revoke step, and the
/// one URL such a client is given.
fn oauth_card(
    d: &AgentData,
    now: i64,
    revoke: ServerAction<RevokeOauthClient>,
    removed: bool,
) -> impl IntoView {
    let agent = d.agent.name.clone();
    let clients = d.oauth_clients.clone();
    let rows = (!clients.is_empty()).then(|| {
        view! {
            <DataTable class="oauth-clients" head=view! { <th>"Client"</th><th>"Answers go to"</th><th>"Approved by"</th><th>"Approved"</th><th>"Last used"</th><th>"Ends"</th><th></th> }.into_any()>
                {clients.into_iter().map(|c| {
                    let agent = agent.clone();
                    let id = c.id.to_string();
                    view! {
                        <tr data-oauth-client=c.client.clone()>
                            <td>{c.client.clone()}</td>
                            <td data-label="Answers go to"><code>{c.redirect_host.clone()}</code></td>
                            <td data-label="Approved by">{c.granted_by.clone()}</td>
                            <td data-label="Approved"><When at=c.created_at now/></td>
                            <td data-label="Last used">{match c.last_used_at { Some(t) => view! { <When at=t now/> }.into_any(), None => "never".into_any() }}</td>
                            <td data-label="Ends">{match c.expires_at { Some(t) => view! { <When at=t now/> }.into_any(), None => "when its token expires".into_any() }}</td>
                            <td>
                                <Confirm label="Revoke".to_string()>
                                    <p>"Its tokens stop working at once; it must be approved again to connect."</p>
                                    <ActionForm action=revoke>
                                        <input type="hidden" name="agent" value=agent/>
                                        <input type="hidden" name="grant" value=id/>
                                        <input type="hidden" name="confirm" value="yes"/>
                                        <button type="submit" class="danger solid">"Revoke now"</button>
                                    </ActionForm>
                                </Confirm>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </DataTable>
        }
    });
    view! {
        <section class="card" id="oauth" hidden=removed>
            <h2>"OAuth clients"</h2>
            <p>"claude.ai, Claude Desktop, ChatGPT, VS Code and Cursor sign in with OAuth: give them "<code>{d.mcp_url.clone()}</code>", and approve the request Graft shows you; choose this agent there."</p>
            {match rows {
                Some(r) => r.into_any(),
                None => view! { <p class="muted">"No OAuth client acts as this agent."</p> }.into_any(),
            }}
        </section>
    }
}
