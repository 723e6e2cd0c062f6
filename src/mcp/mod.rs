//! The MCP adapter (SPEC §3) over the service layer, with rmcp's `ServerHandler`.
//!
//! One handler serves both protocol eras: 2025-06-18 / 2025-11-25 sessions (initialize,
//! `Mcp-Session-Id`, GET stream) and 2026-07-28 stateless requests (`server/discover`,
//! per-request `_meta`, `subscriptions/listen`). The handler is built per session or per
//! stateless request by rmcp, so it is a thin wrapper over shared state; the agent comes
//! from the bearer-auth layer through the request's `http::request::Parts` extensions.
//!
//! Tool errors the model can correct (`tool_not_found`, `not_promoted`,
//! `invalid_input`) are `isError` results with `structuredContent.error = {code,
//! message}`; an unknown tool name is JSON-RPC -32602 (SPEC §3.6).

pub mod meta;

use crate::service::{Actor, Graft};
use crate::service::{AuthedAgent, ToolCall};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    DiscoverResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

/// The protocol revisions Graft serves (MCP-PROTOCOL.md §11).
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// How often a legacy session's notifier checks that its session still lives.
const SESSION_PROBE: Duration = Duration::from_secs(5);

/// Tool calls in flight, so a shutdown lets them finish before it closes the sessions.
#[derive(Debug, Default)]
pub struct InFlight {
    count: std::sync::atomic::AtomicUsize,
    idle: tokio::sync::Notify,
}

/// Counts one call while alive.
pub struct InFlightGuard(Arc<InFlight>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self
            .0
            .count
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
            == 1
        {
            self.0.idle.notify_waiters();
        }
    }
}

impl InFlight {
    /// Marks a call as started until the guard drops.
    pub fn enter(self: &Arc<Self>) -> InFlightGuard {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        InFlightGuard(self.clone())
    }

    /// Waits until no call is in flight, or `limit` passed. Returns whether idle.
    pub async fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.idle.notified();
            if self.count.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }
}

/// Tool definitions as `tools/list` serves them (issue 15: a list of 500 tools was
/// rebuilt from the database and every schema parsed again on each request). A
/// definition is built once per (tool, version) — versions never change — and each
/// agent's list is kept until the service's cache epoch moves (any change anywhere).
#[derive(Debug, Default)]
pub struct ToolDefs {
    by_version: std::sync::Mutex<std::collections::HashMap<(i64, i64), Tool>>,
    lists: std::sync::RwLock<std::collections::HashMap<i64, AgentList>>,
}

/// An agent's list with the cache epoch it was built at.
type AgentList = (u64, Arc<Vec<Tool>>);

/// Most definitions (and agent lists) kept; past it the map starts over.
const DEFS: usize = 8192;

impl ToolDefs {
    fn list(&self, agent_id: i64, epoch: u64) -> Option<Arc<Vec<Tool>>> {
        self.lists
            .read()
            .expect("defs lock")
            .get(&agent_id)
            .filter(|(e, _)| *e == epoch)
            .map(|(_, l)| l.clone())
    }

    fn put_list(&self, agent_id: i64, epoch: u64, list: Arc<Vec<Tool>>) {
        let mut lists = self.lists.write().expect("defs lock");
        if lists.len() >= DEFS {
            lists.clear();
        }
        lists.insert(agent_id, (epoch, list));
    }
}

/// An MCP tool definition of a tool's current version (SPEC §3.3): the JSON
/// [`crate::domain::served::definition`] writes, which is also what its tokens count.
fn definition(t: &crate::service::ToolView, schema_budget: usize) -> Tool {
    let served = crate::domain::served::definition(&crate::service::served(t), schema_budget);
    serde_json::to_value(served)
        .and_then(serde_json::from_value)
        .unwrap_or_else(|e| {
        tracing::error!(tool = %t.name, error = %e, "a served definition did not read as an MCP tool");
        Tool::new(format!("{}__{}", t.vendor, t.name), t.description.clone(), object(json!({"type": "object"})))
    })
}

/// The MCP server handler: Graft's service, the server's shutdown signal, the
/// in-flight call counter and the tool definitions.
#[derive(Clone)]
pub struct GraftMcp {
    graft: Graft,
    shutdown: CancellationToken,
    inflight: Arc<InFlight>,
    defs: Arc<ToolDefs>,
    sessions: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    /// 2025-era sessions that have a change notifier (one each, however often a client
    /// repeats `notifications/initialized`; security review 32.10).
    notified: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl GraftMcp {
    /// A handler over `graft`; `shutdown` ends listen streams (gracefully) and session
    /// notifiers; `inflight` counts tool calls for a graceful shutdown; `sessions` are
    /// rmcp's 2025-era sessions (a rotated token's are closed).
    pub fn new(
        graft: Graft,
        shutdown: CancellationToken,
        inflight: Arc<InFlight>,
        sessions: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    ) -> Self {
        Self {
            graft,
            shutdown,
            inflight,
            defs: Arc::new(ToolDefs::default()),
            sessions,
            notified: Arc::default(),
        }
    }
}

/// The server instructions (SPEC §3.2): the working set in a few lines, naming only the
/// meta-tools this server offers.
pub fn instructions() -> String {
    let mut lines = vec![
        "Graft keeps a toolbox of vendor API tools and gives you your own working set of them: the tools named <vendor>__<name> in your tool list, after Graft's own tools.".to_string(),
        "Your working set belongs to you (not to this session) and stays until you or Graft's rule change it.".to_string(),
        "find_tool {query} searches the whole toolbox, demoted tools included; call it before anything else when you need a capability you do not see.".to_string(),
        "promote {vendor, name} puts a tool in your working set and demote takes it out; neither deletes anything.".to_string(),
        "Tools unused past your idle window, or beyond your cap, are demoted for you: find_tool and promote bring them back.".to_string(),
    ];
    if meta::offered("acquire") {
        lines.push("Call find_tool before acquire: a demoted tool is one promote away and needs no authoring.".into());
    }
    if meta::offered("run_tool") {
        lines.push(
            "If a tool you just promoted is not in your list yet, call it through run_tool.".into(),
        );
    }
    lines.join("\n")
}

/// The agent the auth layer put on this request.
fn agent_of(extensions: &rmcp::model::Extensions) -> Result<AuthedAgent, ErrorData> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<AuthedAgent>().cloned())
        .ok_or_else(|| ErrorData::internal_error("request without an authenticated agent", None))
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// A successful tool result: `structuredContent` plus a short text rendering.
pub fn tool_ok(text: impl Into<String>, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// A tool error the model can act on (SPEC §3.4): `isError: true`,
/// `structuredContent.error = {code, message, ..extra}`.
pub fn tool_error(code: &str, message: &str, extra: Value) -> CallToolResult {
    let mut error = json!({"code": code, "message": message});
    if let (Value::Object(e), Value::Object(x)) = (&mut error, extra) {
        e.extend(x);
    }
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    r.structured_content = Some(json!({ "error": error }));
    r
}

/// Holds a tool result within `budget` bytes of JSON (issue 12.6): vendor answers are
/// rendered within it already (`service::answer`), but an error or a dry run repeats
/// what the agent sent, which can be as large as its request. Over the budget, a
/// success's structuredContent is dropped and an error's keeps only `code` and a
/// message cut to 2,000 characters; then the text is cut at a character with a note.
/// The same holds for `tokens` (o200k_base, issue 29.4: the most tokens a client such
/// as Claude Code takes); a result shorter in bytes than `tokens` is never counted.
pub fn within_budget(mut r: CallToolResult, budget: usize, tokens: usize) -> CallToolResult {
    let size = |r: &CallToolResult| serde_json::to_string(r).map_or(usize::MAX, |s| s.len());
    // what the model reads: the text and the structuredContent (the JSON escaping of
    // the transport is not read as tokens); its bytes bound its tokens from above
    let token_count = |r: &CallToolResult| {
        let mut seen: String = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(s) = &r.structured_content {
            seen.push_str(&s.to_string());
        }
        if seen.len() <= tokens {
            seen.len()
        } else {
            crate::domain::served::count(&seen) as usize
        }
    };
    // the serialized result holds every byte the model reads (and more), so a result
    // whose JSON fits the token budget in bytes is not counted at all
    let whole = size(&r);
    if whole <= budget && (whole <= tokens || token_count(&r) <= tokens) {
        return r;
    }
    r.structured_content = match r.structured_content.take() {
        Some(s) if r.is_error == Some(true) => {
            let code = s.pointer("/error/code").cloned().unwrap_or(Value::Null);
            let message = s
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(|m| crate::domain::openapi::truncate_chars(m, 2000))
                .unwrap_or_default();
            Some(
                json!({"error": {"code": code, "message": message, "cut": "the rest of this error was over Graft's result budget"}}),
            )
        }
        _ => None,
    };
    let (fixed, fixed_tokens) = {
        let mut probe = r.clone();
        probe.content.retain(|c| c.as_text().is_none());
        (size(&probe), token_count(&probe))
    };
    let room = budget.saturating_sub(fixed + 64);
    let texts: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let mut content: Vec<ContentBlock> = r
        .content
        .into_iter()
        .filter(|c| c.as_text().is_none())
        .collect();
    let (text, _) = crate::service::answer::cut_text(&texts.join("\n"), room);
    let edge_room = tokens.saturating_sub(fixed_tokens + 16);
    let text = crate::service::answer::cut_to_token_budget(&text, edge_room, edge_room, tokens)
        .map_or(text, |(t, _)| t);
    content.insert(0, ContentBlock::text(text));
    r.content = content;
    r
}

impl GraftMcp {
    /// The agent's working set as tool definitions, in `tools/list` order.
    async fn working_set_tools(&self, agent_id: i64) -> Result<Arc<Vec<Tool>>, ErrorData> {
        let epoch = self.graft.cache_epoch();
        if let Some(list) = self.defs.list(agent_id, epoch) {
            return Ok(list);
        }
        let versions = self
            .graft
            .working_set_versions(agent_id)
            .await
            .map_err(internal)?;
        // the definitions this list needs, taken out of the shared map at once: another
        // build may clear that map while this one waits for the database
        let mut have: std::collections::HashMap<(i64, i64), Tool> =
            std::collections::HashMap::with_capacity(versions.len());
        let missing: Vec<i64> = {
            let defs = self.defs.by_version.lock().expect("defs lock");
            versions
                .iter()
                .filter_map(|k| match defs.get(k) {
                    Some(t) => {
                        have.insert(*k, t.clone());
                        None
                    }
                    None => Some(k.0),
                })
                .collect()
        };
        // by tool id: a version published between the two reads gives the newer one
        let mut fresh: std::collections::HashMap<i64, Tool> = std::collections::HashMap::new();
        if !missing.is_empty() {
            let rows = self.graft.tools_by_ids(&missing).await.map_err(internal)?;
            let mut defs = self.defs.by_version.lock().expect("defs lock");
            if defs.len() + rows.len() > DEFS {
                defs.clear();
            }
            for row in rows {
                let key = (row.id, row.version);
                let tool = definition(&row, self.graft.limits().schema_budget);
                fresh.insert(key.0, tool.clone());
                defs.insert(key, tool);
            }
        }
        let list: Vec<Tool> = versions
            .iter()
            .filter_map(|k| have.remove(k).or_else(|| fresh.remove(&k.0)))
            .collect();
        let list = Arc::new(list);
        self.defs.put_list(agent_id, epoch, list.clone());
        Ok(list)
    }
}

impl ServerHandler for GraftMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new("graft", env!("CARGO_PKG_VERSION")).with_title("Graft"),
        )
        .with_instructions(instructions())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // the client's own name sets its limits when a person chose no harness
        if let Ok(agent) = agent_of(&context.extensions) {
            if let Err(e) = self
                .graft
                .note_client(agent.id, &request.client_info.name)
                .await
            {
                tracing::warn!(error = ?e, "cannot record an agent's client");
            }
        }
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(
            DiscoverResult::from_server_info(PROTOCOL_VERSIONS.to_vec(), self.get_info())
                .with_ttl_ms(0)
                .with_cache_scope(CacheScope::Private),
        )
    }

    /// A 2025-era session is open: forward this agent's list changes to its GET stream
    /// until the session ends or the server shuts down.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Ok(agent) = agent_of(&context.extensions) else {
            return;
        };
        let session_id = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        // one notifier per session, however often the client says it is initialized
        if let Some(sid) = &session_id {
            if !self
                .notified
                .lock()
                .expect("notified lock")
                .insert(sid.clone())
            {
                tracing::debug!(agent = %agent.name, "notifications/initialized repeated: the session has its stream already");
                return;
            }
        }
        let peer = context.peer.clone();
        let Some(mut rx) = self.graft.hub().try_subscribe(agent.id) else {
            tracing::warn!(agent = %agent.name, "an agent holds the most change streams allowed: this session gets no list_changed");
            if let Some(sid) = &session_id {
                self.notified.lock().expect("notified lock").remove(sid);
            }
            return;
        };
        let shutdown = self.shutdown.clone();
        let (sessions, notified) = (self.sessions.clone(), self.notified.clone());
        tokio::spawn(async move {
            let mut rotated = false;
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    r = rx.recv() => match r {
                        Ok(()) | Err(RecvError::Lagged(_)) => {
                            if peer.notify_tool_list_changed().await.is_err() {
                                break;
                            }
                        }
                        // the agent's token was rotated: its sessions end
                        Err(RecvError::Closed) => {
                            rotated = true;
                            break;
                        }
                    },
                    _ = tokio::time::sleep(SESSION_PROBE) => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
            if let Some(sid) = session_id {
                notified.lock().expect("notified lock").remove(&sid);
                if rotated {
                    use rmcp::transport::streamable_http_server::session::SessionManager;
                    let id: rmcp::transport::streamable_http_server::session::SessionId =
                        Arc::from(sid.as_str());
                    if let Err(e) = sessions.close_session(&id).await {
                        tracing::debug!(error = %e, "closing a rotated token's session");
                    }
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    /// A 2026-era `subscriptions/listen` stream: forward this agent's list changes.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let agent = agent_of(&context.request_context().extensions)?;
        let Some(mut rx) = self.graft.hub().try_subscribe(agent.id) else {
            return Err(ErrorData::invalid_request(
                format!(
                    "this agent already has {} open change streams (the most allowed): close one before listening again",
                    crate::service::hub::MAX_CHANNELS_PER_AGENT
                ),
                None,
            ));
        };
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = self.shutdown.cancelled() => return Ok(()),
                r = rx.recv() => match r {
                    Ok(()) | Err(RecvError::Lagged(_)) => {
                        if context.accepted().tools_list_changed == Some(true)
                            && context.sink().notify_tool_list_changed().await.is_err()
                        {
                            return Ok(());
                        }
                    }
                    Err(RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let agent = agent_of(&context.extensions)?;
        let mut tools = meta::tools();
        tools.extend(self.working_set_tools(agent.id).await?.iter().cloned());
        Ok(ListToolsResult::with_all_items(tools)
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // a result with isError is a JSON-RPC success: the /mcp edge's metrics learn of
        // it here (issue 30.1)
        let note = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<crate::metrics::OperationNote>())
            .cloned();
        let cancelled = context.ct.clone();
        // the request's server span (issue 30.2) is the parent of the call's steps; rmcp
        // may run this handler in another task than the HTTP request's
        let span = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<crate::telemetry::RequestSpan>())
            .map(|s| s.0.clone())
            .unwrap_or_else(tracing::Span::none);
        // an MCP vendor's server reports progress on the agent's progressToken (MCP
        // 2025-11-25 utilities/progress), first-class or through run_tool
        let report = progress_reporter(&context);
        let call =
            tracing::Instrument::instrument(self.call_tool_result(request, context), span.clone());
        let result = match report {
            Some(report) => crate::service::upstream::PROGRESS.scope(report, call).await,
            None => call.await,
        };
        if matches!(&result, Ok(r) if r.is_error == Some(true)) {
            span.record("otel.status_code", "ERROR");
            crate::telemetry::set(&span, "error.type", "tool_error");
        }
        if let Some(note) = note {
            // a call the agent cancelled (notifications/cancelled) gets no answer at all
            if cancelled.is_cancelled() {
                note.set_error("cancelled");
            } else if matches!(&result, Ok(r) if r.is_error == Some(true)) {
                note.set_error("tool_error");
            }
        }
        Ok(result?.into())
    }
}

impl GraftMcp {
    /// tools/call (MCP 2025-11-25 server/tools): a meta-tool, or a promoted tool run
    /// through the service; a tool that is not promoted answers `not_promoted`.
    /// Errors: an unknown tool name (invalid params), internal faults.
    async fn call_tool_result(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _in_flight = self.inflight.enter();
        let agent = agent_of(&context.extensions)?;
        let actor = Actor::Agent(agent.id);
        let args = request.arguments.clone().unwrap_or_default();
        let name = request.name.as_ref();
        let limits = self.graft.limits();
        let (budget, tokens) = (limits.result_budget, limits.result_token_budget);
        if meta::offered(name) {
            let r = meta::call(&self.graft, &actor, agent.id, name, args, &context.ct).await;
            return Ok(within_budget(r, budget, tokens));
        }
        let Some((vendor, tool)) = crate::domain::names::split_qualified(name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool: {}",
                    crate::domain::openapi::truncate_chars(name, 200)
                ),
                None,
            ));
        };
        let input = Value::Object(args);
        match self
            .graft
            .call_promoted_tool(agent.id, vendor, tool, input, &context.ct)
            .await
        {
            Ok(ToolCall::Ran(answer)) => {
                let error = answer.code().is_some()
                    && !matches!(answer, crate::service::RunAnswer::Passed { .. });
                let mut result = meta::run_result(answer);
                // a tool with an output schema: SDK clients check any structuredContent
                // against it, so Graft's own error goes as text only (SPEC §3.4)
                if error && self.declares_output(agent.id, name).await {
                    result.structured_content = None;
                }
                Ok(within_budget(result, budget, tokens))
            }
            Ok(ToolCall::NotPromoted) => {
                let hint = if meta::offered("run_tool") {
                    ", or call it once through run_tool"
                } else {
                    ""
                };
                Ok(within_budget(tool_error(
                    "not_promoted",
                    &format!("{name} is in the toolbox but not in your working set: call promote {{vendor: \"{vendor}\", name: \"{tool}\"}}{hint}"),
                    json!({"vendor": vendor, "name": tool}),
                ), budget, tokens))
            }
            Err(crate::service::ServiceError::ToolNotFound(_)) => Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool: {}",
                    crate::domain::openapi::truncate_chars(name, 200)
                ),
                None,
            )),
            Err(e) => Err(internal(e)),
        }
    }
}

impl GraftMcp {
    /// Whether the agent's tool `name` (in its working set) declares an output schema.
    async fn declares_output(&self, agent_id: i64, name: &str) -> bool {
        self.working_set_tools(agent_id)
            .await
            .map(|tools| {
                tools
                    .iter()
                    .any(|t| t.name == name && t.output_schema.is_some())
            })
            .unwrap_or(false)
    }
}

/// Reports a call's progress to the agent, when its request carried a `progressToken`.
fn progress_reporter(
    context: &RequestContext<RoleServer>,
) -> Option<crate::service::upstream::ProgressFn> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    Some(std::sync::Arc::new(move |progress, total, message| {
        let mut p = rmcp::model::ProgressNotificationParam::new(token.clone(), progress);
        if let Some(t) = total {
            p = p.with_total(t);
        }
        if let Some(m) = message {
            p = p.with_message(m);
        }
        let peer = peer.clone();
        Box::pin(async move {
            let _ = peer.notify_progress(p).await;
        })
    }))
}

fn internal(e: crate::service::ServiceError) -> ErrorData {
    tracing::error!(error = ?e, "MCP request failed");
    ErrorData::internal_error("internal error", None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(title: Option<&str>, output: Option<&str>) -> crate::service::ToolView {
        crate::service::ToolView {
            id: 1,
            vendor: "acme".into(),
            name: "create_thing".into(),
            operation_id: Some("createThing".into()),
            version: 2,
            title: title.map(str::to_string),
            description: "Creates a thing. Needs a name.".into(),
            input_schema: r#"{"type":"object","properties":{"name":{"type":"string","description":"Its name"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name"]}"#.into(),
            output_schema: output.map(str::to_string),
            method: "POST".into(),
            path_template: "/things".into(),
            binding: "{}".into(),
            read_only_hint: false,
            destructive_hint: false,
            idempotent_hint: false,
            open_world_hint: true,
            authored_by: "import".into(),
            first_author: "import".into(),
            hints_by: None,
            read_only_by: None,
            retired_at: None,
            vendor_disabled_at: None,
            vendor_removed_at: None,
            tokens: None,
        }
    }

    /// Claude Code cuts server instructions and tool descriptions at 2,048 characters
    /// without saying so (issue 29.4): Graft's own stay under it.
    #[test]
    fn the_client_limits_count_every_meta_tool() {
        assert_eq!(meta::OFFERED.len() as i64, crate::console::words::OWN_TOOLS);
    }

    #[test]
    fn graft_s_own_tools_cost_what_the_console_says() {
        let counted: i64 = meta::tools()
            .iter()
            .map(|t| crate::domain::served::count(&serde_json::to_string(t).unwrap()))
            .sum();
        assert_eq!(
            counted,
            crate::clients::OWN_TOOLS_TOKENS,
            "set clients::OWN_TOOLS_TOKENS to {counted}"
        );
    }

    #[test]
    fn instructions_and_meta_tool_descriptions_fit_what_clients_show() {
        assert!(instructions().chars().count() <= 2048);
        for t in meta::tools() {
            let d = t.description.as_deref().unwrap_or_default();
            assert!(
                d.chars().count() <= 2048,
                "{}: {}",
                t.name,
                d.chars().count()
            );
        }
    }

    /// What tokens count is what tools/list writes, byte for byte (issue 29.1).
    #[test]
    fn the_served_tool_is_the_counted_json() {
        for t in [
            row(None, None),
            row(
                Some("Create a thing"),
                Some(r#"{"type":"object","properties":{"id":{"type":"string"}}}"#),
            ),
        ] {
            let wire = serde_json::to_string(&definition(&t, 16 << 10)).unwrap();
            let counted = serde_json::to_string(&crate::domain::served::definition(
                &crate::service::served(&t),
                16 << 10,
            ))
            .unwrap();
            assert_eq!(wire, counted);
            assert!(wire.contains(r#""additionalProperties":false"#), "{wire}");
        }
    }
}
