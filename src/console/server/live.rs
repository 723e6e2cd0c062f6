//! `GET /console/events`: the stream a signed-in person's open console tab follows
//! (issue 28.3), as server-sent events (HTML Living Standard §9.2). Each event's data
//! names the topics that changed (`approvals,calls`; [`crate::service::live::NAMES`]),
//! never the data itself: the page loads what it shows through its server functions,
//! which check the session as every load does.

use super::session::person_of;
use super::ConsoleState;
use crate::service::live::{self, Topics};
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream, StreamExt};
use http::StatusCode;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use tower_sessions::Session;

/// Streams open at once in this process; a tab past it gets 503 and its browser
/// tries again later.
pub const MAX_STREAMS: usize = 1_000;

/// A stream ends after this long, and the browser reconnects through the gate, so a
/// signed-out session's stream does not outlive it by more.
const STREAM_LIFETIME: Duration = Duration::from_secs(300);

/// Changes within this time after the first one go out as one event.
const GATHER: Duration = Duration::from_millis(200);

/// The stream: first a `ready` event, then one event per burst of changes, a comment
/// every 15 s to keep proxies from closing it; the browser reconnects 1 s after it
/// ends (`retry`). Signed out: 401.
pub async fn console_events(State(state): State<ConsoleState>, session: Session) -> Response {
    if person_of(&state.graft, &session).await.is_none() {
        return (StatusCode::UNAUTHORIZED, "sign in first").into_response();
    }
    let bus = state.graft.live();
    if bus.streams() >= MAX_STREAMS {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many console tabs follow changes; reload later",
        )
            .into_response();
    }
    let rx = bus.subscribe();
    Sse::new(events(rx, Instant::now() + STREAM_LIFETIME))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The events of one stream until `until`.
fn events(
    rx: tokio::sync::broadcast::Receiver<Topics>,
    until: Instant,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let ready = stream::once(async {
        Ok(Event::default()
            .event("ready")
            .retry(Duration::from_secs(1))
            .data("ready"))
    });
    let changes = stream::unfold(rx, move |mut rx| async move {
        let first = match tokio::time::timeout_at(until, rx.recv()).await {
            Ok(Ok(t)) => t,
            Ok(Err(RecvError::Lagged(_))) => live::ALL,
            Ok(Err(RecvError::Closed)) | Err(_) => return None,
        };
        tokio::time::sleep(GATHER).await;
        let mut topics = first;
        loop {
            match rx.try_recv() {
                Ok(t) => topics |= t,
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => topics = live::ALL,
                Err(_) => break,
            }
        }
        Some((Ok(Event::default().data(live::names(topics))), rx))
    });
    ready.chain(changes)
}
