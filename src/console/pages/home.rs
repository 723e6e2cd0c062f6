//! The home page (SPEC §6): agents, approvals waiting, the last sweep.

use super::tables::{calls_table, CallColumns};
use crate::console::components::{loaded, Frame, When};
use crate::console::server_fns::{home, HomeData};
use crate::console::words::{count, segment};
use leptos::prelude::*;

/// `/`: the first steps while something is missing (each links to its form and is
/// checked off when done), then an overview of the agents and what waits for a person.
#[component]
pub fn HomePage() -> impl IntoView {
    // follows every change while open (issue 28.3)
    let live = crate::console::live::changes(&crate::console::live::TOPICS);
    let data = Resource::new(move || live.get(), |_| home());
    view! {
        <Frame title="Home">
            <h1>"Graft"</h1>
            {loaded(data, "Loading…", home_view)}
        </Frame>
    }
}

pub(crate) fn home_view(d: HomeData) -> impl IntoView {
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
