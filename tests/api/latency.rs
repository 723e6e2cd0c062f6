//! Latency on kept-alive connections (issue 15): a client that reads every answer to its
//! end and reuses the connection must not wait on the server's unsent last segment
//! (Nagle's algorithm against the client's delayed ACK, ~40 ms per request on Linux).

use super::helpers::*;
use super::vendor;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const API: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Echo", "version": "1"},
  "paths": {"/anything/items/{id}": {"get": {"operationId": "get_item",
    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]}}}
}"#;

/// One JSON-RPC POST on `http` (one kept-alive connection), read to its end.
async fn rpc(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    session: Option<&str>,
    version: &str,
    body: Value,
) -> (reqwest::header::HeaderMap, Value) {
    let mut req = http
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", version);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    if version == "2026-07-28" {
        req = req.header("mcp-method", body["method"].as_str().unwrap_or_default());
        if let Some(name) = body.pointer("/params/name").and_then(Value::as_str) {
            req = req.header("mcp-name", name);
        }
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    // JSON, or one SSE event whose data is the JSON
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(text.trim());
    let value = if json.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text:?}"))
    };
    (headers, value)
}

#[tokio::test]
async fn sequential_calls_on_one_kept_alive_connection_do_not_stall() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    app.graft
        .import_openapi("echo", API, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (id, token) = agent(&app, "alpha").await;
    app.graft
        .promote_tool(
            &graft::service::Actor::Person("ops".into()),
            id,
            "echo",
            "get_item",
        )
        .await
        .unwrap();
    // one connection, reused for every request (as http.client or a keep-alive agent does)
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let url = app.mcp_url();

    // 2025-11-25: a session
    let (h, _) = rpc(&http, &url, &token, None, "2025-11-25", json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "keepalive", "version": "0"}}})).await;
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    rpc(
        &http,
        &url,
        &token,
        Some(&sid),
        "2025-11-25",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let call = |i: u64| {
        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "echo__get_item", "arguments": {"id": i}}})
    };
    // 2026-07-28: stateless, the protocol fields in `_meta`
    let modern = |i: u64| {
        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "echo__get_item", "arguments": {"id": i}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "keepalive", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    };
    for (era, session, make) in [
        (
            "2025-11-25",
            Some(sid.as_str()),
            &call as &dyn Fn(u64) -> Value,
        ),
        ("2026-07-28", None, &modern),
    ] {
        // warm up (the first call opens the vendor's connection)
        rpc(&http, &url, &token, session, era, make(1)).await;
        let mut fastest = Duration::MAX;
        for i in 0..20 {
            let started = Instant::now();
            let (_, answer) = rpc(&http, &url, &token, session, era, make(i + 2)).await;
            fastest = fastest.min(started.elapsed());
            let result = &answer["result"];
            assert_eq!(result["isError"], json!(false), "{era}: {answer}");
            assert!(
                result["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("/items/{}", i + 2)),
                "{era}: {answer}"
            );
        }
        // a stall (Nagle's algorithm against delayed ACKs) costs every request ~40 ms;
        // without it a debug build answers in a few ms. The fastest of 20 is compared,
        // so a machine busy with other work does not fail the test, a stall does.
        assert!(
            fastest < Duration::from_millis(30),
            "{era}: the fastest of 20 sequential tools/call on one connection took {fastest:?}: the end of each answer waits (TCP_NODELAY?)"
        );
    }
    app.stop().await;
}
