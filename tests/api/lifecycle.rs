//! A vendor's lifecycle (issue 14.3): importing a changed document again updates the
//! vendor's tools instead of skipping every operation.

use super::helpers::*;
use graft::service::Actor;
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};

fn petstore() -> Value {
    let text = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    graft::domain::openapi::parse_document(&text).unwrap()
}

/// A re-import adds new operations, gives changed ones a new version authored by import
/// (approvals go back to pending when the call changed), retires the tools of operations
/// gone from the document (demoted with cause `retired`, list_changed to their agents,
/// out of search, not callable), restores them when they come back, leaves alone a
/// version a person or agent wrote, and keeps each summary in the import history.
#[tokio::test]
async fn a_changed_document_updates_adds_retires_and_restores_tools() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let g = &app.graft;
    let (id, token) = agent(&app, "alpha").await;
    let (client, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let ops = Actor::Person("ops".into());
    for name in ["delete_pet", "get_inventory"] {
        call(
            &client,
            "promote",
            json!({"vendor": "petstore", "name": name}),
        )
        .await;
    }
    events.wait_for(2).await;
    // a person's approval of add_pet, and a person's own version of update_user
    g.decide_approval(&ops, "alpha", "petstore", "add_pet", true)
        .await
        .unwrap();
    g.publish(
        &ops,
        None,
        "petstore",
        "update_user",
        graft::service::authoring::VersionChange {
            description: Some("Update a user (our words).".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();

    // the same document again: nothing changes
    let original = petstore().to_string();
    let r = g
        .import_openapi_by(&ops, "petstore", &original, None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!((r.imported, r.unchanged), (0, 19), "{r:?}");
    assert!(r.kept.is_empty(), "{r:?}");
    assert_eq!(
        g.tool("petstore", "update_user").await.unwrap().description,
        "Update a user (our words).",
        "a person's version stays while the document does not change the operation"
    );
    assert!(
        r.updated.is_empty() && r.retired.is_empty() && r.skipped.is_empty(),
        "{r:?}"
    );

    // a changed document
    let mut doc = petstore();
    let paths = doc["paths"].as_object_mut().unwrap();
    paths["/pet/{petId}"]
        .as_object_mut()
        .unwrap()
        .remove("delete");
    paths["/store/inventory"]["get"]["summary"] = json!("Counts the pets by status");
    let add = paths["/pet"]["post"].clone();
    paths["/pet"].as_object_mut().unwrap().remove("post");
    paths.insert("/pets".into(), json!({"post": add}));
    paths["/user/{username}"]["put"]["summary"] = json!("Update user (the vendor's words)");
    paths.insert(
        "/pet/{petId}/vaccinations".into(),
        json!({"get": {"operationId": "listVaccinations", "summary": "List a pet's vaccinations",
                       "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}]}}),
    );
    let r = g
        .import_openapi_by(&ops, "petstore", &doc.to_string(), None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(r.imported, 1, "{r:?}");
    let mut updated = r.updated.clone();
    updated.sort();
    assert_eq!(
        updated,
        [
            ("add_pet".to_string(), "path /pet → /pets".to_string()),
            (
                "get_inventory".to_string(),
                "the title; the description".to_string()
            ),
            (
                "update_user".to_string(),
                "the title; the description".to_string()
            ),
        ]
    );
    assert_eq!(r.retired, ["delete_pet"]);
    assert_eq!(r.demoted, 1);
    // a retired tool takes no new version, whoever publishes it (the console, the CLI,
    // an agent's publish: the rule is the service's)
    let refused = g
        .publish(
            &ops,
            None,
            "petstore",
            "delete_pet",
            graft::service::authoring::VersionChange {
                description: Some("Deletes a pet.".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("is retired"), "{refused}");
    let refused = g
        .set_hints(
            &ops,
            "petstore",
            "delete_pet",
            graft::service::authoring::HintChange {
                idempotent: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("is retired"), "{refused}");
    assert_eq!(
        g.tool("petstore", "delete_pet").await.unwrap().version,
        1,
        "nothing was published"
    );
    assert!(r.kept.is_empty(), "{r:?}");
    assert_eq!(r.unchanged, 15);
    assert_eq!(
        g.tool("petstore", "update_user").await.unwrap().authored_by,
        "import",
        "the document changed the operation a person had described"
    );

    // the agent heard of it, and its set lost the retired tool with that cause
    events.wait_for(3).await;
    let names = tool_names(&client).await;
    assert!(
        !names.contains(&"petstore__delete_pet".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"petstore__get_inventory".to_string()));
    let h = g.history(id, 1, 0).await.unwrap();
    assert_eq!(
        (
            h[0].name.as_str(),
            h[0].action.as_str(),
            h[0].cause.as_str(),
            h[0].actor.as_str()
        ),
        ("delete_pet", "demote", "retired", "person:ops")
    );
    // the new version
    let inv = g.tool("petstore", "get_inventory").await.unwrap();
    assert_eq!((inv.version, inv.authored_by.as_str()), (2, "import"));
    assert!(inv.description.contains("Counts the pets by status"));
    let add = g.tool("petstore", "add_pet").await.unwrap();
    assert_eq!((add.version, add.path_template.as_str()), (2, "/pets"));
    let a = g.approvals().await.unwrap();
    assert_eq!(
        (a[0].state.as_str(), a[0].version, a[0].changed.as_deref()),
        ("pending", Some(2), Some("path /pet → /pets")),
        "a grant for another call is asked again"
    );
    // the retired tool: out of search and the toolbox count, not promotable, not callable,
    // still on record
    let found = g.search_tools(None, "delete a pet", 10).await.unwrap();
    assert!(
        found.hits.iter().all(|h| h.name != "delete_pet"),
        "{:?}",
        found.hits
    );
    assert_eq!(g.toolbox_size().await.unwrap(), 19);
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "delete_pet"}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("tool_not_found"));
    assert!(text(&r).contains("retired"), "{}", text(&r));
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "delete_pet", "input": {"petId": 1}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("tool_retired"), "{}", text(&r));
    assert!(text(&r).contains("retired"), "{}", text(&r));
    let logged = g.calls(&Default::default(), 1).await.unwrap();
    assert_eq!(
        (logged[0].name.as_str(), logged[0].outcome()),
        ("delete_pet", "tool retired"),
        "the refused call is in the calls log"
    );
    assert!(g.tool_detail("petstore", "delete_pet").await.is_ok());
    let found = g
        .search_tools(None, "list vaccinations of a pet", 5)
        .await
        .unwrap();
    assert_eq!(found.hits[0].name, "list_vaccinations");

    // the first document again: delete_pet is back, the new operation retires
    let r = g
        .import_openapi_by(&ops, "petstore", &original, None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(r.restored, ["delete_pet"]);
    assert_eq!(r.retired, ["list_vaccinations"]);
    assert_eq!(r.demoted, 0);
    assert_eq!(
        g.tool("petstore", "delete_pet").await.unwrap().version,
        1,
        "restored as it was"
    );
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "delete_pet"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));

    // the import history, newest first
    let history = g.imports("petstore").await.unwrap();
    assert_eq!(history.len(), 4, "the first import and three more");
    assert_eq!(history[0].0, "person:ops");
    assert_eq!(history[0].2.restored, ["delete_pet"]);
    assert_eq!(history[1].2.retired, ["delete_pet"]);
    assert_eq!(history[3].0, "rule", "the test helper's import");
    assert_eq!(history[3].2.imported, 19);

    // a document with no operation to import would retire everything: refused
    let mut empty = petstore();
    empty["paths"] = json!({});
    let e = g
        .import_openapi_by(&ops, "petstore", &empty.to_string(), None, &mut |_, _| {})
        .await
        .unwrap_err();
    assert!(e.to_string().contains("would retire all"), "{e}");
    assert_eq!(g.toolbox_size().await.unwrap(), 19);
    // and creates no empty vendor; a server variable left in braces is no base URL
    let e = g
        .import_openapi_by(&ops, "blank", &empty.to_string(), None, &mut |_, _| {})
        .await
        .unwrap_err();
    assert!(e.to_string().contains("was not created"), "{e}");
    assert!(g.vendor("blank").await.is_err());
    let mut regional = petstore();
    regional["servers"] = json!([{"url": "https://{region}.pets.example.com"}]);
    let e = g
        .import_openapi_by(
            &ops,
            "regional",
            &regional.to_string(),
            None,
            &mut |_, _| {},
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("server variable"), "{e}");
    assert!(g.vendor("regional").await.is_err());

    // a document that does not parse changes nothing
    assert!(g
        .import_openapi_by(&ops, "petstore", "{", None, &mut |_, _| {})
        .await
        .is_err());
    assert_eq!(g.imports("petstore").await.unwrap().len(), 4);
    client.cancel().await.unwrap();
    app.stop().await;
}

/// A person renames a vendor and moves its base URL (calls follow at once), then
/// disables it — only when confirmed: its tools leave every working set (cause
/// `vendor_disabled`, list_changed), search and the toolbox, and refuse calls — and
/// enables it again (issue 14.3).
#[tokio::test]
async fn a_vendor_is_moved_disabled_and_enabled_again() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let echo = super::vendor::start(None).await;
    let g = &app.graft;
    let (id, token) = agent(&app, "alpha").await;
    let (client, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "get_inventory"}),
    )
    .await;
    events.wait_for(1).await;
    let ops = Actor::Person("ops".into());

    // refused in words, nothing changed
    for (name, url, why) in [
        (Some(" "), None, "the name is empty"),
        (None, Some("ftp://x"), "http"),
        (None, None, "nothing to change"),
    ] {
        let e = g
            .set_vendor(&ops, "petstore", name, url, None)
            .await
            .unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    let e = g
        .set_vendor(&ops, "nope", Some("x"), None, None)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no vendor"), "{e}");

    let base = format!("{}/anything", echo.url());
    let (v, demoted) = g
        .set_vendor(&ops, "petstore", Some("Pet Store"), Some(&base), None)
        .await
        .unwrap();
    assert_eq!(
        (v.display_name.as_str(), v.base_url.as_str(), demoted),
        ("Pet Store", base.as_str(), 0)
    );
    let r = call(&client, "petstore__get_inventory", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        echo.last().path,
        "/anything/store/inventory",
        "calls use the new base URL at once"
    );

    let (v, demoted) = g
        .set_vendor(&ops, "petstore", None, None, Some(false))
        .await
        .unwrap();
    assert!(v.disabled_at.is_some());
    assert_eq!(demoted, 1);
    events.wait_for(2).await;
    assert!(!tool_names(&client)
        .await
        .contains(&"petstore__get_inventory".to_string()));
    let h = g.history(id, 1, 0).await.unwrap();
    assert_eq!(
        (h[0].cause.as_str(), h[0].actor.as_str()),
        ("vendor_disabled", "person:ops")
    );
    assert!(g
        .search_tools(None, "inventory", 10)
        .await
        .unwrap()
        .hits
        .is_empty());
    let (listed, total) = g
        .browse_tools(None, graft::db::BrowseOrder::Name, 50, 0)
        .await
        .unwrap();
    assert!(listed.is_empty() && total == 0, "out of the Toolbox");
    assert_eq!(
        g.toolbox_size().await.unwrap(),
        19,
        "still in the toolbox: the first steps stay done"
    );
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "get_inventory"}),
    )
    .await;
    assert!(text(&r).contains("disabled"), "{}", text(&r));
    let r = call(
        &client,
        "acquire",
        json!({"vendor": "petstore", "name": "get_thing", "description": "Get a thing", "method": "GET", "path": "/thing", "inputSchema": {"type": "object"}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("invalid_input"), "{}", text(&r));
    assert!(text(&r).contains("disabled"), "{}", text(&r));
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "get_inventory", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("vendor_disabled"), "{}", text(&r));
    assert!(text(&r).contains("disabled"), "{}", text(&r));
    assert_eq!(
        g.calls(&Default::default(), 1).await.unwrap()[0].outcome(),
        "vendor disabled"
    );

    g.set_vendor(&ops, "petstore", None, None, Some(true))
        .await
        .unwrap();
    assert_eq!(
        g.search_tools(None, "inventory", 10).await.unwrap().hits[0].name,
        "get_inventory"
    );
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "get_inventory"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.unwrap();
    app.stop().await;
}

/// Removing a vendor (issue 14.3) takes it out of use: its working-set entries are
/// demoted with cause `vendor_removed` (list_changed), its calls are refused as
/// `vendor_removed`, its connections are revoked, it leaves the vendor lists and can no
/// longer be changed; its tools stay for the record. Importing its document again, or
/// adding a vendor with its slug, brings it back. The connection kind its document asks
/// for (petstore: an `api_key` header) is read at import.
#[tokio::test]
async fn a_removed_vendor_leaves_use_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let echo = super::vendor::start(None).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    let v = g.vendor("petstore").await.unwrap();
    assert_eq!(
        (v.auth_kind.as_deref(), v.auth_name.as_deref()),
        (Some("header"), Some("api_key")),
        "the document's apiKey scheme, preferred to its OAuth one"
    );
    let base = format!("{}/anything", echo.url());
    g.set_vendor(&ops, "petstore", None, Some(&base), None)
        .await
        .unwrap();
    let prod = g
        .add_connection(
            "petstore",
            "prod",
            "header",
            Some("api_key"),
            Some("k-1234567890"),
        )
        .await
        .unwrap();
    // a tool pinned to that connection
    g.set_tool_connection(
        &Actor::Person("ops".into()),
        "petstore",
        "get_pet_by_id",
        Some(prod.id),
    )
    .await
    .unwrap();
    let (id, token) = agent(&app, "alpha").await;
    let (client, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "get_inventory"}),
    )
    .await;
    events.wait_for(1).await;

    let (demoted, revoked) = g.remove_vendor(&ops, "petstore").await.unwrap();
    assert_eq!((demoted, revoked), (1, 1));
    events.wait_for(2).await;
    assert!(!tool_names(&client)
        .await
        .contains(&"petstore__get_inventory".to_string()));
    let h = g.history(id, 1, 0).await.unwrap();
    assert_eq!(
        (h[0].cause.as_str(), h[0].actor.as_str()),
        ("vendor_removed", "person:ops")
    );
    assert!(g.vendors().await.unwrap().is_empty(), "off the lists");
    assert_eq!(g.removed_vendors().await.unwrap(), ["petstore"]);
    // its approvals are not decided while it is removed
    let e = g
        .decide_approval_seen(
            &ops,
            "alpha",
            "petstore",
            "add_pet",
            &graft::service::DecideHow {
                grant: true,
                seen: None,
                reason: None,
            },
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("was removed"), "{e}");
    let v = g.vendor("petstore").await.unwrap();
    assert!(v.removed_at.is_some() && v.disabled_at.is_some());
    assert!(
        v.has_document,
        "its document stays, for Restore (issue 28.11)"
    );
    let c = g.connections().await.unwrap();
    assert!(c[0].revoked_at.is_some(), "its connection is revoked");
    assert!(g
        .search_tools(None, "inventory", 10)
        .await
        .unwrap()
        .hits
        .is_empty());
    assert_eq!(
        g.toolbox_size().await.unwrap(),
        0,
        "out of the toolbox's count"
    );
    assert_eq!(
        g.tool_detail("petstore", "get_inventory")
            .await
            .unwrap()
            .tool
            .name,
        "get_inventory",
        "kept for the record"
    );
    // called by name (its client's list is stale), it is refused as removed, not sent
    // to promote
    let r = call(&client, "petstore__get_inventory", json!({})).await;
    assert_eq!(code(&r).as_deref(), Some("vendor_removed"), "{}", text(&r));
    let r = call(
        &client,
        "acquire",
        json!({"vendor": "petstore", "name": "get_thing", "description": "Get a thing", "method": "GET", "path": "/thing", "inputSchema": {"type": "object"}}),
    )
    .await;
    assert!(text(&r).contains("was removed"), "{}", text(&r));
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "get_inventory", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("vendor_removed"), "{}", text(&r));
    assert!(text(&r).contains("removed"), "{}", text(&r));
    assert_eq!(
        g.calls(&Default::default(), 1).await.unwrap()[0].outcome(),
        "vendor removed"
    );
    let before = echo.count();
    // a removed vendor is not changed, given connections, or removed twice
    for e in [
        g.set_vendor(&ops, "petstore", None, None, Some(true))
            .await
            .unwrap_err(),
        g.add_connection("petstore", "again", "bearer", None, Some("k-1234567890"))
            .await
            .map(|_| ())
            .unwrap_err(),
        g.remove_vendor(&ops, "petstore")
            .await
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert!(e.to_string().contains("removed"), "{e}");
    }
    assert!(g.vendor("petstore").await.unwrap().removed_at.is_some());
    assert_eq!(echo.count(), before, "nothing reached the vendor");

    // importing its document again brings it back, with the base URL it had
    let text_doc = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    let report = g
        .import_openapi("petstore", &text_doc, None, &mut |_, _| {})
        .await
        .unwrap();
    assert!(report.brought_back);
    assert_eq!((report.imported, report.unchanged), (0, 19));
    let v = g.vendor("petstore").await.unwrap();
    assert!(v.removed_at.is_none() && v.disabled_at.is_none() && v.has_document);
    assert_eq!(v.base_url, base);
    assert_eq!(g.vendors().await.unwrap().len(), 1);
    // its old connection stays revoked, and the tool's page says so: calls need a new one
    let (label, why) = g
        .tool_detail("petstore", "get_inventory")
        .await
        .unwrap()
        .connection
        .unwrap();
    assert_eq!(label, "prod");
    assert!(why.starts_with("revoked"), "{why}");
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "petstore", "name": "get_inventory", "input": {}}),
    )
    .await;
    assert_eq!(
        code(&r).as_deref(),
        Some("connection_revoked"),
        "{}",
        text(&r)
    );
    g.add_connection(
        "petstore",
        "prod-2",
        "header",
        Some("api_key"),
        Some("k-0987654321"),
    )
    .await
    .unwrap();
    // the pin to the revoked connection went with the removal: the new one serves
    let (label, _) = g
        .tool_detail("petstore", "get_pet_by_id")
        .await
        .unwrap()
        .connection
        .unwrap();
    assert_eq!(label, "prod-2");
    call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": "get_inventory"}),
    )
    .await;
    let r = call(&client, "petstore__get_inventory", json!({})).await;
    assert_eq!(code(&r), None, "{}", text(&r));
    assert_eq!(echo.last().path, "/anything/store/inventory");

    // so does adding a vendor with its slug
    g.remove_vendor(&ops, "petstore").await.unwrap();
    let v = g.add_vendor("petstore", Some("Pets"), &base).await.unwrap();
    assert!(v.removed_at.is_none() && v.disabled_at.is_none());
    assert_eq!(v.display_name, "Pets");
    assert_eq!(
        g.search_tools(None, "inventory", 10).await.unwrap().hits[0].name,
        "get_inventory"
    );
    client.cancel().await.unwrap();
    app.stop().await;
}
