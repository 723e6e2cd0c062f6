//! What the process-level benchmarks (`overhead`, `load`, `console`) share: Graft's
//! release binary started as its own process on a free port, a fast local echo vendor,
//! the shared OpenAPI documents imported until the toolbox is big enough, RSS and
//! percentiles. Included with `#[path = "support/mod.rs"] mod support;`.
#![allow(dead_code)] // each bench uses its own part

use axum::extract::Path as UrlPath;
use axum::routing::get;
use graft::service::Graft;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process, killed on drop.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A TCP port free on loopback right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `name` parsed as a number, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `GRAFT_BENCH_SMOKE=1`: a few of everything (CI), numbers not meant to be read.
pub fn smoke() -> bool {
    std::env::var("GRAFT_BENCH_SMOKE").is_ok_and(|v| v == "1")
}

/// Resident set size of a process in MiB (`VmRSS` of `/proc/PID/status`); NaN if gone.
pub fn rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The `p` quantile (0..=1, nearest rank) of `v`; NaN when empty.
pub fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    s[((s.len() - 1) as f64 * p).round() as usize]
}

/// The echo vendor's OpenAPI document: `GET /items/{id}` and `POST /items`.
pub const ECHO_API: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Echo", "version": "1"},
  "paths": {
    "/items/{id}": {"get": {"operationId": "get_item", "summary": "Get an item",
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/items": {"post": {"operationId": "create_item", "summary": "Create an item",
      "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}
  }
}"#;

/// Starts the echo vendor (axum, port 0, TCP_NODELAY) on the current runtime; returns
/// its base URL.
pub async fn start_vendor() -> String {
    let app = axum::Router::new().route(
        "/items/{id}",
        get(|UrlPath(id): UrlPath<u64>| async move {
            axum::Json(json!({"id": id, "name": format!("item {id}"), "price": 42}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, |t| {
        let _ = t.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The shared real OpenAPI documents (`GRAFT_SPECS_DIR`, default `../shared/specs`).
pub fn spec_docs() -> Vec<PathBuf> {
    let dir = std::env::var_os("GRAFT_SPECS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs"));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml")
            )
        })
        .collect();
    docs.sort();
    docs
}

/// Imports the shared documents again and again (vendors `v{copy}-{i}`, base URL
/// `https://vendor.invalid`) until the toolbox holds at least `tools` tools.
/// Panics when there are no documents or a whole pass adds no tool (instead of looping).
pub async fn fill_toolbox(graft: &Graft, tools: i64) {
    let docs = spec_docs();
    assert!(
        !docs.is_empty(),
        "no OpenAPI documents: set GRAFT_SPECS_DIR"
    );
    let mut copy = 0;
    loop {
        let before = graft.toolbox_size().await.unwrap();
        if before >= tools {
            return;
        }
        for (i, p) in docs.iter().enumerate() {
            let text = std::fs::read_to_string(p).unwrap();
            let _ = graft
                .import_openapi(
                    &format!("v{copy}-{i}"),
                    &text,
                    Some("https://vendor.invalid"),
                    &mut |_, _| {},
                )
                .await;
            if graft.toolbox_size().await.unwrap() >= tools {
                return;
            }
        }
        assert!(
            graft.toolbox_size().await.unwrap() > before,
            "a pass over the documents of GRAFT_SPECS_DIR added no tool"
        );
        copy += 1;
    }
}

/// The first `n` tools of the toolbox as `(vendor slug, tool name)`, oldest first.
pub async fn first_tools(graft: &Graft, n: usize) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT v.slug, t.name FROM tools t JOIN vendors v ON v.id = t.vendor_id ORDER BY t.id LIMIT $1",
    )
    .bind(n as i64)
    .fetch_all(graft.pool().as_sqlite().unwrap())
    .await
    .unwrap()
}

/// The metrics token `spawn_graft` gives the server (`/healthz` details).
pub const METRICS_TOKEN: &str = "bench-metrics-token";

/// Starts `graft serve` (the binary cargo built with this bench's profile: release
/// under `cargo bench`) on `data` and a free port, waits until it serves, and returns
/// the process and its base URL (`http://127.0.0.1:PORT`). The environment is inherited
/// (`GRAFT_EMBEDDING_MODEL`, `RUST_LOG`); the sweep runs hourly.
pub fn spawn_graft(data: &Path) -> (Proc, String) {
    spawn_graft_with(data, &[])
}

/// [`spawn_graft`] with more environment variables (`(name, value)`), e.g.
/// `GRAFT_METRICS=off` for the metrics' cost.
pub fn spawn_graft_with(data: &Path, env: &[(&str, &str)]) -> (Proc, String) {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_graft"))
        .envs(env.iter().copied())
        .args(["--data-dir", &data.display().to_string(), "serve", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn,graft=info".into()),
        )
        .env("GRAFT_SWEEP_INTERVAL", "1h")
        // the bench vendors listen on loopback; thousands of streams from one address;
        // /healthz's stream count
        .env("GRAFT_VENDOR_LOOPBACK", "allow")
        .env("GRAFT_MAX_CONNECTIONS", "8192")
        .env("GRAFT_MAX_CONNECTIONS_PER_ADDRESS", "8192")
        .env("GRAFT_METRICS_TOKEN", METRICS_TOKEN)
        // benchmarks drive a few agents far past what one agent may do by default
        .env("GRAFT_AGENT_CALLS_PER_MINUTE", "100000000")
        .env("GRAFT_AGENT_CONCURRENT_CALLS", "100000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start graft serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let line = lines.next().expect("graft exited").unwrap();
        if line.contains("serving MCP at") {
            break;
        }
        assert!(Instant::now() < deadline, "graft did not start");
    }
    // drain the log so the pipe never fills
    std::thread::spawn(move || for _ in lines {});
    (Proc(child), format!("http://127.0.0.1:{port}"))
}

/// Opens the SQLite database under `data` through the service API, as the benches set
/// up their data before `graft serve` starts on it.
pub async fn open_graft(data: &Path) -> Graft {
    let url = format!("sqlite://{}?mode=rwc", data.join("graft.db").display());
    Graft::open(
        &url,
        std::sync::Arc::new(graft::service::SystemClock),
        graft::service::ServiceConfig::ephemeral("http://127.0.0.1:3000"),
    )
    .await
    .unwrap()
}
