//! Running tools through Graft (issue 3): the proxy against a real local vendor, dry runs,
//! approvals, connections and the call log, through rmcp's client.

use super::helpers::*;
use super::vendor;
use graft::service::Actor;
use rmcp::model::{CallToolResult, ProtocolVersion};
use serde_json::{json, Value};

const SECRET: &str = "s3cret-Pa55+word/x";
const ACCOUNT: &str = "AC0123456789abcdef0123456789abcdef";
const ADDRESS: &str = "AD0123456789abcdef0123456789abcdef";

fn assert_no_secret(r: &CallToolResult) {
    let all = format!(
        "{}{}",
        text(r),
        r.structured_content.clone().unwrap_or_default()
    );
    assert!(
        !all.contains(SECRET),
        "the secret leaked into an MCP answer: {all}"
    );
    let encoded: String = url::form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
    assert!(!all.contains(&encoded), "the encoded secret leaked: {all}");
}

const SMALL_API: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Acme", "version": "1"},
  "components": {"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "key"}}},
  "paths": {
    "/status/{code}": {"get": {"operationId": "status", "parameters": [{"name": "code", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/delay/{secs}": {"get": {"operationId": "delay", "parameters": [{"name": "secs", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/big": {"get": {"operationId": "big"}},
    "/redirect": {"get": {"operationId": "redirect"}},
    "/anything/files/{path}": {"get": {"operationId": "get_file", "parameters": [{"name": "path", "in": "path", "required": true, "schema": {"type": "string"}}]}},
    "/anything/items": {"get": {"operationId": "list_items", "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}, {"name": "tag", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}]}}
  }
}"#;

struct Setup {
    app: TestApp,
    vendor: vendor::Vendor,
    other: vendor::Vendor,
    token: String,
    agent_id: i64,
    _dir: tempfile::TempDir,
}

async fn setup_with(limits: Option<graft::proxy::ProxyLimits>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let other = vendor::start(None).await;
    let vendor = vendor::start(Some(format!("{}/stolen", other.url()))).await;
    let mut s = settings(dir.path());
    if let Some(l) = limits {
        s.limits = l;
    }
    let app = spawn_app_with(s).await;
    let g = &app.graft;
    let specs = specs_dir();
    let base = format!("{}/anything", vendor.url());
    for (file, slug) in [
        ("petstore_openapi.yaml", "petstore"),
        ("stripe_spec3_2023-09.yaml", "stripe"),
        ("twilio_api_v2010.json", "twilio"),
    ] {
        let text = std::fs::read_to_string(specs.join(file)).unwrap();
        g.import_openapi(slug, &text, Some(&base), &mut |_, _| {})
            .await
            .unwrap();
    }
    g.import_openapi("acme", SMALL_API, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection("petstore", "main", "header", Some("api_key"), Some(SECRET))
        .await
        .unwrap();
    g.add_connection("stripe", "test", "bearer", None, Some(SECRET))
        .await
        .unwrap();
    g.add_connection(
        "twilio",
        "main",
        "basic",
        None,
        Some(&format!("AC123:{SECRET}")),
    )
    .await
    .unwrap();
    g.add_connection("acme", "main", "query", Some("key"), Some(SECRET))
        .await
        .unwrap();
    let (agent_id, token) = agent(&app, "alpha").await;
    Setup {
        app,
        vendor,
        other,
        token,
        agent_id,
        _dir: dir,
    }
}

async fn setup() -> Setup {
    setup_with(None).await
}

async fn grant(s: &Setup, tool: &str) {
    let (v, n) = tool.split_once("__").unwrap();
    s.app
        .graft
        .decide_approval(&Actor::Person("ops".into()), "alpha", v, n, true)
        .await
        .unwrap();
}

#[tokio::test]
async fn reads_run_through_run_tool_and_first_class_alike() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let input = json!({"status": "available"});
    let via_run = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "find_pets_by_status", "input": input}),
    )
    .await;
    assert_eq!(via_run.is_error, Some(false), "{}", text(&via_run));
    let seen = s.vendor.last();
    assert_eq!(
        (
            seen.method.as_str(),
            seen.path.as_str(),
            seen.query.as_deref()
        ),
        (
            "GET",
            "/anything/pet/findByStatus",
            Some("status=available")
        )
    );
    assert_eq!(
        seen.headers["api_key"], SECRET,
        "the header connection's credential was sent"
    );
    assert!(
        seen.headers.get("authorization").is_none(),
        "the agent's own Authorization never reaches a vendor"
    );
    assert_no_secret(&via_run);
    assert!(via_run.structured_content.as_ref().unwrap().is_object());

    // first-class: not promoted → not_promoted; promoted → the same answer as run_tool
    let r = call(&client, "petstore__find_pets_by_status", input.clone()).await;
    assert_eq!(code(&r).as_deref(), Some("not_promoted"));
    assert!(text(&r).contains("run_tool"));
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "find_pets_by_status"}),
    )
    .await;
    let first_class = call(&client, "petstore__find_pets_by_status", input).await;
    assert_eq!(first_class.structured_content, via_run.structured_content);
    assert_eq!(text(&first_class), text(&via_run));

    let tool = s
        .app
        .graft
        .tool("petstore", "find_pets_by_status")
        .await
        .unwrap();
    let usage = graft::db::select_tool_usage(s.app.graft.pool(), s.agent_id, tool.id)
        .await
        .unwrap();
    assert_eq!(usage.map(|u| u.1), Some(2), "both real calls counted");
    let calls = graft::db::select_tool_calls(s.app.graft.pool(), s.agent_id)
        .await
        .unwrap();
    assert_eq!(calls.len(), 2, "the not_promoted refusal ran nothing");
    assert!(calls
        .iter()
        .all(|c| c.status == "ok" && c.http_status == Some(200) && c.version == 1));
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn invalid_input_lists_violations_and_sends_nothing() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "get_pet_by_id", "input": {"petId": "abc"}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    let v = &r.structured_content.unwrap()["error"]["violations"];
    assert_eq!(v[0]["pointer"], "/petId", "{v}");
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "get_pet_by_id", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    // path values cannot leave the path, raw or encoded
    for bad in ["../../admin", "a/b", "%2e%2e", "x?y", "..", "a#b"] {
        let r = call(
            &client,
            "run_tool",
            json!({"vendor": "acme", "name": "get_file", "input": {"path": bad}}),
        )
        .await;
        assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{bad}");
    }
    assert_eq!(s.vendor.count(), 0, "nothing reached the vendor");
    let ok = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_file", "input": {"path": "a b.txt"}}),
    )
    .await;
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(s.vendor.last().path, "/anything/files/a%20b.txt");
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "nope", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("tool_not_found"));
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn the_first_write_asks_a_person_and_the_approval_stands() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let add = json!({"vendor": "petstore", "name": "add_pet", "input": {"name": "rex", "photoUrls": ["u"]}});
    let r = call(&client, "run_tool", add.clone()).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    let err = &r.structured_content.as_ref().unwrap()["error"];
    assert!(err["approvalUrl"]
        .as_str()
        .unwrap()
        .contains("/approvals?agent=alpha&tool=petstore__add_pet"));
    assert!(err["tellUser"].as_str().unwrap().contains("approve"));
    assert_eq!(s.vendor.count(), 0, "nothing was sent before the approval");
    let pending = s.app.graft.approvals().await.unwrap();
    assert_eq!((pending.len(), pending[0].state.as_str()), (1, "pending"));
    // the count the console's nav shows
    assert_eq!(s.app.graft.pending_approvals().await.unwrap(), 1);
    // asking again does not add a second request
    call(&client, "run_tool", add.clone()).await;
    assert_eq!(s.app.graft.approvals().await.unwrap().len(), 1);

    // an agent cannot approve itself
    assert!(s
        .app
        .graft
        .decide_approval(
            &Actor::Agent(s.agent_id),
            "alpha",
            "petstore",
            "add_pet",
            true
        )
        .await
        .is_err());
    grant(&s, "petstore__add_pet").await;
    let r = call(&client, "run_tool", add.clone()).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = s.vendor.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(
        serde_json::from_str::<Value>(&seen.body).unwrap()["name"],
        "rex"
    );
    assert_eq!(seen.headers["content-type"], "application/json");

    // demote and re-promote: the approval stands
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    call(
        &client,
        "demote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "add_pet"}),
    )
    .await;
    let r = call(
        &client,
        "petstore__add_pet",
        json!({"name": "max", "photoUrls": []}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));

    // another agent, denied
    let (_, token_b) = agent(&s.app, "beta").await;
    let (b, _) = legacy_client(&s.app, &token_b, ProtocolVersion::V_2025_11_25).await;
    s.app
        .graft
        .decide_approval(
            &Actor::Person("ops".into()),
            "beta",
            "petstore",
            "add_pet",
            false,
        )
        .await
        .unwrap();
    let before = s.vendor.count();
    let r = call(&b, "run_tool", add).await;
    assert_eq!(code(&r).as_deref(), Some("approval_denied"));
    assert_eq!(s.vendor.count(), before);
    b.cancel().await.unwrap();
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn dry_runs_preview_writes_redacted_and_let_reads_through() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "stripe", "name": "post_customers", "input": {"email": "a@b.test", "metadata": {"order": "42"}}, "dryRun": true}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let sc = r.structured_content.clone().unwrap();
    assert_eq!(sc["dryRun"], true);
    assert_eq!(sc["request"]["method"], "POST");
    assert_eq!(
        sc["request"]["headers"]["Authorization"],
        "Bearer <redacted>"
    );
    assert!(sc["request"]["url"]
        .as_str()
        .unwrap()
        .ends_with("/anything/v1/customers"));
    assert_eq!(
        sc["request"]["body"],
        "email=a%40b.test&metadata%5Border%5D=42"
    );
    assert_no_secret(&r);
    assert_eq!(s.vendor.count(), 0, "a dry run of a write sends nothing");
    assert!(
        s.app.graft.approvals().await.unwrap().is_empty(),
        "no approval is asked by a dry run"
    );
    let tool = s.app.graft.tool("stripe", "post_customers").await.unwrap();
    assert!(
        graft::db::select_tool_usage(s.app.graft.pool(), s.agent_id, tool.id)
            .await
            .unwrap()
            .is_none()
    );

    // query credentials are redacted too
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "twilio", "name": "create_account", "input": {}, "dryRun": true}),
    )
    .await;
    assert_eq!(
        r.structured_content.unwrap()["request"]["headers"]["Authorization"],
        "Basic <redacted>"
    );

    // a dry run of a read reaches the vendor
    let r = call(&client, "run_tool", json!({"vendor": "acme", "name": "list_items", "input": {"tag": ["a", "b"]}, "dryRun": true})).await;
    assert_eq!(r.is_error, Some(false));
    let seen = s.vendor.last();
    assert_eq!(
        seen.query.as_deref(),
        Some(&*format!(
            "tag=a&tag=b&key={}",
            url::form_urlencoded::byte_serialize(SECRET.as_bytes()).collect::<String>()
        ))
    );
    assert_no_secret(&r);
    // a GET a person marked as writing (readOnlyHint false) is a write (SPEC §4.4): its
    // dry run goes on as a real read only after a person approved it, as a call would
    let sent = s.vendor.count();
    s.app
        .graft
        .set_hints(
            &graft::service::Actor::Person("ops".into()),
            "acme",
            "list_items",
            graft::service::authoring::HintChange {
                read_only: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "list_items", "input": {}, "dryRun": true}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    assert_eq!(
        s.vendor.count(),
        sent,
        "nothing was sent without the approval"
    );
    let calls = graft::db::select_tool_calls(s.app.graft.pool(), s.agent_id)
        .await
        .unwrap();
    assert_eq!(
        calls.iter().filter(|c| c.dry_run).count(),
        4,
        "dry runs are in the call log"
    );
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn form_bodies_basic_auth_and_two_path_parameters() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    grant(&s, "stripe__post_customers").await;
    let r = call(&client, "run_tool", json!({"vendor": "stripe", "name": "post_customers", "input": {"email": "a@b.test", "metadata": {"order": "42", "tier": "gold"}}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = s.vendor.last();
    assert_eq!(
        seen.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(seen.headers["authorization"], format!("Bearer {SECRET}"));
    assert_eq!(
        seen.body,
        "email=a%40b.test&metadata%5Border%5D=42&metadata%5Btier%5D=gold"
    );
    assert_no_secret(&r);

    // Stripe declares bodies on GET: they are sent as query parameters, never as a body
    let r = call(&client, "run_tool", json!({"vendor": "stripe", "name": "get_customers", "input": {"limit": 3, "email": "a@b.test"}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = s.vendor.last();
    assert_eq!((seen.method.as_str(), seen.body.as_str()), ("GET", ""));
    assert!(seen.query.as_deref().unwrap().contains("limit=3"));

    // Twilio: AccountSid declared at path level, Sid at operation level; Basic auth
    let list = graft::db::select_vendor_tools(s.app.graft.pool(), "twilio")
        .await
        .unwrap();
    let fetch = list
        .iter()
        .find(|t| {
            t.path_template == "/2010-04-01/Accounts/{AccountSid}/Addresses/{Sid}.json"
                && t.method == "GET"
        })
        .unwrap();
    let r = call(&client, "run_tool", json!({"vendor": "twilio", "name": fetch.name, "input": {"AccountSid": ACCOUNT, "Sid": ADDRESS}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let seen = s.vendor.last();
    assert_eq!(
        seen.path,
        format!("/anything/2010-04-01/Accounts/{ACCOUNT}/Addresses/{ADDRESS}.json")
    );
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("AC123:{SECRET}"));
    assert_eq!(seen.headers["authorization"], format!("Basic {basic}"));
    assert_no_secret(&r);
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn vendor_errors_timeouts_redirects_and_big_responses() {
    let limits = graft::proxy::ProxyLimits {
        connect_timeout: std::time::Duration::from_secs(2),
        total_timeout: std::time::Duration::from_secs(1),
        response_cap: 1 << 20,
        vendor_loopback: true,
        ..Default::default()
    };
    let s = setup_with(Some(limits)).await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "status", "input": {"code": 500}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"));
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["status"], 500);
    assert_eq!(e["body"]["error"]["message"], "boom");

    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "delay", "input": {"secs": 3}}),
    )
    .await;
    assert_eq!(
        code(&r).as_deref(),
        Some("vendor_unreachable"),
        "{}",
        text(&r)
    );
    assert!(!text(&r).contains(SECRET));

    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "redirect", "input": {}}),
    )
    .await;
    // issue 25.6: the agent learns where the answer is; nothing goes there
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["status"], 302);
    assert_eq!(sc["location"], format!("{}/stolen", s.other.url()));
    assert_eq!(
        s.other.count(),
        0,
        "a redirect to another origin is not followed"
    );

    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "big", "input": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));
    let t = text(&r);
    // cut at the response cap, then to the result budget, both said
    assert!(t.len() <= 512 * 1024, "{}", t.len());
    assert!(t.contains("characters not shown") && t.contains("response cap of 1048576 bytes"));

    let calls = graft::db::select_tool_calls(s.app.graft.pool(), s.agent_id)
        .await
        .unwrap();
    let codes: Vec<_> = calls
        .iter()
        .map(|c| (c.error_code.clone(), c.http_status))
        .collect();
    assert_eq!(
        codes,
        vec![
            (Some("vendor_error".into()), Some(500)),
            (Some("vendor_unreachable".into()), None),
            (None, Some(302)),
            (None, Some(200))
        ]
    );
    client.cancel().await.unwrap();
    s.app.stop().await;
}

/// Redirects are followed only while they stay under the vendor's base URL (origin and
/// base path, checked on every hop), so a credential never goes to another path of the
/// same host (security review 6h).
#[tokio::test]
async fn redirects_stay_under_the_vendors_base_path() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let doc = r#"{
      "openapi": "3.0.0", "info": {"title": "Scoped", "version": "1"},
      "paths": {
        "/hop-in": {"get": {"operationId": "hop_in"}},
        "/hop-out": {"get": {"operationId": "hop_out"}},
        "/hop-dots": {"get": {"operationId": "hop_dots"}},
        "/hop-post": {"post": {"operationId": "hop_post", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}}}}
      }
    }"#;
    let base = format!("{}/anything", v.url());
    app.graft
        .import_openapi("scoped", doc, Some(&base), &mut |_, _| {})
        .await
        .unwrap();
    app.graft
        .add_connection("scoped", "main", "bearer", None, Some(SECRET))
        .await
        .unwrap();
    let (_, token) = agent(&app, "alpha").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let run = |name: &'static str| {
        let client = &client;
        async move {
            call(
                client,
                "run_tool",
                json!({"vendor": "scoped", "name": name, "input": {}}),
            )
            .await
        }
    };
    let r = run("hop_in").await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(v.last().path, "/anything/landed");
    assert!(v.last().headers["authorization"]
        .to_str()
        .unwrap()
        .contains(SECRET));
    for name in ["hop_out", "hop_dots"] {
        let before = v.count();
        let r = run(name).await;
        assert_eq!(r.is_error, Some(false), "{name}: {}", text(&r));
        let sc = r.structured_content.unwrap();
        assert_eq!(sc["status"], 302);
        assert!(
            sc["location"].as_str().unwrap().starts_with(&v.url()),
            "{name}: resolved against the request: {sc}"
        );
        assert_eq!(v.count(), before, "{name}: nothing sent outside /anything");
    }
    // a 303 after a write continues as a GET without the body
    grant_tool(&app, "alpha", "scoped", "hop_post").await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "scoped", "name": "hop_post", "input": {"a": 1}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let landed = v.last();
    assert_eq!(
        (
            landed.method.as_str(),
            landed.path.as_str(),
            landed.body.as_str()
        ),
        ("GET", "/anything/landed", "")
    );
    assert!(landed.headers.get("content-type").is_none());
    client.cancel().await.unwrap();
    app.stop().await;
}

async fn grant_tool(app: &TestApp, agent: &str, vendor: &str, name: &str) {
    app.graft
        .decide_approval(
            &graft::service::Actor::Person("ops".into()),
            agent,
            vendor,
            name,
            true,
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn revoked_connections_answer_connection_revoked_and_secrets_stay_sealed() {
    let s = setup().await;
    // a header that HTTP cannot carry is refused when the connection is added
    for name in ["X Api Key", "X-@pi-Key", "x-key[]"] {
        let e = s
            .app
            .graft
            .add_connection("petstore", "odd", "header", Some(name), Some(SECRET))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("not a valid header name"),
            "{name}: {e}"
        );
    }
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let stored: Vec<Option<String>> = graft::on_db!(s.app.graft.pool(), |e| sqlx::query_scalar(
        "SELECT secret_ciphertext FROM connections"
    )
    .fetch_all(e)
    .await)
    .unwrap();
    assert!(stored
        .iter()
        .flatten()
        .all(|c| !c.contains(SECRET) && !c.contains("s3cret")));
    let listed = format!("{:?}", s.app.graft.connections().await.unwrap());
    assert!(!listed.contains(SECRET));

    let id = s
        .app
        .graft
        .connections()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.vendor == "petstore")
        .unwrap()
        .id;
    s.app
        .graft
        .revoke_connection(&Actor::Person("ops".into()), id)
        .await
        .unwrap();
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "find_pets_by_status", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("connection_revoked"));
    assert_eq!(s.vendor.count(), 0);
    assert!(
        s.app
            .graft
            .revoke_connection(&Actor::Person("ops".into()), id)
            .await
            .is_err(),
        "revoking twice is refused"
    );
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn a_wrong_secret_key_is_caught_before_serving() {
    let s = setup().await;
    assert!(s.app.graft.check_secret_key().await.is_ok());
    let url = db_url(s._dir.path());
    let other = open_graft(&url, std::sync::Arc::new(graft::service::SystemClock)).await;
    let e = other.check_secret_key().await.unwrap_err().to_string();
    assert!(e.contains("GRAFT_SECRET_KEY"), "{e}");
    s.app.stop().await;
}

#[tokio::test]
async fn a_shutdown_lets_calls_in_flight_finish() {
    let s = setup().await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let call_task = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let args = json!({"vendor": "acme", "name": "delay", "input": {"secs": 2}})
                .as_object()
                .cloned()
                .unwrap();
            peer.call_tool(rmcp::model::CallToolRequestParams::new("run_tool").with_arguments(args))
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    s.app.shutdown.cancel();
    let r = tokio::time::timeout(std::time::Duration::from_secs(10), call_task)
        .await
        .unwrap()
        .unwrap();
    let r = r.expect("the call in flight was answered");
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let calls = graft::db::select_tool_calls(s.app.graft.pool(), s.agent_id)
        .await
        .unwrap();
    assert_eq!(calls.len(), 1, "and recorded");
    let stopped = tokio::time::timeout(std::time::Duration::from_secs(10), s.app.server).await;
    assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
}

#[tokio::test]
async fn concurrent_writes_queue_instead_of_failing() {
    let s = setup().await;
    // agents publish only tools they authored: this one's
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let r = call(&client, "acquire", json!({"vendor": "acme", "name": "mine", "description": "Mine", "method": "GET", "path": "/big", "inputSchema": {"type": "object"}})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..12 {
        let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
        tasks.push(tokio::spawn(async move {
            let r = call(&client, "publish", json!({"vendor": "acme", "name": "mine", "description": format!("mine v{i}")})).await;
            let p = call(&client, "promote", json!({"vendor": "petstore", "name": format!("{}", ["add_pet", "get_pet_by_id", "update_pet"][i % 3])})).await;
            client.cancel().await.unwrap();
            (r, p)
        }));
    }
    let mut versions = Vec::new();
    for t in tasks {
        let (r, p) = t.await.unwrap();
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(p.is_error, Some(false), "{}", text(&p));
        versions.push(r.structured_content.unwrap()["version"].as_i64().unwrap());
    }
    versions.sort_unstable();
    assert_eq!(
        versions,
        (2..14).collect::<Vec<_>>(),
        "each publish got its own version"
    );
    s.app.stop().await;
}

/// Every call lands in the calls log with its outcome, the vendor's status, the error
/// told to the agent and its input with secrets redacted: first-class calls and run_tool,
/// dry runs, refusals by Graft and failures at the vendor (issue 14.4). The approval
/// listing shows the request a person approves and the input of the call that asked.
#[tokio::test]
async fn the_calls_log_keeps_every_call_with_its_outcome_and_redacted_input() {
    use graft::db::{CallFilter, CallOutcome};
    let limits = graft::proxy::ProxyLimits {
        total_timeout: std::time::Duration::from_secs(1),
        vendor_loopback: true,
        ..Default::default()
    };
    let s = setup_with(Some(limits)).await;
    let (client, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let run = |name: &str, input: Value| json!({"vendor": "acme", "name": name, "input": input});
    // 1. a read through run_tool that succeeds, echoing the connection's secret
    let r = call(
        &client,
        "run_tool",
        run("list_items", json!({"tag": [SECRET, "b"]})),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // 2. a first-class call the vendor fails
    call(
        &client,
        "promote",
        json!({"vendor": "acme", "name": "status"}),
    )
    .await;
    let r = call(&client, "acme__status", json!({"code": 503})).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"));
    // 3. input the schema refuses
    let r = call(&client, "run_tool", run("status", json!({"code": "x"}))).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"));
    // 4. a vendor that does not answer in time
    let r = call(&client, "run_tool", run("delay", json!({"secs": 3}))).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_unreachable"));
    // 5. a write's dry run, then the write itself, which waits for approval
    let pet = json!({"name": "rex", "photoUrls": ["u"], "category": {"name": "c", "password": "hunter22"}});
    let add =
        |dry: bool| json!({"vendor": "petstore", "name": "add_pet", "input": pet, "dryRun": dry});
    let r = call(&client, "run_tool", add(true)).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = call(&client, "run_tool", add(false)).await;
    assert_eq!(code(&r).as_deref(), Some("approval_required"));
    // not a call: a tool that does not exist runs nothing and logs nothing
    let r = call(&client, "run_tool", run("nope", json!({}))).await;
    assert!(r.is_error == Some(true) && code(&r).as_deref() != Some("invalid_input"));

    let g = &s.app.graft;
    let all = g.calls(&CallFilter::default(), 50).await.unwrap();
    let seen: Vec<(&str, String, Option<i64>)> = all
        .iter()
        .map(|c| {
            (
                c.outcome(),
                format!("{}__{}", c.vendor, c.name),
                c.http_status,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("waits for approval", "petstore__add_pet".to_string(), None),
            ("dry run", "petstore__add_pet".to_string(), None),
            ("vendor unreachable", "acme__delay".to_string(), None),
            ("invalid input", "acme__status".to_string(), None),
            ("vendor error", "acme__status".to_string(), Some(503)),
            ("ok", "acme__list_items".to_string(), Some(200)),
        ]
    );
    assert!(all.iter().all(|c| c.agent == "alpha" && c.version == 1));
    for c in &all {
        let logged = format!("{:?} {:?}", c.input, c.message);
        assert!(!logged.contains(SECRET), "a secret in the log: {logged}");
        assert!(
            !logged.contains("hunter22"),
            "a password in the log: {logged}"
        );
    }
    let input = |i: usize| serde_json::from_str::<Value>(all[i].input.as_deref().unwrap()).unwrap();
    assert_eq!(input(5), json!({"tag": ["<redacted>", "b"]}));
    assert_eq!(input(4), json!({"code": 503}));
    assert_eq!(
        input(0),
        json!({"name": "rex", "photoUrls": ["u"], "category": {"name": "c", "password": "<redacted>"}})
    );
    assert!(
        all[4]
            .message
            .as_deref()
            .unwrap()
            .starts_with("acme answered HTTP 503 Service Unavailable."),
        "{:?}",
        all[4].message
    );
    assert!(
        all[3].message.as_deref().unwrap().contains("/code"),
        "{:?}",
        all[3].message
    );
    assert!(all[5].message.is_none());

    // narrowed by outcome, by tool, by agent, and paged by id
    let outcomes = |o| {
        let f = CallFilter {
            outcome: Some(o),
            ..Default::default()
        };
        async move {
            g.calls(&f, 50)
                .await
                .unwrap()
                .iter()
                .map(|c| c.outcome())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        outcomes(CallOutcome::Failed).await,
        ["vendor unreachable", "invalid input", "vendor error"],
        "waiting for a person is not a failure"
    );
    assert_eq!(outcomes(CallOutcome::Ok).await, ["dry run", "ok"]);
    assert_eq!(outcomes(CallOutcome::DryRun).await, ["dry run"]);
    assert_eq!(
        outcomes(CallOutcome::Approval).await,
        ["waits for approval"]
    );
    let status = g.tool("acme", "status").await.unwrap();
    let f = CallFilter {
        tool_id: Some(status.id),
        ..Default::default()
    };
    assert_eq!(g.calls(&f, 50).await.unwrap().len(), 2);
    let f = CallFilter {
        before: Some(all[1].id),
        ..Default::default()
    };
    assert_eq!(g.calls(&f, 2).await.unwrap(), all[2..4].to_vec());
    let (beta, _) = agent(&s.app, "beta").await;
    let f = CallFilter {
        agent_id: Some(beta),
        ..Default::default()
    };
    assert!(g.calls(&f, 50).await.unwrap().is_empty());

    // last used keeps its meaning: only calls that reached the vendor count
    let usage = |tool: &str| {
        let tool = tool.to_string();
        async move {
            let t = g.tool("acme", &tool).await.unwrap();
            graft::db::select_tool_usage(g.pool(), s.agent_id, t.id)
                .await
                .unwrap()
                .map(|u| u.1)
        }
    };
    assert_eq!(usage("list_items").await, Some(1));
    assert_eq!(usage("status").await, Some(1), "the 503 reached the vendor");
    assert_eq!(usage("delay").await, None);

    // the approval shows what it is for
    let a = g.approvals().await.unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(
        (a[0].request.method.as_deref(), a[0].request.path.as_deref()),
        (Some("POST"), Some("/pet"))
    );
    assert!(a[0].request.description.as_deref().unwrap().contains("pet"));
    assert_eq!(
        serde_json::from_str::<Value>(a[0].request.input.as_deref().unwrap()).unwrap(),
        input(0)
    );
    client.cancel().await.unwrap();
    s.app.stop().await;
}
