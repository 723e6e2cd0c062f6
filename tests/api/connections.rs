//! Keeping a vendor's credentials (issue 28.2) against the echo vendor: a second
//! connection says which one calls use, the vendor's default, a secret replaced in place,
//! a connection tested with one harmless read, when each was last used, and revoking the
//! default.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::service::connection_care::DefaultChoice;
use graft::service::Actor;
use serde_json::json;

const API: &str = r#"
openapi: 3.0.3
info: {title: Acme, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /me:
    get: {operationId: getMe, summary: Who am I, responses: {"200": {description: ok}}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
"#;

const LOCKED: &str = r#"
openapi: 3.0.3
info: {title: Locked, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /status/401:
    get: {operationId: getLocked, responses: {"200": {description: ok}}}
"#;

fn ops() -> Actor {
    Actor::Person("ops".into())
}

fn bearer(v: &vendor::Vendor) -> String {
    v.last().headers["authorization"]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_second_connection_asks_which_calls_use_and_a_key_rotates_without_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection_choosing(
        &ops(),
        "acme",
        "old",
        "bearer",
        None,
        Some("old-secret-1"),
        None,
    )
    .await
    .unwrap();
    // a second one without saying which one calls use is refused, nothing added
    let e = g
        .add_connection_choosing(
            &ops(),
            "acme",
            "new",
            "bearer",
            None,
            Some("new-secret-2"),
            None,
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("say which one"), "{e}");
    assert_eq!(g.connections().await.unwrap().len(), 1);
    let (_, token) = agent(&app, "bot").await;
    let client = modern_client(&app, &token).await;
    let me = json!({"vendor": "acme", "name": "get_me", "input": {}});
    // the current one kept: it becomes the default, calls go on with it
    g.add_connection_choosing(
        &ops(),
        "acme",
        "new",
        "bearer",
        None,
        Some("new-secret-2"),
        Some(DefaultChoice::Current),
    )
    .await
    .unwrap();
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer old-secret-1");
    // the new one made the default (through the console's server function)
    let mut b = Browser::new(&app);
    g.add_user("ops", PASSWORD).await.unwrap();
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .call(
            "set_default_connection",
            &[("vendor", "acme"), ("label", "new")],
        )
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer new-secret-2");
    let list = g.connections().await.unwrap();
    let new = list.iter().find(|c| c.label == "new").unwrap().clone();
    let old = list.iter().find(|c| c.label == "old").unwrap().clone();
    assert!(new.vendor_default && !old.vendor_default);
    assert!(new.last_used_at.is_some() && old.last_used_at.is_some());
    let detail = g.tool_detail("acme", "get_me").await.unwrap();
    assert_eq!(
        detail.connection,
        Some(("new".to_string(), "the vendor's default".to_string()))
    );

    // the secret replaced in place (a plain form post, as without JavaScript): the next
    // call carries the new one
    let r = b
        .post_form(
            "replace_connection_secret",
            "/vendors/acme",
            &[
                ("id", &new.id.to_string()),
                ("secret", "rotated-secret-3"),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer rotated-secret-3");
    let replaced = g.connections().await.unwrap();
    assert!(replaced
        .iter()
        .find(|c| c.label == "new")
        .unwrap()
        .secret_replaced_at
        .is_some());
    // a short secret is refused and the old one stays
    let e = g
        .replace_connection_secret(&ops(), new.id, "short")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("shorter"), "{e}");

    // tested with one harmless read: the echo answers 200
    let calls_before = v.count();
    let t = g.test_connection(&ops(), new.id).await.unwrap();
    assert!(t.ok, "{t:?}");
    assert_eq!(t.tool.as_deref(), Some("acme__get_me"));
    assert_eq!(t.status, Some(200));
    assert_eq!(v.count(), calls_before + 1);
    assert_eq!(v.last().path, "/me");
    assert!(!t.message.contains("rotated-secret-3"));
    // and through the console: the result is on the connection's row
    let r = b
        .call("test_connection", &[("id", &new.id.to_string())])
        .await;
    assert!(r.status().is_success());
    let page = b
        .call("vendor", &[("slug", "acme")])
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("the credential works"), "{page}");
    // a new secret makes that result stale: the row no longer says the credential works
    g.replace_connection_secret(&ops(), new.id, "rotated-again-secret-4")
        .await
        .unwrap();
    let page = b
        .call("vendor", &[("slug", "acme")])
        .await
        .text()
        .await
        .unwrap();
    assert!(!page.contains("the credential works"), "{page}");
    // a vendor that refuses the credential says so
    g.import_openapi("locked", LOCKED, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let c = g
        .add_connection("locked", "main", "bearer", None, Some("wrong-secret-9"))
        .await
        .unwrap();
    let t = g.test_connection(&ops(), c.id).await.unwrap();
    assert!(!t.ok && t.status == Some(401), "{t:?}");
    assert!(
        t.message.contains("refused the credential"),
        "{}",
        t.message
    );

    // revoking the default: the tools that used it are demoted, and the vendor has no
    // default after; its only other live connection is the one calls use now
    call(
        &client,
        "promote",
        json!({"vendor": "acme", "name": "get_me"}),
    )
    .await;
    let (_, demoted) = g.revoke_connection(&ops(), new.id).await.unwrap();
    assert!(demoted >= 1);
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer old-secret-1");
    let detail = g.tool_detail("acme", "get_me").await.unwrap();
    assert_eq!(
        detail.connection,
        Some((
            "old".to_string(),
            "the vendor's only active connection".to_string()
        ))
    );
    // made the default by hand: calls go on with it
    g.set_vendor_default_connection(&ops(), "acme", Some("old"))
        .await
        .unwrap();
    let r = call(&client, "run_tool", me).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer old-secret-1");
    // a revoked connection is no default
    let e = g
        .set_vendor_default_connection(&ops(), "acme", Some("new"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no live connection"), "{e}");
    app.stop().await;
}

/// The review's cases (issue 28.2): keeping the current key while the new one waits, then
/// revoking the old; a tool pinned to a revoked connection; what a test may send; two
/// people adding a first connection at once.
#[tokio::test]
async fn rotation_edges_a_test_sends_only_what_a_person_would_and_adds_never_race() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    // --default on a first connection makes it the default
    let first = g
        .add_connection_choosing(
            &ops(),
            "acme",
            "old",
            "bearer",
            None,
            Some("old-secret-1"),
            Some(DefaultChoice::New),
        )
        .await
        .unwrap();
    assert!(first.vendor_default, "{first:?}");
    // the new one waits while the old one stays the default; then the old is revoked
    let new = g
        .add_connection_choosing(
            &ops(),
            "acme",
            "new",
            "bearer",
            None,
            Some("new-secret-2"),
            Some(DefaultChoice::Current),
        )
        .await
        .unwrap();
    assert!(!new.vendor_default);
    let (_, token) = agent(&app, "bot").await;
    let client = modern_client(&app, &token).await;
    let me = json!({"vendor": "acme", "name": "get_me", "input": {}});
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer old-secret-1");
    // a refused credential is no use: "last used" stays empty for a key the vendor refused
    g.import_openapi("locked", LOCKED, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection("locked", "main", "bearer", None, Some("wrong-secret-9"))
        .await
        .unwrap();
    call(
        &client,
        "run_tool",
        json!({"vendor": "locked", "name": "get_locked", "input": {}}),
    )
    .await;
    let list = g.connections().await.unwrap();
    let row = |label: &str, vendor: &str| {
        list.iter()
            .find(|c| c.label == label && c.vendor == vendor)
            .unwrap()
            .clone()
    };
    assert!(row("main", "locked").last_used_at.is_none());
    assert!(row("old", "acme").last_used_at.is_some());
    // a test is not a use either
    let t = g.test_connection(&ops(), new.id).await.unwrap();
    assert!(t.ok, "{t:?}");
    assert!(g
        .connections()
        .await
        .unwrap()
        .iter()
        .find(|c| c.id == new.id)
        .unwrap()
        .last_used_at
        .is_none());
    // a tool pinned to the old one
    g.set_tool_connection(
        &Actor::Person("ops".into()),
        "acme",
        "get_item",
        Some(first.id),
    )
    .await
    .unwrap();
    g.revoke_connection(&ops(), first.id).await.unwrap();
    let r = call(&client, "run_tool", me.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(bearer(&v), "Bearer new-secret-2");
    // the pinned tool is refused (a person chose that credential for it), says how to
    // go on, and cannot be pinned to a revoked connection again
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_item", "input": {"id": "7"}}),
    )
    .await;
    assert_eq!(
        code(&r).as_deref(),
        Some("connection_revoked"),
        "{}",
        text(&r)
    );
    let detail = g.tool_detail("acme", "get_item").await.unwrap();
    assert!(
        detail
            .connection
            .as_ref()
            .unwrap()
            .1
            .contains("chooses another connection"),
        "{:?}",
        detail.connection
    );
    let e = g
        .set_tool_connection(
            &Actor::Person("ops".into()),
            "acme",
            "get_item",
            Some(first.id),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is revoked"), "{e}");
    g.set_tool_connection(&Actor::Person("ops".into()), "acme", "get_item", None)
        .await
        .unwrap();
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_item", "input": {"id": "7"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));

    // an agent's own GET is never what a test sends, even when its path is the shortest
    let r = call(
        &client,
        "acquire",
        json!({"vendor": "acme", "name": "peek", "description": "Peek", "method": "GET", "path": "/x",
               "inputSchema": {"type": "object", "properties": {}}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let t = g.test_connection(&ops(), new.id).await.unwrap();
    assert_eq!(t.tool.as_deref(), Some("acme__get_me"), "{t:?}");
    assert_eq!(v.last().path, "/me");

    // a suspended connection (the base URL moved to another origin) sends nothing, a
    // test included; nor does a disabled vendor's
    let sent = v.count();
    g.set_vendor(&ops(), "acme", None, Some("http://127.0.0.1:9/"), None)
        .await
        .unwrap();
    let e = g.test_connection(&ops(), new.id).await.unwrap_err();
    assert!(e.to_string().contains("suspended"), "{e}");
    g.set_vendor(&ops(), "acme", None, Some(&v.url()), None)
        .await
        .unwrap();
    g.confirm_connections(&ops(), "acme").await.unwrap();
    g.set_vendor(&ops(), "acme", None, None, Some(false))
        .await
        .unwrap();
    let e = g.test_connection(&ops(), new.id).await.unwrap_err();
    assert!(e.to_string().contains("disabled"), "{e}");
    assert_eq!(v.count(), sent, "nothing was sent");

    // two people adding a first connection to a vendor at once: one is added, the other
    // is asked which one calls use; calls are never ambiguous
    for i in 0..4 {
        let slug = format!("race{i}");
        g.import_openapi(&slug, API, Some(&v.url()), &mut |_, _| {})
            .await
            .unwrap();
        let person = ops();
        let (a, b) = tokio::join!(
            g.add_connection_choosing(
                &person,
                &slug,
                "x",
                "bearer",
                None,
                Some("secret-xxxx-1"),
                None
            ),
            g.add_connection_choosing(
                &person,
                &slug,
                "y",
                "bearer",
                None,
                Some("secret-yyyy-2"),
                None
            ),
        );
        assert_eq!(a.is_ok() as u8 + b.is_ok() as u8, 1, "{a:?} {b:?}");
        let e = a.err().or(b.err()).unwrap();
        assert!(e.to_string().contains("say which one"), "{e}");
        let r = call(
            &client,
            "run_tool",
            json!({"vendor": slug, "name": "get_me", "input": {}}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    app.stop().await;
}
