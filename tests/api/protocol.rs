//! The MCP protocol end to end (SPEC §3): both revisions on one endpoint with rmcp's
//! client, list_changed and listen streams, bearer tokens, sessions, CORS, JSON-RPC errors.

use crate::helpers::*;
use rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rmcp::service::ServiceError;
use serde_json::{json, Value};
use std::time::Duration;

const META: [&str; 6] = [
    "find_tool",
    "promote",
    "demote",
    "run_tool",
    "acquire",
    "publish",
];

async fn legacy_flow(version: ProtocolVersion) {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (_, token_a) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let (a, a_events) = legacy_client(&app, &token_a, version.clone()).await;
    let (b, b_events) = legacy_client(&app, &token_b, version.clone()).await;
    assert_eq!(a.peer_info().unwrap().protocol_version, version);
    let info = a.peer_info().unwrap();
    assert_eq!(
        info.capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed),
        Some(true)
    );
    assert!(info
        .instructions
        .as_deref()
        .unwrap_or("")
        .contains("find_tool"));
    assert_eq!(tool_names(&a).await, META);

    let found = call(&a, "find_tool", json!({"query": "pets status"})).await;
    assert_eq!(found.is_error, Some(false));
    let hits = found.structured_content.clone().unwrap()["hits"].clone();
    assert_eq!(hits[0]["vendor"], "petstore");
    assert_eq!(hits[0]["name"], "find_pets_by_status");
    assert_eq!(hits[0]["promoted"], false);
    assert_eq!(hits[0]["readOnlyHint"], true);

    let promoted = call(
        &a,
        "promote",
        json!({"vendor": "petstore", "name": "find_pets_by_status"}),
    )
    .await;
    assert_eq!(
        promoted.structured_content.clone().map(without_message),
        Some(set_answer(&app, &["find_pets_by_status"]).await)
    );
    a_events.wait_for(1).await;
    let list = a.list_tools(None).await.unwrap();
    let names: Vec<_> = list.tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "find_tool",
            "promote",
            "demote",
            "run_tool",
            "acquire",
            "publish",
            "petstore__find_pets_by_status"
        ]
    );
    let tool = list.tools.last().unwrap();
    let ann = tool.annotations.as_ref().unwrap();
    assert_eq!(
        (ann.read_only_hint, ann.destructive_hint),
        (Some(true), Some(false))
    );
    assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
    assert!(tool.description.as_deref().unwrap().contains("status"));

    let again = call(&a, "find_tool", json!({"query": "pets status"})).await;
    assert_eq!(
        again.structured_content.unwrap()["hits"][0]["promoted"],
        true
    );

    let demoted = call(
        &a,
        "demote",
        json!({"vendor": "petstore", "name": "find_pets_by_status"}),
    )
    .await;
    assert_eq!(
        demoted.structured_content.clone().map(without_message),
        Some(set_answer(&app, &[]).await)
    );
    a_events.wait_for(2).await;
    assert_eq!(tool_names(&a).await, META);

    // B saw nothing of A's changes
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(b_events.count(), 0);
    assert_eq!(tool_names(&b).await, META);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn legacy_2025_11_25_find_promote_demote_with_list_changed() {
    legacy_flow(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn legacy_2025_06_18_find_promote_demote_with_list_changed() {
    legacy_flow(ProtocolVersion::V_2025_06_18).await;
}

#[tokio::test]
async fn modern_2026_07_28_find_promote_demote_with_listen() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (_, token_a) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let a = modern_client(&app, &token_a).await;
    let b = modern_client(&app, &token_b).await;
    assert_eq!(
        a.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2026_07_28
    );
    let mut a_sub = a
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(a_sub.acknowledged().tools_list_changed, Some(true));
    let mut b_sub = b
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();

    let list = a.list_tools(None).await.unwrap();
    assert_eq!(list.ttl_ms, Some(0));
    assert!(matches!(
        list.cache_scope,
        Some(rmcp::model::CacheScope::Private)
    ));
    assert_eq!(list.tools.len(), 6);

    let r = call(
        &a,
        "promote",
        json!({"vendor": "petstore", "name": "get_pet_by_id"}),
    )
    .await;
    assert_eq!(
        r.structured_content.clone().map(without_message),
        Some(set_answer(&app, &["get_pet_by_id"]).await)
    );
    let n = tokio::time::timeout(Duration::from_secs(10), a_sub.next())
        .await
        .expect("list_changed in time")
        .unwrap();
    assert!(
        matches!(
            n,
            Some(rmcp::model::ServerNotification::ToolListChangedNotification(_))
        ),
        "{n:?}"
    );
    let names = tool_names(&a).await;
    assert_eq!(
        names.last().map(String::as_str),
        Some("petstore__get_pet_by_id")
    );

    call(
        &a,
        "demote",
        json!({"vendor": "petstore", "name": "get_pet_by_id"}),
    )
    .await;
    let n = tokio::time::timeout(Duration::from_secs(10), a_sub.next())
        .await
        .expect("second list_changed")
        .unwrap();
    assert!(matches!(
        n,
        Some(rmcp::model::ServerNotification::ToolListChangedNotification(_))
    ));
    assert_eq!(tool_names(&a).await, META);

    // B's stream stays silent and B's list never had A's tool
    assert!(
        tokio::time::timeout(Duration::from_millis(500), b_sub.next())
            .await
            .is_err(),
        "B must not be notified"
    );
    assert_eq!(tool_names(&b).await, META);
    a_sub.cancel().await.unwrap();
    b_sub.cancel().await.unwrap();
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn a_change_reaches_every_channel_of_the_agent_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    let (legacy, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let modern = modern_client(&app, &token).await;
    let mut sub = modern
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    // a change made outside MCP (a person) reaches both channels
    app.graft
        .promote_tool(
            &graft::service::Actor::Person("ops".into()),
            id,
            "petstore",
            "add_pet",
        )
        .await
        .unwrap();
    events.wait_for(1).await;
    let n = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert!(n.is_some());
    sub.cancel().await.unwrap();
    legacy.cancel().await.unwrap();
    modern.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn changes_made_by_another_process_reach_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let (legacy, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let (other_client, other_events) =
        legacy_client(&app, &token_b, ProtocolVersion::V_2025_11_25).await;
    // another process on the same database: the CLI, or a second server
    let url = db_url(dir.path());
    let cli = open_graft(&url, std::sync::Arc::new(graft::service::SystemClock)).await;
    cli.promote_tool(
        &graft::service::Actor::Person("ops".into()),
        id,
        "petstore",
        "add_pet",
    )
    .await
    .unwrap();
    events.wait_for(1).await;
    assert!(tool_names(&legacy)
        .await
        .contains(&"petstore__add_pet".to_string()));
    let r = cli
        .sweep_once(
            chrono::Utc::now().timestamp_millis() + 30 * 86_400_000,
            false,
        )
        .await
        .unwrap();
    assert_eq!(r.demotions(), 1);
    events.wait_for(2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(events.count(), 2, "one notice per change batch");
    assert_eq!(other_events.count(), 0, "never another agent");
    legacy.cancel().await.unwrap();
    other_client.cancel().await.unwrap();
    app.stop().await;
}

/// A token rotated by another process stops working here within a poll, also after old
/// change events were forgotten: the newest event is kept, so ids never start over below
/// this server's cursor (they did: an emptied table gave id 1 again, never seen).
#[tokio::test]
async fn a_token_rotated_by_another_process_stops_working_after_old_events_are_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    assert_eq!(raw_initialize(&app, &token).await.status(), 200);
    // the other process's events are two hours old
    let clock = std::sync::Arc::new(FakeClock::default());
    clock.set(chrono::Utc::now().timestamp_millis() - 2 * 3_600_000);
    let cli = open_graft(&db_url(dir.path()), clock).await;
    let person = graft::service::Actor::Person("ops".into());
    cli.promote_tool(&person, id, "petstore", "add_pet")
        .await
        .unwrap();
    let before = cli.change_cursor().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await; // the server's cursor passes it
    graft::db::delete_change_events_before(cli.pool(), chrono::Utc::now().timestamp_millis())
        .await
        .unwrap();
    cli.rotate_token(id).await.unwrap();
    assert!(cli.change_cursor().await.unwrap() > before, "ids go on");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let status = raw_initialize(&app, &token).await.status();
        if status == 401 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the old token still works here: {status}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.stop().await;
}

#[tokio::test]
async fn meta_tool_errors_are_tool_results() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    let (a, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;

    let r = call(&a, "promote", json!({"vendor": "petstore", "name": "nope"})).await;
    assert_eq!(
        (r.is_error, code(&r).as_deref()),
        (Some(true), Some("tool_not_found"))
    );
    let r = call(
        &a,
        "demote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    assert_eq!(
        (r.is_error, code(&r).as_deref()),
        (Some(true), Some("not_promoted"))
    );
    let r = call(&a, "find_tool", json!({"query": "  "})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    let r = call(&a, "find_tool", json!({"query": "pet", "limit": 51})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    let r = call(&a, "promote", json!({"vendor": "petstore"})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));

    let r = call(&a, "find_tool", json!({"query": "weather forecast"})).await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["hits"], json!([]));
    assert!(s["message"].as_str().unwrap().contains("acquire"));
    assert_eq!(s["vendors"], json!(["petstore"]));

    // limit and ranking
    let r = call(&a, "find_tool", json!({"query": "pet", "limit": 2})).await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["hits"].as_array().unwrap().len(), 2);
    assert!(s["total"].as_u64().unwrap() > 2);

    // a second promotion is a no-op that answers the size and writes no history
    call(
        &a,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    let r = call(
        &a,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    assert_eq!(
        r.structured_content.clone().map(without_message),
        Some(set_answer(&app, &["add_pet"]).await)
    );
    assert_eq!(
        graft::db::count_history(app.graft.pool(), id)
            .await
            .unwrap(),
        1
    );
    let h = app.graft.history(id, 10, 0).await.unwrap();
    assert_eq!(
        (
            h[0].action.as_str(),
            h[0].cause.as_str(),
            h[0].actor.clone()
        ),
        ("promote", "agent", format!("agent:{id}"))
    );
    let ws = app.graft.working_set(id).await.unwrap();
    assert_eq!(ws[0].promoted_by.as_str(), "agent");

    // unknown tool: JSON-RPC -32602; a known tool outside the working set: not_promoted
    let err = a
        .call_tool(rmcp::model::CallToolRequestParams::new("nope__x"))
        .await
        .expect_err("unknown tool is a protocol error");
    match err {
        ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602);
            assert!(e.message.contains("Unknown tool: nope__x"));
        }
        other => panic!("unexpected {other:?}"),
    }
    let r = call(&a, "petstore__get_pet_by_id", json!({"petId": 1})).await;
    assert_eq!(code(&r).as_deref(), Some("not_promoted"));

    // the names agents copy from tools/list: <vendor>__<name> in `name`, vendor absent
    let r = call(&a, "promote", json!({"name": "petstore__get_pet_by_id"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(
        r.structured_content.clone().map(without_message),
        Some(set_answer(&app, &["add_pet", "get_pet_by_id"]).await)
    );
    let r = call(
        &a,
        "promote",
        json!({"vendor": "petstore", "name": "petstore__get_pet_by_id"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "the same vendor twice is fine");
    for bad in [
        json!({"vendor": "github", "name": "petstore__get_pet_by_id"}),
        json!({"name": "get_pet_by_id"}),
    ] {
        let r = call(&a, "promote", bad.clone()).await;
        assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{bad}");
    }
    let r = call(
        &a,
        "run_tool",
        json!({"name": "petstore__get_pet_by_id", "input": {"petId": 1}}),
    )
    .await;
    // resolved and sent: the test vendor's address does not answer
    assert_eq!(code(&r).as_deref(), Some("vendor_unreachable"), "{r:?}");
    let r = call(
        &a,
        "publish",
        json!({"name": "petstore__nope", "description": "x"}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("tool_not_found"), "{r:?}");
    let r = call(&a, "demote", json!({"name": "petstore__get_pet_by_id"})).await;
    assert_eq!(
        r.structured_content.clone().map(without_message),
        Some(set_answer(&app, &["add_pet"]).await)
    );
    a.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn bearer_tokens_are_required_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let http = reqwest::Client::new();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let post = |auth: Option<String>| {
        let mut r = http
            .post(app.mcp_url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.send()
    };
    let r = post(None).await.unwrap();
    assert_eq!(r.status(), 401);
    // the challenge names the protected-resource metadata, where OAuth clients start
    // (RFC 9728 §5.1, issue 26)
    let prm = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        app.graft.oauth_issuer()
    );
    assert_eq!(
        r.headers()["www-authenticate"],
        format!(r#"Bearer realm="graft", resource_metadata="{prm}""#).as_str()
    );
    for bad in [
        "Bearer wrong".to_string(),
        format!("Bearer Bearer {token}"),
        format!("Basic {token}"),
        token.clone(),
    ] {
        let r = post(Some(bad.clone())).await.unwrap();
        assert_eq!(r.status(), 401, "{bad}");
        assert_eq!(
            r.headers()["www-authenticate"],
            format!(r#"Bearer realm="graft", resource_metadata="{prm}", error="invalid_token""#)
                .as_str()
        );
    }
    // a token in the query string is never accepted
    let r = http
        .post(format!("{}?access_token={token}", app.mcp_url()))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = post(Some(format!("Bearer {token}"))).await.unwrap();
    assert_eq!(r.status(), 200);
    // only hashes are stored
    let stored: Vec<String> = graft::on_db!(app.graft.pool(), |e| sqlx::query_scalar(
        "SELECT token_hash FROM agents"
    )
    .fetch_all(e)
    .await)
    .unwrap();
    assert!(!stored[0].contains(&token[6..]));
    // HEAD (Hermes probes it) does not break anything
    let r = http.head(app.mcp_url()).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert!(r.headers().contains_key("allow"));
    // health
    let r: Value = http
        .get(format!("http://{}/healthz", app.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["status"], "ok");
    app.stop().await;
}

/// Posts `body` to /mcp as a client of each era would: inside `session` (2025-11-25),
/// or stateless with the 2026-07-28 protocol version header when `None`.
async fn raw_post(
    app: &TestApp,
    token: &str,
    session: Option<&str>,
    body: &'static str,
) -> reqwest::Response {
    let mut r = reqwest::Client::new()
        .post(app.mcp_url())
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    r = match session {
        Some(sid) => r
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25"),
        None => {
            let method = serde_json::from_str::<Value>(body)
                .ok()
                .and_then(|v| v["method"].as_str().map(str::to_string));
            let r = r.header("mcp-protocol-version", "2026-07-28");
            match method {
                Some(m) => r.header("mcp-method", m),
                None => r,
            }
        }
    };
    r.body(body).send().await.unwrap()
}

#[tokio::test]
async fn bodies_that_are_not_one_message_get_json_rpc_errors_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let r = raw_initialize(&app, &token).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    drop(r);
    for session in [Some(sid.as_str()), None] {
        for (body, code) in [
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#, -32700),
            ("not json", -32700),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]"#,
                -32600,
            ),
            ("42", -32600),
            (r#"{"hello":"world"}"#, -32600),
        ] {
            let r = raw_post(&app, &token, session, body).await;
            assert_eq!(r.status(), 400, "{session:?} {body}");
            let v: Value = r.json().await.unwrap();
            assert_eq!(v["jsonrpc"], "2.0");
            assert_eq!(v["id"], Value::Null);
            assert_eq!(v["error"]["code"], code, "{session:?} {body}: {v}");
        }
        // the session and the endpoint go on working
        let list = match session {
            Some(_) => r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            None => {
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}"#
            }
        };
        let r = raw_post(&app, &token, session, list).await;
        assert_eq!(r.status(), 200, "{session:?}");
    }
    // no token: still 401 first
    let r = reqwest::Client::new()
        .post(app.mcp_url())
        .header("content-type", "application/json")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    app.stop().await;
}

/// Issue 25.12 and 25.13: a tools/call with params no tool call can have is -32602
/// "invalid params" saying what is wrong (not -32601 "method not found"), in both eras;
/// ending a session that is unknown or already ended is 404.
#[tokio::test]
async fn malformed_tool_calls_are_invalid_params_and_ended_sessions_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let r = raw_initialize(&app, &token).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    drop(r);
    let initialized = raw_post(
        &app,
        &token,
        Some(&sid),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert!(initialized.status().is_success());
    for session in [Some(sid.as_str()), None] {
        for (body, says) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#,
                "params.name is missing",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#,
                "params.name must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"find_tool","arguments":"query=x"}}"#,
                "params.arguments must be an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"find_tool","arguments":["x"]}}"#,
                "not an array",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
                "tools/call needs params",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"find_tool"}"#,
                "params must be an object",
            ),
        ] {
            // a stateless request carries its _meta where its params are an object
            let sent: &'static str = match (session, serde_json::from_str::<Value>(body)) {
                (None, Ok(mut m)) if m["params"].is_object() => {
                    m["params"]["_meta"] = json!({
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
                    });
                    Box::leak(m.to_string().into_boxed_str())
                }
                _ => body,
            };
            let r = raw_post(&app, &token, session, sent).await;
            let status = r.status();
            // a JSON body, or the message of an event stream (legacy sessions)
            let raw = r.text().await.unwrap();
            let message = raw
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .rfind(|d| d.starts_with('{'))
                .unwrap_or(&raw);
            let v: Value = serde_json::from_str(message)
                .unwrap_or_else(|e| panic!("{session:?} {body}: {e}: {raw}"));
            assert_eq!(v["id"], 7, "{v}");
            assert_eq!(v["error"]["code"], -32602, "{session:?} {body}: {v}");
            let message = v["error"]["message"].as_str().unwrap();
            if session.is_some() {
                assert_eq!(status, 200, "{body}: {v}");
            }
            if session.is_some() || sent != body {
                assert!(message.contains(says), "{body}: {message}");
            }
        }
    }
    // a well-formed call still works in the session
    let r = raw_post(
        &app,
        &token,
        Some(&sid),
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"find_tool","arguments":{"query":"pets"}}}"#,
    )
    .await;
    let raw = r.text().await.unwrap();
    assert!(raw.contains(r#""result""#), "{raw}");
    // DELETE: the live session 204, then 404 like an unknown one
    let delete = |sid: String| {
        reqwest::Client::new()
            .delete(app.mcp_url())
            .bearer_auth(&token)
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    assert_eq!(delete(sid.clone()).await.unwrap().status(), 204);
    assert_eq!(delete(sid.clone()).await.unwrap().status(), 404);
    assert_eq!(
        delete("no-such-session".into()).await.unwrap().status(),
        404
    );
    app.stop().await;
}

#[tokio::test]
async fn browser_clients_get_cors_on_allowed_origins_and_bearer_spacing_is_lenient() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.allowed_origins = vec!["https://agents.example.com".into()];
    let app = spawn_app_with(s).await;
    let (_, token) = agent(&app, "alpha").await;
    let http = reqwest::Client::new();
    let preflight = |origin: &'static str| {
        http.request(reqwest::Method::OPTIONS, app.mcp_url())
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type,mcp-protocol-version,mcp-session-id",
            )
            .send()
    };
    for origin in ["http://localhost:6274", "https://agents.example.com"] {
        let r = preflight(origin).await.unwrap();
        assert!(r.status().is_success(), "{origin}: {}", r.status());
        let h = r.headers();
        assert_eq!(h["access-control-allow-origin"], origin);
        let methods = h["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .to_string();
        for m in ["GET", "POST", "DELETE", "OPTIONS"] {
            assert!(methods.contains(m), "{methods}");
        }
        let allowed = h["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_lowercase();
        for name in [
            "authorization",
            "content-type",
            "accept",
            "mcp-protocol-version",
            "mcp-session-id",
            "last-event-id",
            "mcp-method",
        ] {
            assert!(allowed.contains(name), "{allowed}");
        }
    }
    let r = preflight("https://evil.example").await.unwrap();
    let cors: Vec<_> = r
        .headers()
        .keys()
        .filter(|k| k.as_str().starts_with("access-control-"))
        .collect();
    assert!(cors.is_empty(), "{cors:?}");
    // a disallowed page's request: 403 before auth
    let r = http
        .post(app.mcp_url())
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);

    // the real request from an allowed page: the session id and the challenge are readable
    let r = raw_initialize_with(&app, &token, Some(("origin", "http://localhost:6274"))).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:6274"
    );
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(exposed.contains("mcp-session-id") && exposed.contains("www-authenticate"));
    let r = http
        .post(app.mcp_url())
        .header("origin", "http://127.0.0.1:6274")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://127.0.0.1:6274"
    );
    // another origin: no CORS headers, and 403 as before
    let r = raw_initialize_with(&app, &token, Some(("origin", "https://evil.example"))).await;
    assert_eq!(r.status(), 403);
    assert!(!r.headers().contains_key("access-control-allow-origin"));

    // RFC 9110 §11.4: one or more spaces after the scheme
    let r = http
        .post(app.mcp_url())
        .header("authorization", format!("Bearer  {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    app.stop().await;
}

#[tokio::test]
async fn sessions_belong_to_their_agent_and_origins_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token_a) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let r = raw_initialize(&app, &token_a).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    drop(r);
    assert_eq!(raw_tools_list(&app, &token_a, &sid).await.status(), 200);
    assert_eq!(
        raw_tools_list(&app, &token_b, &sid).await.status(),
        404,
        "B may not use A's session"
    );
    assert_eq!(
        raw_tools_list(&app, &token_a, "no-such-session")
            .await
            .status(),
        404
    );

    let r = raw_initialize_with(&app, &token_a, Some(("origin", "https://evil.example"))).await;
    assert_eq!(r.status(), 403);
    // a loopback page (a local browser-based client) is accepted
    let r = raw_initialize_with(&app, &token_a, Some(("origin", "http://localhost:6274"))).await;
    assert_eq!(r.status(), 200);
    let r = raw_initialize_with(&app, &token_a, Some(("host", "evil.example"))).await;
    assert_eq!(r.status(), 403);
    app.stop().await;
}

#[tokio::test]
async fn one_agent_cannot_open_sessions_without_bound() {
    use graft::server::auth::MAX_SESSIONS_PER_AGENT;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token_a) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let sid_of =
        |r: &reqwest::Response| r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let b = sid_of(&raw_initialize(&app, &token_b).await);
    let mut mine = Vec::new();
    for _ in 0..MAX_SESSIONS_PER_AGENT + 5 {
        let r = raw_initialize(&app, &token_a).await;
        assert_eq!(r.status(), 200);
        mine.push(sid_of(&r));
    }
    for (i, sid) in mine.iter().enumerate() {
        let status = raw_tools_list(&app, &token_a, sid).await.status();
        let expected = if i < 5 { 404 } else { 200 };
        assert_eq!(status, expected, "session {i} of {}", mine.len());
    }
    assert_eq!(
        raw_tools_list(&app, &token_b, &b).await.status(),
        200,
        "another agent's session is not touched"
    );
    app.stop().await;
}

/// The limits the README's "Limits" table states, each with the error it names (the
/// upload's is in console.rs, the session cap's above, the stream cap's in service::hub).
#[tokio::test]
async fn stated_limits_answer_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft
        .add_vendor("acme", None, "http://127.0.0.1:9")
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    // a body over 4 MiB: 413 and a JSON-RPC error naming the size, before it is parsed
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(graft::server::MAX_MCP_BODY)
    );
    let r = reqwest::Client::new()
        .post(app.mcp_url())
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], -32600);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4194304 bytes"),
        "{e}"
    );

    let (c, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    // a query is never refused for its length (issue 24.1): it is cut and answered
    let long = "word ".repeat(graft::domain::search::MAX_QUERY_WORDS + 1);
    let wide = "x".repeat(100_000);
    for (query, said) in [(long, "first 64 words"), (wide, "first 2000 characters")] {
        let r = call(&c, "find_tool", json!({"query": query})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(r.structured_content.clone().unwrap()["cut"], true);
        assert!(text(&r).contains(said), "{}", text(&r));
    }
    let r = call(
        &c,
        "find_tool",
        json!({"query": "create issue", "limit": 51}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    let props: serde_json::Map<String, Value> = (0..6_000)
        .map(|i| {
            (
                format!("field_{i}"),
                json!({"type": "string", "description": "x".repeat(30)}),
            )
        })
        .collect();
    let r = call(
        &c,
        "acquire",
        json!({"vendor": "acme", "name": "huge", "description": "d", "method": "POST", "path": "/x",
               "inputSchema": {"type": "object", "properties": props}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    assert!(text(&r).contains("larger than 256 KiB"), "{}", text(&r));
    c.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn restart_keeps_working_sets_and_forgets_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    let r = raw_initialize(&app, &token).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    drop(r);
    client.cancel().await.unwrap();
    app.stop().await;

    let app = spawn_app_in(dir.path()).await;
    assert_eq!(
        raw_tools_list(&app, &token, &sid).await.status(),
        404,
        "old session ids are unknown after a restart"
    );
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    assert_eq!(
        tool_names(&client).await.last().map(String::as_str),
        Some("petstore__add_pet")
    );
    client.cancel().await.unwrap();
    app.stop().await;
}

/// promote's and demote's answer for a working set of these petstore tools (cap 20, no
/// token budget): the size and the sum of their stored token counts (issue 29.1).
/// A promote or demote answer without its `message` (the text, checked elsewhere).
fn without_message(mut v: Value) -> Value {
    assert!(
        v["message"].is_string(),
        "structuredContent carries the text: {v}"
    );
    v.as_object_mut().unwrap().remove("message");
    v
}

async fn set_answer(app: &TestApp, tools: &[&str]) -> Value {
    let mut tokens = 0;
    for t in tools {
        tokens += app
            .graft
            .tool("petstore", t)
            .await
            .unwrap()
            .tokens
            .expect("counted at import");
    }
    json!({"size": tools.len(), "cap": 20, "tokens": tokens})
}
