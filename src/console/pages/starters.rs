//! Starter sets (issue 31): the templates page, one template's page, and the Starter set
//! card of an agent's page. A person chooses tools; the rule promotes them.

use crate::console::components::{
    does_badge, error_of, loaded, saved, Confirm, DataTable, FieldError, FormError, Frame,
};
use crate::console::server_fns::{
    search_tools, template, templates, ApplyStarter, ApplyTemplate, ConsoleResult, CreateTemplate,
    Decide, DeleteTemplate, EditStarter, EditTemplate, SearchData, SetStarterTemplate, StarterData,
    StarterToolItem, TemplateData,
};
use crate::console::words::{count, does_in_words, segment};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/starters`: every starter template, and a form that creates one.
#[component]
pub fn StartersPage() -> impl IntoView {
    let create = ServerAction::<CreateTemplate>::new();
    let data = Resource::new(|| (), |_| templates());
    let err = error_of(create);
    view! {
        <Frame title="Starter templates">
            <h1>"Starter templates"</h1>
            <p>"A starter template is a list of tools a kind of agent needs from its first turn (a support bot's ticket tools, an ops bot's deploy and chat tools). "
               "Pick one when you create an agent: the rule promotes its tools at once, so they show as "<q>"Promoted by: the rule"</q>" on the agent's page. "
               "The sweep treats them like any other tool; the agent's page can apply the set again."</p>
            {loaded(data, "Loading…", |d| {
                if d.templates.is_empty() {
                    return view! { <p class="muted">"No templates yet. Create one below."</p> }.into_any();
                }
                view! {
                    <DataTable head=view! { <th>"Template"</th><th>"Tools"</th><th>"Agents using it"</th> }.into_any()>
                        {d.templates.into_iter().map(|t| {
                            let href = format!("/starters/{}", segment(&t.name));
                            view! {
                                <tr data-template=t.name.clone()>
                                    <td><a href=href>{t.name.clone()}</a></td>
                                    <td class="num" data-label="Tools">{t.tools}</td>
                                    <td class="num" data-label="Agents using it">{t.agents}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </DataTable>
                }.into_any()
            })}
            <section class="card" id="new-template">
                <h2>"New template"</h2>
                <FormError err/>
                <ActionForm action=create attr:class="grid-form" attr:novalidate=true>
                    <label>"Name"<input name="name" required placeholder="support"/></label>
                    <FieldError err field="name"/>
                    <button type="submit">"Create template"</button>
                </ActionForm>
                <p class="muted">"Its page lets you add tools from the toolbox."</p>
            </section>
        </Frame>
    }
}

/// `/starters/:name`: a template's tools (add from the toolbox, remove), the agents
/// that use it, apply and delete.
#[component]
pub fn TemplatePage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let q = move || query.read().get("q").unwrap_or_default();
    let edit = ServerAction::<EditTemplate>::new();
    let apply = ServerAction::<ApplyTemplate>::new();
    let delete = ServerAction::<DeleteTemplate>::new();
    let data = Resource::new(
        move || (name(), edit.version().get() + apply.version().get()),
        |(n, _)| template(n),
    );
    let hits = Resource::new(
        move || (q(), edit.version().get()),
        |(q, _)| search_tools(q, None, None, None),
    );
    let errs = [error_of(edit), error_of(apply), error_of(delete)];
    let err = Signal::derive(move || errs.iter().find_map(|e| e.get()));
    let edited = saved(edit, "template");
    let applied = saved(apply, "applied");
    view! {
        <Frame title=untrack(name)>
            {loaded(data, "Loading…", move |d: TemplateData| {
                let n = d.name.clone();
                let users = d.agents.len();
                let listed: Vec<String> = d.tools.iter().map(|t| format!("{}__{}", t.vendor, t.name)).collect();
                let (n1, n2, n3, n4) = (n.clone(), n.clone(), n.clone(), n.clone());
                view! {
                    <h1>"Starter template "{n.clone()}</h1>
                    <p><a href="/starters">"All starter templates"</a></p>
                    <FormError err/>
                    {move || edited.get().then(|| view! { <p class="ok" role="status">"Saved."</p> })}
                    {move || applied.get().then(|| view! { <p class="ok" role="status">"Applied: the rule promoted the template's tools each agent lacked."</p> })}
                    <section class="card">
                        <h2>"Its tools"</h2>
                        {template_tools(&d, edit)}
                    </section>
                    <section class="card">
                        <h2>"Add from the toolbox"</h2>
                        <form method="get" class="search" role="search">
                            <label>"Search the toolbox"<input type="search" name="q" value=untrack(q) placeholder="e.g. create a ticket"/></label>
                            <button type="submit">"Search"</button>
                        </form>
                        {add_hits(hits, listed, move |tool| { let n1 = n1.clone(); let label = format!("Add {tool}"); view! {
                            <ActionForm action=edit attr:class="inline">
                                <input type="hidden" name="template" value=n1/>
                                <input type="hidden" name="add" value=tool.clone()/>
                                {(users > 0).then(|| view! {
                                    <label class="check"><input type="checkbox" name="apply" value="yes" checked=true/>
                                        {format!("give it to the {} using it now", count(users as i64, "agent"))}</label>
                                })}
                                <button type="submit" aria-label=label>"Add"</button>
                            </ActionForm>
                        }.into_any() })}
                    </section>
                    <section class="card">
                        <h2>"Agents using it"</h2>
                        {if d.agents.is_empty() {
                            view! { <p class="muted">"None yet: choose it as the starter set when you create an agent, or on an agent's page."</p> }.into_any()
                        } else {
                            view! {
                                <ul>{d.agents.iter().map(|a| view! { <li><a href=format!("/agents/{}#starter", segment(a))>{a.clone()}</a></li> }).collect_view()}</ul>
                                <p>"Applying promotes, for each of these agents, every tool of the template that its working set lacks (the sweep may have demoted some)."</p>
                                <ActionForm action=apply>
                                    <input type="hidden" name="template" value=n2/>
                                    <button type="submit">"Apply to these agents now"</button>
                                </ActionForm>
                            }.into_any()
                        }}
                    </section>
                    <section class="card">
                        <h2>"Delete"</h2>
                        <Confirm label="Delete template".to_string()>
                            <p>{if users == 0 { "The template goes; no agent uses it.".to_string() } else { format!("The template goes; the {} using it keep their working sets and their own starter tools.", count(users as i64, "agent")) }}</p>
                            <ActionForm action=delete>
                                <input type="hidden" name="template" value=n3/>
                                <input type="hidden" name="confirm" value="yes"/>
                                <button type="submit" class="danger solid" aria-label=format!("Delete template {n4}")>"Delete the template now"</button>
                            </ActionForm>
                        </Confirm>
                    </section>
                }
            })}
        </Frame>
    }
}

fn template_tools(d: &TemplateData, edit: ServerAction<EditTemplate>) -> impl IntoView {
    if d.tools.is_empty() {
        return view! { <p class="muted">"No tools yet: search the toolbox below and add them."</p> }.into_any();
    }
    let name = d.name.clone();
    let tools = d.tools.clone();
    view! {
        <DataTable class="starter" head=view! { <th>"Tool"</th><th>"Does"</th><th>"Description"</th><th></th> }.into_any()>
            {tools.into_iter().map(|t| {
                let tool = format!("{}__{}", t.vendor, t.name);
                let (tool1, tool2, label) = (tool.clone(), tool.clone(), format!("Remove {tool}"));
                let name = name.clone();
                view! {
                    <tr data-tool=tool1>
                        <td>{tool_link(&t)}{t.unusable.clone().map(|u| view! { <p class="warning">{u}</p> })}</td>
                        <td data-label="Does">{does_badge(does_in_words(None, t.read_only, t.destructive))}</td>
                        <td class="desc">{t.description.clone()}</td>
                        <td>
                            <ActionForm action=edit>
                                <input type="hidden" name="template" value=name/>
                                <input type="hidden" name="remove" value=tool2/>
                                <button type="submit" class="danger" aria-label=label>"Remove"</button>
                            </ActionForm>
                        </td>
                    </tr>
                }
            }).collect_view()}
        </DataTable>
    }
    .into_any()
}

fn tool_link(t: &StarterToolItem) -> impl IntoView {
    let href = format!("/tools/{}/{}", segment(&t.vendor), segment(&t.name));
    view! { <a href=href><code>{format!("{}__{}", t.vendor, t.name)}</code></a> }
}

/// Search hits with an add form each (`form` of the `vendor__name`), or "listed" for a
/// tool in `listed`.
fn add_hits(
    hits: Resource<ConsoleResult<SearchData>>,
    listed: Vec<String>,
    form: impl Fn(String) -> AnyView + Clone + Send + Sync + 'static,
) -> impl IntoView {
    loaded(hits, "Searching…", move |s| {
        if s.hits.is_empty() {
            let text = if s.total == 0 {
                "Search by what a tool does, its vendor or name."
            } else {
                ""
            };
            return view! { <p class="muted">{text}</p> }.into_any();
        }
        let listed = listed.clone();
        let form = form.clone();
        view! {
            <ul class="hits">
                {s.hits.into_iter().map(|h| {
                    let tool = format!("{}__{}", h.vendor, h.name);
                    let action = if listed.contains(&tool) {
                        view! { <span class="badge listed">"listed"</span> }.into_any()
                    } else {
                        form(tool.clone())
                    };
                    let tool1 = tool.clone();
                    view! {
                        <li data-tool=tool1>
                            <code>{tool}</code>" "
                            {does_badge(does_in_words(None, h.read_only, h.destructive))}
                            <span class="desc">{h.description}</span>
                            {action}
                        </li>
                    }
                }).collect_view()}
            </ul>
        }
        .into_any()
    })
}

/// The Starter set card of an agent's page: its template (choose one), its tools with
/// whether each is promoted and whether its first call waits for approval (Approve now),
/// adding from the toolbox, and applying the set again.
#[allow(clippy::too_many_arguments)]
pub(crate) fn starter_card(
    agent: String,
    cap: i64,
    would_demote: usize,
    s: StarterData,
    sq: String,
    hits: Resource<ConsoleResult<SearchData>>,
    actions: StarterActions,
) -> impl IntoView {
    let StarterActions {
        edit,
        template: set_template,
        apply,
        decide,
    } = actions;
    let listed: Vec<String> = s
        .tools
        .iter()
        .map(|t| format!("{}__{}", t.vendor, t.name))
        .collect();
    let n = listed.len() as i64;
    let current = s.template.clone().unwrap_or_default();
    let (a1, a2, a3) = (agent.clone(), agent.clone(), agent.clone());
    let waits = s
        .tools
        .iter()
        .filter(|t| t.awaits_approval && t.unusable.is_none())
        .count();
    view! {
        <p>"The tools this agent should have from its first turn: the rule promotes each one that is not in its working set when the set changes, and when you apply it again. "
           "Taking a tool off the list demotes nothing; the sweep treats starter tools like any other."</p>
        <ActionForm action=set_template attr:class="search starter-template">
            <input type="hidden" name="agent" value=a1/>
            <label>"Template"
                <select name="template">
                    <option value="" selected=current.is_empty()>"(none)"</option>
                    {s.templates.iter().cloned().map(|t| {
                        let selected = t == current;
                        let t1 = t.clone();
                        view! { <option value=t1 selected=selected>{t}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">"Use this template"</button>
            <a href="/starters">"Edit templates"</a>
        </ActionForm>
        {(n > cap).then(|| view! {
            <p class="warning" role="note">{format!(
                "The starter set holds {}, more than the cap of {cap}: the sweep demotes the excess that is not called (see the next sweep under Name, cap, idle window and token budget).",
                count(n, "tool"))}</p>
        })}
        {(would_demote > 0 && n <= cap).then(|| view! {
            <p class="muted" role="note">{format!("The next sweep would demote {}: idle, over the cap or over the token budget (listed under Name, cap, idle window and token budget).", count(would_demote as i64, "tool"))}</p>
        })}
        {(waits > 0).then(|| view! {
            <p class="warning" role="note">{format!(
                "{} of the starter set {} approval before the agent's first call: approve {} now so the agent does not wait on a person.",
                count(waits as i64, "write tool"), if waits == 1 { "needs" } else { "need" }, if waits == 1 { "it" } else { "them" })}</p>
        })}
        {if s.tools.is_empty() {
            view! { <p class="muted">"No starter tools: choose a template above or add tools below."</p> }.into_any()
        } else {
            view! {
                <DataTable class="starter" head=view! { <th>"Tool"</th><th>"From"</th><th>"Working set"</th><th>"Approval"</th><th></th> }.into_any()>
                    {s.tools.iter().cloned().map(|t| {
                        let tool = format!("{}__{}", t.vendor, t.name);
                        let agent = agent.clone();
                        let from = match (t.own, t.from_template) {
                            (true, true) => "this agent and its template",
                            (true, false) => "this agent",
                            _ => "its template",
                        };
                        let state = match &t.unusable {
                            Some(u) => view! { <span class="warning">{u.clone()}</span> }.into_any(),
                            None if t.promoted => view! { <span>"promoted"</span> }.into_any(),
                            None => view! { <span class="muted">"not in it (apply the set again)"</span> }.into_any(),
                        };
                        let approval = if (t.awaits_approval || t.denied) && t.unusable.is_none() {
                            let (ag, tl) = (agent.clone(), tool.clone());
                            let said = if t.denied { "denied: its calls are refused " } else { "needed before its first call " };
                            view! {
                                <span>{said}</span>
                                <ActionForm action=decide attr:class="inline">
                                    <input type="hidden" name="agent" value=ag/>
                                    <input type="hidden" name="tool" value=tl.clone()/>
                                    <input type="hidden" name="decision" value="grant"/>
                                    <input type="hidden" name="version" value=t.version.to_string()/>
                                    <button type="submit" aria-label=format!("Approve {tl} now")>"Approve now"</button>
                                </ActionForm>
                            }.into_any()
                        } else if t.needs_approval {
                            view! { <span class="ok">"granted"</span> }.into_any()
                        } else {
                            view! { <span class="muted">"not needed"</span> }.into_any()
                        };
                        let (tool1, tool2, label) = (tool.clone(), tool.clone(), format!("Take {tool} off the starter set"));
                        let own = t.own;
                        let link = tool_link(&t);
                        view! {
                            <tr data-tool=tool1>
                                <td>{link}</td>
                                <td data-label="From">{from}</td>
                                <td class="starter-state" data-label="Working set">{state}</td>
                                <td class="starter-approval" data-label="Approval">{approval}</td>
                                <td>{own.then(|| view! {
                                    <ActionForm action=edit>
                                        <input type="hidden" name="agent" value=agent/>
                                        <input type="hidden" name="remove" value=tool2/>
                                        <button type="submit" class="danger" aria-label=label>"Remove"</button>
                                    </ActionForm>
                                })}</td>
                            </tr>
                        }
                    }).collect_view()}
                </DataTable>
                <ActionForm action=apply attr:class="after-table">
                    <input type="hidden" name="agent" value=a2/>
                    <button type="submit">"Apply the starter set again"</button>
                </ActionForm>
            }.into_any()
        }}
        <h3>"Add to the starter set"</h3>
        <form method="get" class="search" role="search" action="#starter">
            <label>"Find a tool to add"<input type="search" name="sq" value=sq placeholder="e.g. list tickets"/></label>
            <button type="submit">"Find"</button>
        </form>
        {add_hits(hits, listed, move |tool| { let a3 = a3.clone(); let label = format!("Add {tool} to the starter set"); view! {
            <ActionForm action=edit attr:class="inline">
                <input type="hidden" name="agent" value=a3/>
                <input type="hidden" name="add" value=tool/>
                <button type="submit" aria-label=label>"Add"</button>
            </ActionForm>
        }.into_any() })}
    }
}

/// The actions of [`starter_card`], created by the agent page (whose data they refresh).
#[derive(Clone, Copy)]
pub(crate) struct StarterActions {
    pub edit: ServerAction<EditStarter>,
    pub template: ServerAction<SetStarterTemplate>,
    pub apply: ServerAction<ApplyStarter>,
    pub decide: ServerAction<Decide>,
}
