//! Accepting connections with limits (security review 32.2): no one can take the port
//! down by opening connections and sending nothing.
//!
//! - At most `max_connections` open at once, and `max_per_address` from one client
//!   address; a connection past either is closed at once (the client sees a reset or an
//!   empty answer; nothing is read from it).
//! - HTTP/1.1: a request's head must arrive within `header_timeout`, and a kept-alive
//!   connection that sends no next request within that time is closed (hyper's
//!   `header_read_timeout` also runs while a connection waits for its next request).
//!   HTTP/2: at most 64 concurrent streams, and a connection whose peer stops answering
//!   pings is closed.
//! - Each request carries the client's address as axum's `ConnectInfo<SocketAddr>`.
//! - Shutdown: stop accepting, let every connection finish its request in flight (SSE
//!   streams end when the MCP sessions close), and past `drain` close what is left.
//!
//! hyper-util's connection builder is used directly because `axum::serve` offers neither
//! header timeouts nor connection limits.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Connection limits (README "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections at once (`GRAFT_MAX_CONNECTIONS`, default 1024).
    pub max_connections: usize,
    /// Open connections from one client address (`GRAFT_MAX_CONNECTIONS_PER_ADDRESS`,
    /// default 256: agents on one machine share its address).
    pub max_per_address: usize,
    /// Time to send a request's head, and the most a kept-alive connection may stay idle
    /// (`GRAFT_HEADER_TIMEOUT`, default 10 s).
    pub header_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_per_address: 256,
            header_timeout: Duration::from_secs(10),
        }
    }
}

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
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(64)
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20));
    let builder = Arc::new(builder);
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: pause instead of spinning
                    tracing::warn!(error = %e, "accepting a connection failed");
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
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
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
