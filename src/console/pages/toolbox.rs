//! The Toolbox page and one tool's page (SPEC §6).

use super::tables::{calls_table, CallColumns};
use super::tool_edit::{
    connection_form, note_form, publish_form, tried, try_section, version_changes, EditActions,
    Tried,
};
use crate::console::components::{
    does_badge, hits_pager, hits_span, loaded, saves, Confirm, Frame, When,
};
use crate::console::server_fns::{
    browse_tools, search_tools, tool, BrowseData, ClearLearned, ConsoleError, SearchData,
    SetToolHints, ToolData,
};
use crate::console::words::{count, does_in_words, segment};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/tools`: the toolbox, browsable without a query (`vendor`, `sort` = `name` | `use`,
/// `page`), and with `q` the same search as find_tool (narrowed to `vendor` when given).
#[component]
pub fn ToolboxPage() -> impl IntoView {
    let query = use_query_map();
    let get = move |k: &str| query.read().get(k).unwrap_or_default();
    let q = move || get("q");
    let browse = Resource::new(
        move || (get("vendor"), get("sort"), get("page").parse::<i64>().ok()),
        |(v, s, p)| browse_tools(Some(v), Some(s), p),
    );
    let hits = Resource::new(
        move || (q(), get("vendor"), get("hp").parse::<i64>().ok()),
        |(q, v, p)| search_tools(q, None, Some(v), p),
    );
    view! {
        <Frame title="Toolbox">
            <h1>"Toolbox"</h1>
            {loaded(browse, "Loading…", move |b| {
                let searching = !q().trim().is_empty();
                view! {
                    {toolbox_form(&b, untrack(q))}
                    {if searching {
                        search_results(hits, untrack(q), b.vendor.clone().unwrap_or_default()).into_any()
                    } else {
                        browse_table(b).into_any()
                    }}
                }
            })}
        </Frame>
    }
}

/// The Toolbox's one form (GET, so it works without JavaScript): the words to search,
/// the vendor, the order.
pub(crate) fn toolbox_form(b: &BrowseData, q: String) -> impl IntoView {
    let all: i64 = b.vendors.iter().map(|v| v.2).sum();
    let chosen = b.vendor.clone().unwrap_or_default();
    view! {
        <form method="get" class="search toolbox" role="search">
            <label class="words">"Search by what a tool does (the action and the object, the vendor if known)"
                <input type="search" name="q" value=q placeholder="e.g. refund a payment"/></label>
            <label>"Vendor"
                <select name="vendor">
                    <option value="" selected=chosen.is_empty()>{format!("All vendors ({})", count(all, "tool"))}</option>
                    {b.vendors.iter().cloned().map(|(slug, name, n)| {
                        let selected = slug == chosen;
                        let label = if name == slug { format!("{slug} ({n})") } else { format!("{name} — {slug} ({n})") };
                        view! { <option value=slug selected=selected>{label}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>"Order (without search words)"
                <select name="sort">
                    <option value="name" selected=b.sort == "name">"By name"</option>
                    <option value="use" selected=b.sort == "use">"Most used first"</option>
                </select>
            </label>
            <button type="submit">"Show"</button>
        </form>
    }
}

/// One page of the toolbox, with links to the others.
pub(crate) fn browse_table(b: BrowseData) -> impl IntoView {
    let now = b.now;
    if b.tools.is_empty() {
        return view! {
            <p class="muted">"No tools yet. "<a href="/vendors#import">"Import a vendor's OpenAPI document"</a>" to fill the toolbox."</p>
        }
        .into_any();
    }
    let pages = ((b.total + b.per_page - 1) / b.per_page).max(1);
    let mut base = String::from("/tools?");
    if let Some(v) = &b.vendor {
        base.push_str(&format!("vendor={}&", segment(v)));
    }
    if b.sort != "name" {
        base.push_str(&format!("sort={}&", b.sort));
    }
    let link = move |p: i64| format!("{base}page={p}");
    let first = (b.page - 1) * b.per_page + 1;
    let last = first + b.tools.len() as i64 - 1;
    view! {
        <p class="muted">{format!("Tools {first}–{last} of {}, {}.", b.total, if b.sort == "use" { "most used first" } else { "by name" })}</p>
        <div class="table-wrap"><table class="browse">
            <thead><tr><th>"Tool"</th><th>"Does"</th><th>"Description"</th><th>"Calls"</th><th>"Last used"</th><th title="what its definition costs an agent's context once promoted">"Tokens"</th></tr></thead>
            <tbody>{b.tools.into_iter().map(|t| view! {
                <tr data-tool=format!("{}__{}", t.vendor, t.name)>
                    <td><a href=format!("/tools/{}/{}", segment(&t.vendor), segment(&t.name))><code>{format!("{}__{}", t.vendor, t.name)}</code></a></td>
                    <td data-label="Does">{does_badge(&t.does)}</td>
                    <td class="desc">{t.description}</td>
                    <td class="num" data-label="Calls">{t.calls}</td>
                    <td data-label="Last used">{match t.last_used_at {
                        Some(at) => view! { <When at now/> }.into_any(),
                        None => view! { <span class="muted">"never"</span> }.into_any(),
                    }}</td>
                    <td class="num tokens" data-label="Tokens">{t.tokens.map(crate::console::words::grouped).unwrap_or_else(|| "…".into())}</td>
                </tr>
            }).collect_view()}</tbody>
        </table></div>
        <nav class="pager" aria-label="Toolbox pages">
            {(b.page > 1).then(|| view! { <a href=link(b.page - 1) rel="prev">"Previous"</a> })}
            <span>{format!("Page {} of {pages}", b.page)}</span>
            {(b.page < pages).then(|| view! { <a href=link(b.page + 1) rel="next">"Next"</a> })}
        </nav>
    }
    .into_any()
}

/// The search's hits, best first.
pub(crate) fn search_results(
    hits: Resource<Result<SearchData, ConsoleError>>,
    q: String,
    vendor: String,
) -> impl IntoView {
    loaded(hits, "Searching…", move |s| {
        view! {
            {(!s.semantic).then(|| view! {
                <p class="warning" role="note">"Search matches words only: no embedding model is installed, so phrasings that use other words than a tool's may miss. Run "<code>"scripts/get-model.sh"</code>" and restart Graft to rank by meaning too."</p>
            })}
            {if s.hits.is_empty() {
                view! { <p class="muted">{format!("Nothing matches {q:?}. An agent can author a tool with acquire.")}</p> }.into_any()
            } else {
                view! {
                    <p class="muted">{hits_span(s.page, s.hits.len(), s.total)}</p>
                    <div class="table-wrap"><table>
                        <thead><tr><th>"Tool"</th><th>"Does"</th><th>"Description"</th><th>"Score"</th><th>"Tokens"</th></tr></thead>
                        <tbody>{s.hits.into_iter().map(|h| view! {
                            <tr data-tool=format!("{}__{}", h.vendor, h.name)>
                                <td><a href=format!("/tools/{}/{}", segment(&h.vendor), segment(&h.name))><code>{format!("{}__{}", h.vendor, h.name)}</code></a></td>
                                <td data-label="Does">{does_badge(does_in_words(None, h.read_only, h.destructive))}</td>
                                <td class="desc">{h.description}</td>
                                <td data-label="Score">{h.score}</td>
                                <td class="num tokens" data-label="Tokens">{h.tokens.map(crate::console::words::grouped).unwrap_or_else(|| "…".into())}</td>
                            </tr>
                        }).collect_view()}</tbody>
                    </table></div>
                    {let (q, vendor) = (q.clone(), vendor.clone());
                     hits_pager(s.page, s.pages, move |p| format!("/tools?q={}&vendor={}&hp={p}", segment(&q), segment(&vendor)))}
                }.into_any()
            }}
        }
    })
}

/// `/tools/:vendor/:name`: versions, hints, binding, holders, notes, connection.
#[component]
pub fn ToolPage() -> impl IntoView {
    let params = use_params_map();
    let key = move || {
        let p = params.read();
        (
            p.get("vendor").unwrap_or_default(),
            p.get("name").unwrap_or_default(),
        )
    };
    let clear = ServerAction::<ClearLearned>::new();
    let hints = ServerAction::<SetToolHints>::new();
    let edit = EditActions::new();
    // reloaded when a form saved (a refused one keeps what the person typed)
    let (notes, connections, published) = (
        saves(edit.note),
        saves(edit.connection),
        saves(edit.publish),
    );
    let data = Resource::new(
        move || {
            (
                key(),
                (clear.version().get(), hints.version().get()),
                (notes.get(), connections.get(), published.get()),
            )
        },
        |((v, n), _, _)| tool(v, n),
    );
    let tried = tried(key);
    view! {
        <Frame title={ let (v, n) = untrack(key); format!("{v}__{n}") }>
            {loaded(data, "Loading…", move |t| tool_view(t, clear, hints, edit, tried))}
        </Frame>
    }
}

/// The tool page's "What a call does" form (issue 28.7): a person marks a tool a read
/// (no approval needed), a write or a delete; a new version with those hints.
fn hints_form(t: &ToolData, action: ServerAction<SetToolHints>) -> impl IntoView {
    let current = t.versions.first()?;
    let does = does_in_words(Some(&current.method), current.hints[0], current.hints[1]);
    let (vendor, name) = (t.vendor.clone(), t.name.clone());
    // a POST, PUT, PATCH or DELETE is a write whatever its hints: "reads" is not offered
    let read_method = crate::console::words::reads_by_method(&current.method);
    let option = move |value: &'static str, label: &'static str| {
        view! { <option value=value selected=does == value>{label}</option> }
    };
    Some(view! {
        <section class="card" id="hints">
            <h2>"What a call does"</h2>
            <p class="muted">{if current.method == "MCP" {
                "Agents see it as the tool's MCP annotations; a call that changes or deletes data asks a person first. Graft takes it from the annotations its MCP server gives: a tool that does not say it only reads counts as a change until a person says it only reads."
            } else {
                "Agents see it as the tool's MCP annotations; a call that changes or deletes data asks a person first. Graft reads it from the HTTP method and the operation's name: a GET named open, create, set, send… counts as a change until a person says it only reads."
            }}</p>
            <ActionForm action=action attr:class="inline-form">
                <input type="hidden" name="vendor" value=vendor/>
                <input type="hidden" name="name" value=name/>
                <label>"A call "
                    <select name="does">
                        {read_method.then(|| option("reads", "only reads data"))}
                        {option("writes", "changes data")}
                        {option("deletes", "deletes or overwrites data")}
                    </select>
                </label>
                " "<button type="submit">"Save"</button>
            </ActionForm>
            {move || action.value().get().and_then(Result::err).map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })}
        </section>
    })
}

pub(crate) fn tool_view(
    t: ToolData,
    clear: ServerAction<ClearLearned>,
    hints: ServerAction<SetToolHints>,
    edit: EditActions,
    tried: Tried,
) -> impl IntoView {
    let now = t.now;
    let current = t.versions.first().cloned();
    let back = format!("/tools?vendor={}", segment(&t.vendor));
    view! {
        <p class="crumbs"><a href="/tools">"Toolbox"</a>" › "<a href=back>{t.vendor.clone()}</a></p>
        <h1><code>{format!("{}__{}", t.vendor, t.name)}</code></h1>
        {t.vendor_removed.then(|| view! {
            <p class="warning" role="note">"Its vendor was removed: agents cannot promote or call it. It stays here for the record; importing the vendor's document again brings it back."</p>
        })}
        {(t.vendor_disabled && !t.vendor_removed).then(|| view! {
            <p class="warning" role="note">"Its vendor is disabled: agents cannot promote or call it until a person enables "<a href=format!("/vendors/{}", segment(&t.vendor))>"the vendor"</a>" again."</p>
        })}
        {t.retired_at.map(|at| {
            let mcp = current.as_ref().is_some_and(|v| v.method == "MCP");
            view! {
            <p class="warning" role="note">"Retired "<When at now/>
                {if mcp {
                    ": its MCP server no longer lists it. Agents cannot promote or call it; it stays here for the record, and comes back if the server lists it again."
                } else {
                    ": the vendor's OpenAPI document no longer has this operation. Agents cannot promote or call it; it stays here for the record, and comes back if a later import has the operation again."
                }}</p>
        }})}
        {current.map(|v| view! {
            <div class="md description" inner_html=v.description_html.clone()></div>
            {if v.method == "MCP" {
                view! { <p><span class="method">"MCP"</span>" the server's tool "<code>{v.path.clone()}</code>
                    {format!(" · version {}", v.version)}</p> }.into_any()
            } else {
                view! { <p><span class="method">{v.method.clone()}</span>" "<code>{v.path.clone()}</code>
                   {format!(" · version {}", v.version)}
                   {t.operation_id.clone().map(|o| format!(" · operation {o}"))}</p> }.into_any()
            }}
            <p class="tokens">{match t.tokens {
                Some(n) => format!("Promoted, it costs an agent's context {} (its definition as tools/list serves it).", crate::console::words::tokens(n)),
                None => "Its tokens are being counted.".to_string(),
            }}</p>
            <p class="hints">{does_badge(does_in_words(Some(&v.method), v.hints[0], v.hints[1]))}" "
                {match does_in_words(Some(&v.method), v.hints[0], v.hints[1]) {
                    "reads" => "A call reads data and changes nothing.",
                    "deletes" => "A call deletes or overwrites data at the vendor.",
                    _ => "A call changes data at the vendor.",
                }}
                {t.gated.then_some(" An agent's first call needs a person's approval.")}
                {v.hints[2].then_some(" Repeating it with the same input changes nothing more (idempotent).")}
                <span class="muted" title="the MCP tool annotations agents see">
                    {format!(" MCP annotations: readOnlyHint {}, destructiveHint {}, idempotentHint {}, openWorldHint {}.", v.hints[0], v.hints[1], v.hints[2], v.hints[3])}
                </span></p>
        })}
        {hints_form(&t, hints)}
        {try_section(&t, tried)}
        <section class="card" id="connection">
            <h2>"Connection"</h2>
            {match t.connection.clone() {
                Some((label, why)) => view! { <p><strong>{label}</strong>" — "{why}</p> }.into_any(),
                None => view! { <p class="muted">"Calls carry no credential."</p> }.into_any(),
            }}
            {connection_form(&t, edit.connection)}
        </section>
        <section class="card">
            <h2>"Promoted for"</h2>
            {if t.holders.is_empty() {
                view! { <p class="muted">"No agent has it promoted."</p> }.into_any()
            } else {
                view! { <ul>{t.holders.clone().into_iter().map(|(a, by)| view! {
                    <li><a href=format!("/agents/{}", segment(&a))>{a.clone()}</a>{format!(" (promoted by {by})")}</li>
                }).collect_view()}</ul> }.into_any()
            }}
        </section>
        <section class="card" id="calls">
            <h2>"Recent calls"</h2>
            {calls_table(t.calls.clone(), now, CallColumns::Agent, "No calls yet.")}
        </section>
        <section class="card" id="learned">
            <h2>"Learned from agents' picks"</h2>
            {if t.learned.is_empty() {
                view! { <p class="muted">"Nothing yet. When an agent promotes or calls this tool right after a find_tool, the task words of its request (never ids, numbers or quoted text) lift the tool for every agent that asks alike."</p> }.into_any()
            } else {
                let (v, n) = (t.vendor.clone(), t.name.clone());
                view! {
                    <p>"find_tool ranks this tool higher for requests like these, because agents picked it after asking so. Each agent counts once per request; a pick weighs half after 90 days."</p>
                    <ul class="learned">{t.learned.iter().cloned().map(|(phrase, agents, at)| view! {
                        <li><q>{phrase}</q>{format!(" — {} ", count(agents as i64, "agent"))}<When at now/></li>
                    }).collect_view()}</ul>
                    <Confirm label="Clear learned phrases".to_string()>
                        <p>"find_tool forgets these phrases for this tool at once; later picks teach it again."</p>
                        <ActionForm action=clear>
                            <input type="hidden" name="vendor" value=v/>
                            <input type="hidden" name="name" value=n/>
                            <input type="hidden" name="confirm" value="yes"/>
                            <button type="submit" class="danger solid">"Clear them now"</button>
                        </ActionForm>
                    </Confirm>
                }.into_any()
            }}
        </section>
        <section class="card" id="notes">
            <h2>"Notes"</h2>
            {if t.notes.is_empty() {
                view! { <p class="muted">"No notes."</p> }.into_any()
            } else {
                view! { <ul>{t.notes.clone().into_iter().map(|(who, body, at)| view! {
                    <li><strong>{who}</strong>" ("<When at now/>"): "{body}</li>
                }).collect_view()}</ul> }.into_any()
            }}
            {note_form(&t, edit.note)}
        </section>
        {publish_form(&t, edit.publish)}
        <section class="card" id="versions">
            <h2>"Versions"</h2>
            {t.versions.into_iter().enumerate().map(|(i, v)| view! {
                <details open=i == 0>
                    <summary>{format!("Version {} — {} {} — by {} ", v.version, v.method, v.path, v.author)}<When at=v.created_at now/></summary>
                    {version_changes(v.version, v.changes)}
                    <div class="md" inner_html=v.description_html></div>
                    <details class="raw"><summary>"Input schema (JSON Schema)"</summary><pre><code>{v.input_schema}</code></pre></details>
                    <details class="raw"><summary>"Binding: where each input goes in the request"</summary><pre><code>{v.binding}</code></pre></details>
                </details>
            }).collect_view()}
        </section>
    }
}
