//! Calls as vendors mean them (issue 25): a credential only where a security scheme
//! puts it, parameters serialized as the document declares them, and everything the
//! vendor says (error bodies, headers, redirects, exact numbers) reaching the model;
//! through rmcp's client, against the test vendor, with a fixture document written for
//! these tests (tests/fixtures/fidelity_api.yaml).

use super::helpers::*;
use super::vendor;
use graft::service::Actor;
use rmcp::model::{CallToolResult, ProtocolVersion};
use serde_json::{json, Value};

const SECRET: &str = "fid-s3cret-K3y";

struct World {
    app: TestApp,
    vendor: vendor::Vendor,
    token: String,
    agent_id: i64,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fidelity_api.yaml"),
    )
    .unwrap();
    app.graft
        .import_openapi("fid", &doc, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    app.graft
        .add_connection("fid", "main", "header", Some("X-Api-Key"), Some(SECRET))
        .await
        .unwrap();
    let (agent_id, token) = agent(&app, "alpha").await;
    World {
        app,
        vendor,
        token,
        agent_id,
        _dir: dir,
    }
}

async fn run(
    client: &rmcp::service::RunningService<rmcp::RoleClient, Counting>,
    name: &str,
    input: Value,
) -> CallToolResult {
    call(
        client,
        "run_tool",
        json!({"vendor": "fid", "name": name, "input": input}),
    )
    .await
}

fn everything(r: &CallToolResult) -> String {
    format!(
        "{}{}",
        text(r),
        r.structured_content.clone().unwrap_or_default()
    )
}

#[tokio::test]
async fn a_credential_goes_only_where_a_security_scheme_puts_it() {
    let w = world().await;
    let (client, _) = legacy_client(&w.app, &w.token, ProtocolVersion::V_2025_11_25).await;

    // 1. `security: []`: public, no credential
    let r = run(&client, "health", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = w.vendor.last();
    assert_eq!(seen.path, "/anything/health");
    assert!(
        seen.headers.get("x-api-key").is_none(),
        "{:?}",
        seen.headers
    );
    // under the global scheme: the header, and nowhere else
    let r = run(&client, "me", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(w.vendor.last().headers["x-api-key"], SECRET);

    // 2. `key` and `token` are ordinary inputs: the agent's values go, the secret does not
    let r = run(
        &client,
        "get_object",
        json!({"key": "reports/2026.pdf", "token": "page-2"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = w.vendor.last();
    assert_eq!(
        seen.query.as_deref(),
        Some("key=reports%2F2026.pdf&token=page-2")
    );
    assert_eq!(seen.headers["x-api-key"], SECRET);
    assert!(!everything(&r).contains(SECRET));
    // and the agent sees them in the tool's schema, which says nothing else is taken
    call(
        &client,
        "promote",
        json!({"vendor": "fid", "name": "get_object"}),
    )
    .await;
    let tools = client.list_tools(None).await.unwrap().tools;
    let t = tools.iter().find(|t| t.name == "fid__get_object").unwrap();
    let schema = Value::Object((*t.input_schema).clone());
    assert!(schema["properties"]["key"].is_object() && schema["properties"]["token"].is_object());
    assert_eq!(schema["additionalProperties"], false);

    // 3. undeclared inputs are refused, named, and nothing is sent
    let before = w.vendor.count();
    let r = run(&client, "get_object", json!({"key": "a", "colour": "red"})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("\"colour\""), "{}", text(&r));
    let r = run(&client, "delete_thing", json!({"id": "7", "force": true})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("\"force\""), "{}", text(&r));
    assert_eq!(w.vendor.count(), before, "nothing was sent");
    // first-class calls alike
    let r = call(&client, "fid__get_object", json!({"key": "a", "extra": 1})).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert_eq!(w.vendor.count(), before);
    client.cancel().await.unwrap();
    w.app.stop().await;
}

#[tokio::test]
async fn parameters_reach_the_vendor_as_the_document_declares_them() {
    let w = world().await;
    let (client, _) = legacy_client(&w.app, &w.token, ProtocolVersion::V_2025_11_25).await;
    let r = run(
        &client,
        "search",
        json!({
            "ids": [1, 2, 3],
            "tags": ["a|b", "c"],
            "words": ["x", "y z"],
            "colour": ["red", "blue"],
            "filter": {"owner": "ann", "state": "open"},
            "range": {"gte": 1, "lt": 10},
            "limit": 120000.0,
            "X-Fields": ["id", "name"]
        }),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = w.vendor.last();
    let query = seen.query.clone().unwrap();
    let pairs: Vec<&str> = query.split('&').collect();
    for want in [
        "ids=1,2,3",
        "tags=a%7Cb|c",
        "words=x%20y+z",
        "colour=red",
        "colour=blue",
        "owner=ann",
        "state=open",
        "range%5Bgte%5D=1",
        "range%5Blt%5D=10",
        "limit=120000",
    ] {
        assert!(pairs.contains(&want), "{want} not in {query}");
    }
    assert_eq!(seen.headers["x-fields"], "id,name");

    let r = run(&client, "get_items", json!({"ids": ["a.1", "b"]})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(w.vendor.last().path, "/anything/items/.a%2E1.b");
    let r = run(&client, "get_point", json!({"at": {"x": 1, "y": 2.0}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(w.vendor.last().path, "/anything/points/;at=x,1,y,2");

    // Swagger 2.0's collectionFormat: csv by default, ssv, pipes, multi
    let doc = json!({
        "swagger": "2.0", "info": {"title": "Old", "version": "1"},
        "paths": {"/anything/old": {"get": {"operationId": "old", "parameters": [
            {"name": "csv", "in": "query", "type": "array", "items": {"type": "string"}},
            {"name": "ssv", "in": "query", "type": "array", "collectionFormat": "ssv", "items": {"type": "string"}},
            {"name": "pipes", "in": "query", "type": "array", "collectionFormat": "pipes", "items": {"type": "string"}},
            {"name": "multi", "in": "query", "type": "array", "collectionFormat": "multi", "items": {"type": "string"}},
            {"name": "X-List", "in": "header", "type": "array", "collectionFormat": "pipes", "items": {"type": "string"}}
        ]}}}
    });
    w.app
        .graft
        .import_openapi(
            "old",
            &doc.to_string(),
            Some(&w.vendor.url()),
            &mut |_, _| {},
        )
        .await
        .unwrap();
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "old", "name": "old", "input": {"csv": ["a", "b"], "ssv": ["c", "d"], "pipes": ["e", "f"], "multi": ["g", "h"], "X-List": ["i", "j"]}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = w.vendor.last();
    assert_eq!(
        seen.query.as_deref(),
        Some("csv=a,b&multi=g&multi=h&pipes=e|f&ssv=c%20d")
    );
    assert_eq!(seen.headers["x-list"], "i|j");
    client.cancel().await.unwrap();
    w.app.stop().await;
}

#[tokio::test]
async fn what_the_vendor_said_reaches_the_model() {
    let w = world().await;
    let (client, _) = legacy_client(&w.app, &w.token, ProtocolVersion::V_2025_11_25).await;
    w.app
        .graft
        .decide_approval(
            &Actor::Person("ops".into()),
            "alpha",
            "fid",
            "create_user",
            true,
        )
        .await
        .unwrap();

    // 4. the error body is in the text, which is all some clients give the model
    let r = run(&client, "create_user", json!({"email": "nope", "age": 12})).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"), "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains("422")
            && t.contains("is not an email address")
            && t.contains("must be at least 18"),
        "{t}"
    );
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["body"]["errors"]["age"][0], "must be at least 18");
    let r = run(&client, "invoices", json!({})).await;
    assert!(
        text(&r).contains("upstream billing-7 is down"),
        "{}",
        text(&r)
    );

    // 5. headers that matter, in the text and in structuredContent; others not
    let r = run(&client, "list_paged", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains(r#"link: <https://api.example/said/paged?page=2>; rel="next""#)
            && t.contains("x-total-count: 42")
            && t.contains("x-ratelimit-remaining: 99")
            && t.contains(r#"etag: "v7""#),
        "{t}"
    );
    assert!(!t.contains("x-internal-trace"), "{t}");
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["items"], json!([1, 2]));
    assert_eq!(sc["_headers"]["x-total-count"], "42");
    assert!(sc["_headers"].get("x-internal-trace").is_none());
    // a 429 says when to retry
    let r = run(&client, "limited", json!({})).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"));
    assert!(text(&r).contains("Retry after 30 s"), "{}", text(&r));
    assert_eq!(
        r.structured_content.unwrap()["error"]["retryAfterSeconds"],
        30
    );

    // 6. a redirect to another origin: its Location, never followed
    let r = run(&client, "download_report", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let location = "http://127.0.0.2:9/bucket/report.pdf?X-Amz-Signature=abc123";
    assert!(text(&r).contains(location), "{}", text(&r));
    assert_eq!(r.structured_content.unwrap()["location"], location);

    // 7. numbers exactly as the vendor wrote them
    let r = run(&client, "numbers", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains("123456789012345678901234567890")
            && t.contains("0.1000000000000000055511151231257827"),
        "{t}"
    );
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["id"], "123456789012345678901234567890");
    assert_eq!(
        (sc["count"].clone(), sc["ratio"].clone()),
        (json!(3), json!(1.5))
    );
    client.cancel().await.unwrap();
    w.app.stop().await;
}

/// 11. notifications/cancelled stops the vendor request; the log says so, and that a
/// write may have happened.
#[tokio::test]
async fn a_cancelled_call_stops_and_is_logged_as_cancelled() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;
    let w = world().await;
    w.app
        .graft
        .decide_approval(
            &Actor::Person("ops".into()),
            "alpha",
            "fid",
            "slow_write",
            true,
        )
        .await
        .unwrap();
    let (client, _) = legacy_client(&w.app, &w.token, ProtocolVersion::V_2025_11_25).await;
    let args = json!({"vendor": "fid", "name": "slow_write", "input": {"secs": 60}});
    let request = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("run_tool").with_arguments(args.as_object().unwrap().clone()),
    ));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // the vendor has the request, then the agent gives up on it
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while w.vendor.count() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the vendor never got the call"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    let filter = graft::db::CallFilter {
        agent_id: Some(w.agent_id),
        ..Default::default()
    };
    let calls = loop {
        let calls = graft::db::select_call_log(w.app.graft.pool(), &filter, 10)
            .await
            .unwrap();
        if !calls.is_empty() {
            break calls;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cancelled call was not logged while the vendor still slept"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(calls[0].error_code.as_deref(), Some("cancelled"));
    assert_eq!(calls[0].outcome(), "cancelled");
    assert!(
        calls[0]
            .message
            .as_deref()
            .unwrap_or("")
            .contains("may have acted"),
        "{:?}",
        calls[0].message
    );
    // the session goes on
    let r = run(&client, "health", json!({})).await;
    assert_eq!(r.is_error, Some(false));
    client.cancel().await.unwrap();
    w.app.stop().await;
}

/// The first review of issue 25: nested undeclared keys, headers of errors, a rate
/// limit's reset, JSON-content parameters, form bodies as declared, free-form bodies.
#[tokio::test]
async fn what_the_review_found_is_sent_and_said_as_declared() {
    let w = world().await;
    let (client, _) = legacy_client(&w.app, &w.token, ProtocolVersion::V_2025_11_25).await;
    // an undeclared key of a form-exploded object would be a query parameter of its own
    let before = w.vendor.count();
    let r = run(
        &client,
        "search",
        json!({"limit": 2, "filter": {"owner": "ann", "limit": "999"}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("/filter/limit"), "{}", text(&r));
    assert_eq!(w.vendor.count(), before);
    // an error's headers are in its text; a reset stands in for Retry-After
    let r = run(&client, "limited_reset_header", json!({})).await;
    let t = text(&r);
    assert!(
        t.contains("x-ratelimit-reset: 15") && t.contains("Retry after 15 s"),
        "{t}"
    );
    // a parameter declared with JSON content is sent as JSON
    let r = run(&client, "find_where", json!({"where": {"a": 1}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        w.vendor.last().query.as_deref(),
        Some("where=%7B%22a%22%3A1%7D")
    );
    // form bodies: a list repeats its name (OpenAPI's default), an object declared
    // deepObject nests
    w.app
        .graft
        .decide_approval(
            &Actor::Person("ops".into()),
            "alpha",
            "fid",
            "post_form",
            true,
        )
        .await
        .unwrap();
    let r = run(
        &client,
        "post_form",
        json!({"events": ["initiated", "ringing"], "meta": {"k": "v"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        w.vendor.last().body,
        "events=initiated&events=ringing&meta%5Bk%5D=v"
    );
    // a free-form body takes what the agent gives
    w.app
        .graft
        .decide_approval(
            &Actor::Person("ops".into()),
            "alpha",
            "fid",
            "post_free",
            true,
        )
        .await
        .unwrap();
    let r = run(&client, "post_free", json!({"anything": 1, "else": "x"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let sent: Value = serde_json::from_str(&w.vendor.last().body).unwrap();
    assert_eq!(sent, json!({"anything": 1, "else": "x"}));
    client.cancel().await.unwrap();
    w.app.stop().await;
}

/// A person can say which ordinary parameter carries the credential (Slack's `token`):
/// the tools are imported again without it as an input, and the secret goes there.
#[tokio::test]
async fn a_person_names_the_parameter_a_document_declares_for_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let doc = std::fs::read_to_string(specs_dir().join("slack_web_openapi_v2.json")).unwrap();
    g.import_openapi(
        "slack",
        &doc,
        Some(&format!("{}/anything", v.url())),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    g.add_connection("slack", "bot", "bearer", None, Some(SECRET))
        .await
        .unwrap();
    let schema = |g: &graft::service::Graft| {
        let g = g.clone();
        async move {
            let t = g.tool("slack", "chat_post_message").await.unwrap();
            serde_json::from_str::<Value>(&t.input_schema).unwrap()
        }
    };
    assert!(schema(g).await["properties"].get("token").is_some());
    let ops = Actor::Person("ops".into());
    let report = g
        .set_vendor_credential_params(&ops, "slack", &["token".to_string()])
        .await
        .unwrap()
        .expect("the stored document is imported again");
    assert!(report.updated.len() > 100, "{}", report.updated.len());
    assert!(schema(g).await["properties"].get("token").is_none());
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    g.decide_approval(&ops, "alpha", "slack", "chat_post_message", true)
        .await
        .unwrap();
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "slack", "name": "chat_post_message", "input": {"channel": "C1", "text": "hi"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = v.last();
    assert_eq!(seen.headers["token"], SECRET);
    assert!(!everything(&r).contains(SECRET));
    // and back to the schemes alone
    g.set_vendor_credential_params(&ops, "slack", &[])
        .await
        .unwrap();
    assert!(schema(g).await["properties"].get("token").is_some());
    client.cancel().await.unwrap();
    app.stop().await;
}
