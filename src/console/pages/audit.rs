//! The Audit page (issue 28.8): who did what, newest first, with filters, paging and a
//! CSV download of what the filters show.

use crate::console::components::{chosen_filters, filter_value, loaded, DataTable, Frame, When};
use crate::console::server_fns::{audit_log, AuditData};
use crate::console::words::segment;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The query keys the Audit page's filters use, in the order its links carry them.
const FILTERS: [&str; 4] = ["person", "action", "target", "days"];

/// `/audit`: each action a person took (sign-ins, imports, removals, revocations,
/// rotations, approvals, denials, setting changes, publications), filtered by person,
/// action, target and the last N days (a GET form, so it works without JavaScript);
/// "Older" pages back; "Download CSV" saves what the filters show (`/audit.csv`).
#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let get = move |k: &str| query.read().get(k).unwrap_or_default();
    let data = Resource::new(
        move || {
            (
                get("person"),
                get("action"),
                get("target"),
                get("days"),
                get("before"),
            )
        },
        |(p, a, t, d, b)| audit_log(Some(p), Some(a), Some(t), Some(d), Some(b)),
    );
    view! {
        <Frame title="Audit">
            <h1>"Audit"</h1>
            <p class="muted">"Every action a person took, in the console or on the command line (there as the OS user, or the name given with --as): sign-ins, imports, removals, revocations, rotations, approvals, denials, setting changes and publications. Agents' own calls are in each agent's History and in Activity. Secrets are never recorded."</p>
            {move || {
                let filters = chosen_filters(get, &FILTERS);
                loaded(data, "Loading…", move |d| audit_view(d, filters.clone()))
            }}
        </Frame>
    }
}

/// The filters, the table and the paging links of one page of events.
fn audit_view(d: AuditData, filters: Vec<(String, String)>) -> impl IntoView {
    let chosen = |k: &str| filter_value(&filters, k);
    let (person, action, target, days) = (
        chosen("person"),
        chosen("action"),
        chosen("target"),
        chosen("days"),
    );
    // every value percent-encoded (`segment` keeps only [A-Za-z0-9._-])
    let query = |extra: Option<(&str, String)>| {
        filters
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .chain(extra)
            .map(|(k, v)| format!("{k}={}", segment(&v)))
            .collect::<Vec<_>>()
            .join("&")
    };
    let csv = format!("/audit.csv?{}", query(None));
    let older = d
        .older
        .map(|id| format!("/audit?{}", query(Some(("before", id.to_string())))));
    let now = d.now;
    let empty = d.events.is_empty();
    view! {
        <form method="get" class="search filters audit-filter" role="search">
            <label>"Person"
                <select name="person">
                    <option value="" selected=person.is_empty()>"Everyone"</option>
                    {d.people.iter().map(|p| view! { <option value=p.clone() selected=*p == person>{p.clone()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Action"
                <select name="action">
                    <option value="" selected=action.is_empty()>"Any action"</option>
                    {d.actions.iter().map(|(name, words)| view! { <option value=name.clone() selected=*name == action>{words.clone()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Target contains"
                <input type="search" name="target" value=target maxlength="200"/>
            </label>
            <label>"In the last"
                <select name="days">
                    <option value="" selected=days.is_empty()>"any time"</option>
                    {[("1", "day"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days")].into_iter().map(|(v, words)| view! {
                        <option value=v selected=v == days>{words}</option>
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">"Show"</button>
            {(!filters.is_empty()).then(|| view! { <a href="/audit">"Show all"</a> })}
            <a class="download" href=csv download="graft-audit.csv">"Download CSV"</a>
        </form>
        {if empty {
            view! { <p class="muted" role="status">"No action matches."</p> }.into_any()
        } else {
            view! {
                <DataTable class="audit" head=view! { <th>"When"</th><th>"Person"</th><th>"Did"</th><th>"To"</th><th>"Detail"</th> }.into_any()>
                    {d.events.into_iter().map(|e| { let action = e.action.clone(); view! {
                        <tr data-action=action>
                            <td><When at=e.at now/></td>
                            <td>{e.person}</td>
                            <td title=e.action>{e.what}</td>
                            <td><code>{e.target}</code></td>
                            <td class="muted">{e.detail.unwrap_or_default()}</td>
                        </tr>
                    }}).collect_view()}
                </DataTable>
            }.into_any()
        }}
        {older.map(|href| view! { <p><a href=href rel="next">"Older"</a></p> })}
    }
}
