//! `GET /healthz`: up or not for anyone; details (database, search mode, counts) only
//! with the metrics token (security review 32). `GET /metrics`: Prometheus metrics
//! (issue 30.1), for the metrics token, or for loopback clients when none is set.

use super::auth;
use crate::service::Graft;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;
use std::sync::Arc;

/// What `/healthz` reads.
#[derive(Clone)]
pub(crate) struct HealthState {
    /// The service (the database check and counts).
    pub(crate) graft: Graft,
    /// `GRAFT_METRICS_TOKEN`.
    pub(crate) metrics_token: Option<Arc<str>>,
    /// The MCP sessions (2025 era), counted at each scrape.
    pub(crate) sessions: Arc<LocalSessionManager>,
    /// `GRAFT_TRUSTED_PROXIES`: a request through one of them is not a loopback client.
    pub(crate) trusted_proxies: Arc<Vec<std::net::IpAddr>>,
}

/// The host name of a `Host` value, without its port (`[::1]:3000` → `[::1]`).
fn host_name(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `GET /metrics` (issue 30.1): this server's metrics in the OpenMetrics text format
/// ([`crate::metrics::CONTENT_TYPE`]), the gauges read at the scrape.
///
/// Who may scrape: with `GRAFT_METRICS_TOKEN` set, a request with `Authorization: Bearer
/// <token>` (else 401 with `WWW-Authenticate: Bearer`); without it, a client on loopback
/// that is not a trusted reverse proxy, names a loopback `Host` and carries no
/// `Forwarded`, `X-Forwarded-For` or `X-Real-IP` (else 403 saying to set the token). With
/// `GRAFT_METRICS=off`, 404. A database that fails the gauges' counts gives 503.
pub(crate) async fn metrics(
    State(state): State<HealthState>,
    req: axum::extract::Request,
) -> axum::response::Response {
    let headers = req.headers();
    // the accept loop gives every request its peer; a request without one (driven in
    // process) is no loopback client
    let peer = req
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip().to_canonical());
    use http::StatusCode;
    let graft = &state.graft;
    if !graft.metrics().enabled() {
        return (
            StatusCode::NOT_FOUND,
            "metrics are off (GRAFT_METRICS=off)\n",
        )
            .into_response();
    }
    match state.metrics_token.as_deref() {
        Some(token) if !has_metrics_token(headers, Some(token)) => {
            return (
                StatusCode::UNAUTHORIZED,
                [(http::header::WWW_AUTHENTICATE, "Bearer")],
                "/metrics needs Authorization: Bearer <GRAFT_METRICS_TOKEN>\n",
            )
                .into_response();
        }
        Some(_) => {}
        None => {
            // a proxy on this host makes every client look local: a forwarded request,
            // or one through a listed proxy, is someone else's; and a loopback name in
            // Host keeps a DNS-rebinding page in a local browser out
            let forwarded = ["forwarded", "x-forwarded-for", "x-real-ip"]
                .iter()
                .any(|h| headers.contains_key(*h));
            let loopback_host = headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(host_name)
                .is_some_and(|h| matches!(h, "localhost" | "127.0.0.1" | "[::1]" | "::1"));
            if forwarded
                || !loopback_host
                || !peer.is_some_and(|ip| ip.is_loopback() && !state.trusted_proxies.contains(&ip))
            {
                return (
                    StatusCode::FORBIDDEN,
                    "/metrics answers loopback clients only: set GRAFT_METRICS_TOKEN to scrape from another host or through a proxy\n",
                )
                    .into_response();
            }
        }
    }
    let mut gauges = match graft.metric_gauges().await {
        Ok(g) => g,
        Err(e) => {
            tracing::error!(error = ?e, "metrics: the database did not answer the gauges' counts");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is unavailable\n",
            )
                .into_response();
        }
    };
    gauges.sessions = state.sessions.sessions.read().await.len() as i64;
    (
        [(http::header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        graft.metrics().encode(gauges),
    )
        .into_response()
}

/// Whether a request carries `Authorization: Bearer <token>` for `token` (compared in
/// constant time).
pub(crate) fn has_metrics_token(headers: &http::HeaderMap, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return false;
    };
    match auth::bearer_token(headers.get(http::header::AUTHORIZATION)) {
        Some(Ok(given)) => {
            use sha2::Digest;
            // equal-length digests, compared without an early exit
            let (a, b) = (sha2::Sha256::digest(given), sha2::Sha256::digest(token));
            a.iter()
                .zip(b.iter())
                .fold(0u8, |acc, (x, y)| acc | (x ^ y))
                == 0
        }
        _ => false,
    }
}

/// `GET /healthz`: 200 `{"status":"ok","search":{"mode":"semantic"|"lexical","model":
/// ID|null}}` when the database answers, else 503 `{"status":"unavailable","reason":…}`
/// (issue 11.7). With `Authorization: Bearer <GRAFT_METRICS_TOKEN>` it adds `tools` (the
/// toolbox's size) and `streams` (open change channels: 2025-era sessions' notifiers and
/// 2026-era listen streams), which anonymous callers do not see (security review 32.21).
pub(crate) async fn healthz(
    State(state): State<HealthState>,
    headers: http::HeaderMap,
) -> impl IntoResponse {
    let graft = &state.graft;
    match graft.toolbox_size().await {
        Ok(n) => {
            let mut body = json!({"status": "ok", "search": graft.search_status()});
            if has_metrics_token(&headers, state.metrics_token.as_deref()) {
                body["tools"] = json!(n);
                body["streams"] = json!(graft.hub().channels());
            }
            (http::StatusCode::OK, Json(body))
        }
        Err(e) => {
            tracing::error!(error = ?e, "health check failed");
            let reason = match &e {
                crate::service::ServiceError::Unavailable(cause) => {
                    format!("the database is unavailable: {cause}")
                }
                _ => "the database failed a query".to_string(),
            };
            (
                http::StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable", "reason": reason})),
            )
        }
    }
}
