//! The console's Activity page and each agent's calls per day (issue 30.4), from a calls
//! log and history written by real runs against a real HTTP vendor, at times a fake clock
//! sets: exact counts per bucket, vendor latency, approvals waiting, the server-rendered
//! SVG without JavaScript.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use graft::service::{ActivityRange, Actor};
use serde_json::{json, Value};
use std::sync::Arc;

const ACME: &str = r#"{
  "openapi": "3.0.0", "info": {"title": "Acme", "version": "1"},
  "paths": {
    "/status/{code}": {"get": {"operationId": "status", "parameters": [{"name": "code", "in": "path", "required": true, "schema": {"type": "integer"}}]}},
    "/anything/items": {"get": {"operationId": "list_items", "parameters": [{"name": "tag", "in": "query", "schema": {"type": "string"}}]},
                        "post": {"operationId": "add_item", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}}}
  }
}"#;

const MIN: i64 = 60_000;
const DAY: i64 = 24 * 60 * MIN;
/// The test's "now" (ms).
const T: i64 = 1_800_000_000_000;

/// Outcome order of `calls[bucket]` (the server function's `outcomes`).
const OUTCOMES: [&str; 6] = [
    "ok",
    "dry_run",
    "approval_required",
    "tool_error",
    "refused",
    "vendor_error",
];

#[tokio::test]
async fn the_activity_page_counts_what_the_agents_did_by_time_outcome_vendor_and_cause() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let clock = Arc::new(FakeClock::default());
    clock.set(T - 3 * DAY);
    let g = open_graft(&db_url(dir.path()), clock.clone()).await;
    g.import_openapi("acme", ACME, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    // a vendor nobody listens for: its calls are sent and fail to connect
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down_url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    g.import_openapi("down", ACME, Some(&down_url), &mut |_, _| {})
        .await
        .unwrap();
    let (a, _) = g.add_agent("bot", None, None, None).await.unwrap();
    let app = spawn_app_with_graft(settings(dir.path()), g.clone()).await;
    let run_at = |vendor: &'static str, name: &'static str, input: Value, dry: bool| {
        let g = g.clone();
        async move { g.run_tool(a.id, vendor, name, input, dry).await.unwrap() }
    };
    let run = |name: &'static str, input: Value, dry: bool| run_at("acme", name, input, dry);
    // three days ago: one call, only in the 30-day view
    run("list_items", json!({}), false).await;
    // either side of today's UTC midnight (T is 08:00 UTC): yesterday's last bucket and
    // today's first
    let midnight = T - T % DAY;
    assert_eq!(T - midnight, 8 * 60 * MIN);
    clock.set(midnight - 1);
    run("list_items", json!({}), false).await;
    clock.set(midnight);
    run("list_items", json!({}), false).await;
    // two hours ago: two answered calls and a vendor error
    clock.set(T - 120 * MIN);
    run("list_items", json!({"tag": "a"}), false).await;
    run("list_items", json!({"tag": "b"}), false).await;
    let e = run("status", json!({"code": 500}), false).await;
    assert_eq!(e.code(), Some("vendor_error"), "{e:?}");
    // now: a write that waits for a person, a bad input, a write's dry run, and a
    // promotion and a demotion
    clock.set(T);
    let w = run("add_item", json!({"name": "x"}), false).await;
    assert_eq!(w.code(), Some("approval_required"));
    let bad = run("list_items", json!({"tag": {"no": 1}}), false).await;
    assert_eq!(bad.code(), Some("invalid_input"));
    let dry = run("add_item", json!({"name": "y"}), true).await;
    assert_eq!(dry.code(), None);
    let unreachable = run_at("down", "list_items", json!({}), false).await;
    assert_eq!(
        unreachable.code(),
        Some("vendor_unreachable"),
        "{unreachable:?}"
    );
    let actor = Actor::Agent(a.id);
    g.promote_tool(&actor, a.id, "acme", "list_items")
        .await
        .unwrap();
    g.demote_tool(&actor, a.id, "acme", "list_items")
        .await
        .unwrap();

    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    // the last 24 hours: 96 buckets of 15 minutes, the last one holding now
    let r = b.call("activity", &[("range", "24h")]).await;
    assert_eq!(r.status(), 200);
    let d: Value = r.json().await.unwrap();
    assert_eq!(d["outcomes"], json!(OUTCOMES));
    assert_eq!(d["bucket_ms"], 15 * MIN);
    let calls = d["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 96);
    // two hours before now is the start of bucket 88, one ms after `from`'s grid
    assert_eq!(calls[87], json!([2, 0, 0, 0, 0, 1]), "{calls:?}");
    assert_eq!(calls[95], json!([0, 1, 1, 1, 0, 1]), "{calls:?}");
    // buckets are quarter-hours of the clock: midnight starts bucket 63
    assert_eq!(d["from"], T - 95 * 15 * MIN);
    assert_eq!(calls[62], json!([1, 0, 0, 0, 0, 0]), "{calls:?}");
    assert_eq!(calls[63], json!([1, 0, 0, 0, 0, 0]), "{calls:?}");
    let total: i64 = calls
        .iter()
        .flat_map(|b| b.as_array().unwrap())
        .map(|n| n.as_i64().unwrap())
        .sum();
    assert_eq!(total, 9, "the call three days ago is outside the 24 hours");
    let vendors = d["vendors"].as_array().unwrap();
    assert_eq!(vendors.len(), 2, "{vendors:?}");
    assert_eq!(vendors[0]["vendor"], "acme");
    assert_eq!(vendors[0]["calls"], 5, "only calls sent to the vendor");
    assert_eq!(vendors[0]["errors"], 1);
    // a vendor that cannot be reached is in the table, with its error
    assert_eq!(vendors[1]["vendor"], "down");
    assert_eq!(
        (&vendors[1]["calls"], &vendors[1]["errors"]),
        (&json!(1), &json!(1))
    );
    for v in vendors {
        let max = v["max_ms"].as_f64().unwrap();
        assert!(
            v["p95_ms"].as_f64().unwrap() <= max,
            "never above the longest: {v}"
        );
    }
    let (p50, p95) = (
        vendors[0]["p50_ms"].as_f64().unwrap(),
        vendors[0]["p95_ms"].as_f64().unwrap(),
    );
    assert!(p50 >= 0.0 && p95 >= p50 && p95 <= 120_000.0, "{p50} {p95}");
    let changes = d["changes"].as_array().unwrap();
    let causes: Vec<&str> = d["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let at = |label: &str| causes.iter().position(|c| *c == label).unwrap();
    assert_eq!(changes[95][at("promote")], 1);
    assert_eq!(changes[95][at("demote")], 1);
    let changed: i64 = changes
        .iter()
        .flat_map(|b| b.as_array().unwrap())
        .map(|n| n.as_i64().unwrap())
        .sum();
    assert_eq!(changed, 2);
    assert_eq!(d["pending"], 1);
    assert_eq!(d["oldest_pending_at"], T);

    // the last 30 days: day buckets
    let d: Value = b
        .call("activity", &[("range", "30d")])
        .await
        .json()
        .await
        .unwrap();
    let calls = d["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 30);
    assert_eq!(d["from"], midnight - 29 * DAY, "days are UTC days");
    assert_eq!(
        calls[26],
        json!([1, 0, 0, 0, 0, 0]),
        "three days ago: {calls:?}"
    );
    assert_eq!(calls[28], json!([1, 0, 0, 0, 0, 0]), "yesterday: {calls:?}");
    assert_eq!(calls[29], json!([3, 1, 1, 1, 0, 2]), "today: {calls:?}");
    assert_eq!(d["vendors"][0]["calls"], 6);

    // the page without JavaScript: the charts are in the HTML
    let page = b.get("/activity").await.text().await.unwrap();
    assert!(
        page.contains(r#"role="img" aria-label="calls from"#),
        "{page}"
    );
    assert!(page.contains("9 calls in the last 24 hours."), "{page}");
    assert!(
        page.contains("4 ok, 1 dry run, 1 waits for approval, 1 tool error, 2 vendor error"),
        "{page}"
    );
    assert!(page.contains(r#"data-vendor="acme""#), "{page}");
    // the numbers as a table too, for readers who cannot hover a bar
    assert!(
        page.contains("The calls as a table") && page.contains(r#"<th scope="row">"#),
        "{page}"
    );
    assert!(page.contains("1 approval waits"), "{page}");
    assert!(page.contains("1 promoted, 1 demoted"), "{page}");
    let month = b.get("/activity?range=30d").await.text().await.unwrap();
    assert!(month.contains("10 calls in the last 30 days."), "{month}");
    assert!(
        month.contains(r#"href="/activity?range=30d" aria-current="page""#),
        "{month}"
    );
    // a range nobody offers reads as the last 24 hours
    let odd = b
        .call("activity", &[("range", "1y")])
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(odd["range"], "24h");

    // the agent's page: calls per day over 30 days
    let agent = b.get("/agents/bot").await.text().await.unwrap();
    assert!(agent.contains(r#"id="calls-per-day""#), "{agent}");
    assert!(agent.contains(": 10 calls"), "{agent}");

    // signed out: refused
    let mut stranger = Browser::new(&app);
    let r = stranger.call("activity", &[("range", "24h")]).await;
    assert_eq!(r.status(), 401);

    // what the pages read: both ranges and the agent's days
    let counts = || {
        let g = g.clone();
        async move {
            (
                g.activity(ActivityRange::Day).await.unwrap(),
                g.activity(ActivityRange::Month).await.unwrap(),
                g.agent_calls_per_day(a.id, 30).await.unwrap(),
            )
        }
    };
    // the counts each call added equal a count of the calls log from nothing
    let counted = counts().await;
    graft::db::recount_calls(g.pool()).await.unwrap();
    let recounted = counts().await;
    assert_eq!(counted, recounted);
    // calls the retention cut removes leave the counts too
    graft::db::delete_calls_before(g.pool(), T - 2 * DAY)
        .await
        .unwrap();
    let month = g.activity(ActivityRange::Month).await.unwrap();
    assert_eq!(month.calls[26], [0; 6], "{:?}", month.calls);
    assert_eq!(month.calls[28], [1, 0, 0, 0, 0, 0]);
    let days = g.agent_calls_per_day(a.id, 30).await.unwrap();
    assert_eq!(days.iter().map(|d| d.1).sum::<i64>(), 9);
    // a cut inside a slot (just after midnight): that slot is counted again from the
    // calls left, and the counts equal the log
    graft::db::delete_calls_before(g.pool(), midnight + 1)
        .await
        .unwrap();
    let cut = counts().await;
    assert_eq!(cut.1.calls[28], [0; 6], "yesterday's last call is cut");
    assert_eq!(
        cut.1.calls[29],
        [2, 1, 1, 1, 0, 2],
        "midnight's call is cut"
    );
    assert_eq!(cut.0.calls[63], [0; 6], "{:?}", cut.0.calls);
    assert_eq!(cut.2.iter().map(|d| d.1).sum::<i64>(), 7);
    graft::db::recount_calls(g.pool()).await.unwrap();
    let recounted = counts().await;
    assert_eq!(cut, recounted);
}

#[tokio::test]
async fn an_agents_calls_per_day_count_only_its_own_calls() {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let clock = Arc::new(FakeClock::default());
    clock.set(T - 10 * DAY);
    let g = open_graft(&db_url(dir.path()), clock.clone()).await;
    g.import_openapi("acme", ACME, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (a, _) = g.add_agent("bot", None, None, None).await.unwrap();
    let (other, _) = g.add_agent("other", None, None, None).await.unwrap();
    g.run_tool(a.id, "acme", "list_items", json!({}), false)
        .await
        .unwrap();
    clock.set(T - 40 * DAY);
    g.run_tool(a.id, "acme", "list_items", json!({}), false)
        .await
        .unwrap();
    clock.set(T);
    for _ in 0..3 {
        g.run_tool(other.id, "acme", "list_items", json!({}), false)
            .await
            .unwrap();
    }
    g.run_tool(a.id, "acme", "list_items", json!({}), false)
        .await
        .unwrap();
    let days = g.agent_calls_per_day(a.id, 30).await.unwrap();
    assert_eq!(days.len(), 30);
    let counts: Vec<i64> = days.iter().map(|d| d.1).collect();
    assert_eq!(
        counts.iter().sum::<i64>(),
        2,
        "40 days ago is outside; the other agent's are not its: {counts:?}"
    );
    assert_eq!(counts[29], 1);
    assert_eq!(counts[19], 1, "ten days ago");
    assert_eq!(
        days[29].0,
        T - T % DAY,
        "the last day is today's, from UTC midnight"
    );
    assert_eq!(days[0].0, T - T % DAY - 29 * DAY);
}
