//! Benchmark of the sweep (issue 4: `sweep_once` over 10,000 agents × 50 entries in under
//! one second). A bench binary: it builds a SQLite database of that size, then times
//! - the plan alone (a dry run),
//! - a sweep that demotes 5 idle entries of every agent (50,000 demotions with history),
//! - the steady state: a sweep with nothing to demote (the every-5-minutes case).
//!
//! On SQLite, then on PostgreSQL when `GRAFT_BENCH_DATABASE_URL` names an empty database
//! (scripts/bench.sh postgres starts a throwaway cluster for it), with the ratio.
//!
//! Run: `cargo bench --bench sweep` (GRAFT_BENCH_AGENTS, GRAFT_BENCH_ENTRIES to resize).

use graft::domain::sweep::DAY_MS;
use graft::service::{Graft, ServiceConfig, SystemClock};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

fn env(name: &str, default: i64) -> i64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probes bench binaries this way
    }
    let agents = env("GRAFT_BENCH_AGENTS", 10_000);
    let per_agent = env("GRAFT_BENCH_ENTRIES", 50);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("sweep.db").display()
        );
        let on_sqlite = run(&sqlite, "SQLite", agents, per_agent).await;
        if let Ok(url) = std::env::var("GRAFT_BENCH_DATABASE_URL") {
            let on_pg = run(&url, "PostgreSQL", agents, per_agent).await;
            println!(
                "steady state: PostgreSQL {on_pg:.1?}, SQLite {on_sqlite:.1?} ({:.2}x)",
                on_pg.as_secs_f64() / on_sqlite.as_secs_f64()
            );
        }
    });
}

/// Builds `agents` × `per_agent` entries on `url` and times the sweeps; returns the
/// best steady-state time.
async fn run(url: &str, label: &str, agents: i64, per_agent: i64) -> std::time::Duration {
    println!("== {label}");
    let graft = Graft::open(
        url,
        Arc::new(SystemClock),
        ServiceConfig::ephemeral("http://127.0.0.1:3000"),
    )
    .await
    .unwrap();
    let paths: serde_json::Map<String, serde_json::Value> = (0..per_agent)
        .map(|i| {
            (
                format!("/t{i}"),
                json!({"get": {"operationId": format!("t{i}")}}),
            )
        })
        .collect();
    let doc =
        json!({"openapi": "3.0.0", "info": {"title": "bench", "version": "1"}, "paths": paths});
    graft
        .import_openapi(
            "bench",
            &doc.to_string(),
            Some("http://127.0.0.1:9"),
            &mut |_, _| {},
        )
        .await
        .unwrap();
    let tool_ids: Vec<i64> = graft::on_db!(graft.pool(), |e| sqlx::query_scalar(
        "SELECT id FROM tools ORDER BY id"
    )
    .fetch_all(e)
    .await)
    .unwrap();

    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    let mut tx = graft.pool().begin_write().await.unwrap();
    for chunk in (1..=agents).collect::<Vec<_>>().chunks(500) {
        graft::on_db!(tx, |e| {
            let mut q = sqlx::QueryBuilder::new(
                "INSERT INTO agents (id, name, token_hash, cap, idle_window_days, created_at) ",
            );
            q.push_values(chunk, |mut b, id| {
                b.push_bind(id)
                    .push_bind(format!("agent{id}"))
                    .push_bind(format!("hash{id}"))
                    .push_bind(50)
                    .push_bind(21)
                    .push_bind(now);
            });
            q.build().execute(e).await.map(|r| r.rows_affected())
        })
        .unwrap();
    }
    // every agent: 5 entries idle (promoted 30 days ago, never called), the rest used today
    let rows: Vec<(i64, i64, i64, bool)> = (1..=agents)
        .flat_map(|a| {
            tool_ids
                .iter()
                .enumerate()
                .map(move |(i, t)| (a, *t, i as i64, i < 5))
        })
        .map(|(a, t, i, idle)| {
            (
                a,
                t,
                if idle {
                    now - 30 * DAY_MS
                } else {
                    now - 10 * DAY_MS + i
                },
                idle,
            )
        })
        .collect();
    for chunk in rows.chunks(2000) {
        graft::on_db!(tx, |e| {
            let mut q = sqlx::QueryBuilder::new(
                "INSERT INTO working_set (agent_id, tool_id, promoted_at, promoted_by) ",
            );
            q.push_values(chunk, |mut b, (a, t, p, _)| {
                b.push_bind(a).push_bind(t).push_bind(p).push_bind("agent");
            });
            q.build().execute(&mut *e).await.unwrap();
            let used: Vec<_> = chunk.iter().filter(|r| !r.3).collect();
            if !used.is_empty() {
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO tool_usage (agent_id, tool_id, last_used_at, calls) ",
                );
                q.push_values(used, |mut b, (a, t, _, _)| {
                    b.push_bind(a)
                        .push_bind(t)
                        .push_bind(now - 3_600_000)
                        .push_bind(3);
                });
                q.build().execute(&mut *e).await.unwrap();
            }
        });
    }
    tx.commit().await.unwrap();
    println!(
        "setup: {agents} agents x {per_agent} entries ({} rows) in {:.1?}",
        rows.len(),
        started.elapsed()
    );

    for run in 1..=3 {
        let t = Instant::now();
        let r = graft.sweep_once(now, true).await.unwrap();
        println!(
            "sweep_once dry run #{run}: {:.1?} ({} entries read, {} demotions planned)",
            t.elapsed(),
            r.entries,
            r.demotions()
        );
    }
    let t = Instant::now();
    let r = graft.sweep_once(now, false).await.unwrap();
    println!(
        "sweep_once demoting: {:.1?} ({} demotions written with history, {} agents)",
        t.elapsed(),
        r.demotions(),
        r.agents.len()
    );
    let mut best = std::time::Duration::MAX;
    for run in 1..=3 {
        let t = Instant::now();
        let r = graft.sweep_once(now, false).await.unwrap();
        best = best.min(t.elapsed());
        println!(
            "sweep_once steady state #{run}: {:.1?} ({} entries read, {} demotions)",
            t.elapsed(),
            r.entries,
            r.demotions()
        );
    }
    graft.pool().close().await;
    best
}
