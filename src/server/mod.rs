//! axum glue: one router on one port for `/mcp` (rmcp's `StreamableHttpService` behind
//! the bearer-auth layer), `/healthz` and the Leptos console; graceful shutdown.

pub mod auth;
mod health;
mod mcp_http;
pub mod oauth;
mod tasks;

pub mod listen;

use crate::config::Settings;
use crate::console::server as console;
use crate::console::{shell, App};
use crate::mcp::GraftMcp;

use crate::service::Graft;
use auth::SessionBindings;
use axum::routing::get;
use axum::Router;
use health::*;
use leptos::prelude::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};
pub use mcp_http::MAX_MCP_BODY;
use mcp_http::*;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tasks::*;
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
    sessions_store: crate::service::SessionDb,
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
        let mcp_sessions = sessions.clone();
        let mcp = StreamableHttpService::new(move || Ok(handler.clone()), sessions.clone(), config);
        let auth_state = auth::AuthState {
            graft: graft.clone(),
            bindings: Arc::new(SessionBindings::new(sessions)),
            resource_metadata: Arc::from(format!("{}{}", graft.oauth_issuer(), oauth::PRM_PATH)),
        };
        let mcp_router = Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                graft.metrics().clone(),
                jsonrpc_errors,
            ))
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
            // Try it's dry run, posted so that its values stay out of addresses
            .route("/tools/try", axum::routing::post(console::try_tool))
            .route("/skill/SKILL.md", get(console::skill))
            .route("/audit.csv", get(console::audit_csv))
            // what an open console tab follows (issue 28.3)
            .route("/console/events", get(console::console_events))
            // an MCP vendor's authorization server sends the person back here (issue 27.1)
            .route(
                crate::service::mcp_oauth::CALLBACK_PATH,
                get(console::mcp_oauth_callback),
            )
            // the OAuth authorization endpoint: a consent page for a signed-in person
            .route(
                "/oauth/authorize",
                get(console::authorize_page).post(console::authorize_decision),
            )
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

        graft.metrics().set_enabled(settings.metrics);
        let router = Router::new()
            .route("/healthz", get(healthz))
            .route("/metrics", get(metrics))
            .with_state(HealthState {
                graft: graft.clone(),
                metrics_token: settings.metrics_token.clone().map(Arc::from),
                sessions: mcp_sessions,
                trusted_proxies: Arc::new(settings.trusted_proxies.clone()),
            })
            .merge(mcp_router)
            .merge(oauth::routes(oauth::OAuthHttp {
                graft: graft.clone(),
                trusted_proxies: Arc::new(settings.trusted_proxies.clone()),
            }))
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
        // tools stored before token counts, or counted on another schema budget (issue 29.1)
        let counting = self.graft.clone();
        tokio::spawn(async move { counting.count_tokens_logged(true).await });
        tokio::spawn(tasks::keep_search_warm(
            self.graft.clone(),
            self.shutdown.clone(),
        ));
        tokio::spawn(tasks::mcp_vendors(
            self.graft.clone(),
            self.shutdown.clone(),
        ));
        let upstream = self.graft.clone();
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
            // MCP vendors' local servers end with their process groups (issue 27.4)
            upstream.stop_mcp_servers().await;
            mcp_token.cancel();
            // console tabs' event streams end too (their browsers retry later)
            upstream.live().close();
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
