//! Writes hidden behind GET (issue 28.7): an operation declared GET whose name or
//! summary says it changes state (Slack's `GET /views.open`) is imported as a write and
//! asks a person first; a person says in the console what a call does, and the
//! approval rule follows it. A real vendor, the console's own server functions.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use serde_json::json;
use std::sync::Arc;

const SLACKISH: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Slackish", "version": "1"},
  "paths": {
    "/anything/views.open": {"get": {"operationId": "views_open", "summary": "Open a view for a user.",
        "parameters": [{"name": "trigger_id", "in": "query", "schema": {"type": "string"}}]}},
    "/anything/conversations.list": {"get": {"operationId": "conversations_list", "summary": "Lists all channels in a Slack team."}},
    "/anything/chat.post": {"post": {"operationId": "chat_post", "summary": "Sends a message."}}
  }
}"#;

#[tokio::test]
async fn a_get_that_says_it_changes_state_is_a_write_until_a_person_says_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let g = open_graft(&db_url(dir.path()), Arc::new(graft::service::SystemClock)).await;
    g.import_openapi("slack", SLACKISH, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (a, _) = g.add_agent("bot", None, None, None).await.unwrap();
    // the agent opens a view (a GET) with a trigger id
    let open_view = |trigger: &'static str| {
        let g = g.clone();
        async move {
            g.run_tool(
                a.id,
                "slack",
                "views_open",
                json!({ "trigger_id": trigger }),
                false,
            )
            .await
            .unwrap()
        }
    };
    let open = g.tool("slack", "views_open").await.unwrap();
    assert!(!open.read_only_hint && !open.idempotent_hint, "{open:?}");
    let list = g.tool("slack", "conversations_list").await.unwrap();
    assert!(list.read_only_hint);
    // a person's new description keeps it a write
    let ops = graft::service::Actor::Person("ops".into());
    g.publish(
        &ops,
        None,
        "slack",
        "views_open",
        graft::service::authoring::VersionChange {
            description: Some("Open a modal view (our words).".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let open = g.tool("slack", "views_open").await.unwrap();
    assert!(!open.read_only_hint && open.version == 2, "{open:?}");

    // the GET that opens a view waits for a person; nothing reached the vendor
    let r = open_view("t1").await;
    assert_eq!(r.code(), Some("approval_required"), "{r:?}");
    assert_eq!(vendor.count(), 0);
    let r = g
        .run_tool(a.id, "slack", "conversations_list", json!({}), false)
        .await
        .unwrap();
    assert_eq!(r.code(), None, "{r:?}");
    assert_eq!(vendor.count(), 1);

    // the tool page says so and offers the choice
    let app = spawn_app_with_graft(settings(dir.path()), g.clone()).await;
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/tools/slack/views_open").await.text().await.unwrap();
    assert!(page.contains(r#"id="hints""#), "{page}");
    assert!(
        page.contains(r#"<option value="writes" selected"#),
        "{page}"
    );
    // a value nobody offers is refused and changes nothing
    let r = b
        .call(
            "set_tool_hints",
            &[
                ("vendor", "slack"),
                ("name", "views_open"),
                ("does", "maybe"),
            ],
        )
        .await;
    assert!(r.status().is_client_error(), "{}", r.status());
    assert_eq!(
        g.tool("slack", "views_open").await.unwrap().version,
        open.version
    );

    // a POST cannot be said to only read: it is a write whatever its hints
    let post = [
        ("vendor", "slack"),
        ("name", "chat_post"),
        ("does", "reads"),
    ];
    let r = b.call("set_tool_hints", &post).await;
    assert!(r.status().is_client_error(), "{}", r.status());
    assert!(r.text().await.unwrap().contains("a POST sends data"));
    assert!(!g.tool("slack", "chat_post").await.unwrap().read_only_hint);
    let page = b.get("/tools/slack/chat_post").await.text().await.unwrap();
    assert!(!page.contains(r#"<option value="reads""#), "{page}");

    // a person says it only reads: a new version by that person, and the call runs
    let form = [
        ("vendor", "slack"),
        ("name", "views_open"),
        ("does", "reads"),
    ];
    assert_eq!(b.call("set_tool_hints", &form).await.status(), 200);
    let marked = g.tool("slack", "views_open").await.unwrap();
    assert!(marked.read_only_hint && marked.idempotent_hint);
    assert_eq!(marked.version, open.version + 1);
    assert_eq!(marked.read_only_by.as_deref(), Some("person:ops"));
    // saying it again writes nothing
    assert_eq!(b.call("set_tool_hints", &form).await.status(), 200);
    assert_eq!(
        g.tool("slack", "views_open").await.unwrap().version,
        marked.version
    );
    let r = open_view("t2").await;
    assert_eq!(r.code(), None, "{r:?}");
    assert_eq!(vendor.count(), 2);

    // and back: a write, approved; then a person says it deletes data, and the next call
    // asks again
    let form = [
        ("vendor", "slack"),
        ("name", "views_open"),
        ("does", "writes"),
    ];
    assert_eq!(b.call("set_tool_hints", &form).await.status(), 200);
    g.decide_approval(&ops, "bot", "slack", "views_open", true)
        .await
        .unwrap();
    let r = open_view("t5").await;
    assert_eq!(r.code(), None, "approved: {r:?}");
    let form = [
        ("vendor", "slack"),
        ("name", "views_open"),
        ("does", "deletes"),
    ];
    assert_eq!(b.call("set_tool_hints", &form).await.status(), 200);
    let t = g.tool("slack", "views_open").await.unwrap();
    assert!(!t.read_only_hint && t.destructive_hint);
    let r = open_view("t3").await;
    assert_eq!(r.code(), Some("approval_required"), "{r:?}");

    // signed out: refused
    let mut stranger = Browser::new(&app);
    let r = stranger.call("set_tool_hints", &form).await;
    assert_eq!(r.status(), 401);
}
