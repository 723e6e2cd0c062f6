//! Crash safety on SQLite (issue 13.3): the real `graft` binary is killed with SIGKILL at
//! random points while it imports a large document, sweeps many agents, and serves a
//! burst of promotions and demotions from several clients. After each kill the database
//! is opened again (as a restart does) and must hold:
//!
//! - `PRAGMA integrity_check` = `ok`;
//! - the import all-or-nothing: the vendor has none of the document's tools or all;
//! - every working-set change exactly one history row: per agent and tool, the history
//!   alternates promote/demote starting with a promote, and ends with a promote exactly
//!   when the tool is in the working set;
//! - no approval and no connection lost.
//!
//! Each scenario starts from a copy of a prepared database, so kill points are
//! independent. `GRAFT_CRASH_KILLS` sets the kill points per scenario (default 100);
//! the seed of the random delays is printed, and `GRAFT_CRASH_SEED` replays it.

mod common;

use common::{free_port, seeded, specs_dir};
use graft::service::{Actor, Graft, ServiceConfig, SystemClock};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const GRAFT: &str = env!("CARGO_BIN_EXE_graft");
const AGENTS: usize = 6;
/// Agents in the sweep scenario, with 60 promoted tools each.
const SWEPT_AGENTS: usize = 30;
/// The key connection secrets are sealed with, in the test and in every child.
const KEY: &str = "3c1f0e2d4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

fn kills() -> usize {
    std::env::var("GRAFT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn db_url(dir: &Path) -> String {
    format!("sqlite://{}?mode=rwc", dir.join("graft.db").display())
}

async fn open(dir: &Path) -> Graft {
    std::fs::create_dir_all(dir).unwrap();
    let mut config = ServiceConfig::ephemeral("http://127.0.0.1:3000");
    config.key = graft::service::secrets::SecretKey::from_hex(KEY).unwrap();
    Graft::open(&db_url(dir), Arc::new(SystemClock), config)
        .await
        .expect("the database opens after a kill")
}

/// The prepared database every kill point starts from: petstore imported with a
/// connection, agents with approvals; `extra` adds what a scenario needs.
async fn prepare(dir: &Path) -> Graft {
    let g = open(dir).await;
    let petstore = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    g.import_openapi(
        "petstore",
        &petstore,
        Some("http://127.0.0.1:9/api"),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.add_connection(
        "petstore",
        "main",
        "header",
        Some("api_key"),
        Some("s3cret-key"),
    )
    .await
    .unwrap();
    let ops = Actor::Person("ops".into());
    for i in 0..AGENTS {
        g.add_agent(&format!("a{i}"), None, Some(100), None)
            .await
            .unwrap();
        for tool in ["add_pet", "delete_pet"] {
            g.decide_approval(&ops, &format!("a{i}"), "petstore", tool, true)
                .await
                .unwrap();
        }
    }
    g
}

/// Copies the prepared database (after a checkpoint) into a fresh directory.
fn copy_db(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let src = from.join(format!("graft.db{suffix}"));
        if src.exists() {
            std::fs::copy(&src, to.join(format!("graft.db{suffix}"))).unwrap();
        }
    }
}

async fn checkpoint(g: &Graft) {
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(g.pool().as_sqlite().unwrap())
        .await
        .unwrap();
}

/// What must survive every kill (see the module doc). Returns the counts of
/// approvals and connections.
async fn check(dir: &Path, what: &str) -> (i64, i64) {
    let (approvals, connections, _) = check_counting(dir, what).await;
    (approvals, connections)
}

/// [`check`], also returning how many history rows there are.
async fn check_counting(dir: &Path, what: &str) -> (i64, i64, usize) {
    let g = open(dir).await;
    let pool = g.pool().as_sqlite().unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(integrity, "ok", "{what}");
    let rows: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT agent_id, tool_id, action FROM history ORDER BY id")
            .fetch_all(pool)
            .await
            .unwrap();
    let history = rows.len();
    let set: HashSet<(i64, i64)> = sqlx::query_as("SELECT agent_id, tool_id FROM working_set")
        .fetch_all(pool)
        .await
        .unwrap()
        .into_iter()
        .collect();
    common::assert_history_explains(rows, set, what);
    let approvals: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM approvals")
        .fetch_one(pool)
        .await
        .unwrap();
    let connections: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM connections")
        .fetch_one(pool)
        .await
        .unwrap();
    pool.close().await;
    (approvals, connections, history)
}

fn graft_cmd(dir: &Path) -> Command {
    let mut c = Command::new(GRAFT);
    c.arg("--data-dir")
        .arg(dir)
        .env_remove("DATABASE_URL")
        .env("GRAFT_SECRET_KEY", KEY)
        .env("GRAFT_VENDOR_LOOPBACK", "allow")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(if std::env::var_os("GRAFT_CRASH_LOG").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    c
}

/// Runs `child` to completion or kills it (SIGKILL) after `after`; says whether it was
/// killed before it finished.
async fn kill_after(mut child: Child, after: Duration) -> bool {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if started.elapsed() >= after {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            return true;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// How long a run of `cmd` takes when nobody kills it.
async fn full_run(cmd: &mut Command) -> Duration {
    let started = Instant::now();
    let status = cmd.status().unwrap();
    assert!(status.success(), "{cmd:?}");
    started.elapsed()
}

#[tokio::test]
async fn a_killed_import_is_all_or_nothing() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().join("prepared");
    let g = prepare(&base).await;
    checkpoint(&g).await;
    g.pool().as_sqlite().unwrap().close().await;
    let (approvals, connections) = check(&base, "prepared").await;
    let doc = specs_dir().join("stripe_spec3_2023-09.yaml");
    let import = |dir: &Path| {
        let mut c = graft_cmd(dir);
        c.arg("import-openapi").arg(&doc).args([
            "--vendor",
            "stripe",
            "--base-url",
            "http://127.0.0.1:9",
        ]);
        c
    };
    let whole = root.path().join("whole");
    copy_db(&base, &whole);
    let took = full_run(&mut import(&whole)).await;
    let tools_of = |dir: PathBuf| async move {
        let g = open(&dir).await;
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM tools t JOIN vendors v ON v.id = t.vendor_id WHERE v.slug = 'stripe'",
        )
        .fetch_one(g.pool().as_sqlite().unwrap())
        .await
        .unwrap();
        g.pool().as_sqlite().unwrap().close().await;
        n
    };
    let all = tools_of(whole.clone()).await;
    assert!(all > 400, "{all}");
    let mut rng = seeded("import");
    let (mut none, mut some) = (0, 0);
    for i in 0..kills() {
        let dir = root.path().join(format!("k{i}"));
        copy_db(&base, &dir);
        let delay = took.mul_f64(rng.gen_range(0.0..1.1));
        let killed = kill_after(import(&dir).spawn().unwrap(), delay).await;
        let what = format!("import killed at {delay:?} (of {took:?})");
        assert_eq!(check(&dir, &what).await, (approvals, connections), "{what}");
        let n = tools_of(dir.clone()).await;
        assert!(n == 0 || n == all, "{what}: {n} of {all} tools");
        if killed && n == 0 {
            none += 1;
        } else {
            some += 1;
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    eprintln!("import: {none} kills left nothing, {some} runs imported all {all}");
}

#[tokio::test]
async fn a_killed_sweep_leaves_one_history_row_per_change() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().join("prepared");
    let g = prepare(&base).await;
    let stripe = std::fs::read_to_string(specs_dir().join("stripe_spec3_2023-09.yaml")).unwrap();
    g.import_openapi(
        "stripe",
        &stripe,
        Some("http://127.0.0.1:9"),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT t.name FROM tools t JOIN vendors v ON v.id = t.vendor_id WHERE v.slug = 'stripe' ORDER BY t.id LIMIT 60",
    )
    .fetch_all(g.pool().as_sqlite().unwrap())
    .await
    .unwrap();
    let ops = Actor::Person("ops".into());
    for i in 0..SWEPT_AGENTS - AGENTS {
        g.add_agent(&format!("s{i}"), None, Some(100), None)
            .await
            .unwrap();
    }
    for a in g.list_agents().await.unwrap() {
        for n in &names {
            g.promote_tool(&ops, a.id, "stripe", n).await.unwrap();
        }
    }
    checkpoint(&g).await;
    g.pool().as_sqlite().unwrap().close().await;
    let (approvals, connections, prepared_rows) = check_counting(&base, "prepared").await;
    let mut demoted: Vec<usize> = Vec::new();
    // a sweep planned far in the future and applied now: every entry is idle, 360
    // demotions
    let sweep = |dir: &Path| {
        let mut c = graft_cmd(dir);
        c.args(["sweep", "--at", "2099-01-01T00:00:00Z", "--commit"]);
        c
    };
    let whole = root.path().join("whole");
    copy_db(&base, &whole);
    // the process's start and the sweep's reading, then the demotions: kill points go
    // where the writing is
    let mut dry = graft_cmd(&whole);
    dry.args(["sweep", "--at", "2099-01-01T00:00:00Z"]); // a preview: nothing written
    let reading = full_run(&mut dry).await;
    let took = full_run(&mut sweep(&whole)).await;
    check(&whole, "a whole sweep").await;
    let mut rng = seeded("sweep");
    for i in 0..kills() {
        let dir = root.path().join(format!("k{i}"));
        copy_db(&base, &dir);
        let delay = reading.mul_f64(0.8)
            + took
                .saturating_sub(reading.mul_f64(0.8))
                .mul_f64(rng.gen_range(0.0..1.2));
        kill_after(sweep(&dir).spawn().unwrap(), delay).await;
        let what = format!("sweep killed at {delay:?} (of {took:?}; reading {reading:?})");
        let (a, c, rows) = check_counting(&dir, &what).await;
        assert_eq!((a, c), (approvals, connections), "{what}");
        demoted.push(rows - prepared_rows);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    demoted.sort_unstable();
    eprintln!(
        "sweep: demotions before the kill: min {}, median {}, max {} (a whole sweep: {})",
        demoted[0],
        demoted[demoted.len() / 2],
        demoted[demoted.len() - 1],
        SWEPT_AGENTS * 60
    );
}

#[tokio::test]
async fn a_killed_server_loses_no_promotion_demotion_approval_or_connection() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().join("prepared");
    let g = prepare(&base).await;
    let mut tokens = Vec::new();
    for i in 0..4 {
        let (_, token) = g
            .add_agent(&format!("burst{i}"), None, Some(100), None)
            .await
            .unwrap();
        tokens.push(token);
    }
    let tools: Vec<String> = sqlx::query_scalar(
        "SELECT t.name FROM tools t JOIN vendors v ON v.id = t.vendor_id WHERE v.slug = 'petstore' ORDER BY t.id",
    )
    .fetch_all(g.pool().as_sqlite().unwrap())
    .await
    .unwrap();
    checkpoint(&g).await;
    g.pool().as_sqlite().unwrap().close().await;
    let (approvals, connections, prepared_rows) = check_counting(&base, "prepared").await;
    let mut rng = seeded("serve");
    let mut changes: Vec<usize> = Vec::new();
    let http = reqwest::Client::new();
    for i in 0..kills() {
        let dir = root.path().join(format!("k{i}"));
        copy_db(&base, &dir);
        let port = free_port();
        let server = graft_cmd(&dir)
            .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let health = format!("http://127.0.0.1:{port}/healthz");
        let up = Instant::now();
        while http.get(&health).send().await.is_err() {
            assert!(
                up.elapsed() < Duration::from_secs(30),
                "graft did not start"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // four clients promote and demote petstore tools until the server dies
        let mut clients = tokio::task::JoinSet::new();
        for (c, token) in tokens.iter().enumerate() {
            let (http, url, token, tools) =
                (http.clone(), url.clone(), token.clone(), tools.clone());
            let seed: u64 = rng.gen();
            clients.spawn(async move {
                let mut r = rand::rngs::StdRng::seed_from_u64(seed ^ c as u64);
                for _ in 0..200 {
                    let tool = &tools[r.gen_range(0..tools.len())];
                    let meta = if r.gen_bool(0.6) { "promote" } else { "demote" };
                    // the server may die under the request: any outcome is fine here
                    common::call(
                        &http,
                        &url,
                        &token,
                        meta,
                        json!({"vendor": "petstore", "name": tool}),
                        Duration::from_secs(5),
                    )
                    .await;
                }
            });
        }
        let delay = Duration::from_millis(rng.gen_range(20..600));
        let killed = kill_after(server, delay).await;
        assert!(killed, "graft serve does not exit by itself");
        clients.join_all().await;
        let what = format!("server killed {delay:?} into a burst");
        let (a, c, rows) = check_counting(&dir, &what).await;
        assert_eq!((a, c), (approvals, connections), "{what}");
        changes.push(rows - prepared_rows);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    changes.sort_unstable();
    eprintln!(
        "serve: working-set changes before the kill: min {}, median {}, max {}",
        changes[0],
        changes[changes.len() / 2],
        changes[changes.len() - 1]
    );
}
