//! Who did what (issue 28.8): each person's action is recorded with their name, through
//! the console's server functions, the service and the CLI (its OS user or `--as`);
//! agents' own actions and every secret stay out; the Audit page filters, the CSV export
//! parses and is defused, `graft audit` lists and filters.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::db::AuditQuery;
use graft::domain::audit::AuditAction;
use graft::service::{Actor, DecideHow, Graft};
use serde_json::json;

/// Every event, oldest first, as (person, action, target, detail).
async fn events(g: &Graft) -> Vec<(String, AuditAction, String, Option<String>)> {
    let mut rows = g
        .audit_events(&AuditQuery {
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap();
    rows.reverse();
    rows.into_iter()
        .map(|r| (r.person, r.action, r.target, r.detail))
        .collect()
}

#[tokio::test]
async fn each_persons_action_is_recorded_by_name_and_no_secret_or_agent_action_is() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ana = Actor::Person("ana".into());
    g.import_openapi_by(&ana, "acme", ACME_ITEMS, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let key = g
        .add_connection_choosing(
            &ana,
            "acme",
            "ops key",
            "bearer",
            None,
            Some("first-secret-7781"),
            None,
        )
        .await
        .unwrap();

    // a person in the console: sign-in, a new agent, its settings, a rotated token, a
    // replaced secret
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .call(
            "add_agent",
            &[
                ("name", "bot"),
                ("harness", ""),
                ("cap", "10"),
                ("window", "7"),
            ],
        )
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = b
        .call(
            "edit_agent",
            &[
                ("agent", "bot"),
                ("name", "bot"),
                ("cap", "12"),
                ("window", "7"),
            ],
        )
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = b
        .call("rotate_token", &[("agent", "bot"), ("confirm", "yes")])
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = b
        .call(
            "replace_connection_secret",
            &[
                ("id", &key.id.to_string()),
                ("secret", "second-secret-9932"),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let token = g
        .rotate_token(g.agent_by_name("bot").await.unwrap().id)
        .await;
    let token = token.unwrap();

    // an agent's own actions are the calls log's and History's, not the audit's
    let client = modern_client(&app, &token).await;
    let r = call(
        &client,
        "promote",
        json!({"vendor": "acme", "name": "list_items"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
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
    g.decide_approval_seen(
        &Actor::Person("ops".into()),
        "bot",
        "acme",
        "create_item",
        &DecideHow {
            grant: false,
            seen: None,
            reason: Some("not in production"),
        },
    )
    .await
    .unwrap();
    client.cancel().await.unwrap();

    let got = events(g).await;
    let seen: Vec<(&str, AuditAction, &str)> = got
        .iter()
        .map(|(p, a, t, _)| (p.as_str(), *a, t.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("ana", AuditAction::VendorImport, "acme"),
            ("ana", AuditAction::ConnectionAdd, "acme: ops key (#1)"),
            ("ops", AuditAction::SignIn, "ops"),
            ("ops", AuditAction::AgentAdd, "bot"),
            ("ops", AuditAction::AgentEdit, "bot"),
            ("ops", AuditAction::AgentRotateToken, "bot"),
            ("ops", AuditAction::ConnectionReplace, "acme: ops key (#1)"),
            ("ops", AuditAction::ApprovalDeny, "bot → acme__create_item"),
        ],
        "{got:#?}"
    );
    let detail = |a: AuditAction| {
        got.iter()
            .find(|e| e.1 == a)
            .and_then(|e| e.3.clone())
            .unwrap_or_default()
    };
    assert_eq!(detail(AuditAction::SignIn), "from 127.0.0.1");
    assert!(detail(AuditAction::AgentEdit).contains("cap 12"), "{got:?}");
    assert!(
        detail(AuditAction::ApprovalDeny).contains("saying: not in production"),
        "{got:?}"
    );
    assert!(
        detail(AuditAction::VendorImport).contains("2 operations: 2 new"),
        "{got:?}"
    );
    let all = format!("{got:?}");
    for secret in ["first-secret-7781", "second-secret-9932", PASSWORD, &token] {
        assert!(!all.contains(secret), "a secret was recorded: {all}");
    }

    // the Audit page, filtered; the CSV of what it shows
    let page = b.get("/audit?person=ops").await.text().await.unwrap();
    assert!(
        page.contains("replaced a connection&#x27;s secret")
            || page.contains("replaced a connection's secret"),
        "{page}"
    );
    assert!(
        !page.contains("imported a document</td>"),
        "ana's import is filtered out"
    );
    let page = b.get("/audit?action=nope").await.text().await.unwrap();
    assert!(page.contains("unknown action"), "{page}");
    let r = b.get("/audit.csv?action=approval.deny").await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    let csv = r.text().await.unwrap();
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines[0], "time,person,action,target,detail");
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(
        lines[1].contains(",ops,approval.deny,bot → acme__create_item,"),
        "{csv}"
    );
    let r = b.get("/audit.csv?days=0").await;
    assert_eq!(r.status(), 400);
    // signed out: no CSV
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("http://{}/audit.csv", app.addr))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    assert!(!r.text().await.unwrap().contains("approval.deny"));

    // the CLI: its person is the OS user, or --as; graft audit filters and prints CSV
    let (ok, out) = cli(dir.path(), &["agent", "rotate", "bot"], &[("USER", "rui")]).await;
    assert!(ok, "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["--as", "kim", "agent", "disable", "bot"],
        &[("USER", "rui")],
    )
    .await;
    assert!(ok, "{out}");
    let (ok, out) = cli(dir.path(), &["audit", "--person", "rui"], &[("USER", "x")]).await;
    assert!(ok, "{out}");
    assert!(
        out.contains("agent.rotate_token") && out.contains("bot"),
        "{out}"
    );
    assert!(!out.contains("agent.disable"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["audit", "--action", "agent.disable", "--csv"],
        &[("USER", "x")],
    )
    .await;
    assert!(ok, "{out}");
    assert!(
        out.starts_with("time,person,action,target,detail\r\n"),
        "{out}"
    );
    assert!(out.contains(",kim,agent.disable,bot"), "{out}");
    // and enabled again through the binary: its token works again, audited
    assert!(g_disabled(&app, "bot").await);
    let (ok, out) = cli(dir.path(), &["agent", "enable", "bot"], &[("USER", "rui")]).await;
    assert!(ok, "{out}");
    assert!(!g_disabled(&app, "bot").await, "enabled");
    let (ok, out) = cli(
        dir.path(),
        &["audit", "--action", "agent.enable", "--csv"],
        &[("USER", "x")],
    )
    .await;
    assert!(ok && out.contains(",rui,agent.enable,bot"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["audit", "--target", "ACME__CREATE"],
        &[("USER", "x")],
    )
    .await;
    assert!(ok && out.contains("approval.deny"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["audit", "--action", "agent.explode"],
        &[("USER", "x")],
    )
    .await;
    assert!(!ok && out.contains("unknown action"), "{out}");
    app.stop().await;
}

/// Whether the agent `name` is disabled, as the database says.
async fn g_disabled(app: &TestApp, name: &str) -> bool {
    app.graft
        .agent_by_name(name)
        .await
        .unwrap()
        .disabled_at
        .is_some()
}
