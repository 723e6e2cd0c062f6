//! Several Graft instances on one database, and what differs on PostgreSQL (issue 11):
//! changes made on one instance, by the CLI or by whichever instance sweeps reach the
//! agent's streams on another, exactly once; a legacy session lives on the instance that
//! made it; `graft db copy`; text PostgreSQL cannot store.

use super::helpers::*;
use graft::service::{Actor, SystemClock};
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// find_tool's answer to one phrasing, as the agent reads it.
async fn find_text(c: &rmcp::service::RunningService<rmcp::RoleClient, Counting>) -> String {
    text(&call(c, "find_tool", json!({"query": "add a pet to the store"})).await)
}

/// Waits for one tools/list_changed on a 2026 listen stream (10 s at most).
async fn next_change(sub: &mut rmcp::service::Subscription) {
    let n = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("list_changed in time")
        .unwrap();
    assert!(
        matches!(n, Some(ServerNotification::ToolListChangedNotification(_))),
        "{n:?}"
    );
}

/// Asserts that nothing more arrives on a listen stream within `ms`.
async fn no_more(sub: &mut rmcp::service::Subscription, ms: u64) {
    let n = tokio::time::timeout(Duration::from_millis(ms), sub.next()).await;
    assert!(n.is_err(), "one notice per change, got another: {n:?}");
}

/// Starts `graft serve` on `url` with its own data directory under `dir`, sweeping
/// every second, and waits until it answers.
async fn instance(url: &str, dir: &std::path::Path, name: &str) -> Served {
    serve(
        url,
        &dir.join(name),
        &[("GRAFT_SWEEP_INTERVAL", "1s"), ("RUST_LOG", "warn")],
        None,
        name,
    )
    .await
}

/// Three `graft serve` processes on one PostgreSQL database, each with its own change
/// hub, sweeper and listener, and real MCP clients (rmcp). Alpha's streams (a 2025 GET
/// stream and a 2026 listen stream) are on A; its promotions go through B and C, a
/// person demotes with the CLI, every instance's LISTEN connection is cut, and the three
/// sweepers race every second after alpha's cap is lowered. Each change reaches both
/// streams exactly once; beta hears nothing; the sweep writes one history row per
/// demotion.
#[tokio::test]
async fn three_instances_hear_each_others_changes_exactly_once() {
    if !on_postgres() {
        eprintln!("skipped: several instances need PostgreSQL (GRAFT_TEST_BACKEND=postgres)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = db_url(dir.path());
    // the CLI: another process on the database
    let cli = open_graft(&url, Arc::new(SystemClock)).await;
    import_petstore(&cli, "http://127.0.0.1:9").await;
    let (alpha, token) = cli.add_agent("alpha", None, None, None).await.unwrap();
    let alpha = alpha.id;
    let (_, token_beta) = cli.add_agent("beta", None, None, None).await.unwrap();
    let a = instance(&url, dir.path(), "a").await;
    let b = instance(&url, dir.path(), "b").await;
    let c = instance(&url, dir.path(), "c").await;

    let (legacy, events) = legacy_client_at(&a.mcp(), &token, ProtocolVersion::V_2025_11_25).await;
    let modern = modern_client_at(&a.mcp(), &token).await;
    let mut sub = modern
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    let (beta, beta_events) =
        legacy_client_at(&a.mcp(), &token_beta, ProtocolVersion::V_2025_11_25).await;
    let (on_b, _) = legacy_client_at(&b.mcp(), &token, ProtocolVersion::V_2025_11_25).await;
    let (on_c, _) = legacy_client_at(&c.mcp(), &token, ProtocolVersion::V_2025_11_25).await;

    // a promotion through B reaches A's streams
    let started = Instant::now();
    let r = call(
        &on_b,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    events.wait_for(1).await;
    next_change(&mut sub).await;
    eprintln!("promote on B heard on A after {:?}", started.elapsed());
    assert!(tool_names(&legacy)
        .await
        .contains(&"petstore__add_pet".to_string()));

    // three more through C, one change each
    for name in ["get_pet_by_id", "find_pets_by_status", "get_inventory"] {
        let r = call(
            &on_c,
            "promote",
            json!({"vendor": "petstore", "name": name}),
        )
        .await;
        assert_eq!(r.is_error, Some(false), "{r:?}");
    }
    events.wait_for(4).await;
    for _ in 0..3 {
        next_change(&mut sub).await;
    }

    // a person's demotion with the CLI
    cli.demote_tool(&Actor::Person("ops".into()), alpha, "petstore", "add_pet")
        .await
        .unwrap();
    events.wait_for(5).await;
    next_change(&mut sub).await;

    // every instance's listening connection is cut: they listen again and catch up
    // from change_events, so a promotion made meanwhile is heard once
    let cut: Vec<bool> = graft::on_db!(cli.pool(), |e| sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query ILIKE 'LISTEN%'"
    )
    .fetch_all(e)
    .await)
    .unwrap();
    assert_eq!(cut.len(), 3, "one listener per instance");
    let r = call(
        &on_b,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    events.wait_for(6).await;
    next_change(&mut sub).await;

    // the cap drops to 1: whichever instance gets the sweep lock demotes the other three
    // tools at once, one list_changed
    cli.set_agent("alpha", None, Some(1), None).await.unwrap();
    events.wait_for(7).await;
    next_change(&mut sub).await;
    // three sweepers tick several more times: nothing more to do, nothing more heard
    no_more(&mut sub, 2500).await;
    assert_eq!(events.count(), 7, "one notice per change batch");
    assert_eq!(tool_names(&legacy).await.len(), 6 + 1, "the cap holds");
    assert_eq!(beta_events.count(), 0, "never another agent");
    let swept: i64 = graft::on_db!(cli.pool(), |e| {
        sqlx::query_scalar(
        "SELECT COUNT(*) FROM history WHERE agent_id = $1 AND action = 'demote' AND cause = 'cap'"
    )
    .bind(alpha)
    .fetch_one(e)
    .await
    })
    .unwrap();
    assert_eq!(swept, 3, "each entry demoted once");

    for client in [legacy, beta, on_b, on_c] {
        client.cancel().await.unwrap();
    }
    sub.cancel().await.unwrap();
    modern.cancel().await.unwrap();
    drop((a, b, c));
}

/// A legacy (2025-*) session lives on the instance that created it: another instance
/// answers 404 for its id, and the client initializes again there (the MCP spec's
/// recovery path, Streamable HTTP "Session Management"). A 2026-07-28 request, which
/// carries no session, is served by any instance.
#[tokio::test]
async fn a_legacy_session_belongs_to_its_instance_and_others_answer_404() {
    let dir = tempfile::tempdir().unwrap();
    let a = spawn_app_with_petstore(dir.path()).await;
    let b = spawn_app_in(dir.path()).await;
    let (_, token) = agent(&a, "alpha").await;
    let r = raw_initialize(&a, &token).await;
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    assert_eq!(raw_tools_list(&a, &token, &session).await.status(), 200);
    assert_eq!(
        raw_tools_list(&b, &token, &session).await.status(),
        404,
        "B never saw A's session"
    );
    // the recovery: initialize again, on B
    let r = raw_initialize(&b, &token).await;
    assert_eq!(r.status(), 200);
    let on_b = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    assert_eq!(raw_tools_list(&b, &token, &on_b).await.status(), 200);
    // 2026-07-28 clients go anywhere
    for app in [&a, &b] {
        let modern = modern_client(app, &token).await;
        assert_eq!(tool_names(&modern).await.len(), 6);
        modern.cancel().await.unwrap();
    }
    a.stop().await;
    b.stop().await;
}

/// `graft db copy` moves a SQLite installation up (issue 11.6): agents, tools, versions,
/// history, usage, calls, approvals, notes and a connection are copied into an empty
/// PostgreSQL database with their counts checked; served from there with the same data
/// directory (its secret key), Graft gives the same answers (find_tool, tools/list, tool
/// show) and a real call through the copied connection sends the same secret. A second
/// copy into the now full database is refused and changes nothing.
#[tokio::test]
async fn a_sqlite_installation_moves_up_with_db_copy() {
    if !on_postgres() {
        eprintln!("skipped: the copy's target is PostgreSQL (GRAFT_TEST_BACKEND=postgres)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let vendor = super::vendor::start(None).await;
    let mut s = settings(dir.path());
    s.database_url = sqlite_url(dir.path());
    let app = spawn_app_with(s.clone()).await;
    let g = &app.graft;
    let doc = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    g.import_openapi(
        "petstore",
        &doc,
        Some(&format!("{}/anything", vendor.url())),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.add_connection(
        "petstore",
        "main",
        "header",
        Some("api_key"),
        Some("s3cret-copied"),
    )
    .await
    .unwrap();
    let (alpha, token) = agent(&app, "alpha").await;
    g.add_note(
        &Actor::Person("ops".into()),
        "petstore",
        "add_pet",
        "needs a name",
    )
    .await
    .unwrap();
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for name in ["add_pet", "find_pets_by_status"] {
        let r = call(
            &client,
            "promote",
            json!({"vendor": "petstore", "name": name}),
        )
        .await;
        assert_eq!(r.is_error, Some(false), "{r:?}");
    }
    let r = call(
        &client,
        "petstore__find_pets_by_status",
        json!({"status": "sold"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // the first write asks a person: a pending approval
    let r = call(
        &client,
        "petstore__add_pet",
        json!({"name": "rex", "photoUrls": []}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("approval_required"), "{r:?}");
    let before = (
        find_text(&client).await,
        tool_names(&client).await,
        format!("{:?}", g.tool_detail("petstore", "add_pet").await.unwrap()),
    );
    client.cancel().await.unwrap();
    app.stop().await;

    let from = graft::db::connect(&s.database_url).await.unwrap();
    let pg = tempfile::tempdir().unwrap();
    let to = graft::db::connect(&db_url(pg.path())).await.unwrap();
    let copied = graft::db::copy::copy_sqlite_to_postgres(&from, &to)
        .await
        .unwrap();
    let rows = |t: &str| copied.iter().find(|c| c.table == t).unwrap().rows;
    assert_eq!(copied.len(), graft::db::copy::TABLES.len());
    assert_eq!(
        (rows("agents"), rows("connections"), rows("tools")),
        (1, 1, 19)
    );
    assert_eq!(
        (rows("history"), rows("approvals"), rows("tool_calls")),
        (2, 1, 2)
    );
    assert_eq!((rows("tool_notes"), rows("tool_usage")), (1, 1));
    let again = graft::db::copy::copy_sqlite_to_postgres(&from, &to).await;
    assert!(
        again
            .as_ref()
            .is_err_and(|e| e.to_string().contains("not empty")),
        "{again:?}"
    );
    from.close().await;
    to.close().await;

    // served from PostgreSQL, same data directory (the same secret key)
    s.database_url = db_url(pg.path());
    let app = spawn_app_with(s).await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let after = (
        find_text(&client).await,
        tool_names(&client).await,
        format!(
            "{:?}",
            app.graft.tool_detail("petstore", "add_pet").await.unwrap()
        ),
    );
    assert_eq!(before, after);
    let r = call(
        &client,
        "petstore__find_pets_by_status",
        json!({"status": "sold"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        vendor.last().headers.get("api_key").unwrap(),
        "s3cret-copied",
        "the sealed secret opens with the same key"
    );
    // new rows continue after the copied ids
    let (beta, _) = agent(&app, "beta").await;
    assert!(beta > alpha);
    client.cancel().await.unwrap();
    app.stop().await;
}

/// Text PostgreSQL cannot store (a NUL character; SQLite stores it) gets a clear error on
/// either backend, never an internal error: MCP calls answer a tool error that is not
/// `internal_error`, a note is refused as invalid, and a sign-in with such a name is a
/// wrong name.
#[tokio::test]
async fn text_with_a_nul_character_gets_a_clear_error_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let (c, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for args in [
        json!({"vendor": "pet\u{0}store", "name": "add_pet"}),
        json!({"vendor": "petstore", "name": "add_pet\u{0}"}),
    ] {
        let r = call(&c, "promote", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args}: {r:?}");
        let code = code(&r).unwrap_or_default();
        assert!(
            ["tool_not_found", "vendor_not_found", "invalid_input"].contains(&code.as_str()),
            "{args}: {code}: {r:?}"
        );
    }
    let r = call(&c, "find_tool", json!({"query": "add a pet\u{0}"})).await;
    assert_ne!(code(&r).as_deref(), Some("internal_error"), "{r:?}");
    let r = app
        .graft
        .add_note(
            &Actor::Person("ops".into()),
            "petstore",
            "add_pet",
            "a\u{0}b",
        )
        .await;
    assert!(
        !matches!(r, Err(graft::service::ServiceError::Internal(_))),
        "{r:?}"
    );
    assert!(app
        .graft
        .sign_in("ad\u{0}min", "whatever")
        .await
        .unwrap()
        .is_none());
    c.cancel().await.unwrap();
    app.stop().await;
}
