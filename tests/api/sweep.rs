//! The rule (issue 4): the sweep with a fake clock, through the service and a real MCP
//! client. Tests call `sweep_once` directly and never wait on the timer.

use super::helpers::*;
use graft::db;
use graft::domain::sweep::DAY_MS;
use graft::service::{Actor, Graft};
use rmcp::model::ProtocolVersion;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const T0: i64 = 1_800_000_000_000; // 2027-01-15

struct World {
    graft: Graft,
    clock: Arc<FakeClock>,
    dir: tempfile::TempDir,
    url: String,
}

/// A service with a fake clock at T0 and a vendor `acme` with `n` tools t0..t{n-1}.
async fn world(n: usize) -> World {
    let dir = tempfile::tempdir().unwrap();
    let url = db_url(dir.path());
    let clock = Arc::new(FakeClock::default());
    clock.set(T0);
    let graft = open_graft(&url, clock.clone()).await;
    let paths: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| {
            (
                format!("/t{i}"),
                json!({"get": {"operationId": format!("t{i}"), "summary": format!("tool {i}")}}),
            )
        })
        .collect();
    let doc =
        json!({"openapi": "3.0.0", "info": {"title": "acme", "version": "1"}, "paths": paths});
    graft
        .import_openapi(
            "acme",
            &doc.to_string(),
            Some("http://127.0.0.1:9"),
            &mut |_, _| {},
        )
        .await
        .unwrap();
    World {
        graft,
        clock,
        dir,
        url,
    }
}

impl World {
    async fn agent(&self, name: &str, cap: i64) -> i64 {
        self.graft
            .add_agent(name, None, Some(cap), None)
            .await
            .unwrap()
            .0
            .id
    }

    /// Promotes tool `i` for the agent `days_ago` days before T0.
    async fn promote(&self, agent: i64, i: usize, days_ago: i64) {
        self.clock.set(T0 - days_ago * DAY_MS);
        self.graft
            .promote_tool(&Actor::Agent(agent), agent, "acme", &format!("t{i}"))
            .await
            .unwrap();
        self.clock.set(T0);
    }

    /// Records a call of tool `i` `days_ago` days before T0 (the proxy's own write).
    async fn use_tool(&self, agent: i64, i: usize, days_ago: i64) {
        let tool = self.graft.tool("acme", &format!("t{i}")).await.unwrap();
        db::upsert_tool_usage(self.graft.pool(), agent, tool.id, T0 - days_ago * DAY_MS)
            .await
            .unwrap();
    }

    async fn set(&self, agent: i64) -> Vec<String> {
        self.graft
            .working_set(agent)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.tool.name)
            .collect()
    }

    async fn demotions(&self, agent: i64) -> Vec<(String, String)> {
        let mut h: Vec<_> = self
            .graft
            .history(agent, 1000, 0)
            .await
            .unwrap()
            .into_iter()
            .filter(|h| h.action.as_str() == "demote")
            .map(|h| (h.name, h.cause.as_str().to_string()))
            .collect();
        h.sort();
        h
    }
}

fn names(v: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    out.sort();
    out
}

#[tokio::test]
async fn the_idle_rule_with_the_default_21_day_window() {
    let w = world(5).await;
    let a = w.agent("alpha", 20).await;
    w.promote(a, 0, 30).await;
    w.use_tool(a, 0, 20).await; // used 20 days ago: stays
    w.promote(a, 1, 30).await;
    w.use_tool(a, 1, 22).await; // used 22 days ago: goes
    w.promote(a, 2, 22).await; // promoted 22 days ago, never called: goes
    w.use_tool(a, 3, 40).await; // used 40 days ago, before its promotion 10 days ago: counts from the promotion
    w.promote(a, 3, 10).await;
    let r = w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(r.demotions(), 2);
    let mut kept = w.set(a).await;
    kept.sort();
    assert_eq!(kept, names(&["t0", "t3"]));
    assert_eq!(
        w.demotions(a).await,
        vec![("t1".into(), "idle".into()), ("t2".into(), "idle".into())]
    );
    let h = w.graft.history(a, 1, 0).await.unwrap();
    assert_eq!((h[0].actor.as_str(), h[0].at), ("rule", T0));
}

#[tokio::test]
async fn the_cap_demotes_only_never_called_tools_oldest_promotion_first() {
    let w = world(25).await;
    let a = w.agent("alpha", 20).await;
    for i in 0..25 {
        w.promote(a, i, 15 - (i as i64 % 10)).await;
    }
    for i in 0..22 {
        w.use_tool(a, i, 1).await;
    }
    // t22, t23, t24 never called: promoted 13, 12, 11 days ago
    let r = w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(
        r.agents[0]
            .demoted
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["t22", "t23", "t24"]
    );
    assert!(r.agents[0]
        .demoted
        .iter()
        .all(|d| d.cause.as_str() == "cap"));
    assert_eq!(
        w.set(a).await.len(),
        22,
        "called tools are never demoted by the cap: the set stays above it"
    );
    // the agent's page says why the set stays over its cap (issue 28.4)
    let app = spawn_app_with_graft(settings(w.dir.path()), w.graft.clone()).await;
    w.graft
        .add_user("ops", crate::console::PASSWORD)
        .await
        .unwrap();
    let mut b = crate::console::Browser::new(&app);
    b.sign_in("ops", crate::console::PASSWORD).await;
    let page = b.get("/agents/alpha").await.text().await.unwrap();
    assert!(
        page.contains("22 tools for a cap of 20: 22 tools called since promotion are kept, because the cap trims only tools not called since their promotion. Unused for 21 days, a tool leaves at the sweep."),
        "{page}"
    );
    app.stop().await;
}

#[tokio::test]
async fn idle_runs_before_cap() {
    let w = world(3).await;
    let a = w.agent("alpha", 2).await;
    w.promote(a, 0, 40).await;
    w.use_tool(a, 0, 30).await; // idle, but called since its promotion
    w.promote(a, 1, 3).await;
    w.use_tool(a, 1, 1).await;
    w.promote(a, 2, 2).await; // never called
                              // idle first removes t0; two remain within the cap. Cap first would have removed t2.
    w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(w.demotions(a).await, vec![("t0".into(), "idle".into())]);
    let mut kept = w.set(a).await;
    kept.sort();
    assert_eq!(kept, names(&["t1", "t2"]));
}

#[tokio::test]
async fn edits_act_at_the_next_sweep_and_a_second_sweep_changes_nothing() {
    let w = world(4).await;
    let a = w.agent("alpha", 4).await;
    for i in 0..4 {
        w.promote(a, i, 4 - i as i64).await;
    }
    w.graft
        .set_agent("alpha", None, Some(2), Some(30))
        .await
        .unwrap();
    assert_eq!(w.set(a).await.len(), 4, "an edit changes nothing by itself");
    assert!(w
        .graft
        .set_agent("alpha", None, Some(0), None)
        .await
        .is_err());
    assert!(w
        .graft
        .set_agent("alpha", None, Some(501), None)
        .await
        .is_err());
    assert!(w
        .graft
        .set_agent("alpha", None, None, Some(3651))
        .await
        .is_err());
    let preview = w.graft.sweep_once(T0, true).await.unwrap();
    assert_eq!(preview.demotions(), 2);
    assert_eq!(w.set(a).await.len(), 4, "a dry run changes nothing");
    let r = w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(r.demotions(), 2);
    assert_eq!(
        r.agents[0]
            .demoted
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["t0", "t1"]
    );
    let again = w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(again.demotions(), 0);
    assert_eq!(w.demotions(a).await.len(), 2);
}

#[tokio::test]
async fn a_stale_plan_does_not_demote() {
    let w = world(1).await;
    let a = w.agent("alpha", 20).await;
    w.promote(a, 0, 30).await;
    let tool = w.graft.tool("acme", "t0").await.unwrap();
    let promoted_at = T0 - 30 * DAY_MS;
    // planned on "never used", but the agent called it meanwhile
    w.use_tool(a, 0, 0).await;
    let mut conn = w.graft.pool().acquire().await.unwrap();
    assert!(
        db::sweep::delete_entries_as_planned(&mut conn, &[(a, tool.id, promoted_at, -1)])
            .await
            .unwrap()
            .is_empty()
    );
    // planned on an older promotion, but it was re-promoted
    assert!(
        db::sweep::delete_entries_as_planned(&mut conn, &[(a, tool.id, promoted_at - 1, T0)])
            .await
            .unwrap()
            .is_empty()
    );
    drop(conn);
    assert_eq!(w.graft.sweep_once(T0, false).await.unwrap().demotions(), 0);
}

#[tokio::test]
async fn two_sweepers_on_one_database_demote_each_entry_once() {
    let w = world(50).await;
    let mut agents = Vec::new();
    for n in 0..4 {
        let a = w.agent(&format!("agent{n}"), 10).await;
        for i in 0..50 {
            w.promote(a, i, 40 - (i as i64 % 30)).await;
        }
        agents.push(a);
    }
    // a second process: its own pool on the same file
    let other = open_graft(&w.url, w.clock.clone()).await;
    let planned = w.graft.sweep_once(T0, true).await.unwrap().demotions();
    assert!(planned > 100);
    let (r1, r2) = tokio::join!(w.graft.sweep_once(T0, false), other.sweep_once(T0, false));
    let (r1, r2) = (r1.unwrap(), r2.unwrap());
    assert_eq!(
        r1.demotions() + r2.demotions(),
        planned,
        "each entry demoted once between the two"
    );
    let rows: i64 = graft::on_db!(w.graft.pool(), |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM history WHERE action = 'demote'"
    )
    .fetch_one(e)
    .await)
    .unwrap();
    assert_eq!(rows as usize, planned, "one history row per demotion");
    let dupes: i64 = graft::on_db!(w.graft.pool(), |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT agent_id, tool_id FROM history WHERE action = 'demote' GROUP BY agent_id, tool_id HAVING COUNT(*) > 1) AS d",
    )
    .fetch_one(e).await)
    .unwrap();
    assert_eq!(dupes, 0);
    drop(w.dir);
}

#[tokio::test]
async fn one_list_changed_per_sweep_to_that_agent_only_and_revocation_demotes() {
    let w = world(8).await;
    let s = settings(w.dir.path());
    let app = spawn_app_with_graft(s, w.graft.clone()).await;
    let (a, token_a) = w
        .graft
        .add_agent("alpha", None, Some(20), None)
        .await
        .map(|(a, t)| (a.id, t))
        .unwrap();
    let (b, token_b) = w
        .graft
        .add_agent("beta", None, Some(20), None)
        .await
        .map(|(a, t)| (a.id, t))
        .unwrap();
    for i in 0..5 {
        w.promote(a, i, 30).await; // all idle
    }
    w.promote(b, 5, 1).await;
    w.promote(a, 6, 1).await;
    w.promote(b, 6, 1).await;
    let (ca, ea) = legacy_client(&app, &token_a, ProtocolVersion::V_2025_11_25).await;
    let (cb, eb) = legacy_client(&app, &token_b, ProtocolVersion::V_2025_11_25).await;
    let mb = modern_client(&app, &token_b).await;
    let mut sub_b = mb
        .listen(
            rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build(),
        )
        .await
        .unwrap();

    let r = w.graft.sweep_once(T0, false).await.unwrap();
    assert_eq!(r.demotions(), 5);
    ea.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(ea.count(), 1, "five demotions, one notification");
    assert_eq!(eb.count(), 0, "the other agent hears nothing");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), sub_b.next())
            .await
            .is_err()
    );
    assert_eq!(tool_names(&ca).await.len(), 7, "6 meta-tools and t6");

    // revoking the vendor's only connection demotes its tools everywhere, at once
    let conn = w
        .graft
        .add_connection("acme", "main", "bearer", None, Some("tok-123456"))
        .await
        .unwrap();
    let (_, demoted) = w
        .graft
        .revoke_connection(&Actor::Person("ops".into()), conn.id)
        .await
        .unwrap();
    assert_eq!(demoted, 3, "alpha's t6, beta's t5 and t6");
    ea.wait_for(2).await;
    eb.wait_for(1).await;
    let n = tokio::time::timeout(Duration::from_secs(10), sub_b.next())
        .await
        .unwrap()
        .unwrap();
    assert!(n.is_some());
    assert!(w
        .demotions(b)
        .await
        .iter()
        .all(|(_, c)| c == "connection_revoked"));
    // re-promoted, its calls answer connection_revoked
    call(&ca, "promote", json!({"vendor": "acme", "name": "t6"})).await;
    let r = call(&ca, "acme__t6", json!({})).await;
    assert_eq!(
        r.structured_content.unwrap()["error"]["code"],
        "connection_revoked"
    );
    sub_b.cancel().await.unwrap();
    ca.cancel().await.unwrap();
    cb.cancel().await.unwrap();
    mb.cancel().await.unwrap();
    app.stop().await;
}

/// Issue 28.4: a sweep as of a future time is a what-if: planned as of that time, its
/// history rows (when applied) carry the real time, never a future one.
#[tokio::test]
async fn a_sweep_as_of_a_future_time_records_the_real_time() {
    let w = world(2).await;
    let a = w.agent("alpha", 20).await;
    w.promote(a, 0, 1).await; // promoted yesterday: idle only 21 days from now
    w.promote(a, 1, 1).await;
    let future = T0 + 30 * DAY_MS;
    // planned as of now: nothing is idle yet
    assert_eq!(w.graft.sweep_once(T0, true).await.unwrap().demotions(), 0);
    // as of 30 days on: both would go; a dry run changes nothing
    let preview = w.graft.sweep_as_of(future, true).await.unwrap();
    assert_eq!(
        (preview.demotions(), preview.now, preview.dry_run),
        (2, future, true)
    );
    assert_eq!(w.set(a).await.len(), 2);
    // applied: demoted now, written at the real time (the clock's T0), not at `future`
    let r = w.graft.sweep_as_of(future, false).await.unwrap();
    assert_eq!(r.demotions(), 2);
    assert!(w.set(a).await.is_empty());
    let h = w.graft.history(a, 10, 0).await.unwrap();
    assert!(h.iter().all(|e| e.at <= T0), "{h:?}");
    assert_eq!(w.demotions(a).await.len(), 2);
}

/// History rows written at a future time before `graft sweep --at` learned to preview
/// (issue 28.4) are brought back to the time of the upgrade by migration
/// `history_no_future`: History never shows a future time, and a later row is kept.
#[tokio::test]
async fn an_upgrade_brings_back_history_rows_written_in_the_future() {
    let w = world(2).await;
    let a = w.agent("alpha", 10).await;
    // the fake clock stands at T0, after the real time: rows written as a pre-fix
    // `sweep --at` did
    w.promote(a, 0, 0).await;
    w.promote(a, 1, 0).await;
    let real_now = || chrono::Utc::now().timestamp_millis();
    assert!(
        T0 > real_now(),
        "T0 is in the future for this test to mean anything"
    );
    let future = w.graft.history(a, 10, 0).await.unwrap();
    assert!(future.iter().all(|h| h.at == T0), "{future:?}");
    // the database as it was before the migration: its row taken out, so that opening
    // the database applies it (as an upgrade does)
    let (sqlite_version, postgres_version) = (30_i64, 19_i64);
    match w.graft.pool() {
        db::Pool::Sqlite(p) => {
            sqlx::query("DELETE FROM _sqlx_migrations WHERE version = ?")
                .bind(sqlite_version)
                .execute(p)
                .await
                .unwrap();
        }
        db::Pool::Postgres(p) => {
            sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
                .bind(postgres_version)
                .execute(p)
                .await
                .unwrap();
        }
    }
    let before = real_now();
    let reopened = open_graft(&w.url, Arc::new(graft::service::SystemClock)).await;
    let after = real_now();
    let h = reopened.history(a, 10, 0).await.unwrap();
    assert_eq!(h.len(), 2, "{h:?}");
    for e in &h {
        assert!(
            e.at >= before - 1000 && e.at <= after,
            "brought back to the upgrade's time: {} not in {before}..={after}",
            e.at
        );
    }
}
