//! One vendor's page (SPEC §6): its state, origin, imports and connections.

use super::tables::{connections_table, ConnectionActions, ConnectionForm};
use crate::console::components::{
    error_of, loaded, saved, saves, Confirm, FieldError, FormError, Frame, When,
};
use crate::console::server_fns::{
    vendor, AddConnection, ConfirmConnections, EditVendor, ForgetMcpOauth, RefreshMcpVendor,
    RemoveVendor, RestoreVendor, SetVendorInternal, SetVendorState, StartMcpOauth,
};
use crate::console::words::{count, segment};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

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
    let conn_actions = ConnectionActions::new();
    let remove = ServerAction::<RemoveVendor>::new();
    let confirm_conns = ServerAction::<ConfirmConnections>::new();
    let set_internal = ServerAction::<SetVendorInternal>::new();
    let refresh = ServerAction::<RefreshMcpVendor>::new();
    let start_oauth = ServerAction::<StartMcpOauth>::new();
    let forget_oauth = ServerAction::<ForgetMcpOauth>::new();
    let oauth_err = error_of(start_oauth);
    let forget_err = error_of(forget_oauth);
    let query = leptos_router::hooks::use_query_map();
    let conn_saves = saves(add_conn);
    let data = Resource::new(
        move || {
            (
                slug(),
                edit.version().get()
                    + set_state.version().get()
                    + conn_saves.get()
                    + conn_actions.version()
                    + confirm_conns.version().get()
                    + set_internal.version().get()
                    + refresh.version().get()
                    + forget_oauth.version().get(),
            )
        },
        |(s, _)| vendor(s),
    );
    let refresh_err = error_of(refresh);
    let refreshed = move || refresh.value().get().and_then(Result::ok);
    let confirm_err = error_of(confirm_conns);
    let internal_err = error_of(set_internal);
    let edit_err = error_of(edit);
    let state_err = error_of(set_state);
    let conn_err = error_of(add_conn);
    let remove_err = error_of(remove);
    let restore = ServerAction::<RestoreVendor>::new();
    let restore_err = error_of(restore);
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
                let is_mcp = v.kind == "mcp";
                let live_labels: Vec<String> = d.connections.iter().filter(|c| c.revoked_at.is_none()).map(|c| c.label.clone()).collect();
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
                            {format!(": its {} stay in the record but are out of search and refuse calls; its connections are revoked. {} (on ", count(d.tools, "tool"),
                                if v.kind != "mcp" { "Restoring it (below) or importing its OpenAPI document again" } else { "Importing its OpenAPI document again" })}
                            <a href="/vendors#import">"Vendors"</a>") brings it back."</p>
                        {(v.kind != "mcp").then(|| {
                            let slug = v.slug.clone();
                            view! {
                                <FormError err=restore_err/>
                                <Confirm label="Restore the vendor".into()>
                                    <p>"Brings it back as it was when removed: its base URL, its stored document and its tools, in search and callable again (tools its document retired stay retired). Its old connections stay revoked: add a new one after. Agents promote its tools again."</p>
                                    <ActionForm action=restore attr:class="inline">
                                        <input type="hidden" name="slug" value=slug/>
                                        <input type="hidden" name="confirm" value="yes"/>
                                        <button type="submit">"Restore"</button>
                                    </ActionForm>
                                </Confirm>
                            }
                        })}
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
                    {d.server.clone().map(|info| {
                        let slug = v.slug.clone();
                        view! {
                        <section class="card" id="server">
                            <h2>"MCP server"</h2>
                            <p><code class="server">{v.server.clone().unwrap_or_default()}</code></p>
                            <p class=if info.running { "ok" } else { "muted" } data-state=if info.running { "running" } else { "not-running" }>{info.state.clone()}</p>
                            <p>{format!("{} from its tools/list. ", count(d.tools, "tool"))}
                                {match info.refreshed_at {
                                    Some(at) => view! { "Last read "<When at now/>"; Graft reads it again when the server says its tools changed, and every 10 minutes." }.into_any(),
                                    None => view! { "Its tools/list has not been read yet." }.into_any(),
                                }}
                            </p>
                            {info.error.clone().map(|e| view! { <p class="warning" role="alert" id="server-error">{format!("The last read failed: {e}")}</p> })}
                            <FormError err=refresh_err/>
                            {move || refreshed().map(|r| view! { <p class="ok" role="status">{format!("Read again: {r}")}</p> })}
                            <ActionForm action=refresh attr:class="inline">
                                <input type="hidden" name="slug" value=slug/>
                                <button type="submit">"Refresh its tools"</button>
                            </ActionForm>
                            <p class="muted">"Its tools' descriptions are the server's own words: a new description is a new version, and approvals of it are asked again."</p>
                            {(!v.local).then(|| {
                                let (slug1, slug2) = (v.slug.clone(), v.slug.clone());
                                let connected = query.read_untracked().get("oauth").as_deref() == Some("connected");
                                view! {
                                <h3 id="oauth">"Authorization"</h3>
                                {connected.then(|| view! { <p class="ok" role="status">"Authorized: Graft holds its OAuth tokens (sealed) and renews them itself."</p> })}
                                {if v.oauth {
                                    view! {
                                        <p>"Graft is authorized at this server with OAuth; it renews the tokens as they expire."</p>
                                        <FormError err=forget_err/>
                                        <ActionForm action=forget_oauth attr:class="inline">
                                            <input type="hidden" name="slug" value=slug1/>
                                            <label class="check"><input type="checkbox" name="confirm" value="yes" required/>" Yes, drop its tokens"</label>
                                            <button type="submit" class="danger">"Drop the authorization"</button>
                                        </ActionForm>
                                    }.into_any()
                                } else {
                                    view! {
                                        <p>"A server that asks for OAuth (it answers 401 with a challenge) is authorized here: you sign in at its authorization server and come back; Graft keeps its tokens sealed. Servers that take a token in a header need a connection instead."</p>
                                        <FormError err=oauth_err/>
                                        <ActionForm action=start_oauth attr:class="inline">
                                            <input type="hidden" name="slug" value=slug2/>
                                            <button type="submit">"Authorize Graft at this server"</button>
                                        </ActionForm>
                                    }.into_any()
                                }}
                            }})}
                        </section>
                    }})}
                    <section class="card" id="settings">
                        <h2>{if is_mcp { "Name" } else { "Name and base URL" }}</h2>
                        <FormError err=edit_err/>
                        {move || saved.get().then(|| view! { <p class="ok" role="status">"Saved."</p> })}
                        <ActionForm action=edit attr:class="grid-form" attr:novalidate=true>
                            <input type="hidden" name="slug" value=s1/>
                            <label>"Name"<input name="name" value=v.name.clone()/></label>
                            <FieldError err=edit_err field="name"/>
                            {(!is_mcp).then(|| view! {
                                <label>"Base URL (every call of its tools starts with it)"<input name="base_url" value=v.base_url.clone()/></label>
                                <FieldError err=edit_err field="base_url"/>
                                <label class="check"><input type="checkbox" name="confirm_move" value="yes"/>
                                    " If the new base URL is on another host, port or scheme: yes, move it (its connections then wait for my confirmation there, and its approvals are asked again)"</label>
                                <FieldError err=edit_err field="confirm_move"/>
                            })}
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
                        {connections_table(d.connections.clone(), now, conn_actions)}
                        <h3>"Add a connection"</h3>
                        <FormError err=conn_err/>
                        {move || conn_saved.get().then(|| view! { <p class="ok" role="status">"Connection added; its secret is sealed."</p> })}
                        <ConnectionForm action=add_conn vendor=v_conn.clone() live=live_labels.clone()/>
                    </section>
                    <section class="card" id="network" hidden=v.local>
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
                        <p>{if is_mcp {
                            "Removing takes the vendor off the lists and stops its server: its tools leave every working set and refuse calls, its connections are revoked and their secrets dropped. Its tools, calls and history stay in the record, and adding an MCP server with its slug brings it back."
                        } else {
                            "Removing takes the vendor off the lists: its tools leave every working set and refuse calls, its connections are revoked and their secrets dropped. Its tools, calls, history and document stay in the record: Restore on this page brings it back as it was, and importing its document again brings it back too."
                        }}</p>
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
