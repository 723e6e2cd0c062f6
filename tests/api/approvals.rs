//! Approvals a team decides (issue 28.6), against the echo vendor: a denial's reason
//! reaches the agent's next call (a real MCP client), every decision is kept per version
//! with the person who made it, a request never approved does not read "approved
//! before", one approval for every agent a tool waits for, filters; through the
//! service, the console's server functions and pages, and the CLI.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::domain::approval::ApprovalState;
use graft::service::authoring::VersionChange;
use graft::service::{Actor, ApprovalFilter, ApprovalView, DecideHow, Graft};
use serde_json::{json, Value};

const API: &str = r#"
openapi: 3.0.3
info: {title: Acme, version: "1"}
paths:
  /items:
    post:
      operationId: createItem
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses: {"200": {description: ok}}
  /notes:
    post: {operationId: addNote, responses: {"200": {description: ok}}}
"#;

fn ops() -> Actor {
    Actor::Person("ops".into())
}

/// The approvals of `agent`.
async fn of(g: &Graft, agent: &str) -> Vec<ApprovalView> {
    g.approvals_where(&ApprovalFilter {
        agent: Some(agent.into()),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A change of the call's path: a new version that asks again.
fn moved(path: &str) -> VersionChange {
    VersionChange {
        path: Some(path.into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_denial_says_why_to_the_agent_and_each_decision_is_kept_with_its_person() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (_, token) = agent(&app, "bot").await;
    let client = modern_client(&app, &token).await;
    let create = json!({"vendor": "acme", "name": "create_item", "input": {"name": "x"}});
    let r = call(&client, "run_tool", create.clone()).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );

    // a version that changes the call before anyone decided: the request now asks about
    // it and says what changed, but not that it was approved before
    g.publish(&ops(), None, "acme", "create_item", moved("/items/v2"))
        .await
        .unwrap();
    let row = of(g, "bot").await.remove(0);
    assert_eq!(row.state, ApprovalState::Pending);
    assert_eq!(row.version, Some(2));
    assert_eq!(row.changed.as_deref(), Some("path /items → /items/v2"));
    assert!(row.decisions.is_empty(), "{row:?}");
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/approvals").await.text().await.unwrap();
    assert!(
        page.contains("A new version since it asked changed: path /items → /items/v2"),
        "{page}"
    );
    assert!(!page.contains("Approved before"), "{page}");

    // a person denies it in the console with a reason, as the page's form posts it
    let deny = |reason: &str| -> Vec<(&'static str, String)> {
        [
            ("agent", "bot"),
            ("tool", "acme__create_item"),
            ("decision", "deny"),
            ("version", "2"),
            ("reason", reason),
        ]
        .map(|(k, v)| (k, v.to_string()))
        .to_vec()
    };
    let long = deny(&"x".repeat(501));
    let long: Vec<(&str, &str)> = long.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let e: Value = b.call("decide", &long).await.json().await.unwrap();
    assert!(e.to_string().contains("at most 500"), "{e}");
    assert_eq!(
        of(g, "bot").await[0].state,
        ApprovalState::Pending,
        "nothing changed"
    );
    let fields = deny("  use the sandbox account\r\nfor tests ");
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = b.post_form("decide", "/approvals", &fields).await;
    assert!(
        r.status().is_redirection(),
        "a plain form post goes back to the page: {}",
        r.status()
    );
    assert!(
        r.headers()["location"]
            .to_str()
            .unwrap()
            .contains("/approvals"),
        "{:?}",
        r.headers()["location"]
    );
    let sent = v.count();
    let r = call(&client, "run_tool", create.clone()).await;
    assert_eq!(code(&r).as_deref(), Some("approval_denied"), "{}", text(&r));
    assert!(
        text(&r).contains("saying: use the sandbox account for tests"),
        "{}",
        text(&r)
    );
    let said = r.structured_content.clone().unwrap();
    assert_eq!(
        said["error"]["reason"], "use the sandbox account for tests",
        "{said}"
    );
    assert_eq!(v.count(), sent, "nothing was sent");
    // the page names the reason and who denied it, narrowed to denials
    let page = b.get("/approvals?state=denied").await.text().await.unwrap();
    assert!(page.contains("use the sandbox account for tests"), "{page}");
    assert!(page.contains("Decisions (1)"), "{page}");
    assert!(page.contains("version 2 denied by ops"), "{page}");
    let page = b
        .get("/approvals?state=granted")
        .await
        .text()
        .await
        .unwrap();
    assert!(!page.contains("acme__create_item"), "{page}");
    assert!(page.contains("0 of 1 approval shown"), "{page}");
    let page = b.get("/approvals?state=maybe").await.text().await.unwrap();
    assert!(page.contains("unknown state"), "{page}");

    // a reason goes with a denial only; another person approves, and the reason is gone
    let e = g
        .decide_approval_seen(
            &ops(),
            "bot",
            "acme",
            "create_item",
            &DecideHow {
                grant: true,
                seen: Some(2),
                reason: Some("fine"),
            },
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("goes with a denial"), "{e}");
    let ana = Actor::Person("ana".into());
    g.decide_approval_seen(
        &ana,
        "bot",
        "acme",
        "create_item",
        &DecideHow {
            grant: true,
            seen: Some(2),
            reason: None,
        },
    )
    .await
    .unwrap();
    let r = call(&client, "run_tool", create.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(v.last().path, "/items/v2");
    let row = of(g, "bot").await.remove(0);
    assert_eq!(row.reason, None);
    let decisions: Vec<_> = row
        .decisions
        .iter()
        .map(|d| {
            (
                d.version,
                d.state,
                d.decided_by.as_str(),
                d.reason.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            (Some(2), ApprovalState::Granted, "person:ana", None),
            (
                Some(2),
                ApprovalState::Denied,
                "person:ops",
                Some("use the sandbox account for tests")
            ),
        ]
    );

    // a version that changes the call after a grant: it was approved before, and says so
    g.publish(&ops(), None, "acme", "create_item", moved("/items/v3"))
        .await
        .unwrap();
    let row = of(g, "bot").await.remove(0);
    assert_eq!((row.state, row.version), (ApprovalState::Pending, Some(3)));
    assert!(
        row.changed
            .as_deref()
            .is_some_and(|c| c.contains("/items/v3")),
        "{row:?}"
    );
    assert_eq!(row.decisions.len(), 2, "a reset is not a decision");
    let page = b.get("/approvals").await.text().await.unwrap();
    assert!(
        page.contains("Approved before; a new version changed: path /items/v2 → /items/v3"),
        "{page}"
    );

    // the CLI names the person it acts as (--as), and lists a denial's reason
    let (ok, out) = cli(
        dir.path(),
        &[
            "--as",
            "rui",
            "deny",
            "bot",
            "acme__create_item",
            "--reason",
            "not on Fridays",
        ],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("its calls are told: not on Fridays"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["approval", "list", "--agent", "bot", "--state", "denied"],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert!(
        out.contains(" by rui ") && !out.contains("person:"),
        "{out}"
    );
    assert!(
        out.contains("reason the agent is told: not on Fridays"),
        "{out}"
    );
    let (ok, out) = cli(
        dir.path(),
        &["--as", " ", "deny", "bot", "acme__create_item"],
        &[],
    )
    .await;
    assert!(!ok && out.contains("--as takes a person's name"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["--as", "ana\u{202E}sr", "deny", "bot", "acme__create_item"],
        &[],
    )
    .await;
    assert!(!ok && out.contains("--as takes a person's name"), "{out}");

    // a denial stands for the next version, and names it: a person who changes their
    // mind grants what the tool does now, from the row they are shown
    g.publish(&ops(), None, "acme", "create_item", moved("/items/v4"))
        .await
        .unwrap();
    let row = of(g, "bot").await.remove(0);
    assert_eq!((row.state, row.version), (ApprovalState::Denied, Some(4)));
    let fields = [
        ("agent", "bot"),
        ("tool", "acme__create_item"),
        ("decision", "grant"),
        ("version", "4"),
    ];
    let r: Value = b.call("decide", &fields).await.json().await.unwrap();
    assert!(!r.to_string().contains("error"), "{r}");
    assert_eq!(of(g, "bot").await[0].state, ApprovalState::Granted);

    // two versions before anyone decides: the request says what each changed
    for path in ["/items/v5", "/items/v6"] {
        g.publish(&ops(), None, "acme", "create_item", moved(path))
            .await
            .unwrap();
    }
    let row = of(g, "bot").await.remove(0);
    assert_eq!((row.state, row.version), (ApprovalState::Pending, Some(6)));
    assert_eq!(
        row.changed.as_deref(),
        Some("path /items/v4 → /items/v5; path /items/v5 → /items/v6")
    );
    let (ok, out) = cli(dir.path(), &["approval", "list", "--agent", "bot"], &[]).await;
    assert!(ok, "{out}");
    assert!(
        out.contains("(approved before; a new version changed: path /items/v4"),
        "the last decision was a grant: {out}"
    );
    client.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn one_approval_for_every_agent_a_tool_waits_for_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    for vendor in ["acme", "beta"] {
        g.import_openapi(vendor, API, Some(&v.url()), &mut |_, _| {})
            .await
            .unwrap();
    }
    let mut clients = Vec::new();
    for name in ["a1", "a2", "a3", "a4"] {
        let (_, token) = agent(&app, name).await;
        let client = modern_client(&app, &token).await;
        let r = call(
            &client,
            "run_tool",
            json!({"vendor": "acme", "name": "create_item", "input": {}}),
        )
        .await;
        assert_eq!(
            code(&r).as_deref(),
            Some("approval_required"),
            "{}",
            text(&r)
        );
        clients.push(client);
    }
    // a1 also asks for another tool, a2 for another vendor's; a3 was denied; a4 is removed
    for (client, vendor, name) in [(0, "acme", "add_note"), (1, "beta", "create_item")] {
        let r = call(
            &clients[client],
            "run_tool",
            json!({"vendor": vendor, "name": name, "input": {}}),
        )
        .await;
        assert_eq!(
            code(&r).as_deref(),
            Some("approval_required"),
            "{}",
            text(&r)
        );
    }
    g.decide_approval(&ops(), "a3", "acme", "create_item", false)
        .await
        .unwrap();
    g.remove_agent(&ops(), "a4").await.unwrap();

    // filters: by agent, by state, by vendor
    let count = |f: ApprovalFilter| async move { g.approvals_where(&f).await.unwrap().len() };
    assert_eq!(
        count(ApprovalFilter {
            agent: Some("a1".into()),
            ..Default::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(ApprovalFilter {
            state: Some(ApprovalState::Pending),
            ..Default::default()
        })
        .await,
        4,
        "a1 twice and a2 twice; a removed agent's request is gone"
    );
    for (vendor, n) in [("acme", 4), ("beta", 1), ("other", 0)] {
        let f = ApprovalFilter {
            vendor: Some(vendor.into()),
            ..Default::default()
        };
        assert_eq!(count(f).await, n, "{vendor}");
    }
    assert_eq!(
        count(ApprovalFilter {
            agent: Some("a2".into()),
            vendor: Some("beta".into()),
            state: Some(ApprovalState::Pending),
        })
        .await,
        1
    );

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/approvals").await.text().await.unwrap();
    assert!(page.contains("Approve for all 2 waiting"), "{page}");
    // the console's filter by vendor: that vendor's approvals only, both vendors offered
    let d: Value = b
        .call("approvals", &[("vendor", "beta")])
        .await
        .json()
        .await
        .unwrap();
    let shown: Vec<(&str, &str)> = d["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent"].as_str().unwrap(), a["vendor"].as_str().unwrap()))
        .collect();
    assert_eq!(shown, [("a2", "beta")], "{d}");
    assert_eq!(d["vendors"], json!(["acme", "beta"]), "{d}");
    let page = b.get("/approvals?vendor=beta").await.text().await.unwrap();
    assert!(page.contains("beta__create_item"), "{page}");
    assert!(!page.contains("acme__add_note"), "{page}");
    // the version shown is checked: a newer one asks for another look, nothing changes
    let e: Value = b
        .call(
            "approve_pending",
            &[("tool", "acme__create_item"), ("version", "7")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(e.to_string().contains("look at it again"), "{e}");
    let r = b
        .call(
            "approve_pending",
            &[("tool", "acme__create_item"), ("version", "1")],
        )
        .await;
    assert_eq!(r.status(), 200);
    let granted: Vec<String> = r.json().await.unwrap();
    assert_eq!(granted, ["a1", "a2"]);
    for (name, state) in [
        ("a1", ApprovalState::Granted),
        ("a2", ApprovalState::Granted),
        ("a3", ApprovalState::Denied),
    ] {
        let row = of(g, name)
            .await
            .into_iter()
            .find(|a| a.name == "create_item" && a.vendor == "acme")
            .unwrap();
        assert_eq!(row.state, state, "{name}");
        if state == ApprovalState::Granted {
            assert_eq!(row.decided_by.as_deref(), Some("person:ops"));
            assert_eq!(row.decisions.len(), 1);
        }
    }
    let other = of(g, "a1")
        .await
        .into_iter()
        .find(|a| a.name == "add_note")
        .unwrap();
    assert_eq!(other.state, ApprovalState::Pending, "another tool waits on");
    let sent = v.count();
    let r = call(
        &clients[1],
        "run_tool",
        json!({"vendor": "acme", "name": "create_item", "input": {}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(v.count(), sent + 1);
    // again: nothing waits any more
    let r = b
        .call(
            "approve_pending",
            &[("tool", "acme__create_item"), ("version", "1")],
        )
        .await;
    let granted: Vec<String> = r.json().await.unwrap();
    assert!(granted.is_empty());
    // an agent never decides
    let e = g
        .grant_pending_approvals(&Actor::Agent(1), "acme", "add_note", 1)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("only a person"), "{e}");
    for c in clients {
        c.cancel().await.unwrap();
    }
    app.stop().await;
}
