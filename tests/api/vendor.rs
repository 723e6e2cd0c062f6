//! A real local HTTP vendor for proxy tests: an axum server on 127.0.0.1:0 that echoes
//! what it receives (like httpbin's `/anything`) and records every request, so a test
//! can check exactly what Graft sent — and that nothing was sent.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the vendor received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: String,
}

/// A running echo vendor.
#[derive(Clone)]
pub struct Vendor {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Vendor {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
    pub fn last(&self) -> Seen {
        self.requests()
            .last()
            .cloned()
            .expect("the vendor received a request")
    }
    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

async fn echo(
    State(v): State<Vendor>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = String::from_utf8_lossy(&body).into_owned();
    v.seen.lock().unwrap().push(Seen {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers: headers.clone(),
        body: body.clone(),
    });
    let hdrs: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, val)| {
            (
                k.to_string(),
                Value::String(val.to_str().unwrap_or("").to_string()),
            )
        })
        .collect();
    Json(json!({"method": method.to_string(), "url": uri.to_string(), "headers": hdrs, "data": body})).into_response()
}

async fn status(State(v): State<Vendor>, uri: Uri, Path(code): Path<u16>) -> Response {
    v.seen.lock().unwrap().push(Seen {
        method: "GET".into(),
        path: uri.path().into(),
        query: None,
        headers: HeaderMap::new(),
        body: String::new(),
    });
    (
        StatusCode::from_u16(code).unwrap(),
        Json(json!({"error": {"message": "boom", "code": code}})),
    )
        .into_response()
}

/// Answers `code` with an empty body (204, 205, or an empty 200).
async fn empty(
    State(v): State<Vendor>,
    method: Method,
    uri: Uri,
    Path(code): Path<u16>,
) -> Response {
    v.seen.lock().unwrap().push(Seen {
        method: method.to_string(),
        path: uri.path().into(),
        query: uri.query().map(str::to_string),
        headers: HeaderMap::new(),
        body: String::new(),
    });
    StatusCode::from_u16(code).unwrap().into_response()
}

/// Echoes a multipart/form-data body: each part's name, file name, content type, size
/// and (for fields) text.
async fn files(
    State(v): State<Vendor>,
    uri: Uri,
    headers: HeaderMap,
    mut form: axum::extract::Multipart,
) -> Response {
    let mut parts = Vec::new();
    while let Ok(Some(field)) = form.next_field().await {
        let name = field.name().unwrap_or("").to_string();
        let filename = field.file_name().map(str::to_string);
        let content_type = field.content_type().map(str::to_string);
        let data = field.bytes().await.unwrap_or_default();
        parts.push(json!({
            "name": name, "filename": filename, "contentType": content_type, "size": data.len(),
            "text": filename.is_none().then(|| String::from_utf8_lossy(&data).into_owned()),
            "bytes": filename.is_some().then(|| data.to_vec()),
        }));
    }
    v.seen.lock().unwrap().push(Seen {
        method: "POST".into(),
        path: uri.path().into(),
        query: uri.query().map(str::to_string),
        headers,
        body: String::new(),
    });
    Json(json!({"parts": parts})).into_response()
}

/// Answers after `secs` seconds; the request is seen as it arrives.
async fn delay(
    State(v): State<Vendor>,
    Path(secs): Path<u64>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    v.seen.lock().unwrap().push(Seen {
        method: "GET".into(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers,
        body: String::new(),
    });
    tokio::time::sleep(Duration::from_secs(secs)).await;
    Json(json!({"slept": secs})).into_response()
}

/// Plain text of `limit` words (default 100,000: about 200,000 o200k_base tokens, an
/// answer over the result token budget, issue 29.4), as [`words_text`] writes them.
async fn words(uri: Uri) -> Response {
    let n = uri
        .query()
        .and_then(|q| q.strip_prefix("limit="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    ([("content-type", "text/plain")], words_text(n)).into_response()
}

/// `w0 w1 w2 …`, `n` words.
pub fn words_text(n: usize) -> String {
    let mut text = String::with_capacity(n * 7);
    for i in 0..n {
        text.push_str(&format!("w{i} "));
    }
    text
}

async fn big() -> Response {
    (
        [("content-type", "text/plain")],
        "x".repeat(2 * 1024 * 1024),
    )
        .into_response()
}

/// The 8-byte PNG signature and an IHDR chunk's start: enough for a client to see a PNG.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01";

/// Starts an echo vendor. `redirect_to` is where `/redirect` sends clients (another origin).
pub async fn start(redirect_to: Option<String>) -> Vendor {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let v = Vendor {
        addr: listener.local_addr().unwrap(),
        seen: Arc::default(),
    };
    let target = redirect_to.unwrap_or_else(|| "http://127.0.0.1:9/".into());
    let app = Router::new()
        .route("/status/{code}", get(status))
        .route("/delay/{secs}", get(delay))
        .route("/empty/{code}", any(empty))
        .route("/files", axum::routing::post(files))
        // binary, compressed and non-UTF-8 answers
        .route(
            "/png",
            get(|| async { ([("content-type", "image/png")], PNG.to_vec()) }),
        )
        .route(
            "/gz",
            get(|headers: HeaderMap| async move {
                let asked = headers
                    .get("accept-encoding")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                Json(json!({"zipped": true, "acceptEncoding": asked, "pad": "z".repeat(4096)}))
            })
            .layer(tower_http::compression::CompressionLayer::new()),
        )
        .route(
            "/badgz",
            get(|| async {
                (
                    [
                        ("content-type", "application/json"),
                        ("content-encoding", "gzip"),
                    ],
                    b"this is not gzip at all".to_vec(),
                )
            }),
        )
        .route(
            "/latin1",
            get(|| async {
                (
                    [("content-type", "text/plain; charset=ISO-8859-1")],
                    b"caf\xe9 cr\xe8me".to_vec(),
                )
            }),
        )
        .route("/big", get(big))
        .route("/words", get(words))
        .route(
            "/redirect",
            get(move || async move {
                (StatusCode::FOUND, [("location", target.clone())]).into_response()
            }),
        )
        // redirects on the vendor's own origin: below `/anything` (a vendor whose base
        // path is `/anything` may follow it) and out of it
        .route(
            "/anything/hop-in",
            get(|| async {
                (StatusCode::FOUND, [("location", "/anything/landed")]).into_response()
            }),
        )
        .route(
            "/anything/hop-out",
            get(|| async {
                (StatusCode::FOUND, [("location", "/outside/landed")]).into_response()
            }),
        )
        .route(
            "/anything/hop-dots",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [("location", "/anything/..;/outside/landed")],
                )
                    .into_response()
            }),
        )
        .route(
            "/anything/hop-post",
            axum::routing::post(|| async {
                (StatusCode::SEE_OTHER, [("location", "/anything/landed")]).into_response()
            }),
        )
        // issue 25: what a vendor says beside its body
        .route(
            "/said/unprocessable",
            any(|| async {
                (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    Json(json!({"errors": {"email": ["is not an email address"], "age": ["must be at least 18"]}})),
                )
                    .into_response()
            }),
        )
        .route(
            "/said/bad-gateway",
            get(|| async {
                (
                    StatusCode::BAD_GATEWAY,
                    [("content-type", "text/html")],
                    "<html><body><h1>502 Bad Gateway</h1><p>upstream billing-7 is down</p></body></html>",
                )
                    .into_response()
            }),
        )
        .route(
            "/said/paged",
            get(|| async {
                (
                    [
                        ("link", "<https://api.example/said/paged?page=2>; rel=\"next\""),
                        ("x-total-count", "42"),
                        ("x-ratelimit-remaining", "99"),
                        ("etag", "\"v7\""),
                        ("x-internal-trace", "not for agents"),
                    ],
                    Json(json!({"items": [1, 2]})),
                )
                    .into_response()
            }),
        )
        .route(
            "/said/limited",
            get(|| async {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [("retry-after", "30")],
                    Json(json!({"error": "slow down"})),
                )
                    .into_response()
            }),
        )
        .route(
            "/said/limited-reset",
            get(|| async {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "15")],
                    Json(json!({"error": "quota"})),
                )
                    .into_response()
            }),
        )
        .route(
            "/said/download",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [("location", "http://127.0.0.2:9/bucket/report.pdf?X-Amz-Signature=abc123")],
                )
                    .into_response()
            }),
        )
        .route(
            "/said/numbers",
            get(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"id":123456789012345678901234567890,"amount":0.1000000000000000055511151231257827,"count":3,"ratio":1.5}"#,
                )
                    .into_response()
            }),
        )
        .route(
            "/said/encoded",
            get(|headers: HeaderMap| async move {
                use base64::Engine;
                let key = headers
                    .get("x-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                Json(json!({
                    "upper": key.to_ascii_uppercase(),
                    "lower": key.to_ascii_lowercase(),
                    "b64": base64::engine::general_purpose::STANDARD.encode(&key),
                    "b64url": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&key),
                    "hex": hex::encode(&key),
                    "note": format!("debug: key hex {} end", hex::encode(&key).to_ascii_uppercase()),
                }))
                .into_response()
            }),
        )
        .route(
            "/slow/{secs}",
            any(|State(v): State<Vendor>, method: Method, uri: Uri, Path(secs): Path<u64>| async move {
                v.seen.lock().unwrap().push(Seen {
                    method: method.to_string(),
                    path: uri.path().into(),
                    query: uri.query().map(str::to_string),
                    headers: HeaderMap::new(),
                    body: String::new(),
                });
                tokio::time::sleep(Duration::from_secs(secs)).await;
                Json(json!({"slept": secs})).into_response()
            }),
        )
        .fallback(any(echo))
        .with_state(v.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    v
}
