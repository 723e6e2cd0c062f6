//! The `/mcp` endpoint's HTTP edge (MCP transports, both revisions): bodies that are not
//! one JSON-RPC message, malformed tools/call, CORS for browser clients, and which
//! origins may call.

use crate::metrics::{Metrics, OperationNote};
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;
use std::sync::Arc;

/// Most bytes of one JSON-RPC message posted to `/mcp` (rmcp's default, set
/// explicitly; an `acquire` with a large input schema fits many times over).
pub const MAX_MCP_BODY: usize = 4 << 20;

/// A JSON-RPC error answer (JSON-RPC 2.0 §5, `id: null` since the request's id could
/// not be read) with HTTP status `status`.
pub(crate) fn jsonrpc_error(
    status: http::StatusCode,
    code: i64,
    message: &str,
) -> axum::response::Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, Json(body)).into_response()
}

/// Posts to `/mcp` that are not one JSON-RPC message get a JSON-RPC error with HTTP 400
/// in both eras (MCP 2025-11-25 basic/transports: "the body MUST be a single JSON-RPC
/// request, notification, or response"), where rmcp would answer 415 "fail to
/// deserialize": malformed JSON → -32700 parse error; an array (a batch, removed from
/// the protocol in 2025-06-18), another JSON value or an object that is no JSON-RPC
/// message → -32600 invalid request. A body over [`MAX_MCP_BODY`] gets 413.
///
/// Each POST whose method could be read is counted in
/// `mcp_server_operation_duration_seconds` (issue 30.1; OpenTelemetry MCP conventions):
/// its method, its protocol version (the `MCP-Protocol-Version` header, else
/// initialize's `protocolVersion`, else `2025-03-26` as MCP says for a missing header),
/// and its error type: what the handler noted ([`OperationNote`]: `tool_error` for a
/// tools/call result with `isError`), else the JSON-RPC error code in the answer (a
/// JSON body, or an event stream's `data:`), else the HTTP status of a failed one. The
/// time runs until the answer's body ended (2025 sessions answer with an event stream
/// whose head leaves first); a `subscriptions/listen` stream counts until its head.
pub(crate) async fn jsonrpc_errors(
    State(metrics): State<Arc<Metrics>>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if !metrics.enabled() && !crate::telemetry::enabled() {
        return edge(req, next, &mut None).await;
    }
    let started = std::time::Instant::now();
    let note = OperationNote::default();
    req.extensions_mut().insert(note.clone());
    let header_version = req
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut seen = None;
    let resp = edge(req, next, &mut seen).await;
    let Some(Seen {
        method,
        version,
        span,
    }) = seen
    else {
        return resp;
    };
    let version = header_version
        .or(version)
        .unwrap_or_else(|| "2025-03-26".to_string());
    let listen = method == "subscriptions/listen";
    let by_status = (!resp.status().is_success()).then(|| resp.status().as_u16().to_string());
    let record = move |found: Option<String>| {
        // what the handler noted, else a JSON-RPC error in the answer, else its status
        let error = note.error().map(str::to_string).or(found).or(by_status);
        if let (Some(span), Some(error)) = (&span, &error) {
            // the server span ends with this closure (its last handle), when the answer did
            span.record("otel.status_code", "ERROR");
            crate::telemetry::set(span, "error.type", error.clone());
        }
        metrics.operation(
            &method,
            &version,
            error.as_deref(),
            started.elapsed().as_secs_f64(),
        );
    };
    if listen {
        // a listen stream lasts as long as its client stays: its operation is its opening
        record(None);
        return resp;
    }
    let (parts, body) = resp.into_parts();
    axum::response::Response::from_parts(
        parts,
        axum::body::Body::new(Timed {
            inner: body,
            found: None,
            answered: false,
            record: Some(Box::new(record)),
        }),
    )
}

/// What the edge read of a request: its method, for initialize the protocol version it
/// asks for, and its server span when traces are on.
struct Seen {
    method: String,
    version: Option<String>,
    span: Option<tracing::Span>,
}

/// The server span of a JSON-RPC `message` posted to `/mcp` (OpenTelemetry semantic
/// conventions for MCP): named `{mcp.method.name} {target}` (the tool or prompt name,
/// the resource URI; the method alone otherwise), kind server, with `mcp.method.name`,
/// `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id`, `gen_ai.tool.name` and
/// `gen_ai.operation.name` (`execute_tool`) of a tools/call, and the agent
/// (`gen_ai.agent.name`, `graft.agent.id`). Its parent is the W3C context in
/// `params._meta.traceparent` (both eras); the `traceparent` HTTP header's context is a
/// link then, or the parent when `_meta` has none.
fn request_span(
    parts: &http::request::Parts,
    message: &serde_json::Value,
    method: &str,
) -> tracing::Span {
    use crate::telemetry::{printable, set};
    // what an agent wrote is bounded and printable before it names or marks a span: a
    // method MCP does not define is `other`, other values are cut (a review found a
    // 3.5 MB method name held in the export queue)
    let method = crate::metrics::known_method(method);
    let params = message.get("params");
    let param = |k: &str| params.and_then(|p| p.get(k)).and_then(|v| v.as_str());
    let target = match method {
        "tools/call" | "prompts/get" => param("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => param("uri"),
        _ => None,
    }
    .map(|t| printable(t, 200));
    let name = match &target {
        Some(t) => format!("{method} {t}"),
        None => method.to_string(),
    };
    let span = tracing::info_span!(
        target: "graft::mcp",
        "mcp request",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
    );
    let header = |k: &str| {
        parts
            .headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let meta = params.and_then(|p| p.get("_meta"));
    let from_meta = crate::telemetry::extract(&|k| {
        meta.and_then(|m| m.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    });
    let from_header = crate::telemetry::extract(&header);
    match from_meta {
        Some(parent) => crate::telemetry::adopt(&span, Some(parent), from_header),
        None => crate::telemetry::adopt(&span, from_header, None),
    }
    set(&span, "mcp.method.name", method);
    match message.get("id") {
        Some(serde_json::Value::String(id)) => set(&span, "jsonrpc.request.id", printable(id, 128)),
        Some(serde_json::Value::Number(id)) => {
            set(&span, "jsonrpc.request.id", printable(&id.to_string(), 128))
        }
        _ => {}
    }
    let version =
        header("mcp-protocol-version").or_else(|| param("protocolVersion").map(str::to_string));
    if let Some(v) = version {
        set(
            &span,
            "mcp.protocol.version",
            crate::metrics::known_version(&v),
        );
    }
    // a session exists only in the 2025 era, where Graft issued its id
    let era_2026 = parts
        .headers
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes() >= b"2026".as_slice());
    if let Some(id) = header("mcp-session-id").filter(|_| !era_2026) {
        set(&span, "mcp.session.id", printable(&id, 128));
    }
    set(&span, "network.protocol.name", "http");
    if method == "tools/call" {
        set(&span, "gen_ai.operation.name", "execute_tool");
        // run_tool runs a toolbox tool by name: that tool is named too
        let args = params.and_then(|p| p.get("arguments"));
        let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(|v| v.as_str());
        if target.as_deref() == Some("run_tool") {
            if let (Some(vendor), Some(name)) = (arg("vendor"), arg("name")) {
                set(
                    &span,
                    "graft.tool.name",
                    printable(&format!("{vendor}__{name}"), 200),
                );
            }
        }
        if let Some(tool) = target {
            set(&span, "gen_ai.tool.name", tool);
        }
    }
    if let Some(agent) = parts.extensions.get::<crate::service::AuthedAgent>() {
        set(&span, "gen_ai.agent.name", agent.name.clone());
        set(&span, "graft.agent.id", agent.id);
    }
    span
}

/// An answer's body that records its operation once, when the body ended or was
/// dropped (a client that went away): a 2025 session's answer is an event stream whose
/// head leaves before the handler ran. Small frames are read for a JSON-RPC error
/// (a JSON answer, or an event's `data:` lines).
struct Timed {
    inner: axum::body::Body,
    found: Option<String>,
    /// A JSON-RPC response (a result or an error) has left: a client that closes the
    /// stream after reading it did not go away early.
    answered: bool,
    record: Option<Box<dyn FnOnce(Option<String>) + Send>>,
}

impl Timed {
    fn finish(&mut self) {
        if let Some(record) = self.record.take() {
            record(self.found.take());
        }
    }
}

impl Drop for Timed {
    /// A body dropped before its end and before a JSON-RPC response left: the client
    /// went away before its answer came (error type `disconnected`). A client may
    /// close a 2025 session's event stream as soon as it read the response, before the
    /// stream's end is polled: that call was answered.
    fn drop(&mut self) {
        if self.record.is_some()
            && !self.answered
            && !http_body::Body::is_end_stream(&self.inner)
            && self.found.is_none()
        {
            self.found = Some("disconnected".to_string());
        }
        self.finish();
    }
}

impl http_body::Body for Timed {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        let polled = std::pin::Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                // once a response left, the rest of the stream is not read for one
                if let Some(data) = frame.data_ref().filter(|_| !this.answered) {
                    this.answered = is_response(data);
                }
                if let Some(data) = frame.data_ref().filter(|d| d.len() <= 4096) {
                    if this.found.is_none() {
                        this.found = jsonrpc_error_code(data);
                    }
                }
            }
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => this.finish(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Whether `data` (a JSON answer, or one server-sent event) is a JSON-RPC response:
/// rmcp writes `{"jsonrpc":"2.0","id":…,"result"` (or `"error"`) with the member
/// before any `"method"` (which requests and notifications carry); only the first
/// 512 bytes are read.
fn is_response(data: &[u8]) -> bool {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    // built once: building a searcher costs more than searching 512 bytes
    static RESULT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""result":"#));
    static ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""error":"#));
    static METHOD: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""method":"#));
    let head = &data[..data.len().min(512)];
    let answer = match (RESULT.find(head), ERROR.find(head)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    match (answer, METHOD.find(head)) {
        (Some(a), Some(m)) => a < m,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The JSON-RPC error code in `data`: a JSON answer, or the `data:` lines of
/// server-sent events (each one JSON-RPC message).
fn jsonrpc_error_code(data: &[u8]) -> Option<String> {
    // rmcp writes an error as `"error":{"code":…`: an answer without it is not parsed
    // (most answers are successes: this keeps the edge's cost per call small)
    static ERROR_CODE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(br#""error":{"code":"#));
    ERROR_CODE.find(data)?;
    let code = |v: serde_json::Value| v.get("error")?.get("code")?.as_i64();
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        return code(v).map(|c| c.to_string());
    }
    std::str::from_utf8(data)
        .ok()?
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .find_map(code)
        .map(|c| c.to_string())
}

/// [`jsonrpc_errors`]'s answer; `seen`, when given, gets the method of a JSON-RPC
/// message that reached rmcp.
async fn edge(
    req: axum::extract::Request,
    next: axum::middleware::Next,
    seen: &mut Option<Seen>,
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
    let (mut parts, body) = req.into_parts();
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
    let message = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    if let Some(m) = &message {
        if let Some(method) = m.get("method").and_then(|v| v.as_str()) {
            let version = m
                .get("params")
                .and_then(|p| p.get("protocolVersion"))
                .and_then(|v| v.as_str())
                .map(str::to_string);
            let span = crate::telemetry::enabled().then(|| request_span(&parts, m, method));
            if let Some(span) = &span {
                parts
                    .extensions
                    .insert(crate::telemetry::RequestSpan(span.clone()));
            }
            *seen = Some(Seen {
                method: method.to_string(),
                version,
                span,
            });
        }
    }
    let span = seen
        .as_ref()
        .and_then(|s| s.span.clone())
        .unwrap_or_else(tracing::Span::none);
    let bad_call = message.and_then(|m| Some((m.get("id")?.clone(), tools_call_problem(&m)?)));
    let resp = tracing::Instrument::instrument(
        next.run(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(bytes),
        )),
        span,
    )
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
pub(crate) fn tools_call_problem(message: &serde_json::Value) -> Option<String> {
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
pub(crate) async fn invalid_params(
    resp: axum::response::Response,
    problem: &str,
) -> axum::response::Response {
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
pub(crate) fn mcp_cors(origins: Arc<Vec<String>>) -> tower_http::cors::CorsLayer {
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
pub(crate) async fn foreign_origins(
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
pub(crate) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

/// The origin (`scheme://host[:port]`) of a URL.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

#[cfg(test)]
mod tests {
    use super::{is_response, origin_allowed};

    #[test]
    fn a_response_is_told_from_requests_and_notifications() {
        for yes in [
            &br#"data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"m"}}"#,
            br#"data: {"jsonrpc":"2.0","id":2,"result":{"method":"x"}}"#,
        ] {
            assert!(is_response(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &br#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#
                [..],
            br#"data: {"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}"#,
            br#": keep-alive"#,
            b"",
        ] {
            assert!(!is_response(no), "{}", String::from_utf8_lossy(no));
        }
    }

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
