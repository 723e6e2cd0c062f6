//! The tool page a person edits (issue 28.10): the description rendered from Markdown
//! with nothing of it run, a note, the connection the tool's calls use, a new version
//! published with the changes from the one before, all through the console's server
//! functions and pages (hydrated calls and plain form posts), checked where they land:
//! the vendor's requests, an agent's tools/list through a real MCP client, the audit log.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::db::AuditQuery;
use graft::domain::audit::AuditAction;
use graft::service::Actor;
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
      description: |
        Reads **one item** by its id.

        - pages of 100
        - <script>alert('x')</script>

        [Guide](https://acme.example/guide) and [trap](javascript:alert(1))
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
"#;

/// The error a server function answered with, as JSON text ("" when it succeeded).
async fn answer(r: reqwest::Response) -> String {
    let status = r.status();
    let body = r.text().await.unwrap();
    if status.is_success() {
        String::new()
    } else {
        body
    }
}

#[tokio::test]
async fn a_person_renders_notes_connects_and_publishes_a_tool_from_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let ops = Actor::Person("ops".into());
    g.add_connection_choosing(
        &ops,
        "acme",
        "prod",
        "bearer",
        None,
        Some("prod-secret-1"),
        None,
    )
    .await
    .unwrap();
    let sandbox = g
        .add_connection_choosing(
            &ops,
            "acme",
            "sandbox",
            "bearer",
            None,
            Some("sandbox-secret-2"),
            Some(graft::service::connection_care::DefaultChoice::Current),
        )
        .await
        .unwrap();
    let (id, token) = agent(&app, "bot").await;
    g.promote_tool(&Actor::Agent(id), id, "acme", "get_item")
        .await
        .unwrap();
    let client = modern_client(&app, &token).await;
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let url = "/tools/acme/get_item";

    // the description as Markdown: emphasis, a list and a safe link; nothing runs
    let page = b.get(url).await.text().await.unwrap();
    assert!(page.contains("<strong>one item</strong>"), "{page}");
    assert!(page.contains("<li>pages of 100</li>"), "{page}");
    assert!(
        page.contains(r#"<a href="https://acme.example/guide">Guide</a>"#),
        "{page}"
    );
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(page.contains("&lt;script&gt;"), "{page}");
    assert!(!page.to_lowercase().contains("href=\"javascript"), "{page}");
    // both live connections offered, the vendor's default chosen
    assert!(page.contains(">sandbox</option>"), "{page}");
    assert!(
        page.contains("the vendor&#x27;s default") || page.contains("the vendor's default"),
        "{page}"
    );

    // a note: empty refused at its field, then kept and shown, under the person's name
    let e = answer(
        b.call(
            "add_tool_note",
            &[("vendor", "acme"), ("name", "get_item"), ("body", "  ")],
        )
        .await,
    )
    .await;
    assert!(e.contains("body") && e.contains("1 to 4000"), "{e}");
    let r = b
        .post_form(
            "add_tool_note",
            url,
            &[
                ("vendor", "acme"),
                ("name", "get_item"),
                ("body", "use the sandbox for tests"),
            ],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let page = b.get(url).await.text().await.unwrap();
    assert!(page.contains("use the sandbox for tests"), "{page}");

    // the connection its calls use: the sandbox's key goes out, then the default again
    let call = json!({"vendor": "acme", "name": "get_item", "input": {"id": "1"}});
    let _ = crate::helpers::call(&client, "run_tool", call.clone()).await;
    assert_eq!(v.last().headers["authorization"], "Bearer prod-secret-1");
    for bad in ["x", "999999"] {
        let e = answer(
            b.call(
                "choose_tool_connection",
                &[
                    ("vendor", "acme"),
                    ("name", "get_item"),
                    ("connection", bad),
                ],
            )
            .await,
        )
        .await;
        assert!(e.contains("connection"), "{bad}: {e}");
    }
    let sid = sandbox.id.to_string();
    let e = answer(
        b.call(
            "choose_tool_connection",
            &[
                ("vendor", "acme"),
                ("name", "get_item"),
                ("connection", &sid),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(e, "");
    let r = crate::helpers::call(&client, "run_tool", call.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(v.last().headers["authorization"], "Bearer sandbox-secret-2");
    let page = b.get(url).await.text().await.unwrap();
    assert!(page.contains("<strong>sandbox</strong>"), "{page}");
    let e = answer(
        b.call(
            "choose_tool_connection",
            &[("vendor", "acme"), ("name", "get_item"), ("connection", "")],
        )
        .await,
    )
    .await;
    assert_eq!(e, "");
    let _ = crate::helpers::call(&client, "run_tool", call.clone()).await;
    assert_eq!(v.last().headers["authorization"], "Bearer prod-secret-1");

    // Try it: the request a call would send, the key redacted, nothing sent or logged
    let sent = v.count();
    let calls = g.calls(&Default::default(), 100).await.unwrap().len();
    let page = b.get(url).await.text().await.unwrap();
    assert!(page.contains(r#"name="in.id""#), "{page}");
    assert!(page.contains("id (required)"), "{page}");
    assert!(page.contains(r#"action="/tools/try""#), "posted: {page}");
    let loc = b.dry_run("acme", "get_item", &[("in.id", "7")]).await;
    // the values stay out of the address
    assert!(loc.starts_with("/tools/acme/get_item?tried="), "{loc}");
    assert!(loc.ends_with("#try") && !loc.contains("in."), "{loc}");
    let page = b.get(&loc).await.text().await.unwrap();
    assert!(page.contains("The request an agent"), "{page}");
    assert!(page.contains("/items/7\""), "{page}");
    assert!(page.contains("&lt;redacted&gt;"), "{page}");
    assert!(
        !page.contains("prod-secret-1") && !page.contains("sandbox-secret-2"),
        "{page}"
    );
    // the form shows what was typed again
    assert!(page.contains(r#"name="in.id" value="7""#), "{page}");
    let loc = b.dry_run("acme", "get_item", &[("in.id", "")]).await;
    let page = b.get(&loc).await.text().await.unwrap();
    assert!(page.contains("An agent"), "{page}");
    assert!(page.contains("invalid_input"), "{page}");
    // the whole input as JSON
    let loc = b
        .dry_run("acme", "get_item", &[("in.", r#"{"id": "5"}"#)])
        .await;
    let page = b.get(&loc).await.text().await.unwrap();
    assert!(page.contains("/items/5\""), "{page}");
    // another person does not see it
    g.add_user("kim", PASSWORD).await.unwrap();
    let mut kim = Browser::new(&app);
    kim.sign_in("kim", PASSWORD).await;
    let theirs = kim.get(&loc).await.text().await.unwrap();
    assert!(theirs.contains("Try no longer kept"), "{theirs}");
    assert!(!theirs.contains("/items/5"), "{theirs}");
    assert_eq!(v.count(), sent, "a try sends nothing");
    assert_eq!(
        g.calls(&Default::default(), 100).await.unwrap().len(),
        calls,
        "nor logs"
    );

    // a new version: nothing changed, bad JSON, a stale version are refused, nothing written
    let tool = g.tool("acme", "get_item").await.unwrap();
    let schema = tool.input_schema.clone();
    let publish = |seen: &str, description: &str, schema: &str| -> Vec<(String, String)> {
        [
            ("vendor", "acme"),
            ("name", "get_item"),
            ("seen", seen),
            ("description", description),
            ("input_schema", schema),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec()
    };
    for (fields, says) in [
        (publish("1", &tool.description, &schema), "nothing changed"),
        (publish("1", "Reads one item.", "{not json"), "not JSON"),
        (
            publish(
                "1",
                "Reads one item.",
                r#"{"type": "object", "properties": {"id": {"type": 7}}}"#,
            ),
            "input_schema",
        ),
        (publish("0", "Reads one item.", &schema), "version 1 now"),
    ] {
        let f: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let e = answer(b.call("publish_tool", &f).await).await;
        assert!(e.contains(says), "{says}: {e}");
    }
    // a description refused beside a changed schema is the description's fault, and
    // marked there, not at the schema
    let fields = publish(
        "1",
        " ",
        r#"{"type": "object", "properties": {"id": {"type": "string"}, "x": {"type": "string"}}}"#,
    );
    let f: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let e = answer(b.call("publish_tool", &f).await).await;
    assert!(
        e.contains("description is empty") && !e.contains("input_schema"),
        "{e}"
    );
    assert_eq!(g.tool("acme", "get_item").await.unwrap().version, 1);

    // published as a form posts it (CRLF line ends): version 2, the agent told, the diff
    let before = client.peer().list_all_tools().await.unwrap();
    let old = before.iter().find(|t| t.name == "acme__get_item").unwrap();
    assert!(old
        .description
        .as_deref()
        .unwrap_or("")
        .contains("one item"));
    let fields = publish(
        "1",
        "Reads one item by its id.\r\n\r\nUse the **sandbox** for tests.",
        &schema,
    );
    let f: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = b.post_form("publish_tool", url, &f).await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let t = g.tool("acme", "get_item").await.unwrap();
    assert_eq!(t.version, 2);
    assert_eq!(
        t.description,
        "Reads one item by its id.\n\nUse the **sandbox** for tests."
    );
    let after = client.peer().list_all_tools().await.unwrap();
    let new = after.iter().find(|t| t.name == "acme__get_item").unwrap();
    assert!(
        new.description
            .as_deref()
            .unwrap_or("")
            .contains("Use the **sandbox** for tests"),
        "{new:?}"
    );
    let page = b.get(url).await.text().await.unwrap();
    assert!(page.contains("Changes from version 1"), "{page}");
    assert!(
        page.contains(r#"<span class="line removed">- Reads **one item** by its id."#),
        "{page}"
    );
    assert!(
        page.contains(r#"<span class="line added">+ Use the **sandbox** for tests."#),
        "{page}"
    );
    assert!(page.contains("Publish version 3"), "{page}");
    // a schema change: the agent's calls take the new input
    let wider = r#"{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "fields": {"type": "string"}}}"#;
    let fields = publish("2", &t.description, wider);
    let f: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(answer(b.call("publish_tool", &f).await).await, "");
    let t = g.tool("acme", "get_item").await.unwrap();
    assert_eq!(t.version, 3);
    let s: Value = serde_json::from_str(&t.input_schema).unwrap();
    assert_eq!(s["properties"]["fields"]["type"], "string", "{s}");

    // each person's action in the audit log
    let events = g
        .audit_events(&AuditQuery {
            person: Some("ops".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let did: Vec<(AuditAction, String)> = events
        .iter()
        .map(|e| (e.action, e.target.clone()))
        .collect();
    for want in [
        (AuditAction::ToolNote, "acme__get_item".to_string()),
        (AuditAction::ConnectionDefault, "acme".to_string()),
        (AuditAction::ToolPublish, "acme__get_item".to_string()),
    ] {
        assert!(did.contains(&want), "{want:?} in {did:?}");
    }
    client.cancel().await.unwrap();
    app.stop().await;
}

/// Try it, then Send (issue 28.10): after a dry run a person sends the tool to the
/// vendor with the connection's credential and sees its answer, redacted, with or
/// without JavaScript; a write is sent only when confirmed, without asking an approval;
/// each send is audited and none is in the calls log (no agent made it).
/// The fields of the send form of `shop`'s `tool` after the dry run kept as `tried`.
fn send_form(tool: &str, tried: &str) -> Vec<(String, String)> {
    [("vendor", "shop"), ("name", tool), ("tried", tried)]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec()
}

/// The error `send_tool` answers for `shop`'s `tool` and the dry run `tried` ("" when
/// it sent).
async fn send_error(b: &mut Browser, tool: &str, tried: &str) -> String {
    answer(b.call("send_tool", &pairs(&send_form(tool, tried))).await).await
}

/// `form` as the pairs `Browser` posts.
fn pairs(form: &[(String, String)]) -> Vec<(&str, &str)> {
    form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[tokio::test]
async fn a_person_sends_a_tool_from_its_page_and_confirms_a_write() {
    const SHOP: &str = r#"
openapi: 3.0.3
info: {title: Shop, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /anything/items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /anything/items:
    post:
      operationId: createItem
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                code: {type: string, format: password, minLength: 12}
                pin: {type: integer}
                config: {type: object}
      responses: {"200": {description: ok}}
"#;
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("shop", SHOP, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    // before the vendor has a connection, Try it says its calls will be refused, and
    // where to add one
    let page = b.get("/tools/shop/get_item").await.text().await.unwrap();
    assert!(
        page.contains("shop has no connection: a send goes without a credential"),
        "{page}"
    );
    assert!(
        page.contains(r#"href="/vendors/shop#connections""#),
        "{page}"
    );
    g.add_connection("shop", "prod", "bearer", None, Some("shop-secret-77"))
        .await
        .unwrap();
    let page = b.get("/tools/shop/get_item").await.text().await.unwrap();
    assert!(!page.contains("has no connection"), "{page}");
    let calls = g.calls(&Default::default(), 100).await.unwrap().len();

    // a read: sent with the credential, the answer shown (the echo quotes the
    // credential back: redacted), kept across a reload
    let tried = b.dry_run("shop", "get_item", &[("in.id", "7")]).await;
    let page = b.get(&tried).await.text().await.unwrap();
    assert!(page.contains("Send to the vendor"), "{page}");
    let id_in = |loc: &str, param: &str| -> String {
        let id = loc.split(&format!("{param}=")).nth(1).unwrap();
        id.trim_end_matches("#try").to_string()
    };
    let dry = id_in(&tried, "tried");
    assert!(
        page.contains(&format!(r#"name="tried" value="{dry}""#)),
        "{page}"
    );
    let r = b
        .post_form("send_tool", &tried, &pairs(&send_form("get_item", &dry)))
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert!(loc.starts_with("/tools/shop/get_item?sent="), "{loc}");
    // what was sent stays out of the address too
    assert!(loc.ends_with("#try") && !loc.contains("in."), "{loc}");
    assert_eq!(v.count(), 1);
    assert_eq!(v.last().path, "/anything/items/7");
    assert_eq!(v.last().headers["authorization"], "Bearer shop-secret-77");
    // a dry run is sent once: the same form posted again (back, resubmit) sends nothing
    let e = send_error(&mut b, "get_item", &dry).await;
    assert!(e.contains("no dry run of yours to send here"), "{e}");
    assert_eq!(v.count(), 1, "sent once");
    for _ in 0..2 {
        let page = b.get(&loc).await.text().await.unwrap();
        assert!(page.contains("What the vendor answered"), "{page}");
        assert!(page.contains(r#"name="in.id" value="7""#), "{page}");
        assert!(page.contains("HTTP 200"), "the vendor's status: {page}");
        assert!(page.contains("/anything/items/7"), "{page}");
        assert!(!page.contains("shop-secret-77"), "{page}");
    }
    // the answer belongs to its tool: another tool's page does not show it
    let sent = id_in(&loc, "sent");
    let other = b
        .get(&format!("/tools/shop/create_item?sent={sent}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(other.contains("Try no longer kept"), "{other}");
    assert!(!other.contains("/anything/items/7"), "{other}");
    // a dry run no longer kept (or another person's) sends nothing
    let e = send_error(&mut b, "get_item", "0123abcd").await;
    assert!(e.contains("no dry run of yours to send here"), "{e}");
    assert_eq!(v.count(), 1, "nothing sent");

    // what was dry-run is what is sent: a tool changed since is refused, nothing sent
    let tried = b.dry_run("shop", "get_item", &[("in.id", "8")]).await;
    let tool = g.tool("shop", "get_item").await.unwrap();
    let seen = tool.version.to_string();
    let r = b
        .call(
            "publish_tool",
            &[
                ("vendor", "shop"),
                ("name", "get_item"),
                ("seen", seen.as_str()),
                ("description", "Reads one item, again."),
                ("input_schema", tool.input_schema.as_str()),
            ],
        )
        .await;
    assert_eq!(answer(r).await, "");
    let e = send_error(&mut b, "get_item", &id_in(&tried, "tried")).await;
    assert!(e.contains("changed since your dry run"), "{e}");
    assert_eq!(v.count(), 1, "nothing sent");
    // published by another process (the CLI), whose change reaches this one's cache
    // within a second: a send right after is refused all the same
    let tried = b.dry_run("shop", "get_item", &[("in.id", "9")]).await;
    let (ok, out) = cli(
        dir.path(),
        &[
            "tool",
            "publish",
            "shop__get_item",
            "--description",
            "Reads one item, from the command line.",
        ],
        &[("USER", "ana")],
    )
    .await;
    assert!(ok, "{out}");
    let e = send_error(&mut b, "get_item", &id_in(&tried, "tried")).await;
    assert!(
        e.contains("changed since your dry run (version 2, now 3)"),
        "{e}"
    );
    assert_eq!(v.count(), 1, "nothing sent");

    // a write: refused until confirmed, then sent without an approval; a secret field
    // stays out of the address, the page and the vendor's answer as shown
    let page = b.get("/tools/shop/create_item").await.text().await.unwrap();
    assert!(
        page.contains(r#"<input type="password" name="in.code""#),
        "a secret is typed unseen: {page}"
    );
    // refusals quote no secret, at their field: the schema's (too short), the form's
    // (not a number, not JSON), and nothing typed comes back but the form's own fields
    for (field, value, said) in [
        ("in.code", "4321-hush", "At code:"),
        ("in.code", "4321-hush", "shorter than 12"),
        ("in.pin", "86x42pin", "the value is not an integer"),
        (
            "in.config",
            r#"{"api_key":"AKIA_NESTED_KEY","#,
            "the value is not JSON",
        ),
    ] {
        let tried = b
            .dry_run(
                "shop",
                "create_item",
                &[("in.name", "pen"), (field, value), ("in.token", "SEKRET99")],
            )
            .await;
        let page = b.get(&tried).await.text().await.unwrap();
        assert!(page.contains(said), "{page}");
        assert!(
            !page.contains("AKIA_NESTED_KEY") && !page.contains("4321-hush"),
            "{page}"
        );
        assert!(
            !page.contains("86x42pin") && !page.contains("SEKRET99"),
            "{page}"
        );
    }
    let tried = b
        .dry_run(
            "shop",
            "create_item",
            &[
                ("in.name", "pen"),
                ("in.code", "4321-hush-hush"),
                ("in.pin", "86429"),
                ("in.config", r#"{"api_key": "KEYVALUE123", "size": 2}"#),
            ],
        )
        .await;
    assert!(!tried.contains("hush"), "{tried}");
    let page = b.get(&tried).await.text().await.unwrap();
    assert!(page.contains("The request an agent"), "{page}");
    // the preview redacts a secret of any type; the form shows none of them again
    assert!(page.contains(r#""pin": "&lt;redacted&gt;""#), "{page}");
    assert!(page.contains(r#""api_key": "&lt;redacted&gt;""#), "{page}");
    for secret in ["4321-hush", "86429", "KEYVALUE123"] {
        assert!(!page.contains(secret), "{secret}: {page}");
    }
    assert!(page.contains(r#"name="in.name" value="pen""#), "{page}");
    let dry = id_in(&tried, "tried");
    let mut write = send_form("create_item", &dry);
    let e = answer(b.call("send_tool", &pairs(&write)).await).await;
    assert!(e.contains("Send this write"), "{e}");
    assert_eq!(v.count(), 1, "nothing sent");
    write.push(("confirm".into(), "yes".into()));
    let r = b.post_form("send_tool", &tried, &pairs(&write)).await;
    assert!(r.status().is_redirection(), "{}", r.status());
    assert_eq!(v.count(), 2);
    assert_eq!(v.last().method, "POST");
    assert!(v.last().body.contains("pen"), "{}", v.last().body);
    assert!(v.last().body.contains("4321-hush"), "sent as typed");
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let page = b.get(&loc).await.text().await.unwrap();
    assert!(page.contains("What the vendor answered"), "{page}");
    assert!(!page.contains("4321-hush"), "the echo redacted: {page}");
    // a send is not a dry run to send again
    let e = send_error(&mut b, "create_item", &id_in(&loc, "sent")).await;
    assert!(e.contains("no dry run of yours to send here"), "{e}");
    assert_eq!(v.count(), 2, "nothing sent");

    // audited under the person's name, the refused sends too, with why; the calls log
    // holds agents' calls only
    assert_eq!(
        g.calls(&Default::default(), 100).await.unwrap().len(),
        calls
    );
    let events = g
        .audit_events(&AuditQuery {
            person: Some("ops".into()),
            action: Some(AuditAction::ToolTry),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut said: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.target.as_str(), e.detail.as_deref().unwrap_or("")))
        .collect();
    said.sort();
    assert_eq!(
        said,
        [
            ("shop__create_item", "version 1: HTTP 200"),
            (
                "shop__create_item",
                "version 1: not sent: a write not confirmed"
            ),
            ("shop__get_item", "version 1: HTTP 200"),
            (
                "shop__get_item",
                "version 2: not sent: changed since the dry run of version 1"
            ),
            (
                "shop__get_item",
                "version 3: not sent: changed since the dry run of version 2"
            ),
        ]
    );
    // an agent cannot use it
    assert!(g
        .try_send(
            &Actor::Agent(1),
            "shop",
            "get_item",
            Default::default(),
            json!({"id": "1"})
        )
        .await
        .is_err());
    app.stop().await;
}

/// A write a person sends from Try it that the vendor does not answer in time (issue
/// 28.10): the page says the request went out and the vendor may have acted, with no
/// status, and the audit says "sent, no answer", not "not sent".
#[tokio::test]
async fn a_send_the_vendor_never_answers_says_the_vendor_may_have_acted() {
    const SLOW: &str = r#"
openapi: 3.0.3
info: {title: Slow, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /slow/{secs}:
    post:
      operationId: slowWrite
      parameters: [{name: secs, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok}}
"#;
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let mut s = settings(dir.path());
    s.limits.total_timeout = std::time::Duration::from_secs(1);
    let app = spawn_app_with(s).await;
    let g = &app.graft;
    g.import_openapi("slow", SLOW, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection("slow", "prod", "bearer", None, Some("slow-secret-31"))
        .await
        .unwrap();
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    // an integer past 64 bits is refused at its field, as such
    let tried = b
        .dry_run("slow", "slow_write", &[("in.secs", "18446744073709551616")])
        .await;
    let page = b.get(&tried).await.text().await.unwrap();
    assert!(page.contains("At secs:"), "{page}");
    assert!(
        page.contains("is not an integer Graft can send (from -2^63 to 2^63-1)"),
        "{page}"
    );
    assert!(
        !page.contains("send-form"),
        "no send after a refusal: {page}"
    );
    let tried = b.dry_run("slow", "slow_write", &[("in.secs", "3")]).await;
    let id = tried
        .split("tried=")
        .nth(1)
        .unwrap()
        .trim_end_matches("#try");
    let r = b
        .post_form(
            "send_tool",
            &tried,
            &[
                ("vendor", "slow"),
                ("name", "slow_write"),
                ("tried", id),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(v.count(), 1, "the request went out");
    let page = b.get(&loc).await.text().await.unwrap();
    assert!(
        page.contains("No answer: the request went out and the vendor may have acted on it"),
        "{page}"
    );
    assert!(!page.contains("HTTP 200"), "{page}");
    assert!(!page.contains("slow-secret-31"), "{page}");
    let events = g
        .audit_events(&AuditQuery {
            action: Some(AuditAction::ToolTry),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].detail.as_deref(),
        Some("version 1: sent, no answer")
    );
}
