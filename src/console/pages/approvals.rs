//! The Approvals page (SPEC §4.4, §6).

use super::tables::approvals_table;
use crate::console::components::{error_of, loaded, FormError, Frame};
use crate::console::server_fns::{approvals, Decide};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

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
