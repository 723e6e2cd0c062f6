//! Graft: a tool server for AI agents. One shared toolbox of vendor API tools, a working
//! set of promoted tools per agent, served over MCP, steered from a web console.
//!
//! Layout (STYLE.md): `domain` (pure rules) → `service` (the use cases, the only API the
//! adapters call) → `db` (the only sqlx user); adapters: `mcp`, `server` (axum), `cli`,
//! and the Leptos `console` shared by the server and the browser (`hydrate`).

pub mod clients;
pub mod console;
pub mod numbers;

#[cfg(feature = "ssr")]
pub mod cli;
#[cfg(feature = "ssr")]
pub mod config;
#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod domain;
#[cfg(feature = "ssr")]
pub mod mcp;
#[cfg(feature = "ssr")]
pub mod metrics;
#[cfg(feature = "ssr")]
pub mod proxy;
#[cfg(feature = "ssr")]
pub mod semantic;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod service;
#[cfg(feature = "ssr")]
pub mod telemetry;

/// The browser entry point: hydrates the server-rendered console.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(console::App);
    // a mark the browser tests wait for: clicks before hydration would be plain posts
    if let Some(body) = leptos::prelude::document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
    }
}
