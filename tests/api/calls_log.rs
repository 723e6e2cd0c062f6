//! The calls log in the console (issue 28.9): every agent's calls with the CLI's filters,
//! and each call's detail: the request as sent and the vendor's answer, kept redacted
//! (the connection's secret, secret-looking fields, the input's secret values), none for
//! a call that never reached the vendor, pruned to the newest calls.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::service::{Actor, DecideHow};
use serde_json::{json, Value};

const API: &str = r#"
openapi: 3.0.3
info: {title: Acme, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /accounts:
    post:
      operationId: createAccount
      requestBody:
        content: {application/json: {schema: {type: object, properties: {user: {type: string}, password: {type: string}}}}}
      responses: {"200": {description: ok}}
  /status/{code}:
    get:
      operationId: getStatus
      parameters: [{name: code, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok}}
"#;

#[tokio::test]
async fn the_console_lists_every_call_and_shows_what_each_sent_and_got_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection_choosing(
        &ops,
        "acme",
        "key",
        "bearer",
        None,
        Some("sekret-4471"),
        None,
    )
    .await
    .unwrap();
    let (_, token) = agent(&app, "bot").await;
    let (_, other_token) = agent(&app, "other").await;
    let client = modern_client(&app, &token).await;
    let other = modern_client(&app, &other_token).await;

    let run = |name: &str, input: Value| json!({"vendor": "acme", "name": name, "input": input});
    // a read that reached the vendor; a vendor error; a refused input; a write with a
    // password, approved, whose answer echoes it
    let r = call(&client, "run_tool", run("get_item", json!({"id": "42"}))).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(&client, "run_tool", run("get_status", json!({"code": 404}))).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_error"), "{}", text(&r));
    let r = call(&client, "run_tool", run("get_item", json!({}))).await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    let write = run(
        "create_account",
        json!({"user": "kim", "password": "hunter2-9913"}),
    );
    let r = call(&client, "run_tool", write.clone()).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    g.decide_approval_seen(
        &ops,
        "bot",
        "acme",
        "create_account",
        &DecideHow {
            grant: true,
            seen: None,
            reason: None,
        },
    )
    .await
    .unwrap();
    let r = call(&client, "run_tool", write).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(v.last().body.contains("hunter2-9913"), "the vendor got it");
    let r = call(&other, "run_tool", run("get_item", json!({"id": "7"}))).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let list = |b: &mut Browser, form: Vec<(&'static str, String)>| {
        let form: Vec<(&str, String)> = form;
        let mut b2 = std::mem::replace(b, Browser::new(&app));
        async move {
            let f: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let r = b2.call("calls_log", &f).await;
            (b2, r)
        }
    };
    let (b2, r) = list(&mut b, vec![]).await;
    b = b2;
    let all: Value = r.json().await.unwrap();
    let calls = all["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 6, "{all}");
    assert_eq!(calls[0]["agent"], "other", "newest first");
    let (b2, r) = list(
        &mut b,
        vec![("agent", "bot".into()), ("outcome", "failed".into())],
    )
    .await;
    b = b2;
    let failed: Value = r.json().await.unwrap();
    let outcomes: Vec<&str> = failed["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["acme__get_item", "acme__get_status"], "{failed}");
    let (b2, r) = list(&mut b, vec![("outcome", "maybe".into())]).await;
    b = b2;
    assert!(r.text().await.unwrap().contains("not an outcome"));

    let id_of = |tool: &str, nth: usize| -> i64 {
        calls
            .iter()
            .filter(|c| c["tool"] == tool && c["agent"] == "bot")
            .nth(nth)
            .unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let detail = |b: &mut Browser, id: i64| {
        let mut b2 = std::mem::replace(b, Browser::new(&app));
        async move {
            let d: Value = b2
                .call("call_detail", &[("id", &id.to_string())])
                .await
                .json()
                .await
                .unwrap();
            (b2, d)
        }
    };
    // the read: the request with its credential redacted, the answer
    let (b2, read) = detail(&mut b, id_of("acme__get_item", 1)).await;
    b = b2;
    let request: Value = serde_json::from_str(read["request"].as_str().unwrap()).unwrap();
    assert_eq!(request["method"], "GET");
    assert!(
        request["url"].as_str().unwrap().ends_with("/items/42"),
        "{request}"
    );
    assert_eq!(
        request["headers"]["Authorization"], "<redacted>",
        "{request}"
    );
    let response: Value = serde_json::from_str(read["response"].as_str().unwrap()).unwrap();
    assert_eq!(response["status"], 200);
    assert!(
        response["body"].to_string().contains("/items/42"),
        "{response}"
    );
    // the vendor's error: its status and body
    let (b2, err) = detail(&mut b, id_of("acme__get_status", 0)).await;
    b = b2;
    let response: Value = serde_json::from_str(err["response"].as_str().unwrap()).unwrap();
    assert_eq!(response["status"], 404);
    assert_eq!(response["body"]["error"]["message"], "boom", "{response}");
    // refused by Graft: nothing was sent, nothing kept
    let (b2, refused) = detail(&mut b, id_of("acme__get_item", 0)).await;
    b = b2;
    assert_eq!(refused["call"]["outcome"], "invalid input", "{refused}");
    assert_eq!(refused["request"], Value::Null);
    // the write: the password is redacted in the request and in the echoed answer
    let (b2, wrote) = detail(&mut b, id_of("acme__create_account", 0)).await;
    b = b2;
    let all_text = wrote.to_string();
    assert!(all_text.contains("kim"), "{wrote}");
    for secret in ["hunter2-9913", "sekret-4471"] {
        assert!(!all_text.contains(secret), "{secret} leaked: {wrote}");
    }
    let (b2, r) = {
        let mut b2 = std::mem::replace(&mut b, Browser::new(&app));
        let r = b2.call("call_detail", &[("id", "99999")]).await;
        (b2, r)
    };
    b = b2;
    assert!(r.text().await.unwrap().contains("no call 99999"));
    // a page address that is not a number says how calls are named
    let page = b.get("/calls/abc").await;
    assert_eq!(page.status(), 404);
    let page = page.text().await.unwrap();
    assert!(page.contains("named by its number"), "{page}");

    // the pages: the list links each call to its detail; the detail without JavaScript
    let page = b.get("/calls?agent=bot").await.text().await.unwrap();
    let read_id = id_of("acme__get_item", 1);
    assert!(
        page.contains(&format!("href=\"/calls/{read_id}\"")),
        "{page}"
    );
    assert!(!page.contains(">other</a>"), "filtered to bot: {page}");
    let page = b
        .get(&format!("/calls/{read_id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("Request sent") && page.contains("/items/42"),
        "{page}"
    );
    assert!(!page.contains("sekret-4471"), "{page}");
    let refused_id = id_of("acme__get_item", 0);
    let page = b
        .get(&format!("/calls/{refused_id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Nothing reached the vendor"), "{page}");

    // pruned to the newest: the older details go, the calls stay
    let pruned = graft::db::prune_call_details(g.pool(), 1).await.unwrap();
    assert_eq!(pruned, 3, "four details were kept, the newest stays");
    let (b2, read) = detail(&mut b, read_id).await;
    assert_eq!(read["request"], Value::Null);
    assert_eq!(read["call"]["id"], read_id);
    drop(b2);
    client.cancel().await.unwrap();
    other.cancel().await.unwrap();
    app.stop().await;
}
