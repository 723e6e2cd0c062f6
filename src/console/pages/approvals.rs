//! The Approvals page (SPEC §4.4, §6).

use super::*;

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

pub(crate) fn approvals_table(
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
