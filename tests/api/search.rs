//! find_tool ranks what an agent means (issue 10), through a real MCP client, on a
//! toolbox of several shared specs: lexical-only without a model, words and meaning with
//! the embedding model (fetched once into a cache by `scripts/get-model.sh`).

use super::helpers::*;
use graft::service::{Graft, ServiceConfig, SystemClock};
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::sync::Arc;

const SPECS: &[(&str, &str)] = &[
    ("petstore_openapi.yaml", "petstore"),
    ("stripe_spec3_2023-09.yaml", "stripe"),
    ("slack_web_openapi_v2.json", "slack"),
    ("twilio_api_v2010.json", "twilio"),
    ("discord_openapi.json", "discord"),
];

async fn import_specs(graft: &Graft) {
    for (file, slug) in SPECS {
        let text = std::fs::read_to_string(specs_dir().join(file)).unwrap();
        graft
            .import_openapi(slug, &text, Some("http://127.0.0.1:9"), &mut |_, _| {})
            .await
            .unwrap();
    }
}

/// `vendor__name` of each hit.
fn hit_names(s: &Value) -> Vec<String> {
    s["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{}__{}",
                h["vendor"].as_str().unwrap(),
                h["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn rank_of(s: &Value, tool: &str) -> Option<usize> {
    hit_names(s).iter().position(|n| n == tool)
}

async fn spawn_with_model(
    dir: &std::path::Path,
    model: Option<Arc<graft::semantic::Model>>,
) -> TestApp {
    let s = settings(dir);
    let graft = Graft::open(
        &s.database_url,
        Arc::new(SystemClock),
        ServiceConfig::ephemeral("http://127.0.0.1:3000").with_model(model),
    )
    .await
    .unwrap();
    import_specs(&graft).await;
    graft.embed_toolbox(&mut |_, _| {}).await.unwrap();
    spawn_app_with_graft(s, graft).await
}

#[tokio::test]
async fn lexical_only_ranks_and_answers_nothing_matches_with_acquire() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_with_model(dir.path(), None).await;
    assert_eq!(app.graft.search_status().mode, "lexical");
    let (_, token) = agent(&app, "alpha").await;
    let (c, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;

    // not every word occurs in the tool, plurals and verb forms meet
    let r = call(
        &c,
        "find_tool",
        json!({"query": "create a refund for a customer's order"}),
    )
    .await;
    let s = r.structured_content.unwrap();
    let rank = rank_of(&s, "stripe__post_refunds");
    assert!(rank.is_some_and(|r| r < 5), "{:?}", hit_names(&s));
    // hits: best first, a score in 0–1, one plain sentence of at most 120 characters
    let hits = s["hits"].as_array().unwrap();
    assert!(hits.len() <= 10);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.iter().all(|x| (0.0..=1.0).contains(x)), "{scores:?}");
    for h in hits {
        let d = h["description"].as_str().unwrap();
        assert!(
            d.chars().count() <= graft::service::search::HIT_DESCRIPTION_CHARS
                && !d.contains('<')
                && !d.contains("**"),
            "{d}"
        );
        assert!(
            h.get("readOnlyHint").is_some()
                && h.get("destructiveHint").is_some()
                && h.get("promoted").is_some()
        );
    }
    // a vendor named in the query comes first
    let r = call(
        &c,
        "find_tool",
        json!({"query": "send a message with Twilio"}),
    )
    .await;
    let s = r.structured_content.unwrap();
    assert!(
        hit_names(&s)[..3].iter().all(|n| n.starts_with("twilio__")),
        "{:?}",
        hit_names(&s)
    );

    // nonsense: nothing matches, and the answer points at acquire
    let r = call(&c, "find_tool", json!({"query": "xqzv flombert"})).await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["hits"], json!([]));
    assert!(s["message"].as_str().unwrap().contains("acquire"), "{s}");
    assert_eq!(s["vendors"].as_array().unwrap().len(), SPECS.len());
    c.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn a_toolbox_change_by_another_process_reaches_the_servers_search() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (_, token) = agent(&app, "alpha").await;
    let (c, _) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let r = call(&c, "find_tool", json!({"query": "pets by status"})).await;
    assert_eq!(r.structured_content.unwrap()["hits"], json!([]));
    // `graft import-openapi` in another shell, while the server runs
    let cli = open_graft(&db_url(dir.path()), Arc::new(SystemClock)).await;
    import_petstore(&cli, "http://127.0.0.1:9").await;
    let mut found = Vec::new();
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let r = call(&c, "find_tool", json!({"query": "pets by status"})).await;
        found = hit_names(&r.structured_content.unwrap());
        if !found.is_empty() {
            break;
        }
    }
    assert_eq!(
        found.first().map(String::as_str),
        Some("petstore__find_pets_by_status")
    );
    c.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn with_the_model_natural_phrasings_find_their_operation() {
    let model = test_model();
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_with_model(dir.path(), Some(model.clone())).await;
    assert_eq!(app.graft.search_status().mode, "semantic");
    assert_eq!(app.graft.search_status().model.as_deref(), Some(model.id()));
    let (_, token) = agent(&app, "alpha").await;
    let c = modern_client(&app, &token).await;
    for (query, tool) in [
        ("post a message in a channel", "slack__chat_post_message"),
        (
            "refund a charge for a customer",
            "stripe__post_charges_charge_refunds",
        ),
        ("upload a picture of a pet", "petstore__upload_file"),
    ] {
        let r = call(&c, "find_tool", json!({"query": query})).await;
        let s = r.structured_content.unwrap();
        let rank = rank_of(&s, tool);
        assert!(
            rank.is_some_and(|r| r < 5),
            "{query}: {tool} not in the top 5 of {:?}",
            hit_names(&s)
        );
    }
    // meaning, not only words: "buy" is "purchase" (words alone rank an update first)
    let r = call(&c, "find_tool", json!({"query": "buy a phone number"})).await;
    let s = r.structured_content.unwrap();
    assert_eq!(
        rank_of(&s, "twilio__create_incoming_phone_number"),
        Some(0),
        "{:?}",
        hit_names(&s)
    );
    // nonsense still answers nothing matches, with the acquire pointer
    let r = call(
        &c,
        "find_tool",
        json!({"query": "bake sourdough bread at home"}),
    )
    .await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["hits"], json!([]), "{s}");
    assert!(s["message"].as_str().unwrap().contains("acquire"));
    // embeddings were stored once: a second service on the same database computes none
    let again = open_graft_with_model(&db_url(dir.path()), Some(model)).await;
    assert_eq!(again.embed_toolbox(&mut |_, _| {}).await.unwrap(), 0);
    c.cancel().await.unwrap();
    app.stop().await;
}

async fn open_graft_with_model(url: &str, model: Option<Arc<graft::semantic::Model>>) -> Graft {
    Graft::open(
        url,
        Arc::new(SystemClock),
        ServiceConfig::ephemeral("http://127.0.0.1:3000").with_model(model),
    )
    .await
    .unwrap()
}

/// Issue 24.1: agents describe tasks in their own words, with ids, amounts and quoted
/// text; find_tool answers every such request (none refused for its length) and an
/// over-long one is cut to its first 64 words, never refused. With the model, as
/// `scripts/start.sh` runs Graft (words alone still miss long conversational requests).
#[tokio::test]
async fn long_requests_in_an_agents_words_are_answered_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_with_model(dir.path(), Some(test_model())).await;
    let (_, token) = agent(&app, "alpha").await;
    let c = modern_client(&app, &token).await;
    let request = "Please refund the second charge ch_3NfYh2KZ of 49.99 USD on order ord_8812 \
        back to the customer's card and leave the note \"duplicate charge, sorry about that, it \
        was our mistake\" on it so that our support team can see why";
    assert!(request.split_whitespace().count() >= 40);
    let r = call(&c, "find_tool", json!({"query": request})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.unwrap();
    assert_eq!(s["cut"], false);
    let names = hit_names(&s);
    assert!(
        names[..names.len().min(5)]
            .iter()
            .any(|n| n.contains("refund")),
        "{names:?}"
    );
    // 2,000 characters and more: the task first, then a pasted log the ranking skips
    let log = " GET /v1/charges 200 req_8f2a ok".repeat(80);
    let wide = format!("post a message to the ops channel on Slack saying the deploy failed{log}");
    assert!(wide.chars().count() > 2000);
    let r = call(&c, "find_tool", json!({"query": wide})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.clone().unwrap();
    assert_eq!(s["cut"], true);
    // the note stands in structuredContent too (issue 29.4)
    assert!(text(&r).contains(s["cutNote"].as_str().unwrap()));
    assert_eq!(
        rank_of(&s, "slack__chat_post_message").map(|r| r < 5),
        Some(true),
        "{:?}",
        hit_names(&s)
    );
    assert!(text(&r).contains("first 64 words"));
    app.stop().await;
}

/// Issue 24.3: what agents pick after a find_tool teaches every agent's find_tool (a
/// tool that search answered rises; one that matches nothing cannot be pushed in); an
/// author's picks of its own tool teach nothing; each agent counts once; a demote takes
/// an agent's evidence back; a person sees the learned phrases on the tool's page and
/// clears them, and they stop counting; nothing of a request's payload, nor a name that
/// is no API word, reaches the database.
#[tokio::test]
async fn picks_teach_find_tool_for_every_agent_and_never_store_the_payload() {
    use super::console::{Browser, PASSWORD};
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_with_model(dir.path(), None).await;
    let mut clients = Vec::new();
    for name in ["alpha", "carol", "beta", "author", "mallory"] {
        let (_, token) = agent(&app, name).await;
        clients.push(modern_client(&app, &token).await);
    }
    let [alpha, carol, beta, author, mallory] = &clients[..] else {
        unreachable!()
    };
    let request = "find pets with a status for the crew ZX9Q-77141 of Thatcherson";
    let find = |c, q: &'static str| async move {
        let r = call(c, "find_tool", json!({"query": q, "limit": 30})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        r.structured_content.unwrap()
    };
    let promote = |c, tool: String| async move {
        let (v, n) = tool.split_once("__").unwrap();
        let r = call(c, "promote", json!({"vendor": v, "name": n})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    };
    let phrases = |tool: &str| {
        let (v, n) = tool.split_once("__").unwrap();
        let (v, n) = (v.to_string(), n.to_string());
        let g = app.graft.clone();
        async move { g.learned_phrases(&v, &n).await.unwrap() }
    };

    // a tool the request reaches, but not in the first five
    let before = find(beta, request).await;
    let names = hit_names(&before);
    assert!(names.len() > 6, "{names:?}");
    let target = names[6].clone();
    // a tool the request does not reach at all cannot be taught
    assert_eq!(rank_of(&before, "twilio__list_account"), None);
    find(mallory, request).await;
    promote(mallory, "twilio__list_account".into()).await;
    let unreached = rank_of(&find(beta, request).await, "twilio__list_account");
    assert_eq!(unreached, None);

    // two agents ask, then promote the tool they meant: evidence
    for c in [alpha, carol] {
        find(c, request).await;
        promote(c, target.clone()).await;
    }
    let learned = phrases(&target).await;
    assert_eq!(learned.len(), 1, "{learned:?}");
    let phrase = learned[0].phrase.clone();
    assert!(phrase.starts_with("find pets status"), "{phrase}");
    assert_eq!(learned[0].agents, 2);
    // beta, who never picked it, now finds it higher, in its first five
    let after = find(beta, request).await;
    assert!(
        rank_of(&after, &target).is_some_and(|r| r < 5),
        "{target} in {:?}",
        hit_names(&after)
    );
    // the same agent picking again counts once; one search teaches one tool
    find(alpha, request).await;
    promote(alpha, target.clone()).await;
    promote(alpha, names[7].clone()).await;
    assert_eq!(phrases(&target).await[0].agents, 2);
    assert!(phrases(&names[7]).await.is_empty());
    // a demote takes the agent's evidence back
    let (v, n) = target.split_once("__").unwrap();
    call(carol, "demote", json!({"vendor": v, "name": n})).await;
    assert_eq!(phrases(&target).await[0].agents, 1);

    // a disabled agent's picks stop counting, and count again once it is enabled
    let person = graft::service::Actor::Person("ops".into());
    let lifted = rank_of(&find(beta, request).await, &target);
    app.graft
        .set_agent_disabled(&person, "alpha", true)
        .await
        .unwrap();
    assert_eq!(rank_of(&find(beta, request).await, &target), Some(6));
    app.graft
        .set_agent_disabled(&person, "alpha", false)
        .await
        .unwrap();
    assert_eq!(rank_of(&find(beta, request).await, &target), lifted);

    // an author's picks of its own tool teach nothing
    let r = call(
        author,
        "acquire",
        json!({"vendor": "petstore", "name": "crew_pager", "description": "Page a person of the pet crew",
               "method": "POST", "path": "/pages", "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = find(author, "page the pet crew").await;
    assert!(rank_of(&s, "petstore__crew_pager").is_some(), "{s}");
    promote(author, "petstore__crew_pager".into()).await;
    call(
        author,
        "run_tool",
        json!({"vendor": "petstore", "name": "crew_pager", "input": {"who": "x"}, "dryRun": true}),
    )
    .await;
    assert!(phrases("petstore__crew_pager").await.is_empty());

    // a person sees the phrase on the tool's page and clears it: it stops counting
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b
        .get(&format!("/tools/{v}/{n}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains(&format!("<q>{phrase}</q>")), "{page}");
    let form = [("vendor", v), ("name", n), ("confirm", "yes")];
    assert_eq!(b.call("clear_learned", &form).await.status(), 200);
    assert!(phrases(&target).await.is_empty());
    let cleared = find(beta, request).await;
    assert_eq!(
        rank_of(&cleared, &target),
        Some(6),
        "{:?}",
        hit_names(&cleared)
    );

    // the request's id and the person's name never reached the database (nor its journal)
    for c in clients {
        c.cancel().await.unwrap();
    }
    app.stop().await;
    if !on_postgres() {
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap().to_ascii_lowercase();
                for needle in [&b"77141"[..], b"zx9q", b"thatcherson"] {
                    assert!(
                        !bytes.windows(needle.len()).any(|w| w == needle),
                        "{} holds {}",
                        path.display(),
                        String::from_utf8_lossy(needle)
                    );
                }
            }
        }
    }
}

/// Waits (10 s at most) until the server's background task has `ready` as the state of
/// the search index.
async fn index_ready_becomes(graft: &Graft, ready: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while graft.search_ready() != ready {
        assert!(
            std::time::Instant::now() < deadline,
            "the search index did not become ready={ready}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_server_builds_the_search_index_at_start_and_after_each_import() {
    // issue 28.12: no search waits for a lazy build
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    index_ready_becomes(&app.graft, true).await;
    let before = app.graft.search_index().await.unwrap().len();
    assert_eq!(before, 19, "petstore's tools");
    let doc = std::fs::read_to_string(specs_dir().join("httpbin_0.10.2_local_spec.json")).unwrap();
    app.graft
        .import_openapi("httpbin", &doc, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    // the import dropped the index; the server builds the new one by itself
    index_ready_becomes(&app.graft, true).await;
    let after = app.graft.search_index().await.unwrap().len();
    assert!(after > before, "{after} tools after the import");
    app.stop().await;
}
