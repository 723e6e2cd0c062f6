//! OpenTelemetry traces (issue 30.2): a real `graft serve` exports OTLP/HTTP protobuf to a
//! receiver in the test (decoded with the official opentelemetry-proto types); an agent's
//! `_meta.traceparent` is the parent of Graft's server span in both eras, the call's
//! steps are its children, and the test vendor receives a `traceparent` of the same
//! trace from the vendor request's span.

use crate::helpers::*;
use crate::vendor;
use axum::body::Bytes;
use graft::service::Actor;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACME: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Acme", "version": "1"},
  "paths": {
    "/anything/items": {"get": {"operationId": "list_items", "parameters": [
                          {"name": "tag", "in": "query", "schema": {"type": "string"}},
                          {"name": "api_key", "in": "query", "schema": {"type": "string"}}]},
                        "post": {"operationId": "add_item", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}}},
    "/delay/{secs}": {"get": {"operationId": "wait", "parameters": [{"name": "secs", "in": "path", "required": true, "schema": {"type": "integer"}}]}}
  }
}"#;

/// One exported span, flattened.
#[derive(Debug, Clone)]
struct Got {
    name: String,
    kind: i32,
    trace_id: String,
    span_id: String,
    parent: String,
    links: Vec<String>,
    attrs: HashMap<String, String>,
    status: i32,
    service: String,
}

/// An OTLP/HTTP receiver on 127.0.0.1:0 (`POST /v1/traces`, protobuf), keeping what it got.
async fn receiver() -> (String, Arc<Mutex<Vec<Got>>>) {
    let got: Arc<Mutex<Vec<Got>>> = Arc::default();
    let keep = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let keep = keep.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let text = |v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>| match v
                    .as_ref()
                    .and_then(|v| v.value.clone())
                {
                    Some(AnyValue::StringValue(s)) => s,
                    Some(AnyValue::IntValue(i)) => i.to_string(),
                    Some(AnyValue::BoolValue(b)) => b.to_string(),
                    other => format!("{other:?}"),
                };
                for rs in req.resource_spans {
                    let service = rs
                        .resource
                        .iter()
                        .flat_map(|r| r.attributes.iter())
                        .find(|kv| kv.key == "service.name")
                        .map(|kv| text(&kv.value))
                        .unwrap_or_default();
                    for ss in rs.scope_spans {
                        for s in ss.spans {
                            keep.lock().unwrap().push(Got {
                                name: s.name.clone(),
                                kind: s.kind,
                                trace_id: hex::encode(&s.trace_id),
                                span_id: hex::encode(&s.span_id),
                                parent: hex::encode(&s.parent_span_id),
                                links: s.links.iter().map(|l| hex::encode(&l.span_id)).collect(),
                                attrs: s
                                    .attributes
                                    .iter()
                                    .map(|kv| (kv.key.clone(), text(&kv.value)))
                                    .collect(),
                                status: s.status.as_ref().map(|st| st.code).unwrap_or(0),
                                service: service.clone(),
                            });
                        }
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::default()
                        .encode_to_vec(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), got)
}

/// Waits until `done` holds for the spans received (15 s at most).
async fn wait_for(got: &Arc<Mutex<Vec<Got>>>, done: impl Fn(&[Got]) -> bool) -> Vec<Got> {
    let start = Instant::now();
    loop {
        let spans = got.lock().unwrap().clone();
        if done(&spans) {
            return spans;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "spans never arrived; got {spans:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A database with the acme tools, list_items promoted for agent `bot`: (url, token).
async fn seeded(dir: &std::path::Path, vendor: &vendor::Vendor) -> (String, String) {
    let url = db_url(dir);
    let g = open_graft(&url, Arc::new(graft::service::SystemClock)).await;
    g.import_openapi("acme", ACME, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (a, token) = g.add_agent("bot", None, None, None).await.unwrap();
    for tool in ["list_items", "add_item", "wait"] {
        g.promote_tool(&Actor::Agent(a.id), a.id, "acme", tool)
            .await
            .unwrap();
    }
    (url, token)
}

/// A seeded `graft serve` exporting its spans every 100 ms to a [`receiver`]: (the
/// server, agent `bot`'s token, the spans the receiver got).
async fn traced(
    dir: &std::path::Path,
    vendor: &vendor::Vendor,
) -> (Served, String, Arc<Mutex<Vec<Got>>>) {
    let (url, token) = seeded(dir, vendor).await;
    let (otlp, got) = receiver().await;
    let served = serve(
        &url,
        &dir.join("data"),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
        None,
        "graft serve with traces",
    )
    .await;
    (served, token, got)
}

/// A 2026-07-28 tools/call posted as is, with an optional `traceparent` header.
async fn modern_call(mcp: &str, token: &str, args: Value, meta_parent: &str, header: Option<&str>) {
    modern_call_with(
        mcp,
        token,
        args,
        json!({"traceparent": meta_parent}),
        header,
        json!("call-7"),
    )
    .await
}

/// [`modern_call`] with these `_meta` trace fields and this JSON-RPC id.
async fn modern_call_with(
    mcp: &str,
    token: &str,
    args: Value,
    trace: Value,
    header: Option<&str>,
    id: Value,
) {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "traces", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    for (k, v) in trace.as_object().unwrap() {
        meta[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "acme__list_items", "arguments": args, "_meta": meta}});
    let mut req = reqwest::Client::new()
        .post(mcp)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "acme__list_items");
    if let Some(h) = header {
        req = req.header("traceparent", h);
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

#[tokio::test]
async fn an_agents_traceparent_is_the_parent_and_the_vendor_gets_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let (url, token) = seeded(dir.path(), &vendor).await;
    let (otlp, got) = receiver().await;
    let served = serve(
        &url,
        &dir.path().join("data"),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_SERVICE_NAME", "graft-under-test"),
        ],
        None,
        "graft serve with traces",
    )
    .await;

    // 2025-11-25: a session, whose handler rmcp runs in the session's own task
    let (legacy_trace, legacy_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let (client, _) = legacy_client_at(&served.mcp(), &token, ProtocolVersion::V_2025_11_25).await;
    let meta: rmcp::model::RequestMetaObject = serde_json::from_value(
        json!({"traceparent": format!("00-{legacy_trace}-{legacy_parent}-01")}),
    )
    .unwrap();
    let mut params = CallToolRequestParams::new("acme__list_items").with_arguments(
        json!({"tag": "secret-tag-q7z"})
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = Some(meta);
    let r = client.call_tool(params).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let legacy_seen = vendor.last();
    // a write asks a person first: the approval check runs, nothing is sent
    let r = call(&client, "acme__add_item", json!({"name": "x"})).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    client.cancel().await.unwrap();

    // 2026-07-28: stateless; the HTTP header's context becomes a link
    let (modern_trace, modern_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let (header_trace, header_span) = ("11111111111111111111111111111111", "2222222222222222");
    modern_call(
        &served.mcp(),
        &token,
        json!({"tag": "t"}),
        &format!("00-{modern_trace}-{modern_parent}-01"),
        Some(&format!("00-{header_trace}-{header_span}-01")),
    )
    .await;
    let modern_seen = vendor.last();

    // the server span ends last (when its answer's body ended): wait for it too
    let spans = wait_for(&got, |s| {
        [legacy_trace, modern_trace].iter().all(|t| {
            let of = |pick: &dyn Fn(&Got) -> bool| {
                s.iter().filter(|g| g.trace_id == *t && pick(g)).count()
            };
            of(&|g| g.name == "database write") == 1
                && of(&|g| g.kind == SpanKind::Server as i32) >= 1
        }) && s.iter().any(|g| g.name == "approval check")
    })
    .await;
    drop(served);

    for (trace, parent, version, seen) in [
        (legacy_trace, legacy_parent, "2025-11-25", &legacy_seen),
        (modern_trace, modern_parent, "2026-07-28", &modern_seen),
    ] {
        let of_trace: Vec<&Got> = spans.iter().filter(|g| g.trace_id == trace).collect();
        let server: Vec<&&Got> = of_trace
            .iter()
            .filter(|g| g.kind == SpanKind::Server as i32)
            .collect();
        assert_eq!(server.len(), 1, "one server span per call: {of_trace:#?}");
        let server = server[0];
        assert_eq!(server.name, "tools/call acme__list_items");
        assert_eq!(server.parent, parent, "the agent's span is the parent");
        assert_eq!(server.service, "graft-under-test");
        let a = &server.attrs;
        assert_eq!(a["mcp.method.name"], "tools/call");
        assert_eq!(a["gen_ai.tool.name"], "acme__list_items");
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(a["gen_ai.agent.name"], "bot");
        assert_eq!(a["mcp.protocol.version"], version);
        assert!(a.contains_key("jsonrpc.request.id"), "{a:?}");
        assert_eq!(
            a.contains_key("mcp.session.id"),
            version == "2025-11-25",
            "{a:?}"
        );
        assert!(!a.contains_key("error.type"), "{a:?}");
        // nothing of the arguments without GRAFT_TRACE_PAYLOADS=1
        assert!(
            of_trace
                .iter()
                .all(|g| !g.attrs.contains_key("gen_ai.tool.call.arguments")
                    && !g.attrs.values().any(|v| v.contains("secret-tag-q7z"))),
            "{of_trace:#?}"
        );
        for step in ["validate", "vendor request", "database write"] {
            let s = of_trace
                .iter()
                .find(|g| {
                    g.name == step
                        || (step == "vendor request" && g.kind == SpanKind::Client as i32)
                })
                .unwrap_or_else(|| panic!("no {step} span: {of_trace:#?}"));
            assert_eq!(
                s.parent, server.span_id,
                "{step} is a child of the server span"
            );
        }
        let client_span = of_trace
            .iter()
            .find(|g| g.kind == SpanKind::Client as i32)
            .unwrap();
        assert_eq!(client_span.name, "GET acme");
        assert_eq!(client_span.attrs["http.response.status_code"], "200");
        assert_eq!(client_span.attrs["http.request.method"], "GET");
        // the vendor got the vendor request's context: same trace, that span as parent
        let tp = seen
            .headers
            .get("traceparent")
            .expect("the vendor got a traceparent")
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(
            tp,
            format!("00-{trace}-{}-01", client_span.span_id),
            "the vendor's parent is the vendor request span"
        );
    }
    // the modern call's HTTP header context is a link, not the parent
    let modern_server = spans
        .iter()
        .find(|g| g.trace_id == modern_trace && g.kind == SpanKind::Server as i32)
        .unwrap();
    assert_eq!(modern_server.links, vec![header_span.to_string()]);
    assert!(spans.iter().all(|g| g.trace_id != header_trace));
    // the write that waits for a person: a tool error on its server span
    let check = spans.iter().find(|g| g.name == "approval check").unwrap();
    let write = spans
        .iter()
        .find(|g| g.span_id == check.parent)
        .expect("the approval check's parent was exported");
    assert_eq!(write.name, "tools/call acme__add_item");
    assert_eq!(check.attrs["graft.approval.decision"], "approval_required");
    assert_eq!(write.attrs["error.type"], "tool_error");
    assert_eq!(write.status, 2, "status ERROR");
    assert!(
        spans
            .iter()
            .filter(|g| g.trace_id == write.trace_id)
            .all(|g| g.kind != SpanKind::Client as i32),
        "nothing was sent to the vendor"
    );
}

#[tokio::test]
async fn payloads_are_recorded_only_when_asked_and_then_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let (url, token) = seeded(dir.path(), &vendor).await;
    let (otlp, got) = receiver().await;
    let endpoint = format!("{otlp}/v1/traces");
    let served = serve(
        &url,
        &dir.path().join("data"),
        &[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("GRAFT_TRACE_PAYLOADS", "1"),
        ],
        None,
        "graft serve with payloads",
    )
    .await;
    let trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    modern_call(
        &served.mcp(),
        &token,
        json!({"tag": "visible-tag", "api_key": "sk-live-hidden-42"}),
        &format!("00-{trace}-00f067aa0ba902b7-01"),
        None,
    )
    .await;
    // the vendor got the key: only the trace must not show it
    assert!(vendor.last().query.unwrap().contains("sk-live-hidden-42"));
    let spans = wait_for(&got, |s| {
        s.iter()
            .any(|g| g.trace_id == trace && g.kind == SpanKind::Server as i32)
    })
    .await;
    drop(served);
    let server = spans
        .iter()
        .find(|g| g.trace_id == trace && g.kind == SpanKind::Server as i32)
        .unwrap();
    assert_eq!(server.service, "graft", "the default service name");
    let args = &server.attrs["gen_ai.tool.call.arguments"];
    assert!(args.contains("visible-tag"), "{args}");
    assert!(!args.contains("sk-live-hidden-42"), "{args}");
    assert!(args.contains("redacted"), "{args}");
    assert!(
        server.attrs.contains_key("gen_ai.tool.call.result"),
        "{server:?}"
    );
    assert!(
        spans
            .iter()
            .all(|g| !g.attrs.values().any(|v| v.contains("sk-live-hidden-42"))),
        "{spans:#?}"
    );
}

#[tokio::test]
async fn without_an_endpoint_nothing_is_exported_and_vendors_get_no_traceparent() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let (url, token) = seeded(dir.path(), &vendor).await;
    let served = serve(&url, &dir.path().join("data"), &[], None, "graft serve").await;
    modern_call(
        &served.mcp(),
        &token,
        json!({"tag": "t"}),
        "00-6bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        None,
    )
    .await;
    drop(served);
    assert!(vendor.last().headers.get("traceparent").is_none());
}

#[tokio::test]
async fn what_an_agent_writes_is_bounded_and_cannot_break_or_hide_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let (served, token, got) = traced(dir.path(), &vendor).await;
    // a tracestate with a control character is dropped, the call runs, the trace holds
    let bad_state = "7bf92f3577b34da6a3ce929d0e0e4736";
    modern_call_with(
        &served.mcp(),
        &token,
        json!({}),
        json!({"traceparent": format!("00-{bad_state}-00f067aa0ba902b7-01"), "tracestate": "a=b\u{1}"}),
        None,
        json!("x".repeat(10_000)),
    )
    .await;
    let seen = vendor.last();
    let tp = seen
        .headers
        .get("traceparent")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(tp.starts_with(&format!("00-{bad_state}-")), "{tp}");
    assert!(
        seen.headers.get("tracestate").is_none(),
        "no empty or bad tracestate is sent"
    );
    // an unsampled parent (flags 00) does not hide the call
    let hidden = "8bf92f3577b34da6a3ce929d0e0e4736";
    modern_call(
        &served.mcp(),
        &token,
        json!({}),
        &format!("00-{hidden}-00f067aa0ba902b7-00"),
        None,
    )
    .await;
    let tp = vendor
        .last()
        .headers
        .get("traceparent")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        tp.starts_with(&format!("00-{hidden}-")) && tp.ends_with("-01"),
        "{tp}"
    );
    // a method MCP does not define names no span
    let r = reqwest::Client::new()
        .post(served.mcp())
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "y".repeat(100_000), "params": {
            "_meta": {"traceparent": "00-9bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_client_error() || r.status().is_success(),
        "{}",
        r.status()
    );
    let spans = wait_for(&got, |s| {
        [bad_state, hidden, "9bf92f3577b34da6a3ce929d0e0e4736"]
            .iter()
            .all(|t| {
                s.iter()
                    .any(|g| g.trace_id == *t && g.kind == SpanKind::Server as i32)
            })
    })
    .await;
    drop(served);
    let server = |t: &str| {
        spans
            .iter()
            .find(|g| g.trace_id == t && g.kind == SpanKind::Server as i32)
            .unwrap()
            .clone()
    };
    assert_eq!(server(bad_state).attrs["jsonrpc.request.id"].len(), 128);
    assert_eq!(
        server(bad_state).attrs["mcp.protocol.version"],
        "2026-07-28"
    );
    assert!(!server(bad_state).attrs.contains_key("mcp.session.id"));
    let odd = server("9bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(odd.name, "other");
    assert_eq!(odd.attrs["mcp.method.name"], "other");
    assert!(spans
        .iter()
        .all(|g| g.name.len() < 300 && g.attrs.values().all(|v| v.len() < 5000)));
}

/// A call the agent cancels (notifications/cancelled) while the vendor works: the vendor
/// request's span ends as an error of type `cancelled`.
#[tokio::test]
async fn a_cancelled_call_ends_its_vendor_span_as_cancelled() {
    use rmcp::model::{ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let (served, token, got) = traced(dir.path(), &vendor).await;
    let (client, _) = legacy_client_at(&served.mcp(), &token, ProtocolVersion::V_2025_11_25).await;
    // run_tool names the tool it runs
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "list_items", "input": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let request = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("acme__wait")
            .with_arguments(json!({"secs": 60}).as_object().unwrap().clone()),
    ));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    // the vendor has the request (its second, after list_items), then the agent gives up
    while vendor.count() < 2 {
        assert!(Instant::now() < deadline, "the vendor never got the call");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    let cancelled =
        |g: &Got| g.kind == SpanKind::Client as i32 && g.attrs.contains_key("error.type");
    let spans = wait_for(&got, |s| {
        s.iter().any(cancelled) && s.iter().any(|g| g.name == "tools/call run_tool")
    })
    .await;
    let run = spans
        .iter()
        .find(|g| g.name == "tools/call run_tool")
        .unwrap();
    assert_eq!(run.attrs["gen_ai.tool.name"], "run_tool");
    assert_eq!(run.attrs["graft.tool.name"], "acme__list_items");
    let sent = spans.iter().find(|g| cancelled(g)).unwrap();
    assert_eq!(
        sent.attrs.get("error.type").map(String::as_str),
        Some("cancelled"),
        "{sent:?}"
    );
    assert_eq!(sent.status, 2, "status ERROR");
    client.cancel().await.unwrap();
    drop(served);
}
