//! MCP vendors' servers (SPEC §10.2, issue 27): Graft as an MCP client (rmcp's) of each
//! MCP vendor's server, remote over Streamable HTTP (both protocol eras) or local over
//! stdio. One client per vendor in each Graft process, shared by every agent: started on
//! first need, restarted with backoff when it ends, stopped when the vendor is disabled
//! or removed and when Graft stops (a local server's whole process group).
//!
//! Answers are JSON (`tools/list` entries, `CallToolResult`s) so that the service above
//! does not depend on rmcp's types; `mcp/` reads them back as the SDK's.

pub mod process;
mod start;

use rmcp::handler::client::progress::ProgressDispatcher;
#[allow(deprecated)] // roots (SEP-2577): refused, so named
use rmcp::model::ListRootsResult;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, ElicitRequestParams, ElicitResult, ErrorData, Implementation,
    ProgressNotificationParam, ProtocolVersion, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleClient, ServiceError,
};
use rmcp::ClientHandler;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, Semaphore};
use tokio_util::sync::CancellationToken;

/// Limits of MCP vendors' servers (issue 27.3, 27.4).
#[derive(Debug, Clone, Copy)]
pub struct UpstreamLimits {
    /// Longest wait for one tools/call's answer (GRAFT_MCP_CALL_TIMEOUT, default 120 s).
    pub call_timeout: Duration,
    /// Most calls in flight to one vendor's server (GRAFT_MCP_MAX_INFLIGHT, default 16);
    /// more wait up to [`UpstreamLimits::queue_wait`], then fail.
    pub max_inflight: usize,
    /// Longest wait for a free place among [`UpstreamLimits::max_inflight`] (10 s).
    pub queue_wait: Duration,
    /// Longest wait for a server to start and answer its initialization (30 s).
    pub start_timeout: Duration,
    /// How often each MCP vendor's tools/list is read again (GRAFT_MCP_REFRESH, default
    /// 10 min), besides on its server's list_changed and on demand.
    pub refresh: Duration,
    /// The least time between two reads its server's list_changed asks for (30 s): a
    /// server announcing changes every second costs one read per this time.
    pub relist: Duration,
}

impl Default for UpstreamLimits {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_secs(120),
            max_inflight: 16,
            queue_wait: Duration::from_secs(10),
            start_timeout: Duration::from_secs(30),
            refresh: Duration::from_secs(600),
            relist: Duration::from_secs(30),
        }
    }
}

/// How one MCP vendor's server is reached, with what its connections give it (their
/// secrets in the clear: kept in memory only while the server runs).
#[derive(Clone)]
pub struct Spec {
    pub vendor_id: i64,
    /// Vendor slug, for the log.
    pub slug: String,
    pub target: Target,
    /// The ids of the connections whose header or variable it carries (for their "last
    /// used", issue 28.2).
    pub connections: Vec<i64>,
}

/// The two ways an MCP server is reached (MCP 2025-11-25 "Transports").
#[derive(Clone)]
pub enum Target {
    /// Streamable HTTP at `url`, with `headers` from the vendor's connections
    /// (`Authorization: Bearer …`, a named header); `internal`: the vendor may be on a
    /// private network (a person marked it so; security review 32.7).
    Http {
        url: String,
        headers: Vec<(String, String)>,
        internal: bool,
        /// Where its OAuth tokens are kept, when a person authorized Graft there (rmcp's
        /// client refreshes them), with a stamp of what is stored (a new authorization
        /// starts the server again).
        oauth: Option<(Arc<dyn rmcp::transport::auth::CredentialStore>, String)>,
    },
    /// A local program (argv, no shell) in `cwd`, with `env` from the vendor's
    /// connections of kind `env`.
    Stdio {
        argv: Vec<String>,
        cwd: Option<String>,
        env: Vec<(String, String)>,
    },
}

impl Spec {
    /// What identifies this way of reaching the server: a change (a new secret, a new
    /// command) restarts it.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let text = match &self.target {
            Target::Http {
                url,
                headers,
                internal,
                oauth,
            } => serde_json::json!(["http", url, headers, internal, oauth.as_ref().map(|o| &o.1)]),
            Target::Stdio { argv, cwd, env } => serde_json::json!(["stdio", argv, cwd, env]),
        };
        hex::encode(Sha256::digest(text.to_string().as_bytes()))
    }

    /// Every secret this spec carries (header and variable values), for redaction.
    pub fn secrets(&self) -> Vec<String> {
        let values: Vec<&String> = match &self.target {
            Target::Http { headers, .. } => headers.iter().map(|(_, v)| v).collect(),
            Target::Stdio { env, .. } => env.iter().map(|(_, v)| v).collect(),
        };
        values
            .into_iter()
            .flat_map(|v| {
                // a header `Bearer <token>`: the token alone may be echoed too
                let token = v.split_once(' ').map(|(_, t)| t.to_string());
                std::iter::once(v.clone()).chain(token)
            })
            .filter(|s| s.len() >= 8)
            .collect()
    }
}

/// Why an MCP server could not answer (each becomes a tool error an agent can read).
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// The server could not be started or reached, or went away.
    #[error("{0}")]
    Unreachable(String),
    /// It asks for authorization (HTTP 401 with a challenge; MCP "Authorization").
    #[error("the server asks for authorization: {0}")]
    AuthRequired(String),
    /// No answer within the call timeout.
    #[error("the server did not answer within {} s (GRAFT_MCP_CALL_TIMEOUT)", .0.as_secs())]
    Timeout(Duration),
    /// Too many calls in flight to this server.
    #[error("{0} calls to this server are running already (GRAFT_MCP_MAX_INFLIGHT) and none ended within {1} s")]
    Busy(usize, u64),
    /// The server answered a JSON-RPC error (an unknown tool, invalid params).
    #[error("the server answered an error: {0}")]
    Protocol(String),
    /// The agent cancelled the call.
    #[error("cancelled")]
    Cancelled,
}

/// The state of one vendor's server in this Graft process (issue 27.5).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Not started here (no call needed it yet, or it was stopped).
    Stopped,
    /// Running: since when (ms), its process (a local server), the protocol version it
    /// speaks and what it calls itself.
    Running {
        since: i64,
        pid: Option<u32>,
        protocol: String,
        server: Option<String>,
    },
    /// It ended or failed to start: the last error, and when it is tried again (ms).
    Restarting {
        attempt: u32,
        last_error: String,
        retry_at: i64,
    },
}

/// Reports an upstream call's progress to the agent: `(progress, total, message)`
/// (MCP 2025-11-25 utilities/progress); the call waits until it was sent, so that the
/// agent gets every notification before the result.
pub type ProgressFn = Arc<
    dyn Fn(f64, Option<f64>, Option<String>) -> futures::future::BoxFuture<'static, ()>
        + Send
        + Sync,
>;

/// Lines of a local server's stderr kept for its state (the last error a person reads).
const STDERR_KEPT: usize = 20;

/// Graft as the MCP client of every MCP vendor's server (one per vendor, per process).
#[derive(Clone)]
pub struct Upstreams {
    inner: Arc<Inner>,
}

struct Inner {
    limits: UpstreamLimits,
    slots: Mutex<HashMap<i64, Arc<Slot>>>,
    /// HTTP clients for remote servers (public and internal reach), resolving names only
    /// to the addresses vendors may be at.
    http_public: reqwest::Client,
    http_internal: reqwest::Client,
    /// Vendor ids whose server said its tools/list changed.
    changes: broadcast::Sender<i64>,
    /// Graft is stopping: no server is started or restarted.
    closing: CancellationToken,
}

/// One vendor's server in this process.
struct Slot {
    inflight: Arc<Semaphore>,
    /// Held while the server starts, so one call starts it and the others wait.
    start: tokio::sync::Mutex<()>,
    state: Mutex<SlotState>,
    /// The last lines of its stderr.
    stderr: Arc<Mutex<VecDeque<String>>>,
}

#[derive(Default)]
enum SlotState {
    #[default]
    Stopped,
    Running(Live),
    Failed {
        error: String,
        attempts: u32,
        retry_at: Instant,
        retry_at_ms: i64,
    },
}

#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    progress: ProgressDispatcher,
    fingerprint: String,
    /// Stops its supervisor (and with it the server).
    stop: CancellationToken,
    /// Cancelled when its supervisor ended (the server is gone).
    ended: CancellationToken,
    since: i64,
    pid: Option<u32>,
    protocol: String,
    server: Option<String>,
    /// Which start this is (the supervisor of an older start leaves a newer one be).
    generation: u64,
}

/// Starts so far, in this process.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Upstreams {
    /// The client side of MCP vendors with `limits`; `http_public` and `http_internal`
    /// are the HTTP clients for remote servers (no total timeout: answers may stream).
    pub fn new(
        limits: UpstreamLimits,
        http_public: reqwest::Client,
        http_internal: reqwest::Client,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                limits,
                slots: Mutex::new(HashMap::new()),
                http_public,
                http_internal,
                changes: broadcast::channel(256).0,
                closing: CancellationToken::new(),
            }),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> UpstreamLimits {
        self.inner.limits
    }

    /// Vendor ids whose server sent `notifications/tools/list_changed` (a listener that
    /// falls behind loses ids: the timer's refresh catches up).
    pub fn changes(&self) -> broadcast::Receiver<i64> {
        self.inner.changes.subscribe()
    }

    fn slot(&self, vendor_id: i64) -> Arc<Slot> {
        let mut slots = self.inner.slots.lock().expect("slots lock");
        slots
            .entry(vendor_id)
            .or_insert_with(|| {
                Arc::new(Slot {
                    inflight: Arc::new(Semaphore::new(self.inner.limits.max_inflight.max(1))),
                    start: tokio::sync::Mutex::new(()),
                    state: Mutex::new(SlotState::Stopped),
                    stderr: Arc::default(),
                })
            })
            .clone()
    }

    /// The state of vendor `vendor_id`'s server in this process.
    pub fn state(&self, vendor_id: i64) -> ServerState {
        let Some(slot) = self
            .inner
            .slots
            .lock()
            .expect("slots lock")
            .get(&vendor_id)
            .cloned()
        else {
            return ServerState::Stopped;
        };
        let state = slot.state.lock().expect("state lock");
        match &*state {
            SlotState::Stopped => ServerState::Stopped,
            SlotState::Running(l) if !l.ended.is_cancelled() => ServerState::Running {
                since: l.since,
                pid: l.pid,
                protocol: l.protocol.clone(),
                server: l.server.clone(),
            },
            SlotState::Running(_) => ServerState::Stopped,
            SlotState::Failed {
                error,
                attempts,
                retry_at_ms,
                ..
            } => ServerState::Restarting {
                attempt: *attempts,
                last_error: error.clone(),
                retry_at: *retry_at_ms,
            },
        }
    }

    /// Every entry of the server's tools/list, all pages, as JSON (MCP 2025-11-25
    /// "Tool"), at most [`MAX_LIST_PAGES`] pages and one more tool than
    /// [`crate::domain::mcp_vendor::MAX_UPSTREAM_TOOLS`] (a server that pages without
    /// end is cut there). Starts the server when it is not running. Errors: it cannot be started
    /// or reached, it answers an error, or no answer within the call timeout.
    pub async fn list_tools(&self, spec: &Spec) -> Result<Vec<Value>, UpstreamError> {
        let live = self.running(spec).await?;
        let list = tokio::time::timeout(self.inner.limits.call_timeout, async {
            // a re-read must see the server's list as it is now, never a cached one
            live.peer.clear_response_cache().await;
            list_pages(&live.peer).await
        })
        .await
        .map_err(|_| UpstreamError::Timeout(self.inner.limits.call_timeout))?
        .map_err(|e| service_error(e, &live))?;
        Ok(list
            .into_iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect())
    }

    /// Calls tool `name` of the server with `arguments` (MCP 2025-11-25 server/tools,
    /// "Calling Tools") and returns its `CallToolResult` as JSON, as the server gave it
    /// (`isError` results included). `progress`, when given, receives the server's
    /// progress notifications; `cancel` sends the server `notifications/cancelled`.
    /// At most [`UpstreamLimits::max_inflight`] calls run at once per server. Errors:
    /// [`UpstreamError`].
    pub async fn call(
        &self,
        spec: &Spec,
        name: &str,
        arguments: Map<String, Value>,
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
    ) -> Result<Value, UpstreamError> {
        let limits = self.inner.limits;
        let slot = self.slot(spec.vendor_id);
        let permit = tokio::select! {
            p = tokio::time::timeout(limits.queue_wait, slot.inflight.clone().acquire_owned()) => match p {
                Ok(Ok(p)) => p,
                _ => return Err(UpstreamError::Busy(limits.max_inflight, limits.queue_wait.as_secs())),
            },
            _ = cancel.cancelled() => return Err(UpstreamError::Cancelled),
        };
        let live = tokio::select! {
            l = self.running(spec) => l?,
            _ = cancel.cancelled() => return Err(UpstreamError::Cancelled),
        };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let options = PeerRequestOptions::with_timeout(limits.call_timeout);
        let handle = live
            .peer
            .send_request_with_option(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                options,
            )
            .await
            .map_err(|e| service_error(e, &live))?;
        let id = handle.id.clone();
        let mut updates = live.progress.subscribe(handle.progress_token.clone()).await;
        let response = handle.await_response();
        tokio::pin!(response);
        // the last progress seen: (progress, total)
        let mut last: Option<(f64, Option<f64>)> = None;
        let answer = loop {
            tokio::select! {
                biased;
                Some(p) = futures::StreamExt::next(&mut updates) => {
                    last = Some((p.progress, p.total));
                    if let Some(report) = &progress {
                        report(p.progress, p.total, p.message.clone()).await;
                    }
                }
                r = &mut response => break r,
                _ = cancel.cancelled() => {
                    let _ = live
                        .peer
                        .notify_cancelled(CancelledNotificationParam::new(
                            Some(id),
                            Some("cancelled by the agent".into()),
                        ))
                        .await;
                    return Err(UpstreamError::Cancelled);
                }
            }
        };
        // progress the server sent before its result goes first: rmcp hands notifications
        // to their handler in tasks of their own, so one may still be on its way when the
        // result is here; while a known total was not reached, stragglers get 200 ms
        let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
        loop {
            let waiting =
                progress.is_some() && matches!(last, Some((done, Some(total))) if done < total);
            let next = futures::StreamExt::next(&mut updates);
            let p = if waiting {
                match tokio::time::timeout_at(deadline, next).await {
                    Ok(Some(p)) => p,
                    _ => break,
                }
            } else {
                match futures::FutureExt::now_or_never(next) {
                    Some(Some(p)) => p,
                    _ => break,
                }
            };
            last = Some((p.progress, p.total));
            if let Some(report) = &progress {
                report(p.progress, p.total, p.message.clone()).await;
            }
        }
        drop(permit);
        match answer {
            Ok(ServerResult::CallToolResult(r)) => {
                serde_json::to_value(r).map_err(|e| UpstreamError::Protocol(e.to_string()))
            }
            // a result without `content` decodes as the empty result
            Ok(ServerResult::EmptyResult(_)) => Ok(serde_json::json!({"content": []})),
            Ok(_) => Err(UpstreamError::Protocol(
                "it answered tools/call with something that is not a tool result".into(),
            )),
            Err(ServiceError::Timeout { timeout }) => Err(UpstreamError::Timeout(timeout)),
            Err(e) => Err(service_error(e, &live)),
        }
    }

    /// Stops vendor `vendor_id`'s server in this process (disabled, removed, its
    /// command or connections changed): a local server's process group ends (stdin
    /// closed, then SIGTERM, then SIGKILL, 3 s apart). Calls in flight fail.
    pub async fn stop(&self, vendor_id: i64) {
        let slot = self
            .inner
            .slots
            .lock()
            .expect("slots lock")
            .get(&vendor_id)
            .cloned();
        if let Some(slot) = slot {
            let live = match std::mem::take(&mut *slot.state.lock().expect("state lock")) {
                SlotState::Running(l) => Some(l),
                _ => None,
            };
            if let Some(l) = live {
                l.stop.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(8), l.ended.cancelled()).await;
            }
        }
    }

    /// The servers running in this process: `(vendor id, its spec's fingerprint)`.
    pub fn running_servers(&self) -> Vec<(i64, String)> {
        let slots: Vec<(i64, Arc<Slot>)> = self
            .inner
            .slots
            .lock()
            .expect("slots lock")
            .iter()
            .map(|(id, s)| (*id, s.clone()))
            .collect();
        slots
            .into_iter()
            .filter_map(
                |(id, slot)| match &*slot.state.lock().expect("state lock") {
                    SlotState::Running(l) if !l.ended.is_cancelled() => {
                        Some((id, l.fingerprint.clone()))
                    }
                    _ => None,
                },
            )
            .collect()
    }

    /// Stops every server and starts none again (Graft is stopping).
    pub async fn stop_all(&self) {
        self.inner.closing.cancel();
        let ids: Vec<i64> = self
            .inner
            .slots
            .lock()
            .expect("slots lock")
            .keys()
            .copied()
            .collect();
        futures::future::join_all(ids.into_iter().map(|id| self.stop(id))).await;
    }
}

/// An rmcp client error in words (a 401 read as an authorization request).
fn service_error(e: ServiceError, live: &Live) -> UpstreamError {
    if live.ended.is_cancelled() {
        return UpstreamError::Unreachable(format!("the server went away ({e})"));
    }
    match e {
        ServiceError::McpError(ErrorData { message, code, .. }) => {
            UpstreamError::Protocol(format!("{message} (JSON-RPC {})", code.0))
        }
        ServiceError::Timeout { timeout } => UpstreamError::Timeout(timeout),
        ServiceError::Cancelled { .. } => UpstreamError::Cancelled,
        other => match other.auth_challenge() {
            Some(c) => UpstreamError::AuthRequired(c.to_string()),
            None => UpstreamError::Unreachable(format!("the server could not be reached: {other}")),
        },
    }
}

tokio::task_local! {
    /// Where the tool call running in this task reports its progress: set by `mcp/`
    /// around a call whose agent sent a `progressToken` (MCP 2025-11-25
    /// utilities/progress), read when the call goes to an MCP vendor's server.
    pub static PROGRESS: ProgressFn;
}

/// The progress reporter of the call running in this task, if its agent asked for one.
pub fn current_progress() -> Option<ProgressFn> {
    PROGRESS.try_with(Clone::clone).ok()
}

/// An OAuth credential store shared between the authorization and the servers that use
/// it (rmcp's `AuthorizationManager` takes its store by value).
#[derive(Clone)]
pub struct SharedStore(pub Arc<dyn rmcp::transport::auth::CredentialStore>);

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
}

/// Most pages of one tools/list read.
pub const MAX_LIST_PAGES: usize = 100;

/// The pages of a server's tools/list (MCP 2025-11-25 "Pagination"), cut at
/// [`MAX_LIST_PAGES`] pages or one tool past
/// [`crate::domain::mcp_vendor::MAX_UPSTREAM_TOOLS`].
async fn list_pages(peer: &Peer<RoleClient>) -> Result<Vec<rmcp::model::Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor
            .take()
            .map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_tools(params).await?;
        tools.extend(page.tools);
        if tools.len() > crate::domain::mcp_vendor::MAX_UPSTREAM_TOOLS {
            tools.truncate(crate::domain::mcp_vendor::MAX_UPSTREAM_TOOLS + 1);
            break;
        }
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    Ok(tools)
}
