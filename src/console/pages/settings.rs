//! The Settings page (issue 28.3): the team's webhook, which hears of approvals asked
//! for, failing vendors and refused connections.

use crate::console::components::{
    error_of, loaded, saved, Confirm, FieldError, FormError, Frame, When,
};
use crate::console::server_fns::{settings, ClearWebhook, SetWebhook, SettingsData, TestWebhook};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// `/settings`: the webhook's URL (its first path segment; the whole URL, which can hold
/// a token, and the secret shown on request with `?reveal=1`), format, threshold, a test notice, and its removal. Every form works without JavaScript.
#[component]
pub fn SettingsPage() -> impl IntoView {
    let set = ServerAction::<SetWebhook>::new();
    let clear = ServerAction::<ClearWebhook>::new();
    let test = ServerAction::<TestWebhook>::new();
    let query = use_query_map();
    let reveal = move || query.read().get("reveal").as_deref() == Some("1");
    let data = Resource::new(
        move || {
            (
                reveal(),
                set.version().get() + clear.version().get() + test.version().get(),
            )
        },
        |(reveal, _)| settings(reveal),
    );
    let err = error_of(set);
    let test_err = error_of(test);
    let is_saved = saved(set, "webhook");
    let is_removed = saved(clear, "webhook-removed");
    view! {
        <Frame title="Settings">
            <h1>"Settings"</h1>
            <section class="card" id="webhook">
                <h2>"Notifications"</h2>
                <p class="muted">"Graft posts a notice to this URL when an agent asks for an approval, when a vendor's calls keep failing, and when a vendor refuses a connection's credential (on a call or a test). Each notice is signed as Standard Webhooks sign them (headers webhook-id, webhook-timestamp, webhook-signature: HMAC-SHA256 with the secret) and retried up to 3 times with growing waits when the receiver fails. The Slack format is a body a Slack incoming webhook accepts."</p>
                <FormError err/>
                <FormError err=test_err/>
                {move || is_saved.get().then(|| view! { <p class="ok" role="status">"Webhook saved."</p> })}
                {move || is_removed.get().then(|| view! { <p class="ok" role="status">"Webhook removed: no notices are sent."</p> })}
                {move || test.value().get().and_then(Result::ok).map(|said| {
                    let class = if said.starts_with("Delivered") { "ok" } else { "warning" };
                    view! { <p class=class role="status" id="test-said">{said}</p> }
                })}
                {loaded(data, "Loading…", move |d| webhook_view(d, set, clear, test, err))}
            </section>
        </Frame>
    }
}

/// The webhook as set, and its forms.
fn webhook_view(
    d: SettingsData,
    set: ServerAction<SetWebhook>,
    clear: ServerAction<ClearWebhook>,
    test: ServerAction<TestWebhook>,
    err: Signal<Option<crate::console::error::ConsoleError>>,
) -> impl IntoView {
    let now = d.now;
    let w = d.webhook.clone();
    let (format, threshold) = w
        .as_ref()
        .map(|w| (w.format.clone(), w.error_threshold))
        .unwrap_or_else(|| ("graft".into(), 5));
    let url_hint = w
        .as_ref()
        .map(|w| format!("leave empty to keep {}", w.url))
        .unwrap_or_else(|| "https://hooks.slack.com/services/…".into());
    let current = w.clone().map(|w| {
        let secret = match w.secret.clone() {
            Some(s) => view! { <code id="webhook-secret">{s}</code>" "<a href="/settings#webhook">"Hide"</a> }.into_any(),
            None => view! { <a href="/settings?reveal=1#webhook">"Show the whole URL and the secret"</a> }.into_any(),
        };
        let shown = w.whole_url.clone().unwrap_or_else(|| w.url.clone());
        view! {
            <dl class="facts">
                <dt>"Posts to"</dt><dd><code id="webhook-url">{shown}</code></dd>
                <dt>"Format"</dt><dd>{w.format.clone()}</dd>
                <dt>"Vendor errors"</dt><dd>{format!("a notice at {} failed calls of one vendor within {} minutes (at most one per vendor each 30 minutes)", w.error_threshold, d.window_minutes)}</dd>
                <dt>"Signing secret"</dt><dd>{secret}</dd>
                <dt>"Set"</dt><dd>"by "{w.changed_by.clone()}" "<When at=w.changed_at now/></dd>
                <dt>"Last delivery"</dt><dd id="last-delivery">{match w.last_delivery.clone() {
                    Some((at, said)) => view! { {said}" "<When at now/> }.into_any(),
                    None => view! { "none from this server since it started" }.into_any(),
                }}</dd>
            </dl>
        }
    });
    let has = w.is_some();
    // after a plain form post's error, what the form held (the secret excepted)
    let typed = |name: &str| err.get_untracked().and_then(|e| e.typed_at(name));
    let typed_url = typed("url").unwrap_or_default();
    let format = typed("format").unwrap_or(format);
    let threshold = typed("error_threshold").unwrap_or_else(|| threshold.to_string());
    view! {
        {current}
        <ActionForm action=set attr:class="stack">
            <label>"Webhook URL"<input type="url" name="url" required=!has autocomplete="off" placeholder=url_hint value=typed_url/></label>
            <FieldError err field="url"/>
            <label>"Format"
                <select name="format">
                    <option value="graft" selected=format == "graft">"graft: JSON with type, timestamp, text and data"</option>
                    <option value="slack" selected=format == "slack">"slack: {\"text\": …} for a Slack incoming webhook"</option>
                </select>
            </label>
            <FieldError err field="format"/>
            <label>"Failed calls of one vendor within 5 minutes that make a notice"
                <input type="number" name="error_threshold" min="1" max="1000" value=threshold/>
            </label>
            <FieldError err field="error_threshold"/>
            <label>"Signing secret (optional, whsec_…)"
                <input name="secret" type="password" autocomplete="new-password" placeholder=if has { "leave empty to keep the one set" } else { "leave empty and Graft makes one" }/>
            </label>
            <FieldError err field="secret"/>
            {has.then(|| view! { <label class="check"><input type="checkbox" name="new_secret" value="on"/>" Make a new secret (the receiver needs the new one)"</label> })}
            <button type="submit" disabled=move || set.pending().get()>{move || if set.pending().get() { "Saving…" } else { "Save webhook" }}</button>
        </ActionForm>
        {has.then(|| view! {
            <ActionForm action=test attr:class="inline">
                <button type="submit" disabled=move || test.pending().get()>{move || if test.pending().get() { "Sending…" } else { "Send a test notice" }}</button>
            </ActionForm>
            <Confirm label="Remove the webhook".into()>
                <p>"No notices are sent after this."</p>
                <ActionForm action=clear attr:class="inline">
                    <button type="submit" class="danger">"Remove the webhook"</button>
                </ActionForm>
            </Confirm>
        })}
    }
}
