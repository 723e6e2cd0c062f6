//! Security review, round three (issue 32): each finding as a test that failed on the
//! main it was found on. Real HTTP on port 0, rmcp clients, the test vendor.

use super::console::{Browser, PASSWORD};
use super::helpers::*;
use super::vendor;
use graft::service::{Actor, Graft, SystemClock};
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const SECRET: &str = "sec-K3y-0123456789";

/// A name resolver the test sets: host → addresses.
#[derive(Debug, Default)]
struct StubLookup(std::sync::Mutex<std::collections::HashMap<String, Vec<std::net::IpAddr>>>);

impl StubLookup {
    fn set(&self, host: &str, ips: &[&str]) {
        self.0.lock().unwrap().insert(
            host.to_string(),
            ips.iter().map(|i| i.parse().unwrap()).collect(),
        );
    }
}

impl graft::proxy::destination::Lookup for StubLookup {
    fn lookup(
        &self,
        host: String,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<Vec<std::net::IpAddr>>> + Send>,
    > {
        let found = self.0.lock().unwrap().get(&host).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such host"))
        })
    }
}

/// An app over `s` whose vendor names resolve through `lookup`.
async fn app_with_lookup(s: graft::config::Settings, lookup: Arc<StubLookup>) -> TestApp {
    let mut config = s.service_config().unwrap();
    config.lookup = Some(lookup);
    let graft = Graft::open(&s.database_url, Arc::new(SystemClock), config)
        .await
        .unwrap();
    spawn_app_with_graft(s, graft).await
}

/// A small document whose one read is `GET /anything/item`.
const ITEM_API: &str = r#"{"openapi": "3.0.0", "info": {"title": "Item", "version": "1"},
  "paths": {"/anything/item": {"get": {"operationId": "get_item"}},
            "/anything/item/{id}": {"put": {"operationId": "put_item", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]}}}}"#;

async fn run_item(
    client: &rmcp::service::RunningService<rmcp::RoleClient, Counting>,
    vendor: &str,
) -> rmcp::model::CallToolResult {
    call(
        client,
        "run_tool",
        json!({"vendor": vendor, "name": "get_item", "input": {}}),
    )
    .await
}

/// 32.7: vendors cannot be pointed inward; a person's mark opens private addresses; names
/// resolve once per connection to checked addresses.
#[tokio::test]
async fn vendors_cannot_be_pointed_inward() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let port = v.addr.port();
    let mut s = settings(dir.path());
    s.limits.vendor_loopback = false;
    s.limits.connect_timeout = Duration::from_secs(1);
    let lookup = Arc::new(StubLookup::default());
    let app = app_with_lookup(s, lookup.clone()).await;
    let g = &app.graft;
    // loopback, in any spelling, without GRAFT_VENDOR_LOOPBACK
    for base in [
        format!("http://127.0.0.1:{port}"),
        format!("http://2130706433:{port}"),
        format!("http://0x7f.1:{port}"),
        format!("http://[::ffff:127.0.0.1]:{port}"),
    ] {
        let slug = format!("lo{}", base.len());
        g.import_openapi(&slug, ITEM_API, Some(&base), &mut |_, _| {})
            .await
            .unwrap();
    }
    // names: private, metadata, and one that resolves to both kinds
    lookup.set("inside.test", &["10.9.9.9"]);
    lookup.set("meta.test", &["169.254.169.254"]);
    g.import_openapi(
        "inside",
        ITEM_API,
        Some(&format!("http://inside.test:{port}")),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.import_openapi(
        "meta",
        ITEM_API,
        Some(&format!("http://meta.test:{port}")),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    // a metadata address written out is refused when the import sets it (security
    // review 32.7): no vendor, no tools; the document's own servers URL too
    let before = g.vendor_slugs().await.unwrap();
    for (slug, base) in [
        ("metaip", Some("http://169.254.169.254/latest")),
        ("metadoc", None),
    ] {
        let doc = ITEM_API.replacen(
            r#"{"openapi""#,
            r#"{"servers": [{"url": "http://169.254.169.254/computeMetadata/v1"}], "openapi""#,
            1,
        );
        let e = g
            .import_openapi(slug, &doc, base, &mut |_, _| {})
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("cloud metadata"), "{slug}: {e}");
    }
    assert_eq!(g.vendor_slugs().await.unwrap(), before, "nothing written");
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for slug in g
        .vendor_slugs()
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.starts_with("lo"))
    {
        let r = run_item(&client, &slug).await;
        assert_eq!(
            code(&r).as_deref(),
            Some("vendor_unreachable"),
            "{slug}: {}",
            text(&r)
        );
        assert!(
            text(&r).contains("loopback address"),
            "{slug}: {}",
            text(&r)
        );
    }
    let r = run_item(&client, "inside").await;
    assert!(
        text(&r).contains("10.9.9.9") && text(&r).contains("mark the vendor internal"),
        "{}",
        text(&r)
    );
    let r = run_item(&client, "meta").await;
    assert!(text(&r).contains("cloud metadata"), "{}", text(&r));
    assert_eq!(v.count(), 0, "nothing reached the vendor");
    // marked internal, the private address may be tried (it does not answer here); the
    // metadata address never
    g.set_vendor_internal(&Actor::Person("ops".into()), "inside", true)
        .await
        .unwrap();
    g.set_vendor_internal(&Actor::Person("ops".into()), "meta", true)
        .await
        .unwrap();
    let r = run_item(&client, "inside").await;
    assert_eq!(code(&r).as_deref(), Some("vendor_unreachable"));
    assert!(
        !text(&r).contains("mark the vendor internal"),
        "{}",
        text(&r)
    );
    let r = run_item(&client, "meta").await;
    assert!(text(&r).contains("cloud metadata"), "{}", text(&r));
    client.cancel().await.unwrap();
    app.stop().await;

    // with loopback allowed (development): the connection goes to exactly the checked
    // addresses the name resolved to, whatever else it resolved to
    let dir = tempfile::tempdir().unwrap();
    let lookup = Arc::new(StubLookup::default());
    let app = app_with_lookup(settings(dir.path()), lookup.clone()).await;
    lookup.set("pinned.test", &["169.254.169.254", "127.0.0.1"]);
    app.graft
        .import_openapi(
            "pinned",
            ITEM_API,
            Some(&format!("http://pinned.test:{port}")),
            &mut |_, _| {},
        )
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let r = run_item(&client, "pinned").await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(v.last().headers["host"], format!("pinned.test:{port}"));
    client.cancel().await.unwrap();
    app.stop().await;
}

/// 32.7: a base URL adopted from the document's servers is named in the import report.
#[tokio::test]
async fn an_adopted_server_url_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let doc = r#"{"openapi": "3.0.0", "info": {"title": "S", "version": "1"},
        "servers": [{"url": "https://api.s.example/v2"}], "paths": {"/a": {"get": {"operationId": "a"}}}}"#;
    let r = app
        .graft
        .import_openapi("s", doc, None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(
        r.adopted_base_url.as_deref(),
        Some("https://api.s.example/v2")
    );
    let r = app
        .graft
        .import_openapi("t", doc, Some("https://other.example"), &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(r.adopted_base_url, None);
    app.stop().await;
}

/// 32.5: a base URL on another origin suspends the connections and sets approvals back
/// to pending until a person confirms.
#[tokio::test]
async fn secrets_and_approvals_stay_with_the_origin_they_were_given_for() {
    let dir = tempfile::tempdir().unwrap();
    let first = vendor::start(None).await;
    let second = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.import_openapi("item", ITEM_API, Some(&first.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection("item", "main", "bearer", None, Some(SECRET))
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    g.decide_approval(&ops, "alpha", "item", "put_item", true)
        .await
        .unwrap();
    let put = json!({"vendor": "item", "name": "put_item", "input": {"id": "7"}});
    let r = call(&client, "run_tool", put.clone()).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // same origin, another path: nothing is suspended
    assert_eq!(
        g.origin_move("item", &format!("{}/anything", first.url()))
            .await
            .unwrap(),
        None
    );
    let moved = g.origin_move("item", &second.url()).await.unwrap();
    assert!(moved.is_some());
    g.set_vendor(&ops, "item", None, Some(&second.url()), None)
        .await
        .unwrap();
    let r = run_item(&client, "item").await;
    assert_eq!(
        code(&r).as_deref(),
        Some("connection_suspended"),
        "{}",
        text(&r)
    );
    assert!(text(&r).contains(&second.url()), "{}", text(&r));
    assert_eq!(second.count(), 0, "no secret went to the new origin");
    let approvals = g.approvals().await.unwrap();
    let a = approvals.iter().find(|a| a.name == "put_item").unwrap();
    assert_eq!(a.state.as_str(), "pending");
    assert!(
        a.changed.as_deref().unwrap_or("").contains("moved from"),
        "{a:?}"
    );
    // the person confirms: reads go; the write asks again
    assert_eq!(g.confirm_connections(&ops, "item").await.unwrap(), 1);
    let r = run_item(&client, "item").await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(second.last().headers["authorization"]
        .to_str()
        .unwrap()
        .contains(SECRET));
    let r = call(&client, "run_tool", put).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    assert!(
        g.confirm_connections(&ops, "item").await.is_err(),
        "nothing left to confirm"
    );
    client.cancel().await.unwrap();
    app.stop().await;

    // the CLI asks for --yes before a move
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_graft"))
        .arg("--data-dir")
        .arg(dir.path())
        .args([
            "vendor",
            "set",
            "item",
            "--base-url",
            "https://elsewhere.example",
        ])
        .env("DATABASE_URL", db_url(dir.path()))
        .env_remove("GRAFT_SECRET_KEY")
        .output()
        .unwrap();
    if !on_postgres() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("--yes"), "{err}");
    }
}

/// 32.6: a revoked or removed vendor's secret is deleted (file and write-ahead log), a
/// key file can live outside the data directory, and `graft key rotate` re-seals.
#[tokio::test]
async fn secrets_leave_the_files_and_rotate_under_a_new_key() {
    if on_postgres() {
        return; // files and the key file are SQLite's and the CLI's
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let key_file = keys.path().join("graft.key");
    let v = vendor::start(None).await;
    let graft_cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_graft"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(args)
            .env_remove("DATABASE_URL")
            .env_remove("GRAFT_SECRET_KEY")
            .env("GRAFT_SECRET_KEY_FILE", &key_file)
            .env("GRAFT_VENDOR_LOOPBACK", "allow")
            .env("GONE_SECRET", "gone-secret-7f3a9c")
            .env("KEPT_SECRET", SECRET)
            .output()
            .unwrap()
    };
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let doc_path = dir.path().join("item.json");
    std::fs::write(&doc_path, ITEM_API).unwrap();
    ok(graft_cli(&[
        "import-openapi",
        doc_path.to_str().unwrap(),
        "--vendor",
        "gone",
        "--base-url",
        &v.url(),
    ]));
    ok(graft_cli(&[
        "import-openapi",
        doc_path.to_str().unwrap(),
        "--vendor",
        "kept",
        "--base-url",
        &v.url(),
    ]));
    ok(graft_cli(&[
        "connection",
        "add",
        "gone",
        "--label",
        "x",
        "--kind",
        "bearer",
        "--secret-env",
        "GONE_SECRET",
    ]));
    ok(graft_cli(&[
        "connection",
        "add",
        "kept",
        "--label",
        "y",
        "--kind",
        "bearer",
        "--secret-env",
        "KEPT_SECRET",
    ]));
    assert!(
        key_file.is_file(),
        "the key lives where GRAFT_SECRET_KEY_FILE says"
    );
    assert!(
        !dir.path().join("secret.key").exists(),
        "not beside the database"
    );
    let sealed_of = |label: &str| sealed_secret(dir.path(), label);
    let gone_sealed = sealed_of("x");
    ok(graft_cli(&["vendor", "remove", "gone", "--yes"]));
    let bytes = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_default();
    for f in ["graft.db", "graft.db-wal"] {
        let b = bytes(f);
        assert!(
            memchr_find(&b, gone_sealed.as_bytes()).is_none(),
            "{f} still holds the removed vendor's sealed secret"
        );
    }
    // rotate: the old key no longer opens what is stored; the new one does, and calls
    // send the same secret
    let old_key = std::fs::read_to_string(&key_file).unwrap();
    let refused = graft_cli(&["key", "rotate"]);
    assert!(!refused.status.success(), "rotation asks for --yes");
    let out = ok(graft_cli(&["key", "rotate", "--yes"]));
    assert!(out.contains("Re-sealed 1 secret"), "{out}");
    let new_key = std::fs::read_to_string(&key_file).unwrap();
    assert_ne!(old_key, new_key);
    let sealed = sealed_of("y");
    let old = graft::service::secrets::SecretKey::from_hex(&old_key).unwrap();
    let new = graft::service::secrets::SecretKey::from_hex(&new_key).unwrap();
    assert!(old.open(&sealed).is_err());
    assert_eq!(new.open(&sealed).unwrap(), SECRET);
}

/// The sealed secret of the connection labelled `label`, read from the SQLite file.
fn sealed_secret(dir: &std::path::Path, label: &str) -> String {
    let url = sqlite_url(dir);
    let label = label.to_string();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                use sqlx::Connection;
                let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
                let v: Option<String> = sqlx::query_scalar(
                    "SELECT secret_ciphertext FROM connections WHERE label = $1",
                )
                .bind(&label)
                .fetch_one(&mut c)
                .await
                .unwrap();
                v.unwrap_or_default()
            })
    })
    .join()
    .unwrap()
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// 32.6: a revoked connection's secret is not kept.
#[tokio::test]
async fn a_revoked_connection_keeps_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("item", ITEM_API, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    let id = g
        .add_connection("item", "main", "bearer", None, Some(SECRET))
        .await
        .unwrap()
        .id;
    g.revoke_connection(&Actor::Person("ops".into()), id)
        .await
        .unwrap();
    let row = graft::db::select_connection(g.pool(), id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        row.revoked_at.is_some() && row.secret_ciphertext.is_none(),
        "{row:?}"
    );
    app.stop().await;
}

/// 32.8: per-agent call rate and concurrency, authoring rate, versions per tool, and
/// the calls log's retention.
#[tokio::test]
async fn one_agent_cannot_grow_the_database_without_bound() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let mut s = settings(dir.path());
    s.quotas = graft::service::quota::Quotas {
        calls_per_minute: 3,
        concurrent_calls: 1,
        authoring_per_hour: 4,
        versions_per_tool: 2,
        tools_per_agent: 1,
        changes_per_hour: 2,
        calls_retention_days: 90,
        call_details_kept: 10_000,
    };
    let app = spawn_app_with(s).await;
    let g = &app.graft;
    g.import_openapi("item", ITEM_API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (id, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for _ in 0..3 {
        let r = run_item(&client, "item").await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    let r = run_item(&client, "item").await;
    assert_eq!(code(&r).as_deref(), Some("rate_limited"), "{}", text(&r));
    assert!(
        r.structured_content.unwrap()["error"]["retryAfterSeconds"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let filter = graft::db::CallFilter {
        agent_id: Some(id),
        ..Default::default()
    };
    let logged = graft::db::select_call_log(g.pool(), &filter, 50)
        .await
        .unwrap();
    assert_eq!(logged.len(), 3, "a refused-for-rate call is not logged");
    // authoring: three per hour, then refused; an agent's tool has two versions at most
    let acquire = |n: &str| {
        json!({"vendor": "item", "name": n, "description": "x", "method": "GET", "path": "/anything/x",
               "inputSchema": {"type": "object", "properties": {}}})
    };
    let r = call(&client, "acquire", acquire("mine")).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(
        &client,
        "publish",
        json!({"vendor": "item", "name": "mine", "description": "v2"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(
        &client,
        "publish",
        json!({"vendor": "item", "name": "mine", "description": "v3"}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(
        text(&r).contains("GRAFT_AGENT_VERSIONS_PER_TOOL"),
        "{}",
        text(&r)
    );
    let r = call(&client, "acquire", acquire("mine2")).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("GRAFT_AGENT_TOOLS"), "{}", text(&r));
    let r = call(&client, "acquire", acquire("mine3")).await;
    assert_eq!(code(&r).as_deref(), Some("rate_limited"), "{}", text(&r));
    // promotions and demotions write history rows: two an hour here
    let pd =
        |verb: &'static str| call(&client, verb, json!({"vendor": "item", "name": "get_item"}));
    assert_eq!(pd("promote").await.is_error, Some(false));
    assert_eq!(pd("demote").await.is_error, Some(false));
    let r = pd("promote").await;
    assert_eq!(code(&r).as_deref(), Some("rate_limited"), "{}", text(&r));
    // retention: the scheduled sweep deletes calls older than the retention
    let now = g.clock_now();
    let old = now - 91 * 86_400_000;
    sqlx_exec(
        g,
        &format!("UPDATE tool_calls SET at = {old} WHERE id = (SELECT MIN(id) FROM tool_calls)"),
    )
    .await;
    g.sweep_scheduled(now).await.unwrap();
    let logged = graft::db::select_call_log(g.pool(), &filter, 50)
        .await
        .unwrap();
    assert_eq!(
        logged.len(),
        2,
        "the 91-day-old call is gone, the others stay"
    );
    client.cancel().await.unwrap();
    app.stop().await;
}

/// 32.8: one agent's calls at once are bounded.
#[tokio::test]
async fn one_agent_cannot_hold_every_worker() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let mut s = settings(dir.path());
    s.quotas.concurrent_calls = 1;
    let app = spawn_app_with(s).await;
    let slow = r#"{"openapi": "3.0.0", "info": {"title": "Slow", "version": "1"},
      "paths": {"/delay/{secs}": {"get": {"operationId": "wait", "parameters": [{"name": "secs", "in": "path", "required": true, "schema": {"type": "integer"}}]}}}}"#;
    app.graft
        .import_openapi("slow", slow, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (a, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let (b, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let long = call(
        &a,
        "run_tool",
        json!({"vendor": "slow", "name": "wait", "input": {"secs": 2}}),
    );
    let second = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        call(
            &b,
            "run_tool",
            json!({"vendor": "slow", "name": "wait", "input": {"secs": 0}}),
        )
        .await
    };
    let (first, second) = tokio::join!(long, second);
    assert_eq!(first.is_error, Some(false), "{}", text(&first));
    assert_eq!(
        code(&second).as_deref(),
        Some("rate_limited"),
        "{}",
        text(&second)
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    app.stop().await;
}

async fn sqlx_exec(g: &Graft, sql: &str) {
    match g.pool() {
        graft::db::Pool::Sqlite(p) => {
            sqlx::query(sql).execute(p).await.unwrap();
        }
        graft::db::Pool::Postgres(p) => {
            sqlx::query(sql).execute(p).await.unwrap();
        }
    }
}

/// 32.9 and 32.10: rotating a token ends the old token's streams and sessions; a
/// session has one change stream however often it says it is initialized.
#[tokio::test]
async fn a_rotated_token_keeps_no_stream_and_a_session_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    let r = raw_initialize(&app, &token).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    drop(r);
    let post = |body: &'static str| {
        reqwest::Client::new()
            .post(app.mcp_url())
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body)
            .send()
    };
    for _ in 0..5 {
        let r = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    wait_until(
        || app.graft.hub().channels() == 1,
        "one stream for the session",
    )
    .await;
    assert_eq!(
        app.graft.hub().channels(),
        1,
        "repeats open no more streams"
    );
    // a modern listen stream and a legacy client too
    let (legacy, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    wait_until(
        || app.graft.hub().channels() == 2,
        "the legacy client's stream",
    )
    .await;
    let new_token = app.graft.rotate_token(id).await.unwrap();
    wait_until(
        || app.graft.hub().channels() == 0,
        "every stream of the old token ended",
    )
    .await;
    // the raw session is closed: its id answers 404
    let mut closed = false;
    for _ in 0..50 {
        let r = raw_tools_list(&app, &new_token, &sid).await;
        if r.status() == 404 {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(closed, "the rotated token's session was closed");
    let _ = legacy.cancel().await;
    app.stop().await;
}

async fn wait_until(cond: impl Fn() -> bool, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 32.11: a secret echoed base64- or hex-encoded or in another letter case is redacted.
#[tokio::test]
async fn echoed_secrets_are_redacted_in_every_encoding() {
    use base64::Engine;
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let doc = r#"{"openapi": "3.0.0", "info": {"title": "E", "version": "1"},
      "paths": {"/said/encoded": {"get": {"operationId": "encoded"}}}}"#;
    app.graft
        .import_openapi("enc", doc, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    app.graft
        .add_connection("enc", "main", "header", Some("X-Key"), Some(SECRET))
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "enc", "name": "encoded", "input": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let everything = format!(
        "{}{}",
        text(&r),
        r.structured_content.clone().unwrap_or_default()
    );
    for echoed in [
        SECRET.to_string(),
        SECRET.to_ascii_uppercase(),
        SECRET.to_ascii_lowercase(),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(SECRET),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET),
        hex::encode(SECRET),
        hex::encode(SECRET).to_ascii_uppercase(),
    ] {
        assert!(!everything.contains(&echoed), "{echoed} in {everything}");
    }
    assert!(everything.contains("<redacted>"), "{everything}");
    client.cancel().await.unwrap();
    app.stop().await;
}

/// 32.1, 32.12: sign-ins are bounded (429 with Retry-After when full), and guesses
/// from one address never lock the person out from another.
#[tokio::test]
async fn sign_in_cannot_be_flooded_and_never_locks_the_owner_out() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let from = |ip: &str| {
        reqwest::Client::builder()
            .local_address(ip.parse::<std::net::IpAddr>().unwrap())
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    };
    let login = |c: reqwest::Client, name: String, pw: &'static str| {
        let url = format!("http://{}/api/login", app.addr);
        async move {
            c.post(url)
                .form(&[("name", name.as_str()), ("password", pw)])
                .send()
                .await
                .unwrap()
        }
    };
    // five wrong passwords from one address: that address is refused that name…
    let attacker = from("127.0.0.1");
    for _ in 0..5 {
        let r = login(attacker.clone(), "ops".into(), "wrong password!").await;
        assert_eq!(r.status(), 400);
    }
    let r = login(attacker.clone(), "ops".into(), PASSWORD).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    // …and the person, from another address, signs in with the right one
    let owner = from("127.0.0.2");
    let r = login(owner.clone(), "ops".into(), PASSWORD).await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    // a flood of sign-ins with new names: answered 400 or 429, never more checks at
    // once than the bound (some wait, some are told to come back)
    let flood = from("127.0.0.3");
    let attempts: Vec<_> = (0..40)
        .map(|i| login(flood.clone(), format!("nobody{i}"), "x"))
        .collect();
    let statuses: Vec<u16> = futures::future::join_all(attempts)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    assert!(
        statuses.iter().all(|s| *s == 400 || *s == 429),
        "{statuses:?}"
    );
    assert!(statuses.contains(&429), "{statuses:?}");
    app.stop().await;
}

/// 32.2: connections are bounded per address, a request head must arrive in time, and a
/// half-sent request does not hold up shutdown.
#[tokio::test]
async fn the_port_cannot_be_held_by_half_sent_requests() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.connection_limits = graft::server::listen::ConnectionLimits {
        max_connections: 64,
        max_per_address: 8,
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(2),
    };
    let app = spawn_app_with(s).await;
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut c = tokio::net::TcpStream::connect(app.addr).await.unwrap();
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        held.push(c);
    }
    // the ninth from this address is closed at once, without an answer
    let mut ninth = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let _ = ninth
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await;
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), ninth.read(&mut buf))
        .await
        .expect("the ninth connection is closed, not left waiting")
        .unwrap_or(0);
    assert_eq!(n, 0, "no answer past the per-address limit");
    // the half-sent ones are closed once the head is late
    for c in &mut held {
        let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf))
            .await
            .expect("a half-sent request is dropped after the header timeout")
            .unwrap_or(0);
        let head = String::from_utf8_lossy(&buf[..n]).to_string();
        assert!(n == 0 || head.starts_with("HTTP/1.1 408"), "{head}");
    }
    // and then the port serves again
    let r = reqwest::get(format!("http://{}/healthz", app.addr))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // a body sent a byte at a time ends at the body timeout: answered, then closed
    let mut slow = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    slow.write_all(
        b"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nn",
    )
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let mut got = Vec::new();
    let read = async {
        loop {
            let _ = slow.write_all(b"a").await;
            let mut b = [0u8; 512];
            match tokio::time::timeout(Duration::from_millis(500), slow.read(&mut b)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => got.extend_from_slice(&b[..n]),
                Err(_) => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("a slow body is cut off");
    assert!(started.elapsed() >= Duration::from_secs(1));
    let head = String::from_utf8_lossy(&got).to_string();
    assert!(head.is_empty() || head.starts_with("HTTP/1.1 4"), "{head}");
    // HTTP/2 (prior knowledge) is not spoken: the port holds no idle h2 connection
    let mut h2 = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    let closed = async {
        let mut b = [0u8; 256];
        while let Ok(n) = h2.read(&mut b).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), closed)
        .await
        .expect("an HTTP/2 connection is closed at once, not held");
    // shutdown with a half-sent request open does not wait for it
    let mut lingering = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    lingering
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    app.stop().await;
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
}

/// 32.3, 32.4, 32.13, 32.15, 32.21: console headers and gates.
#[tokio::test]
async fn the_console_is_not_framed_rebound_or_walked_around() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    // frame-ancestors on every console answer, the sign-in page included
    for path in ["/login", "/agents", "/pkg/nothing.js"] {
        let r = b.get(path).await;
        assert_eq!(
            r.headers()
                .get("content-security-policy")
                .map(|v| v.to_str().unwrap()),
            Some("frame-ancestors 'none'"),
            "{path}"
        );
        assert_eq!(r.headers()["x-frame-options"], "DENY", "{path}");
    }
    // a foreign Host (DNS rebinding) is refused
    let r = b
        .http
        .get(format!("{}/login", b.base))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // dot segments do not walk past the sign-in gate
    for path in ["/pkg/../agents", "/pkg/%2e%2e/agents", "/pkg/..%2fagents"] {
        let r = b.get(path).await;
        assert!(
            matches!(r.status().as_u16(), 404 | 303),
            "{path}: {}",
            r.status()
        );
        let body = r.text().await.unwrap();
        assert!(!body.contains("<h1>Agents"), "{path}: {body}");
    }
    // over plain HTTP: the plain cookie, with a short life
    let r = b
        .call("login", &[("name", "ops"), ("password", PASSWORD)])
        .await;
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("graft_session="), "{cookie}");
    let max_age: i64 = cookie
        .split(';')
        .find_map(|p| p.trim().strip_prefix("Max-Age="))
        .map(|v| v.parse().unwrap())
        .unwrap_or(0);
    assert!(max_age > 0 && max_age <= 8 * 3600, "{cookie}");
    // /healthz: no toolbox size or stream count for anonymous callers
    let h: Value = reqwest::get(format!("{}/healthz", b.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        h.get("tools").is_none() && h.get("streams").is_none(),
        "{h}"
    );
    app.stop().await;

    // over HTTPS: a __Host- cookie, Secure; /healthz details with the metrics token
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.public_url = Some("https://graft.example".into());
    s.metrics_token = Some("scrape-me".into());
    let app = spawn_app_with(s).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    let r = b
        .call("login", &[("name", "ops"), ("password", PASSWORD)])
        .await;
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with("__Host-graft_session=")
            && cookie.contains("Secure")
            && cookie.contains("Path=/"),
        "{cookie}"
    );
    let h: Value = reqwest::Client::new()
        .get(format!("{}/healthz", b.base))
        .bearer_auth("scrape-me")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(h["tools"].is_number() && h["streams"].is_number(), "{h}");
    app.stop().await;
}

/// 32.14: a link cannot plant an error message on a console page; the page's own form
/// errors still show.
#[tokio::test]
async fn a_link_cannot_plant_a_message() {
    use base64::Engine;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    agent(&app, "alpha").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let planted = base64::engine::general_purpose::URL_SAFE
        .encode(r#"{"Refused":"Your account is compromised: call +1 555 0100"}"#);
    // no Sec-Fetch-Site: a plain-HTTP deployment off loopback, where browsers send none
    let r = b
        .get(&format!(
            "/agents/alpha?__path=/api/edit_agent&__err={planted}"
        ))
        .await;
    let body = if r.status().is_redirection() {
        let to = local(r.headers()["location"].to_str().unwrap());
        b.get(&to).await.text().await.unwrap()
    } else {
        r.text().await.unwrap()
    };
    assert!(!body.contains("compromised"), "a planted message was shown");
    // a real no-JavaScript form error of this session still shows
    let r = b
        .post_form(
            "edit_agent",
            "/agents/alpha",
            &[
                ("agent", "alpha"),
                ("name", "alpha"),
                ("cap", "9999"),
                ("window", "21"),
            ],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let to = local(r.headers()["location"].to_str().unwrap());
    assert!(
        !to.contains("Refused") && !to.contains("cap%20must"),
        "the value stays server-side: {to}"
    );
    let page = b.get(&to).await.text().await.unwrap();
    assert!(page.contains("between 1 and 500"), "{page}");
    // the same link in another session shows nothing
    let mut other = Browser::new(&app);
    other.sign_in("ops", PASSWORD).await;
    let r = other.get(&to).await;
    let page = if r.status().is_redirection() {
        let to = local(r.headers()["location"].to_str().unwrap());
        other.get(&to).await.text().await.unwrap()
    } else {
        r.text().await.unwrap()
    };
    assert!(!page.contains("between 1 and 500"), "{page}");
    app.stop().await;
}

/// The path and query of a redirect's `Location` (absolute or not).
fn local(location: &str) -> String {
    match url::Url::parse(location) {
        Ok(u) => match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        },
        Err(_) => location.to_string(),
    }
}

/// 32.16 and 32.17: an approval shows what an agent-written tool sends and marks bidi
/// controls; forwarding headers cannot be a tool's.
#[tokio::test]
async fn approvals_show_everything_a_tool_sends_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_vendor("item", None, &v.url()).await.unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "acquire",
        json!({"vendor": "item", "name": "sneaky", "description": "Reads a file\u{202E}etirW",
               "method": "POST", "path": "/anything/x", "headers": ["X-Mode"],
               "inputSchema": {"type": "object", "properties": {"X-Mode": {"type": "string"}}}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(&client, "item__sneaky", json!({"X-Mode": "admin"})).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    for forwarding in ["X-Forwarded-For", "Forwarded", "X-Original-URL"] {
        let r = call(
            &client,
            "acquire",
            json!({"vendor": "item", "name": "fwd", "description": "x", "method": "GET", "path": "/anything/y",
                   "headers": [forwarding], "inputSchema": {"type": "object", "properties": {forwarding: {"type": "string"}}}}),
        )
        .await;
        assert_eq!(
            code(&r).as_deref(),
            Some("invalid_input"),
            "{forwarding}: {}",
            text(&r)
        );
    }
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/approvals").await.text().await.unwrap();
    assert!(
        page.contains("⟨U+202E⟩") && !page.contains('\u{202E}'),
        "{page}"
    );
    assert!(
        page.contains("header X-Mode (from the input X-Mode)"),
        "{page}"
    );
    client.cancel().await.unwrap();
    app.stop().await;
}

/// 32.20: an agent cannot take a name the vendor's document gives an operation; an
/// import takes back a name an agent held.
#[tokio::test]
async fn an_import_wins_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.add_vendor("item", None, "http://127.0.0.1:9")
        .await
        .unwrap();
    let (id, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let acquire = json!({"vendor": "item", "name": "get_item", "description": "mine", "method": "GET",
                         "path": "/anything/mine", "inputSchema": {"type": "object", "properties": {}}});
    let r = call(&client, "acquire", acquire.clone()).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let report = g
        .import_openapi("item", ITEM_API, None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(
        report.moved,
        vec![("get_item".to_string(), "get_item_by_agent".to_string())]
    );
    let imported = g.tool("item", "get_item").await.unwrap();
    assert_eq!(imported.first_author, "import");
    let mine = g.tool("item", "get_item_by_agent").await.unwrap();
    assert!(mine.first_author.starts_with("agent:"));
    let notes = g
        .tool_detail("item", "get_item_by_agent")
        .await
        .unwrap()
        .notes;
    assert!(
        notes
            .iter()
            .any(|n| n.body.contains("an import wins the name")),
        "{notes:?}"
    );
    // the agent's working set follows its tool's new name
    let names: Vec<String> = g
        .working_set(id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.tool.name)
        .collect();
    assert_eq!(names, ["get_item_by_agent"]);
    // with the document stored, the name is refused outright
    g.add_vendor("other", None, "http://127.0.0.1:9")
        .await
        .unwrap();
    g.import_openapi("other", ITEM_API, None, &mut |_, _| {})
        .await
        .unwrap();
    let mut again = acquire;
    again["vendor"] = json!("other");
    again["name"] = json!("put_item");
    let r = call(&client, "acquire", again).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("operationId"), "{}", text(&r));
    client.cancel().await.unwrap();
    app.stop().await;
}

/// 32.18: a database URL parameter the driver would log with its value is refused
/// without showing the value.
#[tokio::test]
async fn database_url_parameters_never_reach_a_log() {
    let Err(e) = graft::db::connect("postgres://graft@127.0.0.1:9/graft?pass=hunter2-db").await
    else {
        panic!("an unknown parameter is refused");
    };
    let text = e.to_string();
    assert!(
        text.contains("\"pass\"") && !text.contains("hunter2"),
        "{text}"
    );
}

/// 32.19: at debug level no tool input reaches the log unredacted.
#[tokio::test]
async fn debug_logs_keep_no_input() {
    if on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let g = open_graft(&sqlite_url(dir.path()), Arc::new(SystemClock)).await;
    g.import_openapi("item", ITEM_API, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    let (_, token) = g.add_agent("alpha", None, None, None).await.unwrap();
    drop(g);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = dir.path().join("graft.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_graft"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env_remove("DATABASE_URL")
        .env_remove("GRAFT_SECRET_KEY")
        .env("RUST_LOG", "debug")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
        .await
        .is_err()
    {
        assert!(std::time::Instant::now() < deadline, "graft did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (client, _) = legacy_client_at(&url, &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "item", "name": "put_item", "input": {"id": "hunter2-in-a-path"}, "dryRun": true}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("DEBUG"), "the log is at debug level");
    assert!(
        !written.contains("hunter2-in-a-path"),
        "an input reached the debug log"
    );
}

/// 32.5, second look: a removed vendor brought back at another origin keeps no grant.
#[tokio::test]
async fn a_vendor_brought_back_elsewhere_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.import_openapi("item", ITEM_API, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    agent(&app, "alpha").await;
    g.decide_approval(&ops, "alpha", "item", "put_item", true)
        .await
        .unwrap();
    g.remove_vendor(&ops, "item").await.unwrap();
    let report = g
        .import_openapi("item", ITEM_API, Some("http://127.0.0.2:9"), &mut |_, _| {})
        .await
        .unwrap();
    assert!(
        report.brought_back && report.origin_moved.is_some(),
        "{report:?}"
    );
    let a = g.approvals().await.unwrap();
    assert_eq!(
        a.iter()
            .find(|a| a.name == "put_item")
            .unwrap()
            .state
            .as_str(),
        "pending"
    );
    app.stop().await;
}

/// Review of 28.3: the team's webhook follows the rules of vendor calls. A receiver on a
/// private, metadata or loopback address is refused when set (without
/// `GRAFT_VENDOR_LOOPBACK=allow`), and a name that later resolves inward is refused when
/// the Test button posts, so the button cannot probe the internal network.
#[tokio::test]
async fn the_webhook_cannot_be_pointed_inward() {
    use graft::domain::notify::Format;
    use graft::service::notify::SecretChoice;
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.limits.vendor_loopback = false;
    let lookup = Arc::new(StubLookup::default());
    let app = app_with_lookup(s, lookup.clone()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    // a receiver on this machine that must never hear anything
    let heard = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = heard.clone();
    let app_r = axum::Router::new().fallback(move || {
        h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { "ok" }
    });
    tokio::spawn(async move { axum::serve(listener, app_r).await.unwrap() });
    lookup.set("inside.test", &["10.9.9.9"]);
    lookup.set("hooks.test", &["203.0.113.7"]);
    for (url, says) in [
        (
            "http://169.254.169.254/latest".to_string(),
            "cloud metadata",
        ),
        (
            format!("http://127.0.0.1:{port}/hook"),
            "GRAFT_VENDOR_LOOPBACK",
        ),
        (format!("http://[::ffff:127.0.0.1]:{port}/hook"), "loopback"),
        (
            "http://inside.test/hook".to_string(),
            "GRAFT_WEBHOOK_INTERNAL",
        ),
        ("http://[fd00::5]/hook".to_string(), "private"),
    ] {
        let e = g
            .set_webhook(&ops, &url, Format::Graft, 5, SecretChoice::New)
            .await
            .expect_err(&url)
            .to_string();
        assert!(
            e.contains(says) && e.contains("public addresses"),
            "{url}: {e}"
        );
    }
    assert!(g.webhook().await.unwrap().is_none(), "nothing was set");

    // a public name is set; when it resolves to this machine later, nothing is posted
    g.set_webhook(
        &ops,
        &format!("http://hooks.test:{port}/hook"),
        Format::Graft,
        5,
        SecretChoice::New,
    )
    .await
    .unwrap();
    lookup.set("hooks.test", &["127.0.0.1"]);
    let said = g.test_webhook(&ops).await.unwrap().expect_err("refused");
    assert!(
        said.contains("127.0.0.1") && said.contains("public addresses"),
        "{said}"
    );
    assert_eq!(heard.load(std::sync::atomic::Ordering::SeqCst), 0);

    // GRAFT_WEBHOOK_INTERNAL=allow: a receiver on the internal network, never metadata
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.limits.vendor_loopback = false;
    s.limits.webhook_internal = true;
    let app = app_with_lookup(s, lookup.clone()).await;
    let g = &app.graft;
    g.set_webhook(
        &ops,
        "http://inside.test/hook",
        Format::Graft,
        5,
        SecretChoice::New,
    )
    .await
    .unwrap();
    let e = g
        .set_webhook(
            &ops,
            "http://169.254.169.254/x",
            Format::Graft,
            5,
            SecretChoice::New,
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("cloud metadata"), "{e}");
    let e = g
        .set_webhook(
            &ops,
            &format!("http://127.0.0.1:{port}/hook"),
            Format::Graft,
            5,
            SecretChoice::New,
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("GRAFT_VENDOR_LOOPBACK"), "{e}");
}
