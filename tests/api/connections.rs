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

    // revoking the default: the tools that used it are demoted and refuse calls (never
    // silently the other connection)
    call(
        &client,
        "promote",
        json!({"vendor": "acme", "name": "get_me"}),
    )
    .await;
    let (_, demoted) = g.revoke_connection(&ops(), new.id).await.unwrap();
    assert!(demoted >= 1);
    let r = call(&client, "run_tool", me.clone()).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("connection_revoked"),
        "{}",
        text(&r)
    );
    // the other one made the default: calls go again
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
