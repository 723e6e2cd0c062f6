//! Graft on PostgreSQL next to Graft on SQLite (issue 11), release `graft serve`
//! processes, the same requests on both, ratios printed:
//!
//! - promote through MCP: p50/p90 of 2026-07-28 `promote` calls (each followed by a
//!   `demote`, so every promote writes), one client;
//! - tools/call throughput: 8 sessions calling `echo__get_item` (a real axum vendor on
//!   loopback) as fast as they can for `GRAFT_BENCH_SECS` (default 10): SQLite with one
//!   instance, PostgreSQL with one instance, and PostgreSQL with two instances (4
//!   sessions each). On this 2-core machine the two instances share the cores with the
//!   database and the clients, so the last figure shows what the coordination costs,
//!   not what a second machine would add.
//!
//! PostgreSQL: `GRAFT_BENCH_DATABASE_URL` (an empty database), else a throwaway cluster
//! from scripts/pg-cluster.sh. The sweep on PostgreSQL is in `benches/sweep.rs`.
//! Run: `cargo bench --bench postgres` (`GRAFT_BENCH_SMOKE=1`: a few of everything).

mod support;

use graft::service::{Actor, Graft, ServiceConfig, SystemClock};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

const KEY: &str = "3c1f0e2d4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A throwaway cluster, stopped on drop.
struct Cluster(tempfile::TempDir);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-cluster.sh"))
            .args(["stop", &self.0.path().join("c").display().to_string()])
            .status();
    }
}

fn postgres() -> (Option<Cluster>, String) {
    if let Ok(url) = std::env::var("GRAFT_BENCH_DATABASE_URL") {
        return (None, url);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-cluster.sh"))
        .args(["start", &dir.path().join("c").display().to_string()])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/pg-cluster.sh start failed");
    let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
    (Some(Cluster(dir)), url)
}

/// `graft serve` on `url` (data dir `data` for the key file and models).
fn serve(data: &Path, url: &str) -> (Proc, String) {
    std::env::set_var("DATABASE_URL", url);
    std::env::set_var("GRAFT_SECRET_KEY", KEY);
    spawn_graft(data)
}

/// The echo vendor, and 9 agents with `echo__get_item` promoted; their tokens.
async fn setup(url: &str, vendor: &str) -> Vec<String> {
    let mut config = ServiceConfig::ephemeral("http://127.0.0.1:3000");
    config.key =
        graft::service::secrets::SecretKey::load_or_create(Some(KEY), None, Path::new("."))
            .unwrap();
    let g = Graft::open(url, Arc::new(SystemClock), config)
        .await
        .unwrap();
    g.import_openapi("echo", ECHO_API, Some(vendor), &mut |_, _| {})
        .await
        .unwrap();
    let mut tokens = Vec::new();
    for i in 0..9 {
        let (a, token) = g
            .add_agent(&format!("b{i}"), None, Some(50), None)
            .await
            .unwrap();
        g.promote_tool(&Actor::Person("bench".into()), a.id, "echo", "get_item")
            .await
            .unwrap();
        tokens.push(token);
    }
    g.pool().close().await;
    tokens
}

/// One 2026-07-28 `tools/call`; panics unless it succeeded.
async fn call(http: &reqwest::Client, base: &str, token: &str, tool: &str, args: Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let r = http
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status();
    let text = r.text().await.unwrap();
    assert!(
        status.is_success() && !text.contains("\"isError\":true"),
        "{tool}: {status} {text}"
    );
}

/// p50 and p90 (ms) of `n` promotes (each undone by a demote).
async fn promotes(base: &str, token: &str, n: usize) -> (f64, f64) {
    let http = reqwest::Client::new();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call(
            &http,
            base,
            token,
            "promote",
            json!({"vendor": "echo", "name": "create_item"}),
        )
        .await;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        call(
            &http,
            base,
            token,
            "demote",
            json!({"vendor": "echo", "name": "create_item"}),
        )
        .await;
    }
    (pct(&times, 0.5), pct(&times, 0.9))
}

/// tools/call per second with 8 sessions spread over `bases` for `secs`.
async fn throughput(bases: &[String], tokens: &[String], secs: f64) -> f64 {
    let done = Arc::new(AtomicUsize::new(0));
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut clients = tokio::task::JoinSet::new();
    for s in 0..8 {
        let (base, token, done) = (
            bases[s % bases.len()].clone(),
            tokens[s].clone(),
            done.clone(),
        );
        clients.spawn(async move {
            let http = reqwest::Client::new();
            let mut i = 0u64;
            while Instant::now() < until {
                i += 1;
                call(&http, &base, &token, "echo__get_item", json!({"id": i})).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let started = Instant::now();
    clients.join_all().await;
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let smoke = smoke();
    let n = if smoke {
        5
    } else {
        env_usize("GRAFT_BENCH_PROMOTES", 300)
    };
    let secs = if smoke {
        1.0
    } else {
        env_usize("GRAFT_BENCH_SECS", 10) as f64
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let vendor = start_vendor().await;
        let (_cluster, pg_url) = postgres();
        let sqlite_dir = tempfile::tempdir().unwrap();
        let sqlite_url = format!(
            "sqlite://{}?mode=rwc",
            sqlite_dir.path().join("graft.db").display()
        );
        let pg_data = tempfile::tempdir().unwrap();
        let sqlite_tokens = setup(&sqlite_url, &vendor).await;
        let pg_tokens = setup(&pg_url, &vendor).await;

        let (sqlite_proc, sqlite_base) = serve(sqlite_dir.path(), &sqlite_url);
        let (pg_a, pg_base_a) = serve(pg_data.path(), &pg_url);
        let (pg_b, pg_base_b) = serve(pg_data.path(), &pg_url);

        println!("promote through MCP (2026-07-28, one client, {n} promotes each undone)");
        let (s50, s90) = promotes(&sqlite_base, &sqlite_tokens[8], n).await;
        let (p50, p90) = promotes(&pg_base_a, &pg_tokens[8], n).await;
        println!("  SQLite      p50 {s50:6.2} ms  p90 {s90:6.2} ms");
        println!(
            "  PostgreSQL  p50 {p50:6.2} ms  p90 {p90:6.2} ms   (p50 {:.2}x SQLite's)",
            p50 / s50
        );

        println!("tools/call throughput, 8 sessions, {secs} s each");
        let s1 = throughput(std::slice::from_ref(&sqlite_base), &sqlite_tokens, secs).await;
        let p1 = throughput(std::slice::from_ref(&pg_base_a), &pg_tokens, secs).await;
        let p2 = throughput(&[pg_base_a.clone(), pg_base_b.clone()], &pg_tokens, secs).await;
        println!("  SQLite, one instance          {s1:7.0} calls/s");
        println!(
            "  PostgreSQL, one instance      {p1:7.0} calls/s   ({:.2}x SQLite)",
            p1 / s1
        );
        println!(
            "  PostgreSQL, two instances     {p2:7.0} calls/s   ({:.2}x one instance)",
            p2 / p1
        );
        drop((sqlite_proc, pg_a, pg_b));
    });
}
