//! `GET /audit.csv`: the audit log as CSV for a signed-in person (issue 28.8), with the
//! Audit page's filters (`person`, `action`, `target`, `days`).

use super::session::person_of;
use super::ConsoleState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use http::{header, StatusCode};
use std::collections::HashMap;
use tower_sessions::Session;

/// The CSV download ([`crate::service::audit::audit_csv`]; RFC 4180, `text/csv`, as an
/// attachment named `graft-audit.csv`), newest first, at most
/// [`crate::service::audit::AUDIT_PAGE_MAX`] events. Signed out: to `/login`; a bad
/// filter: 400 with the reason in words.
pub async fn audit_csv(
    State(state): State<ConsoleState>,
    session: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if person_of(&state.graft, &session).await.is_none() {
        return Redirect::to("/login?next=/audit").into_response();
    }
    let days = match q.get("days").map(|d| d.trim()).filter(|d| !d.is_empty()) {
        None => None,
        Some(d) => match d.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return (StatusCode::BAD_REQUEST, "days must be a whole number").into_response()
            }
        },
    };
    let query = match crate::service::audit::audit_query(
        q.get("person").map(String::as_str),
        q.get("action").map(String::as_str),
        q.get("target").map(String::as_str),
        days,
        state.graft.clock_now(),
    ) {
        Ok(query) => query,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    match state.graft.audit_events(&query).await {
        Ok(rows) => (
            [
                (
                    header::CONTENT_TYPE,
                    "text/csv; charset=utf-8; header=present",
                ),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"graft-audit.csv\"",
                ),
                (header::CACHE_CONTROL, "no-store"),
            ],
            crate::service::audit::audit_csv(&rows),
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "the audit log could not be read");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the audit log could not be read",
            )
                .into_response()
        }
    }
}
