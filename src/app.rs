//! The Leptos application shell, rendered on the server and hydrated in the browser.
//! The console pages (SPEC §6) grow here; for now one page says what Graft is and
//! where agents connect.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::StaticSegment;

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

/// The root component: routes of the console.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="graft" href="/pkg/graft.css"/>
        <Title text="Graft"/>
        <Router>
            <main>
                <Routes fallback=|| view! { <p>"Page not found."</p> }>
                    <Route path=StaticSegment("") view=HomePage/>
                </Routes>
            </main>
        </Router>
    }
}

/// The landing page.
#[component]
fn HomePage() -> impl IntoView {
    view! {
        <h1>"Graft"</h1>
        <p>"A tool server for AI agents: one shared toolbox of vendor API tools, and a working set per agent, served over MCP at "<code>"/mcp"</code>"."</p>
        <p>"The console for people (agents, working sets, history, approvals) is coming; until then, use the "<code>"graft"</code>" command line."</p>
    }
}
