//! Live pages and the team's webhook (issue 28.3): a signed-in console tab's event
//! stream hears an approval request and a call as they happen (an agent on a real MCP
//! client, a real HTTP stream); the webhook, set through the console's server functions
//! and a plain form post, receives signed notices (checked with HMAC-SHA256 here, as a
//! receiver would), retried after a 500, in Graft's format and in Slack's, on an
//! approval requested, a vendor's failures above the threshold and a refused credential.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use crate::vendor;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use base64::Engine;
use futures::StreamExt;
use graft::service::Actor;
use hmac::Mac;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const API: &str = r#"
openapi: 3.0.3
info: {title: Acme, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
  /status/{code}:
    get:
      operationId: getStatus
      parameters: [{name: code, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok}}
"#;

/// The secret the tests give (32 bytes of 7, `whsec_` and base64).
fn secret() -> String {
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode([7u8; 32])
    )
}

/// A webhook receiver on port 0: keeps each delivery's headers and body, answers the
/// queued statuses in turn, then 200.
#[derive(Clone, Default)]
struct Receiver {
    seen: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    answers: Arc<Mutex<VecDeque<u16>>>,
}

impl Receiver {
    async fn start(answers: &[u16]) -> (Self, String) {
        let r = Receiver::default();
        r.answers.lock().unwrap().extend(answers);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let hear = |State(r): State<Receiver>, headers: HeaderMap, body: String| async move {
            r.seen.lock().unwrap().push((headers, body));
            let code = r.answers.lock().unwrap().pop_front().unwrap_or(200);
            axum::http::StatusCode::from_u16(code).unwrap()
        };
        let app = Router::new()
            .route("/hook", post(hear))
            // a Slack incoming webhook's shape: the path is the token
            .route("/services/{team}/{bot}/{token}", post(hear))
            .with_state(r.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (r, url)
    }

    /// Waits (up to 10 s) until `n` deliveries came; returns them all.
    async fn wait_for(&self, n: usize) -> Vec<(HeaderMap, String)> {
        for _ in 0..200 {
            if self.seen.lock().unwrap().len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let seen = self.seen.lock().unwrap().clone();
        assert!(
            seen.len() >= n,
            "{} deliveries, not {n}: {seen:?}",
            seen.len()
        );
        seen
    }
}

/// Checks a delivery's Standard Webhooks signature with `secret` and returns its body
/// as JSON.
fn verified(headers: &HeaderMap, body: &str, secret: &str) -> Value {
    let h = |k: &str| headers[k].to_str().unwrap().to_string();
    let (id, ts, sig) = (
        h("webhook-id"),
        h("webhook-timestamp"),
        h("webhook-signature"),
    );
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.{body}").as_bytes());
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    assert_eq!(sig, expected, "the signature checks out");
    let age = chrono::Utc::now().timestamp() - ts.parse::<i64>().unwrap();
    assert!((0..60).contains(&age), "a current timestamp: {ts}");
    serde_json::from_str(body).unwrap()
}

#[tokio::test]
async fn a_console_tab_hears_an_approval_request_and_a_call_as_they_happen() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (_, token) = agent(&app, "bot").await;
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);

    // signed out, the stream is not served
    let r = b.get("/console/events").await;
    assert_eq!(r.status(), 303);
    assert!(r.headers()["location"]
        .to_str()
        .unwrap()
        .starts_with("/login"));

    b.sign_in("ops", PASSWORD).await;
    let r = b.get("/console/events").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert!(
        r.headers().get("content-encoding").is_none(),
        "not buffered by compression"
    );
    let mut stream = r.bytes_stream();
    let mut heard = String::new();
    // reads the stream until `want` is in it, for at most `secs`
    macro_rules! until {
        ($want:expr, $secs:expr) => {{
            let found = tokio::time::timeout(Duration::from_secs($secs), async {
                while !heard.contains($want) {
                    let chunk = stream.next().await.expect("the stream stays open").unwrap();
                    heard.push_str(&String::from_utf8_lossy(&chunk));
                }
            })
            .await;
            assert!(found.is_ok(), "{:?} not heard in time: {heard:?}", $want);
        }};
    }
    // reads what arrives within `ms`, then forgets it (an event of an earlier change)
    macro_rules! drain {
        ($ms:expr) => {{
            let _ = tokio::time::timeout(Duration::from_millis($ms), async {
                while let Some(Ok(chunk)) = stream.next().await {
                    heard.push_str(&String::from_utf8_lossy(&chunk));
                }
            })
            .await;
            heard.clear();
        }};
    }
    until!("event: ready", 5);
    assert!(heard.contains("retry: 1000"), "{heard}");

    // an agent asks for an approval: the tab hears it within 2 s, names only
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
    until!("data: approvals", 2);
    assert!(
        !heard.contains("bot") && !heard.contains("create_item"),
        "no data travels: {heard}"
    );

    // a call logged is heard too (what the request's own call log said is drained)
    drain!(1500);
    call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_status", "input": {"code": 200}}),
    )
    .await;
    until!("calls", 2);

    // a person's decision elsewhere (the CLI's path, the service) is heard as well
    drain!(1500);
    g.decide_approval(
        &Actor::Person("ana".into()),
        "bot",
        "acme",
        "create_item",
        true,
    )
    .await
    .unwrap();
    until!("approvals", 2);
}

#[tokio::test]
async fn the_webhook_is_signed_retried_after_a_500_and_speaks_slack() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    g.add_connection_choosing(
        &Actor::Person("ops".into()),
        "acme",
        "ops key",
        "bearer",
        None,
        Some("vendor-secret-5531"),
        None,
    )
    .await
    .unwrap();
    let (_, token) = agent(&app, "bot").await;
    let client = modern_client(&app, &token).await;
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let (rx, url) = Receiver::start(&[500]).await;

    // bad input is refused at its field and nothing is set
    for (form, field) in [
        (
            vec![
                ("url", "ftp://x/"),
                ("format", "graft"),
                ("error_threshold", "2"),
            ],
            "url",
        ),
        (
            vec![
                ("url", url.as_str()),
                ("format", "graft"),
                ("error_threshold", "0"),
            ],
            "error_threshold",
        ),
        (
            vec![
                ("url", url.as_str()),
                ("format", "graft"),
                ("error_threshold", "2"),
                ("secret", "whsec_short"),
            ],
            "secret",
        ),
    ] {
        let e: Value = b.call("set_webhook", &form).await.json().await.unwrap();
        assert!(e.to_string().contains(field), "{e}");
    }
    assert!(g.webhook().await.unwrap().is_none());
    // without JavaScript the refused field is marked on the page it came back to, the
    // format too, and the form holds what was typed (the secret excepted); the address
    // holds none of it
    let r = b
        .post_form(
            "set_webhook",
            "/settings",
            &[
                ("url", url.as_str()),
                ("format", "xml"),
                ("error_threshold", "7"),
                ("secret", "whsec_typed-not-shown"),
            ],
        )
        .await;
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        !location.contains("2Fhook") && !location.contains("/hook") && !location.contains("typed"),
        "{location}"
    );
    let page = b
        .get(location.trim_start_matches(&b.base.clone()))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"data-field="format" class="field-error">choose graft or slack</span>"#),
        "{page}"
    );
    assert!(page.contains(&format!(r#"value="{url}""#)), "{page}");
    assert!(
        page.contains(r#"name="error_threshold" min="1" max="1000" value="7""#),
        "{page}"
    );
    assert!(!page.contains("whsec_typed-not-shown"), "{page}");
    assert!(g.webhook().await.unwrap().is_none());

    // set in the console with the team's secret
    let s = secret();
    let r = b
        .call(
            "set_webhook",
            &[
                ("url", &url),
                ("format", "graft"),
                ("error_threshold", "2"),
                ("secret", &s),
            ],
        )
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());

    // an approval request: the first delivery gets a 500, the retry (1 s later) the same
    // message, signed
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "create_item", "input": {}}),
    )
    .await;
    assert_eq!(code(&r).as_deref(), Some("approval_required"));
    let seen = rx.wait_for(2).await;
    assert_eq!(
        seen[0].0["webhook-id"], seen[1].0["webhook-id"],
        "a retry is the same message"
    );
    for (h, body) in &seen {
        let n = verified(h, body, &s);
        assert_eq!(n["type"], "approval.requested");
        assert_eq!(n["data"]["agent"], "bot");
        assert_eq!(n["data"]["tool"], "acme__create_item");
        assert!(n["data"]["approvalUrl"]
            .as_str()
            .unwrap()
            .contains("/approvals?agent=bot"));
    }
    // asked again, it is not a new request: no new notice
    call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "create_item", "input": {}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.seen.lock().unwrap().len(), 2);

    // switched to Slack's format with a plain form post (no JavaScript), the secret kept
    let r = b
        .post_form(
            "set_webhook",
            "/settings",
            &[
                ("url", &url),
                ("format", "slack"),
                ("error_threshold", "2"),
                ("secret", ""),
            ],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    assert!(r.headers()["location"]
        .to_str()
        .unwrap()
        .contains("saved=webhook"));
    assert_eq!(
        g.webhook_secret().await.unwrap().as_deref(),
        Some(s.as_str())
    );

    // two failed calls of the vendor within 5 minutes: one notice
    for _ in 0..2 {
        let r = call(
            &client,
            "run_tool",
            json!({"vendor": "acme", "name": "get_status", "input": {"code": 503}}),
        )
        .await;
        assert_eq!(code(&r).as_deref(), Some("vendor_error"), "{}", text(&r));
    }
    let seen = rx.wait_for(3).await;
    let n = verified(&seen[2].0, &seen[2].1, &s);
    assert_eq!(
        n.as_object().unwrap().len(),
        1,
        "Slack's body is text alone: {n}"
    );
    assert!(
        n["text"]
            .as_str()
            .unwrap()
            .starts_with("acme: 2 calls failed"),
        "{n}"
    );
    // with where to look
    assert!(
        n["text"]
            .as_str()
            .unwrap()
            .ends_with("/calls?outcome=failed"),
        "{n}"
    );

    // the vendor refuses the credential: a connection notice, never the secret
    call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_status", "input": {"code": 401}}),
    )
    .await;
    let seen = rx.wait_for(4).await;
    let n = verified(&seen[3].0, &seen[3].1, &s);
    let said = n["text"].as_str().unwrap();
    assert!(
        said.starts_with("acme: connection ops key failed")
            && said.contains("Test or replace it: http")
            && said.ends_with("/vendors/acme"),
        "{said}"
    );
    assert!(!seen.iter().any(|(_, b)| b.contains("vendor-secret-5531")));
    // more failures within the quiet time make no more notices
    call(
        &client,
        "run_tool",
        json!({"vendor": "acme", "name": "get_status", "input": {"code": 401}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.seen.lock().unwrap().len(), 4);

    // a test notice from the console says what the receiver answered
    let said: Value = b.call("test_webhook", &[]).await.json().await.unwrap();
    assert!(said.as_str().unwrap().contains("200 OK"), "{said}");
    assert_eq!(rx.seen.lock().unwrap().len(), 5);

    // the Settings page shows the webhook, the secret only on request
    let page = b.get("/settings").await.text().await.unwrap();
    assert!(
        page.contains(&format!("{}/…", url.trim_end_matches("/hook")))
            && page.contains("webhook.test delivered: 200 OK"),
        "{page}"
    );
    assert!(!page.contains(&s));
    let page = b.get("/settings?reveal=1").await.text().await.unwrap();
    assert!(page.contains(&s));

    // each change was audited under the person's name, without the secret
    let audit = g
        .audit_events(&graft::db::AuditQuery {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let settings: Vec<_> = audit
        .iter()
        .filter(|e| e.action == graft::domain::audit::AuditAction::SettingChange)
        .collect();
    assert_eq!(settings.len(), 2, "{audit:?}");
    assert!(settings
        .iter()
        .all(|e| e.person == "ops" && e.target == "webhook"));
    assert!(!audit
        .iter()
        .any(|e| e.detail.as_deref().unwrap_or("").contains("whsec_")));

    // removed: nothing is sent any more
    assert!(b.call("clear_webhook", &[]).await.status().is_success());
    let (_, token2) = agent(&app, "bot2").await;
    let client2 = modern_client(&app, &token2).await;
    call(
        &client2,
        "run_tool",
        json!({"vendor": "acme", "name": "create_item", "input": {}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.seen.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn a_made_secret_is_shown_on_request_and_a_new_one_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    let made = g
        .set_webhook(
            &ops,
            "https://hooks.example.com/x",
            graft::domain::notify::Format::Graft,
            5,
            graft::service::notify::SecretChoice::Keep,
        )
        .await
        .unwrap()
        .expect("none was set: Graft makes one");
    assert!(graft::domain::notify::secret_key(&made).is_ok());
    assert_eq!(g.webhook_secret().await.unwrap(), Some(made.clone()));
    // kept across an edit, replaced on request
    let kept = g
        .set_webhook(
            &ops,
            "https://hooks.example.com/y",
            graft::domain::notify::Format::Slack,
            5,
            graft::service::notify::SecretChoice::Keep,
        )
        .await
        .unwrap();
    assert_eq!(kept, None);
    assert_eq!(g.webhook_secret().await.unwrap(), Some(made.clone()));
    let new = g
        .set_webhook(
            &ops,
            "https://hooks.example.com/y",
            graft::domain::notify::Format::Slack,
            5,
            graft::service::notify::SecretChoice::New,
        )
        .await
        .unwrap()
        .unwrap();
    assert_ne!(new, made);
    // stored sealed: the database file never holds it in the clear
    for file in ["graft.db", "graft.db-wal"] {
        let raw = std::fs::read(dir.path().join(file)).unwrap_or_default();
        assert!(
            !raw.windows(new.len()).any(|w| w == new.as_bytes()),
            "{file}"
        );
    }
    // an agent cannot set it
    assert!(g
        .set_webhook(
            &Actor::Agent(1),
            "https://x/",
            graft::domain::notify::Format::Graft,
            5,
            graft::service::notify::SecretChoice::Keep
        )
        .await
        .is_err());
}

/// Whether a file of the database in `dir` holds `needle` in the clear.
fn database_holds(dir: &std::path::Path, needle: &str) -> bool {
    ["graft.db", "graft.db-wal"].iter().any(|file| {
        let raw = std::fs::read(dir.join(file)).unwrap_or_default();
        raw.windows(needle.len()).any(|w| w == needle.as_bytes())
    })
}

#[tokio::test]
async fn a_slack_url_is_kept_sealed_and_shown_without_its_token() {
    use graft::domain::notify::Format;
    use graft::service::notify::SecretChoice;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    let (rx, hook) = Receiver::start(&[]).await;
    let base = hook.trim_end_matches("/hook").to_string();
    let token = "tok5531SLACKsecret";
    let whole = format!("{base}/services/T0AAA/B0BBB/{token}");
    g.set_webhook(
        &ops,
        &whole,
        Format::Slack,
        5,
        SecretChoice::Given(secret()),
    )
    .await
    .unwrap();
    // delivered to the whole URL, which the database holds only sealed
    assert_eq!(g.test_webhook(&ops).await.unwrap(), Ok("200 OK".into()));
    verified(
        &rx.wait_for(1).await[0].0,
        &rx.wait_for(1).await[0].1,
        &secret(),
    );
    assert!(!database_holds(dir.path(), token));
    let shown = format!("{base}/…");
    assert_eq!(g.webhook().await.unwrap().unwrap().url, shown);
    assert_eq!(g.webhook_url().await.unwrap(), Some(whole.clone()));

    // the console shows it cut, whole only on request; the audit names the host only
    g.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/settings").await.text().await.unwrap();
    assert!(page.contains(&shown) && !page.contains(token), "{page}");
    let page = b.get("/settings?reveal=1").await.text().await.unwrap();
    assert!(page.contains(token));
    let audit = b.get("/audit").await.text().await.unwrap();
    assert!(
        audit.contains("127.0.0.1") && !audit.contains(token),
        "{audit}"
    );

    // saved again without a URL (a plain form post): the one set is kept
    let r = b
        .post_form(
            "set_webhook",
            "/settings",
            &[("url", ""), ("format", "graft"), ("error_threshold", "3")],
        )
        .await;
    assert!(r.status().is_redirection(), "{}", r.status());
    assert_eq!(g.webhook_url().await.unwrap(), Some(whole.clone()));
    // the delivery before the change is not this webhook's last delivery
    assert_eq!(g.webhook().await.unwrap().unwrap().last_delivery, None);
    assert_eq!(g.test_webhook(&ops).await.unwrap(), Ok("200 OK".into()));
    assert_eq!(rx.wait_for(2).await.len(), 2);
    let last = g.webhook().await.unwrap().unwrap().last_delivery.unwrap();
    assert!(last.1.contains("delivered: 200 OK"), "{last:?}");
    // a row set before URLs were sealed is sealed when Graft next reads it
    let legacy = graft::db::WebhookRow {
        url: whole.clone(),
        url_ciphertext: String::new(),
        ..graft::db::select_webhook(g.pool()).await.unwrap().unwrap()
    };
    graft::db::upsert_webhook(g.pool(), &legacy).await.unwrap();
    assert_eq!(g.webhook().await.unwrap().unwrap().url, shown);
    let row = graft::db::select_webhook(g.pool()).await.unwrap().unwrap();
    assert_eq!(row.url, shown);
    assert!(!row.url_ciphertext.contains(token));
    assert_eq!(g.test_webhook(&ops).await.unwrap(), Ok("200 OK".into()));
    assert_eq!(rx.wait_for(3).await.len(), 3);
    g.clear_webhook(&ops).await.unwrap();
    assert!(g
        .set_webhook(&ops, " ", Format::Graft, 5, SecretChoice::Keep)
        .await
        .unwrap_err()
        .to_string()
        .contains("give the URL"));
}

#[tokio::test]
async fn graft_webhook_sets_shows_tests_and_clears_it_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    // the database exists, migrated, as after `graft serve`
    let app = spawn_app_in(dir.path()).await;
    let (rx, url) = Receiver::start(&[]).await;
    let (ok, out) = cli(dir.path(), &["webhook", "set", "ftp://x/"], &[]).await;
    assert!(!ok && out.contains("https://"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        &["webhook", "set", &url, "--format", "slack"],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    let made = out
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .expect("the secret Graft made is printed once")
        .to_string();
    // shown without its path, which can be a token
    let shown = format!("{}/…", url.trim_end_matches("/hook"));
    let (ok, out) = cli(dir.path(), &["webhook", "show"], &[]).await;
    assert!(ok && out.contains(&shown) && out.contains("slack"), "{out}");
    assert!(!out.contains(&made) && !out.contains(&url), "{out}");
    // set again with only a new threshold: the URL and the format set are kept
    let (ok, out) = cli(
        dir.path(),
        &["webhook", "set", "--error-threshold", "7"],
        &[],
    )
    .await;
    assert!(ok && out.contains(&shown), "{out}");
    let (ok, out) = cli(dir.path(), &["webhook", "show", "--secret"], &[]).await;
    assert!(
        ok && out.contains("slack") && out.contains("threshold  7 failed") && out.contains(&url),
        "{out}"
    );
    let (ok, out) = cli(dir.path(), &["webhook", "test"], &[]).await;
    assert!(ok && out.contains("200 OK"), "{out}");
    let seen = rx.wait_for(1).await;
    let n = verified(&seen[0].0, &seen[0].1, &made);
    assert_eq!(n["text"], "A test notice from Graft, sent by rui.");
    let (ok, out) = cli(dir.path(), &["webhook", "clear"], &[]).await;
    assert!(ok && out.contains("removed"), "{out}");
    let (ok, out) = cli(dir.path(), &["webhook", "test"], &[]).await;
    assert!(!ok && out.contains("no webhook is set"), "{out}");
    drop(app);
}

#[tokio::test]
async fn an_approval_asked_through_another_process_reaches_this_ones_console() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let mut live = app.graft.live().subscribe();
    // another process on the same database: the CLI, or a second instance
    let other = open_graft(&db_url(dir.path()), Arc::new(graft::service::SystemClock)).await;
    // imported here: what this process hears of it is heard at once, and drained
    app.graft
        .import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (id, _) = agent(&app, "bot").await;
    while live.try_recv().is_ok() {}
    let answer = other
        .run_tool(id, "acme", "create_item", json!({}), false)
        .await
        .unwrap();
    assert_eq!(answer.code(), Some("approval_required"));
    let heard = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            let topics = live.recv().await.unwrap();
            if topics & graft::service::live::APPROVALS != 0 {
                return topics;
            }
        }
    })
    .await;
    assert!(
        heard.is_ok(),
        "this process's pages hear the other's approval request"
    );
}

/// Review of 28.3: calls racing for the same approval tell people once; approvals a new
/// version of the vendor's document asks again (a write's path moved) send one
/// `approval.reset` notice naming the vendor, how many, and where to decide.
#[tokio::test]
async fn racing_requests_notify_once_and_approvals_asked_again_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (rx, url) = Receiver::start(&[]).await;
    let s = secret();
    g.set_webhook(
        &ops,
        &url,
        graft::domain::notify::Format::Graft,
        5,
        graft::service::notify::SecretChoice::Given(s.clone()),
    )
    .await
    .unwrap();
    let (_, token) = agent(&app, "racer").await;
    let client = modern_client(&app, &token).await;

    // six calls at once: each is told to ask a person, people are told once
    let run = || {
        call(
            &client,
            "run_tool",
            json!({"vendor": "acme", "name": "create_item", "input": {}}),
        )
    };
    let answers = futures::future::join_all((0..6).map(|_| run())).await;
    for r in &answers {
        assert_eq!(code(r).as_deref(), Some("approval_required"), "{}", text(r));
    }
    rx.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = rx.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one notice for one request: {seen:?}");
    assert_eq!(
        verified(&seen[0].0, &seen[0].1, &s)["type"],
        "approval.requested"
    );

    // granted, then the document moves the write: the grant asks again, and people hear
    g.decide_approval(&ops, "racer", "acme", "create_item", true)
        .await
        .unwrap();
    assert_eq!(code(&run().await), None, "granted, the call goes through");
    let moved = API.replace("/items:", "/v2/items:");
    let report = g
        .import_openapi("acme", &moved, None, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(report.approvals_reset, 1, "{report:?}");
    let seen = rx.wait_for(2).await;
    let n = verified(&seen[1].0, &seen[1].1, &s);
    assert_eq!(n["type"], "approval.reset", "{n}");
    assert_eq!(n["data"]["scope"], "acme");
    assert_eq!(n["data"]["approvals"], 1);
    assert!(
        n["data"]["approvalUrl"]
            .as_str()
            .unwrap()
            .ends_with("/approvals"),
        "{n}"
    );
    assert!(
        n["text"].as_str().unwrap().contains("1 approval of acme"),
        "{n}"
    );
    assert_eq!(
        code(&run().await).as_deref(),
        Some("approval_required"),
        "the moved write waits for a person again"
    );
    // the request that reset made is not told again as a new one
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rx.seen.lock().unwrap().len(), 2);

    // granted again, then an import both moves the write back and the vendor to another
    // origin: the notice names both causes
    g.decide_approval(&ops, "racer", "acme", "create_item", true)
        .await
        .unwrap();
    let elsewhere = v.url().replace("127.0.0.1", "localhost");
    let report = g
        .import_openapi("acme", API, Some(&elsewhere), &mut |_, _| {})
        .await
        .unwrap();
    assert!(
        report.origin_moved.is_some() && report.approvals_reset == 1,
        "{report:?}"
    );
    let seen = rx.wait_for(3).await;
    let n = verified(&seen[2].0, &seen[2].1, &s);
    let said = n["text"].as_str().unwrap();
    assert!(
        said.contains("changed what its tools' calls do and moved its base URL"),
        "{said}"
    );
}

/// A command of the CLI posts the notices it caused before it exits: an import that asks
/// a granted approval again sends `approval.reset`, retried after a 503, and the process
/// ends once it is delivered.
#[tokio::test]
async fn a_cli_command_delivers_its_notices_before_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let v = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let g = &app.graft;
    let ops = Actor::Person("ops".into());
    g.import_openapi("acme", API, Some(&v.url()), &mut |_, _| {})
        .await
        .unwrap();
    let (rx, url) = Receiver::start(&[503]).await;
    g.set_webhook(
        &ops,
        &url,
        graft::domain::notify::Format::Graft,
        5,
        graft::service::notify::SecretChoice::Given(secret()),
    )
    .await
    .unwrap();
    agent(&app, "cli-bot").await;
    g.decide_approval(&ops, "cli-bot", "acme", "create_item", true)
        .await
        .unwrap();
    let moved = dir.path().join("moved.yaml");
    std::fs::write(&moved, API.replace("/items:", "/v3/items:")).unwrap();
    let moved_path = moved.display().to_string();
    let (ok, said) = cli(
        dir.path(),
        &["import-openapi", "--vendor", "acme", &moved_path],
        &[],
    )
    .await;
    assert!(ok, "{said}");
    // delivered before the process ended: no waiting here
    let seen = rx.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "a 503, then the retry: {seen:?} {said}");
    let n = verified(&seen[1].0, &seen[1].1, &secret());
    assert_eq!(n["type"], "approval.reset");
    assert_eq!(n["data"]["scope"], "acme");
}
