//! The Vendors page (SPEC §6): uploads, import summaries, connections.

use super::tables::{connections_table, ConnectionActions};
use crate::console::components::{
    clear_on_save, error_of, loaded, saved, FormError, Frame, TextField, When,
};
#[cfg(feature = "hydrate")]
use crate::console::server_fns::MAX_UPLOAD_BYTES;
use crate::console::server_fns::{vendors, AddMcpVendor, AddVendor, ApplyImport, DiscardImport};
use crate::console::words::segment;
use crate::console::words::ImportSummary;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// `/vendors`: vendors, OpenAPI upload, connections.
#[component]
pub fn VendorsPage() -> impl IntoView {
    let query = use_query_map();
    let add = ServerAction::<AddVendor>::new();
    let add_mcp = ServerAction::<AddMcpVendor>::new();
    let mcp_err = error_of(add_mcp);
    let conn_actions = ConnectionActions::new();
    let revoke = conn_actions.revoke;
    let data = Resource::new(
        move || {
            (
                query.read().get("import"),
                query.read().get("preview"),
                add.version().get() + conn_actions.version(),
            )
        },
        |(import, preview, _)| vendors(import, preview),
    );
    let apply = ServerAction::<ApplyImport>::new();
    let add_err = error_of(add);
    let vendor_saved = saved(add, "vendor");
    let revoke_err = error_of(revoke);
    let (importing, set_importing) = signal(false);
    // bytes sent / total of the upload, then operations planned / total of the import
    // (hydrated only)
    let (sent, set_sent) = signal::<Option<(f64, f64)>>(None);
    let (planned, set_planned) = signal::<Option<(u64, u64)>>(None);
    let (refused, set_refused) = signal::<Option<String>>(None);
    view! {
        <Frame title="Vendors">
            <h1>"Vendors"</h1>
            {loaded(data, "Loading…", move |d| {
                let now = d.now;
                // what the last action said, while it is still true
                let removed_now = query.read_untracked().get("removed").filter(|s| d.removed.contains(s));
                let back_now = query.read_untracked().get("back").filter(|s| d.vendors.iter().any(|v| &v.slug == s));

                view! {
                    {d.failed.clone().map(|why| view! {
                        <p class="error" role="alert" id="oauth-error">{format!("The authorization did not finish: {why}")}</p>
                    })}
                    {removed_now.map(|slug| view! {
                        <p class="ok" role="status">{format!("Vendor {slug} was removed: its tools left every working set and refuse calls, its connections are revoked. They stay in the record: Restore on its page brings it back as it was.")}</p>
                    })}
                    {back_now.map(|slug| view! {
                        <p class="ok" role="status">{format!("Vendor {slug} was removed before and is back: its tools are in search and callable again (retired ones stay retired). Its old connections stay revoked: add a new one on its page, and import its document again if it changed.")}</p>
                    })}
                    {d.import.clone().map(import_summary)}
                    {d.preview.clone().map(|(id, summary)| preview_card(id, summary, apply))}
                    {(d.preview.is_none() && query.read_untracked().get("preview").is_some()).then(|| view! {
                        <p class="warning" role="alert" id="preview-gone">"That preview is gone: applied or discarded already, older than 10 minutes, or replaced by newer previews (two are kept). Upload the document again to see what it would do."</p>
                    })}
                    {if d.vendors.is_empty() {
                        view! { <p class="muted">"No vendors yet."</p> }.into_any()
                    } else {
                        view! { <div class="table-wrap"><table>
                            <thead><tr><th>"Slug"</th><th>"Name"</th><th>"Base URL or server"</th><th>"Tools from"</th><th>"State"</th></tr></thead>
                            <tbody>{d.vendors.iter().cloned().map(|v| view! {
                                <tr data-vendor=v.slug.clone()>
                                    <td><a href=format!("/vendors/{}", segment(&v.slug)) title="settings, state and imports"><code>{v.slug.clone()}</code></a></td>
                                    <td class="name">{v.name}</td>
                                    <td><code>{v.server.clone().unwrap_or(v.base_url)}</code></td>
                                    <td>{if v.kind == "mcp" { "its MCP server's tools/list" } else if v.has_document { "an OpenAPI document (stored)" } else { "an OpenAPI document" }}</td>
                                    <td>{if v.disabled { "disabled" } else { "enabled" }}</td>
                                </tr>
                            }).collect_view()}</tbody>
                        </table></div> }.into_any()
                    }}
                    {(!d.removed.is_empty()).then(|| view! {
                        <p class="muted removed">"Removed: "{d.removed.iter().enumerate().map(|(i, slug)| view! {
                            {(i > 0).then_some(", ")}<a href=format!("/vendors/{}", segment(slug))><code>{slug.clone()}</code></a>
                        }).collect_view()}". Its page restores one from its stored document; importing a document under one of these slugs brings it back too."</p>
                    })}
                    {(!d.imports.is_empty()).then(|| view! {
                        <section class="card" id="imports">
                            <h2>"Import history"</h2>
                            <div class="table-wrap"><table class="imports">
                                <thead><tr><th>"When"</th><th>"Vendor"</th><th>"By"</th><th>"What it did"</th></tr></thead>
                                <tbody>{d.imports.clone().into_iter().map(|i| view! {
                                    <tr data-vendor=i.vendor.clone()>
                                        <td data-label="When"><When at=i.at now/></td>
                                        <td data-label="Vendor"><a href=format!("/vendors/{}", segment(&i.vendor))><code>{i.vendor.clone()}</code></a></td>
                                        <td data-label="By">{i.by}</td>
                                        <td data-label="What it did">{i.headline}
                                            {(!i.details.is_empty()).then(|| view! { <details><summary>"Which tools"</summary><ul>
                                                {i.details.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
                                            </ul></details> }.into_any())}
                                        </td>
                                    </tr>
                                }).collect_view()}</tbody>
                            </table></div>
                        </section>
                    }.into_any())}
                    <section class="card" id="connections">
                        <h2>"Connections"</h2>
                        <FormError err=revoke_err/>
                        {connections_table(d.connections.clone(), now, conn_actions)}
                        <h3>"Add a connection"</h3>
                        {if d.vendors.is_empty() {
                            view! { <p class="muted">"Import a vendor's document (below) first; its connection comes next."</p> }.into_any()
                        } else {
                            view! {
                                <p>"A connection is added on its vendor's page, where the form starts with what the vendor's document asks for:"</p>
                                <ul class="add-connection">{d.vendors.iter().map(|v| view! {
                                    <li><a href=format!("/vendors/{}#connections", segment(&v.slug))>{format!("Add a connection to {}", v.slug)}</a></li>
                                }).collect_view()}</ul>
                            }.into_any()
                        }}
                        <p class="muted">"The secret is encrypted at rest and never shown again, here or to agents."</p>
                    </section>
                }
            })}
            <section class="card">
                <h2>"New vendor"</h2>
                <FormError err=add_err/>
                {move || vendor_saved.get().then(|| view! { <p class="ok" role="status">"Vendor created."</p> })}
                <ActionForm action=add node_ref=clear_on_save(add) attr:class="grid-form" attr:novalidate=true>
                    <TextField err=add_err label="Slug" name="slug" placeholder="stripe"/>
                    <TextField err=add_err label="Name" name="name" placeholder="Stripe"/>
                    <TextField err=add_err label="Base URL" name="base_url" placeholder="https://api.stripe.com"/>
                    <button type="submit">"Create vendor"</button>
                </ActionForm>
            </section>
            <section class="card" id="mcp">
                <h2>"Add an MCP server"</h2>
                <p class="muted">"The tools of an MCP server join the toolbox beside OpenAPI operations: a remote server over Streamable HTTP (its URL), or a local one Graft starts over stdio (a command, run without a shell, with only PATH, HOME and the locale of Graft's environment; its own variables are connections of kind env). Graft reads its tools/list now, when the server says it changed, and every 10 minutes; agents promote and call its tools like any other, writes ask a person first."</p>
                <FormError err=mcp_err/>
                <ActionForm action=add_mcp attr:class="grid-form" attr:novalidate=true>
                    <TextField err=mcp_err label="Slug" name="slug" placeholder="github"/>
                    <TextField err=mcp_err label="Name" name="name" placeholder="GitHub"/>
                    <TextField err=mcp_err label="Remote server: its URL" name="url" placeholder="https://api.githubcopilot.com/mcp/"/>
                    <TextField err=mcp_err label="Or a local server: the command that starts it" name="command" placeholder="npx -y @modelcontextprotocol/server-filesystem /srv/files"/>
                    <TextField err=mcp_err label="Its working directory (absolute; optional)" name="cwd" placeholder="/srv/files"/>
                    <button type="submit">"Add the MCP server"</button>
                </ActionForm>
            </section>
            <section class="card" id="import">
                <h2>"Import an OpenAPI document"</h2>
                <p class="muted">"OpenAPI 3.0, 3.1 or Swagger 2.0, JSON or YAML, up to 32 MiB. Every operation becomes a tool of the vendor (a new vendor is created with the document's server URL, or the base URL given). A newer document of a vendor updates its tools: changed operations get a new version, new ones are added, and tools whose operation is gone are retired (demoted, kept for the record). All or nothing: a failure changes nothing."</p>
                <form method="post" action="/vendors/import" enctype="multipart/form-data" class="grid-form"
                      on:submit=move |ev| {
                          let refused = upload_with_progress(ev, set_sent, set_planned);
                          set_importing.set(refused.is_none());
                          set_refused.set(refused);
                      }>
                    <label>"Vendor slug"<input name="vendor" required placeholder="stripe"/></label>
                    <label>"Base URL (optional)"<input name="base_url" placeholder="from the document"/></label>
                    <label>"Document"<input type="file" name="document" accept=".json,.yaml,.yml,application/json,application/yaml" required/></label>
                    <div class="buttons">
                        <button type="submit">"Import"</button>
                        " "
                        <button type="submit" name="preview" value="1" class="secondary" title="see what it would add, update and retire before anything changes">"Preview"</button>
                    </div>
                </form>
                {move || refused.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
                {move || importing.get().then(|| view! {
                    <p role="status" class="upload">
                        {move || match (sent.get(), planned.get()) {
                            (_, Some((done, total))) => format!("Importing… {done} of {total} operations "),
                            (Some((done, total)), None) if done < total => format!("Uploading… {}% ", (done * 100.0 / total) as u32),
                            (Some(_), None) => "Uploaded; reading the document… ".to_string(),
                            (None, None) => "Uploading and importing… ".to_string(),
                        }}
                        <progress max="100" value=move || match (sent.get(), planned.get()) {
                            (_, Some((d, t))) => Some((d * 100 / t.max(1)).to_string()),
                            (Some((d, t)), None) => Some((d * 100.0 / t.max(1.0)).round().to_string()),
                            (None, None) => None,
                        }></progress>
                    </p>
                })}
            </section>
        </Frame>
    }
}

/// What the import's event stream said so far (`text`, as received): the last
/// `progress` event's `(done, total)`, and the `done` event's page (issue 28.11; the
/// server's `import_events`).
pub fn import_events_said(text: &str) -> (Option<(u64, u64)>, Option<String>) {
    let (mut progress, mut target) = (None, None);
    // an event ends at a blank line; a last one still arriving is left for later
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    for block in complete.split("\n\n") {
        let (mut event, mut data) = ("message", String::new());
        for line in block.lines() {
            if let Some(e) = line.strip_prefix("event:") {
                event = e.trim();
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
        match event {
            "progress" => {
                let v: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                if let (Some(d), Some(t)) = (v["done"].as_u64(), v["total"].as_u64()) {
                    progress = Some((d, t));
                }
            }
            "done" => target = Some(data),
            _ => {}
        }
    }
    (progress, target)
}

/// When hydrated, sends the upload form with `XMLHttpRequest` so the page can show the
/// bytes sent and then the import's progress (its answer is a stream of events), then
/// goes to the page the last event names (the summary or the preview). Without
/// JavaScript, or when anything here is unavailable, the form posts as usual.
#[cfg(feature = "hydrate")]
pub(crate) fn upload_with_progress(
    ev: leptos::ev::SubmitEvent,
    progress: WriteSignal<Option<(f64, f64)>>,
    planned: WriteSignal<Option<(u64, u64)>>,
) -> Option<String> {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(form) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok())
    else {
        return None;
    };
    let (Ok(data), Ok(xhr)) = (
        web_sys::FormData::new_with_form(&form),
        web_sys::XmlHttpRequest::new(),
    ) else {
        return None;
    };
    // the button pressed is not in the form's data: Preview says so itself
    if ev
        .submitter()
        .and_then(|b| b.get_attribute("name"))
        .is_some_and(|n| n == "preview")
        && data.append_with_str("preview", "1").is_err()
    {
        return None;
    }
    if let Ok(file) = data.get("document").dyn_into::<web_sys::File>() {
        if file.size() > MAX_UPLOAD_BYTES as f64 {
            ev.prevent_default();
            return Some(format!(
                "The document is {:.1} MiB; Graft imports documents up to {} MiB.",
                file.size() / 1_048_576.0,
                MAX_UPLOAD_BYTES >> 20
            ));
        }
    }
    if xhr.open("POST", "/vendors/import").is_err()
        || xhr.set_request_header("x-graft-upload", "events").is_err()
    {
        return None;
    }
    ev.prevent_default();
    let on_progress =
        Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |e: web_sys::ProgressEvent| {
            if e.length_computable() {
                progress.set(Some((e.loaded(), e.total())));
            }
        });
    if let Ok(upload) = xhr.upload() {
        upload.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    }
    on_progress.forget();
    // the import's events as they arrive
    let reading = xhr.clone();
    let on_read = Closure::<dyn FnMut()>::new(move || {
        let text = reading.response_text().ok().flatten().unwrap_or_default();
        if let (Some(p), _) = import_events_said(&text) {
            planned.set(Some(p));
        }
    });
    xhr.set_onprogress(Some(on_read.as_ref().unchecked_ref()));
    on_read.forget();
    let done = xhr.clone();
    let on_end = Closure::<dyn FnMut()>::new(move || {
        // the page the last event names; signed out (a redirect to /login that the
        // request followed), cut off or anything else: the plain page
        let text = done.response_text().ok().flatten().unwrap_or_default();
        let target = match import_events_said(&text).1 {
            Some(t)
                if done.status().unwrap_or(0) == 200
                    && (t.starts_with("/vendors?import=")
                        || t.starts_with("/vendors?preview=")) =>
            {
                t
            }
            _ => "/vendors".to_string(),
        };
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(&target);
        }
    });
    xhr.set_onloadend(Some(on_end.as_ref().unchecked_ref()));
    on_end.forget();
    let _ = xhr.send_with_opt_form_data(Some(&data));
    None
}

#[cfg(not(feature = "hydrate"))]
pub(crate) fn upload_with_progress(
    _: leptos::ev::SubmitEvent,
    _: WriteSignal<Option<(f64, f64)>>,
    _: WriteSignal<Option<(u64, u64)>>,
) -> Option<String> {
    None
}

/// A previewed upload (issue 28.11): what applying it would do, Apply and Discard.
fn preview_card(id: String, s: ImportSummary, apply: ServerAction<ApplyImport>) -> impl IntoView {
    let err = error_of(apply);
    let discard = ServerAction::<DiscardImport>::new();
    let discard_id = id.clone();
    view! {
        <FormError err/>
        {import_summary(s)}
        <section class="card" id="apply-import">
            <ActionForm action=apply attr:class="inline">
                <input type="hidden" name="preview" value=id/>
                <button type="submit" disabled=move || apply.pending().get()>{move || if apply.pending().get() { "Importing…" } else { "Apply this import" }}</button>
            </ActionForm>
            <ActionForm action=discard attr:class="inline">
                <input type="hidden" name="preview" value=discard_id/>
                <button type="submit" class="secondary discard">"Discard"</button>
            </ActionForm>
            <p class="muted">"Applying imports the document as uploaded and says again what it did (the toolbox may have changed since). A preview is kept for 10 minutes."</p>
        </section>
    }
}

pub(crate) fn import_summary(s: ImportSummary) -> impl IntoView {
    match s.error {
        Some(e) => view! {
            <section class="card error-card" role="alert" id="import-summary">
                <h2>"Import failed"</h2>
                <p>{format!("Nothing was imported for {}: {e}", if s.vendor.is_empty() { "the vendor" } else { s.vendor.as_str() })}</p>
            </section>
        }
        .into_any(),
        None => view! {
            <section class=if s.preview { "card preview-card" } else { "card ok-card" } role="status" id="import-summary" data-preview=s.preview.to_string()>
                <h2>{if s.preview { "Preview: nothing is changed until you apply it" } else { "Import done" }}</h2>
                <p class="headline">{s.headline()}</p>
                {s.differs_from_preview.clone().map(|said| view! { <p class="warning" role="note" id="differs-from-preview">{format!("Not what the preview said (\"{said}\"): the toolbox changed between the preview and Apply. This is what the import did.")}</p> })}
                {s.adopted_base_url.clone().map(|u| view! { <p class="warning" role="note">"Base URL "<code>{u}</code>", taken from the document's servers: every call of these tools goes there. Change it on the vendor's page if it is not the API you mean."</p> })}
                {s.origin_moved.clone().map(|(old, new)| view! { <p class="warning" role="note">{format!("Moved from {old} to {new}: its connections send nothing until you confirm them on the vendor's page, and its approvals are asked again.")}</p> })}
                {(!s.moved.is_empty()).then(|| view! { <details open><summary>"Agents' tools renamed: the document's operations take their names"</summary><ul>
                    {s.moved.clone().into_iter().map(|(o, n)| view! { <li><code>{o}</code>" → "<code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.created.is_empty()).then(|| view! { <details open=s.created.len() <= 20><summary>{format!("New: {} tools", s.created.len())}</summary><ul>
                    {s.created.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.updated.is_empty()).then(|| view! { <details open><summary>"Updated: a new version, authored by import"</summary><ul>
                    {s.updated.clone().into_iter().map(|(n, what)| view! { <li><a href=format!("/tools/{}/{}", segment(&s.vendor), segment(&n))><code>{n.clone()}</code></a>": "{what}</li> }).collect_view()}
                </ul></details> })}
                {(!s.retired.is_empty()).then(|| view! { <details open><summary>"Retired: no longer in the document (demoted from working sets, kept for history)"</summary><ul>
                    {s.retired.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.restored.is_empty()).then(|| view! { <details><summary>"Restored: back in the document"</summary><ul>
                    {s.restored.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.kept.is_empty()).then(|| view! { <details><summary>"Left alone: an agent wrote their current version"</summary><ul>
                    {s.kept.clone().into_iter().map(|n| view! { <li><code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.renamed.is_empty()).then(|| view! { <details><summary>"Renamed"</summary><ul>
                    {s.renamed.into_iter().map(|(o, n)| view! { <li><code>{o}</code>" → "<code>{n}</code></li> }).collect_view()}
                </ul></details> })}
                {(!s.skipped.is_empty()).then(|| view! { <details><summary>"Skipped"</summary><ul>
                    {s.skipped.into_iter().map(|(o, r)| view! { <li><code>{o}</code>": "{r}</li> }).collect_view()}
                </ul></details> })}
                {(!s.withheld.is_empty()).then(|| view! { <details><summary>"Parameters not offered to agents (Graft or the connection sets them)"</summary><ul>
                    {s.withheld.into_iter().map(|(o, p)| view! { <li><code>{o}</code>": "{p}</li> }).collect_view()}
                </ul></details> })}
                <p><a href=format!("/tools?vendor={}", segment(&s.vendor))>"See its tools"</a></p>
            </section>
        }
        .into_any(),
    }
}

#[cfg(test)]
mod tests {
    use super::import_events_said;

    #[test]
    fn the_import_stream_is_read_as_it_arrives() {
        let part = "event: progress\ndata: {\"done\":3,\"total\":10}\n\nevent: progress\ndata: {\"done\":7,\"to";
        assert_eq!(import_events_said(part), (Some((3, 10)), None));
        let all = "event: progress\ndata: {\"done\":3,\"total\":10}\n\n: keep-alive\n\nevent: progress\ndata: {\"done\":10,\"total\":10}\n\nevent: done\ndata: /vendors?import=abc\n\n";
        assert_eq!(
            import_events_said(all),
            (Some((10, 10)), Some("/vendors?import=abc".into()))
        );
        assert_eq!(import_events_said("<html>sign in</html>"), (None, None));
    }
}
