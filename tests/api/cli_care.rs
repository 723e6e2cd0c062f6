//! A team's care of Graft from the command line (issue 28.1, 28.2, 28.4, 28.8): a key
//! rotated in place and tested, a second connection made the default, one revoked, an
//! agent removed behind `--yes`, a sweep as of a future date previewed and then
//! committed; each person's change in the audit log under the CLI's person.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::db::AuditQuery;
use graft::domain::audit::AuditAction;
use graft::service::Actor;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_rotates_keys_removes_an_agent_and_previews_a_sweep_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = vendor::start(None).await;
    let app = spawn_app_in(d).await;
    let g = &app.graft;
    let ana = Actor::Person("ana".into());
    g.import_openapi_by(
        &ana,
        "acme",
        ACME_ITEMS,
        Some(&format!("{}/anything", v.url())),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    let key = g
        .add_connection_choosing(
            &ana,
            "acme",
            "old key",
            "bearer",
            None,
            Some("old-secret-4410"),
            None,
        )
        .await
        .unwrap();
    let id = key.id.to_string();

    // test: one harmless read (the GET without input) with the credential
    let (ok, out) = cli(d, &["connection", "test", &id], &[]).await;
    assert!(ok, "{out}");
    assert_eq!(v.count(), 1, "{out}");
    assert_eq!(
        (v.last().method.as_str(), v.last().path.as_str()),
        ("GET", "/anything/items")
    );
    assert_eq!(v.last().headers["authorization"], "Bearer old-secret-4410");
    assert!(!out.contains("old-secret-4410"), "{out}");

    // the key rotated in place: the next request carries the new secret
    let (ok, out) = cli(
        d,
        &["connection", "replace", &id, "--secret-env", "NEW_KEY"],
        &[("NEW_KEY", "new-secret-8823")],
    )
    .await;
    assert!(ok, "{out}");
    let (ok, out) = cli(d, &["connection", "test", &id], &[]).await;
    assert!(ok, "{out}");
    assert_eq!(v.last().headers["authorization"], "Bearer new-secret-8823");

    // a second connection without saying which calls use: refused, nothing added
    let add = [
        "connection",
        "add",
        "acme",
        "--label",
        "second",
        "--kind",
        "bearer",
        "--secret-env",
        "K2",
    ];
    let (ok, out) = cli(d, &add, &[("K2", "second-secret-5150")]).await;
    assert!(!ok && out.contains("--default"), "{out}");
    assert_eq!(
        g.connections()
            .await
            .unwrap()
            .iter()
            .filter(|c| c.vendor == "acme")
            .count(),
        1
    );
    // made the default, then the old one made the default again by name
    let mut add_default = add.to_vec();
    add_default.push("--default");
    let (ok, out) = cli(d, &add_default, &[("K2", "second-secret-5150")]).await;
    assert!(ok, "{out}");
    let second = g
        .connections()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.vendor == "acme" && c.label == "second")
        .unwrap();
    assert_eq!(
        g.vendor("acme").await.unwrap().default_connection_id,
        Some(second.id)
    );
    let (ok, out) = cli(d, &["connection", "default", "acme", "old key"], &[]).await;
    assert!(ok, "{out}");
    assert_eq!(
        g.vendor("acme").await.unwrap().default_connection_id,
        Some(key.id)
    );
    let (ok, out) = cli(d, &["connection", "revoke", &second.id.to_string()], &[]).await;
    assert!(ok, "{out}");

    // a vendor with no harmless read: the test says so and sends nothing
    let writes_only = ACME_ITEMS.replace(
        "    get: {operationId: listItems, responses: {\"200\": {description: ok}}}\n",
        "",
    );
    g.import_openapi_by(
        &ana,
        "writer",
        &writes_only,
        Some(&format!("{}/anything", v.url())),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    let w = g
        .add_connection_choosing(
            &ana,
            "writer",
            "k",
            "bearer",
            None,
            Some("writer-secret-1"),
            None,
        )
        .await
        .unwrap();
    let sent = v.count();
    let (_, out) = cli(d, &["connection", "test", &w.id.to_string()], &[]).await;
    assert!(
        out.contains("has no tool that reads without input"),
        "{out}"
    );
    assert_eq!(v.count(), sent, "nothing was sent");

    // an agent removed: only with --yes; its token is refused after
    let (bot, token) = g.add_agent("bot", None, Some(5), Some(1)).await.unwrap();
    g.promote_tool(&ana, bot.id, "acme", "list_items")
        .await
        .unwrap();
    let (ok, out) = cli(d, &["agent", "remove", "bot"], &[]).await;
    assert!(!ok && out.contains("--yes"), "{out}");
    assert!(
        g.authenticate(&token).await.unwrap().is_some(),
        "not removed yet"
    );
    let (ok, out) = cli(d, &["agent", "remove", "bot", "--yes"], &[]).await;
    assert!(ok, "{out}");
    // the running server hears the other process's change (its change events) and
    // refuses the token from then on
    let mut refused = false;
    for _ in 0..100 {
        if g.authenticate(&token).await.unwrap().is_none() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(refused, "its token is refused");
    assert!(g.working_set(bot.id).await.unwrap().is_empty());

    // a sweep as of 30 days on: a preview changes nothing; --commit applies it now
    let (kim, kim_token) = g.add_agent("kim", None, Some(5), Some(1)).await.unwrap();
    g.promote_tool(&ana, kim.id, "acme", "list_items")
        .await
        .unwrap();
    let at = (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339();
    let (ok, out) = cli(d, &["sweep", "--at", &at], &[]).await;
    assert!(ok, "{out}");
    assert!(
        out.contains("acme__list_items"),
        "what it would demote: {out}"
    );
    assert_eq!(
        g.working_set(kim.id).await.unwrap().len(),
        1,
        "a preview: {out}"
    );
    let (ok, out) = cli(d, &["sweep", "--at", &at, "--commit"], &[]).await;
    assert!(ok, "{out}");
    assert!(g.working_set(kim.id).await.unwrap().is_empty(), "{out}");
    let now = chrono::Utc::now().timestamp_millis();
    let h = g.history(kim.id, 10, 0).await.unwrap();
    assert!(
        h.iter().all(|e| e.at <= now),
        "no future time in History: {h:?}"
    );

    // the agent page's "Connect a client" shows every client's configuration with a
    // placeholder where the token goes, never a token
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/agents/kim").await.text().await.unwrap();
    assert!(page.contains("Connect a client"), "{page}");
    assert!(page.matches("YOUR_AGENT_TOKEN").count() >= 6, "{page}");
    for client in [
        "Claude Code",
        "Cursor",
        "VS Code",
        "Codex",
        "Hermes",
        "OpenClaw",
    ] {
        assert!(page.contains(client), "{client}: {page}");
    }
    assert!(!page.contains(&kim_token), "no token: {page}");

    // each change under the CLI's person, never a secret
    let events = g
        .audit_events(&AuditQuery {
            person: Some("rui".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let actions: Vec<AuditAction> = events.iter().map(|e| e.action).collect();
    for a in [
        AuditAction::ConnectionReplace,
        AuditAction::ConnectionAdd,
        AuditAction::ConnectionDefault,
        AuditAction::ConnectionRevoke,
        AuditAction::AgentRemove,
        AuditAction::SweepRun,
    ] {
        assert!(actions.contains(&a), "{a:?} in {actions:?}");
    }
    let sweep = events
        .iter()
        .find(|e| e.action == AuditAction::SweepRun)
        .unwrap();
    let said = sweep.detail.clone().unwrap_or_default();
    assert!(
        said.starts_with("as of ") && said.ends_with(": 1 working-set entry demoted"),
        "{said}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.action == AuditAction::SweepRun)
            .count(),
        1,
        "the preview is not audited"
    );
    let all = format!("{events:?}");
    for secret in [
        "old-secret-4410",
        "new-secret-8823",
        "second-secret-5150",
        &token,
    ] {
        assert!(!all.contains(secret), "{all}");
    }
    app.stop().await;
}
