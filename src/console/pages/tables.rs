//! Tables and forms more than one page shows: calls, approvals, connections.

use crate::console::components::{
    clear_on_save, error_of, Confirm, DataTable, FieldError, FormError, When,
};
use crate::console::server_fns::{
    AddConnection, CallItem, ConnectionItem, ReplaceConnectionSecret, RevokeConnection,
    SetDefaultConnection, TestConnection, VendorItem,
};
use crate::console::words::segment;
use leptos::prelude::*;

/// Which of agent and tool a calls table names (the page names the other).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallColumns {
    /// The tool (an agent's page).
    Tool,
    /// The agent (a tool's page).
    Agent,
    /// Both (the home page).
    Both,
}

/// A table of calls, newest first: when, the agent and/or the tool, its outcome with
/// the vendor's status and the error, duration, and the redacted input.
pub(crate) fn calls_table(
    calls: Vec<CallItem>,
    now: i64,
    columns: CallColumns,
    none: &'static str,
) -> impl IntoView {
    if calls.is_empty() {
        return view! { <p class="muted">{none}</p> }.into_any();
    }
    view! {
        <DataTable class="calls" head=view! { <th>"When"</th>
                    {(columns != CallColumns::Tool).then(|| view! { <th>"Agent"</th> })}
                    {(columns != CallColumns::Agent).then(|| view! { <th>"Tool"</th> })}
                    <th>"Outcome"</th><th>"Took"</th><th>"Input"</th> }.into_any()>
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
                                <td data-label="When"><a class="call-link" href=format!("/calls/{}", c.id) title="what was sent and answered"><When at=c.at now/></a></td>
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
                </DataTable>
    }
    .into_any()
}

/// The kinds a connection can be, with the words the form shows.
pub(crate) const CONNECTION_KINDS: [(&str, &str); 5] = [
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
pub(crate) fn ConnectionForm(
    action: ServerAction<AddConnection>,
    vendor: VendorItem,
    /// Labels of the vendor's live connections: when there is one, the form asks which
    /// connection calls use (issue 28.2).
    #[prop(optional)]
    live: Vec<String>,
) -> impl IntoView {
    let err = error_of(action);
    // what each kind of vendor sends (SPEC §10.2): a local MCP server's connections are
    // environment variables, a remote one's are headers
    let kinds: Vec<(&'static str, &'static str)> = match (vendor.kind.as_str(), vendor.local) {
        ("mcp", true) => vec![("env", "environment variable of its process")],
        ("mcp", false) => CONNECTION_KINDS
            .iter()
            .copied()
            .filter(|(k, _)| matches!(*k, "bearer" | "header" | "basic"))
            .collect(),
        _ => CONNECTION_KINDS.to_vec(),
    };
    let kind = match vendor.auth_kind.clone() {
        Some(k) if kinds.iter().any(|(v, _)| *v == k) => k,
        _ => kinds[0].0.to_string(),
    };
    let name_label = if vendor.local {
        "Variable name"
    } else {
        "Header or query parameter name"
    };
    let name_hint = if vendor.local {
        "e.g. GITHUB_TOKEN"
    } else {
        "only for header and query"
    };
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
        _ if vendor.local => Some(format!(
            "Each connection of {} is one environment variable of its server's process, set only there and never logged; the newer of two for one variable wins.",
            vendor.slug
        )),
        _ if vendor.kind == "mcp" => Some(format!(
            "Each connection of {} is a header of every request to its server; the newer of two for one header wins.",
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
                    {kinds.into_iter().map(|(value, words)| view! {
                        <option value=value selected=kind == value>{words}</option>
                    }).collect_view()}
                </select>
            </label>
            <FieldError err field="kind"/>
            <label>{name_label}
                <input name="name" placeholder=name_hint value=name/></label>
            <FieldError err field="name"/>
            <label>"Secret (write-only)"<input type="password" name="secret" autocomplete="off"/></label>
            <FieldError err field="secret"/>
            // asked when the page knew of a live connection, or when the server said one
            // was added meanwhile (by someone else: the page is older than it)
            {move || {
                let asked = err.get().and_then(|e| e.at("default")).is_some();
                (vendor.kind != "mcp" && (!live.is_empty() || asked)).then(|| {
                    let legend = if live.is_empty() {
                        format!("{} has a connection already: its calls use", vendor.slug)
                    } else {
                        format!("{} has a connection already ({}): its calls use", vendor.slug, live.join(", "))
                    };
                    view! {
                        <fieldset class="choice">
                            <legend>{legend}</legend>
                            <label class="check"><input type="radio" name="default" value="new" required/>" the new connection (it becomes the vendor's default; revoke the old one when the new one works)"</label>
                            <label class="check"><input type="radio" name="default" value="current"/>" the current one (the new one waits)"</label>
                        </fieldset>
                    }
                })
            }}
            <FieldError err field="default"/>
            <button type="submit">"Add connection"</button>
        </ActionForm>
    }
}

/// What a connections table can do to a row (issue 28.2).
#[derive(Clone, Copy)]
pub(crate) struct ConnectionActions {
    pub revoke: ServerAction<RevokeConnection>,
    pub set_default: ServerAction<SetDefaultConnection>,
    pub replace: ServerAction<ReplaceConnectionSecret>,
    pub test: ServerAction<TestConnection>,
}

impl ConnectionActions {
    pub(crate) fn new() -> Self {
        Self {
            revoke: ServerAction::new(),
            set_default: ServerAction::new(),
            replace: ServerAction::new(),
            test: ServerAction::new(),
        }
    }

    /// Changes whenever one of them finishes (the page loads its data again).
    pub(crate) fn version(&self) -> usize {
        self.revoke.version().get()
            + self.set_default.version().get()
            + self.replace.version().get()
            + self.test.version().get()
    }
}

pub(crate) fn connections_table(
    list: Vec<ConnectionItem>,
    now: i64,
    actions: ConnectionActions,
) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="muted">"No connections: tools run without credentials."</p> }
            .into_any();
    }
    let ConnectionActions {
        revoke,
        set_default,
        replace,
        test,
    } = actions;
    let replace_err = error_of(replace);
    view! {
        <FieldError err=replace_err field="secret"/>
        // a refused Test, Make default or Revoke (the connection revoked meanwhile, its
        // vendor disabled) says why here
        <FormError err=error_of(test)/>
        <FormError err=error_of(set_default)/>
        <FormError err=error_of(revoke)/>
        <DataTable class="connections" head=view! { <th>"Vendor"</th><th>"Label"</th><th>"Kind"</th><th>"Added"</th><th>"Last used"</th><th>"State"</th><th></th> }.into_any()>{list.into_iter().map(|c| { let (l1, l2) = (c.label.clone(), c.label.clone()); let live = c.revoked_at.is_none(); view! {
                <tr data-connection=l1>
                    <td data-label="Vendor"><code>{c.vendor.clone()}</code></td>
                    <td data-label="Label">{c.label.clone()}{c.vendor_default.then(|| view! { " "<span class="badge">"default"</span> })}</td>
                    <td data-label="Kind">{c.kind.clone()}{c.name.clone().map(|n| format!(" ({n})"))}</td>
                    <td data-label="Added"><When at=c.created_at now/>{c.secret_replaced_at.map(|t| view! { <br/><span class="muted">"secret replaced "<When at=t now/></span> })}</td>
                    <td data-label="Last used">{match c.last_used_at { Some(t) => view! { <When at=t now/> }.into_any(), None => "never".into_any() }}</td>
                    <td data-label="State">{match (c.revoked_at, c.suspended.clone()) {
                        (Some(t), _) => view! { "revoked "<When at=t now/> }.into_any(),
                        (None, Some(why)) => view! { <span class="warning-text" title=why>"suspended: the base URL moved"</span> }.into_any(),
                        (None, None) => "active".into_any(),
                    }}
                    {c.last_test.clone().map(|(at, ok, message)| view! {
                        <p class=if ok { "ok test" } else { "error test" } role="status">{if ok { "Test passed " } else { "Test failed " }}<When at now/>": "{message}</p>
                    })}</td>
                    <td>{live.then(|| { let (id, vendor, label) = (c.id.to_string(), c.vendor.clone(), c.label.clone()); let kind = c.kind.clone(); let (id2, id3) = (id.clone(), id.clone()); let (label2, label3) = (label.clone(), label.clone()); view! {
                        <div class="row-actions">
                        <ActionForm action=test attr:class="inline">
                            <input type="hidden" name="id" value=id.clone()/>
                            <button type="submit" aria-label=format!("Test {label}")>"Test"</button>
                        </ActionForm>
                        {(!c.vendor_default && c.can_be_default).then(|| view! {
                            <ActionForm action=set_default attr:class="inline">
                                <input type="hidden" name="vendor" value=vendor.clone()/>
                                <input type="hidden" name="label" value=label2.clone()/>
                                <button type="submit" aria-label=format!("Make {label2} the default")>"Make default"</button>
                            </ActionForm>
                        })}
                        {(kind != "none").then(|| view! {
                            <Confirm label="Replace secret".to_string()>
                                <ActionForm action=replace node_ref=clear_on_save(replace) attr:class="inline">
                                    <input type="hidden" name="id" value=id2.clone()/>
                                    <input type="hidden" name="confirm" value="yes"/>
                                    <label>"New secret (write-only)"<input type="password" name="secret" autocomplete="off" required/></label>
                                    <button type="submit" aria-label=format!("Replace the secret of {label3}")>"Replace it"</button>
                                </ActionForm>
                            </Confirm>
                        })}
                        <Confirm label="Revoke".to_string()>
                            <p>{format!("{l2} is never sent again, and each tool whose calls use it is demoted in every working set. If it is the vendor's default, the vendor's other calls use its only other active connection, or wait until a person makes one the default; a tool a person set to {l2} fails until someone chooses another connection for it. Its secret cannot be recovered.")}</p>
                            <ActionForm action=revoke attr:class="inline">
                                <input type="hidden" name="id" value=id3/>
                                <input type="hidden" name="confirm" value="yes"/>
                                <button type="submit" class="danger solid" aria-label=format!("Revoke {l2}")>"Revoke it"</button>
                            </ActionForm>
                        </Confirm>
                        </div>
                    }})}</td>
                </tr>
            }}).collect_view()}</DataTable>
        <p class="muted">"The default connection is the one the vendor's tools use unless a tool has its own. To rotate a key: replace its secret, or add a new connection as the default and revoke the old one once it works. Revoking demotes, in every working set, each tool whose calls use the connection."</p>
    }
    .into_any()
}
