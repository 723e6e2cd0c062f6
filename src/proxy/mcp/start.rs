//! Starting an MCP vendor's server and keeping it running (issue 27.4): the client
//! handler Graft answers servers with, the supervisor that restarts a server with
//! backoff, and what a local server writes to its stderr.

use super::*;

impl Upstreams {
    /// The running client of `spec`'s server: started when stopped, started again when
    /// the spec changed or the server ended (after its backoff). Errors: it cannot be
    /// started (with the reason and the last lines of its stderr), or it is waiting to
    /// be tried again.
    pub(super) fn running<'a>(
        &'a self,
        spec: &'a Spec,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Live, UpstreamError>> + Send + 'a>>
    {
        // boxed: the supervisor a start spawns calls this again (a recursive future's
        // Send is otherwise not provable)
        Box::pin(self.running_inner(spec))
    }

    async fn running_inner(&self, spec: &Spec) -> Result<Live, UpstreamError> {
        let slot = self.slot(spec.vendor_id);
        let fingerprint = spec.fingerprint();
        let current = |slot: &Slot| -> Option<Result<Live, UpstreamError>> {
            match &*slot.state.lock().expect("state lock") {
                SlotState::Running(l)
                    if l.fingerprint == fingerprint && !l.ended.is_cancelled() =>
                {
                    Some(Ok(l.clone()))
                }
                SlotState::Failed {
                    error, retry_at, ..
                } if Instant::now() < *retry_at => {
                    let secs = retry_at
                        .saturating_duration_since(Instant::now())
                        .as_secs()
                        .max(1);
                    Some(Err(UpstreamError::Unreachable(format!(
                        "{error} (Graft tries it again in {secs} s)"
                    ))))
                }
                _ => None,
            }
        };
        if let Some(r) = current(&slot) {
            return r;
        }
        let _starting = slot.start.lock().await;
        if let Some(r) = current(&slot) {
            return r;
        }
        if self.inner.closing.is_cancelled() {
            return Err(UpstreamError::Unreachable("Graft is stopping".into()));
        }
        // a running server of an older spec stops first
        let old = match &*slot.state.lock().expect("state lock") {
            SlotState::Running(l) => Some(l.clone()),
            _ => None,
        };
        if let Some(old) = old {
            old.stop.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(8), old.ended.cancelled()).await;
        }
        match self.start(spec, &slot, fingerprint).await {
            Ok(live) => {
                *slot.state.lock().expect("state lock") = SlotState::Running(live.clone());
                Ok(live)
            }
            Err(e) => {
                let attempts = match &*slot.state.lock().expect("state lock") {
                    SlotState::Failed { attempts, .. } => attempts + 1,
                    _ => 1,
                };
                let wait = backoff(attempts);
                let message = with_stderr(&e.to_string(), &slot.stderr);
                tracing::warn!(vendor = %spec.slug, error = %message, attempt = attempts, "an MCP vendor's server could not be started");
                *slot.state.lock().expect("state lock") = SlotState::Failed {
                    error: message.clone(),
                    attempts,
                    retry_at: Instant::now() + wait,
                    retry_at_ms: now_ms() + wait.as_millis() as i64,
                };
                Err(match e {
                    UpstreamError::Unreachable(_) => UpstreamError::Unreachable(message),
                    other => other,
                })
            }
        }
    }

    /// Starts `spec`'s server and its supervisor, which restarts it with backoff when
    /// it ends while wanted.
    async fn start(
        &self,
        spec: &Spec,
        slot: &Arc<Slot>,
        fingerprint: String,
    ) -> Result<Live, UpstreamError> {
        let progress = ProgressDispatcher::new();
        let handler = Handler {
            vendor_id: spec.vendor_id,
            slug: spec.slug.clone(),
            progress: progress.clone(),
            changes: self.inner.changes.clone(),
        };
        let stop = CancellationToken::new();
        let limits = self.inner.limits;
        let (running, pid) = match &spec.target {
            Target::Stdio { argv, cwd, env } => {
                let (transport, stderr, pid) =
                    process::spawn(argv, cwd.as_deref(), env).map_err(|e| {
                        UpstreamError::Unreachable(format!(
                            "cannot start {:?}: {e}",
                            argv.first().cloned().unwrap_or_default()
                        ))
                    })?;
                if let Some(stderr) = stderr {
                    tokio::spawn(log_stderr(
                        stderr,
                        spec.slug.clone(),
                        slot.stderr.clone(),
                        spec.secrets(),
                    ));
                }
                let serve = rmcp::service::serve_client_with_lifecycle_and_ct(
                    handler,
                    transport,
                    rmcp::service::ClientLifecycleMode::Initialize,
                    // a child: rmcp cancels its token when the service ends on its own,
                    // and `stop` must say only whether Graft stopped it
                    stop.child_token(),
                );
                let running = tokio::time::timeout(limits.start_timeout, serve)
                    .await
                    .map_err(|_| {
                        stop.cancel();
                        UpstreamError::Unreachable(format!(
                            "it did not answer initialize within {} s",
                            limits.start_timeout.as_secs()
                        ))
                    })?
                    .map_err(|e| UpstreamError::Unreachable(format!("initialize failed: {e}")))?;
                (running, pid)
            }
            Target::Http {
                url,
                headers,
                internal,
                oauth,
            } => {
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|e| UpstreamError::Unreachable(format!("header {name:?}: {e}")))?;
                    let mut value = http::HeaderValue::from_str(value).map_err(|_| {
                        UpstreamError::Unreachable(format!(
                            "the value of header {name} is not a header value"
                        ))
                    })?;
                    value.set_sensitive(true);
                    custom.insert(name, value);
                }
                let client = if *internal {
                    self.inner.http_internal.clone()
                } else {
                    self.inner.http_public.clone()
                };
                let http = Http {
                    url: url.clone(),
                    headers: custom,
                    handler: handler.clone(),
                    stop: stop.clone(),
                    timeout: limits.start_timeout,
                };
                let served = match oauth {
                    // a person authorized Graft there: rmcp's client sends the token and
                    // refreshes it (saving the new one sealed through the store)
                    Some((store, _)) => {
                        use rmcp::transport::{AuthClient, AuthorizationManager};
                        let unusable = |e: rmcp::transport::auth::AuthError| {
                            UpstreamError::AuthRequired(format!(
                                "its OAuth tokens cannot be used ({e}): authorize Graft again on the vendor's page"
                            ))
                        };
                        let mut manager = if *internal {
                            AuthorizationManager::new_allowing_private_addresses(url.as_str()).await
                        } else {
                            AuthorizationManager::new(url.as_str()).await
                        }
                        .map_err(unusable)?;
                        manager.set_credential_store(super::SharedStore(store.clone()));
                        if !manager.initialize_from_store().await.map_err(unusable)? {
                            return Err(UpstreamError::AuthRequired(
                                "no OAuth tokens are stored for it: authorize Graft on the vendor's page".into(),
                            ));
                        }
                        http.serve(AuthClient::new(client, manager)).await
                    }
                    None => http.serve(client).await,
                };
                let running = served
                    .map_err(|_| {
                        stop.cancel();
                        UpstreamError::Unreachable(format!(
                            "it did not answer within {} s",
                            limits.start_timeout.as_secs()
                        ))
                    })?
                    .map_err(|e| match e.auth_challenge() {
                        Some(challenge) => UpstreamError::AuthRequired(challenge.to_string()),
                        None if e.is_authorization_required() => {
                            UpstreamError::AuthRequired("HTTP 401".into())
                        }
                        None => UpstreamError::Unreachable(format!("cannot connect: {e}")),
                    })?;
                (running, None)
            }
        };
        let peer = running.peer().clone();
        let info = running.peer_info();
        let protocol = info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default();
        let server = info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| format!("{} {}", s.name, s.version));
        // a 2026-07-28 server sends list_changed only on a listen stream
        if protocol.as_str() >= "2026" {
            tokio::spawn(listen_for_changes(
                peer.clone(),
                spec.vendor_id,
                self.inner.changes.clone(),
                stop.clone(),
            ));
        }
        tracing::info!(vendor = %spec.slug, pid = ?pid, protocol = %protocol, server = ?server, "an MCP vendor's server started");
        let ended = CancellationToken::new();
        let generation = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let live = Live {
            generation,
            peer,
            progress,
            fingerprint,
            stop: stop.clone(),
            ended: ended.clone(),
            since: now_ms(),
            pid,
            protocol,
            server,
        };
        // the supervisor: when the server ends while wanted, it is started again after a
        // backoff (1 s, doubling to 60 s; back to 1 s after a minute of running)
        let me = self.clone();
        let spec = spec.clone();
        let slot = slot.clone();
        let started = Instant::now();
        tokio::spawn(async move {
            let reason = running.waiting().await;
            ended.cancel();
            if stop.is_cancelled() || me.inner.closing.is_cancelled() {
                tracing::info!(vendor = %spec.slug, "an MCP vendor's server stopped");
                return;
            }
            let attempts = if started.elapsed() >= Duration::from_secs(60) {
                1
            } else {
                match &*slot.state.lock().expect("state lock") {
                    SlotState::Failed { attempts, .. } => attempts + 1,
                    _ => 1,
                }
            };
            let wait = backoff(attempts);
            let message = with_stderr(
                &format!("the server ended ({})", quit_words(&reason)),
                &slot.stderr,
            );
            tracing::warn!(vendor = %spec.slug, error = %message, retry_in_s = wait.as_secs(), "an MCP vendor's server ended; Graft starts it again");
            {
                let mut state = slot.state.lock().expect("state lock");
                // only the state this supervisor owns: a newer start replaced it otherwise
                if matches!(&*state, SlotState::Running(l) if l.generation == generation) {
                    *state = SlotState::Failed {
                        error: message,
                        attempts,
                        retry_at: Instant::now() + wait,
                        retry_at_ms: now_ms() + wait.as_millis() as i64,
                    };
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = me.inner.closing.cancelled() => return,
            }
            let still_failed = matches!(
                &*slot.state.lock().expect("state lock"),
                SlotState::Failed { .. }
            );
            if still_failed {
                // started again so that it keeps announcing its changes; a failure is
                // kept in its state for the next call and the console
                let _ = me.running(&spec).await;
            }
        });
        Ok(live)
    }
}

/// 1 s, 2 s, 4 s … up to 60 s for the `attempt`-th failure in a row.
fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.saturating_sub(1).min(6)).min(Duration::from_secs(60))
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn quit_words(reason: &Result<rmcp::service::QuitReason, tokio::task::JoinError>) -> String {
    match reason {
        Ok(rmcp::service::QuitReason::Closed) => "it closed its connection".into(),
        Ok(rmcp::service::QuitReason::Cancelled) => "stopped".into(),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("its client task failed: {e}"),
    }
}

/// `message`, and the last lines a local server wrote to its stderr.
fn with_stderr(message: &str, stderr: &Mutex<VecDeque<String>>) -> String {
    let lines = stderr.lock().expect("stderr lock");
    match lines.back() {
        Some(last) => format!("{message}; its stderr said: {last}"),
        None => message.to_string(),
    }
}

/// Most bytes of one stderr line kept; the rest of a longer line is skipped as it comes
/// (a line that never ends takes no more memory than this).
const STDERR_LINE_BYTES: usize = 2000;

/// Logs a local server's stderr line by line (info, with the vendor's name), keeping the
/// last [`STDERR_KEPT`]: each line cut at [`STDERR_LINE_BYTES`] while it is read, and its
/// connections' secrets (`secrets`) redacted, since a server may print what it was given.
async fn log_stderr(
    mut stderr: tokio::process::ChildStderr,
    vendor: String,
    kept: Arc<Mutex<VecDeque<String>>>,
    secrets: Vec<String>,
) {
    use tokio::io::AsyncReadExt;
    let mut chunk = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let emit = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_string();
        line.clear();
        if text.is_empty() {
            return;
        }
        let text = crate::proxy::redact::redact(&text, &secrets);
        tracing::info!(vendor = %vendor, line = %text, "MCP server stderr");
        let mut k = kept.lock().expect("stderr lock");
        if k.len() == STDERR_KEPT {
            k.pop_front();
        }
        k.push_back(text);
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                emit(&mut line);
            } else if line.len() < STDERR_LINE_BYTES {
                line.push(b);
            }
        }
    }
    emit(&mut line);
}

/// A 2026-07-28 server's list_changed, read from a `subscriptions/listen` stream until
/// `stop`.
async fn listen_for_changes(
    peer: Peer<RoleClient>,
    vendor_id: i64,
    changes: broadcast::Sender<i64>,
    stop: CancellationToken,
) {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let Ok(mut sub) = peer.listen(filter).await else {
        return;
    };
    loop {
        tokio::select! {
            n = sub.next() => match n {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                    let _ = changes.send(vendor_id);
                }
                Ok(Some(_)) => {}
                _ => return,
            },
            _ = stop.cancelled() => return,
        }
    }
}

/// What Graft answers its servers (issue 27.6): progress and list_changed are read;
/// sampling, elicitation and roots are refused (Graft forwards no request of a server
/// to agents); log messages go to Graft's log at debug.
#[derive(Clone)]
struct Handler {
    vendor_id: i64,
    slug: String,
    progress: ProgressDispatcher,
    changes: broadcast::Sender<i64>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("graft", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(vendor = %self.slug, "an MCP vendor's server says its tools changed");
        let _ = self.changes.send(self.vendor_id);
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Err(refused("roots/list"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(refused("elicitation/create"))
    }
}

fn refused(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Graft does not forward {method} to its agents"),
        None,
    )
}

/// How a remote server is reached: its URL, the connections' headers, the handler Graft
/// answers it with, its stop token and how long it has to start.
struct Http {
    url: String,
    headers: HashMap<http::HeaderName, http::HeaderValue>,
    handler: Handler,
    stop: CancellationToken,
    timeout: Duration,
}

type Served = Result<
    Result<
        rmcp::service::RunningService<RoleClient, Handler>,
        rmcp::service::ClientInitializeError,
    >,
    tokio::time::error::Elapsed,
>;

impl Http {
    /// Connects over `client` in the 2026-07-28 revision when the server speaks it, else
    /// with a 2025-11-25 initialize.
    async fn serve<C>(&self, client: C) -> Served
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient
            + Clone
            + Send
            + Sync
            + 'static,
    {
        use rmcp::service::ClientLifecycleMode;
        let connect = |lifecycle: ClientLifecycleMode| {
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            use rmcp::transport::StreamableHttpClientTransport;
            let config = StreamableHttpClientTransportConfig::with_uri(self.url.clone())
                .custom_headers(self.headers.clone());
            let transport = StreamableHttpClientTransport::with_client(client.clone(), config);
            let serve = rmcp::service::serve_client_with_lifecycle_and_ct(
                self.handler.clone(),
                transport,
                lifecycle,
                self.stop.child_token(),
            );
            tokio::time::timeout(self.timeout, serve)
        };
        let modern = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        match connect(modern).await {
            Ok(Err(rmcp::service::ClientInitializeError::NoCompatibleProtocolVersion {
                ..
            })) => connect(ClientLifecycleMode::Initialize).await,
            other => other,
        }
    }
}
