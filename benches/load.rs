//! Load and memory (issue 15): Graft's release binary as its own process, measured from
//! outside (`VmRSS` of `/proc/PID/status`, `/healthz`'s open-stream count):
//! 1. idle RSS after start, then with a 10,000-tool toolbox indexed (one `find_tool`);
//! 2. 1,000 open change streams — half 2025-11-25 sessions with their GET stream, half
//!    2026-07-28 `subscriptions/listen` streams — spread over 20 agents;
//! 3. on top of them, `tools/call` at a fixed rate (default 500/s for 60 s, open loop:
//!    each call is sent at its time whether or not the earlier ones answered) over 32
//!    kept-alive connections: errors, p50/p99 (measured from each call's scheduled time),
//!    RSS every second;
//! 4. the clients leave (sessions deleted, streams dropped): the stream count goes back
//!    to 0 and RSS is read again;
//! 5. a soak (default 10 minutes; smoke: seconds): sessions open, call and close in a
//!    loop; RSS is sampled each minute to show it does not grow.
//!
//! Run: `scripts/bench.sh load` or `cargo bench --bench load`. Environment:
//! `GRAFT_BENCH_SMOKE=1` (small and short, for CI), `GRAFT_LOAD_RATE` (calls/s),
//! `GRAFT_LOAD_SECONDS`, `GRAFT_LOAD_STREAMS`, `GRAFT_SOAK_SECONDS`.

#[path = "support/mod.rs"]
mod support;

use graft::service::Actor;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{env_usize, open_graft, rss_mb, spawn_graft, start_vendor, ECHO_API};

const AGENTS: usize = 20;

/// The echo vendor with its tool promoted for `AGENTS` agents, and a toolbox of
/// `tools` tools. Returns the agents' tokens.
async fn setup(data: &Path, vendor: &str, tools: i64) -> Vec<String> {
    let graft = open_graft(data).await;
    graft
        .import_openapi("echo", ECHO_API, Some(vendor), &mut |_, _| {})
        .await
        .unwrap();
    let mut tokens = Vec::new();
    for i in 0..AGENTS {
        let (a, token) = graft
            .add_agent(&format!("load{i}"), None, None, None)
            .await
            .unwrap();
        graft
            .promote_tool(&Actor::Person("bench".into()), a.id, "echo", "get_item")
            .await
            .unwrap();
        tokens.push(token);
    }
    support::fill_toolbox(&graft, tools).await;
    tokens
}

fn headers(req: reqwest::RequestBuilder, token: &str) -> reqwest::RequestBuilder {
    req.bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"}})
}

/// A 2025 session with its GET stream open; returns (session id, the stream's body).
async fn legacy_stream(
    http: &reqwest::Client,
    base: &str,
    token: &str,
) -> (String, reqwest::Response) {
    let r = headers(http.post(format!("{base}/mcp")), token)
        .body(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}}}).to_string())
        .send()
        .await
        .unwrap();
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    r.text().await.unwrap();
    headers(http.post(format!("{base}/mcp")), token)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &sid)
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let stream = http
        .get(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert!(
        stream.status().is_success(),
        "GET stream: {}",
        stream.status()
    );
    (sid, stream)
}

/// A 2026 listen stream (the response stays open).
async fn listen_stream(http: &reqwest::Client, base: &str, token: &str) -> reqwest::Response {
    let mut params = json!({"notifications": {"toolsListChanged": true}});
    params["_meta"] = meta();
    let r = headers(http.post(format!("{base}/mcp")), token)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "listen: {}", r.status());
    r
}

/// One stateless tools/call; Ok(()) for a successful tool result.
async fn call(http: &reqwest::Client, base: &str, token: &str, id: u64) -> Result<(), String> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo__get_item", "arguments": {"id": id}, "_meta": meta()}});
    let r = headers(http.post(format!("{base}/mcp")), token)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo__get_item")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = r.status();
    let text = r.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() || !text.contains("\"isError\":false") {
        return Err(format!(
            "HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        ));
    }
    Ok(())
}

async fn streams_open(base: &str) -> u64 {
    let v: Value = reqwest::Client::new()
        .get(format!("{base}/healthz"))
        .bearer_auth(support::METRICS_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["streams"].as_u64().unwrap_or(u64::MAX)
}

fn main() {
    let smoke = support::smoke();
    let rate = env_usize("GRAFT_LOAD_RATE", if smoke { 50 } else { 500 });
    let seconds = env_usize("GRAFT_LOAD_SECONDS", if smoke { 2 } else { 60 });
    let streams = env_usize("GRAFT_LOAD_STREAMS", if smoke { 40 } else { 1000 });
    let soak = env_usize("GRAFT_SOAK_SECONDS", if smoke { 3 } else { 600 });
    let tools = if smoke { 2_000 } else { 10_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let vendor = rt.block_on(start_vendor());
    let tokens = rt.block_on(setup(data.path(), &vendor, tools));
    let (proc_, base) = spawn_graft(data.path());
    let pid = proc_.0.id();

    rt.block_on(async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let idle = rss_mb(pid);
        println!("idle RSS after start: {idle:.1} MB");
        let http = reqwest::Client::builder().pool_max_idle_per_host(64).build().unwrap();
        // one find_tool builds the index over the toolbox
        let mut params = json!({"name": "find_tool", "arguments": {"query": "list customers"}});
        params["_meta"] = meta();
        headers(http.post(format!("{base}/mcp")), &tokens[0])
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "find_tool")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string())
            .send().await.unwrap().text().await.unwrap();
        let with_tools = rss_mb(pid);
        println!("RSS with {tools} tools indexed: {with_tools:.1} MB");

        // open streams, each on its own connection
        let started = Instant::now();
        let mut legacy = Vec::new();
        let mut listens = Vec::new();
        for i in 0..streams {
            let token = &tokens[i % AGENTS];
            let client = reqwest::Client::new();
            if i % 2 == 0 {
                let (sid, s) = legacy_stream(&client, &base, token).await;
                legacy.push((client, token.clone(), sid, s));
            } else {
                listens.push(listen_stream(&client, &base, token).await);
            }
        }
        let open = streams_open(&base).await;
        let with_streams = rss_mb(pid);
        println!(
            "{streams} streams opened in {:.1} s ({} sessions with GET streams, {} listen streams): server counts {open}; RSS {with_streams:.1} MB",
            started.elapsed().as_secs_f64(),
            legacy.len(),
            listens.len()
        );

        // open-loop calls at `rate`/s over 32 connections
        let clients: Vec<reqwest::Client> = (0..32)
            .map(|_| reqwest::Client::builder().pool_max_idle_per_host(4).build().unwrap())
            .collect();
        let errors = Arc::new(AtomicUsize::new(0));
        let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
        let total = rate * seconds;
        let interval = Duration::from_secs_f64(1.0 / rate as f64);
        let begin = tokio::time::Instant::now();
        let mut tasks = Vec::with_capacity(total);
        let mut peak = with_streams;
        let mut last_sample = Instant::now();
        for n in 0..total {
            let due = begin + interval * n as u32;
            tokio::time::sleep_until(due).await;
            let (http, base, token) = (clients[n % 32].clone(), base.clone(), tokens[n % AGENTS].clone());
            let (errors, first_error) = (errors.clone(), first_error.clone());
            tasks.push(tokio::spawn(async move {
                let r = call(&http, &base, &token, n as u64).await;
                let late = tokio::time::Instant::now() - due;
                if let Err(e) = r {
                    errors.fetch_add(1, Ordering::Relaxed);
                    first_error.lock().unwrap().get_or_insert(e);
                }
                late.as_secs_f64() * 1e3
            }));
            if last_sample.elapsed() >= Duration::from_secs(1) {
                peak = peak.max(rss_mb(pid));
                last_sample = Instant::now();
            }
        }
        let mut latencies = Vec::with_capacity(total);
        for t in tasks {
            latencies.push(t.await.unwrap());
        }
        let elapsed = begin.elapsed().as_secs_f64();
        peak = peak.max(rss_mb(pid));
        println!(
            "load: {total} tools/call in {elapsed:.1} s ({:.0}/s asked {rate}/s) on top of {streams} streams: {} errors{}; latency from the scheduled time p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms; peak RSS {peak:.1} MB",
            total as f64 / elapsed,
            errors.load(Ordering::Relaxed),
            first_error.lock().unwrap().as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default(),
            support::pct(&latencies, 0.5),
            support::pct(&latencies, 0.99),
            support::pct(&latencies, 1.0),
        );

        // the clients leave: sessions ended, streams dropped
        for (client, token, sid, s) in legacy.drain(..) {
            drop(s);
            let _ = client
                .delete(format!("{base}/mcp"))
                .bearer_auth(&token)
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-session-id", sid)
                .send()
                .await;
        }
        listens.clear();
        let mut open = streams_open(&base).await;
        let left = Instant::now();
        while open > 0 && left.elapsed() < Duration::from_secs(60) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            open = streams_open(&base).await;
        }
        println!(
            "after the clients left: server counts {open} streams ({:.1} s); RSS {:.1} MB",
            left.elapsed().as_secs_f64(),
            rss_mb(pid)
        );

        // soak: sessions open, call, close
        let soak_start = Instant::now();
        let mut samples = vec![(0u64, rss_mb(pid))];
        let mut calls = 0u64;
        let mut soak_errors = 0u64;
        while soak_start.elapsed() < Duration::from_secs(soak as u64) {
            let client = reqwest::Client::new();
            let token = &tokens[calls as usize % AGENTS];
            let (sid, s) = legacy_stream(&client, &base, token).await;
            for _ in 0..5 {
                calls += 1;
                if call(&client, &base, token, calls).await.is_err() {
                    soak_errors += 1;
                }
            }
            drop(s);
            let _ = client
                .delete(format!("{base}/mcp"))
                .bearer_auth(token)
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-session-id", sid)
                .send()
                .await;
            let minute = soak_start.elapsed().as_secs() / 60;
            if samples.last().is_some_and(|s| s.0 < minute) {
                samples.push((minute, rss_mb(pid)));
            }
        }
        samples.push((soak_start.elapsed().as_secs() / 60 + 1, rss_mb(pid)));
        println!(
            "soak: {:.0} s, {calls} calls in {} sessions opened and closed, {soak_errors} errors; RSS by minute: {}",
            soak_start.elapsed().as_secs_f64(),
            calls / 5,
            samples.iter().map(|(m, r)| format!("{m}:{r:.1}")).collect::<Vec<_>>().join(" ")
        );
        // what must hold whatever the machine's speed (the smoke run in CI checks these)
        assert_eq!(errors.load(Ordering::Relaxed), 0, "calls failed under load");
        assert_eq!(soak_errors, 0, "calls failed in the soak");
        assert_eq!(open, 0, "streams left open after the clients left");
    });
    drop(proc_);
}
