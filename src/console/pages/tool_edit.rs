//! The tool page's forms (issue 28.10): a note, the connection its calls use, a new
//! version with another description or input schema, and what changed between versions.

use crate::console::components::{clear_on_save, error_of, loaded, saved, FieldError, FormError};
use crate::console::server_fns::{
    tried_tool, AddToolNote, ChooseToolConnection, KeptTry, PublishTool, SendTool, ToolData,
    TryField, TryResult,
};
use leptos::prelude::*;

/// The tool page's actions besides hints and learned phrases.
#[derive(Clone, Copy)]
pub(crate) struct EditActions {
    pub note: ServerAction<AddToolNote>,
    pub connection: ServerAction<ChooseToolConnection>,
    pub publish: ServerAction<PublishTool>,
}

impl EditActions {
    pub(crate) fn new() -> Self {
        Self {
            note: ServerAction::new(),
            connection: ServerAction::new(),
            publish: ServerAction::new(),
        }
    }
}

/// A person's note on the tool (SPEC §2 `tool_notes`).
pub(crate) fn note_form(t: &ToolData, action: ServerAction<AddToolNote>) -> impl IntoView {
    let err = error_of(action);
    let (vendor, name) = (t.vendor.clone(), t.name.clone());
    view! {
        <ActionForm action=action node_ref=clear_on_save(action) attr:class="note-form">
            <input type="hidden" name="vendor" value=vendor/>
            <input type="hidden" name="name" value=name/>
            <FormError err/>
            <label>"Add a note"
                <textarea name="body" rows="3" maxlength="4000" required
                    placeholder="e.g. use the sandbox account for tests; pages of 100 at most"></textarea>
            </label>
            <FieldError err field="body"/>
            <button type="submit">"Add note"</button>
            {move || saved(action, "note").get().then(|| view! { <span class="saved" role="status">" Note added."</span> })}
        </ActionForm>
    }
}

/// Which of its vendor's connections the tool's calls use (SPEC §10.5): its own default,
/// or the vendor's.
pub(crate) fn connection_form(
    t: &ToolData,
    action: ServerAction<ChooseToolConnection>,
) -> Option<impl IntoView> {
    // an MCP server's tools use its own credentials (SPEC §10.2), never a choice here
    let mcp = t.versions.first().is_some_and(|v| v.method == "MCP");
    if t.live_connections.is_empty() || t.vendor_removed || mcp {
        return None;
    }
    let err = error_of(action);
    let (vendor, name) = (t.vendor.clone(), t.name.clone());
    let chosen = t.chosen_connection;
    let options = t
        .live_connections
        .iter()
        .cloned()
        .map(|(id, label)| view! { <option value=id.to_string() selected=chosen == Some(id)>{label}</option> })
        .collect_view();
    // the tool's own connection was revoked: shown as it is, not as the vendor's default
    // (which a save would then set without the person meaning to)
    let revoked = chosen
        .filter(|id| !t.live_connections.iter().any(|(live, _)| live == id))
        .map(|id| view! { <option value=id.to_string() selected=true>"a revoked connection: its calls fail until you choose another"</option> });
    Some(view! {
        <ActionForm action=action attr:class="inline-form">
            <input type="hidden" name="vendor" value=vendor/>
            <input type="hidden" name="name" value=name/>
            <FormError err/>
            <label>"Calls use "
                <select name="connection">
                    <option value="" selected=chosen.is_none()>"the vendor's default"</option>
                    {revoked}
                    {options}
                </select>
            </label>
            " "<button type="submit">"Save"</button>
            <FieldError err field="connection"/>
            {move || saved(action, "connection").get().then(|| view! { <span class="saved" role="status">" Saved."</span> })}
        </ActionForm>
    })
}

/// A new version with another description (CommonMark) or input schema (JSON Schema).
pub(crate) fn publish_form(
    t: &ToolData,
    action: ServerAction<PublishTool>,
) -> Option<impl IntoView> {
    let current = t.versions.first()?;
    if !t.editable {
        return None;
    }
    let err = error_of(action);
    let (vendor, name) = (t.vendor.clone(), t.name.clone());
    let seen = current.version;
    let (description, schema) = (
        textarea_text(t.source_description.clone()),
        textarea_text(current.input_schema.clone()),
    );
    Some(view! {
        <section class="card" id="publish">
            <h2>"Publish a new version"</h2>
            <p class="muted">"Agents that have it promoted get the new definition at once (list_changed). A change to the method, the path or where inputs go asks each agent's approval again; a description or a schema change alone does not. The versions before stay as they were."</p>
            // open again when the form was refused (without JavaScript the page reloads)
            <details open=move || err.get().is_some()>
                <summary>{format!("Edit version {seen} as version {}…", seen + 1)}</summary>
                <ActionForm action=action attr:class="publish-form">
                    <input type="hidden" name="vendor" value=vendor/>
                    <input type="hidden" name="name" value=name/>
                    <input type="hidden" name="seen" value=seen.to_string()/>
                    <FormError err/>
                    <label>"Description (Markdown)"
                        <textarea name="description" rows="6">{description}</textarea>
                    </label>
                    <FieldError err field="description"/>
                    <label>"Input schema (JSON Schema)"
                        <textarea name="input_schema" rows="14" class="code" spellcheck="false">{schema}</textarea>
                    </label>
                    <FieldError err field="input_schema"/>
                    <button type="submit">{format!("Publish version {}", seen + 1)}</button>
                </ActionForm>
            </details>
            {move || saved(action, "version").get().then(|| view! { <p class="saved" role="status">"Published."</p> })}
        </section>
    })
}

/// What changed from the version before, as a line diff (`changes` of a version).
pub(crate) fn version_changes(version: i64, changes: Vec<(String, String)>) -> impl IntoView {
    (!changes.is_empty()).then(|| {
        view! {
            <details class="changes" open=true>
                <summary>{format!("Changes from version {}", version - 1)}</summary>
                <pre class="diff" aria-label=format!("Changes from version {} to {version}", version - 1)>
                    {changes.into_iter().map(|(kind, line)| {
                        let mark = match kind.as_str() { "added" => "+ ", "removed" => "- ", "gap" => "", _ => "  " };
                        view! { <span class=format!("line {kind}")>{format!("{mark}{line}")}"\n"</span> }
                    }).collect_view()}
                </pre>
            </details>
        }
    })
}

/// `text` as a `<textarea>`'s content. Leptos writes a textarea's children unescaped on
/// the server (tachys marks `textarea` ESCAPE_CHILDREN false), so a description holding
/// `</textarea><script>` would leave the field: the server escapes `&`, `<` and `>`,
/// which the parser's RCDATA state decodes back (HTML § 13.2.5.2); the browser build
/// sets the text as is.
fn textarea_text(text: String) -> String {
    #[cfg(feature = "ssr")]
    {
        html_escape::encode_text(&text).into_owned()
    }
    #[cfg(not(feature = "ssr"))]
    {
        text
    }
}

/// The try the page shows, from its query (`tried=ID` after a dry run, `sent=ID` after a
/// send): `None` until the person tries; a try no longer kept says so.
pub(crate) type Tried = Resource<crate::console::server_fns::ConsoleResult<Option<KeptTry>>>;

/// The [`Tried`] resource of the tool `key()` names.
pub(crate) fn tried(key: impl Fn() -> (String, String) + Send + Sync + 'static) -> Tried {
    let query = leptos_router::hooks::use_query_map();
    Resource::new(
        move || {
            let q = query.read();
            q.get("sent")
                .or_else(|| q.get("tried"))
                .map(|id| (id, key()))
        },
        |asked| async move {
            let Some((id, (v, n))) = asked else {
                return Ok(None);
            };
            // gone after 10 minutes: said so rather than nothing
            tried_tool(id.clone(), v, n).await.map(|r| {
                Some(r.unwrap_or(KeptTry {
                    id,
                    result: TryResult {
                        ok: false,
                        text: "That try is no longer kept: dry runs and answers are kept 10 minutes, for the person who made them. The Audit page says what was sent and its status.".into(),
                        field: None,
                        sent: true,
                        gone: true,
                    },
                    values: Default::default(),
                }))
            })
        },
    )
}

/// The "Try it" form's fields, each holding `typed`'s value for it (none for a secret).
fn try_fields_view(
    fields: &[TryField],
    json: bool,
    typed: &std::collections::BTreeMap<String, String>,
) -> AnyView {
    let typed = |field: &str| typed.get(field).cloned().unwrap_or_default();
    if json {
        return view! {
            <label>"Input (JSON object)"
                <textarea name="in." rows="6" class="code" spellcheck="false">{textarea_text(typed(""))}</textarea>
            </label>
        }
        .into_any();
    }
    fields
        .iter()
        .cloned()
        .map(|f| {
            let name = format!("in.{}", f.name);
            let value = typed(&f.name);
            let label = format!("{}{}", f.name, if f.required { " (required)" } else { "" });
            let input = match f.kind.as_str() {
                "boolean" => view! {
                    <select name=name>
                        <option value="" selected=value.is_empty()>"—"</option>
                        <option value="true" selected=value == "true">"true"</option>
                        <option value="false" selected=value == "false">"false"</option>
                    </select>
                }.into_any(),
                "choice" => view! {
                    <select name=name>
                        <option value="" selected=value.is_empty()>"—"</option>
                        {f.options.into_iter().map(|o| { let (selected, label) = (value == o, o.clone()); view! { <option value=o selected=selected>{label}</option> } }).collect_view()}
                    </select>
                }.into_any(),
                // a secret is typed unseen and not shown again
                _ if f.secret => view! { <input type="password" name=name autocomplete="off"/> }.into_any(),
                "json" => view! { <textarea name=name rows="3" class="code" spellcheck="false" placeholder="JSON">{textarea_text(value)}</textarea> }.into_any(),
                "integer" => view! { <input type="number" step="1" name=name value=value/> }.into_any(),
                "number" => view! { <input type="number" step="any" name=name value=value/> }.into_any(),
                _ => view! { <input type="text" name=name value=value/> }.into_any(),
            };
            let hint = match (f.description, f.secret) {
                (Some(d), true) => Some(format!("{d} (a secret: typed again for each try)")),
                (None, true) => Some("A secret: typed again for each try.".to_string()),
                (d, false) => d,
            };
            view! {
                <label data-field=f.name.clone()>{label}{input}
                    {hint.map(|d| view! { <span class="hint muted">{d}</span> })}
                </label>
            }
        })
        .collect_view()
        .into_any()
}

/// The "Try it" form (issue 28.10): a field per top-level property of the input schema
/// (the whole input as JSON for a wider one), posted to `/tools/try` (so that it works
/// without JavaScript and its values stay out of the address), and the request an
/// agent's call would send, or why it would not; then a send of what was dry-run.
pub(crate) fn try_section(t: &ToolData, tried: Tried) -> Option<impl IntoView> {
    let current = t.versions.first()?;
    if current.method == "MCP" || t.retired_at.is_some() || t.vendor_removed {
        return None;
    }
    let send = ServerAction::<SendTool>::new();
    let send_err = error_of(send);
    let (vendor, name, gated) = (t.vendor.clone(), t.name.clone(), t.gated);
    // a vendor with no connection: its calls go without a credential (as the agent
    // page's warning says), which the vendor will likely refuse
    let unconnected = t.live_connections.is_empty().then(|| {
        let href = format!("/vendors/{}#connections", crate::console::words::segment(&t.vendor));
        view! { <p class="warning no-connection" role="note">{format!("{} has no connection: a send goes without a credential, and the vendor will likely refuse it. ", t.vendor)}<a href=href>"Add a connection"</a>" on the vendor's page."</p> }
    });
    let (fields, json) = (t.try_fields.clone(), t.try_json);
    Some(view! {
        <section class="card" id="try">
            <h2>"Try it"</h2>
            {unconnected}
            <p class="muted">"A dry run first: Graft checks the input as it checks an agent's call and shows the request it would send, the credential redacted; nothing is sent. Then Send to the vendor sends it with the connection's credential and shows the answer (recorded in the audit log, not in the calls log). The values stay out of the page's address: Graft keeps them for you for 10 minutes, and a secret field is typed again for each try."</p>
            {loaded(tried, "Trying…", move |kept: Option<KeptTry>| {
                let typed = kept.as_ref().map(|k| k.values.clone()).unwrap_or_default();
                let form = view! {
                    <form method="post" action="/tools/try" class="try-form">
                        <input type="hidden" name="vendor" value=vendor.clone()/>
                        <input type="hidden" name="name" value=name.clone()/>
                        {try_fields_view(&fields, json, &typed)}
                        <button type="submit">"Dry run"</button>
                    </form>
                };
                let result = kept.map(|KeptTry { id, result: r, .. }| {
                    let title = match (r.sent, r.ok) {
                        _ if r.gone => "Try no longer kept",
                        (true, true) => "What the vendor answered",
                        (true, false) => "The call failed",
                        (false, true) => "The request an agent's call would send",
                        (false, false) => "An agent's call would be refused",
                    };
                    // after a dry run that would send: send what was dry-run, a write confirmed
                    let (vendor, name) = (vendor.clone(), name.clone());
                    let send = (r.ok && !r.sent).then(|| view! {
                        <ActionForm action=send attr:class="stack send-form">
                            <input type="hidden" name="vendor" value=vendor/>
                            <input type="hidden" name="name" value=name/>
                            <input type="hidden" name="tried" value=id/>
                            {gated.then(|| view! { <label class="check"><input type="checkbox" name="confirm" value="yes"/>" Send this write: no approval is asked, you decide"</label> })}
                            <FormError err=send_err/>
                            <button type="submit" disabled=move || send.pending().get()>{move || if send.pending().get() { "Sending…" } else { "Send to the vendor" }}</button>
                        </ActionForm>
                    });
                    view! {
                        <div class=if r.gone { "try-result" } else if r.ok { "try-result ok" } else { "try-result refused" } role="status">
                            <h3>{title}</h3>
                            {r.field.filter(|f| !f.is_empty()).map(|f| view! { <p class="error">{format!("At {f}:")}</p> })}
                            <pre aria-label=title>{r.text}</pre>
                        </div>
                        {send}
                    }
                });
                view! { {form} {result} }
            })}
        </section>
    })
}
