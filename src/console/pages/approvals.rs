//! The Approvals page (SPEC §4.4, §6; issue 28.6): filters, decisions with a reason for
//! a denial, one approval for every agent a tool waits for, and each row's decisions.

use crate::console::components::{error_of, loaded, Confirm, DataTable, FormError, Frame, When};
use crate::console::server_fns::{
    approvals, ApprovalItem, ApprovalsData, ApprovePending, Decide, DecisionItem,
};
use crate::console::words::{count, segment};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// `/approvals`: pending first; approve, deny (with a reason for the agent), revoke a
/// grant; approve a tool for every agent it waits for. Narrowed by `agent`, `vendor`
/// and `state` (a GET form, so it works without JavaScript); `agent` and `tool` together
/// (the link an agent hands its user) also say where that request stands.
#[component]
pub fn ApprovalsPage() -> impl IntoView {
    let decide_action = ServerAction::<Decide>::new();
    let all_action = ServerAction::<ApprovePending>::new();
    let query = use_query_map();
    let get = move |k: &str| query.read().get(k).unwrap_or_default();
    // asked and decided elsewhere too, while the page is open (issue 28.3)
    let live = crate::console::live::changes(&["approvals", "toolbox"]);
    let data = Resource::new(
        move || {
            (
                decide_action.version().get() + all_action.version().get() + live.get() as usize,
                get("agent"),
                get("vendor"),
                get("state"),
            )
        },
        |(_, a, v, s)| approvals(Some(a), Some(v), Some(s)),
    );
    let err = error_of(decide_action);
    let all_err = error_of(all_action);
    let refresh =
        Signal::derive(move || decide_action.version().get() + all_action.version().get());
    view! {
        <Frame title="Approvals" refresh>
            <h1>"Approvals"</h1>
            <p class="muted">"A tool that writes, or one an agent wrote, asks once per agent on its first call. A grant is for the version shown: it stands across demotions and across new versions that change nothing in the call; a version that changes what the call does, or that an agent wrote, asks again and says what changed. A revoked grant is a denial (the agent's calls are refused) until approved again. A reason given with a denial reaches the agent with each refused call."</p>
            <FormError err/>
            <FormError err=all_err/>
            {move || all_action.value().get().and_then(Result::ok).map(|names| {
                let words = if names.is_empty() {
                    "No agent was waiting for that version any more.".to_string()
                } else {
                    format!("Approved for {}: {}.", count(names.len() as i64, "agent"), names.join(", "))
                };
                view! { <p class="ok" role="status" id="approved-all">{words}</p> }
            })}
            {loaded(data, "Loading…", move |d| {
                let (agent, tool) = (untrack(move || get("agent")), untrack(move || get("tool")));
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
                    {filter_form(&d)}
                    {if d.approvals.is_empty() && d.total > 0 {
                        view! { <p class="muted" role="status">"No approval matches these filters."</p> }.into_any()
                    } else {
                        approvals_table(d.approvals, d.now, decide_action, Some(all_action)).into_any()
                    }}
                }
            })}
        </Frame>
    }
}

/// The filters (GET): agent, vendor, state; and how many of all approvals they show.
fn filter_form(d: &ApprovalsData) -> impl IntoView {
    let (agent, vendor, state) = d.filter.clone();
    let narrowed = !(agent.is_empty() && vendor.is_empty() && state.is_empty());
    // a choice from the address that is not in the list (a removed agent, a vendor with
    // no approvals) stays chosen, so that Show again keeps the filter the page applies
    let options = |all: &[String], chosen: &str| {
        let unlisted = (!chosen.is_empty() && !all.iter().any(|a| a == chosen)).then(|| {
            view! { <option value=chosen.to_string() selected=true>{format!("{chosen} (none here)")}</option> }
        });
        view! {
            {unlisted}
            {all.iter()
                .map(|a| view! { <option value=a.clone() selected=a == chosen>{a.clone()}</option> })
                .collect_view()}
        }
    };
    let shown = d.approvals.len();
    view! {
        <form method="get" class="search filters approvals-filter" role="search">
            <label>"Agent"
                <select name="agent">
                    <option value="" selected=agent.is_empty()>"All agents"</option>
                    {options(&d.agents, &agent)}
                </select>
            </label>
            <label>"Vendor"
                <select name="vendor">
                    <option value="" selected=vendor.is_empty()>"All vendors"</option>
                    {options(&d.vendors, &vendor)}
                </select>
            </label>
            <label>"State"
                <select name="state">
                    <option value="" selected=state.is_empty()>"Any state"</option>
                    {["pending", "granted", "denied"].into_iter().map(|s| view! {
                        <option value=s selected=s == state>{s}</option>
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">"Show"</button>
            {narrowed.then(|| view! {
                <span class="muted" role="status">{format!("{shown} of {} shown. ", count(d.total as i64, "approval"))}
                    <a href="/approvals">"Show all"</a></span>
            })}
        </form>
    }
}

/// The words of one decision: "version 3 approved by ana, 2 days ago: reason".
fn decision_line(d: DecisionItem, now: i64) -> impl IntoView {
    let what = match d.state.as_str() {
        "granted" => "approved",
        _ => "denied",
    };
    let version = d
        .version
        .map(|v| format!("version {v} "))
        .unwrap_or_default();
    view! {
        <li>
            {format!("{version}{what} by {} ", d.by)}<When at=d.at now/>
            {d.reason.map(|r| view! { ": "<q>{r}</q> })}
        </li>
    }
}

/// A table of approvals (the Approvals page, and an agent's page without the agent
/// column when `all` is `None`): each row's request, state, decisions and buttons.
pub(crate) fn approvals_table(
    list: Vec<ApprovalItem>,
    now: i64,
    decide_action: ServerAction<Decide>,
    all: Option<ServerAction<ApprovePending>>,
) -> impl IntoView {
    let show_agent = all.is_some();
    if list.is_empty() {
        return view! { <p class="muted">"No approvals here: a tool that writes, or one an agent wrote, asks on its first call."</p> }.into_any();
    }
    view! {
        <DataTable class="approvals" head=view! { {show_agent.then(|| view! { <th>"Agent"</th> })}
                    <th>"Tool"</th><th>"State"</th><th>"Asked"</th><th>"Decided"</th><th></th> }.into_any()>
                    {list.into_iter().map(|x| {
                        let tool = format!("{}__{}", x.vendor, x.name);
                        let agent_href = format!("/agents/{}", segment(&x.agent));
                        let n_decisions = x.decisions.len();
                        view! {
                            <tr data-state=x.state.clone() data-tool=tool.clone() data-agent=x.agent.clone()>
                                {show_agent.then(|| view! { <td><a href=agent_href>{x.agent.clone()}</a></td> })}
                                <td>
                                    <code>{tool.clone()}</code>
                                    {x.version.map(|v| view! { " " <span class="version" title="the version asked for or decided on">{format!("version {v}")}</span> })}
                                    {x.changed.clone().map(|c| {
                                        let approved = x.decisions.first().is_some_and(|d| d.state == "granted");
                                        let said = if approved { "Approved before; a new version changed" } else { "A new version since it asked changed" };
                                        view! { <div class="changed muted">{format!("{said}: {c}")}</div> }
                                    })}
                                    {x.request.clone().map(|r| view! { <div class="request"><code>{r}</code></div> })}
                                    {x.description.clone().filter(|d| !d.is_empty()).map(|d| view! { <div class="muted">{d}</div> })}
                                    {x.input.clone().map(|i| view! { <div class="asked-input">"Input of the call that asked: "<code class="input">{i}</code></div> })}
                                    {(!x.sends.is_empty()).then(|| view! { <details class="sends"><summary>{format!("Headers and parameters it sends besides the body ({})", x.sends.len())}</summary><ul>
                                        {x.sends.clone().into_iter().map(|l| view! { <li><code>{l}</code></li> }).collect_view()}
                                    </ul></details> }.into_any())}
                                    {x.reason.clone().filter(|_| x.state == "denied").map(|r| view! {
                                        <div class="reason">"Reason the agent is told: "<q>{r}</q></div>
                                    })}
                                    {(n_decisions > 0).then(|| view! {
                                        <details class="decisions"><summary>{if x.older_decisions { format!("Decisions (latest {n_decisions})") } else { format!("Decisions ({n_decisions})") }}</summary><ul>
                                            {x.decisions.clone().into_iter().map(|d| decision_line(d, now)).collect_view()}
                                        </ul></details>
                                    })}
                                </td>
                                <td class=format!("state {}", x.state)>{x.state.clone()}</td>
                                <td data-label="Asked"><When at=x.requested_at now/></td>
                                <td>{x.decided_at.map(|t| view! { <When at=t now/>" by "{crate::console::words::actor_in_words(x.decided_by.as_deref().unwrap_or_default())} })}</td>
                                <td class="actions">{actions(&x, &tool, decide_action, all)}</td>
                            </tr>
                        }
                    }).collect_view()}
                </DataTable>
    }
    .into_any()
}

/// A row's buttons: Approve and Deny (with a reason) when it waits, Revoke a grant,
/// Approve a denial; and on the Approvals page, approving the tool for every agent that
/// waits for the same version when more than one does.
fn actions(
    x: &ApprovalItem,
    tool: &str,
    decide_action: ServerAction<Decide>,
    all: Option<ServerAction<ApprovePending>>,
) -> impl IntoView {
    let agent = x.agent.clone();
    let version = x.version.map(|v| v.to_string());
    let hidden = |decision: &'static str| {
        let (agent, tool, version) = (agent.clone(), tool.to_string(), version.clone());
        view! {
            <input type="hidden" name="agent" value=agent/>
            <input type="hidden" name="tool" value=tool/>
            {version.map(|v| view! { <input type="hidden" name="version" value=v/> })}
            <input type="hidden" name="decision" value=decision/>
        }
    };
    let approve = (x.state != "granted").then(|| {
        let fields = hidden("grant");
        let aria = format!("Approve {tool} for {agent}");
        view! {
            <ActionForm action=decide_action attr:class="inline">
                {fields}
                <button type="submit" aria-label=aria>"Approve"</button>
            </ActionForm>
        }
    });
    let deny = (x.state == "pending").then(|| {
        let fields = hidden("deny");
        let aria = format!("Deny {tool} for {agent}");
        view! {
            <Confirm label="Deny".to_string()>
                <ActionForm action=decide_action attr:class="deny">
                    {fields}
                    <label>"Reason (optional; the agent is told)"
                        <input type="text" name="reason" maxlength="500" autocomplete="off"
                            placeholder="e.g. use the sandbox account for tests"/></label>
                    <button type="submit" class="danger solid" aria-label=aria>"Deny it"</button>
                </ActionForm>
            </Confirm>
        }
    });
    let revoke = (x.state == "granted").then(|| {
        let fields = hidden("revoke");
        let aria = format!("Revoke {tool} for {agent}");
        let words = format!("{agent} is refused when it calls {tool} until a person approves again.");
        view! {
            <Confirm label="Revoke".to_string()>
                <p>{words}</p>
                <ActionForm action=decide_action attr:class="deny">
                    {fields}
                    <input type="hidden" name="confirm" value="yes"/>
                    <label>"Reason (optional; the agent is told)"
                        <input type="text" name="reason" maxlength="500" autocomplete="off"/></label>
                    <button type="submit" class="danger solid" aria-label=aria>"Revoke it"</button>
                </ActionForm>
            </Confirm>
        }
    });
    let for_all = all
        .zip(x.version)
        .filter(|_| x.waiting > 1)
        .map(|(action, v)| {
            let n = x.waiting;
            let tool = tool.to_string();
            let aria = format!("Approve {tool} version {v} for all {n} waiting agents");
            view! {
                <ActionForm action attr:class="inline">
                    <input type="hidden" name="tool" value=tool/>
                    <input type="hidden" name="version" value=v.to_string()/>
                    <button type="submit" aria-label=aria>
                        {format!("Approve for all {n} waiting")}</button>
                </ActionForm>
            }
        });
    view! { {approve}{for_all}{deny}{revoke} }
}
