//! The fuzz targets' bodies (each `fuzz_targets/NAME.rs` calls `NAME` here) and what they
//! share: a Graft on a throwaway SQLite file with two real vendor documents imported, an
//! agent, a signed-in console person, and the router to drive in process (no socket is
//! used). `tests/fuzz_regressions.rs` includes this file to replay the seeds and every
//! kept crash through the same invariants.

use graft::service::{Graft, ServiceConfig, SystemClock};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The shared vendor documents: `GRAFT_SPECS_DIR`, else `shared/specs` beside the
/// checkout (this file is built from `fuzz/` and, by the regression test, from the root).
pub fn specs_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GRAFT_SPECS_DIR") {
        return PathBuf::from(dir);
    }
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [
        here.join("../shared/specs"),
        here.join("../../shared/specs"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or_else(|| here.join("../shared/specs"))
}

/// One process-wide world for the targets that need a running Graft.
pub struct World {
    /// The runtime the router runs on.
    pub rt: tokio::runtime::Runtime,
    /// The service.
    pub graft: Graft,
    /// `/mcp`, `/healthz` and the console.
    pub router: axum::Router,
    /// An agent's bearer token.
    pub token: String,
    /// A 2025-era session of that agent.
    pub session: String,
    /// A signed-in console session's `Cookie` header value.
    pub cookie: String,
    _dir: tempfile::TempDir,
}

/// The world, built once per process. Panics when it cannot be built (no finding then).
pub fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(build_world)
}

fn build_world() -> World {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (graft, router, token, session, cookie) = rt.block_on(async {
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("graft.db").display()
        );
        let graft = Graft::open(
            &url,
            Arc::new(SystemClock),
            ServiceConfig::ephemeral("http://127.0.0.1:3000"),
        )
        .await
        .unwrap();
        for (file, slug) in [
            ("petstore_openapi.yaml", "petstore"),
            ("stripe_spec3_2023-09.yaml", "stripe"),
        ] {
            if let Ok(text) = std::fs::read_to_string(specs_dir().join(file)) {
                let _ = graft
                    .import_openapi(slug, &text, Some("http://127.0.0.1:9/api"), &mut |_, _| {})
                    .await;
            }
        }
        let _ = graft
            .add_vendor("acme", None, "http://127.0.0.1:9/v1")
            .await;
        let (_, token) = graft.add_agent("fuzz", None, None, None).await.unwrap();
        graft
            .add_user("ops", "correct horse battery")
            .await
            .unwrap();
        let settings = graft::config::Settings {
            data_dir: dir.path().to_path_buf(),
            database_url: url.clone(),
            addr: "127.0.0.1:0".parse().unwrap(),
            public_url: None,
            allowed_hosts: vec![],
            allowed_origins: vec![],
            session_idle: std::time::Duration::from_secs(600),
            site_root: dir.path().join("site"),
            secret_key: None,
            secret_key_file: None,
            sweep_interval: std::time::Duration::from_secs(3600),
            limits: graft::proxy::ProxyLimits {
                vendor_loopback: true,
                ..Default::default()
            },
            embedding_model: None,
            connection_limits: Default::default(),
            metrics_token: None,
            metrics: true,
            quotas: Default::default(),
            trusted_proxies: vec![],
            oauth: graft::service::oauth::OAuthSettings::default(),
            mcp: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let app = graft::server::Application::build(&settings, graft.clone(), listener)
            .await
            .unwrap();
        let router = app.router();
        let session = initialize(&router, &token).await;
        let cookie = sign_in(&router).await;
        (graft, router, token, session, cookie)
    });
    World {
        rt,
        graft,
        router,
        token,
        session,
        cookie,
        _dir: dir,
    }
}

async fn initialize(router: &axum::Router, token: &str) -> String {
    use tower::ServiceExt;
    let req = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
        ))
        .unwrap();
    let resp = router.clone().oneshot(req).await.unwrap();
    resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string()
}

async fn sign_in(router: &axum::Router) -> String {
    use tower::ServiceExt;
    let req = http::Request::post("/api/login")
        .header("host", "127.0.0.1")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from(
            "name=ops&password=correct+horse+battery",
        ))
        .unwrap();
    let resp = router.clone().oneshot(req).await.unwrap();
    let cookie = resp.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

// ---------------------------------------------------------------- openapi_import

mod openapi_import_impl {

    use graft::domain::names::{ToolName, VendorSlug};
    use graft::domain::{openapi, schema};
    use std::collections::HashSet;

    /// OpenAPI import: document bytes (JSON or YAML) → import plan. Invariants on every
    /// input: no panic; every planned tool's name passes the name rules; every input schema
    /// is client-safe (a root object of type object, no `$ref` or `x-` key left) and its
    /// served form fits the schema budget. libFuzzer's -rss_limit_mb and -timeout bound
    /// memory and time.
    pub fn openapi_import(data: &[u8]) {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let Ok(doc) = openapi::parse_document(text) else {
            return;
        };
        let vendor = VendorSlug::parse("fuzz").unwrap();
        let Ok(plan) = openapi::plan_import(
            &doc,
            &vendor,
            &|_| false,
            &std::collections::HashMap::new(),
            &mut |_, _| {},
        ) else {
            return;
        };
        let mut names = HashSet::new();
        for t in &plan.tools {
            assert!(
                ToolName::parse(&vendor, &t.name).is_ok(),
                "invalid name {:?}",
                t.name
            );
            assert!(names.insert(t.name.clone()), "duplicate name {:?}", t.name);
            let s = &t.input_schema;
            assert_eq!(
                s.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{s}"
            );
            assert!(
                !schema::has_ref_or_extension(s),
                "a $ref or x- key is left: {s}"
            );
            let budget = graft::proxy::ProxyLimits::default().schema_budget;
            let served = schema::fit(s, budget);
            assert!(
                served.to_string().len() <= budget,
                "served schema over budget"
            );
        }
    }
}
pub use openapi_import_impl::openapi_import;

// ---------------------------------------------------------------- schema_acquire

mod schema_acquire_impl {

    use graft::domain::authoring::{self, ToolSpec};
    use graft::domain::names::VendorSlug;
    use graft::domain::schema;

    /// Schema inlining and acquire's checks on arbitrary JSON Schema values. Invariants: no
    /// panic, bounded work (MAX_NODES, MAX_COPY_BYTES), and an accepted schema is what
    /// clients and the validator take: a root object of type object, no `$ref` left, within
    /// the inlined size limit, compiling on the linear-time pattern engine.
    pub fn schema_acquire(data: &[u8]) {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
            return;
        };
        let _ = schema::inline(&value, &value);
        let _ = schema::inlines_within_budget(&value, &value);
        let spec = ToolSpec {
            name: "fuzzed".into(),
            description: "a fuzzed tool".into(),
            method: "POST".into(),
            path: "/things".into(),
            input_schema: value,
            query: vec![],
            headers: vec![],
            body_encoding: None,
            operation_id: None,
        };
        let vendor = VendorSlug::parse("fuzz").unwrap();
        if let Ok(draft) = authoring::draft(&vendor, &spec) {
            let s = &draft.input_schema;
            assert_eq!(
                s.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{s}"
            );
            assert!(!schema::has_ref_or_extension(s), "a $ref is left: {s}");
            assert!(s.to_string().len() <= authoring::MAX_INLINED_BYTES + 1024);
            assert!(schema::linear_validator(s).is_ok());
        }
    }
}
pub use schema_acquire_impl::schema_acquire;

// ---------------------------------------------------------------- request_build

mod request_build_impl {

    use graft::domain::tool::Binding;
    use graft::proxy::request::{self, Credential, Operation};
    use serde_json::Value;

    const BASE: &str = "https://api.example.com/v1";
    const SECRET: &str = "sk_fuzz_SECRET_0123";

    /// Request building: (binding, input) → HTTP request. The input is JSON
    /// `{"method", "path", "binding", "input", "credential"}`. Invariants: the URL stays on
    /// the vendor's origin and under its base path; no credential in the URL unless the
    /// credential is a query parameter; every header name and value is valid HTTP.
    pub fn request_build(data: &[u8]) {
        let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data) else {
            return;
        };
        let method = m.get("method").and_then(Value::as_str).unwrap_or("GET");
        let path = m.get("path").and_then(Value::as_str).unwrap_or("/x");
        let Ok(binding) =
            serde_json::from_value::<Binding>(m.get("binding").cloned().unwrap_or(Value::Null))
        else {
            return;
        };
        let Some(Value::Object(input)) = m.get("input").cloned() else {
            return;
        };
        let name = m
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("X-Key")
            .to_string();
        let credential = match m.get("credential").and_then(Value::as_str) {
            Some("bearer") => Credential::Bearer(SECRET.into()),
            Some("header") => Credential::Header {
                name,
                value: SECRET.into(),
            },
            Some("query") => Credential::Query {
                name,
                value: SECRET.into(),
            },
            Some("basic") => Credential::Basic {
                user: "user".into(),
                password: SECRET.into(),
            },
            _ => Credential::None,
        };
        let op = Operation {
            method,
            path_template: path,
            binding: &binding,
        };
        let Ok(req) = request::build(BASE, op, &input, &credential) else {
            return;
        };
        let base = url::Url::parse(BASE).unwrap();
        assert!(
            request::same_origin(&req.url, &base),
            "left the origin: {}",
            req.url
        );
        assert!(
            request::under_base_path(&req.url, &base),
            "left the base path: {}",
            req.url
        );
        // (a secret the fuzzer wrote into the path or input itself is not a leak)
        let planted = std::str::from_utf8(data).is_ok_and(|t| t.contains("sk_fuzz"));
        if !matches!(credential, Credential::Query { .. }) && !planted {
            let url = req.url.as_str();
            assert!(
                !url.contains(SECRET) && !url.contains("sk_fuzz"),
                "credential in the URL: {url}"
            );
        }
        for (k, v) in &req.headers {
            assert!(
                http::HeaderName::from_bytes(k.as_bytes()).is_ok(),
                "bad header name {k:?}"
            );
            assert!(
                http::HeaderValue::from_str(v).is_ok(),
                "bad value of {k}: {v:?}"
            );
        }
    }
}
pub use request_build_impl::request_build;

// ---------------------------------------------------------------- http_endpoint

mod http_endpoint_impl {

    use tower::ServiceExt;

    /// The console's server functions, but `logout` and `rotate_token`, which would end
    /// the world's session or token (the signed-out answers are the gate's, covered anyway).
    const CONSOLE_FNS: &[&str] = &[
        "login",
        "whoami",
        "change_password",
        "agents",
        "add_agent",
        "edit_agent",
        "take_token",
        "agent",
        "promote",
        "demote",
        "search_tools",
        "tool",
        "vendors",
        "add_vendor",
        "add_connection",
        "revoke_connection",
        "approvals",
        "decide",
    ];

    /// The HTTP surface in process (no network): arbitrary bodies and headers to `/mcp` in
    /// both eras (a 2025-era session and 2026-era stateless requests) and to the console's
    /// server functions (signed in) and its upload. Invariants: an HTTP answer, never a
    /// panic, never a 5xx for a client's garbage.
    ///
    /// Input layout: byte 0 picks the route and method, byte 1 the content type and
    /// headers; the rest is the body.
    pub fn http_endpoint(data: &[u8]) {
        if data.len() < 2 {
            return;
        }
        let w = super::world();
        let (route, flags, body) = (data[0], data[1], data[2..].to_vec());
        let mut req = http::Request::builder().header("host", "127.0.0.1");
        let path = match route % 8 {
            0 | 1 => {
                req = req
                    .method("POST")
                    .header("authorization", format!("Bearer {}", w.token))
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-session-id", &w.session)
                    .header("mcp-protocol-version", "2025-11-25");
                "/mcp".to_string()
            }
            2 | 3 => {
                req = req
                    .method("POST")
                    .header("authorization", format!("Bearer {}", w.token))
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28");
                "/mcp".to_string()
            }
            4 => {
                req = req
                    .method("DELETE")
                    .header("authorization", format!("Bearer {}", w.token));
                "/mcp".to_string()
            }
            5 => {
                req = req.method("POST").header("cookie", &w.cookie);
                "/vendors/import".to_string()
            }
            _ => {
                req = req.method("POST").header("cookie", &w.cookie);
                format!(
                    "/api/{}",
                    CONSOLE_FNS[(route as usize / 8) % CONSOLE_FNS.len()]
                )
            }
        };
        let content_type = match flags % 6 {
            0 => "application/json",
            1 => "application/x-www-form-urlencoded",
            2 => "multipart/form-data; boundary=XyZ",
            3 => "text/plain",
            4 => "application/json; charset=utf-8",
            _ => "",
        };
        if !content_type.is_empty() {
            req = req.header("content-type", content_type);
        }
        if flags & 0x40 != 0 {
            req = req.header("accept", "text/html");
        }
        if flags & 0x80 != 0 {
            req = req.header("origin", "http://localhost:5173");
        }
        let Ok(req) = req.uri(path.as_str()).body(axum::body::Body::from(body)) else {
            return;
        };
        let router = w.router.clone();
        w.rt.block_on(async move {
            let answer = tokio::time::timeout(std::time::Duration::from_secs(20), async move {
                let resp = router.oneshot(req).await.expect("the router is infallible");
                let status = resp.status();
                let body = axum::body::to_bytes(resp.into_body(), 8 << 20).await;
                (status, body)
            })
            .await;
            if let Ok((status, body)) = answer {
                assert!(
                    !status.is_server_error(),
                    "{status} for {path}: {:?}",
                    body.map(|b| String::from_utf8_lossy(&b)
                        .chars()
                        .take(500)
                        .collect::<String>())
                );
            }
        });
    }
}
pub use http_endpoint_impl::http_endpoint;

// ---------------------------------------------------------------- search_query

mod search_query_impl {

    /// Search queries: arbitrary text to the ranking find_tool, the console's Toolbox and
    /// `graft tool search` share, over two real vendor documents. Invariants: no panic; a
    /// valid query answers hits that are ranked best first, each with a score in 0..=1.
    pub fn search_query(data: &[u8]) {
        let Ok(query) = std::str::from_utf8(data) else {
            return;
        };
        let w = super::world();
        let limit = 1 + (data.len() % 50);
        let graft = w.graft.clone();
        let query = query.to_string();
        let found =
            w.rt.block_on(async move { graft.search_tools(None, &query, limit).await });
        if let Ok(result) = found {
            assert!(result.hits.len() <= limit);
            let scores: Vec<f64> = result.hits.iter().map(|h| h.score).collect();
            for s in &scores {
                assert!((0.0..=1.0).contains(s), "score {s}");
            }
            assert!(
                scores.windows(2).all(|w| w[0] >= w[1]),
                "not ranked: {scores:?}"
            );
        }
    }
}
pub use search_query_impl::search_query;

// ---------------------------------------------------------------- vendor_answer

mod vendor_answer_impl {
    use graft::domain::exact_json;
    use serde_json::Value;

    /// A vendor's answer body, as Graft renders it for the model (issue 25.7): the first
    /// byte picks a content type and a budget, the rest is the body. Invariants: no
    /// panic; the result stays within its budget; for JSON that serde_json reads, the
    /// re-indented text reads back to the same value and keeps every number's text,
    /// the exact value equals serde_json's whenever every number fits a double, and a
    /// secret in the body never survives.
    pub fn vendor_answer(data: &[u8]) {
        let Some((&pick, body)) = data.split_first() else {
            return;
        };
        const SECRET: &str = "sEcr3t-Vend0r-key";
        let types = [
            Some("application/json"),
            Some("text/plain; charset=utf-8"),
            Some("application/octet-stream"),
            Some("text/html; charset=iso-8859-1"),
            None,
        ];
        let content_type = types[pick as usize % types.len()];
        let limits = graft::proxy::ProxyLimits {
            result_budget: 2048 + (pick as usize) * 64,
            ..Default::default()
        };
        let secrets = vec![SECRET.to_string()];
        let redact = |t: &str| t.replace(SECRET, graft::proxy::request::REDACTED);
        let r = graft::service::answer::render(
            body,
            content_type,
            pick & 1 == 1,
            &limits,
            &redact,
            &secrets,
            "http://v/x",
        );
        assert!(
            graft::service::answer::escaped_len(&r.text) <= limits.result_budget + 512,
            "text over the budget"
        );
        let shown = format!("{}{}", r.text, r.structured.clone().unwrap_or_default());
        assert!(!shown.contains(SECRET), "a secret survived: {shown}");

        let Ok(text) = std::str::from_utf8(body) else {
            return;
        };
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let pretty =
            exact_json::pretty(text, &|s| s.to_string()).expect("text serde_json reads re-indents");
        let back: Value = serde_json::from_str(&pretty).expect("the re-indented text is JSON");
        assert_eq!(back, value, "re-indenting changed the value");
        let exact = exact_json::to_value(text).expect("text serde_json reads has a value");
        if exact_json::all_numbers_fit(text) {
            assert_eq!(
                exact, value,
                "a value without unfit numbers differs from serde_json's"
            );
        }
    }
}
pub use vendor_answer_impl::vendor_answer;
