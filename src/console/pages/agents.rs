//! The Agents page (SPEC §6): the list, adding an agent, and its token shown once.

use crate::console::components::{
    error_of, loaded, saved, snippet_view, CopyButton, DataTable, FieldError, FormError, Frame,
    When,
};
use crate::console::server_fns::{
    agents, take_token, AddAgent, AgentsData, ConsoleError, EditAgent, TokenReveal,
};
use crate::console::words::{count, harness_in_words, segment, HARNESSES};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/agents`: every agent, Edit per row, and New agent.
#[component]
pub fn AgentsPage() -> impl IntoView {
    let add = ServerAction::<AddAgent>::new();
    let edit = ServerAction::<EditAgent>::new();
    let live = crate::console::live::changes(&["agents", "calls"]);
    let data = Resource::new(move || (edit.version().get(), live.get()), |_| agents());
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
                    {loaded(data, "", |d| starter_choice(d.templates))}
                    <FieldError err=add_err field="starter"/>
                    <button type="submit">"Create agent"</button>
                </ActionForm>
                <p class="muted">"The next page shows the agent's token once, with the configuration for its client."</p>
            </section>
        </Frame>
    }
}

/// New agent's choice of starter template (issue 31): the rule promotes its tools at once.
fn starter_choice(templates: Vec<String>) -> impl IntoView {
    if templates.is_empty() {
        return view! {
            <p class="muted">"Starter template: none yet. "<a href="/starters">"Define one"</a>" to give new agents their tools from the first turn."</p>
        }
        .into_any();
    }
    view! {
        <label>"Starter template"
            <select name="starter">
                <option value="">"(none)"</option>
                {templates.into_iter().map(|t| { let t1 = t.clone(); view! { <option value=t1>{t}</option> } }).collect_view()}
            </select>
        </label>
    }
    .into_any()
}

pub(crate) fn agents_table(
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
        <DataTable head=view! { <th>"Name"</th><th>"Harness"</th><th>"Working set"</th><th>"Tokens"</th><th>"Idle window"</th><th>"Last seen"</th><th>"Edit"</th> }.into_any()>
                    {d.agents.into_iter().map(|a| {
                        let href = format!("/agents/{}", segment(&a.name));
                        let over = a.size > a.cap;
                        let over_budget = a.token_budget.is_some_and(|b| a.tokens > b);
                        let (n1, n2, n3) = (a.name.clone(), a.name.clone(), a.name.clone());
                        view! {
                            <tr data-agent=n1>
                                <td><a href=href>{n2}</a>{match (a.removed_at, a.disabled_at) {
                                    (Some(_), _) => Some(view! { " "<span class="badge muted">"removed"</span> }),
                                    (None, Some(_)) => Some(view! { " "<span class="badge muted">"disabled"</span> }),
                                    _ => None,
                                }}</td>
                                <td data-label="Harness">{a.harness.as_deref().map(harness_in_words).unwrap_or_else(|| "—".into())}</td>
                                <td class:over=over class="num" data-label="Working set">{format!("{} / {}", a.size, a.cap)}</td>
                                <td class:over=over_budget class="num tokens" data-label="Tokens">{match a.token_budget {
                                    Some(b) => format!("{} / {}", crate::numbers::grouped(a.tokens), crate::numbers::grouped(b)),
                                    None => crate::numbers::grouped(a.tokens),
                                }}</td>
                                <td class="num" data-label="Idle window">{count(a.idle_window_days, "day")}</td>
                                <td data-label="Last seen">{match a.last_seen_at {
                                    Some(t) => view! { <When at=t now/> }.into_any(),
                                    None => view! { <span class="muted">"never"</span> }.into_any(),
                                }}</td>
                                <td hidden=a.removed_at.is_some()>
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
                </DataTable>
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

pub(crate) fn token_view(r: TokenReveal) -> impl IntoView {
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
            {r.snippets.into_iter().map(|s| snippet_view(s, true)).collect_view()}
            <p>"Give the agent the Graft skill too: "<a href="/skill/SKILL.md">"/skill/SKILL.md"</a>
               " (a "<code>"SKILL.md"</code>" folder for Hermes and OpenClaw). It teaches find_tool before acquire, promote, and run_tool as the fallback."</p>
            <p><a href=format!("/agents/{}", segment(&r.agent))>"Go to the agent's page"</a></p>
        </section>
    }
}
