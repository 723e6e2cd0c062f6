//! The working set as a context budget (issue 29): every tool's cost in tokens, counted
//! on the JSON tools/list serves, shown by find_tool, promote and the console; a token
//! budget per agent that the sweep trims to as it trims to the cap.

use super::console::{Browser, PASSWORD};
use super::helpers::*;
use super::vendor;
use graft::domain::Cause;
use graft::service::Actor;
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

struct Setup {
    app: TestApp,
    _vendor: vendor::Vendor,
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
        _vendor: vendor,
        browser,
        _dir: dir,
    }
}

/// o200k_base tokens of `text`, counted here with the tokenizer crate itself.
fn o200k(text: &str) -> i64 {
    tiktoken_rs::o200k_base()
        .expect("bundled vocabulary")
        .encode_with_special_tokens(text)
        .len() as i64
}

#[tokio::test]
async fn each_tool_costs_the_tokens_of_the_json_tools_list_serves_and_every_answer_says_so() {
    let mut s = setup().await;
    let g = s.app.graft.clone();
    let (id, token) = agent(&s.app, "bot").await;
    let (client, _) = legacy_client(&s.app, &token, ProtocolVersion::V_2025_11_25).await;

    // the meta-tools are always shown by Claude Code (issue 29.4)
    let listed = client.list_tools(None).await.unwrap().tools;
    for t in &listed {
        let meta = serde_json::to_value(t.meta.as_ref().expect("meta-tools carry _meta")).unwrap();
        assert_eq!(meta["anthropic/alwaysLoad"], true, "{}", t.name);
    }

    // find_tool's hits carry their tokens
    let r = call(
        &client,
        "find_tool",
        json!({"query": "find pets by their status"}),
    )
    .await;
    let hits = r.structured_content.as_ref().unwrap()["hits"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!hits.is_empty());
    let hit_tokens: HashMap<String, i64> = hits
        .iter()
        .map(|h| {
            (
                format!(
                    "{}__{}",
                    h["vendor"].as_str().unwrap(),
                    h["name"].as_str().unwrap()
                ),
                h["tokens"].as_i64().expect("each hit has tokens"),
            )
        })
        .collect();
    assert!(text(&r).contains(" tokens)"), "{}", text(&r));

    // promote two tools: the answer sums what they cost
    let chosen = ["find_pets_by_status", "add_pet"];
    let mut last = Value::Null;
    for name in chosen {
        let r = call(
            &client,
            "promote",
            json!({"vendor": "petstore", "name": name}),
        )
        .await;
        assert!(r.is_error != Some(true), "{}", text(&r));
        last = r.structured_content.clone().unwrap();
    }

    // what the client receives in tools/list, counted here, is what Graft counted
    let listed = client.list_tools(None).await.unwrap().tools;
    let mut served_total = 0;
    for name in chosen {
        let t = listed
            .iter()
            .find(|t| t.name == format!("petstore__{name}"))
            .expect("promoted tool listed");
        let counted = o200k(&serde_json::to_string(t).unwrap());
        assert!(counted > 20, "{name}: {counted}");
        served_total += counted;
        let stored = g.tool("petstore", name).await.unwrap().tokens;
        assert_eq!(stored, Some(counted), "{name}");
        if let Some(h) = hit_tokens.get(&format!("petstore__{name}")) {
            assert_eq!(*h, counted, "find_tool's tokens for {name}");
        }
    }
    assert_eq!(last["size"], 2);
    assert_eq!(last["tokens"], served_total, "{last}");
    assert!(last.get("tokenBudget").is_none(), "no budget set: {last}");

    // the console's agent page: each entry's tokens and the total
    let r = s
        .browser
        .call("agent", &[("name", "bot"), ("page", "1")])
        .await;
    let page: Value = r.json().await.unwrap();
    assert_eq!(page["agent"]["tokens"], served_total);
    let entry_sum: i64 = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["tokens"].as_i64().unwrap())
        .sum();
    assert_eq!(entry_sum, served_total);
    // tokens over time: the last step is today's total
    assert_eq!(
        page["token_steps"].as_array().unwrap().last().unwrap()[1],
        served_total
    );
    let html = s.browser.get("/agents/bot").await.text().await.unwrap();
    assert!(html.contains(r#"data-label="Tokens""#), "a Tokens column");
    assert!(
        html.contains("Working-set tokens over time"),
        "the tokens chart"
    );
    // the Toolbox and the tool page
    let html = s
        .browser
        .get("/tools/petstore/add_pet")
        .await
        .text()
        .await
        .unwrap();
    let add_pet = g.tool("petstore", "add_pet").await.unwrap().tokens.unwrap();
    assert!(
        html.contains(&format!("costs an agent's context {add_pet} tokens")),
        "the tool page says its tokens"
    );
    assert_eq!(g.list_agents().await.unwrap()[0].tokens, served_total);
    let _ = id;
    client.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn a_token_budget_trims_never_called_tools_oldest_first_and_spares_a_used_one() {
    let mut s = setup().await;
    let g = s.app.graft.clone();
    let (id, token) = agent(&s.app, "bot").await;
    let ops = Actor::Person("ops".into());

    // every petstore tool but one, promoted a millisecond apart, oldest first
    let mut names: Vec<String> = g
        .browse_tools(Some("petstore"), graft::service::BrowseOrder::Name, 200, 0)
        .await
        .unwrap()
        .0
        .into_iter()
        .map(|r| r.name)
        .collect();
    names.retain(|n| n != "get_pet_by_id");
    names.insert(1, "get_pet_by_id".into());
    let newest = names.pop().unwrap();
    for n in &names {
        g.promote_tool(&ops, id, "petstore", n).await.unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let tokens = |n: &str| {
        let g = g.clone();
        let n = n.to_string();
        async move { g.tool("petstore", &n).await.unwrap().tokens.unwrap() }
    };
    let mut total = 0;
    for n in names.iter().chain([&newest]) {
        total += tokens(n).await;
    }
    // the second-oldest is called: the budget never takes it
    let (client, _) = legacy_client(&s.app, &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(&client, "petstore__get_pet_by_id", json!({"petId": 7})).await;
    assert!(r.is_error != Some(true), "{}", text(&r));

    // the form refuses 0 and 500,001 at its field, hydrated and without JavaScript;
    // nothing is saved
    for (budget, hydrated) in [
        ("0", true),
        ("500001", false),
        ("0", false),
        ("500,001", true),
    ] {
        let form = [
            ("agent", "bot"),
            ("name", "bot"),
            ("cap", "20"),
            ("window", "21"),
            ("token_budget", budget),
        ];
        if hydrated {
            let r = s.browser.call("edit_agent", &form).await;
            assert!(!r.status().is_success());
            let e: Value = r.json().await.unwrap();
            assert_eq!(e["Field"]["field"], "token_budget", "{budget}");
            assert!(
                e["Field"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("token budget must be between 1,000 and 500,000 tokens"),
                "{e}"
            );
        } else {
            let r = s
                .browser
                .post_form("edit_agent", "/agents/bot", &form)
                .await;
            let location = r.headers()["location"].to_str().unwrap().to_string();
            assert!(location.contains("__err="), "{location}");
            let base = s.browser.base.clone();
            let page = s
                .browser
                .get(location.trim_start_matches(&base))
                .await
                .text()
                .await
                .unwrap();
            assert!(
                page.contains(
                    r#"data-field="token_budget" class="field-error">token budget must be between"#
                ),
                "{budget}"
            );
        }
        assert_eq!(
            g.agent(id).await.unwrap().token_budget,
            None,
            "nothing saved"
        );
    }

    // a budget that fits all but the oldest and the third-oldest tools
    let budget = total - tokens(&names[0]).await - tokens(&names[2]).await;
    assert!(budget >= 1000, "the petstore is big enough: {budget}");
    let b = budget.to_string();
    let r = s
        .browser
        .post_form(
            "edit_agent",
            "/agents/bot",
            &[
                ("agent", "bot"),
                ("name", "bot"),
                ("cap", "20"),
                ("window", "21"),
                ("token_budget", &b),
            ],
        )
        .await;
    assert!(r.status().is_redirection());
    assert_eq!(g.agent(id).await.unwrap().token_budget, Some(budget));

    // a promotion past the budget succeeds and says by how much and what would go
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": newest}),
    )
    .await;
    assert!(r.is_error != Some(true), "{}", text(&r));
    let sc = r.structured_content.clone().unwrap();
    assert_eq!(sc["tokens"], total);
    assert_eq!(sc["tokenBudget"], budget);
    assert_eq!(sc["overBudget"], total - budget);
    let expected = json!([
        format!("petstore__{}", names[0]),
        format!("petstore__{}", names[2])
    ]);
    assert_eq!(sc["wouldDemote"], expected, "{sc}");
    assert!(text(&r).contains("over your token budget"), "{}", text(&r));

    // a demotion that leaves the set over the budget says what would still go
    let r = call(
        &client,
        "demote",
        json!({"vendor": "petstore", "name": names[3]}),
    )
    .await;
    let sc = r.structured_content.clone().unwrap();
    if sc["overBudget"].as_i64().unwrap() > 0 {
        assert!(!sc["wouldDemote"].as_array().unwrap().is_empty(), "{sc}");
        assert!(
            !text(&r).contains("every tool in it was called"),
            "{}",
            text(&r)
        );
    }
    let r = call(
        &client,
        "promote",
        json!({"vendor": "petstore", "name": names[3]}),
    )
    .await;
    assert!(r.is_error != Some(true), "{}", text(&r));

    // the sweep demotes exactly those, cause budget; the called tool stays
    let report = g.sweep_as_of(g.clock_now(), false).await.unwrap();
    assert_eq!(report.demotions(), 2);
    // (the newest rows: the sweep's two, then the agent's own demote and promote)
    let history = g.history(id, 4, 0).await.unwrap();
    let demoted: Vec<(String, Cause)> = history
        .iter()
        .filter(|h| h.action.as_str() == "demote")
        .map(|h| (h.name.clone(), h.cause))
        .collect();
    assert_eq!(demoted.len(), 3, "{demoted:?}");
    assert_eq!(
        demoted.iter().filter(|d| d.1 == Cause::Budget).count(),
        2,
        "{demoted:?}"
    );
    let left: Vec<String> = g
        .working_set(id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.tool.name)
        .collect();
    assert!(left.contains(&"get_pet_by_id".to_string()));
    assert!(!left.contains(&names[0]) && !left.contains(&names[2]));
    let summary = g.list_agents().await.unwrap().remove(0);
    assert_eq!(summary.tokens, budget, "the set fits its budget exactly");
    let html = s.browser.get("/agents/bot").await.text().await.unwrap();
    assert!(html.contains("over the token budget"), "History says why");

    // the Agents list's Edit (no budget field) leaves the budget; the agent page's form
    // with the field left empty clears it, hydrated and without JavaScript
    let mut form = vec![
        ("agent", "bot"),
        ("name", "bot"),
        ("cap", "20"),
        ("window", "21"),
    ];
    let r = s.browser.call("edit_agent", &form).await;
    assert!(r.status().is_success());
    assert_eq!(g.agent(id).await.unwrap().token_budget, Some(budget));
    form.extend([("token_budget", ""), ("budget_field", "yes")]);
    let r = s
        .browser
        .post_form("edit_agent", "/agents/bot", &form)
        .await;
    assert!(r.status().is_redirection());
    assert_eq!(g.agent(id).await.unwrap().token_budget, None, "cleared");
    client.cancel().await.unwrap();
    s.app.stop().await;
}

/// A find_tool answer of 10 hits costs the model little (issue 29.5): under 1,000 tokens
/// for its text and its structuredContent together, as the client receives them, on real
/// vendors' descriptions (Stripe's, Twilio's, Slack's).
#[tokio::test]
async fn a_find_tool_answer_of_ten_hits_stays_under_a_thousand_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    for (file, vendor) in [
        ("stripe_spec3_2023-09.yaml", "stripe"),
        ("twilio_api_v2010.json", "twilio"),
        ("slack_web_openapi_v2.json", "slack"),
    ] {
        let text = std::fs::read_to_string(specs_dir().join(file)).unwrap();
        app.graft
            .import_openapi(vendor, &text, Some("http://127.0.0.1:9"), &mut |_, _| {})
            .await
            .unwrap();
    }
    let (_, token) = agent(&app, "bot").await;
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let mut most = 0;
    for query in [
        "refund a payment",
        "list the customer's invoices from last month",
        "send an SMS to a phone number",
        "post a message in a Slack channel",
        "create a subscription with a trial period",
    ] {
        let r = call(&client, "find_tool", json!({"query": query, "limit": 10})).await;
        let hits = r.structured_content.as_ref().unwrap()["hits"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(hits, 10, "{query}");
        let wire = serde_json::to_string(&r).unwrap();
        let tokens = o200k(&wire);
        println!("find_tool {query:?}: 10 hits, {tokens} tokens");
        if std::env::var_os("SHOW_ANSWER").is_some() {
            println!("{wire}");
        }
        most = most.max(tokens);
    }
    assert!(most < 1000, "a 10-hit answer costs {most} tokens");
    client.cancel().await.unwrap();
    app.stop().await;
}

/// What the model sees (issue 29.4): a 5,000-character vendor description is served
/// under 2,048 characters with the essentials first, and a vendor answer of about
/// 200,000 tokens reaches the client cut under the 25,000-token budget with a note,
/// after which the session goes on.
#[tokio::test]
async fn long_descriptions_and_answers_are_cut_to_what_clients_take() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let long = format!(
        "Sends a bulk report to the given address. {}",
        "The report lists every record with its fields, owners and history. ".repeat(75)
    );
    assert!(long.chars().count() > 5000);
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "Bulk", "version": "1"},
        "paths": {
            "/words": {"get": {"operationId": "getWords", "summary": "Get many words.",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "text"}}}},
            "/anything/report": {"post": {"operationId": "sendReport", "description": long,
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["address"],
                    "properties": {"address": {"type": "string"}, "format": {"type": "string"}}}}}},
                "responses": {"200": {"description": "sent"}}}}
        }
    });
    app.graft
        .import_openapi("bulk", &doc.to_string(), Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (id, token) = agent(&app, "bot").await;
    let ops = Actor::Person("ops".into());
    for t in ["get_words", "send_report"] {
        app.graft.promote_tool(&ops, id, "bulk", t).await.unwrap();
    }
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let listed = client.list_tools(None).await.unwrap().tools;
    let report = listed
        .iter()
        .find(|t| t.name == "bulk__send_report")
        .unwrap();
    let d = report.description.as_deref().unwrap();
    assert!(d.chars().count() <= 2048, "{}", d.chars().count());
    assert!(
        d.starts_with(
            "Sends a bulk report to the given address. Vendor: bulk. Required inputs: address."
        ),
        "{d}"
    );
    assert!(d.contains("cut by Graft"), "{d}");
    // the stored count is that of the cut description, as served
    assert_eq!(
        app.graft.tool("bulk", "send_report").await.unwrap().tokens,
        Some(o200k(&serde_json::to_string(report).unwrap()))
    );
    // the server's instructions and Graft's own tools stay under 2,048 characters
    let info = client.peer_info().unwrap();
    assert!(info.instructions.as_deref().unwrap().chars().count() <= 2048);
    for t in listed.iter().filter(|t| !t.name.contains("__")) {
        assert!(
            t.description.as_deref().unwrap().chars().count() <= 2048,
            "{}",
            t.name
        );
    }

    let r = call(&client, "bulk__get_words", json!({})).await;
    assert!(r.is_error != Some(true), "{}", text(&r));
    let wire = serde_json::to_string(&r).unwrap();
    let tokens = o200k(&wire);
    assert!(tokens <= 25_000, "{tokens} tokens reached the client");
    assert!(
        tokens > 20_000,
        "cut near the budget, not far below: {tokens}"
    );
    let t = text(&r);
    assert!(t.starts_with("w0 w1 w2 "), "the answer's start is kept");
    assert!(
        t.contains("over Graft's result budget of 25,000 tokens (GRAFT_RESULT_TOKEN_BUDGET)"),
        "{}",
        &t[t.len() - 400..]
    );
    assert!(
        t.ends_with("[to get the rest in smaller parts, this tool takes: limit]"),
        "the inputs that page: {}",
        &t[t.len() - 200..]
    );
    // an answer just within the budget is never cut for the room a cut keeps
    let n = (1..100_000)
        .step_by(250)
        .take_while(|n| o200k(&vendor::words_text(*n)) < 24_500)
        .last()
        .unwrap();
    let within = o200k(&vendor::words_text(n));
    assert!(within > 23_000, "{within}");
    let r = call(&client, "bulk__get_words", json!({"limit": n})).await;
    assert!(!text(&r).contains("[cut:"), "{within} tokens were cut");
    // the session goes on
    let r = call(&client, "find_tool", json!({"query": "get words"})).await;
    assert!(r.is_error != Some(true));
    client.cancel().await.unwrap();
    app.stop().await;
}

/// Client limits (issue 29.3): an agent on VS Code with 130 promoted tools (136 with
/// Graft's own) is warned, in promote's answer and on its page.
#[tokio::test]
async fn a_harness_with_130_promoted_tools_gets_the_warning() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let text_doc = std::fs::read_to_string(specs_dir().join("stripe_spec3_2023-09.yaml")).unwrap();
    app.graft
        .import_openapi(
            "stripe",
            &text_doc,
            Some("http://127.0.0.1:9"),
            &mut |_, _| {},
        )
        .await
        .unwrap();
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let (a, token) = app
        .graft
        .add_agent("editor", Some("vscode"), Some(500), None)
        .await
        .unwrap();
    let names: Vec<String> = app
        .graft
        .browse_tools(Some("stripe"), graft::service::BrowseOrder::Name, 200, 0)
        .await
        .unwrap()
        .0
        .into_iter()
        .map(|r| r.name)
        .take(130)
        .collect();
    let ops = Actor::Person("ops".into());
    for n in &names[..129] {
        app.graft
            .promote_tool(&ops, a.id, "stripe", n)
            .await
            .unwrap();
    }
    let (client, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 135);
    let r = call(
        &client,
        "promote",
        json!({"vendor": "stripe", "name": names[129]}),
    )
    .await;
    let sc = r.structured_content.clone().unwrap();
    let w = sc["clientWarning"].as_str().expect("a warning");
    assert!(
        w.starts_with("Your tool list holds 136 tools, 8 over the limit: VS Code (Copilot) sends at most 128 tools"),
        "{w}"
    );
    assert!(text(&r).contains(w));
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page: Value = b
        .call("agent", &[("name", "editor"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    let pw = page["client_warning"].as_str().expect("the page warns");
    assert!(
        pw.starts_with("Its tool list holds 136 tools, 8 over the limit")
            && pw.contains("or lower the cap"),
        "{pw}"
    );
    // demoting back under the margin ends the warning
    for n in &names[100..130] {
        app.graft
            .demote_tool(&ops, a.id, "stripe", n)
            .await
            .unwrap();
    }
    let r = call(
        &client,
        "promote",
        json!({"vendor": "stripe", "name": names[0]}),
    )
    .await;
    assert!(r.structured_content.unwrap().get("clientWarning").is_none());
    client.cancel().await.unwrap();
    app.stop().await;
}

/// A client's name in `initialize` sets the harness of an agent a person gave none, so
/// that its limits apply; a harness a person chose stays (issue 29.3).
#[tokio::test]
async fn the_client_an_agent_initializes_with_sets_its_limits_when_none_was_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (plain, plain_token) = agent(&app, "plain").await;
    let (chosen, chosen_token) = app
        .graft
        .add_agent("chosen", Some("claude-code"), None, None)
        .await
        .unwrap();
    for token in [&plain_token, &chosen_token] {
        let r = reqwest::Client::new()
            .post(app.mcp_url())
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Visual Studio Code","version":"1.99.0"}}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    assert_eq!(
        app.graft.agent(plain).await.unwrap().harness.as_deref(),
        Some("vscode")
    );
    assert_eq!(
        app.graft.agent(chosen.id).await.unwrap().harness.as_deref(),
        Some("claude-code"),
        "a person's choice stays"
    );
    app.stop().await;
}

/// A starter set respects the token budget (issue 31.4): adding more than fits promotes
/// it all and says what the next sweep would demote for the budget.
#[tokio::test]
async fn a_starter_set_over_the_token_budget_says_what_the_sweep_would_demote() {
    let s = setup().await;
    let g = s.app.graft.clone();
    let ops = Actor::Person("ops".into());
    agent(&s.app, "helpdesk").await;
    g.set_agent_settings("helpdesk", None, None, None, Some(Some(1000)))
        .await
        .unwrap();
    let tools: Vec<String> = [
        "add_pet",
        "update_pet",
        "find_pets_by_status",
        "find_pets_by_tags",
        "get_pet_by_id",
        "delete_pet",
        "get_inventory",
        "place_order",
    ]
    .iter()
    .map(|t| format!("petstore__{t}"))
    .collect();
    let applied = g
        .edit_agent_starter(&ops, "helpdesk", &tools, &[])
        .await
        .unwrap();
    assert_eq!(applied.promoted.len(), tools.len(), "promotion is harmless");
    assert!(applied.tokens > 1000, "{}", applied.tokens);
    assert_eq!(applied.token_budget, Some(1000));
    let over: Vec<&(String, Cause)> = applied
        .would_demote
        .iter()
        .filter(|(_, c)| *c == Cause::Budget)
        .collect();
    assert!(!over.is_empty(), "{:?}", applied.would_demote);
    // what is left after those fits the budget
    let mut left = applied.tokens;
    for (t, _) in &over {
        let (_, name) = t.split_once("__").unwrap();
        left -= g.tool("petstore", name).await.unwrap().tokens.unwrap();
    }
    assert!(left <= 1000, "{left}");
    s.app.stop().await;
}
