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

/// Least time between two events of one stream: under a stream of calls a tab reloads
/// what it shows at most once a second, whatever the rate.
const MIN_GAP: Duration = Duration::from_secs(1);

/// The stream: first a `ready` event, then one event per burst of changes (at most one
/// a second), a comment
/// every 15 s to keep proxies from closing it; the browser reconnects 1 s after it
/// ends (`retry`). Signed out: 401.
pub async fn console_events(State(state): State<ConsoleState>, session: Session) -> Response {
    if person_of(&state.graft, &session).await.is_none() {
        return (StatusCode::UNAUTHORIZED, "sign in first").into_response();
    }
    let bus = state.graft.live();
    if bus.closing().is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "Graft is stopping").into_response();
    }
    if bus.streams() >= MAX_STREAMS {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many console tabs follow changes; reload later",
        )
            .into_response();
    }
    let rx = bus.subscribe();
    Sse::new(events(rx, Instant::now() + STREAM_LIFETIME, bus.closing()))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The events of one stream until `until`, or until `closing` (the process stops).
fn events(
    rx: tokio::sync::broadcast::Receiver<Topics>,
    until: Instant,
    closing: tokio_util::sync::CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let ready = stream::once(async {
        Ok(Event::default()
            .event("ready")
            .retry(Duration::from_secs(1))
            .data("ready"))
    });
    let changes = stream::unfold((rx, None), move |(mut rx, last): (_, Option<Instant>)| {
        let closing = closing.clone();
        async move {
            let heard = tokio::select! {
                _ = closing.cancelled() => return None,
                heard = tokio::time::timeout_at(until, rx.recv()) => heard,
            };
            let first = match heard {
                Ok(Ok(t)) => t,
                Ok(Err(RecvError::Lagged(_))) => live::ALL,
                Ok(Err(RecvError::Closed)) | Err(_) => return None,
            };
            let gathered = Instant::now() + GATHER;
            tokio::time::sleep_until(last.map_or(gathered, |l| gathered.max(l + MIN_GAP))).await;
            let mut topics = first;
            loop {
                match rx.try_recv() {
                    Ok(t) => topics |= t,
                    Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {
                        topics = live::ALL
                    }
                    Err(_) => break,
                }
            }
            Some((
                Ok(Event::default().data(live::names(topics))),
                (rx, Some(Instant::now())),
            ))
        }
    });
    ready.chain(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_ends_when_the_process_stops() {
        let bus = live::LiveBus::default();
        let stream = events(
            bus.subscribe(),
            Instant::now() + STREAM_LIFETIME,
            bus.closing(),
        );
        // the bus stays (its sender is not dropped): only closing can end the stream
        let closing = bus.closing();
        let stopper = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            closing.cancel();
        });
        // ready, then the end (well before the stream's five minutes)
        let all = tokio::time::timeout(Duration::from_secs(5), stream.collect::<Vec<_>>())
            .await
            .expect("the stream ended");
        assert_eq!(all.len(), 1);
        stopper.await.unwrap();
        assert!(bus.closing().is_cancelled());
    }

    #[tokio::test]
    async fn a_burst_of_changes_reaches_a_tab_at_most_once_a_second() {
        let bus = std::sync::Arc::new(live::LiveBus::default());
        let stream = events(
            bus.subscribe(),
            Instant::now() + STREAM_LIFETIME,
            bus.closing(),
        );
        // a change every 50 ms for 1.5 s (30 of them), as a busy agent's calls would
        let sender = bus.clone();
        let calls = tokio::spawn(async move {
            for _ in 0..30 {
                sender.send(live::CALLS);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let seen: Vec<_> = stream
            .take_until(tokio::time::sleep(Duration::from_millis(1600)))
            .collect()
            .await;
        calls.await.unwrap();
        // ready, then one event at once and at most one more in the rest of the time
        // (without the gap: one each 200 ms, about seven)
        assert!((2..=3).contains(&seen.len()), "{} events", seen.len());
    }
}
