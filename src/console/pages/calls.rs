//! The Calls page and a call's detail (issue 28.9): every agent's calls with the CLI's
//! filters, and what one call sent and what the vendor answered, redacted.

use super::tables::{calls_table, CallColumns};
use crate::console::components::{chosen_filters, filter_value, loaded, Frame, When};
use crate::console::server_fns::{call_detail, calls_log, CallData, CallsData};
use crate::console::words::segment;
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// The query keys the Calls page's filters use, in the order its links carry them.
const FILTERS: [&str; 3] = ["agent", "tool", "outcome"];

/// `/calls`: the calls log of every agent, newest first, narrowed by agent, tool
/// (`vendor__name`) and outcome as `graft calls` is (a GET form, so it works without
/// JavaScript); "Older" pages back; each call's time links to its detail.
#[component]
pub fn CallsPage() -> impl IntoView {
    let query = use_query_map();
    let get = move |k: &str| query.read().get(k).unwrap_or_default();
    // new calls appear while the page is open (issue 28.3)
    let live = crate::console::live::changes(&["calls"]);
    let data = Resource::new(
        move || {
            (
                get("agent"),
                get("tool"),
                get("outcome"),
                get("before"),
                live.get(),
            )
        },
        |(a, t, o, b, _)| calls_log(Some(a), Some(t), Some(o), Some(b)),
    );
    view! {
        <Frame title="Calls">
            <h1>"Calls"</h1>
            <p class="muted">"Every call of every agent, newest first: first-class and through run_tool, dry runs and refused ones, with the outcome, the vendor's status and the input (secrets redacted). A call's time opens what it sent and what the vendor answered."</p>
            {move || {
                let filters = chosen_filters(get, &FILTERS);
                loaded(data, "Loading…", move |d| calls_view(d, filters.clone()))
            }}
        </Frame>
    }
}

/// The filters, the table and the paging link of one page of calls.
fn calls_view(d: CallsData, filters: Vec<(String, String)>) -> impl IntoView {
    let chosen = |k: &str| filter_value(&filters, k);
    let (agent, tool, outcome) = (chosen("agent"), chosen("tool"), chosen("outcome"));
    let older = d.older.map(|id| {
        let mut q: Vec<String> = filters
            .iter()
            .map(|(k, v)| format!("{k}={}", segment(v)))
            .collect();
        q.push(format!("before={id}"));
        format!("/calls?{}", q.join("&"))
    });
    let none = if filters.is_empty() {
        "No calls yet."
    } else {
        "No calls match."
    };
    view! {
        <form method="get" class="search filters calls-filter" role="search">
            <label>"Agent"
                <select name="agent">
                    <option value="" selected=agent.is_empty()>"All agents"</option>
                    {d.agents.iter().map(|a| view! { <option value=a.clone() selected=*a == agent>{a.clone()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Tool (vendor__name)"
                <input type="search" name="tool" value=tool placeholder="stripe__post_customers" maxlength="200"/>
            </label>
            <label>"Outcome"
                <select name="outcome">
                    <option value="" selected=outcome.is_empty()>"Any outcome"</option>
                    {[("ok", "ok"), ("failed", "failed"), ("approval", "waits for approval"), ("dry-run", "dry run")].into_iter().map(|(v, words)| view! {
                        <option value=v selected=v == outcome>{words}</option>
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">"Show"</button>
            {(!filters.is_empty()).then(|| view! { <a href="/calls">"Show all"</a> })}
        </form>
        {calls_table(d.calls, d.now, CallColumns::Both, none)}
        {older.map(|href| view! { <p><a href=href rel="next">"Older"</a></p> })}
    }
}

/// `/calls/:id`: one call: who called what, when, the outcome, the input, the request
/// as sent and the vendor's answer (redacted), or why there is none.
#[component]
pub fn CallPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params
            .read()
            .get("id")
            .and_then(|i| i.parse::<i64>().ok())
            // not a number: no call has it (ids start at 1)
            .unwrap_or(-1)
    };
    let data = Resource::new(id, call_detail);
    view! {
        <Frame title="Call">
            <p><a href="/calls">"← Calls"</a></p>
            {loaded(data, "Loading…", call_view)}
        </Frame>
    }
}

/// The detail of one call.
fn call_view(d: CallData) -> impl IntoView {
    let c = d.call;
    let status = c
        .http_status
        .map(|s| format!(" · HTTP {s}"))
        .unwrap_or_default();
    let none = if d.dry_run {
        "A dry run of a write: nothing was sent (the agent received the request it would have sent)."
    } else if c.http_status.is_none() {
        "Nothing reached the vendor: Graft refused or stopped the call (the outcome says why)."
    } else {
        "Not kept any more: the log keeps what was sent and answered for the newest calls only (GRAFT_CALL_DETAILS_KEPT)."
    };
    let shown = d.request.is_some() || d.response.is_some();
    view! {
        <h1>{format!("Call {}", c.id)}</h1>
        <dl class="call-facts">
            <dt>"When"</dt><dd><When at=c.at now=d.now/></dd>
            <dt>"Agent"</dt><dd><a href=format!("/agents/{}", segment(&c.agent))>{c.agent.clone()}</a></dd>
            <dt>"Tool"</dt><dd><a href=format!("/tools/{}/{}", segment(&c.vendor), segment(&c.name))><code>{c.tool.clone()}</code></a>{format!(" version {}", c.version)}</dd>
            <dt>"Outcome"</dt><dd class=if c.ok { "outcome ok" } else { "outcome failed" }><strong>{c.outcome.clone()}</strong>{status}</dd>
            <dt>"Took"</dt><dd>{format!("{} ms", c.duration_ms)}</dd>
        </dl>
        {d.message.map(|m| view! { <h2>"What the agent was told"</h2><p class="message">{m}</p> })}
        <h2>"Input"</h2>
        {match c.input {
            Some(i) => view! { <pre class="input">{i}</pre> }.into_any(),
            None => view! { <p class="muted">"Not logged."</p> }.into_any(),
        }}
        {if shown {
            view! {
                <h2>"Request sent"</h2>
                {match d.request {
                    Some(r) => view! { <pre class="request" aria-label="Request sent">{r}</pre> }.into_any(),
                    None => view! { <p class="muted">"Not kept."</p> }.into_any(),
                }}
                <h2>"Answer"</h2>
                {match d.response {
                    Some(r) => view! { <pre class="response" aria-label="Answer">{r}</pre> }.into_any(),
                    None => view! { <p class="muted">"The vendor did not answer (timed out, unreachable, or cancelled)."</p> }.into_any(),
                }}
                <p class="muted">"Secrets are redacted: the connection's credential, fields whose names look secret, and secret values of the input. A JSON answer keeps at most 4 KB (strings cut at 200 characters), a text answer 8 KB."</p>
            }.into_any()
        } else {
            view! { <h2>"Request and answer"</h2><p class="muted">{none}</p> }.into_any()
        }}
    }
}
