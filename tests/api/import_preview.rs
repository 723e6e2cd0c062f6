//! Imports in the console (issue 28.11): the import's progress as server-sent events, a
//! preview of a re-upload (new, updated, retired, approvals asked again) that changes
//! nothing until it is applied, the rename list kept in the import history, and Restore
//! of a removed vendor as it was (its stored document kept). Through the console's real HTTP
//! routes and server functions, as a signed-in person.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use graft::service::Actor;
use serde_json::Value;

/// A vendor with a write, a read and a delete.
const V1: &str = r#"
openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "https://shop.example"}]
paths:
  /items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
    delete:
      operationId: deleteItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
"#;

/// The next document: the write moved, the delete gone, two lists added whose names
/// collide (`listItems`, `list-items`: one is renamed).
const V2: &str = r#"
openapi: 3.0.3
info: {title: Shop, version: "2"}
servers: [{url: "https://shop.example"}]
paths:
  /v2/items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
    get: {operationId: listItems, responses: {"200": {description: ok}}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /v2/items/all:
    get: {operationId: list-items, responses: {"200": {description: ok}}}
"#;

/// Posts the upload form (`preview`: the Preview button) with header
/// `x-graft-upload: events` when `events`, as the hydrated page does.
async fn upload(
    b: &Browser,
    vendor: &str,
    text: &str,
    preview: bool,
    events: bool,
) -> reqwest::Response {
    let mut form = reqwest::multipart::Form::new()
        .text("vendor", vendor.to_string())
        .part(
            "document",
            reqwest::multipart::Part::text(text.to_string()).file_name("shop.yaml"),
        );
    if preview {
        form = form.text("preview", "1");
    }
    let mut r = b
        .http
        .post(format!("{}/vendors/import", b.base))
        .header("cookie", b.cookie.clone().unwrap())
        .multipart(form);
    if events {
        r = r.header("x-graft-upload", "events");
    }
    r.send().await.unwrap()
}

/// The page a plain (no JavaScript) upload redirects to.
/// Applies preview `id` with a plain form post; the summary the page then shows.
async fn applied(b: &mut Browser, id: &str) -> Value {
    let r = b
        .post_form("apply_import", "/vendors", &[("preview", id)])
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let loc = location(&r);
    let import = loc.strip_prefix("/vendors?import=").expect(&loc);
    let d: Value = b
        .call("vendors", &[("import", import)])
        .await
        .json()
        .await
        .unwrap();
    d["import"].clone()
}

fn location(r: &reqwest::Response) -> String {
    assert!(r.status().is_redirection(), "{}", r.status());
    r.headers()["location"].to_str().unwrap().to_string()
}

/// The events of a finished stream: `(event, data)`.
fn events(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            event.map(|e| (e, data))
        })
        .collect()
}

#[tokio::test]
async fn an_import_streams_its_progress_and_ends_on_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let text = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    let r = upload(&b, "petstore", &text, false, true).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let said = events(&r.text().await.unwrap());
    let progress: Vec<(u64, u64)> = said
        .iter()
        .filter(|(e, _)| e == "progress")
        .map(|(_, d)| {
            let v: Value = serde_json::from_str(d).unwrap();
            (v["done"].as_u64().unwrap(), v["total"].as_u64().unwrap())
        })
        .collect();
    assert!(progress.len() >= 2, "{said:?}");
    assert!(
        progress.windows(2).all(|w| w[0].0 < w[1].0),
        "it moves forward: {progress:?}"
    );
    let (done, total) = *progress.last().unwrap();
    assert_eq!(done, total, "{progress:?}");
    let (last, target) = said.last().unwrap();
    assert_eq!(last, "done");
    let id = target.strip_prefix("/vendors?import=").expect(target);
    let d: Value = b
        .call("vendors", &[("import", id)])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(d["import"]["imported"], 19, "{d}");
    assert_eq!(app.graft.toolbox_size().await.unwrap(), 19);

    // a refused document ends on its failure summary, nothing imported
    let r = upload(&b, "broken", "openapi: 3.0.0\npaths: [", false, true).await;
    let said = events(&r.text().await.unwrap());
    let (last, target) = said.last().unwrap();
    assert_eq!(last, "done");
    let id = target.strip_prefix("/vendors?import=").expect(target);
    let d: Value = b
        .call("vendors", &[("import", id)])
        .await
        .json()
        .await
        .unwrap();
    assert!(d["import"]["error"].as_str().is_some(), "{d}");
    assert_eq!(app.graft.toolbox_size().await.unwrap(), 19);
    // signed out: the stream is not opened
    let mut stranger = Browser::new(&app);
    stranger.cookie = Some("id=nobody".into());
    let r = upload(&stranger, "x", V1, false, true).await;
    assert!(r.status().is_redirection(), "{}", r.status());
    app.stop().await;
}

#[tokio::test]
async fn a_re_upload_is_previewed_then_applied_and_its_renames_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let loc = location(&upload(&b, "shop", V1, false, false).await);
    assert!(loc.starts_with("/vendors?import="), "{loc}");
    // an agent holds the delete, and a person granted it the write
    let (pv, token) = agent(&app, "pv").await;
    g.promote_tool(&ops, pv, "shop", "delete_item")
        .await
        .unwrap();
    g.decide_approval(&ops, "pv", "shop", "create_item", true)
        .await
        .unwrap();
    let history_before = g.imports("shop").await.unwrap().len();

    // the preview says what applying would do, and changes nothing
    let loc = location(&upload(&b, "shop", V2, true, false).await);
    let id = loc
        .strip_prefix("/vendors?preview=")
        .expect(&loc)
        .to_string();
    let d: Value = b
        .call("vendors", &[("preview", id.as_str())])
        .await
        .json()
        .await
        .unwrap();
    let p = &d["preview"][1];
    assert_eq!(d["preview"][0], id);
    assert_eq!(p["preview"], true, "{p}");
    assert_eq!(p["imported"], 2, "two lists are new: {p}");
    assert!(
        p["created"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "list_items"),
        "the new tools are named: {p}"
    );
    assert_eq!(p["retired"], serde_json::json!(["delete_item"]), "{p}");
    assert_eq!(p["updated"][0][0], "create_item", "{p}");
    assert_eq!(p["approvals_reset"], 1, "{p}");
    // whose approval it is: the person knows which agent will ask again
    assert_eq!(
        p["asked_again"],
        serde_json::json!([["pv", "create_item"]]),
        "{p}"
    );
    assert_eq!(p["demoted"], 1, "{p}");
    assert_eq!(g.toolbox_size().await.unwrap(), 3, "nothing was imported");
    assert!(g.tool("shop", "list_items").await.is_err());
    assert_eq!(g.tool("shop", "create_item").await.unwrap().version, 1);
    assert_eq!(g.imports("shop").await.unwrap().len(), history_before);
    let client = modern_client(&app, &token).await;
    assert!(
        tool_names(&client)
            .await
            .iter()
            .any(|n| n == "shop__delete_item"),
        "the working set is as it was"
    );
    let approvals = g.approvals().await.unwrap();
    assert!(
        approvals.iter().any(|a| a.name == "create_item"
            && a.state == graft::domain::approval::ApprovalState::Granted),
        "the grant stands: {approvals:?}"
    );
    // the preview stays while the page is reloaded
    let again: Value = b
        .call("vendors", &[("preview", id.as_str())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again["preview"][0], id);

    // applied: what the preview said happens, and the page shows the summary
    let r = b.call("apply_import", &[("preview", id.as_str())]).await;
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    assert!(g.tool("shop", "list_items").await.is_ok());
    assert_eq!(g.tool("shop", "create_item").await.unwrap().version, 2);
    assert!(!tool_names(&client)
        .await
        .iter()
        .any(|n| n == "shop__delete_item"));
    let history = g.imports("shop").await.unwrap();
    assert_eq!(history.len(), history_before + 1);
    assert_eq!(history[0].2.approvals_reset, 1);
    assert_eq!(
        history[0].2.asked_again,
        vec![("pv".to_string(), "create_item".to_string())]
    );
    assert!(!history[0].2.preview);
    // a preview is applied once
    let r = b.call("apply_import", &[("preview", id.as_str())]).await;
    let e = r.text().await.unwrap();
    assert!(e.contains("preview is gone"), "{e}");

    // the rename list stays with the import in the history (one list's name has a hash)
    let d: Value = b.call("vendors", &[]).await.json().await.unwrap();
    let newest = &d["imports"][0];
    assert_eq!(newest["vendor"], "shop");
    let details = newest["details"].to_string();
    assert!(
        details.contains("named list_items_")
            && details.contains(": operation list")
            && details.contains("new list_items"),
        "{newest}"
    );

    // a preview applied after the toolbox changed says that the import did otherwise
    let loc = location(&upload(&b, "shop", V1, true, false).await);
    let id = loc
        .strip_prefix("/vendors?preview=")
        .expect(&loc)
        .to_string();
    let said = applied(&mut b, &id).await;
    assert_eq!(said["differs_from_preview"], Value::Null, "{said}");
    let loc = location(&upload(&b, "shop", V2, true, false).await);
    let id = loc
        .strip_prefix("/vendors?preview=")
        .expect(&loc)
        .to_string();
    // someone imports the same document meanwhile
    location(&upload(&b, "shop", V2, false, false).await);
    let said = applied(&mut b, &id).await;
    let before = said["differs_from_preview"].as_str().unwrap_or_default();
    assert!(before.contains("new"), "{said}");
    assert!(said["unchanged"].as_u64().unwrap() > 0, "{said}");

    // discarded (a plain form post), a preview cannot be applied, and its page says so
    let version = g.tool("shop", "create_item").await.unwrap().version;
    let loc = location(&upload(&b, "shop", V1, true, false).await);
    let id = loc
        .strip_prefix("/vendors?preview=")
        .expect(&loc)
        .to_string();
    let r = b
        .post_form("discard_import", "/vendors", &[("preview", id.as_str())])
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    let page = b
        .get(&format!("/vendors?preview={id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("That preview is gone"), "{page}");
    let e = b
        .call("apply_import", &[("preview", id.as_str())])
        .await
        .text()
        .await
        .unwrap();
    assert!(e.contains("preview is gone"), "{e}");
    assert_eq!(
        g.tool("shop", "create_item").await.unwrap().version,
        version
    );
    app.stop().await;
}

#[tokio::test]
async fn a_removed_vendor_is_restored_from_its_stored_document() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    location(&upload(&b, "shop", V1, false, false).await);
    // not removed: nothing to restore
    let e = b
        .call("restore_vendor", &[("slug", "shop"), ("confirm", "yes")])
        .await
        .text()
        .await
        .unwrap();
    assert!(e.contains("is not removed"), "{e}");
    g.remove_vendor(&ops, "shop").await.unwrap();
    assert_eq!(g.toolbox_size().await.unwrap(), 0);
    // unconfirmed: asked to confirm, nothing changes
    let e = b
        .call("restore_vendor", &[("slug", "shop")])
        .await
        .text()
        .await
        .unwrap();
    assert!(e.contains("confirm"), "{e}");
    assert_eq!(g.toolbox_size().await.unwrap(), 0);
    // without JavaScript: the form posts, the Vendors page says it is back
    let r = b
        .post_form(
            "restore_vendor",
            "/vendors/shop",
            &[("slug", "shop"), ("confirm", "yes")],
        )
        .await;
    assert_eq!(location(&r), "/vendors?back=shop");
    let v = g.vendor("shop").await.unwrap();
    assert!(v.removed_at.is_none() && v.disabled_at.is_none());
    assert!(v.has_document, "as it was, with its document");
    assert_eq!(v.base_url, "https://shop.example");
    assert_eq!(g.toolbox_size().await.unwrap(), 3);
    assert_eq!(
        g.imports("shop").await.unwrap().len(),
        1,
        "nothing was imported"
    );
    let audit = g
        .audit_events(&graft::db::AuditQuery {
            limit: 50,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a.person == "ops" && a.target.contains("shop")),
        "the restore is audited under the person: {audit:?}"
    );
    // brought back as a new vendor at another API instead: the old document is not kept
    g.remove_vendor(&ops, "shop").await.unwrap();
    let v = g
        .add_vendor("shop", None, "https://other.example")
        .await
        .unwrap();
    assert!(v.removed_at.is_none() && !v.has_document, "{v:?}");
    // from the command line too
    g.remove_vendor(&ops, "shop").await.unwrap();
    let (ok, said) = cli(dir.path(), &["vendor", "restore", "shop"], &[]).await;
    assert!(ok, "{said}");
    assert!(
        said.contains("Restored vendor shop at https://other.example"),
        "{said}"
    );
    assert!(g.vendor("shop").await.unwrap().removed_at.is_none());
    app.stop().await;
}
