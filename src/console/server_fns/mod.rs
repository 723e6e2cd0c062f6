//! The console's server functions (SPEC §6), thin wrappers over the same `Graft` service
//! methods the MCP adapter calls, so a person's change and an agent's change take one code
//! path. Each one requires a signed-in person (the session, `tower-sessions`) and acts as
//! `Actor::Person(name)`. The data types here travel to the browser as JSON and hold no
//! secret except a token being shown once.
//!
//! One file per resource; this one holds the helpers they share. Errors are
//! [`ConsoleError`]; a field's error names the field so the form shows it there.
//! Without JavaScript a form posts to `/api/<name>`, and Leptos redirects back to the page,
//! carrying an error in the URL (`__err`), which the page's `ServerAction` reads.

mod activity;
mod agents;
mod approvals;
mod audit;
mod calls;
mod connections;
mod home;
mod imports;
mod mcp_vendors;
mod oauth;
mod settings;
mod starters;
mod tool_edit;
mod tools;
mod users;
mod vendors;
mod working_set;

pub use activity::*;
pub use agents::*;
pub use approvals::*;
pub use audit::*;
pub use calls::*;
pub use connections::*;
pub use home::*;
pub use imports::*;
pub use mcp_vendors::*;
pub use oauth::*;
pub use settings::*;
pub use starters::*;
pub use tool_edit::*;
pub use tools::*;
pub use users::*;
pub use vendors::*;
pub use working_set::*;

pub use super::error::{ConsoleError, ConsoleResult};
pub use super::words::*;
#[cfg(feature = "ssr")]
use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::console::server::{
    accepts_html, is_local_path, person_of, query_without, ConsoleState, Flash,
};

/// The state and the signed-in person, or `SignedOut`.
#[cfg(feature = "ssr")]
async fn signed_in() -> ConsoleResult<(ConsoleState, crate::service::users::Person)> {
    let state = use_context::<ConsoleState>().ok_or(ConsoleError::Internal)?;
    let session = session().await.map_err(|_| ConsoleError::SignedOut)?;
    let person = person_of(&state.graft, &session)
        .await
        .ok_or(ConsoleError::SignedOut)?;
    Ok((state, person))
}

/// This request's session (the session layer puts it on every console request).
#[cfg(feature = "ssr")]
async fn session() -> ConsoleResult<tower_sessions::Session> {
    leptos_axum::extract()
        .await
        .map_err(|_| ConsoleError::Internal)
}

/// Runs a server function's body and gives its error an HTTP status that says what it is
/// (422 a field, 400 refused, 401 signed out, 500 a fault) instead of 500 for all.
#[cfg(feature = "ssr")]
async fn with_status<T>(
    body: impl std::future::Future<Output = ConsoleResult<T>>,
) -> ConsoleResult<T> {
    let result = body.await;
    // a plain form post (no JavaScript) is redirected back to its page with the error in
    // the URL: its 302 stays
    let form_post = is_form_post();
    if let (Err(e), Some(res), false) = (
        &result,
        use_context::<leptos_axum::ResponseOptions>(),
        form_post,
    ) {
        res.set_status(e.status());
        if let ConsoleError::TooMany { retry_after, .. } = e {
            if let Ok(v) = http::HeaderValue::from_str(&retry_after.to_string()) {
                res.insert_header(http::header::RETRY_AFTER, v);
            }
        }
    }
    result
}

/// Whether this request is a plain form post (no JavaScript: the browser asks for HTML).
#[cfg(feature = "ssr")]
fn is_form_post() -> bool {
    use_context::<http::request::Parts>().is_some_and(|p| accepts_html(&p.headers))
}

/// After a plain form post that succeeded, goes back to the page it came from with
/// `saved=<what>` so the page can say so (a hydrated page reads the action's value).
#[cfg(feature = "ssr")]
fn back_saying_saved(what: &str) {
    if !is_form_post() {
        return;
    }
    let Some(referer) = use_context::<http::request::Parts>().and_then(|p| {
        p.headers
            .get(http::header::REFERER)
            .and_then(|v| v.to_str().ok())
            .and_then(|r| url::Url::parse(r).ok())
    }) else {
        return;
    };
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query_without(
            referer.query().unwrap_or(""),
            &["saved", "__err", "__path"],
        ))
        .append_pair("saved", what)
        .finish();
    let target = format!("{}?{query}", referer.path());
    if is_local_path(&target) {
        leptos_axum::redirect(&target);
    }
}

/// Calls the console shows on one page.
#[cfg(feature = "ssr")]
const CALLS_SHOWN: i64 = 20;

/// Parses a whole number typed in a field. Errors: a field error naming the field.
#[cfg(feature = "ssr")]
pub(crate) fn number(field: &str, label: &str, text: &str) -> ConsoleResult<i64> {
    text.trim()
        .parse::<i64>()
        .map_err(|_| ConsoleError::field(field, format!("{label} must be a whole number")))
}

/// Refuses a destructive action that was not confirmed (issue 14.5): the console's
/// second step sends `confirm=yes`. Errors: `Refused` saying what the action does and
/// that nothing was done (the step is not a field the person fills).
#[cfg(feature = "ssr")]
pub(crate) fn confirmed(confirm: Option<&str>, what: &str) -> ConsoleResult<()> {
    match confirm {
        Some("yes") => Ok(()),
        _ => Err(ConsoleError::Refused(format!(
            "Nothing was done: {what}, so it needs its second step (confirm)."
        ))),
    }
}

#[cfg(feature = "ssr")]
pub(crate) fn split_tool(tool: &str) -> ConsoleResult<(&str, &str)> {
    crate::domain::names::split_qualified(tool)
        .ok_or_else(|| ConsoleError::Refused(format!("{tool:?} is not vendor__name")))
}
