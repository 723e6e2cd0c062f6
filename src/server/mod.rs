//! axum glue: one router on one port for `/mcp` (rmcp's `StreamableHttpService` behind
//! the bearer-auth layer), `/healthz` and the Leptos console; graceful shutdown.

pub mod auth;

pub mod listen;

use crate::config::Settings;
use crate::console::server as console;
use crate::console::{shell, App};
use crate::mcp::GraftMcp;
pub use crate::service::AuthedAgent;
use crate::service::Graft;
use auth::SessionBindings;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use leptos::prelude::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Loopback `Host` values always accepted on `/mcp` (any port).
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

/// Browser origins always accepted on `/mcp`: loopback pages on any port.
const LOOPBACK_ORIGINS: &[&str] = &["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// The console's page routes as the router serves them (leptos paths, e.g.
/// `/agents/:name`), and `/`: every one of them needs a signed-in person but `/login`.
/// Tests walk this list so that no route is forgotten (issue 13.4).
pub fn console_routes() -> Vec<String> {
    let mut paths: Vec<String> = generate_route_list(App)
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    paths.push("/".into());
    paths.sort();
    paths.dedup();
    paths
}

/// The console's server functions' paths (`/api/<name>`), as registered with leptos:
/// every one but `/api/login` needs a signed-in person.
pub fn console_server_fns() -> Vec<String> {
    let mut paths: Vec<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(p, _)| p.to_string())
        .collect();
    paths.sort();
    paths
}

/// A built server bound to its listener, ready to [`Application::run`].
pub struct Application {
    listener: TcpListener,
    router: Router,
    /// Cancelled to stop: by SIGINT/SIGTERM or by [`Application::shutdown_token`].
    shutdown: CancellationToken,
    /// Given to rmcp: cancelled once in-flight calls finished, it closes the sessions
    /// and their streams.
    mcp_token: CancellationToken,
    inflight: Arc<crate::mcp::InFlight>,
    graft: Graft,
    sweep_interval: std::time::Duration,
    /// When the sweeper runs next (ms, the service's clock), shown by the console.
    next_sweep: Arc<std::sync::atomic::AtomicI64>,
    sessions_store: console::SessionDb,
    connection_limits: crate::config::ConnectionLimits,
}

/// How long a shutdown waits for tool calls in flight (a vendor call's own limit is 30 s).
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(35);
/// After the last call returned, how long its answer gets to reach its stream.
const FLUSH_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

impl Application {
    /// Builds the router over `graft` on an already bound `listener` (bind port 0 in
    /// tests, then read [`Application::local_addr`]).
    /// Errors: the listener has no local address, or the session store cannot be set up
    /// (PostgreSQL unreachable).
    pub async fn build(
        settings: &Settings,
        graft: Graft,
        listener: TcpListener,
    ) -> std::io::Result<Self> {
        let shutdown = CancellationToken::new();
        let mcp_token = CancellationToken::new();
        let inflight = Arc::new(crate::mcp::InFlight::default());
        let port = listener.local_addr()?.port();

        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(settings.session_idle);
        let sessions = Arc::new(sessions);
        let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        hosts.extend(settings.allowed_hosts.iter().cloned());
        if let Some(host) = settings.public_url.as_deref().and_then(host_of) {
            hosts.push(host);
        }
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(true)
            .with_json_response(true)
            .with_max_request_body_bytes(MAX_MCP_BODY)
            .with_allowed_hosts(hosts.clone())
            .with_cancellation_token(mcp_token.clone());
        // loopback pages (any port) and configured origins; any other Origin gets 403
        let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
        origins.extend(settings.allowed_origins.iter().cloned());
        if let Some(origin) = settings.public_url.as_deref().and_then(origin_of) {
            origins.push(origin);
        }
        config = config.with_allowed_origins(origins.clone());
        let handler = GraftMcp::new(
            graft.clone(),
            shutdown.clone(),
            inflight.clone(),
            sessions.clone(),
        );
        let mcp = StreamableHttpService::new(move || Ok(handler.clone()), sessions.clone(), config);
        let auth_state = auth::AuthState {
            graft: graft.clone(),
            bindings: Arc::new(SessionBindings::new(sessions)),
        };
        let mcp_router = Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn(jsonrpc_errors))
            .layer(axum::middleware::from_fn_with_state(
                auth_state,
                auth::bearer_auth,
            ))
            // outside the auth layer: a browser's preflight carries no credentials
            .layer(mcp_cors(Arc::new(origins.clone())))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(origins),
                foreign_origins,
            ));

        let leptos_options = LeptosOptions::builder()
            .output_name("graft")
            .site_root(settings.site_root.display().to_string())
            .site_pkg_dir("pkg")
            .site_addr(SocketAddr::from(([127, 0, 0, 1], port)))
            .build();
        let next_sweep = Arc::new(std::sync::atomic::AtomicI64::new(
            graft.clock_now() + settings.sweep_interval.as_millis() as i64,
        ));
        let console_state = console::ConsoleState {
            graft: graft.clone(),
            flash: Arc::new(console::FlashStore::default()),
            public_url: settings.public_url(),
            next_sweep: next_sweep.clone(),
            sign_ins: Arc::new(console::SignInThrottle::default()),
            allowed_hosts: Arc::new(hosts),
            form_errors: Arc::new(console::FormErrors::default()),
            trusted_proxies: Arc::new(settings.trusted_proxies.clone()),
        };
        let secure = settings
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"));
        let (session_layer, sessions_store) = console::session_layer(&graft, secure)
            .await
            .map_err(std::io::Error::other)?;
        if !settings.site_root.join("pkg/graft_bg.wasm").is_file() {
            tracing::warn!(
                site_root = %settings.site_root.display(),
                "the console's browser bundle is missing: pages will be unstyled and never hydrate; run scripts/build-site.sh or set LEPTOS_SITE_ROOT"
            );
        }
        let routes = generate_route_list(App);
        let pages = Router::new()
            .leptos_routes_with_context(
                &leptos_options,
                routes,
                {
                    let state = console_state.clone();
                    move || leptos::prelude::provide_context(state.clone())
                },
                {
                    let options = leptos_options.clone();
                    move || shell(options.clone())
                },
            )
            .fallback(leptos_axum::file_and_error_handler(shell))
            .with_state(leptos_options)
            .layer(axum::middleware::from_fn(console::argument_errors));
        let uploads = Router::new()
            .route(
                "/vendors/import",
                axum::routing::post(console::import_upload).layer(
                    axum::extract::DefaultBodyLimit::max(console::MAX_UPLOAD_REQUEST),
                ),
            )
            .route("/skill/SKILL.md", get(console::skill))
            .with_state(console_state.clone());
        let console = pages
            .merge(uploads)
            .layer(axum::middleware::from_fn_with_state(
                console_state,
                console::gate,
            ))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(settings.site_root.clone()),
                console::pkg_revalidate,
            ))
            .layer(session_layer)
            // pages and the browser bundle (the debug wasm is ~12 MB, ~2 MB gzipped); not
            // /mcp, whose event streams must not be buffered
            .layer(tower_http::compression::CompressionLayer::new());

        let router = Router::new()
            .route("/healthz", get(healthz))
            .with_state(HealthState {
                graft: graft.clone(),
                metrics_token: settings.metrics_token.clone().map(Arc::from),
            })
            .merge(mcp_router)
            .merge(console)
            // every request body arrives whole in time (security review 32.2)
            .layer(axum::middleware::from_fn_with_state(
                settings.connection_limits.body_timeout,
                listen::body_deadline,
            ))
            .layer(tower_http::trace::TraceLayer::new_for_http());
        Ok(Self {
            listener,
            router,
            shutdown,
            mcp_token,
            inflight,
            graft,
            sweep_interval: settings.sweep_interval,
            next_sweep,
            sessions_store,
            connection_limits: settings.connection_limits,
        })
    }

    /// The whole router (`/mcp`, `/healthz`, the console), for driving Graft in process
    /// without a socket (the fuzz targets in `fuzz/` call it with `tower::ServiceExt`).
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A token that stops the server gracefully when cancelled (as SIGINT/SIGTERM do).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until SIGINT, SIGTERM or the shutdown token. Then it stops accepting,
    /// ends listen streams gracefully, lets tool calls in flight finish (35 s at most),
    /// and only then closes the MCP sessions and their streams.
    pub async fn run(self) -> std::io::Result<()> {
        tokio::spawn(sweeper(
            self.graft.clone(),
            self.sweep_interval,
            self.next_sweep.clone(),
            self.shutdown.clone(),
        ));
        {
            use tower_sessions::ExpiredDeletion;
            let store = self.sessions_store.clone();
            let token = self.shutdown.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = token.cancelled() => {}
                    r = store.continuously_delete_expired(std::time::Duration::from_secs(3600)) => {
                        if let Err(e) = r {
                            tracing::warn!(error = ?e, "deleting expired console sessions failed");
                        }
                    }
                }
            });
        }
        tokio::spawn(forward_changes(self.graft.clone(), self.shutdown.clone()));
        let (token, mcp_token, inflight) = (
            self.shutdown.clone(),
            self.mcp_token.clone(),
            self.inflight.clone(),
        );
        // Connections stay up until the calls in flight have answered: only then do the
        // sessions close (which ends their streams) and the server stop accepting.
        let stop = CancellationToken::new();
        let stopping = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = token.cancelled() => {}
                _ = shutdown_signal() => token.cancel(),
            }
            tracing::info!("shutting down: finishing tool calls in flight, then closing streams");
            if !inflight.wait_idle(DRAIN_LIMIT).await {
                tracing::warn!(
                    "shutdown: tool calls still running after {DRAIN_LIMIT:?}; closing anyway"
                );
            }
            // the last answers are still on their way to their streams
            tokio::time::sleep(FLUSH_GRACE).await;
            mcp_token.cancel();
            stopping.cancel();
        });
        // a connection that is still sending its request's head when the server stops
        // gets the header timeout, and a little more, to finish
        let drain = self.connection_limits.header_timeout + std::time::Duration::from_secs(5);
        listen::serve(
            self.listener,
            self.router,
            self.connection_limits,
            stop,
            drain,
        )
        .await
    }
}

/// Forwards working-set changes made by other processes (the CLI, another server) to
/// this server's MCP channels (SPEC §3.5): on PostgreSQL when they are announced
/// ([`forward_notified_changes`]), on SQLite by polling `change_events` every second.
async fn forward_changes(graft: Graft, shutdown: CancellationToken) {
    if let crate::db::Pool::Postgres(pool) = graft.pool() {
        let pool = pool.clone();
        return forward_notified_changes(graft, pool, shutdown).await;
    }
    // None until the cursor could be read (a database briefly unavailable at start must
    // not stop this process from hearing the others for good)
    let mut cursor: Option<i64> = None;
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = ticks.tick() => {
                catch_up(&graft, &mut cursor).await;
            }
        }
    }
}

/// One step of forwarding other processes' changes: with no cursor yet, reads the newest
/// event (where forwarding starts); else forwards the events after the cursor and moves
/// it. Says whether the database answered; a failure is logged and leaves the cursor.
async fn catch_up(graft: &Graft, cursor: &mut Option<i64>) -> bool {
    let step = match *cursor {
        None => graft.change_cursor().await,
        Some(c) => graft.forward_foreign_changes(c).await,
    };
    match step {
        Ok(c) => {
            *cursor = Some(c);
            true
        }
        Err(e) => {
            tracing::warn!(error = ?e, "reading change events failed; retrying");
            false
        }
    }
}

/// Forwards other instances' changes on PostgreSQL: `LISTEN graft_changes`
/// ([`crate::db::CHANGES_CHANNEL`]); each announcement from another origin reads
/// `change_events` after this server's cursor, so a change reaches the agent's streams as
/// soon as it commits, once. When the listening connection drops, sqlx's listener
/// connects and listens again, and this reads whatever was recorded meanwhile: no change
/// is lost. The cursor is read after LISTEN, so nothing falls between the two.
async fn forward_notified_changes(graft: Graft, pool: sqlx::PgPool, shutdown: CancellationToken) {
    use sqlx::postgres::PgListener;
    let pause = std::time::Duration::from_secs(1);
    let mut listener = loop {
        let listening = async {
            let mut l = PgListener::connect_with(&pool).await?;
            l.listen(crate::db::CHANGES_CHANNEL).await?;
            Ok::<_, sqlx::Error>(l)
        };
        match listening.await {
            Ok(l) => break l,
            Err(e) => {
                tracing::warn!(error = ?e, "cannot listen for other instances' changes yet; retrying")
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
    };
    let mut cursor: Option<i64> = None;
    // catch up first (cursor None: start at the newest event)
    let mut behind = true;
    loop {
        if behind {
            behind = !catch_up(&graft, &mut cursor).await;
            if behind {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
                continue;
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            n = listener.try_recv() => match n {
                Ok(Some(n)) => {
                    behind = crate::db::payload_origin(n.payload()) != graft.origin();
                }
                // the connection dropped and was made again: read what was missed
                Ok(None) => {
                    tracing::info!("listening for other instances' changes again");
                    behind = true;
                }
                Err(e) => {
                    tracing::warn!(error = ?e, "lost the change listener; reconnecting");
                    behind = true;
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(pause) => {}
                    }
                }
            }
        }
    }
}

/// The periodic sweep (SPEC §5): every `interval`, first one `interval` after start.
async fn sweeper(
    graft: Graft,
    interval: std::time::Duration,
    next: Arc<std::sync::atomic::AtomicI64>,
    shutdown: CancellationToken,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = ticks.tick() => {
                next.store(
                    graft.clock_now() + interval.as_millis() as i64,
                    std::sync::atomic::Ordering::Relaxed,
                );
                match graft.sweep_scheduled(graft.clock_now()).await {
                    Ok(None) => tracing::debug!("sweep: another instance is sweeping"),
                    Ok(Some(r)) if r.demotions() > 0 => tracing::info!(demoted = r.demotions(), agents = r.agents.len(), "sweep"),
                    Ok(Some(r)) => tracing::debug!(entries = r.entries, "sweep: nothing to demote"),
                    Err(e) => tracing::error!(error = ?e, "sweep failed"),
                }
            }
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// Most bytes of one JSON-RPC message posted to `/mcp` (rmcp's default, set
/// explicitly; an `acquire` with a large input schema fits many times over).
pub const MAX_MCP_BODY: usize = 4 << 20;

/// A JSON-RPC error answer (JSON-RPC 2.0 §5, `id: null` since the request's id could
/// not be read) with HTTP status `status`.
fn jsonrpc_error(status: http::StatusCode, code: i64, message: &str) -> axum::response::Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, Json(body)).into_response()
}

/// Posts to `/mcp` that are not one JSON-RPC message get a JSON-RPC error with HTTP 400
/// in both eras (MCP 2025-11-25 basic/transports: "the body MUST be a single JSON-RPC
/// request, notification, or response"), where rmcp would answer 415 "fail to
/// deserialize": malformed JSON → -32700 parse error; an array (a batch, removed from
/// the protocol in 2025-06-18), another JSON value or an object that is no JSON-RPC
/// message → -32600 invalid request. A body over [`MAX_MCP_BODY`] gets 413.
async fn jsonrpc_errors(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use http::StatusCode;
    let is_json = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if req.method() != http::Method::POST || !is_json {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_MCP_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return jsonrpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                &format!("Invalid Request: the message is over {MAX_MCP_BODY} bytes"),
            )
        }
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            &format!("Parse error: the body is not JSON ({e})"),
        );
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: JSON-RPC batches are not supported (removed in MCP 2025-06-18); send one message per request",
            )
        }
        _ => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: the body must be one JSON-RPC message (a JSON object)",
            )
        }
    }
    // a tools/call whose params rmcp cannot read is answered -32601 "method not found"
    // by rmcp; it is a call with invalid params (JSON-RPC 2.0 §5.1, issue 25.12)
    let bad_call = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|m| Some((m.get("id")?.clone(), tools_call_problem(&m)?)));
    let resp = next
        .run(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(bytes),
        ))
        .await;
    if let Some((id, problem)) = bad_call {
        if resp.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            // params rmcp could not read as any message at all (a string, say)
            let body =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": problem}});
            return (StatusCode::OK, Json(body)).into_response();
        }
        return invalid_params(resp, &problem).await;
    }
    if resp.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // a JSON object rmcp could not read as a JSON-RPC message
        let why = axum::body::to_bytes(resp.into_body(), 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let why = why
            .trim_start_matches("fail to deserialize request body")
            .trim();
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            &format!(
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response ({why})"
            ),
        );
    }
    resp
}

/// What is wrong with a `tools/call` request's params, when they are not what MCP
/// 2025-11-25 server/tools "Calling Tools" says: an object with a string `name` and, if
/// given, an object `arguments`.
fn tools_call_problem(message: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    if message.get("method").and_then(Value::as_str) != Some("tools/call")
        || message.get("id").is_none()
    {
        return None;
    }
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let Some(params) = message.get("params").filter(|p| !p.is_null()) else {
        return Some(
            "Invalid params: tools/call needs params {\"name\": <tool name>, \"arguments\": {…}}"
                .into(),
        );
    };
    let Some(params) = params.as_object() else {
        return Some(format!(
            "Invalid params: params must be an object, not {}",
            kind(params)
        ));
    };
    match params.get("name") {
        None => {
            return Some(
                "Invalid params: params.name is missing: give the name of the tool to call".into(),
            )
        }
        Some(Value::String(_)) => {}
        Some(other) => {
            return Some(format!(
                "Invalid params: params.name must be a string (the tool's name), not {}",
                kind(other)
            ))
        }
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "Invalid params: params.arguments must be an object of the tool's inputs, not {}",
            kind(other)
        )),
    }
}

/// rmcp's answer to a malformed `tools/call` turned into JSON-RPC -32602 with `problem`
/// as its message, keeping the request's id: in a JSON body, or in the `data:` lines of
/// an event stream (legacy sessions answer errors that way), rewritten as they pass; the
/// HTTP status stays rmcp's. Answers that carry no JSON-RPC error (a 404 for an unknown
/// session, say) pass as they are.
async fn invalid_params(resp: axum::response::Response, problem: &str) -> axum::response::Response {
    use futures::StreamExt;
    use http::StatusCode;
    let content_type = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let rewrite = {
        let problem = problem.to_string();
        move |text: &str| -> Option<String> {
            let mut v = serde_json::from_str::<serde_json::Value>(text).ok()?;
            v.get("error")?;
            v["error"] = json!({"code": -32602, "message": problem});
            Some(v.to_string())
        }
    };
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    if content_type.starts_with("application/json") {
        let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
            return http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let rewritten = std::str::from_utf8(&bytes).ok().and_then(&rewrite);
        // rmcp answers an unknown method 404 in the stateless era; invalid params are the
        // client's error (400), and a 404 reads to clients as "session not found"
        if rewritten.is_some() && parts.status == StatusCode::NOT_FOUND {
            parts.status = StatusCode::BAD_REQUEST;
        }
        let out = rewritten.map(axum::body::Bytes::from).unwrap_or(bytes);
        return axum::response::Response::from_parts(parts, axum::body::Body::from(out));
    }
    if content_type.starts_with("text/event-stream") {
        let stream = body.into_data_stream().map(move |chunk| {
            chunk.map(|bytes| {
                let Ok(text) = std::str::from_utf8(&bytes) else {
                    return bytes;
                };
                let lines: Vec<String> = text
                    .split('\n')
                    .map(
                        |line| match line.strip_prefix("data: ").and_then(&rewrite) {
                            Some(fixed) => format!("data: {fixed}"),
                            None => line.to_string(),
                        },
                    )
                    .collect();
                axum::body::Bytes::from(lines.join("\n"))
            })
        });
        return axum::response::Response::from_parts(parts, axum::body::Body::from_stream(stream));
    }
    axum::response::Response::from_parts(parts, body)
}

/// CORS for browser-based MCP clients (the MCP Inspector, web agents) on `/mcp`
/// (Fetch standard §3.2, as tower-http implements it): preflights from an allowed origin
/// (a loopback page on any port, `allowed_origins`, the public URL's origin) are answered
/// without auth; methods GET, POST, DELETE, OPTIONS; the request headers MCP clients send;
/// `Mcp-Session-Id` and `WWW-Authenticate` exposed to the page. Other origins get no CORS
/// headers (and rmcp answers their requests 403).
fn mcp_cors(origins: Arc<Vec<String>>) -> tower_http::cors::CorsLayer {
    use http::{HeaderName, Method};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin
                .to_str()
                .is_ok_and(|o| origin_allowed(o, origins.as_slice()))
        }))
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            http::header::AUTHORIZATION,
            http::header::CONTENT_TYPE,
            http::header::ACCEPT,
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("last-event-id"),
            HeaderName::from_static("mcp-method"),
        ])
        .expose_headers([
            HeaderName::from_static("mcp-session-id"),
            http::header::WWW_AUTHENTICATE,
        ])
        .max_age(std::time::Duration::from_secs(600))
}

/// Requests to `/mcp` from a browser page on an origin that is not allowed: 403 before
/// anything else (auth included), and a preflight's answer carries no CORS header at
/// all (tower-http's layer still names the allowed methods and headers).
async fn foreign_origins(
    State(allowed): State<Arc<Vec<String>>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let foreign = req
        .headers()
        .get(http::header::ORIGIN)
        .is_some_and(|o| !o.to_str().is_ok_and(|o| origin_allowed(o, &allowed)));
    if !foreign {
        return next.run(req).await;
    }
    if req.method() != http::Method::OPTIONS {
        return (http::StatusCode::FORBIDDEN, "Forbidden: Origin not allowed").into_response();
    }
    let mut resp = next.run(req).await;
    let cors: Vec<http::HeaderName> = resp
        .headers()
        .keys()
        .filter(|k| k.as_str().starts_with("access-control-"))
        .cloned()
        .collect();
    for k in cors {
        resp.headers_mut().remove(k);
    }
    resp
}

/// Whether a browser `Origin` is one of `allowed`: exact (ASCII case-insensitive), or
/// a `scheme://host:*` pattern that matches that host on any port (or without one).
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    allowed
        .iter()
        .any(|pattern| match pattern.strip_suffix(":*") {
            Some(prefix) => {
                origin.eq_ignore_ascii_case(prefix)
                    || origin.get(..prefix.len()).is_some_and(|head| {
                        head.eq_ignore_ascii_case(prefix)
                            && origin[prefix.len()..]
                                .strip_prefix(':')
                                .is_some_and(|port| {
                                    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                                })
                    })
            }
            None => origin.eq_ignore_ascii_case(pattern),
        })
}

/// The host (with port when given) of a URL.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

/// The origin (`scheme://host[:port]`) of a URL.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

/// What `/healthz` reads.
#[derive(Clone)]
struct HealthState {
    graft: Graft,
    /// `GRAFT_METRICS_TOKEN`.
    metrics_token: Option<Arc<str>>,
}

/// Whether a request carries `Authorization: Bearer <token>` for `token` (compared in
/// constant time).
fn has_metrics_token(headers: &http::HeaderMap, token: Option<&str>) -> bool {
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
async fn healthz(State(state): State<HealthState>, headers: http::HeaderMap) -> impl IntoResponse {
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

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn origins_match_exactly_or_on_any_port() {
        let allowed: Vec<String> = ["http://localhost:*", "https://agents.example.com"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for ok in [
            "http://localhost:6274",
            "http://localhost",
            "HTTP://LOCALHOST:1",
            "https://agents.example.com",
        ] {
            assert!(origin_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "http://localhost.evil.com",
            "http://localhost:80x",
            "http://localhost:",
            "https://localhost:6274",
            "https://agents.example.com:444",
            "https://agents.example.com.evil",
            "null",
        ] {
            assert!(!origin_allowed(bad, &allowed), "{bad}");
        }
    }
}
