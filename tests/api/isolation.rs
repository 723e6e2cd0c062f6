//! The isolation matrix (issue 13.4): five agents, each connected in both eras (a
//! 2025-11-25 session with its GET stream, a 2026-07-28 client with a listen stream).
//! Each agent in turn makes every agent-scoped call — tools/list, find_tool, promote,
//! tools/call, run_tool (a read, a write that asks for approval, a dry run), acquire,
//! publish, demote — and after each call the other four agents' working sets (as their
//! own tools/list shows them), usage, calls, approvals and history are unchanged, and
//! neither of their streams was notified. A session is refused to every other token.

use super::helpers::*;
use super::vendor;
use rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::json;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const API: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Echo", "version": "1"},
  "paths": {
    "/anything/items/{id}": {"get": {"operationId": "get_item", "summary": "Get an item",
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/anything/items": {"post": {"operationId": "create_item", "summary": "Create an item",
      "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"label": {"type": "string"}}}}}}}}
  }
}"#;

const N: usize = 5;

struct Peer {
    id: i64,
    token: String,
    legacy: RunningService<RoleClient, Counting>,
    legacy_seen: Counting,
    modern: RunningService<RoleClient, Counting>,
    listened: Arc<AtomicUsize>,
}

/// What one agent has, as the database and its own tools/list say.
#[derive(Debug, PartialEq)]
struct Snapshot {
    listed: Vec<String>,
    usage: Vec<(i64, i64)>,
    calls: i64,
    approvals: Vec<(i64, String)>,
    history: i64,
}

async fn snapshot(app: &TestApp, p: &Peer) -> Snapshot {
    let pool = app.graft.pool();
    let mut listed = tool_names(&p.legacy).await;
    listed.sort();
    Snapshot {
        listed,
        usage: graft::on_db!(pool, |e| sqlx::query_as(
            "SELECT tool_id, calls FROM tool_usage WHERE agent_id = $1 ORDER BY tool_id",
        )
        .bind(p.id)
        .fetch_all(e)
        .await)
        .unwrap(),
        calls: graft::on_db!(pool, |e| sqlx::query_scalar(
            "SELECT COUNT(*) FROM tool_calls WHERE agent_id = $1"
        )
        .bind(p.id)
        .fetch_one(e)
        .await)
        .unwrap(),
        approvals: graft::on_db!(pool, |e| sqlx::query_as(
            "SELECT tool_id, state FROM approvals WHERE agent_id = $1 ORDER BY tool_id",
        )
        .bind(p.id)
        .fetch_all(e)
        .await)
        .unwrap(),
        history: graft::on_db!(pool, |e| sqlx::query_scalar(
            "SELECT COUNT(*) FROM history WHERE agent_id = $1"
        )
        .bind(p.id)
        .fetch_one(e)
        .await)
        .unwrap(),
    }
}

fn notices(p: &Peer) -> (usize, usize) {
    (p.legacy_seen.count(), p.listened.load(Ordering::SeqCst))
}

/// Runs `call` for agent `k`; when `notifies`, waits until both of `k`'s streams were
/// told; then checks that no other agent changed or was told anything.
async fn isolated<F: Future<Output = ()>>(
    app: &TestApp,
    peers: &[Peer],
    k: usize,
    what: &str,
    notifies: bool,
    call: F,
) {
    let mut before = Vec::new();
    for p in peers {
        before.push((snapshot(app, p).await, notices(p)));
    }
    call.await;
    if notifies {
        let (legacy, listened) = before[k].1;
        peers[k].legacy_seen.wait_for(legacy + 1).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while peers[k].listened.load(Ordering::SeqCst) <= listened {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} by agent {k}: its listen stream was not told"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // a notice to another agent would go out with the actor's
    tokio::time::sleep(Duration::from_millis(150)).await;
    for (j, p) in peers.iter().enumerate() {
        if j == k {
            continue;
        }
        assert_eq!(
            snapshot(app, p).await,
            before[j].0,
            "{what} by agent {k} changed agent {j}"
        );
        assert_eq!(
            notices(p),
            before[j].1,
            "{what} by agent {k} notified agent {j}"
        );
    }
}

#[tokio::test]
async fn no_agent_sees_or_changes_another_agents_state() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    app.graft
        .import_openapi("echo", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let mut peers = Vec::new();
    for i in 0..N {
        let (id, token) = agent(&app, &format!("agent{i}")).await;
        let (legacy, legacy_seen) =
            legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
        let modern = modern_client(&app, &token).await;
        let mut sub = modern
            .listen(SubscriptionFilter::builder().tools_list_changed().build())
            .await
            .unwrap();
        let listened = Arc::new(AtomicUsize::new(0));
        let count = listened.clone();
        tokio::spawn(async move {
            while let Ok(Some(_)) = sub.next().await {
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
        peers.push(Peer {
            id,
            token,
            legacy,
            legacy_seen,
            modern,
            listened,
        });
    }
    // agent 0 holds get_item from the start: the others' find_tool must not say promoted
    let ops = graft::service::Actor::Person("ops".into());
    app.graft
        .promote_tool(&ops, peers[0].id, "echo", "get_item")
        .await
        .unwrap();
    peers[0].legacy_seen.wait_for(1).await;

    for k in 0..N {
        let p = &peers[k];
        let mine = format!("note_{k}");
        isolated(&app, &peers, k, "tools/list", false, async {
            let names = tool_names(&p.modern).await;
            assert_eq!(names.contains(&"echo__get_item".to_string()), k == 0);
        })
        .await;
        isolated(&app, &peers, k, "find_tool", false, async {
            let r = call(&p.modern, "find_tool", json!({"query": "get an item"})).await;
            let hit = r.structured_content.unwrap()["hits"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["name"] == "get_item")
                .cloned()
                .expect("get_item is found");
            assert_eq!(hit["promoted"], json!(k == 0), "agent {k}");
        })
        .await;
        if k != 0 {
            isolated(&app, &peers, k, "promote", true, async {
                let r = call(
                    &p.legacy,
                    "promote",
                    json!({"vendor": "echo", "name": "get_item"}),
                )
                .await;
                assert_eq!(r.is_error, Some(false), "{}", text(&r));
            })
            .await;
        }
        isolated(&app, &peers, k, "tools/call", false, async {
            let r = call(&p.legacy, "echo__get_item", json!({"id": k})).await;
            assert_eq!(r.is_error, Some(false), "{}", text(&r));
        })
        .await;
        isolated(&app, &peers, k, "run_tool (read)", false, async {
            let r = call(
                &p.modern,
                "run_tool",
                json!({"vendor": "echo", "name": "get_item", "input": {"id": k}}),
            )
            .await;
            assert_eq!(r.is_error, Some(false), "{}", text(&r));
        })
        .await;
        isolated(&app, &peers, k, "run_tool (write)", false, async {
            let r = call(
                &p.modern,
                "run_tool",
                json!({"vendor": "echo", "name": "create_item", "input": {"label": "x"}}),
            )
            .await;
            // agents before k were granted create_item: that grant is theirs only
            assert_eq!(code(&r).as_deref(), Some("approval_required"), "agent {k}");
        })
        .await;
        app.graft
            .decide_approval(&ops, &format!("agent{k}"), "echo", "create_item", true)
            .await
            .unwrap();
        isolated(&app, &peers, k, "run_tool (dry run)", false, async {
            let r = call(
                &p.modern,
                "run_tool",
                json!({"vendor": "echo", "name": "create_item", "input": {"label": "x"}, "dryRun": true}),
            )
            .await;
            assert_eq!(r.is_error, Some(false), "{}", text(&r));
        })
        .await;
        isolated(&app, &peers, k, "acquire", true, async {
            let r = call(
                &p.legacy,
                "acquire",
                json!({"vendor": "echo", "name": mine, "description": "Read a note",
                       "method": "GET", "path": "/anything/notes/{id}",
                       "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}),
            )
            .await;
            assert_eq!(r.is_error, Some(false), "{}", text(&r));
        })
        .await;
        isolated(&app, &peers, k, "publish", true, async {
            let r = call(
                &p.modern,
                "publish",
                json!({"vendor": "echo", "name": mine, "description": "Read one note by id"}),
            )
            .await;
            assert_eq!(r.is_error, Some(false), "{}", text(&r));
        })
        .await;
        for name in [mine.as_str(), "get_item"] {
            isolated(&app, &peers, k, "demote", true, async {
                let r = call(&p.modern, "demote", json!({"vendor": "echo", "name": name})).await;
                assert_eq!(r.is_error, Some(false), "{}", text(&r));
            })
            .await;
        }
        // re-promote for agent 0, whose get_item the others' find_tool looks at
        if k == 0 {
            isolated(&app, &peers, k, "promote", true, async {
                call(
                    &p.legacy,
                    "promote",
                    json!({"vendor": "echo", "name": "get_item"}),
                )
                .await;
            })
            .await;
        }
    }

    // a session answers only the agent that opened it
    for (k, p) in peers.iter().enumerate() {
        let r = raw_initialize(&app, &p.token).await;
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        for (j, other) in peers.iter().enumerate() {
            let status = raw_tools_list(&app, &other.token, &sid).await.status();
            let expected = if j == k { 200 } else { 404 };
            assert_eq!(status, expected, "agent {j} with agent {k}'s session");
        }
    }
    for p in peers {
        p.legacy.cancel().await.unwrap();
        p.modern.cancel().await.unwrap();
    }
    app.stop().await;
}

/// Every route of the console's router answers a signed-out request by sending it to
/// the sign-in page (pages) or with 401 (server functions), except the sign-in page,
/// signing in and out, the skill and the bundle; the list comes from the router itself, so
/// a new route cannot be forgotten.
#[tokio::test]
async fn every_console_route_refuses_signed_out_requests() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    agent(&app, "alpha").await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let base = format!("http://{}", app.addr);
    let public_pages = ["/login"];
    let mut checked = 0;
    for route in graft::server::console_routes() {
        // path parameters get a real value
        let path = route
            .split('/')
            .map(|seg| {
                if seg.starts_with(':') || seg.starts_with('{') || seg.starts_with('*') {
                    "alpha"
                } else {
                    seg
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        if public_pages.contains(&path.as_str()) {
            continue;
        }
        let r = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status(), 303, "GET {path} signed out");
        assert!(
            r.headers()["location"]
                .to_str()
                .unwrap()
                .starts_with("/login"),
            "{path}"
        );
        checked += 1;
    }
    for f in graft::server::console_server_fns() {
        // signing in and out need no one signed in (signing out then changes nothing)
        if f.ends_with("/login") || f.ends_with("/logout") {
            continue;
        }
        let r = http
            .post(format!("{base}{f}"))
            .form(&[("agent", "alpha")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "POST {f} signed out");
        checked += 1;
    }
    let r = http
        .post(format!("{base}/vendors/import"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "the upload, signed out");
    assert!(checked > 20, "{checked} routes");
    let approvals: i64 = graft::on_db!(app.graft.pool(), |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM agents"
    )
    .fetch_one(e)
    .await)
    .unwrap();
    assert_eq!(approvals, 1, "nothing was created");
    app.stop().await;
}
