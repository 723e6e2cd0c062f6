//! The console's pages (SPEC §6), one route each. Data comes from the server functions in
//! [`super::api`]; every form is an `ActionForm` (or a plain GET/multipart form), so it
//! works as a plain POST without JavaScript and without page loads when hydrated.

use super::api::*;
use super::components::*;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/`: the first steps while something is missing (each links to its form and is
/// checked off when done), then an overview of the agents and what waits for a person.
#[component]
pub fn HomePage() -> impl IntoView {
    let data = Resource::new(|| (), |_| home());
    view! {
        <Frame title="Home">
            <h1>"Graft"</h1>
            {loaded(data, "Loading…", home_view)}
        </Frame>
    }
}

fn home_view(d: HomeData) -> impl IntoView {
    let steps = [
        (
            d.tools > 0,
            "Import a vendor's OpenAPI document",
            "/vendors#import",
            format!(
                "{}, {} in the toolbox.",
                count(d.vendors as i64, "vendor"),
                count(d.tools, "tool")
            ),
        ),
        (
            d.connections > 0,
            "Add its connection: the credential Graft calls the vendor with",
            "/vendors#connections",
            format!("{}.", count(d.connections as i64, "connection")),
        ),
        (
            !d.agents.is_empty(),
            "Create an agent and connect its client",
            "/agents#new-agent",
            format!("{}.", count(d.agents.len() as i64, "agent")),
        ),
    ];
    let all_done = steps.iter().all(|s| s.0);
    let now = d.now;
    let pending = d.pending;
    view! {
        {(!all_done).then(|| view! {
            <section class="card" id="first-steps">
                <h2>"First steps"</h2>
                <ol class="steps">
                    {steps.into_iter().map(|(done, label, href, note)| view! {
                        <li class=if done { "done" } else { "todo" }>
                            <a href=href>{label}</a>" "
                            <span class=if done { "ok" } else { "muted" }>{if done { "✓ done. " } else { "To do. " }}{note}</span>
                        </li>
                    }).collect_view()}
                </ol>
            </section>
        })}
        {(pending > 0).then(|| view! {
            <p class="warning" role="note"><a href="/approvals">{format!("{} for a decision.", if pending == 1 { "1 approval waits".to_string() } else { format!("{pending} approvals wait") })}</a></p>
        })}
        {all_done.then(|| view! {
            <section class="card" id="last-sweep">
                <h2>"Sweep"</h2>
                {match d.last_sweep_at {
                    None => view! { <p class="muted">"No sweep has demoted anything yet."</p> }.into_any(),
                    Some(at) => view! {
                        <p>"The last sweep that demoted tools ran "<When at now/>{format!(" and demoted {}:", count(d.last_sweep.len() as i64, "tool"))}</p>
                        <ul>{d.last_sweep.clone().into_iter().map(|(agent, tool, cause)| view! {
                            <li><a href=format!("/agents/{}#history", segment(&agent))>{agent.clone()}</a>": "<code>{tool}</code>" — "{cause}</li>
                        }).collect_view()}</ul>
                    }.into_any(),
                }}
                <p class="muted">{format!("The next sweep runs in {} min.", d.next_sweep_minutes)}</p>
            </section>
            <section class="card" id="recent-failures">
                <h2>"Recent failures"</h2>
                {calls_table(d.failures.clone(), now, CallColumns::Both, "No failed calls.")}
            </section>
            <section class="card" id="recent-calls">
                <h2>"Recent calls"</h2>
                {calls_table(d.calls.clone(), now, CallColumns::Both, "No calls yet.")}
            </section>
        })}
        {(!d.agents.is_empty()).then(|| view! {
            <section>
                <h2>"Agents"</h2>
                <div class="table-wrap"><table>
                    <thead><tr><th>"Agent"</th><th>"Working set"</th><th>"Last seen"</th></tr></thead>
                    <tbody>{d.agents.into_iter().map(|a| view! {
                        <tr data-agent=a.name.clone()>
                            <td><a href=format!("/agents/{}", segment(&a.name))>{a.name.clone()}</a></td>
                            <td class="num" data-label="Working set">{format!("{} of {}", a.size, a.cap)}</td>
                            <td data-label="Last seen">{match a.last_seen_at {
                                Some(t) => view! { <When at=t now/> }.into_any(),
                                None => view! { <span class="muted">"never"</span> }.into_any(),
                            }}</td>
                        </tr>
                    }).collect_view()}</tbody>
                </table></div>
            </section>
        })}
    }
}

/// A page's error signal from an action's last value.
fn error_of<S>(action: ServerAction<S>) -> Signal<Option<ConsoleError>>
where
    S: leptos::server_fn::ServerFn<Error = ConsoleError> + Clone + Send + Sync + 'static,
    S::Output: Clone + Send + Sync + 'static,
{
    Signal::derive(move || action.value().get().and_then(|r| r.err()))
}

/// Whether `action` saved: its last value is Ok (hydrated), or the page was reached after
/// a plain form post that saved `what` (`?saved=what`).
fn saved<S>(action: ServerAction<S>, what: &'static str) -> Signal<bool>
where
    S: leptos::server_fn::ServerFn<Output = (), Error = ConsoleError>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let query = use_query_map();
    let posted = Memo::new(move |_| query.read().get("saved").as_deref() == Some(what));
    Signal::derive(move || matches!(action.value().get(), Some(Ok(()))) || posted.get())
}

/// A form that empties itself once `action` saved (issue 14.5), so a password or a
/// secret typed in it is not left in the page: the returned `NodeRef` goes on the
/// `ActionForm`. Hydrated, the form is reset to its defaults; without JavaScript the page
/// after the post renders it afresh, empty.
fn clear_on_save<S>(action: ServerAction<S>) -> NodeRef<leptos::html::Form>
where
    S: leptos::server_fn::ServerFn<Output = (), Error = ConsoleError>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let form = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(()))) {
            if let Some(f) = form.get_untracked() {
                f.reset();
            }
        }
    });
    form
}

/// Client-side limits of tools per request (CLIENTS.md): a warning, not a refusal.
fn cap_warning(cap: i64) -> Option<&'static str> {
    if cap > 128 {
        Some("Above 128 tools, VS Code and OpenAI models refuse the request; keep the cap at 128 or less for those clients.")
    } else if cap > 40 {
        Some("Above 40 tools, Cursor's tool choice degrades.")
    } else {
        None
    }
}

// ---------------------------------------------------------------- sign-in

/// `/login`: name and password.
#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_default();
    let err = error_of(login);
    view! {
        <Title text="Sign in · Graft"/>
        <main class="narrow">
            <h1>"Sign in to Graft"</h1>
            <FormError err/>
            <ActionForm action=login attr:class="stack">
                <input type="hidden" name="next" value=next/>
                <label>"Name"<input name="name" autocomplete="username" required/></label>
                <label>"Password"<input type="password" name="password" autocomplete="current-password" required/></label>
                <button type="submit">"Sign in"</button>
            </ActionForm>
            <p class="muted">"On first start Graft creates "<code>"admin"</code>" and prints its password once to the server log; "<code>"graft user add NAME"</code>" adds people."</p>
        </main>
    }
}

/// `/account`: who is signed in, and the password change.
#[component]
pub fn AccountPage() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    let me = Resource::new(|| (), |_| whoami());
    let err = error_of(change);
    let saved = saved(change, "password");
    view! {
        <Frame title="Account" refresh=change.version()>
            <h1>"Account"</h1>
            {loaded(me, "Loading…", |name| view! { <p>"Signed in as "<strong>{name}</strong>"."</p> })}
            <section class="card">
                <h2>"Change password"</h2>
                <FormError err/>
                {move || saved.get().then(|| view! { <p class="ok" role="status">"Password changed."</p> })}
                <ActionForm action=change node_ref=clear_on_save(change) attr:class="stack">
                    <label>"Current password"<input type="password" name="current" autocomplete="current-password"/></label>
                    <FieldError err field="current"/>
                    <label>"New password (10 characters or more)"<input type="password" name="new" autocomplete="new-password"/></label>
                    <FieldError err field="new"/>
                    <label>"New password again"<input type="password" name="confirm" autocomplete="new-password"/></label>
                    <FieldError err field="confirm"/>
                    <button type="submit">"Change password"</button>
                </ActionForm>
            </section>
        </Frame>
    }
}

// ---------------------------------------------------------------- agents

/// `/agents`: every agent, Edit per row, and New agent.
#[component]
pub fn AgentsPage() -> impl IntoView {
    let add = ServerAction::<AddAgent>::new();
    let edit = ServerAction::<EditAgent>::new();
    let data = Resource::new(move || edit.version().get(), |_| agents());
    let add_err = error_of(add);
    let edit_err = error_of(edit);
    let saved = saved(edit, "agent");
    view! {
        <Frame title="Agents">
            <h1>"Agents"</h1>
            {move || saved.get().then(|| view! { <p class="ok" role="status">"Saved. The rule reads caps and idle windows at the next sweep."</p> })}
            {loaded(data, "Loading…", move |d| agents_table(d, edit, edit_err))}
            <section class="card" id="new-agent">
                <h2>"New agent"</h2>
                <FormError err=add_err/>
                <ActionForm action=add attr:class="grid-form" attr:novalidate=true>
                    <label>"Name"<input name="name" required placeholder="hermes-laptop"/></label>
                    <FieldError err=add_err field="name"/>
                    <label>"Harness"
                        <select name="harness">
                            <option value="">"(not said)"</option>
                            {HARNESSES.iter().map(|(v, l)| view! { <option value=*v>{*l}</option> }).collect_view()}
                        </select>
                    </label>
                    <FieldError err=add_err field="harness"/>
                    <label>"Cap (tools)"<input name="cap" type="number" min="1" max="500" value="20"/></label>
                    <FieldError err=add_err field="cap"/>
                    <label>"Idle window (days)"<input name="window" type="number" min="1" max="3650" value="21"/></label>
                    <FieldError err=add_err field="window"/>
                    <button type="submit">"Create agent"</button>
                </ActionForm>
                <p class="muted">"The next page shows the agent's token once, with the configuration for its client."</p>
            </section>
        </Frame>
    }
}

fn agents_table(
    d: AgentsData,
    edit: ServerAction<EditAgent>,
    err: Signal<Option<ConsoleError>>,
) -> impl IntoView {
    if d.agents.is_empty() {
        return view! { <p class="muted">"No agents yet. Create one below."</p> }.into_any();
    }
    let now = d.now;
    // which row the last edit was for (known when hydrated)
    let edited = move || edit.input().get().map(|i| i.agent).unwrap_or_default();
    view! {
        {move || err.get().map(|e| {
            let who = edited();
            let text = match &e {
                ConsoleError::Field { message, .. } if who.is_empty() => format!("Nothing was saved: {message}."),
                ConsoleError::Field { message, .. } => format!("Nothing was saved for {who}: {message}."),
                other => other.to_string(),
            };
            view! { <p class="error" role="alert">{text}</p> }
        })}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th>"Name"</th><th>"Harness"</th><th>"Working set"</th><th>"Idle window"</th><th>"Last seen"</th><th>"Edit"</th>
                </tr></thead>
                <tbody>
                    {d.agents.into_iter().map(|a| {
                        let href = format!("/agents/{}", segment(&a.name));
                        let over = a.size > a.cap;
                        let (n1, n2, n3) = (a.name.clone(), a.name.clone(), a.name.clone());
                        view! {
                            <tr data-agent=n1>
                                <td><a href=href>{n2}</a></td>
                                <td data-label="Harness">{a.harness.as_deref().map(harness_in_words).unwrap_or_else(|| "—".into())}</td>
                                <td class:over=over class="num" data-label="Working set">{format!("{} / {}", a.size, a.cap)}</td>
                                <td class="num" data-label="Idle window">{format!("{} days", a.idle_window_days)}</td>
                                <td data-label="Last seen">{match a.last_seen_at {
                                    Some(t) => view! { <When at=t now/> }.into_any(),
                                    None => view! { <span class="muted">"never"</span> }.into_any(),
                                }}</td>
                                <td>
                                    <details>
                                        <summary>"Edit"</summary>
                                        <ActionForm action=edit attr:class="row-form" attr:novalidate=true>
                                            <input type="hidden" name="agent" value=n3.clone()/>
                                            <label>"Name"<input name="name" value=n3/></label>
                                            <label>"Cap"<input name="cap" type="number" value=a.cap.to_string()/></label>
                                            <label>"Window (days)"<input name="window" type="number" value=a.idle_window_days.to_string()/></label>
                                            <button type="submit">"Save"</button>
                                        </ActionForm>
                                    </details>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// `/agents/:name/token?reveal=…`: a new token, shown once, with client configurations.
#[component]
pub fn TokenPage() -> impl IntoView {
    let query = use_query_map();
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let reveal = Resource::new(
        move || (name(), query.read().get("reveal").unwrap_or_default()),
        |(agent, reveal)| take_token(agent, reveal),
    );
    view! {
        <Frame title="Agent token">
            {loaded(reveal, "Loading…", move |r| match r {
                Some(r) => token_view(r).into_any(),
                None => view! {
                    <h1>"Token"</h1>
                    <p>"This token was shown already (or waited more than 10 minutes). Graft keeps only its hash; rotate the token on "
                        <a href=format!("/agents/{}", segment(&name()))>"the agent's page"</a>" to get a new one."</p>
                }.into_any(),
            })}
        </Frame>
    }
}

/// A button that copies `text` to the clipboard (the Clipboard API), shown once the page
/// is hydrated; without JavaScript the text beside it is selectable as a whole.
#[component]
fn CopyButton(text: String, what: &'static str) -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let (copied, set_copied) = signal(false);
    let text = StoredValue::new(text);
    move || {
        hydrated.get().then(|| {
            view! {
                <button type="button" class="copy" aria-label=format!("Copy {what}")
                    on:click=move |_| {
                        copy_to_clipboard(&text.get_value());
                        set_copied.set(true);
                    }>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            }
        })
    }
}

#[cfg(feature = "hydrate")]
fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        // the promise settles on its own; a refusal leaves the selectable text
        let _ = w.navigator().clipboard().write_text(text);
    }
}

#[cfg(not(feature = "hydrate"))]
fn copy_to_clipboard(_: &str) {}

fn token_view(r: TokenReveal) -> impl IntoView {
    view! {
        <h1>"Agent "{r.agent.clone()}</h1>
        <section class="card reveal">
            <h2>"Its token"</h2>
            <p>"Copy it now: Graft stores only a hash, and this page will not show it again."</p>
            <div class="copyable">
                <pre class="token" data-token=r.token.clone()><code>{r.token.clone()}</code></pre>
                <CopyButton text=r.token.clone() what="the token"/>
            </div>
            <p>"MCP endpoint: "<code>{r.url.clone()}</code></p>
        </section>
        <section class="card">
            <h2>"Connect a client"</h2>
            {r.snippets.into_iter().map(|(client, place, text)| {
                let what: &'static str = "the configuration";
                view! {
                    <h3>{client.clone()}</h3>
                    <p class="muted">{place}</p>
                    <div class="copyable">
                        <pre data-client=client><code>{text.clone()}</code></pre>
                        <CopyButton text what/>
                    </div>
                }
            }).collect_view()}
            <p>"Give the agent the Graft skill too: "<a href="/skill/SKILL.md">"/skill/SKILL.md"</a>
               " (a "<code>"SKILL.md"</code>" folder for Hermes and OpenClaw). It teaches find_tool before acquire, promote, and run_tool as the fallback."</p>
            <p><a href=format!("/agents/{}", segment(&r.agent))>"Go to the agent's page"</a></p>
        </section>
    }
}

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
    let data = Resource::new(
        move || {
            (
                name(),
                page(),
                outcome(),
                before(),
                edit.version().get()
                    + promote_action.version().get()
                    + demote_action.version().get()
                    + decide_action.version().get(),
            )
        },
        |(n, p, o, b, _)| agent(n, p, o, b),
    );
    let hits = Resource::new(
        move || (q(), name(), promote_action.version().get()),
        |(q, n, _)| search_tools(q, Some(n), None),
    );
    let errs = [
        error_of(promote_action),
        error_of(demote_action),
        error_of(decide_action),
        error_of(rotate),
    ];
    let action_err = Signal::derive(move || errs.iter().find_map(|e| e.get()));
    let edit_err = error_of(edit);
    let saved = saved(edit, "agent");
    view! {
        <Frame title=untrack(name) refresh=decide_action.version()>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let d = match data.await {
                        Ok(d) => d,
                        Err(e) => return view! { <h1>{name()}</h1><LoadError err=e/> }.into_any(),
                    };
                    let a = d.agent.clone();
                    let (n_h1, n_hits, n_hidden, n_name, n_rotate) = (a.name.clone(), a.name.clone(), a.name.clone(), a.name.clone(), a.name.clone());
                    let now = d.now;
                    let (cap_input, set_cap_input) = signal(a.cap);
                    view! {
                        <h1>"Agent "{n_h1}</h1>
                        <p class="muted">
                            {a.harness.as_deref().map(|h| format!("{} · ", harness_in_words(h)))}
                            {format!("{} of {} tools · idle window {} days · last seen ", a.size, a.cap, a.idle_window_days)}
                            {match a.last_seen_at { Some(t) => view! { <When at=t now/> }.into_any(), None => "never".into_any() }}
                        </p>
                        <FormError err=action_err/>
                        <section class="card">
                            <h2>"Working set"</h2>
                            {working_set_table(&d, demote_action)}
                        </section>
                        <section class="card">
                            <h2>"Promote from the toolbox"</h2>
                            <form method="get" class="search" role="search">
                                <label>"Search the toolbox"<input type="search" name="q" value=untrack(q) placeholder="e.g. list users"/></label>
                                <button type="submit">"Search"</button>
                            </form>
                            {promote_hits(hits, n_hits, promote_action)}
                        </section>
                        <section class="card">
                            <h2>"Working-set size"</h2>
                            <SizeChart sizes=d.sizes.clone() now cap=a.cap/>
                        </section>
                        <section class="card" id="settings">
                            <h2>"Name, cap and idle window"</h2>
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
                        <section class="card">
                            <h2>"Approvals"</h2>
                            {approvals_table(d.approvals.clone(), now, decide_action, false)}
                        </section>
                        <section class="card">
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
                    }.into_any()
                })}
            </Suspense>
        </Frame>
    }
}

fn working_set_table(d: &AgentData, demote_action: ServerAction<Demote>) -> impl IntoView {
    if d.entries.is_empty() {
        return view! { <p class="muted">"Empty: the agent sees only Graft's own calls. It promotes tools with find_tool and promote, or you can below."</p> }.into_any();
    }
    let now = d.now;
    let agent = d.agent.name.clone();
    view! {
        <div class="table-wrap">
            <table class="working-set">
                <thead><tr>
                    <th>"Tool"</th><th>"Description"</th><th>"Promoted by"</th><th>"Promoted"</th><th>"Last used"</th><th>"Calls"</th><th></th>
                </tr></thead>
                <tbody>
                    {d.entries.iter().map(|e| {
                        let tool = format!("{}__{}", e.vendor, e.name);
                        let href = format!("/tools/{}/{}", segment(&e.vendor), segment(&e.name));
                        let agent = agent.clone();
                        let (t1, t2, t3, t4) = (tool.clone(), tool.clone(), tool.clone(), tool.clone());
                        view! {
                            <tr data-tool=t1>
                                <td><a href=href><code>{t2}</code></a></td>
                                <td class="desc">{e.description.clone()}</td>
                                <td class="promoted-by" data-label="Promoted by">{e.promoted_by.clone()}</td>
                                <td data-label="Promoted"><When at=e.promoted_at now/></td>
                                <td class="last-used" data-label="Last used">{match e.last_used_at {
                                    Some(t) => view! { <When at=t now/> }.into_any(),
                                    None => view! { <span>"never"</span> }.into_any(),
                                }}</td>
                                <td class="num calls" data-label="Calls">{e.calls}</td>
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
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

fn promote_hits(
    hits: Resource<ConsoleResult<SearchData>>,
    agent: String,
    promote_action: ServerAction<Promote>,
) -> impl IntoView {
    view! {
        {loaded(hits, "Searching…", move |s| match s {
                        s if s.hits.is_empty() => view! { <p class="muted">{if s.total == 0 { "Search by vendor, name or description." } else { "" }}</p> }.into_any(),
                        s => view! {
                            <p class="muted">{format!("{} of {} matches", s.hits.len(), s.total)}</p>
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

/// What a call does (`reads`, `writes`, `deletes`) as a badge.
fn does_badge(does: &str) -> impl IntoView {
    view! { <span class=format!("badge {does}")>{does.to_string()}</span> }
}

fn sweep_preview(preview: &[(String, String)]) -> impl IntoView {
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

fn history_table(d: &AgentData) -> impl IntoView {
    if d.history.is_empty() {
        return view! { <p class="muted">"Nothing yet."</p> }.into_any();
    }
    let now = d.now;
    let pages = ((d.history_total + d.per_page - 1) / d.per_page).max(1);
    let base = format!("/agents/{}", segment(&d.agent.name));
    let link = move |p: i64| format!("{base}?page={p}#history");
    view! {
        <div class="table-wrap">
            <table class="history">
                <thead><tr><th>"When"</th><th>"Tool"</th><th>"Change"</th><th>"Cause"</th></tr></thead>
                <tbody>
                    {d.history.iter().cloned().map(|h| view! {
                        <tr>
                            <td><When at=h.at now/></td>
                            <td><code>{h.tool}</code></td>
                            <td>{if h.action == "promote" { "promoted" } else { "demoted" }}</td>
                            <td class="cause" data-label="Cause">{h.cause}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
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
fn calls_filter(d: &AgentData) -> impl IntoView {
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
fn calls_pager(d: &AgentData) -> impl IntoView {
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

/// Which of agent and tool a calls table names (the page names the other).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CallColumns {
    /// The tool (an agent's page).
    Tool,
    /// The agent (a tool's page).
    Agent,
    /// Both (the home page).
    Both,
}

/// A table of calls, newest first: when, the agent and/or the tool, its outcome with
/// the vendor's status and the error, duration, and the redacted input.
fn calls_table(
    calls: Vec<CallItem>,
    now: i64,
    columns: CallColumns,
    none: &'static str,
) -> impl IntoView {
    if calls.is_empty() {
        return view! { <p class="muted">{none}</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="calls">
                <thead><tr>
                    <th>"When"</th>
                    {(columns != CallColumns::Tool).then(|| view! { <th>"Agent"</th> })}
                    {(columns != CallColumns::Agent).then(|| view! { <th>"Tool"</th> })}
                    <th>"Outcome"</th><th>"Took"</th><th>"Input"</th>
                </tr></thead>
                <tbody>
                    {calls.into_iter().map(|c| {
                        let tool_href = format!("/tools/{}/{}", segment(&c.vendor), segment(&c.name));
                        let agent_cell = (columns != CallColumns::Tool).then(|| view! {
                            <td data-label="Agent"><a href=format!("/agents/{}", segment(&c.agent))>{c.agent.clone()}</a>
                                {(columns == CallColumns::Agent).then(|| format!(" · v{}", c.version))}</td>
                        });
                        let tool_cell = (columns != CallColumns::Agent).then(|| view! {
                            <td data-label="Tool"><a href=tool_href><code>{c.tool.clone()}</code></a>{format!(" v{}", c.version)}</td>
                        });
                        let status = c.http_status.map(|s| format!(" · HTTP {s}")).unwrap_or_default();
                        view! {
                            <tr data-outcome=c.outcome.clone()>
                                <td data-label="When"><When at=c.at now/></td>
                                {agent_cell}
                                {tool_cell}
                                <td data-label="Outcome" class=if c.ok { "outcome ok" } else if c.outcome == "waits for approval" { "outcome waiting" } else { "outcome failed" }>
                                    <strong>{c.outcome.clone()}</strong>{status}
                                    {c.message.clone().map(|m| view! { <div class="muted message">{m}</div> })}
                                </td>
                                <td data-label="Took">{format!("{} ms", c.duration_ms)}</td>
                                <td data-label="Input">{c.input.clone().map(|i| view! { <code class="input">{i}</code> })}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

fn approvals_table(
    list: Vec<ApprovalItem>,
    now: i64,
    decide_action: ServerAction<Decide>,
    show_agent: bool,
) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="muted">"No approvals yet: a tool that writes, or one an agent wrote, asks here on its first call."</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="approvals">
                <thead><tr>
                    {show_agent.then(|| view! { <th>"Agent"</th> })}
                    <th>"Tool"</th><th>"State"</th><th>"Asked"</th><th>"Decided"</th><th></th>
                </tr></thead>
                <tbody>
                    {list.into_iter().map(|x| {
                        let tool = format!("{}__{}", x.vendor, x.name);
                        let buttons: Vec<(&'static str, &'static str)> = match x.state.as_str() {
                            "pending" => vec![("grant", "Approve"), ("deny", "Deny")],
                            // a revoked grant is a denial; approving again restores it
                            "granted" => vec![("revoke", "Revoke")],
                            _ => vec![("grant", "Approve")],
                        };
                        let agent_href = format!("/agents/{}", segment(&x.agent));
                        view! {
                            <tr data-state=x.state.clone() data-tool=tool.clone() data-agent=x.agent.clone()>
                                {show_agent.then(|| view! { <td><a href=agent_href>{x.agent.clone()}</a></td> })}
                                <td>
                                    <code>{tool.clone()}</code>
                                    {x.version.map(|v| view! { " " <span class="version" title="the version asked for or decided on">{format!("version {v}")}</span> })}
                                    {x.changed.clone().map(|c| view! { <div class="changed muted">{format!("Approved before; a new version changed: {c}")}</div> })}
                                    {x.request.clone().map(|r| view! { <div class="request"><code>{r}</code></div> })}
                                    {x.description.clone().filter(|d| !d.is_empty()).map(|d| view! { <div class="muted">{d}</div> })}
                                    {x.input.clone().map(|i| view! { <div class="asked-input">"Input of the call that asked: "<code class="input">{i}</code></div> })}
                                    {(!x.sends.is_empty()).then(|| view! { <details class="sends"><summary>{format!("Headers and parameters it sends besides the body ({})", x.sends.len())}</summary><ul>
                                        {x.sends.clone().into_iter().map(|l| view! { <li><code>{l}</code></li> }).collect_view()}
                                    </ul></details> }.into_any())}
                                </td>
                                <td class=format!("state {}", x.state)>{x.state.clone()}</td>
                                <td data-label="Asked"><When at=x.requested_at now/></td>
                                <td>{x.decided_at.map(|t| view! { <When at=t now/>" by "{x.decided_by.clone().unwrap_or_default().trim_start_matches("person:").replace(':', " ")} })}</td>
                                <td class="actions">
                                    {buttons.into_iter().map(|(decision, label)| {
                                        let (agent, tool) = (x.agent.clone(), tool.clone());
                                        let version = x.version.map(|v| v.to_string());
                                        let (a2, t2) = (agent.clone(), tool.clone());
                                        let aria = format!("{label} {tool} for {agent}");
                                        let form = view! {
                                            <ActionForm action=decide_action attr:class="inline">
                                                <input type="hidden" name="agent" value=a2/>
                                                <input type="hidden" name="tool" value=t2/>
                                                {version.map(|v| view! { <input type="hidden" name="version" value=v/> })}
                                                <input type="hidden" name="decision" value=decision/>
                                                {(decision == "revoke").then(|| view! { <input type="hidden" name="confirm" value="yes"/> })}
                                                <button type="submit" class=if decision == "revoke" { "danger solid" } else { "" }
                                                    aria-label=aria>{label}</button>
                                            </ActionForm>
                                        };
                                        if decision == "revoke" {
                                            view! {
                                                <Confirm label="Revoke".to_string()>
                                                    <p>{format!("{agent} is refused when it calls {tool} until a person approves again.")}</p>
                                                    {form}
                                                </Confirm>
                                            }.into_any()
                                        } else {
                                            form.into_any()
                                        }
                                    }).collect_view()}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

// ---------------------------------------------------------------- approvals

/// `/approvals`: pending first; approve, deny; revoke granted ones.
#[component]
pub fn ApprovalsPage() -> impl IntoView {
    let decide_action = ServerAction::<Decide>::new();
    // the link an agent hands its user (`approval_required`) names the row to look at
    let query = use_query_map();
    let wanted = move || {
        let q = query.read();
        (
            q.get("agent").unwrap_or_default(),
            q.get("tool").unwrap_or_default(),
        )
    };
    let data = Resource::new(move || decide_action.version().get(), |_| approvals());
    let err = error_of(decide_action);
    view! {
        <Frame title="Approvals" refresh=decide_action.version()>
            <h1>"Approvals"</h1>
            <p class="muted">"A tool that writes, or one an agent wrote, asks once per agent on its first call. A grant is for the version shown: it stands across demotions and across new versions that change nothing in the call; a version that changes what the call does, or that an agent wrote, asks again and says what changed. A revoked grant is a denial (the agent's calls are refused) until approved again."</p>
            <FormError err/>
            {loaded(data, "Loading…", move |d| {
                let (agent, tool) = wanted();
                let asked = d.approvals.iter().find(|x| x.agent == agent && format!("{}__{}", x.vendor, x.name) == tool).cloned();
                view! {
                    {asked.map(|x| {
                        let tool = format!("{}__{}", x.vendor, x.name);
                        match x.state.as_str() {
                            "granted" => view! { <p class="ok" role="status">{format!("Approved: {} may run {tool}.", x.agent)}</p> }.into_any(),
                            "denied" => view! { <p class="warning" role="status">{format!("Denied: {} may not run {tool}.", x.agent)}</p> }.into_any(),
                            _ => view! { <p class="warning" role="note">{format!("{} asks to run {tool}: approve or deny it below.", x.agent)}</p> }.into_any(),
                        }
                    })}
                    {approvals_table(d.approvals, d.now, decide_action, true)}
                }
            })}
        </Frame>
    }
}

// ---------------------------------------------------------------- toolbox

/// `/tools`: the toolbox, browsable without a query (`vendor`, `sort` = `name` | `use`,
/// `page`), and with `q` the same search as find_tool (narrowed to `vendor` when given).
#[component]
pub fn ToolboxPage() -> impl IntoView {
    let query = use_query_map();
    let get = move |k: &str| query.read().get(k).unwrap_or_default();
    let q = move || get("q");
    let browse = Resource::new(
        move || (get("vendor"), get("sort"), get("page").parse::<i64>().ok()),
        |(v, s, p)| browse_tools(Some(v), Some(s), p),
    );
    let hits = Resource::new(
        move || (q(), get("vendor")),
        |(q, v)| search_tools(q, None, Some(v)),
    );
    view! {
        <Frame title="Toolbox">
            <h1>"Toolbox"</h1>
            {loaded(browse, "Loading…", move |b| {
                let searching = !q().trim().is_empty();
                view! {
                    {toolbox_form(&b, untrack(q))}
                    {if searching {
                        search_results(hits, untrack(q)).into_any()
                    } else {
                        browse_table(b).into_any()
                    }}
                }
            })}
        </Frame>
    }
}

/// The Toolbox's one form (GET, so it works without JavaScript): the words to search,
/// the vendor, the order.
fn toolbox_form(b: &BrowseData, q: String) -> impl IntoView {
    let all: i64 = b.vendors.iter().map(|v| v.2).sum();
    let chosen = b.vendor.clone().unwrap_or_default();
    view! {
        <form method="get" class="search toolbox" role="search">
            <label class="words">"Search by what a tool does (the action and the object, the vendor if known)"
                <input type="search" name="q" value=q placeholder="e.g. refund a payment"/></label>
            <label>"Vendor"
                <select name="vendor">
                    <option value="" selected=chosen.is_empty()>{format!("All vendors ({})", count(all, "tool"))}</option>
                    {b.vendors.iter().cloned().map(|(slug, name, n)| {
                        let selected = slug == chosen;
                        let label = if name == slug { format!("{slug} ({n})") } else { format!("{name} — {slug} ({n})") };
                        view! { <option value=slug selected=selected>{label}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>"Order (without search words)"
                <select name="sort">
                    <option value="name" selected=b.sort == "name">"By name"</option>
                    <option value="use" selected=b.sort == "use">"Most used first"</option>
                </select>
            </label>
            <button type="submit">"Show"</button>
        </form>
    }
}

/// One page of the toolbox, with links to the others.
fn browse_table(b: BrowseData) -> impl IntoView {
    let now = b.now;
    if b.tools.is_empty() {
        return view! {
            <p class="muted">"No tools yet. "<a href="/vendors#import">"Import a vendor's OpenAPI document"</a>" to fill the toolbox."</p>
        }
        .into_any();
    }
    let pages = ((b.total + b.per_page - 1) / b.per_page).max(1);
    let mut base = String::from("/tools?");
    if let Some(v) = &b.vendor {
        base.push_str(&format!("vendor={}&", segment(v)));
    }
    if b.sort != "name" {
        base.push_str(&format!("sort={}&", b.sort));
    }
    let link = move |p: i64| format!("{base}page={p}");
    let first = (b.page - 1) * b.per_page + 1;
    let last = first + b.tools.len() as i64 - 1;
    view! {
        <p class="muted">{format!("Tools {first}–{last} of {}, {}.", b.total, if b.sort == "use" { "most used first" } else { "by name" })}</p>
        <div class="table-wrap"><table class="browse">
            <thead><tr><th>"Tool"</th><th>"Does"</th><th>"Description"</th><th>"Calls"</th><th>"Last used"</th></tr></thead>
            <tbody>{b.tools.into_iter().map(|t| view! {
                <tr data-tool=format!("{}__{}", t.vendor, t.name)>
                    <td><a href=format!("/tools/{}/{}", segment(&t.vendor), segment(&t.name))><code>{format!("{}__{}", t.vendor, t.name)}</code></a></td>
                    <td data-label="Does">{does_badge(&t.does)}</td>
                    <td class="desc">{t.description}</td>
                    <td class="num" data-label="Calls">{t.calls}</td>
                    <td data-label="Last used">{match t.last_used_at {
                        Some(at) => view! { <When at now/> }.into_any(),
                        None => view! { <span class="muted">"never"</span> }.into_any(),
                    }}</td>
                </tr>
            }).collect_view()}</tbody>
        </table></div>
        <nav class="pager" aria-label="Toolbox pages">
            {(b.page > 1).then(|| view! { <a href=link(b.page - 1) rel="prev">"Previous"</a> })}
            <span>{format!("Page {} of {pages}", b.page)}</span>
            {(b.page < pages).then(|| view! { <a href=link(b.page + 1) rel="next">"Next"</a> })}
        </nav>
    }
    .into_any()
}

/// The search's hits, best first.
fn search_results(hits: Resource<Result<SearchData, ConsoleError>>, q: String) -> impl IntoView {
    loaded(hits, "Searching…", move |s| {
        view! {
            {(!s.semantic).then(|| view! {
                <p class="warning" role="note">"Search matches words only: no embedding model is installed, so phrasings that use other words than a tool's may miss. Run "<code>"scripts/get-model.sh"</code>" and restart Graft to rank by meaning too."</p>
            })}
            {if s.hits.is_empty() {
                view! { <p class="muted">{format!("Nothing matches {q:?}. An agent can author a tool with acquire.")}</p> }.into_any()
            } else {
                view! {
                    <p class="muted">{format!("{} of {} matches, best first", s.hits.len(), s.total)}</p>
                    <div class="table-wrap"><table>
                        <thead><tr><th>"Tool"</th><th>"Does"</th><th>"Description"</th><th>"Score"</th></tr></thead>
                        <tbody>{s.hits.into_iter().map(|h| view! {
                            <tr data-tool=format!("{}__{}", h.vendor, h.name)>
                                <td><a href=format!("/tools/{}/{}", segment(&h.vendor), segment(&h.name))><code>{format!("{}__{}", h.vendor, h.name)}</code></a></td>
                                <td data-label="Does">{does_badge(does_in_words(None, h.read_only, h.destructive))}</td>
                                <td class="desc">{h.description}</td>
                                <td>{h.score}</td>
                            </tr>
                        }).collect_view()}</tbody>
                    </table></div>
                }.into_any()
            }}
        }
    })
}

/// `/tools/:vendor/:name`: versions, hints, binding, holders, notes, connection.
#[component]
pub fn ToolPage() -> impl IntoView {
    let params = use_params_map();
    let key = move || {
        let p = params.read();
        (
            p.get("vendor").unwrap_or_default(),
            p.get("name").unwrap_or_default(),
        )
    };
    let data = Resource::new(key, |(v, n)| tool(v, n));
    view! {
        <Frame title={ let (v, n) = untrack(key); format!("{v}__{n}") }>
            {loaded(data, "Loading…", tool_view)}
        </Frame>
    }
}

fn tool_view(t: ToolData) -> impl IntoView {
    let now = t.now;
    let current = t.versions.first().cloned();
    let back = format!("/tools?vendor={}", segment(&t.vendor));
    view! {
        <p class="crumbs"><a href="/tools">"Toolbox"</a>" › "<a href=back>{t.vendor.clone()}</a></p>
        <h1><code>{format!("{}__{}", t.vendor, t.name)}</code></h1>
        {t.vendor_removed.then(|| view! {
            <p class="warning" role="note">"Its vendor was removed: agents cannot promote or call it. It stays here for the record; importing the vendor's document again brings it back."</p>
        })}
        {(t.vendor_disabled && !t.vendor_removed).then(|| view! {
            <p class="warning" role="note">"Its vendor is disabled: agents cannot promote or call it until a person enables "<a href=format!("/vendors/{}", segment(&t.vendor))>"the vendor"</a>" again."</p>
        })}
        {t.retired_at.map(|at| view! {
            <p class="warning" role="note">"Retired "<When at now/>": the vendor's OpenAPI document no longer has this operation. Agents cannot promote or call it; it stays here for the record, and comes back if a later import has the operation again."</p>
        })}
        {current.map(|v| view! {
            <p>{v.description.clone()}</p>
            <p><span class="method">{v.method.clone()}</span>" "<code>{v.path.clone()}</code>
               {format!(" · version {}", v.version)}
               {t.operation_id.clone().map(|o| format!(" · operation {o}"))}</p>
            <p class="hints">{does_badge(does_in_words(Some(&v.method), v.hints[0], v.hints[1]))}" "
                {match does_in_words(Some(&v.method), v.hints[0], v.hints[1]) {
                    "reads" => "A call reads data and changes nothing.",
                    "deletes" => "A call deletes or overwrites data at the vendor.",
                    _ => "A call changes data at the vendor.",
                }}
                {t.gated.then_some(" An agent's first call needs a person's approval.")}
                {v.hints[2].then_some(" Repeating it with the same input changes nothing more (idempotent).")}
                <span class="muted" title="the MCP tool annotations agents see">
                    {format!(" MCP annotations: readOnlyHint {}, destructiveHint {}, idempotentHint {}, openWorldHint {}.", v.hints[0], v.hints[1], v.hints[2], v.hints[3])}
                </span></p>
        })}
        <section class="card">
            <h2>"Connection"</h2>
            {match t.connection.clone() {
                Some((label, why)) => view! { <p><strong>{label}</strong>" — "{why}</p> }.into_any(),
                None => view! { <p class="muted">"Calls carry no credential."</p> }.into_any(),
            }}
        </section>
        <section class="card">
            <h2>"Promoted for"</h2>
            {if t.holders.is_empty() {
                view! { <p class="muted">"No agent has it promoted."</p> }.into_any()
            } else {
                view! { <ul>{t.holders.into_iter().map(|(a, by)| view! {
                    <li><a href=format!("/agents/{}", segment(&a))>{a.clone()}</a>{format!(" (promoted by {by})")}</li>
                }).collect_view()}</ul> }.into_any()
            }}
        </section>
        <section class="card" id="calls">
            <h2>"Recent calls"</h2>
            {calls_table(t.calls.clone(), now, CallColumns::Agent, "No calls yet.")}
        </section>
        <section class="card">
            <h2>"Notes"</h2>
            {if t.notes.is_empty() {
                view! { <p class="muted">"No notes."</p> }.into_any()
            } else {
                view! { <ul>{t.notes.into_iter().map(|(who, body, at)| view! {
                    <li><strong>{who}</strong>" ("<When at now/>"): "{body}</li>
                }).collect_view()}</ul> }.into_any()
            }}
        </section>
        <section class="card">
            <h2>"Versions"</h2>
            {t.versions.into_iter().enumerate().map(|(i, v)| view! {
                <details open=i == 0>
                    <summary>{format!("Version {} — {} {} — by {} ", v.version, v.method, v.path, v.author)}<When at=v.created_at now/></summary>
                    <p>{v.description}</p>
                    <details class="raw"><summary>"Input schema (JSON Schema)"</summary><pre><code>{v.input_schema}</code></pre></details>
                    <details class="raw"><summary>"Binding: where each input goes in the request"</summary><pre><code>{v.binding}</code></pre></details>
                </details>
            }).collect_view()}
        </section>
    }
}

// ---------------------------------------------------------------- vendors

/// `/vendors`: vendors, OpenAPI upload, connections.
#[component]
pub fn VendorsPage() -> impl IntoView {
    let query = use_query_map();
    let add = ServerAction::<AddVendor>::new();
    let revoke = ServerAction::<RevokeConnection>::new();
    let data = Resource::new(
        move || {
            (
                query.read().get("import"),
                add.version().get() + revoke.version().get(),
            )
        },
        |(import, _)| vendors(import),
    );
    let add_err = error_of(add);
    let vendor_saved = saved(add, "vendor");
    let revoke_err = error_of(revoke);
    let (importing, set_importing) = signal(false);
    // bytes sent / total of the upload (hydrated only)
    let (sent, set_sent) = signal::<Option<(f64, f64)>>(None);
    let (refused, set_refused) = signal::<Option<String>>(None);
    view! {
        <Frame title="Vendors">
            <h1>"Vendors"</h1>
            {loaded(data, "Loading…", move |d| {
                let now = d.now;
                // what the last action said, while it is still true
                let removed_now = query.read_untracked().get("removed").filter(|s| d.removed.contains(s));
                let back_now = query.read_untracked().get("back").filter(|s| d.vendors.iter().any(|v| &v.slug == s));
                view! {
                    {removed_now.map(|slug| view! {
                        <p class="ok" role="status">{format!("Vendor {slug} was removed: its tools left every working set and refuse calls, its connections are revoked. They stay in the record; importing its document again brings it back.")}</p>
                    })}
                    {back_now.map(|slug| view! {
                        <p class="ok" role="status">{format!("Vendor {slug} was removed before and is back: its tools are in search and callable again (retired ones stay retired). Its old connections stay revoked: add a new one on its page, and import its document again if it changed.")}</p>
                    })}
                    {d.import.clone().map(import_summary)}
                    {if d.vendors.is_empty() {
                        view! { <p class="muted">"No vendors yet."</p> }.into_any()
                    } else {
                        view! { <div class="table-wrap"><table>
                            <thead><tr><th>"Slug"</th><th>"Name"</th><th>"Base URL"</th><th>"OpenAPI document"</th><th>"State"</th></tr></thead>
                            <tbody>{d.vendors.iter().cloned().map(|v| view! {
                                <tr data-vendor=v.slug.clone()>
                                    <td><a href=format!("/vendors/{}", segment(&v.slug)) title="settings, state and imports"><code>{v.slug.clone()}</code></a></td>
                                    <td class="name">{v.name}</td>
                                    <td><code>{v.base_url}</code></td>
                                    <td>{if v.has_document { "stored" } else { "—" }}</td>
                                    <td>{if v.disabled { "disabled" } else { "enabled" }}</td>
                                </tr>
                            }).collect_view()}</tbody>
                        </table></div> }.into_any()
                    }}
                    {(!d.removed.is_empty()).then(|| view! {
                        <p class="muted removed">{format!("Removed: {}. Importing a document under one of these slugs brings it back.", d.removed.join(", "))}</p>
                    })}
                    {(!d.imports.is_empty()).then(|| view! {
                        <section class="card" id="imports">
                            <h2>"Import history"</h2>
                            <div class="table-wrap"><table class="imports">
                                <thead><tr><th>"When"</th><th>"Vendor"</th><th>"By"</th><th>"What it did"</th></tr></thead>
                                <tbody>{d.imports.clone().into_iter().map(|i| view! {
                                    <tr data-vendor=i.vendor.clone()>
                                        <td data-label="When"><When at=i.at now/></td>
                                        <td data-label="Vendor"><a href=format!("/vendors/{}", segment(&i.vendor))><code>{i.vendor.clone()}</code></a></td>
                                        <td data-label="By">{i.by}</td>
                                        <td data-label="What it did">{i.headline}
                                            {(!i.details.is_empty()).then(|| view! { <details><summary>"Which tools"</summary><ul>
                                                {i.details.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
                                            </ul></details> }.into_any())}
                                        </td>
                                    </tr>
                                }).collect_view()}</tbody>
                            </table></div>
                        </section>
                    }.into_any())}
                    <section class="card" id="connections">
                        <h2>"Connections"</h2>
                        <FormError err=revoke_err/>
                        {connections_table(d.connections.clone(), now, revoke)}
                        <h3>"Add a connection"</h3>
                        {if d.vendors.is_empty() {
                            view! { <p class="muted">"Import a vendor's document (below) first; its connection comes next."</p> }.into_any()
                        } else {
                            view! {
                                <p>"A connection is added on its vendor's page, where the form starts with what the vendor's document asks for:"</p>
                                <ul class="add-connection">{d.vendors.iter().map(|v| view! {
                                    <li><a href=format!("/vendors/{}#connections", segment(&v.slug))>{format!("Add a connection to {}", v.slug)}</a></li>
                                }).collect_view()}</ul>
                            }.into_any()
                        }}
                        <p class="muted">"The secret is encrypted at rest and never shown again, here or to agents."</p>
                    </section>
                }
            })}
            <section class="card">
                <h2>"New vendor"</h2>
                <FormError err=add_err/>
                {move || vendor_saved.get().then(|| view! { <p class="ok" role="status">"Vendor created."</p> })}
                <ActionForm action=add node_ref=clear_on_save(add) attr:class="grid-form" attr:novalidate=true>
                    <label>"Slug"<input name="slug" placeholder="stripe"/></label>
                    <FieldError err=add_err field="slug"/>
                    <label>"Name"<input name="name" placeholder="Stripe"/></label>
                    <FieldError err=add_err field="name"/>
                    <label>"Base URL"<input name="base_url" placeholder="https://api.stripe.com"/></label>
                    <FieldError err=add_err field="base_url"/>
                    <button type="submit">"Create vendor"</button>
                </ActionForm>
            </section>
            <section class="card" id="import">
                <h2>"Import an OpenAPI document"</h2>
                <p class="muted">"OpenAPI 3.0, 3.1 or Swagger 2.0, JSON or YAML, up to 32 MiB. Every operation becomes a tool of the vendor (a new vendor is created with the document's server URL, or the base URL given). A newer document of a vendor updates its tools: changed operations get a new version, new ones are added, and tools whose operation is gone are retired (demoted, kept for the record). All or nothing: a failure changes nothing."</p>
                <form method="post" action="/vendors/import" enctype="multipart/form-data" class="grid-form"
                      on:submit=move |ev| {
                          let refused = upload_with_progress(ev, set_sent);
                          set_importing.set(refused.is_none());
                          set_refused.set(refused);
                      }>
                    <label>"Vendor slug"<input name="vendor" required placeholder="stripe"/></label>
                    <label>"Base URL (optional)"<input name="base_url" placeholder="from the document"/></label>
                    <label>"Document"<input type="file" name="document" accept=".json,.yaml,.yml,application/json,application/yaml" required/></label>
                    <button type="submit">"Import"</button>
                </form>
                {move || refused.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
                {move || importing.get().then(|| view! {
                    <p role="status" class="upload">
                        {move || match sent.get() {
                            Some((done, total)) if done < total => format!("Uploading… {}% ", (done * 100.0 / total) as u32),
                            Some(_) => "Uploaded; importing… ".to_string(),
                            None => "Uploading and importing… ".to_string(),
                        }}
                        <progress max="100" value=move || sent.get().map(|(d, t)| (d * 100.0 / t.max(1.0)).round().to_string())></progress>
                    </p>
                })}
            </section>
        </Frame>
    }
}

/// `/vendors/:slug`: a vendor's name and base URL (editable), its state (disable with a
/// confirmation that works without JavaScript; enable), its connections (add one, the
/// kind prefilled from its document; revoke), removal (confirmed), its tools and import
/// history. A removed vendor's page says so and keeps only its import history.
#[component]
pub fn VendorPage() -> impl IntoView {
    let params = use_params_map();
    let slug = move || params.read().get("slug").unwrap_or_default();
    let edit = ServerAction::<EditVendor>::new();
    let set_state = ServerAction::<SetVendorState>::new();
    let add_conn = ServerAction::<AddConnection>::new();
    let revoke = ServerAction::<RevokeConnection>::new();
    let remove = ServerAction::<RemoveVendor>::new();
    let confirm_conns = ServerAction::<ConfirmConnections>::new();
    let set_internal = ServerAction::<SetVendorInternal>::new();
    let conn_saves = saves(add_conn);
    let data = Resource::new(
        move || {
            (
                slug(),
                edit.version().get()
                    + set_state.version().get()
                    + conn_saves.get()
                    + revoke.version().get()
                    + confirm_conns.version().get()
                    + set_internal.version().get(),
            )
        },
        |(s, _)| vendor(s),
    );
    let confirm_err = error_of(confirm_conns);
    let internal_err = error_of(set_internal);
    let edit_err = error_of(edit);
    let state_err = error_of(set_state);
    let conn_err = error_of(add_conn);
    let revoke_err = error_of(revoke);
    let remove_err = error_of(remove);
    let conn_saved = saved(add_conn, "connection");
    let saved = saved(edit, "vendor");
    view! {
        <Frame title=untrack(slug)>
            {loaded(data, "Loading…", move |d| {
                let v = d.vendor.clone();
                let now = d.now;
                let (s1, s2, s3, s4) = (v.slug.clone(), v.slug.clone(), v.slug.clone(), v.slug.clone());
                let (s5, s6) = (v.slug.clone(), v.slug.clone());
                let (base1, base2) = (v.base_url.clone(), v.base_url.clone());
                let suspended: Option<String> = d.connections.iter().find_map(|c| c.suspended.clone());
                let v_conn = v.clone();
                let history = view! {
                    <section class="card" id="imports">
                        <h2>"Import history"</h2>
                        {if d.imports.is_empty() {
                            view! { <p class="muted">"No document imported yet. "<a href="/vendors#import">"Import one"</a>"."</p> }.into_any()
                        } else {
                            view! { <ul>{d.imports.clone().into_iter().map(|i| view! {
                                <li><When at=i.at now/>{format!(" by {}: {}", i.by, i.headline)}
                                    {(!i.details.is_empty()).then(|| view! { <details><summary>"Which tools"</summary><ul>
                                        {i.details.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
                                    </ul></details> })}
                                </li>
                            }).collect_view()}</ul> }.into_any()
                        }}
                    </section>
                };
                if let Some(at) = v.removed_at {
                    return view! {
                        <p class="crumbs"><a href="/vendors">"Vendors"</a></p>
                        <h1>{v.name.clone()}" "<code>{v.slug.clone()}</code></h1>
                        <p class="warning" role="note">"Removed "<When at now/>
                            {format!(": its {} stay in the record but are out of search and refuse calls; its connections are revoked. Importing its OpenAPI document again (on ", count(d.tools, "tool"))}
                            <a href="/vendors#import">"Vendors"</a>") brings it back."</p>
                        {history}
                    }.into_any();
                }
                view! {
                    <p class="crumbs"><a href="/vendors">"Vendors"</a></p>
                    <h1>{v.name.clone()}" "<code>{v.slug.clone()}</code></h1>
                    <p class="muted">
                        {if v.disabled { "Disabled: its tools are out of search and refuse calls. " } else { "" }}
                        {format!("{} in the toolbox, {}. ", count(d.tools, "tool"), count(d.entries, "working-set entry"))}
                        {(!v.disabled).then(|| view! { <a href=format!("/tools?vendor={}", segment(&v.slug))>"See its tools"</a> })}
                    </p>
                    <section class="card" id="settings">
                        <h2>"Name and base URL"</h2>
                        <FormError err=edit_err/>
                        {move || saved.get().then(|| view! { <p class="ok" role="status">"Saved. Calls use the new base URL now."</p> })}
                        <ActionForm action=edit attr:class="grid-form" attr:novalidate=true>
                            <input type="hidden" name="slug" value=s1/>
                            <label>"Name"<input name="name" value=v.name.clone()/></label>
                            <FieldError err=edit_err field="name"/>
                            <label>"Base URL (every call of its tools starts with it)"<input name="base_url" value=v.base_url.clone()/></label>
                            <FieldError err=edit_err field="base_url"/>
                            <label class="check"><input type="checkbox" name="confirm_move" value="yes"/>
                                " If the new base URL is on another host, port or scheme: yes, move it (its connections then wait for my confirmation there, and its approvals are asked again)"</label>
                            <FieldError err=edit_err field="confirm_move"/>
                            <button type="submit">"Save"</button>
                        </ActionForm>
                    </section>
                    <section class="card" id="connections">
                        <h2>"Connections"</h2>
                        {suspended.map(|why| view! {
                            <div class="warning" role="alert" id="suspended">
                                <p>{format!("{why}. Its connections send nothing until you confirm them at {}: a stored secret, or an approved write, must not follow a base URL somewhere else without a person's word.", base1)}</p>
                                <FormError err=confirm_err/>
                                <ActionForm action=confirm_conns attr:class="inline">
                                    <input type="hidden" name="slug" value=s5.clone()/>
                                    <button type="submit">{format!("Confirm its connections at {}", base2)}</button>
                                </ActionForm>
                            </div>
                        })}
                        <FormError err=revoke_err/>
                        {connections_table(d.connections.clone(), now, revoke)}
                        <h3>"Add a connection"</h3>
                        <FormError err=conn_err/>
                        {move || conn_saved.get().then(|| view! { <p class="ok" role="status">"Connection added; its secret is sealed."</p> })}
                        <ConnectionForm action=add_conn vendor=v_conn.clone()/>
                    </section>
                    <section class="card" id="network">
                        <h2>"Network"</h2>
                        <FormError err=internal_err/>
                        {if v.internal {
                            view! {
                                <p>"Internal: its calls may go to private and link-local addresses of this network (never to cloud metadata addresses)."</p>
                                <ActionForm action=set_internal>
                                    <input type="hidden" name="slug" value=s6.clone()/>
                                    <input type="hidden" name="internal" value="no"/>
                                    <button type="submit">"Take the internal mark off"</button>
                                </ActionForm>
                            }.into_any()
                        } else {
                            view! {
                                <p>"Its calls go to public addresses only: a base URL or a host name that leads to a private, loopback or link-local address is refused. Mark it internal if it really lives on your internal network."</p>
                                <ActionForm action=set_internal>
                                    <input type="hidden" name="slug" value=s6.clone()/>
                                    <input type="hidden" name="internal" value="yes"/>
                                    <label class="check"><input type="checkbox" name="confirm" value="yes" required/>
                                        " Yes, its calls may reach this network's private addresses"</label>
                                    <FieldError err=internal_err field="confirm"/>
                                    <button type="submit">"Mark it internal"</button>
                                </ActionForm>
                            }.into_any()
                        }}
                    </section>
                    <section class="card" id="state">
                        <h2>"State"</h2>
                        <FormError err=state_err/>
                        {if v.disabled {
                            view! {
                                <p>"Enabling puts its tools back in search; agents promote them again as they need them."</p>
                                <ActionForm action=set_state>
                                    <input type="hidden" name="slug" value=s2/>
                                    <input type="hidden" name="enabled" value="yes"/>
                                    <button type="submit">"Enable the vendor"</button>
                                </ActionForm>
                            }.into_any()
                        } else {
                            view! {
                                <p>"Disabling takes its tools out of search, refuses their calls, and demotes them from every working set (history says why). Its tools, history and connections stay."</p>
                                <ActionForm action=set_state>
                                    <input type="hidden" name="slug" value=s3/>
                                    <input type="hidden" name="enabled" value="no"/>
                                    <label class="check"><input type="checkbox" name="confirm" value="yes" required/>
                                        {format!(" Yes, demote its tools from {}", count(d.entries, "working-set entry"))}</label>
                                    <FieldError err=state_err field="confirm"/>
                                    <button type="submit" class="danger">"Disable the vendor"</button>
                                </ActionForm>
                            }.into_any()
                        }}
                    </section>
                    <section class="card" id="remove">
                        <h2>"Remove"</h2>
                        <p>"Removing takes the vendor off the lists: its tools leave every working set and refuse calls, its connections are revoked and their secrets dropped. Its tools, calls and history stay in the record, and importing its document again brings it back."</p>
                        <FormError err=remove_err/>
                        <ActionForm action=remove>
                            <input type="hidden" name="slug" value=s4/>
                            <label class="check"><input type="checkbox" name="confirm" value="yes" required/>
                                {format!(" Yes, remove {} and demote its tools from {}", v.slug, count(d.entries, "working-set entry"))}</label>
                            <FieldError err=remove_err field="confirm"/>
                            <button type="submit" class="danger">"Remove the vendor"</button>
                        </ActionForm>
                    </section>
                    {history}
                }.into_any()
            })}
        </Frame>
    }
}

/// When hydrated, sends the upload form with `XMLHttpRequest` so the page can show the
/// bytes sent, then goes where the server redirected (the summary). Without JavaScript, or
/// when anything here is unavailable, the form posts as usual.
#[cfg(feature = "hydrate")]
fn upload_with_progress(
    ev: leptos::ev::SubmitEvent,
    progress: WriteSignal<Option<(f64, f64)>>,
) -> Option<String> {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(form) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok())
    else {
        return None;
    };
    let (Ok(data), Ok(xhr)) = (
        web_sys::FormData::new_with_form(&form),
        web_sys::XmlHttpRequest::new(),
    ) else {
        return None;
    };
    if let Ok(file) = data.get("document").dyn_into::<web_sys::File>() {
        if file.size() > MAX_UPLOAD_BYTES as f64 {
            ev.prevent_default();
            return Some(format!(
                "The document is {:.1} MiB; Graft imports documents up to {} MiB.",
                file.size() / 1_048_576.0,
                MAX_UPLOAD_BYTES >> 20
            ));
        }
    }
    if xhr.open("POST", "/vendors/import").is_err()
        || xhr.set_request_header("x-graft-upload", "1").is_err()
    {
        return None;
    }
    ev.prevent_default();
    let on_progress =
        Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |e: web_sys::ProgressEvent| {
            if e.length_computable() {
                progress.set(Some((e.loaded(), e.total())));
            }
        });
    if let Ok(upload) = xhr.upload() {
        upload.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    }
    on_progress.forget();
    let done = xhr.clone();
    let on_end = Closure::<dyn FnMut()>::new(move || {
        // the summary's address, sent as text; signed out (a redirect to /login that the
        // request followed) or anything else: the plain page
        let text = done.response_text().ok().flatten().unwrap_or_default();
        let target = if done.status().unwrap_or(0) == 200 && text.starts_with("/vendors?import=") {
            text
        } else {
            "/vendors".to_string()
        };
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(&target);
        }
    });
    xhr.set_onloadend(Some(on_end.as_ref().unchecked_ref()));
    on_end.forget();
    let _ = xhr.send_with_opt_form_data(Some(&data));
    None
}

#[cfg(not(feature = "hydrate"))]
fn upload_with_progress(
    _: leptos::ev::SubmitEvent,
    _: WriteSignal<Option<(f64, f64)>>,
) -> Option<String> {
    None
}

fn import_summary(s: ImportSummary) -> impl IntoView {
    match s.error {
        Some(e) => view! {
            <section class="card error-card" role="alert" id="import-summary">
                <h2>"Import failed"</h2>
                <p>{format!("Nothing was imported for {}: {e}", if s.vendor.is_empty() { "the vendor" } else { s.vendor.as_str() })}</p>
            </section>
        }
        .into_any(),
        None => view! {
            <section class="card ok-card" role="status" id="import-summary">
                <h2>"Import done"</h2>
                <p class="headline">{s.headline()}</p>
                {s.adopted_base_url.clone().map(|u| view! { <p class="warning" role="note">"Base URL "<code>{u}</code>", taken from the document's servers: every call of these tools goes there. Change it on the vendor's page if it is not the API you mean."</p> })}
                {s.origin_moved.clone().map(|(old, new)| view! { <p class="warning" role="note">{format!("Moved from {old} to {new}: its connections send nothing until you confirm them on the vendor's page, and its approvals are asked again.")}</p> })}
                {(!s.moved.is_empty()).then(|| view! { <details open><summary>"Agents' tools renamed: the document's operations take their names"</summary><ul>
                    {s.moved.clone().into_iter().map(|(o, n)| view! { <li><code>{o}</code>" → "<code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.updated.is_empty()).then(|| view! { <details open><summary>"Updated: a new version, authored by import"</summary><ul>
                    {s.updated.clone().into_iter().map(|(n, what)| view! { <li><a href=format!("/tools/{}/{}", segment(&s.vendor), segment(&n))><code>{n.clone()}</code></a>": "{what}</li> }).collect_view()}
                </ul></details> })}
                {(!s.retired.is_empty()).then(|| view! { <details open><summary>"Retired: no longer in the document (demoted from working sets, kept for history)"</summary><ul>
                    {s.retired.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.restored.is_empty()).then(|| view! { <details><summary>"Restored: back in the document"</summary><ul>
                    {s.restored.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.kept.is_empty()).then(|| view! { <details><summary>"Left alone: an agent wrote their current version"</summary><ul>
                    {s.kept.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.renamed.is_empty()).then(|| view! { <details><summary>"Renamed"</summary><ul>
                    {s.renamed.into_iter().map(|(o, n)| view! { <li><code>{o}</code>" → "<code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.skipped.is_empty()).then(|| view! { <details><summary>"Skipped"</summary><ul>
                    {s.skipped.into_iter().map(|(o, r)| view! { <li><code>{o}</code>": "{r}</li> }).collect_view()}
                </ul></details> })}
                {(!s.withheld.is_empty()).then(|| view! { <details><summary>"Parameters not offered to agents (Graft or the connection sets them)"</summary><ul>
                    {s.withheld.into_iter().map(|(o, p)| view! { <li><code>{o}</code>": "{p}</li> }).collect_view()}
                </ul></details> })}
                <p><a href=format!("/tools?vendor={}", segment(&s.vendor))>"See its tools"</a></p>
            </section>
        }
        .into_any(),
    }
}

/// The kinds a connection can be, with the words the form shows.
const CONNECTION_KINDS: [(&str, &str); 5] = [
    ("bearer", "bearer (Authorization: Bearer)"),
    ("header", "header (e.g. X-Api-Key)"),
    ("query", "query parameter"),
    ("basic", "basic (user:password)"),
    ("none", "none"),
];

/// The form that adds a connection to `vendor` (issue 14.5), on the vendor's page: the
/// kind and the header or parameter name start as its document asks (its
/// securitySchemes, read at import); errors show at their fields; once saved the form
/// empties (the secret is never rendered back).
#[component]
fn ConnectionForm(action: ServerAction<AddConnection>, vendor: VendorItem) -> impl IntoView {
    let err = error_of(action);
    let kind = vendor
        .auth_kind
        .clone()
        .unwrap_or_else(|| "bearer".to_string());
    let name = vendor.auth_name.clone().unwrap_or_default();
    let suggestion = match (vendor.auth_kind.as_deref(), name.as_str()) {
        (Some("header"), n) => Some(format!(
            "{}'s document asks for the header {n}.",
            vendor.slug
        )),
        (Some("query"), n) => Some(format!(
            "{}'s document asks for the query parameter {n}.",
            vendor.slug
        )),
        (Some("bearer"), _) => Some(format!(
            "{}'s document asks for a bearer token.",
            vendor.slug
        )),
        (Some("basic"), _) => Some(format!(
            "{}'s document asks for HTTP basic auth.",
            vendor.slug
        )),
        _ => None,
    };
    let form = clear_on_save(action);
    view! {
        <ActionForm action node_ref=form attr:class="grid-form" attr:novalidate=true>
            <input type="hidden" name="vendor" value=vendor.slug.clone()/>
            <FieldError err field="vendor"/>
            {suggestion.map(|s| view! { <p class="muted hint">{s}</p> })}
            <label>"Label"<input name="label" required placeholder="production"/></label>
            <FieldError err field="label"/>
            <label>"Kind"
                <select name="kind">
                    {CONNECTION_KINDS.iter().map(|(value, words)| view! {
                        <option value=*value selected=kind == *value>{*words}</option>
                    }).collect_view()}
                </select>
            </label>
            <FieldError err field="kind"/>
            <label>"Header or query parameter name"
                <input name="name" placeholder="only for header and query" value=name/></label>
            <FieldError err field="name"/>
            <label>"Secret (write-only)"<input type="password" name="secret" autocomplete="off"/></label>
            <FieldError err field="secret"/>
            <button type="submit">"Add connection"</button>
        </ActionForm>
    }
}

/// How many times `action` saved (hydrated): a page's data reloads on this rather than
/// on every submission, so a refused form keeps what the person typed.
fn saves<S>(action: ServerAction<S>) -> ReadSignal<usize>
where
    S: leptos::server_fn::ServerFn<Output = (), Error = ConsoleError>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let (n, set_n) = signal(0usize);
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(()))) {
            set_n.update(|n| *n += 1);
        }
    });
    n
}

fn connections_table(
    list: Vec<ConnectionItem>,
    now: i64,
    revoke: ServerAction<RevokeConnection>,
) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="muted">"No connections: tools run without credentials."</p> }
            .into_any();
    }
    view! {
        <div class="table-wrap"><table class="connections">
            <thead><tr><th>"Vendor"</th><th>"Label"</th><th>"Kind"</th><th>"Added"</th><th>"State"</th><th></th></tr></thead>
            <tbody>{list.into_iter().map(|c| { let (l1, l2) = (c.label.clone(), c.label.clone()); view! {
                <tr data-connection=l1>
                    <td><code>{c.vendor}</code></td>
                    <td>{c.label.clone()}</td>
                    <td>{c.kind}{c.name.map(|n| format!(" ({n})"))}</td>
                    <td><When at=c.created_at now/></td>
                    <td>{match (c.revoked_at, c.suspended.clone()) {
                        (Some(t), _) => view! { "revoked "<When at=t now/> }.into_any(),
                        (None, Some(why)) => view! { <span class="warning-text" title=why>"suspended: the base URL moved"</span> }.into_any(),
                        (None, None) => "active".into_any(),
                    }}</td>
                    <td>{c.revoked_at.is_none().then(|| view! {
                        <Confirm label="Revoke".to_string()>
                            <p>{format!("Calls that use {l2} fail from now on, and each tool whose calls use it is demoted in every working set. Its secret cannot be recovered.")}</p>
                            <ActionForm action=revoke attr:class="inline">
                                <input type="hidden" name="id" value=c.id.to_string()/>
                                <input type="hidden" name="confirm" value="yes"/>
                                <button type="submit" class="danger solid" aria-label=format!("Revoke {l2}")>"Revoke it"</button>
                            </ActionForm>
                        </Confirm>
                    })}</td>
                </tr>
            }}).collect_view()}</tbody>
        </table></div>
        <p class="muted">"Revoking demotes, in every working set, each tool whose calls use the connection."</p>
    }
    .into_any()
}
