//! A team's care of its agents and vendors, the parts of issue 28 the other modules leave
//! out: disabling or removing an agent ends the MCP sessions it has open (not only new
//! ones), in the console and from another process (28.1); a vendor removed and
//! approvals granted by a person in the console are audited under that person's name,
//! with no secret (28.8); a tool promoted in the console
//! whose vendor has no connection says so on the agent page (28.12, from 28.13's list).
//!
//! Open sessions are counted where the server counts them: its change hub (one stream
//! per 2025-era session that said it was initialized) and its `graft_mcp_sessions` gauge
//! (rmcp's open sessions), read by a loopback scrape of `/metrics`.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::db::AuditQuery;
use graft::domain::audit::AuditAction;
use graft::service::{Actor, SystemClock};
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A vendor whose document declares no security scheme: its calls need no credential.
const OPEN_API: &str = r#"
openapi: 3.0.3
info: {title: Memo, version: "1"}
paths:
  /memos:
    get: {operationId: listMemos, responses: {"200": {description: ok}}}
"#;

/// A connection's secret; it must never reach the audit log.
const SECRET: &str = "acme-secret-58219904";

/// How long a change may take to reach sessions (another process polls every second).
const PATIENCE: Duration = Duration::from_secs(10);

/// The session id a 2025-era `initialize` answer carries.
fn session_id(r: &reqwest::Response) -> String {
    r.headers()["mcp-session-id"].to_str().unwrap().to_string()
}

/// Says `notifications/initialized` in session `sid`, as a client does after
/// `initialize`: the server then gives the session its change stream.
async fn initialized(app: &TestApp, token: &str, sid: &str) {
    let r = reqwest::Client::new()
        .post(app.mcp_url())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_success(),
        "notifications/initialized: {}",
        r.status()
    );
}

/// Opens a 2025-era session for `token` (initialize, then initialized); returns its id.
async fn open_session(app: &TestApp, token: &str) -> String {
    let r = raw_initialize(app, token).await;
    assert_eq!(r.status(), 200);
    let sid = session_id(&r);
    let _ = r.text().await;
    initialized(app, token, &sid).await;
    sid
}

/// `tools/list` in session `sid`: the status and the body.
async fn listed(app: &TestApp, token: &str, sid: &str) -> (u16, String) {
    let r = raw_tools_list(app, token, sid).await;
    (r.status().as_u16(), r.text().await.unwrap())
}

/// Polls `initialize` with `token` until it is accepted (refused meanwhile: 401);
/// returns the new session's id.
async fn initialize_when_accepted(app: &TestApp, token: &str, what: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let r = raw_initialize(app, token).await;
        if r.status() == 200 {
            let sid = session_id(&r);
            let _ = r.text().await;
            return sid;
        }
        assert_eq!(r.status(), 401, "{what}");
        assert!(
            Instant::now() < deadline,
            "{what}: the token is still refused"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// This server's open MCP sessions, from its `graft_mcp_sessions` gauge (a loopback
/// scrape needs no token).
async fn mcp_sessions(app: &TestApp) -> f64 {
    let text = reqwest::get(format!("http://{}/metrics", app.addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("graft_mcp_sessions "))
        .and_then(|v| v.split(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no graft_mcp_sessions gauge in\n{text}"))
}

/// Waits until this server holds `n` open MCP sessions.
async fn wait_for_sessions(app: &TestApp, n: usize, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let open = mcp_sessions(app).await;
        if open == n as f64 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {open} MCP sessions open, expected {n}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until this server's change hub holds `n` open streams.
async fn wait_for_streams(app: &TestApp, n: usize, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let open = app.graft.hub().channels();
        if open == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {open} change streams open, expected {n}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Issue 28.1: disabling an agent in the console ends the session it has open, not only
/// new ones: the session's change stream ends at once and the session itself is closed
/// (the server holds one session fewer), and every request is refused (401); its
/// working set and history stay. Enabling it makes the same token work again, in a new
/// session that lists the kept working set, while the old session stays ended (404), so
/// a client that was cut off starts over. Another agent's session goes on throughout.
/// Only a rotation was asserted to end open sessions (security review 32.9).
#[tokio::test]
async fn disabling_an_agent_ends_its_open_session_and_enabling_gives_its_token_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let g = &app.graft;
    let (id, token) = agent(&app, "retiring").await;
    let (_, other) = agent(&app, "staying").await;
    g.promote_tool(
        &Actor::Person("ops".into()),
        id,
        "petstore",
        "find_pets_by_status",
    )
    .await
    .unwrap();
    let sid = open_session(&app, &token).await;
    let other_sid = open_session(&app, &other).await;
    wait_for_streams(&app, 2, "both sessions' streams").await;
    wait_for_sessions(&app, 2, "both sessions").await;
    let (status, body) = listed(&app, &token, &sid).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("petstore__find_pets_by_status"), "{body}");

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .call(
            "set_agent_disabled",
            &[
                ("agent", "retiring"),
                ("disabled", "yes"),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);

    // its open session ends: its stream at once, the session within a moment
    wait_for_streams(&app, 1, "the disabled agent's stream ended").await;
    wait_for_sessions(&app, 1, "the disabled agent's session closed").await;
    // and everything it sends is refused, in the old session or a new one
    assert_eq!(listed(&app, &token, &sid).await.0, 401);
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);
    // the other agent's session goes on
    assert_eq!(listed(&app, &other, &other_sid).await.0, 200);
    // kept: the working set and its history
    assert_eq!(g.working_set(id).await.unwrap().len(), 1);
    assert_eq!(g.history(id, 10, 0).await.unwrap().len(), 1);

    let r = b
        .call(
            "set_agent_disabled",
            &[("agent", "retiring"), ("disabled", "no")],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    // the same token works again, in a new session, with the same working set
    let again = open_session(&app, &token).await;
    let (status, body) = listed(&app, &token, &again).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("petstore__find_pets_by_status"), "{body}");
    // the session it had when disabled stays ended
    assert_eq!(
        listed(&app, &token, &sid).await.0,
        404,
        "the old session was closed, not only refused"
    );
    wait_for_streams(&app, 2, "the new session's stream").await;
    wait_for_sessions(&app, 2, "the other agent's and the new session").await;
    app.stop().await;
}

/// Issue 28.1: removing an agent in the console ends every session it has open (two
/// here), not only new ones: their change streams end and the server closes the
/// sessions; its token is refused in them and for new ones; its working set is demoted.
/// Another agent's session goes on.
#[tokio::test]
async fn removing_an_agent_ends_every_session_it_has_open() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let g = &app.graft;
    let (id, token) = agent(&app, "retired").await;
    let (_, other) = agent(&app, "staying").await;
    g.promote_tool(
        &Actor::Person("ops".into()),
        id,
        "petstore",
        "get_pet_by_id",
    )
    .await
    .unwrap();
    let first = open_session(&app, &token).await;
    let second = open_session(&app, &token).await;
    let other_sid = open_session(&app, &other).await;
    wait_for_streams(&app, 3, "three sessions' streams").await;
    wait_for_sessions(&app, 3, "three sessions").await;

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .call("remove_agent", &[("agent", "retired"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);

    wait_for_streams(&app, 1, "both streams of the removed agent ended").await;
    wait_for_sessions(&app, 1, "both sessions of the removed agent closed").await;
    for sid in [&first, &second] {
        assert_eq!(listed(&app, &token, sid).await.0, 401);
    }
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);
    assert_eq!(listed(&app, &other, &other_sid).await.0, 200);
    assert!(g.working_set(id).await.unwrap().is_empty());
    app.stop().await;
}

/// Issue 28.1 across processes: a person disables, enables and removes an agent from
/// the command line (another process on the database: `graft agent disable|enable|
/// remove`) while the agent's session is open on the running server. The server hears
/// it through its change events and, within its poll, ends the session (stream and
/// session), refuses the token, takes it back once enabled (the old session stays
/// ended, the working set is kept), and ends the new session at the removal. A witness
/// agent's client, connected throughout, is untouched.
#[tokio::test]
async fn an_agent_disabled_or_removed_by_another_process_loses_its_sessions_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "bot").await;
    let (witness_id, witness_token) = agent(&app, "witness").await;
    let (witness, heard) = legacy_client(&app, &witness_token, ProtocolVersion::V_2025_11_25).await;
    wait_for_streams(&app, 1, "the witness's stream").await;
    // the command line: another process on the database (as `graft agent disable|
    // enable|remove` runs)
    let elsewhere = open_graft(&db_url(dir.path()), Arc::new(SystemClock)).await;
    let rui = Actor::Person("rui".into());
    elsewhere
        .promote_tool(&rui, id, "petstore", "find_pets_by_status")
        .await
        .unwrap();
    elsewhere
        .promote_tool(&rui, witness_id, "petstore", "get_pet_by_id")
        .await
        .unwrap();
    // the server hears the other process: the witness's client is told of its change
    heard.wait_for(1).await;
    let sid = open_session(&app, &token).await;
    wait_for_streams(&app, 2, "the witness's and the bot's streams").await;
    wait_for_sessions(&app, 2, "the witness's and the bot's sessions").await;

    elsewhere
        .set_agent_disabled(&rui, "bot", true)
        .await
        .unwrap();
    wait_for_streams(&app, 1, "the disabled bot's stream ended here").await;
    wait_for_sessions(&app, 1, "the disabled bot's session closed here").await;
    assert_eq!(listed(&app, &token, &sid).await.0, 401);

    elsewhere
        .set_agent_disabled(&rui, "bot", false)
        .await
        .unwrap();
    let again = initialize_when_accepted(&app, &token, "enabled by the CLI").await;
    initialized(&app, &token, &again).await;
    let (status, body) = listed(&app, &token, &again).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("petstore__find_pets_by_status"),
        "the working set was kept: {body}"
    );
    assert_eq!(listed(&app, &token, &sid).await.0, 404, "the old one ended");
    wait_for_streams(&app, 2, "the bot's new stream").await;

    elsewhere.remove_agent(&rui, "bot").await.unwrap();
    wait_for_streams(&app, 1, "the removed bot's stream ended here").await;
    wait_for_sessions(&app, 1, "the removed bot's session closed here").await;
    assert_eq!(listed(&app, &token, &again).await.0, 401);
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);

    assert!(tool_names(&witness)
        .await
        .contains(&"petstore__get_pet_by_id".to_string()));
    witness.cancel().await.unwrap();
    app.stop().await;
}

/// Issue 28.8 (and 28.9's "no audit of removals"): approvals granted by a person in the
/// console — one agent's with Approve, then every other agent waiting with "approve all
/// pending for this tool" — and a vendor removed in the console are each recorded with
/// the right action, under that person's name, naming what was decided (the agent and
/// tool, the version; the vendor, with what its removal demoted and revoked). The grant
/// really lets the agent's call through with the connection's secret, and nothing in
/// the audit log (nor its CSV) holds that secret, an agent's token or the password.
#[tokio::test]
async fn approvals_granted_and_a_vendor_removed_in_the_console_are_audited_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi(
        "acme",
        ACME_ITEMS,
        Some(&format!("{}/anything", v.url())),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.add_connection_choosing(
        &Actor::Person("ana".into()),
        "acme",
        "ops key",
        "bearer",
        None,
        Some(SECRET),
        None,
    )
    .await
    .unwrap();
    let version = g
        .tool("acme", "create_item")
        .await
        .unwrap()
        .version
        .to_string();
    let (bot_id, bot_token) = agent(&app, "bot").await;
    let (kim_id, kim_token) = agent(&app, "kim").await;
    let bot = modern_client(&app, &bot_token).await;
    let kim = modern_client(&app, &kim_token).await;
    let write = json!({"vendor": "acme", "name": "create_item", "input": {}});
    for c in [&bot, &kim] {
        let r = call(c, "run_tool", write.clone()).await;
        assert_eq!(
            code(&r).as_deref(),
            Some("approval_required"),
            "{}",
            text(&r)
        );
    }
    let r = call(
        &bot,
        "promote",
        json!({"vendor": "acme", "name": "list_items"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    // Approve on one agent's row
    let r = b
        .call(
            "decide",
            &[
                ("agent", "bot"),
                ("tool", "acme__create_item"),
                ("decision", "grant"),
                ("version", version.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let r = call(&bot, "run_tool", write.clone()).await;
    assert_ne!(r.is_error, Some(true), "granted: {}", text(&r));
    let sent = v.last();
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/anything/items")
    );
    assert_eq!(
        sent.headers["authorization"].to_str().unwrap(),
        format!("Bearer {SECRET}")
    );
    // approve all pending for this tool: kim is the one still waiting
    let r = b
        .call(
            "approve_pending",
            &[("tool", "acme__create_item"), ("version", version.as_str())],
        )
        .await;
    assert_eq!(r.status(), 200);
    let granted: Vec<String> = r.json().await.unwrap();
    assert_eq!(granted, ["kim"]);

    // remove the vendor: its one promoted tool is demoted, its one connection revoked
    assert_eq!(g.working_set(bot_id).await.unwrap().len(), 1);
    assert!(g.working_set(kim_id).await.unwrap().is_empty());
    let r = b
        .call("remove_vendor", &[("slug", "acme"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    assert!(g.working_set(bot_id).await.unwrap().is_empty());

    let of = |action: AuditAction| AuditQuery {
        action: Some(action),
        limit: 100,
        ..Default::default()
    };
    let grants = g
        .audit_events(&of(AuditAction::ApprovalGrant))
        .await
        .unwrap();
    let got: Vec<(String, String, Option<String>)> = grants
        .iter()
        .rev()
        .map(|e| (e.person.clone(), e.target.clone(), e.detail.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "ops".to_string(),
                "bot → acme__create_item".to_string(),
                Some(format!("version {version}")),
            ),
            (
                "ops".to_string(),
                "kim → acme__create_item".to_string(),
                Some(format!("version {version}, every agent waiting")),
            ),
        ],
        "{grants:?}"
    );
    let removals = g
        .audit_events(&of(AuditAction::VendorRemove))
        .await
        .unwrap();
    assert_eq!(removals.len(), 1, "{removals:?}");
    assert_eq!(
        (
            removals[0].person.as_str(),
            removals[0].target.as_str(),
            removals[0].detail.as_deref(),
        ),
        ("ops", "acme", Some("1 tool demoted, 1 connection revoked")),
        "{removals:?}"
    );

    // the Audit page's CSV shows both, under the person
    let csv = b
        .get("/audit.csv?action=vendor.remove")
        .await
        .text()
        .await
        .unwrap();
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(
        lines[1].ends_with(",ops,vendor.remove,acme,\"1 tool demoted, 1 connection revoked\""),
        "{csv}"
    );
    let csv = b
        .get("/audit.csv?action=approval.grant")
        .await
        .text()
        .await
        .unwrap();
    for agent in ["bot", "kim"] {
        assert!(
            csv.contains(&format!(",ops,approval.grant,{agent} → acme__create_item,")),
            "{csv}"
        );
    }

    // no secret anywhere in what was recorded
    let all = g
        .audit_events(&AuditQuery {
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap();
    let all = format!("{all:?}");
    let csv_all = b.get("/audit.csv").await.text().await.unwrap();
    assert!(csv_all.contains(",ops,vendor.remove,acme,"), "{csv_all}");
    for secret in [SECRET, PASSWORD, bot_token.as_str(), kim_token.as_str()] {
        assert!(!all.contains(secret), "a secret was recorded: {all}");
        assert!(!csv_all.contains(secret), "a secret in the CSV: {csv_all}");
    }
    bot.cancel().await.unwrap();
    kim.cancel().await.unwrap();
    app.stop().await;
}

/// The connection warning of working-set entry `name` in the agent page's data.
fn warning_of(d: &Value, name: &str) -> Option<String> {
    let entries = d["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no entries: {d}"));
    let e = entries
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the working set: {d}"));
    e["connection_warning"].as_str().map(str::to_string)
}

/// Issue 28.12 (28.13: "promoting a tool with no connection gives no warning"): a
/// person promotes, from the console, a tool whose vendor's document needs a credential
/// while the vendor has no connection. The agent page then says, by that tool, that its
/// calls go without a credential and the vendor will likely refuse them, with a link to
/// the vendor's connections; a tool whose document needs no credential carries no
/// warning; once a connection is added in the console the warning is gone.
#[tokio::test]
async fn a_tool_promoted_in_the_console_without_a_connection_warns_on_the_agent_page() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi(
        "acme",
        ACME_ITEMS,
        Some("http://127.0.0.1:9/anything"),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.import_openapi("memo", OPEN_API, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    agent(&app, "bot").await;
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    for tool in ["acme__list_items", "memo__list_memos"] {
        let r = b.call("promote", &[("agent", "bot"), ("tool", tool)]).await;
        assert_eq!(r.status(), 200, "{tool}: {:?}", r.text().await);
    }

    let said = "acme has no connection: its calls go without a credential, and the vendor will likely refuse them.";
    let d: Value = b
        .call("agent", &[("name", "bot"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        warning_of(&d, "list_items").as_deref(),
        Some(format!("{said} Add one on the vendor's page.").as_str()),
        "{d}"
    );
    assert_eq!(warning_of(&d, "list_memos"), None, "{d}");
    // the page shows it by the one tool (its data for hydration may repeat the words,
    // so the marked-up warning is what is counted)
    let page = b.get("/agents/bot").await.text().await.unwrap();
    assert!(page.contains(said), "{page}");
    assert_eq!(
        page.matches(r#"class="warning connection-warning""#)
            .count(),
        1,
        "{page}"
    );
    assert!(
        page.contains(r#"href="/vendors/acme#connections""#),
        "{page}"
    );

    // a connection added: the warning is gone
    let r = b
        .call(
            "add_connection",
            &[
                ("vendor", "acme"),
                ("label", "ops key"),
                ("kind", "bearer"),
                ("name", ""),
                ("secret", SECRET),
            ],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let d: Value = b
        .call("agent", &[("name", "bot"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(warning_of(&d, "list_items"), None, "{d}");
    let page = b.get("/agents/bot").await.text().await.unwrap();
    assert!(!page.contains("has no connection"), "{page}");
    app.stop().await;
}
