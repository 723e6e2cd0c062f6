//! What Graft costs an agent per call (issue 15), measured side by side in one run, in
//! interleaved rounds, on loopback:
//! - the floor: the vendor's GET sent straight to it on a kept-alive connection;
//! - `tools/call` of a promoted tool through Graft (its release binary, as a separate
//!   process), raw JSON-RPC on a kept-alive HTTP/1.1 connection, in both protocol eras
//!   (a 2025-11-25 session; 2026-07-28 stateless), 1 session sequential and 8 at once;
//! - the same through the official TypeScript SDK server (`benches/anchor/server.mjs`,
//!   what a user would write instead), when Node and the SDK are here;
//! - the same `tools/call` on two twin `graft serve`s of copies of the same data, one
//!   with metrics and one with `GRAFT_METRICS=off`, taking turns to go first and taking
//!   no other calls: what the Prometheus metrics cost (issue 30.1), in p50 latency and
//!   in the servers' CPU time per call (`GRAFT_METRICS=off` for the bench itself turns
//!   both off: an A/A run, the check of the method);
//! - Graft's `find_tool` over 10,000+ tools, `tools/list` of a 500-tool working set
//!   next to a GET of the very same bytes from a static axum server read and parsed the
//!   same way (the transfer-and-parse floor of a body that size),
//!   `promote` + the `list_changed` notice on the session's GET stream, and a
//!   `run_tool` dry run.
//!
//! It prints p50/p90/p99 (ms), calls/s and the ratio of each p50 to the direct GET's.
//! The echo vendor is an axum server in this process (port 0); Graft's data are set up
//! in a temporary directory through the service API, then `graft serve` runs on them.
//!
//! Run: `scripts/bench.sh` (builds release, installs the anchor's npm packages), or
//! `cargo bench --bench overhead`. `GRAFT_BENCH_SMOKE=1` makes a few calls of each kind
//! (CI: it must run, numbers are not checked). Environment: `ANCHOR_SDK` (the
//! `@modelcontextprotocol/sdk` folder), `ANCHOR_ZOD` (zod's entry file), `ANCHOR_NODE`
//! (a Node ≥ 18), `GRAFT_BENCH_ROUNDS`, `GRAFT_BENCH_CALLS`.

#[path = "support/mod.rs"]
mod support;

use graft::service::Actor;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{env_usize, open_graft, spawn_graft, start_vendor, Proc, ECHO_API};

/// Percentiles and rate of one series.
struct Series {
    name: String,
    samples: Vec<f64>,
    /// Calls per second of each round when measured as a rate (concurrent runs); empty:
    /// 1/mean of the samples.
    rates: Vec<f64>,
}

impl Series {
    fn pct(&self, p: f64) -> f64 {
        support::pct(&self.samples, p)
    }
}

/// One MCP endpoint on one kept-alive connection.
struct Mcp {
    http: reqwest::Client,
    url: String,
    token: Option<String>,
    version: &'static str,
    session: Option<String>,
}

impl Mcp {
    fn new(url: &str, token: Option<&str>, version: &'static str) -> Self {
        Self {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .unwrap(),
            url: url.to_string(),
            token: token.map(str::to_string),
            version,
            session: None,
        }
    }

    fn modern(&self) -> bool {
        self.version == "2026-07-28"
    }

    /// Sends one JSON-RPC message and reads the answer to its end.
    async fn rpc(&self, method: &str, mut params: Value) -> Value {
        if self.modern() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}
            });
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut req = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", self.version);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if self.modern() {
            req = req.header("mcp-method", method);
            if let Some(n) = params.get("name").and_then(Value::as_str) {
                req = req.header("mcp-name", n);
            }
        }
        let resp = req.body(body.to_string()).send().await.expect("send");
        let status = resp.status();
        let text = resp.text().await.expect("read to the end");
        assert!(status.is_success(), "{method}: HTTP {status}: {text}");
        let json = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or(text.trim());
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{method}: {e}: {text}"))
    }

    /// `initialize` + `notifications/initialized` (2025 era).
    async fn open(&mut self) {
        if self.modern() {
            return;
        }
        let mut req = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req
            .body(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": self.version, "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"}}})
                .to_string(),
            )
            .send()
            .await
            .unwrap();
        self.session = resp
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        resp.text().await.unwrap();
        let mut req = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", self.version)
            .header("mcp-session-id", self.session.clone().unwrap());
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        req.body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
    }

    async fn call(&self, tool: &str, args: Value) -> Value {
        let r = self
            .rpc("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert!(
            r["result"]["isError"] != json!(true) && r.get("error").is_none(),
            "{tool}: {r}"
        );
        r
    }
}

/// Graft's data: the echo vendor, an agent with its tool promoted, a second agent with
/// 500 promoted tools, and a toolbox of ≥ 10,000 tools (the shared specs imported under
/// several vendor names). Returns the two tokens.
async fn setup_graft(data: &Path, vendor: &str) -> (String, String) {
    let graft = open_graft(data).await;
    for slug in ["echo", "echo2"] {
        graft
            .import_openapi(slug, ECHO_API, Some(vendor), &mut |_, _| {})
            .await
            .unwrap();
    }
    let (a, token) = graft
        .add_agent("bench", None, Some(500), None)
        .await
        .unwrap();
    for name in ["get_item", "create_item"] {
        graft
            .promote_tool(&Actor::Person("bench".into()), a.id, "echo", name)
            .await
            .unwrap();
    }
    graft
        .decide_approval(
            &Actor::Person("bench".into()),
            "bench",
            "echo",
            "create_item",
            true,
        )
        .await
        .unwrap();
    let (b, token_b) = graft
        .add_agent("wide", None, Some(500), None)
        .await
        .unwrap();
    support::fill_toolbox(&graft, 10_000).await;
    let tools = support::first_tools(&graft, 500).await;
    for (v, n) in tools {
        graft
            .promote_tool(&Actor::Person("bench".into()), b.id, &v, &n)
            .await
            .unwrap();
    }
    (token, token_b)
}

/// The TypeScript SDK server, when Node and the SDK are available.
fn spawn_anchor(vendor: &str) -> Option<(Proc, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sdk = std::env::var_os("ANCHOR_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("end2end/node_modules/@modelcontextprotocol/sdk"));
    let zod = std::env::var_os("ANCHOR_ZOD")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let base = root.join("end2end/node_modules/zod");
            ["index.js", "lib/index.mjs", "v3/index.js"]
                .iter()
                .map(|p| base.join(p))
                .find(|p| p.is_file())
                .unwrap_or(base.join("index.js"))
        });
    if !sdk.join("dist/esm/server/mcp.js").is_file() || !zod.is_file() {
        eprintln!(
            "(no TypeScript SDK at {}: the anchor is left out; scripts/bench.sh installs it)",
            sdk.display()
        );
        return None;
    }
    let node = std::env::var("ANCHOR_NODE").unwrap_or_else(|_| "node".into());
    let mut child = Command::new(&node)
        .arg(root.join("benches/anchor/server.mjs"))
        .env("VENDOR_URL", vendor)
        .env("ANCHOR_SDK", &sdk)
        .env("ANCHOR_ZOD", &zod)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| eprintln!("(cannot start {node}: {e}: the anchor is left out)"))
        .ok()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .ok()?;
    let port = line.trim().strip_prefix("listening ")?.to_string();
    Some((Proc(child), format!("http://127.0.0.1:{port}/mcp")))
}

/// `n` sequential calls; milliseconds each.
async fn sequential<F, Fut>(n: usize, mut f: F) -> Vec<f64>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        f(i).await;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    out
}

/// `clients` sessions calling at once, `n` calls each: (latencies in ms, calls/s).
async fn concurrent(clients: Vec<Arc<Mcp>>, tool: &'static str, n: usize) -> (Vec<f64>, f64) {
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|c| {
            tokio::spawn(async move {
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let t = Instant::now();
                    c.call(tool, json!({"id": i})).await;
                    out.push(t.elapsed().as_secs_f64() * 1e3);
                }
                out
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let rate = all.len() as f64 / started.elapsed().as_secs_f64();
    (all, rate)
}

fn main() {
    let smoke = support::smoke();
    let rounds = env_usize("GRAFT_BENCH_ROUNDS", if smoke { 1 } else { 5 });
    let calls = env_usize("GRAFT_BENCH_CALLS", if smoke { 5 } else { 200 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let vendor = rt.block_on(start_vendor());
    let (token, wide_token) = rt.block_on(setup_graft(data.path(), &vendor));
    // the metrics-off server gets its own copy of the same data: two servers writing
    // one SQLite file would pay each other's write locks and WAL checkpoints
    let (data_on, data_off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // the setup's connections close (and checkpoint their WAL) as they are dropped
    std::thread::sleep(Duration::from_millis(500));
    copy_dir(data.path(), data_on.path());
    copy_dir(data.path(), data_off.path());
    let (graft_proc, graft_base) = spawn_graft(data.path());
    let graft_url = format!("{graft_base}/mcp");
    eprintln!("graft serve: pid {}", graft_proc.0.id());
    // the metrics comparison runs on two twins of the same data that take nothing but
    // its calls (the main server's other series would grow its database, and an A/A run
    // showed that alone costs ~3%)
    let (on_proc, on_base) = support::spawn_graft_with(data_on.path(), &[]);
    let (off_proc, off_base) =
        support::spawn_graft_with(data_off.path(), &[("GRAFT_METRICS", "off")]);
    eprintln!("graft serve, metrics off: pid {}", off_proc.0.id());
    let anchor = spawn_anchor(&vendor);
    // GRAFT_BENCH_ONLY=words: only the series whose name contains them (profiling)
    let only = std::env::var("GRAFT_BENCH_ONLY").ok();
    let run = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));

    rt.block_on(async {
        let direct = reqwest::Client::builder().pool_max_idle_per_host(1).build().unwrap();
        let mut legacy = Mcp::new(&graft_url, Some(&token), "2025-11-25");
        legacy.open().await;
        let mut metrics_off = Mcp::new(&format!("{off_base}/mcp"), Some(&token), "2025-11-25");
        metrics_off.open().await;
        let mut metrics_on = Mcp::new(&format!("{on_base}/mcp"), Some(&token), "2025-11-25");
        metrics_on.open().await;
        let modern = Mcp::new(&graft_url, Some(&token), "2026-07-28");
        let ts = match &anchor {
            Some((_, url)) => {
                let mut m = Mcp::new(url, None, "2025-11-25");
                m.open().await;
                Some(m)
            }
            None => None,
        };
        let mut wide = Mcp::new(&graft_url, Some(&wide_token), "2025-11-25");
        wide.open().await;
        // warm every path (connections, caches, the search index)
        for _ in 0..3 {
            direct.get(format!("{vendor}/items/1")).send().await.unwrap().text().await.unwrap();
            legacy.call("echo__get_item", json!({"id": 1})).await;
            metrics_off.call("echo__get_item", json!({"id": 1})).await;
            metrics_on.call("echo__get_item", json!({"id": 1})).await;
            modern.call("echo__get_item", json!({"id": 1})).await;
            if let Some(t) = &ts {
                t.call("echo__get_item", json!({"id": 1})).await;
            }
            legacy.call("find_tool", json!({"query": "list customers"})).await;
            wide.rpc("tools/list", json!({})).await;
        }
        let listed = wide.rpc("tools/list", json!({})).await;
        let listed_text = listed.to_string();
        println!(
            "tools/list of the 500-tool working set: {} tools, {:.0} KiB of JSON",
            listed["result"]["tools"].as_array().map_or(0, Vec::len),
            listed_text.len() as f64 / 1024.0
        );
        let same_bytes = serve_static(listed_text).await;
        let same_size = reqwest::Client::builder().pool_max_idle_per_host(1).build().unwrap();

        let mut series: Vec<Series> = Vec::new();
        let mut add = |name: &str, samples: Vec<f64>, rate: Option<f64>| {
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => {
                    s.samples.extend(samples);
                    s.rates.extend(rate);
                }
                None => series.push(Series {
                    name: name.to_string(),
                    samples,
                    rates: rate.into_iter().collect(),
                }),
            }
        };
        let queries = ["list customers", "create an invoice", "send a message to a channel", "delete a file", "refund a payment"];
        let (on_pid, off_pid) = (on_proc.0.id(), off_proc.0.id());
        let (mut cpu_on, mut cpu_off) = (0.0f64, 0.0f64);
        for round in 0..rounds {
            eprintln!("round {}/{rounds}", round + 1);
            if run("direct") {
            let s = sequential(calls, |i| {
                let req = direct.get(format!("{vendor}/items/{i}"));
                async move {
                    req.send().await.unwrap().text().await.unwrap();
                }
            })
            .await;
            add("direct GET to the vendor", s, None);
            }
            if run("tools/call") {
            let s = sequential(calls, |i| legacy.call("echo__get_item", json!({"id": i})).map_unit()).await;
            add("Graft tools/call, 2025-11-25 session", s, None);
            // with and without metrics in turn, the first of the two changing each round;
            // each server's CPU time over its calls too (latency on a shared 2-core machine
            // varies by several percent between two identical servers; CPU time much less)
            for on in [round % 2 == 0, round % 2 == 1] {
                if on {
                    let before = cpu_ms(on_pid);
                    let s = sequential(calls, |i| metrics_on.call("echo__get_item", json!({"id": i})).map_unit()).await;
                    cpu_on += cpu_ms(on_pid) - before;
                    add("Graft tools/call, 2025 session, twin with metrics", s, None);
                } else {
                    let before = cpu_ms(off_pid);
                    let s = sequential(calls, |i| metrics_off.call("echo__get_item", json!({"id": i})).map_unit()).await;
                    cpu_off += cpu_ms(off_pid) - before;
                    add("Graft tools/call, 2025 session, GRAFT_METRICS=off", s, None);
                }
            }
            let s = sequential(calls, |i| modern.call("echo__get_item", json!({"id": i})).map_unit()).await;
            add("Graft tools/call, 2026-07-28 stateless", s, None);
            }
            if let Some(t) = ts.as_ref().filter(|_| run("TypeScript")) {
                let s = sequential(calls, |i| t.call("echo__get_item", json!({"id": i})).map_unit()).await;
                add("TypeScript SDK server tools/call", s, None);
            }
            // 8 sessions at once
            if run("8 ") {
            let mut clients = Vec::new();
            for _ in 0..8 {
                let mut c = Mcp::new(&graft_url, Some(&token), "2025-11-25");
                c.open().await;
                clients.push(Arc::new(c));
            }
            let (s, rate) = concurrent(clients, "echo__get_item", calls / 4 + 1).await;
            add("Graft tools/call, 8 sessions (2025)", s, Some(rate));
            let clients: Vec<_> = (0..8)
                .map(|_| Arc::new(Mcp::new(&graft_url, Some(&token), "2026-07-28")))
                .collect();
            let (s, rate) = concurrent(clients, "echo__get_item", calls / 4 + 1).await;
            add("Graft tools/call, 8 clients (2026)", s, Some(rate));
            if let Some((_, url)) = &anchor {
                let mut clients = Vec::new();
                for _ in 0..8 {
                    let mut c = Mcp::new(url, None, "2025-11-25");
                    c.open().await;
                    clients.push(Arc::new(c));
                }
                let (s, rate) = concurrent(clients, "echo__get_item", calls / 4 + 1).await;
                add("TypeScript SDK server, 8 sessions", s, Some(rate));
            }
            }
            if run("find_tool") {
            let s = sequential(calls / 2 + 1, |i| {
                legacy.call("find_tool", json!({"query": queries[i % queries.len()]})).map_unit()
            })
            .await;
            add("Graft find_tool (10,000+ tools, lexical)", s, None);
            }
            if run("tools/list") {
            let s = sequential(calls / 4 + 1, |_| wide.rpc("tools/list", json!({})).map_unit()).await;
            add("Graft tools/list (500-tool working set)", s, None);
            let s = sequential(calls / 4 + 1, |_| {
                let req = same_size.get(&same_bytes);
                async move {
                    let text = req.send().await.unwrap().text().await.unwrap();
                    let v: Value = serde_json::from_str(&text).unwrap();
                    assert!(v["result"]["tools"].is_array());
                }
            })
            .await;
            add("static GET of the same tools/list bytes, parsed", s, None);
            }
            if run("dry run") {
            let s = sequential(calls / 2 + 1, |i| {
                legacy
                    .call("run_tool", json!({"vendor": "echo", "name": "create_item", "input": {"name": format!("n{i}")}, "dryRun": true}))
                    .map_unit()
            })
            .await;
            add("Graft run_tool dry run (a write)", s, None);
            }
            if run("promote") {
            let (promote, notice) = promote_and_notice(&graft_url, &token, calls / 10 + 2).await;
            add("Graft promote (2025 session)", promote, None);
            add("Graft promote → list_changed on the GET stream", notice, None);
            }
        }

        let floor = series
            .iter()
            .find(|s| s.name.starts_with("direct"))
            .map_or(f64::NAN, |s| s.pct(0.5));
        println!(
            "\n{:<50} {:>8} {:>8} {:>8} {:>9} {:>9}",
            "", "p50 ms", "p90 ms", "p99 ms", "calls/s", "p50/GET"
        );
        for s in &series {
            let rate = if s.rates.is_empty() {
                1e3 / (s.samples.iter().sum::<f64>() / s.samples.len().max(1) as f64)
            } else {
                s.rates.iter().sum::<f64>() / s.rates.len() as f64
            };
            println!(
                "{:<50} {:>8.3} {:>8.3} {:>8.3} {:>9.0} {:>8.1}×",
                s.name,
                s.pct(0.5),
                s.pct(0.9),
                s.pct(0.99),
                rate,
                s.pct(0.5) / floor
            );
        }
        let p50 = |name: &str| series.iter().find(|s| s.name == name).map(|s| s.pct(0.5));
        if let (Some(on), Some(off)) = (
            p50("Graft tools/call, 2025 session, twin with metrics"),
            p50("Graft tools/call, 2025 session, GRAFT_METRICS=off"),
        ) {
            println!(
                "metrics' cost on tools/call: p50 with metrics / without = {:.3} ({:+.1}%)",
                on / off,
                (on / off - 1.0) * 100.0
            );
        }
        if cpu_off > 0.0 {
            let n = (rounds * calls) as f64;
            println!(
                "metrics' cost on tools/call in the server's CPU time: {:.3} ms per call with metrics, {:.3} without = {:.3} ({:+.1}%)",
                cpu_on / n,
                cpu_off / n,
                cpu_on / cpu_off,
                (cpu_on / cpu_off - 1.0) * 100.0
            );
        }
        println!("({rounds} interleaved rounds, {calls} sequential calls per series and round; release build: {})", !cfg!(debug_assertions));
    });
}

/// `n` promotions (each followed by a demotion) on a 2025 session with its GET stream
/// open: (promote call latency, time until the stream carried list_changed), ms.
/// Serves `body` as `application/json` at `/` from an axum server on port 0 (with
/// TCP_NODELAY, as Graft); returns its URL.
async fn serve_static(body: String) -> String {
    let body: &'static str = Box::leak(body.into_boxed_str());
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || async move { ([("content-type", "application/json")], body) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, |t| {
        let _ = t.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/")
}

async fn promote_and_notice(url: &str, token: &str, n: usize) -> (Vec<f64>, Vec<f64>) {
    use futures::StreamExt;
    let mut s = Mcp::new(url, Some(token), "2025-11-25");
    s.open().await;
    let stream_client = reqwest::Client::new();
    let resp = stream_client
        .get(url)
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", s.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "GET stream: {}", resp.status());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    tokio::spawn(async move {
        let mut body = resp.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(chunk)) = body.next().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let event: String = buf.drain(..end + 2).collect();
                if event.contains("notifications/tools/list_changed") {
                    let _ = tx.send(Instant::now());
                }
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut promote = Vec::new();
    let mut notice = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        s.call("promote", json!({"vendor": "echo2", "name": "get_item"}))
            .await;
        promote.push(t.elapsed().as_secs_f64() * 1e3);
        let arrived = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("list_changed within 5 s")
            .unwrap();
        notice.push(arrived.duration_since(t).as_secs_f64() * 1e3);
        s.call("demote", json!({"vendor": "echo2", "name": "get_item"}))
            .await;
        let _ = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
    }
    (promote, notice)
}

/// `.map_unit()`: a future's output dropped.
trait MapUnit: std::future::Future + Sized {
    fn map_unit(self) -> impl std::future::Future<Output = ()> {
        async move {
            self.await;
        }
    }
}

impl<F: std::future::Future> MapUnit for F {}

/// Copies the files of directory `from` into `to` (the data directory: the database, its
/// WAL and the key file; no subdirectories are needed).
fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            // the WAL and its index may go as the setup's connections close
            match std::fs::copy(entry.path(), to.join(entry.file_name())) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                r => {
                    r.unwrap();
                }
            }
        }
    }
}

/// CPU time (user and system, ms) process `pid` has used so far, from `/proc/<pid>/stat`
/// (0 where there is no such file).
fn cpu_ms(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // the fields after the command's closing parenthesis: state is the 1st, utime the
    // 12th and stime the 13th (proc(5) fields 14 and 15)
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11) + ticks(12)) * 1000.0 / hz
}
