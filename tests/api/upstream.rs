//! An MCP server for the MCP-vendor tests (issue 27): rmcp's own server over Streamable
//! HTTP on port 0, with a read tool, a write tool, rich content, an error result, a
//! tool that reports the credential it was sent, slow and hanging tools (progress,
//! cancellation, timeouts), a large answer, and a tool list that changes at run time
//! (announced to 2025 sessions and to 2026 listen streams).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The server's state, shared with the test.
#[derive(Default)]
pub struct UpState {
    tools: Mutex<Vec<Value>>,
    legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    changed: Option<tokio::sync::broadcast::Sender<()>>,
    /// `(tool, arguments, Authorization header)` of every tools/call, in order.
    pub calls: Mutex<Vec<(String, Value, Option<String>)>>,
    /// Calls that ended because their client cancelled them.
    pub cancelled: AtomicUsize,
    /// Whether it speaks 2026-07-28 (else only the 2025 revisions).
    modern: bool,
    /// Its 2025 sessions (a test ends them to see a client start a new one).
    sessions: Mutex<Option<Arc<LocalSessionManager>>>,
    /// It pages its tool list without end (one tool a page, always a next cursor).
    pub endless: std::sync::atomic::AtomicBool,
}

/// The handler (one per session or stateless request; the state is shared).
#[derive(Clone)]
pub struct Upstream(pub Arc<UpState>);

/// The tools it lists at first.
pub fn first_tools() -> Vec<Value> {
    vec![
        json!({"name": "read_note", "title": "Read a note", "description": "Reads the note with an id.",
               "inputSchema": {"type": "object", "$defs": {"Id": {"type": "string", "description": "The note's id"}},
                               "properties": {"id": {"$ref": "#/$defs/Id"}}, "required": ["id"]},
               "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"}}, "required": ["id", "text"]},
               "annotations": {"readOnlyHint": true, "openWorldHint": false},
               "_meta": {"example.com/ui": {"card": true}}}),
        json!({"name": "write-note", "description": "Writes a note with a text and returns its id.",
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}),
        json!({"name": "picture", "description": "Draws a picture of a note.",
               "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": true}}),
        json!({"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "whoami", "description": "Says which credential the request carried.",
               "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        json!({"name": "slow", "description": "Counts to three slowly, reporting progress.",
               "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        json!({"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "big", "description": "Answers five megabytes.", "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "bad_output", "description": "Answers what its output schema does not allow.",
               "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true},
               "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}),
    ]
}

impl Upstream {
    /// Replaces the tool list and announces it (2025 sessions' GET streams, 2026 listen
    /// streams).
    pub async fn set_tools(&self, tools: Vec<Value>) {
        *self.0.tools.lock().unwrap() = tools;
        let peers = self.0.legacy_peers.lock().unwrap().clone();
        for p in peers {
            let _ = p.notify_tool_list_changed().await;
        }
        if let Some(tx) = &self.0.changed {
            let _ = tx.send(());
        }
    }

    /// Ends every 2025 session: the next request of a client with a session id gets 404
    /// (MCP 2025-11-25 "Session Management") and must initialize again.
    pub async fn end_sessions(&self) {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let manager = self.0.sessions.lock().unwrap().clone().unwrap();
        let ids: Vec<_> = manager.sessions.read().await.keys().cloned().collect();
        for id in ids {
            let _ = manager.close_session(&id).await;
        }
        self.0.legacy_peers.lock().unwrap().clear();
    }

    /// The tools/call requests it received, by tool name.
    pub fn calls_of(&self, tool: &str) -> Vec<(Value, Option<String>)> {
        self.0
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _, _)| t == tool)
            .map(|(_, a, h)| (a.clone(), h.clone()))
            .collect()
    }
}

/// Starts the server on 127.0.0.1:0; returns its `/mcp` URL and handle. `modern`: it
/// also speaks 2026-07-28 (Graft's client then uses it).
pub async fn serve_upstream(modern: bool) -> (String, Upstream) {
    let state = Arc::new(UpState {
        tools: Mutex::new(first_tools()),
        changed: Some(tokio::sync::broadcast::channel(16).0),
        modern,
        ..Default::default()
    });
    let handler = Upstream(state);
    let h = handler.clone();
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(true);
    let sessions = Arc::new(LocalSessionManager::default());
    *handler.0.sessions.lock().unwrap() = Some(sessions.clone());
    let svc = StreamableHttpService::new(move || Ok(h.clone()), sessions, config);
    let app = axum::Router::new().nest_service("/mcp", svc);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp"), handler)
}

fn result(v: Value) -> Result<CallToolResponse, ErrorData> {
    Ok(serde_json::from_value::<CallToolResult>(v).unwrap().into())
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        if self.0.modern {
            Cow::Owned(vec![
                ProtocolVersion::V_2025_11_25,
                ProtocolVersion::V_2026_07_28,
            ])
        } else {
            Cow::Owned(vec![
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ])
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.0
            .legacy_peers
            .lock()
            .unwrap()
            .push(context.peer.clone());
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if self.0.endless.load(Ordering::SeqCst) {
            let n: u64 = request
                .and_then(|r| r.cursor)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let tool: Tool = serde_json::from_value(
                json!({"name": format!("page_{n}"), "inputSchema": {"type": "object"}}),
            )
            .unwrap();
            let mut page = ListToolsResult::with_all_items(vec![tool]);
            page.next_cursor = Some((n + 1).to_string());
            return Ok(page);
        }
        let tools: Vec<Tool> = self
            .0
            .tools
            .lock()
            .unwrap()
            .iter()
            .map(|t| serde_json::from_value(t.clone()).unwrap())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let auth = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.headers.get("authorization"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        self.0
            .calls
            .lock()
            .unwrap()
            .push((request.name.to_string(), args.clone(), auth.clone()));
        match request.name.as_ref() {
            "read_note" => result(json!({
                "content": [{"type": "text", "text": "the note says hello"}],
                "structuredContent": {"id": args["id"], "text": "hello"}})),
            "write-note" => result(json!({
                "content": [{"type": "text", "text": format!("wrote {}", args["text"])}],
                "structuredContent": {"id": "n-42"}})),
            "picture" => result(json!({"content": [
                {"type": "text", "text": "a picture"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "notes://n-42", "name": "n-42", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "notes://n-42/body", "mimeType": "text/plain", "text": "hello"}}
            ]})),
            "fail" => result(
                json!({"content": [{"type": "text", "text": "the note store is read-only today"}], "isError": true}),
            ),
            "whoami" => result(
                json!({"content": [{"type": "text", "text": format!("you sent: {}", auth.unwrap_or_default())}]}),
            ),
            "slow" => {
                let token = context.meta.get_progress_token();
                for step in 1..=3 {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(150)) => {}
                        _ = context.ct.cancelled() => {
                            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
                            return Err(ErrorData::internal_error("cancelled", None));
                        }
                    }
                    if let Some(t) = &token {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(t.clone(), f64::from(step))
                                    .with_total(3.0)
                                    .with_message(format!("step {step}")),
                            )
                            .await;
                    }
                }
                result(json!({"content": [{"type": "text", "text": "counted to three"}]}))
            }
            "hang" => {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
                    _ = context.ct.cancelled() => {
                        self.0.cancelled.fetch_add(1, Ordering::SeqCst);
                    }
                }
                Err(ErrorData::internal_error("cancelled", None))
            }
            "big" => result(json!({"content": [{"type": "text", "text": "x".repeat(5 << 20)}]})),
            "bad_output" => result(
                json!({"content": [{"type": "text", "text": "n is a word"}], "structuredContent": {"n": "three"}}),
            ),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let Some(tx) = &self.0.changed else {
            return Ok(());
        };
        let mut rx = tx.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                r = rx.recv() => match r {
                    Ok(()) => {
                        if context.sink().notify_tool_list_changed().await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(_) => return Ok(()),
                },
            }
        }
    }
}
