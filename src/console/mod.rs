//! The console for people (SPEC §6): Leptos pages rendered on the server (every form works
//! without JavaScript) and hydrated in the browser (the same forms, without page loads).
//! `server_fns` holds the server functions over the service (one file per resource),
//! `pages` the routes (one file per page), `components` the pieces they share, `words`
//! the wording of causes and states, `snippets` the client configurations and the Graft
//! skill, and `server` (ssr only) sessions, the gate, the sign-in throttle and uploads.
//!
//! Every route renders with `SsrMode::Async`: the page is sent once its data is loaded,
//! so a browser without JavaScript gets the whole page (streamed fragments need JS).

pub mod components;
pub mod error;
pub mod live;
pub mod pages;
pub mod server_fns;
pub mod words;

#[cfg(feature = "ssr")]
pub mod server;
pub mod snippets;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{path, SsrMode};

/// The HTML document around the app (server side).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The page for an address the console does not have (404 when rendered on the server).
#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(http::StatusCode::NOT_FOUND);
    }
    view! { <main><h1>"Not found"</h1><p><a href="/">"Home"</a>" · "<a href="/agents">"Agents"</a></p></main> }
}

/// The root component: the console's routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    live::provide_live();
    view! {
        <Stylesheet id="graft" href="/pkg/graft.css"/>
        <Title text="Graft"/>
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/") view=pages::HomePage ssr=SsrMode::Async/>
                <Route path=path!("/login") view=pages::LoginPage ssr=SsrMode::Async/>
                <Route path=path!("/agents") view=pages::AgentsPage ssr=SsrMode::Async/>
                <Route path=path!("/agents/:name") view=pages::AgentPage ssr=SsrMode::Async/>
                <Route path=path!("/agents/:name/token") view=pages::TokenPage ssr=SsrMode::Async/>
                <Route path=path!("/tools") view=pages::ToolboxPage ssr=SsrMode::Async/>
                <Route path=path!("/tools/:vendor/:name") view=pages::ToolPage ssr=SsrMode::Async/>
                <Route path=path!("/vendors") view=pages::VendorsPage ssr=SsrMode::Async/>
                <Route path=path!("/vendors/:slug") view=pages::VendorPage ssr=SsrMode::Async/>
                <Route path=path!("/approvals") view=pages::ApprovalsPage ssr=SsrMode::Async/>
                <Route path=path!("/activity") view=pages::ActivityPage ssr=SsrMode::Async/>
                <Route path=path!("/calls") view=pages::CallsPage ssr=SsrMode::Async/>
                <Route path=path!("/calls/:id") view=pages::CallPage ssr=SsrMode::Async/>
                <Route path=path!("/audit") view=pages::AuditPage ssr=SsrMode::Async/>
                <Route path=path!("/starters") view=pages::StartersPage ssr=SsrMode::Async/>
                <Route path=path!("/starters/:name") view=pages::TemplatePage ssr=SsrMode::Async/>
                <Route path=path!("/account") view=pages::AccountPage ssr=SsrMode::Async/>
                <Route path=path!("/settings") view=pages::SettingsPage ssr=SsrMode::Async/>
            </Routes>
        </Router>
    }
}
