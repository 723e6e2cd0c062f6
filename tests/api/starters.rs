//! Starter sets (issue 31): templates and each agent's own starter tools, promoted by the
//! rule through the console's server functions (hydrated and plain form posts), seen
//! by real MCP clients, trimmed by the sweep like any tool, and approved ahead.

use super::console::{Browser, PASSWORD};
use super::helpers::*;
use super::vendor;
use graft::db;
use graft::domain::{Cause, PromotedBy};
use graft::service::{Actor, ServiceError};
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::time::Duration;

const DAY: i64 = 86_400_000;

struct Setup {
    app: TestApp,
    vendor: vendor::Vendor,
    browser: Browser,
    _dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    import_petstore(&app.graft, &format!("{}/anything", vendor.url())).await;
    app.graft
        .add_connection(
            "petstore",
            "main",
            "header",
            Some("api_key"),
            Some("petstore-key-123"),
        )
        .await
        .unwrap();
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut browser = Browser::new(&app);
    browser.sign_in("ops", PASSWORD).await;
    Setup {
        app,
        vendor,
        browser,
        _dir: dir,
    }
}

fn ops() -> Actor {
    Actor::Person("ops".into())
}

/// `(vendor__name, promoted by)` of an agent's working set.
async fn set_of(app: &TestApp, agent_id: i64) -> Vec<(String, PromotedBy)> {
    app.graft
        .working_set(agent_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (format!("{}__{}", e.tool.vendor, e.tool.name), e.promoted_by))
        .collect()
}

/// `(vendor__name, action, cause, actor)` of an agent's history, oldest first.
async fn history_of(app: &TestApp, agent_id: i64) -> Vec<(String, String, Cause, String)> {
    let mut h: Vec<_> = app
        .graft
        .history(agent_id, 500, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|h: db::HistoryRow| {
            (
                format!("{}__{}", h.vendor, h.name),
                h.action.as_str().to_string(),
                h.cause,
                h.actor,
            )
        })
        .collect();
    h.reverse();
    h
}

#[tokio::test]
async fn a_template_gives_new_agents_their_tools_and_its_edits_reach_them_once() {
    let mut s = setup().await;
    let g = s.app.graft.clone();
    let read_tools = ["petstore__get_pet_by_id", "petstore__find_pets_by_status"];
    let tools: Vec<String> = read_tools.iter().map(|t| t.to_string()).collect();

    // only people define starter sets; a bad reference writes nothing
    assert!(matches!(
        g.create_starter_template(&Actor::Agent(1), "support", &tools)
            .await,
        Err(ServiceError::Forbidden(_))
    ));
    assert!(matches!(
        g.create_starter_template(&ops(), "support", &["petstore__nope".into()])
            .await,
        Err(ServiceError::ToolNotFound(_))
    ));
    assert!(matches!(
        g.create_starter_template(&ops(), "bad name", &tools).await,
        Err(ServiceError::Invalid(_))
    ));
    assert!(g.starter_templates().await.unwrap().is_empty());
    g.create_starter_template(&ops(), "support", &tools)
        .await
        .unwrap();
    assert!(matches!(
        g.create_starter_template(&ops(), "support", &[]).await,
        Err(ServiceError::Conflict(_))
    ));

    // the console's New agent form, posted without JavaScript, with the template
    let form = |name: &'static str, starter: &'static str| {
        vec![
            ("name", name),
            ("harness", ""),
            ("cap", "20"),
            ("window", "21"),
            ("starter", starter),
        ]
    };
    let r = s
        .browser
        .post_form("add_agent", "/agents", &form("nobody", "no-such-template"))
        .await;
    assert!(r.status().is_redirection());
    assert!(
        r.headers()["location"].to_str().unwrap().contains("__err"),
        "an unknown template is refused at its field"
    );
    assert!(
        g.agent_by_name("nobody").await.is_err(),
        "no agent is created"
    );
    let r = s
        .browser
        .post_form("add_agent", "/agents", &form("bot2", "support"))
        .await;
    assert!(
        r.headers()["location"]
            .to_str()
            .unwrap()
            .starts_with("/agents/bot2/token"),
        "{:?}",
        r.headers()
    );
    let bot2 = g.agent_by_name("bot2").await.unwrap();
    let expected: Vec<(String, PromotedBy)> = {
        let mut v: Vec<_> = read_tools
            .iter()
            .map(|t| (t.to_string(), PromotedBy::Rule))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(set_of(&s.app, bot2.id).await, expected);
    for (_, action, cause, actor) in history_of(&s.app, bot2.id).await {
        assert_eq!(
            (action.as_str(), cause, actor.as_str()),
            ("promote", Cause::Rule, "rule")
        );
    }

    // an agent created from the template sees its tools in its first tools/list
    let (bot, token, applied) = g
        .add_agent_with_starter("bot", None, Some(20), None, Some("support"))
        .await
        .unwrap();
    let applied = applied.unwrap();
    assert_eq!(applied.promoted.len(), 2);
    assert!(applied.would_demote.is_empty());
    let (client, events) = legacy_client(&s.app, &token, ProtocolVersion::V_2025_11_25).await;
    let names = tool_names(&client).await;
    for t in read_tools {
        assert!(names.contains(&t.to_string()), "{t} in {names:?}");
    }

    // editing the template with "apply" reaches each agent that uses it: one
    // list_changed for bot, and the new tool in its list
    let r = s
        .browser
        .call(
            "edit_template",
            &[
                ("template", "support"),
                ("add", "petstore__find_pets_by_tags petstore__get_inventory"),
                ("apply", "yes"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    events.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(events.count(), 1, "two new starter tools, one list_changed");
    let names = tool_names(&client).await;
    assert!(names.contains(&"petstore__find_pets_by_tags".to_string()));
    assert!(names.contains(&"petstore__get_inventory".to_string()));
    assert_eq!(set_of(&s.app, bot2.id).await.len(), 4, "bot2 too");

    // the sweep treats starter tools like any other: idle ones go with cause idle ...
    let report = g
        .sweep_as_of(g.clock_now() + 22 * DAY, false)
        .await
        .unwrap();
    assert_eq!(report.demotions(), 8, "four tools of each agent");
    assert!(set_of(&s.app, bot.id).await.is_empty());
    let last = history_of(&s.app, bot.id).await;
    assert!(last
        .iter()
        .filter(|h| h.1 == "demote")
        .all(|h| h.2 == Cause::Idle));
    events.wait_for(2).await;

    // ... and applying the set again brings them back, promoted by the rule
    let r = s.browser.call("apply_starter", &[("agent", "bot")]).await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let back = set_of(&s.app, bot.id).await;
    assert_eq!(back.len(), 4);
    assert!(back.iter().all(|(_, by)| *by == PromotedBy::Rule));
    events.wait_for(3).await;
    let bot2_set = set_of(&s.app, bot2.id).await;
    assert!(
        bot2_set.is_empty(),
        "applying one agent's set leaves the other's"
    );

    // taking a tool off the template demotes nothing; without "apply" nothing is promoted
    let r = s
        .browser
        .call(
            "edit_template",
            &[
                ("template", "support"),
                ("remove", "petstore__get_inventory"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(set_of(&s.app, bot.id).await.len(), 4);
    assert!(set_of(&s.app, bot2.id).await.is_empty());
    let t = g.starter_template("support").await.unwrap();
    assert_eq!(t.tools.len(), 3);
    assert_eq!(t.agents, vec!["bot".to_string(), "bot2".to_string()]);

    // adding a tool to an agent's own list promotes that tool, not the ones swept away
    let applied = g
        .edit_agent_starter(&ops(), "bot2", &["petstore__get_inventory".into()], &[])
        .await
        .unwrap();
    assert_eq!(
        applied.promoted,
        vec!["petstore__get_inventory".to_string()]
    );
    assert_eq!(set_of(&s.app, bot2.id).await.len(), 1);
    // taking off a tool that is not on the agent's own list says where it comes from
    let e = g
        .edit_agent_starter(&ops(), "bot2", &[], &["petstore__get_pet_by_id".into()])
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("comes from the template support"),
        "{e}"
    );
    // using no template promotes and demotes nothing
    let applied = g.set_agent_template(&ops(), "bot2", None).await.unwrap();
    assert!(applied.promoted.is_empty());
    assert_eq!(set_of(&s.app, bot2.id).await.len(), 1);
    g.set_agent_template(&ops(), "bot2", Some("support"))
        .await
        .unwrap();
    assert_eq!(
        set_of(&s.app, bot2.id).await.len(),
        4,
        "the template's 3 tools"
    );

    // a starter set larger than the cap says what the next sweep would demote
    g.set_agent("bot2", None, Some(2), None).await.unwrap();
    let applied = g.apply_starter(&ops(), "bot2").await.unwrap();
    assert_eq!((applied.size, applied.cap), (4, 2));
    assert_eq!(applied.would_demote.len(), 2);
    assert!(applied.would_demote.iter().all(|d| d.1 == Cause::Cap));

    // deleting the template needs its second step; the agents keep their sets
    let r = s
        .browser
        .call("delete_template", &[("template", "support")])
        .await;
    assert_ne!(r.status(), 200);
    assert!(g.starter_template("support").await.is_ok());
    let r = s
        .browser
        .call(
            "delete_template",
            &[("template", "support"), ("confirm", "yes")],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    assert!(g.starter_templates().await.unwrap().is_empty());
    assert_eq!(g.starter_set("bot").await.unwrap().template, None);
    assert_eq!(set_of(&s.app, bot.id).await.len(), 4);
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn an_approval_granted_ahead_on_the_agents_page_lets_the_first_call_run() {
    let mut s = setup().await;
    let g = s.app.graft.clone();
    let (_, token) = agent(&s.app, "writer").await;

    // the agent's own starter set, from its page (hydrated server function)
    let r = s
        .browser
        .call(
            "edit_starter",
            &[("agent", "writer"), ("add", "petstore__add_pet")],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let d = agent_page(&mut s.browser, "writer").await;
    let tool = &d["starter"]["tools"][0];
    assert_eq!(tool["name"], "add_pet");
    assert_eq!(tool["own"], true);
    assert_eq!(tool["promoted"], true);
    assert_eq!(
        tool["awaits_approval"], true,
        "the page says the write waits before the first call"
    );
    assert_eq!(d["entries"][0]["promoted_by"], "the rule");
    let version = tool["version"].as_i64().unwrap().to_string();

    // Approve now: the approvals' own server function, on the version shown
    let r = s
        .browser
        .call(
            "decide",
            &[
                ("agent", "writer"),
                ("tool", "petstore__add_pet"),
                ("decision", "grant"),
                ("version", version.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    let d = agent_page(&mut s.browser, "writer").await;
    assert_eq!(d["starter"]["tools"][0]["awaits_approval"], false);

    // the agent's first call of the write runs at once
    let client = modern_client(&s.app, &token).await;
    let r = call(
        &client,
        "petstore__add_pet",
        json!({"name": "rex", "photoUrls": ["u"]}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(s.vendor.count(), 1, "the vendor got the first call");
    assert_eq!(s.vendor.last().method, "POST");

    // a denial reads as one, not as a wait
    g.decide_approval(&ops(), "writer", "petstore", "add_pet", false)
        .await
        .unwrap();
    let e = &g.starter_set("writer").await.unwrap().entries[0];
    assert!(e.denied && !e.awaits_approval);

    // taking it off the starter set leaves it promoted
    g.edit_agent_starter(&ops(), "writer", &[], &["petstore__add_pet".into()])
        .await
        .unwrap();
    assert!(g.starter_set("writer").await.unwrap().entries.is_empty());
    assert_eq!(g.working_set_view(1).await.unwrap().len(), 1);
    client.cancel().await.unwrap();
    s.app.stop().await;
}

/// The agent page's data, as the hydrated page reads it.
async fn agent_page(b: &mut Browser, name: &str) -> Value {
    let r = b.call("agent", &[("name", name), ("page", "1")]).await;
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}
