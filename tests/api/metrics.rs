//! What operators see (issue 30): `/metrics` in the Prometheus (OpenMetrics) text format
//! after a known sequence of calls, who may scrape it, and the JSON log lines of a real
//! `graft serve`.

use super::helpers::*;
use super::vendor;
use graft::service::Actor;
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SCRAPE_TOKEN: &str = "scrape-me-0123456789";

/// A vendor without any security scheme: `/status/{code}` answers that status, and
/// `/anything/...` echoes (the test vendor's routes).
const ACME: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Acme", "version": "1"},
  "paths": {
    "/status/{code}": {"get": {"operationId": "status", "parameters": [{"name": "code", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/anything/items": {"get": {"operationId": "list_items", "parameters": [{"name": "tag", "in": "query", "schema": {"type": "string"}}]},
                        "post": {"operationId": "add_item", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}}}
  }
}"#;

/// `/metrics` as `token` reads it: (status, content type, body).
async fn scrape(app: &TestApp, token: Option<&str>) -> (u16, String, String) {
    let mut req = reqwest::Client::new().get(format!("http://{}/metrics", app.addr));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, r.text().await.unwrap())
}

/// The value of the sample line that starts with `series` (name and labels, exactly).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.split(' ').next().unwrap().parse().unwrap())
}

#[tokio::test]
async fn metrics_count_a_known_sequence_of_calls_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let mut s = settings(dir.path());
    s.metrics_token = Some(SCRAPE_TOKEN.into());
    let app = spawn_app_with(s).await;
    let g = &app.graft;
    g.import_openapi("acme", ACME, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (_, token) = agent(&app, "bot-with-a-secret-name").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;

    // search, promote three tools, call one of them (ok), with a bad input (tool error),
    // a write (approval required), the write as a dry run, a vendor error (500), the
    // write again once denied (refused)
    let r = call(&client, "find_tool", json!({"query": "list items"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    for name in ["list_items", "status", "add_item"] {
        let r = call(&client, "promote", json!({"vendor": "acme", "name": name})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    let r = call(&client, "acme__list_items", json!({"tag": "tag-value-q7z"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(&client, "acme__list_items", json!({"tag": 7})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    let add = json!({"vendor": "acme", "name": "add_item", "input": {"name": "x"}});
    let r = call(&client, "run_tool", add.clone()).await;
    assert_eq!(code(&r).as_deref(), Some("approval_required"));
    let mut dry = add.clone();
    dry["dryRun"] = json!(true);
    let r = call(&client, "run_tool", dry).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "status", "input": {"code": 500}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"));
    g.decide_approval(
        &Actor::Person("ops".into()),
        "bot-with-a-secret-name",
        "acme",
        "add_item",
        false,
    )
    .await
    .unwrap();
    let r = call(&client, "run_tool", add).await;
    assert_eq!(code(&r).as_deref(), Some("approval_denied"));

    // the sweep demotes the tool never called (add_item: nothing reached the vendor)
    // for a cap of 1
    g.set_agent_settings("bot-with-a-secret-name", None, Some(1), None, None)
        .await
        .unwrap();
    let swept = g.sweep_once(g.clock_now(), false).await.unwrap();
    assert_eq!(swept.agents.len(), 1);

    // a tool nobody has: a JSON-RPC error (invalid params), not a result
    let unknown = client
        .call_tool(rmcp::model::CallToolRequestParams::new("acme__nope"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    // a 2026-era client: stateless, its version in every request's header
    let modern = modern_client(&app, &token).await;
    let r = call(&modern, "find_tool", json!({"query": "items"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));

    // who may scrape
    let (status, _, _) = scrape(&app, None).await;
    assert_eq!(status, 401, "no token");
    let (status, _, _) = scrape(&app, Some("wrong-token")).await;
    assert_eq!(status, 401, "a wrong token");
    let (status, ct, text) = scrape(&app, Some(SCRAPE_TOKEN)).await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    assert!(text.ends_with("# EOF\n"));

    let exact = [
        (r#"graft_tool_calls_total{vendor="acme",outcome="ok"}"#, 1.0),
        (
            r#"graft_tool_calls_total{vendor="acme",outcome="tool_error"}"#,
            1.0,
        ),
        (
            r#"graft_tool_calls_total{vendor="acme",outcome="approval_required"}"#,
            1.0,
        ),
        (
            r#"graft_tool_calls_total{vendor="acme",outcome="dry_run"}"#,
            1.0,
        ),
        (
            r#"graft_tool_calls_total{vendor="acme",outcome="vendor_error"}"#,
            1.0,
        ),
        (
            r#"graft_tool_calls_total{vendor="acme",outcome="refused"}"#,
            1.0,
        ),
        (
            r#"graft_vendor_request_duration_seconds_count{vendor="acme",status_class="2xx"}"#,
            1.0,
        ),
        (
            r#"graft_vendor_request_duration_seconds_count{vendor="acme",status_class="5xx"}"#,
            1.0,
        ),
        (r#"graft_working_set_changes_total{cause="promote"}"#, 3.0),
        (r#"graft_working_set_changes_total{cause="cap"}"#, 1.0),
        ("graft_sweep_duration_seconds_count", 1.0),
        (
            &format!(
                r#"graft_find_tool_duration_seconds_count{{mode="{}"}}"#,
                g.search_status().mode
            ),
            2.0,
        ),
        // find_tool, 3 promotes, the ok call, the dry run; the bad input, the approval,
        // the vendor error and the denial are results with isError
        (
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="",mcp_protocol_version="2025-11-25"}"#,
            6.0,
        ),
        (
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="tool_error",mcp_protocol_version="2025-11-25"}"#,
            4.0,
        ),
        (
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="-32602",mcp_protocol_version="2025-11-25"}"#,
            1.0,
        ),
        (
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="",mcp_protocol_version="2026-07-28"}"#,
            1.0,
        ),
        (
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="initialize",error_type="",mcp_protocol_version="2025-11-25"}"#,
            1.0,
        ),
        ("graft_pending_approvals", 0.0),
        ("graft_agents", 1.0),
        ("graft_toolbox_tools", 3.0),
        ("graft_mcp_sessions", 1.0),
    ];
    for (series, want) in exact {
        assert_eq!(sample(&text, series), Some(want), "{series}\n{text}");
    }
    // a histogram's buckets add up to its count
    assert_eq!(
        sample(
            &text,
            r#"mcp_server_operation_duration_seconds_bucket{le="+Inf",mcp_method_name="tools/call",error_type="tool_error",mcp_protocol_version="2025-11-25"}"#
        ),
        Some(4.0),
        "{text}"
    );
    // no agent or tool name is a label
    for name in ["bot-with-a-secret-name", "list_items", "add_item"] {
        assert!(!text.contains(name), "{name} in /metrics");
    }
    assert!(text.contains(r#"graft_build_info{version=""#));

    client.cancel().await.unwrap();
    modern.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn without_a_token_only_loopback_clients_scrape_and_off_means_off() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (status, _, text) = scrape(&app, None).await;
    assert_eq!(status, 200, "a loopback client without a token set: {text}");
    assert!(
        text.contains("# TYPE graft_sweep_duration_seconds histogram"),
        "{text}"
    );

    // through a proxy on this host (it forwards), or by a name that is not loopback
    // (a DNS-rebinding page in a local browser)
    let forwarded = reqwest::Client::new()
        .get(format!("http://{}/metrics", app.addr))
        .header("x-forwarded-for", "203.0.113.9")
        .send()
        .await
        .unwrap();
    assert_eq!(forwarded.status(), 403);
    let rebound = reqwest::Client::new()
        .get(format!("http://{}/metrics", app.addr))
        .header("host", format!("evil.example:{}", app.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    app.stop().await;

    // loopback through a trusted reverse proxy is someone else's request
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    let app = spawn_app_with(s).await;
    let (status, _, text) = scrape(&app, None).await;
    assert_eq!(status, 403);
    assert!(text.contains("GRAFT_METRICS_TOKEN"), "{text}");
    app.stop().await;

    // GRAFT_METRICS=off: no endpoint, nothing counted
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(dir.path());
    s.metrics = false;
    let app = spawn_app_with(s).await;
    let (_, token) = agent(&app, "bot").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    call(&client, "find_tool", json!({"query": "anything"})).await;
    let (status, _, _) = scrape(&app, None).await;
    assert_eq!(status, 404);
    assert!(!app
        .graft
        .metrics()
        .encode(Default::default())
        .contains("mcp_server_operation_duration_seconds_count"));
    client.cancel().await.unwrap();
    app.stop().await;
}

/// `GRAFT_LOG_FORMAT=json`: every line `graft serve` writes is one JSON object, and a
/// tool call is one line at info with agent, tool, outcome, status and duration.
#[tokio::test]
async fn json_logs_parse_line_by_line_and_each_tool_call_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let url = db_url(dir.path());
    let (token, agent_id) = {
        let g = open_graft(&url, std::sync::Arc::new(graft::service::SystemClock)).await;
        g.import_openapi("acme", ACME, Some(&vendor.url()), &mut |_, _| {})
            .await
            .unwrap();
        let (a, token) = g.add_agent("bot", None, None, None).await.unwrap();
        g.promote_tool(&Actor::Agent(a.id), a.id, "acme", "list_items")
            .await
            .unwrap();
        (token, a.id)
    };
    let log = dir.path().join("graft.log");
    let served = serve(
        &url,
        &dir.path().join("data"),
        &[("GRAFT_LOG_FORMAT", "json"), ("RUST_LOG", "info")],
        Some(&log),
        "graft serve",
    )
    .await;
    let (client, _) = legacy_client_at(&served.mcp(), &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(&client, "acme__list_items", json!({"tag": "tag-value-q7z"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // a bad input: the agent's answer quotes it, the log line does not
    let r = call(
        &client,
        "acme__list_items",
        json!({"tag": {"note": "quoted-input-x9k"}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    assert!(text(&r).contains("quoted-input-x9k"), "{}", text(&r));
    client.cancel().await.unwrap();
    // the lines are written as they happen; give the last one a moment
    let mut calls = Vec::new();
    let waited = Instant::now();
    while calls.len() < 2 && waited.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let written = std::fs::read_to_string(&log).unwrap();
        calls = written
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l)
                    .unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {l}"))
            })
            .filter(|v| v["message"] == "tool call")
            .collect();
    }
    drop(served);
    assert_eq!(calls.len(), 2, "one line per call");
    for (line, (outcome, code)) in calls
        .iter()
        .zip([("ok", ""), ("tool_error", "invalid_input")])
    {
        assert_eq!(line["level"], "INFO", "{line}");
        assert_eq!(line["agent"], agent_id, "{line}");
        assert_eq!(line["tool"], "acme__list_items", "{line}");
        assert_eq!(line["outcome"], outcome, "{line}");
        assert_eq!(line["code"], code, "{line}");
        assert!(line["ms"].is_i64(), "{line}");
        assert!(line["timestamp"].is_string(), "{line}");
    }
    assert_eq!(calls[0]["http_status"], 200, "{}", calls[0]);
    // no payload: the input's value is not in the log
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(!written.contains("tag-value-q7z"));
    assert!(!written.contains("quoted-input-x9k"));
}
