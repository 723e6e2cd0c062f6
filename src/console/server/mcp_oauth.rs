//! `GET /vendors/oauth/callback`: where an MCP vendor's authorization server sends the
//! person back after they authorized Graft there (issue 27.1). The signed-in person who
//! started the authorization finishes it; they land on the vendor's page, or on Vendors
//! with the reason it failed.

use super::session::person_of;
use super::ConsoleState;
use crate::console::words::segment;
use crate::service::Actor;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

/// The callback (RFC 6749 §4.1.2, with RFC 9207's `iss` when given): exchanges the code
/// through [`crate::service::Graft::finish_mcp_oauth`], then redirects to
/// `/vendors/<slug>?oauth=connected`, or to the Vendors page saying why (through the
/// person's one-time store).
pub async fn mcp_oauth_callback(
    State(state): State<ConsoleState>,
    session: Session,
    uri: http::Uri,
) -> Response {
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let name = person.name.clone();
    let callback = format!(
        "{}{}",
        state.public_url.trim_end_matches('/'),
        uri.path_and_query().map(|p| p.as_str()).unwrap_or("")
    );
    match state
        .graft
        .finish_mcp_oauth(&Actor::Person(person.name), &callback)
        .await
    {
        Ok((slug, _)) => {
            Redirect::to(&format!("/vendors/{}?oauth=connected", segment(&slug))).into_response()
        }
        Err(e) => {
            // the reason goes through the person's own one-time store, never in the link
            // (a link could carry any words)
            let id = state.flash.put(&name, super::Flash::Failed(e.to_string()));
            Redirect::to(&format!("/vendors?import={id}")).into_response()
        }
    }
}
