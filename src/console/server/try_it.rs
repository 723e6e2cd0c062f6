//! The dry run of a tool's "Try it" form (issue 28.10): a plain form post, so that the
//! values typed (a password, an API key in a body field) never go in a page address,
//! a browser's history or a server's access log.

use super::session::person_of;
use super::ConsoleState;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Redirect, Response};
use std::collections::BTreeMap;
use tower_sessions::Session;

/// `POST /tools/try` (form: `vendor`, `name`, and the form's fields `in.FIELD`, or `in.`
/// for the whole input as JSON): a dry run by the signed-in person
/// ([`crate::console::server_fns::dry_run`]), kept for them for 10 minutes, then a 303 to
/// the tool's page that shows it (`/tools/V/N?tried=ID#try`). Signed out: to `/login`
/// (the gate sends a signed-out post there first). A form over axum's body limit (2 MB)
/// gets 413.
pub async fn try_tool(
    State(state): State<ConsoleState>,
    session: Session,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let (mut vendor, mut name, mut values) = (String::new(), String::new(), BTreeMap::new());
    for (k, v) in form {
        match (k.as_str(), k.strip_prefix("in.")) {
            ("vendor", _) => vendor = v,
            ("name", _) => name = v,
            (_, Some(field)) => {
                values.insert(field.to_string(), v);
            }
            _ => {}
        }
    }
    let target =
        crate::console::server_fns::dry_run(&state, &person.name, &vendor, &name, values).await;
    Redirect::to(&target).into_response()
}
