//! Accepting connections with limits (security review 32.2): no one can take the port
//! down by opening connections and sending nothing.
//!
//! - At most `max_connections` open at once, and `max_per_address` from one client
//!   address; a connection past either is closed at once (the client sees a reset or an
//!   empty answer; nothing is read from it).
//! - HTTP/1.1 only (MCP clients and browsers speak it; HTTP/2 behind a TLS proxy ends at
//!   the proxy): a request's head must arrive within `header_timeout`, and a kept-alive
//!   connection that sends no next request within that time is closed (hyper's
//!   `header_read_timeout` also runs while a connection waits for its next request); a
//!   request's body must arrive within `body_timeout` ([`body_deadline`]).
//! - The process's open-file limit is raised to its hard limit at start, and the
//!   connection limit kept below it, so that the limit is met before the file table.
//! - Each request carries the client's address as axum's `ConnectInfo<SocketAddr>`.
//! - Shutdown: stop accepting, let every connection finish its request in flight (SSE
//!   streams end when the MCP sessions close), and past `drain` close what is left.
//!
//! hyper's HTTP/1.1 connection builder is used directly because `axum::serve` offers
//! neither header timeouts nor connection limits.

pub use crate::config::ConnectionLimits;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Open connections per client address.
#[derive(Default)]
struct PerAddress(Mutex<HashMap<IpAddr, usize>>);

/// One counted connection of an address; uncounted when dropped.
struct AddressSlot(Arc<PerAddress>, IpAddr);

impl PerAddress {
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<AddressSlot> {
        let mut map = self.0.lock().expect("address counts");
        let n = map.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(AddressSlot(self.clone(), ip))
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut map = self.0 .0.lock().expect("address counts");
        if let Some(n) = map.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.1);
            }
        }
    }
}

/// Raises the soft open-file limit to the hard one (Unix), and answers how many
/// connections fit below it: the limit less 128 for the database, the log and vendor
/// calls. `usize::MAX` where the limit cannot be read.
fn raise_file_limit() -> usize {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct given
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return usize::MAX;
            }
            if lim.rlim_cur < lim.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: lim.rlim_max,
                    rlim_max: lim.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    lim = raised;
                }
            }
        }
        let fit = (lim.rlim_cur as usize).saturating_sub(128).max(16);
        tracing::debug!(
            open_files = lim.rlim_cur,
            connections = fit,
            "open-file limit"
        );
        fit
    }
    #[cfg(not(unix))]
    usize::MAX
}

/// A request body that must arrive whole within `limit` of the request's start (a body
/// sent a byte at a time otherwise holds its connection for ever): past it the body
/// ends with an error, which its handler answers as a bad request.
pub async fn body_deadline(
    axum::extract::State(limit): axum::extract::State<Duration>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use futures::StreamExt;
    let (parts, body) = req.into_parts();
    let deadline = tokio::time::Instant::now() + limit;
    let stream = body.into_data_stream();
    let timed = futures::stream::unfold((stream, false), move |(mut s, done)| async move {
        if done {
            return None;
        }
        match tokio::time::timeout_at(deadline, s.next()).await {
            Ok(Some(item)) => Some((item, (s, false))),
            Ok(None) => None,
            Err(_) => Some((
                Err(axum::Error::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body did not arrive in time",
                ))),
                (s, true),
            )),
        }
    });
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from_stream(timed),
    ))
    .await
}

/// Serves `router` on `listener` within `limits` until `stop` is cancelled (see the
/// module doc); then waits for open connections, `drain` at most.
/// Errors: none once serving; accept errors (too many open files) are logged and
/// retried after a short pause.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
    drain: Duration,
) -> std::io::Result<()> {
    let total = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_address = Arc::new(PerAddress::default());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let limits = ConnectionLimits {
        max_connections: limits.max_connections.min(raise_file_limit()),
        ..limits
    };
    // hyper's HTTP/1.1 connection itself: hyper-util's auto builder detects HTTP/2 on
    // upgradeable connections even when told to speak HTTP/1 only
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    let mut last_accept_warning: Option<std::time::Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: pause instead of spinning, and say so once in
                    // a while rather than on every try
                    if last_accept_warning.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
                        tracing::warn!(error = %e, "accepting connections fails (said at most every 10 s)");
                        last_accept_warning = Some(std::time::Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = total.clone().try_acquire_owned() else {
            tracing::warn!(
                max = limits.max_connections,
                "connection refused: the server has the most open connections allowed"
            );
            continue;
        };
        let Some(slot) = per_address.take(peer.ip(), limits.max_per_address) else {
            tracing::warn!(address = %peer.ip(), max = limits.max_per_address, "connection refused: this address has the most open connections allowed");
            continue;
        };
        // without it the last small write of an answer waits for the client's delayed
        // ACK (~40 ms per request on a kept-alive connection; Nagle, RFC 896)
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY on an accepted socket");
        }
        let router = router.clone();
        let service =
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(req.map(axum::body::Body::new))
            });
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            let _held = (permit, slot);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("shutdown: connections still open after {drain:?}; closing them");
    }
    Ok(())
}
