//! Signing in and one's account (SPEC §6).

use crate::console::components::{
    clear_on_save, error_of, loaded, saved, FieldError, FormError, Frame,
};
use crate::console::server_fns::{whoami, ChangePassword, Login};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/login`: name and password.
#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_default();
    let err = error_of(login);
    view! {
        <Title text="Sign in · Graft"/>
        <main class="narrow">
            <h1>"Sign in to Graft"</h1>
            <FormError err/>
            {move || {
                let fields = view! {
                    <input type="hidden" name="next" value=next/>
                    <label>"Name"<input name="name" autocomplete="username" required/></label>
                    <label>"Password"<input type="password" name="password" autocomplete="current-password" required/></label>
                    <button type="submit">"Sign in"</button>
                };
                // a page outside the console's router (the OAuth consent) needs a whole
                // page load after signing in: a plain form post, redirected by the server
                if next().starts_with("/oauth/") {
                    view! { <form method="post" action="/api/login" class="stack">{fields}</form> }.into_any()
                } else {
                    view! { <ActionForm action=login attr:class="stack">{fields}</ActionForm> }.into_any()
                }
            }}
            <p class="muted">"On first start Graft creates "<code>"admin"</code>" and prints its password once to the server log; "<code>"graft user add NAME"</code>" adds people."</p>
        </main>
    }
}

/// `/account`: who is signed in, and the password change.
#[component]
pub fn AccountPage() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    let me = Resource::new(|| (), |_| whoami());
    let err = error_of(change);
    let saved = saved(change, "password");
    view! {
        <Frame title="Account" refresh=change.version()>
            <h1>"Account"</h1>
            {loaded(me, "Loading…", |name| view! { <p>"Signed in as "<strong>{name}</strong>"."</p> })}
            <section class="card">
                <h2>"Change password"</h2>
                <FormError err/>
                {move || saved.get().then(|| view! { <p class="ok" role="status">"Password changed."</p> })}
                <ActionForm action=change node_ref=clear_on_save(change) attr:class="stack">
                    <label>"Current password"<input type="password" name="current" autocomplete="current-password"/></label>
                    <FieldError err field="current"/>
                    <label>"New password (10 characters or more)"<input type="password" name="new" autocomplete="new-password"/></label>
                    <FieldError err field="new"/>
                    <label>"New password again"<input type="password" name="confirm" autocomplete="new-password"/></label>
                    <FieldError err field="confirm"/>
                    <button type="submit" disabled=move || change.pending().get()>{move || if change.pending().get() { "Changing…" } else { "Change password" }}</button>
                </ActionForm>
            </section>
        </Frame>
    }
}
