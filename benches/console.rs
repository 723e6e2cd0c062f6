//! The console's server render time (issue 15 item 5): Graft's release binary as its own
//! process, signed in as a person, fetching whole pages on a kept-alive loopback
//! connection (the time is the request sent to the last byte read: the server's render
//! plus a loopback round trip):
//! - an agent's page (`/agents/wide`) with 500 tools in its working set and 10,000
//!   history rows (History is paged, 20 a page; the size-over-time chart reads them all);
//! - `/agents` with 1,000 agents;
//! - the same page's server function alone (`POST /api/agent`), the data without HTML;
//! - the Activity page (issue 30.4) over a calls log of 1,000,000 rows spread over 30
//!   days (`/activity` for 24 hours and `?range=30d`), and its server function alone.
//!
//! Run: `scripts/bench.sh console` or `cargo bench --bench console`. Environment:
//! `GRAFT_BENCH_SMOKE=1` (small, for CI), `GRAFT_BENCH_CALLS` (requests per page),
//! `GRAFT_BENCH_CALL_ROWS` (calls log rows; 1,000,000, or 10,000 when smoke).

#[path = "support/mod.rs"]
mod support;

use graft::service::Actor;
use std::time::Instant;
use support::{env_usize, open_graft, pct, smoke, spawn_graft};

/// Sets up the data: `tools` tools promoted for agent `wide` (cap 500) with `history`
/// history rows in all (demote and promote again), and `agents` agents in all; a
/// person `bench` with a known password.
async fn setup(data: &std::path::Path, tools: usize, history: usize, agents: usize) {
    let graft = open_graft(data).await;
    support::fill_toolbox(&graft, tools as i64 + 100).await;
    let names = support::first_tools(&graft, tools).await;
    let person = Actor::Person("bench".into());
    let (wide, _) = graft
        .add_agent("wide", None, Some(500), None)
        .await
        .unwrap();
    for (v, n) in &names {
        graft.promote_tool(&person, wide.id, v, n).await.unwrap();
    }
    let mut rows = names.len();
    let mut i = 0;
    while rows + 2 <= history {
        let (v, n) = &names[i % names.len()];
        graft.demote_tool(&person, wide.id, v, n).await.unwrap();
        graft.promote_tool(&person, wide.id, v, n).await.unwrap();
        rows += 2;
        i += 1;
    }
    for k in 1..agents {
        graft
            .add_agent(&format!("agent-{k:04}"), None, None, None)
            .await
            .unwrap();
    }
    graft.add_user("bench", "bench-password-1").await.unwrap();
}

/// Writes `rows` calls of agent `wide` into the calls log, one every `30 days / rows`
/// back from now, spread over the first `tools` tools: 1 in 50 a dry run, 1 in 20 a
/// vendor error, 1 in 20 an invalid input (not sent), durations 1–400 ms. One statement
/// (a recursive CTE), as a year of real calls would have filled it.
async fn fill_calls(data: &std::path::Path, rows: usize, tools: usize) {
    use sqlx::ConnectOptions;
    let url = format!("sqlite://{}", data.join("graft.db").display());
    let mut conn = url
        .parse::<sqlx::sqlite::SqliteConnectOptions>()
        .unwrap()
        .connect()
        .await
        .unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    let span = 30 * 24 * 3_600_000_i64;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1) \
         INSERT INTO tool_calls (agent_id, tool_id, version, dry_run, status, http_status, duration_ms, at, error_code) \
         SELECT (SELECT id FROM agents WHERE name = 'wide'), (SELECT MIN(id) FROM tools) + (i % $2), 1, \
                i % 50 = 7, CASE WHEN i % 20 IN (3, 4) THEN 'error' ELSE 'ok' END, \
                CASE WHEN i % 20 = 4 THEN NULL WHEN i % 20 = 3 THEN 500 ELSE 200 END, \
                1 + (i * 7919) % 400, $3 - (i * $4 / $1), \
                CASE WHEN i % 20 = 3 THEN 'vendor_error' WHEN i % 20 = 4 THEN 'invalid_input' END \
         FROM n",
    )
    .bind(rows as i64)
    .bind(tools.max(1) as i64)
    .bind(now)
    .bind(span)
    .execute(&mut conn)
    .await
    .unwrap();
    // the counts the Activity and agent pages read, as if each call had been logged
    let pool = graft::db::connect(&url).await.unwrap();
    graft::db::recount_calls(&pool).await.unwrap();
    pool.close().await;
}

/// Signs in through the login form's server function; returns the session cookie.
async fn sign_in(http: &reqwest::Client, base: &str) -> String {
    let resp = http
        .post(format!("{base}/api/login"))
        .header("origin", base)
        .form(&[("name", "bench"), ("password", "bench-password-1")])
        .send()
        .await
        .unwrap();
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("; ");
    assert!(
        !cookie.is_empty(),
        "sign-in failed: HTTP {}: {}",
        resp.status(),
        resp.text().await.unwrap_or_default()
    );
    cookie
}

/// Times `n` requests; returns the durations (ms) and the size of the last answer.
async fn time_page(
    http: &reqwest::Client,
    cookie: &str,
    n: usize,
    req: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> (Vec<f64>, usize) {
    let mut out = Vec::with_capacity(n);
    let mut size = 0;
    for _ in 0..n {
        let t = Instant::now();
        let resp = req(http).header("cookie", cookie).send().await.unwrap();
        let status = resp.status();
        let body = resp.bytes().await.unwrap();
        out.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(status.is_success(), "HTTP {status}");
        size = body.len();
    }
    (out, size)
}

fn main() {
    let smoke = smoke();
    let (tools, history, agents) = if smoke {
        (50, 200, 30)
    } else {
        (500, 10_000, 1_000)
    };
    let n = env_usize("GRAFT_BENCH_CALLS", if smoke { 3 } else { 100 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let t = Instant::now();
    rt.block_on(setup(data.path(), tools, history, agents));
    let call_rows = env_usize(
        "GRAFT_BENCH_CALL_ROWS",
        if smoke { 10_000 } else { 1_000_000 },
    );
    rt.block_on(fill_calls(data.path(), call_rows, tools));
    eprintln!(
        "set up {tools} promoted tools, {history} history rows, {agents} agents, {call_rows} calls in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let (_graft, base) = spawn_graft(data.path());
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let cookie = sign_in(&http, &base).await;
        // warm-up: the first render of each page builds caches and lazy statics
        for path in [
            "/agents/wide",
            "/agents",
            "/activity",
            "/activity?range=30d",
        ] {
            time_page(&http, &cookie, 2, |h| h.get(format!("{base}{path}"))).await;
        }
        let mut rows = Vec::new();
        for round in 0..2 {
            for (name, req) in [
                (
                    format!("agent page, {tools} tools, {history} history rows"),
                    Box::new(|h: &reqwest::Client| h.get(format!("{base}/agents/wide")))
                        as Box<dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder>,
                ),
                (
                    "  its server function alone (POST /api/agent)".to_string(),
                    Box::new(|h: &reqwest::Client| {
                        h.post(format!("{base}/api/agent"))
                            .header("origin", &base)
                            .form(&[("name", "wide"), ("page", "1")])
                    }),
                ),
                (
                    format!("/agents, {agents} agents"),
                    Box::new(|h: &reqwest::Client| h.get(format!("{base}/agents"))),
                ),
                (
                    format!("/activity (24 h), {call_rows} calls logged"),
                    Box::new(|h: &reqwest::Client| h.get(format!("{base}/activity"))),
                ),
                (
                    format!("/activity?range=30d, {call_rows} calls logged"),
                    Box::new(|h: &reqwest::Client| h.get(format!("{base}/activity?range=30d"))),
                ),
                (
                    "  its server function alone (POST /api/activity)".to_string(),
                    Box::new(|h: &reqwest::Client| {
                        h.post(format!("{base}/api/activity"))
                            .header("origin", &base)
                            .form(&[("range", "30d")])
                    }),
                ),
            ] {
                let (ms, size) = time_page(&http, &cookie, n / 2 + 1, req).await;
                if round == 0 {
                    rows.push((name, ms, size));
                } else if let Some(r) = rows.iter_mut().find(|r| r.0 == name) {
                    r.1.extend(ms);
                }
            }
        }
        println!(
            "\n{:<52} {:>8} {:>8} {:>8} {:>9}",
            "", "p50 ms", "p90 ms", "p99 ms", "KiB"
        );
        for (name, ms, size) in rows {
            println!(
                "{name:<52} {:>8.2} {:>8.2} {:>8.2} {:>9.1}",
                pct(&ms, 0.5),
                pct(&ms, 0.9),
                pct(&ms, 0.99),
                size as f64 / 1024.0
            );
        }
        println!(
            "({} requests per page in 2 interleaved rounds; release build: {})",
            2 * (n / 2 + 1),
            !cfg!(debug_assertions)
        );
    });
}
