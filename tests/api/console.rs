//! The console's server side over real HTTP: the gate, sign-in, the server functions'
//! validation, and that a person's change is one code path with an agent's (history
//! cause `console`, list_changed to that agent only).

use crate::helpers::*;
use rmcp::model::ProtocolVersion;
use serde_json::Value;
use std::time::Duration;

/// A browser-like client that keeps the session cookie by hand.
pub(crate) struct Browser {
    pub(crate) http: reqwest::Client,
    pub(crate) base: String,
    pub(crate) cookie: Option<String>,
}

impl Browser {
    pub(crate) fn new(app: &TestApp) -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(HTTP_TIMEOUT)
                .build()
                .unwrap(),
            base: format!("http://{}", app.addr),
            cookie: None,
        }
    }

    fn keep_cookie(&mut self, r: &reqwest::Response) {
        if let Some(c) = r.headers().get("set-cookie") {
            let c = c.to_str().unwrap();
            self.cookie = Some(c.split(';').next().unwrap().to_string());
        }
    }

    /// Calls a server function as the hydrated page does (form body, JSON answer).
    pub(crate) async fn call(&mut self, name: &str, form: &[(&str, &str)]) -> reqwest::Response {
        let mut r = self
            .http
            .post(format!("{}/api/{name}", self.base))
            .form(form);
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        let r = r.send().await.unwrap();
        self.keep_cookie(&r);
        r
    }

    /// Posts a form as a browser without JavaScript does.
    pub(crate) async fn post_form(
        &mut self,
        name: &str,
        referer: &str,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut r = self
            .http
            .post(format!("{}/api/{name}", self.base))
            .header("accept", "text/html,application/xhtml+xml")
            .header("referer", format!("{}{referer}", self.base))
            .form(form);
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        let r = r.send().await.unwrap();
        self.keep_cookie(&r);
        r
    }

    /// Posts the tool page's "Try it" form (`/tools/try`) as a browser does, with
    /// `fields` (`in.NAME`, value); the page it leads to (the 303's location).
    pub(crate) async fn dry_run(
        &mut self,
        vendor: &str,
        name: &str,
        fields: &[(&str, &str)],
    ) -> String {
        let mut form = vec![("vendor", vendor), ("name", name)];
        form.extend_from_slice(fields);
        let mut r = self
            .http
            .post(format!("{}/tools/try", self.base))
            .header("accept", "text/html,application/xhtml+xml")
            .form(&form);
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 303, "{:?}", r.text().await);
        r.headers()["location"].to_str().unwrap().to_string()
    }

    pub(crate) async fn get(&mut self, path: &str) -> reqwest::Response {
        let mut r = self.http.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        r.send().await.unwrap()
    }

    pub(crate) async fn sign_in(&mut self, name: &str, password: &str) {
        let r = self
            .call("login", &[("name", name), ("password", password)])
            .await;
        assert_eq!(r.status(), 200, "{:?}", r.text().await);
    }
}

pub(crate) const PASSWORD: &str = "correct horse battery";

#[tokio::test]
async fn pages_and_server_functions_need_a_signed_in_person() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, _) = agent(&app, "alpha").await;
    let mut b = Browser::new(&app);

    let r = b.get("/agents/alpha?page=2").await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        r.headers()["location"],
        "/login?next=%2Fagents%2Falpha%3Fpage%3D2"
    );
    assert_eq!(b.get("/login").await.status(), 200);

    // a script gets 401; a plain form post goes to the sign-in page; nothing changes
    let r = b
        .call(
            "promote",
            &[("agent", "alpha"), ("tool", "petstore__add_pet")],
        )
        .await;
    assert_eq!(r.status(), 401);
    let r = b
        .post_form(
            "promote",
            "/agents/alpha",
            &[("agent", "alpha"), ("tool", "petstore__add_pet")],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login");
    let r = b
        .call(
            "edit_agent",
            &[
                ("agent", "alpha"),
                ("name", "alpha"),
                ("cap", "30"),
                ("window", "21"),
            ],
        )
        .await;
    assert_eq!(r.status(), 401);
    assert!(app.graft.working_set(id).await.unwrap().is_empty());
    assert_eq!(app.graft.agent(id).await.unwrap().cap, 20);

    // a wrong password and an unknown name answer alike, and sign no one in
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    for (name, pw) in [("ops", "wrong password!"), ("nobody", PASSWORD)] {
        let r = b.call("login", &[("name", name), ("password", pw)]).await;
        let body: Value = r.json().await.unwrap();
        assert_eq!(
            body,
            serde_json::json!({"Refused": "Wrong name or password."})
        );
        assert_eq!(b.get("/agents").await.status(), 303);
    }

    // the skill is public (agents fetch it)
    let r = b.get("/skill/SKILL.md").await;
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    assert!(text.starts_with("---\nname: graft\ndescription: "));
    assert!(text.contains("find_tool` before `acquire`"));
    app.stop().await;
}

#[tokio::test]
async fn sign_in_sets_a_safe_cookie_and_sign_out_ends_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    let r = b
        .post_form(
            "login",
            "/login?next=%2Fapprovals",
            &[
                ("name", "ops"),
                ("password", PASSWORD),
                ("next", "/approvals"),
            ],
        )
        .await;
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "/approvals");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain http here: {cookie}");
    let r = b.get("/approvals").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert!(r.text().await.unwrap().contains("<h1>Approvals</h1>"));

    // the database keeps a hash of the session id, never the cookie's value
    let value = b.cookie.clone().unwrap();
    let value = value.strip_prefix("graft_session=").unwrap();
    let stored: Vec<String> = graft::on_db!(app.graft.pool(), |e| sqlx::query_scalar(
        "SELECT id FROM tower_sessions"
    )
    .fetch_all(e)
    .await)
    .unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(
        !stored.iter().any(|id| id == value),
        "{stored:?} vs {value}"
    );

    // only local paths are followed after sign-in
    let r = b
        .post_form(
            "login",
            "/login",
            &[
                ("name", "ops"),
                ("password", PASSWORD),
                ("next", "//evil.example/"),
            ],
        )
        .await;
    assert_eq!(r.headers()["location"], "/");

    let r = b.post_form("logout", "/agents", &[]).await;
    assert_eq!(r.headers()["location"], "/login");
    assert_eq!(b.get("/approvals").await.status(), 303);

    // password change: the current one is checked, then the new one works
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .call(
            "change_password",
            &[
                ("current", "nope nope nope"),
                ("new", "a new password"),
                ("confirm", "a new password"),
            ],
        )
        .await;
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["Field"]["field"], "current");
    let r = b
        .call(
            "change_password",
            &[
                ("current", PASSWORD),
                ("new", "short"),
                ("confirm", "short"),
            ],
        )
        .await;
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["Field"]["field"], "new");
    let r = b
        .call(
            "change_password",
            &[
                ("current", PASSWORD),
                ("new", "a new password"),
                ("confirm", "a new password"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(app
        .graft
        .sign_in("ops", "a new password")
        .await
        .unwrap()
        .is_some());
    assert!(app.graft.sign_in("ops", PASSWORD).await.unwrap().is_none());
    app.stop().await;
}

#[tokio::test]
async fn the_agent_form_checks_each_field_and_saves_nothing_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (id, _) = agent(&app, "alpha").await;
    agent(&app, "beta").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    let cases = [
        (
            "alpha",
            "0",
            "21",
            "cap",
            "cap must be between 1 and 500 tools (got 0)",
        ),
        (
            "alpha",
            "501",
            "21",
            "cap",
            "cap must be between 1 and 500 tools (got 501)",
        ),
        ("alpha", "ten", "21", "cap", "cap must be a whole number"),
        (
            "alpha",
            "30",
            "0",
            "window",
            "idle window must be between 1 and 3650 days (got 0)",
        ),
        (
            "alpha",
            "30",
            "3651",
            "window",
            "idle window must be between 1 and 3650 days (got 3651)",
        ),
        (
            "al pha",
            "30",
            "21",
            "name",
            "agent name \"al pha\" is invalid: use 1 to 64 letters, digits, '-', '_' or '.' (not only dots, not '-' first)",
        ),
        (
            "beta",
            "30",
            "21",
            "name",
            "an agent named \"beta\" exists already",
        ),
    ];
    for (name, cap, window, field, message) in cases {
        let r = b
            .call(
                "edit_agent",
                &[
                    ("agent", "alpha"),
                    ("name", name),
                    ("cap", cap),
                    ("window", window),
                ],
            )
            .await;
        assert!(!r.status().is_success());
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["Field"]["field"], field, "{name} {cap} {window}");
        assert_eq!(e["Field"]["message"], message);
        let a = app.graft.agent(id).await.unwrap();
        assert_eq!(
            (a.name.as_str(), a.cap, a.idle_window_days),
            ("alpha", 20, 21),
            "nothing saved"
        );
    }

    // without JavaScript the error comes back in the page's URL and shows at the field
    let r = b
        .post_form(
            "edit_agent",
            "/agents/alpha",
            &[
                ("agent", "alpha"),
                ("name", "alpha"),
                ("cap", "501"),
                ("window", "21"),
            ],
        )
        .await;
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(location.contains("__err="), "{location}");
    let page = b
        .get(location.trim_start_matches(&b.base.clone()))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"data-field="cap" class="field-error">cap must be between 1 and 500 tools (got 501)</span>"#),
        "{page}"
    );

    // a plain form post that saves comes back saying so
    let r = b
        .post_form(
            "edit_agent",
            "/agents/alpha?page=2",
            &[
                ("agent", "alpha"),
                ("name", "alpha"),
                ("cap", "25"),
                ("window", "21"),
            ],
        )
        .await;
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "/agents/alpha?page=2&saved=agent");
    assert_eq!(app.graft.agent(id).await.unwrap().cap, 25);

    let r = b
        .call(
            "edit_agent",
            &[
                ("agent", "alpha"),
                ("name", "alpha"),
                ("cap", "30"),
                ("window", "45"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    let a = app.graft.agent(id).await.unwrap();
    assert_eq!((a.cap, a.idle_window_days), (30, 45));
    let d: Value = b.call("agents", &[]).await.json().await.unwrap();
    assert_eq!(d["agents"][0]["cap"], 30);
    app.stop().await;
}

#[tokio::test]
async fn a_persons_promotion_and_demotion_are_console_history_for_that_agent_only() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, token) = agent(&app, "alpha").await;
    let (_, token_b) = agent(&app, "beta").await;
    let (a, a_events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    let (other, b_events) = legacy_client(&app, &token_b, ProtocolVersion::V_2025_11_25).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    let r = b
        .call(
            "promote",
            &[("agent", "alpha"), ("tool", "petstore__add_pet")],
        )
        .await;
    assert_eq!(r.status(), 200);
    a_events.wait_for(1).await;
    assert!(tool_names(&a)
        .await
        .contains(&"petstore__add_pet".to_string()));
    let d: Value = b
        .call("agent", &[("name", "alpha"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(d["entries"][0]["name"], "add_pet");
    assert_eq!(d["entries"][0]["promoted_by"], "a person");
    assert_eq!(d["entries"][0]["last_used_at"], Value::Null);
    assert_eq!(d["history"][0]["cause"], "by ops");

    let r = b
        .call(
            "demote",
            &[("agent", "alpha"), ("tool", "petstore__add_pet")],
        )
        .await;
    assert_eq!(r.status(), 200);
    a_events.wait_for(2).await;
    let h = app.graft.history(id, 10, 0).await.unwrap();
    assert_eq!(
        h.iter()
            .map(|h| (h.action.as_str(), h.cause.as_str(), h.actor.as_str()))
            .collect::<Vec<_>>(),
        [
            ("demote", "console", "person:ops"),
            ("promote", "console", "person:ops")
        ]
    );
    let d: Value = b
        .call("agent", &[("name", "alpha"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(d["history_total"], 2);
    assert_eq!(d["sizes"], serde_json::json!([[h[1].at, 1], [h[0].at, 0]]));

    // a tool that is not there is refused, not a fault
    let r = b
        .call(
            "demote",
            &[("agent", "alpha"), ("tool", "petstore__add_pet")],
        )
        .await;
    let e: Value = r.json().await.unwrap();
    assert!(
        e["Refused"]
            .as_str()
            .unwrap()
            .contains("not in the working set"),
        "{e}"
    );

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(b_events.count(), 0, "another agent hears nothing");
    a.cancel().await.unwrap();
    other.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn a_new_agents_token_is_shown_once_and_works() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let r = b
        .post_form(
            "add_agent",
            "/agents",
            &[
                ("name", "hermes-1"),
                ("harness", "hermes"),
                ("cap", "25"),
                ("window", "21"),
            ],
        )
        .await;
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let reveal = location
        .strip_prefix("/agents/hermes-1/token?reveal=")
        .unwrap_or_else(|| panic!("{location}"))
        .to_string();
    let page = b.get(&location).await.text().await.unwrap();
    let token = page
        .split("data-token=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the token on the page")
        .to_string();
    assert!(page.contains("~/.hermes/config.yaml"));
    assert!(page.contains("\"transport\": \"streamable-http\""));
    assert!(page.contains("bearer_token_env_var"));
    assert!(page.contains("/skill/SKILL.md"));
    // once only: a second look finds nothing
    let again: Value = b
        .call(
            "take_token",
            &[("agent", "hermes-1"), ("reveal", reveal.as_str())],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again, Value::Null);
    // the token is the agent's
    assert_eq!(raw_initialize(&app, &token).await.status(), 200);
    let a = app.graft.agent_by_name("hermes-1").await.unwrap();
    assert_eq!((a.cap, a.harness.as_deref()), (25, Some("hermes")));

    // another person cannot take someone else's reveal
    app.graft.add_user("eve", PASSWORD).await.unwrap();
    let r = b
        .call("rotate_token", &[("agent", "hermes-1"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let reveal = loc.split("reveal=").nth(1).unwrap().to_string();
    let mut eve = Browser::new(&app);
    eve.sign_in("eve", PASSWORD).await;
    let v: Value = eve
        .call(
            "take_token",
            &[("agent", "hermes-1"), ("reveal", reveal.as_str())],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v, Value::Null);
    let v: Value = b
        .call(
            "take_token",
            &[("agent", "hermes-1"), ("reveal", reveal.as_str())],
        )
        .await
        .json()
        .await
        .unwrap();
    let new_token = v["token"].as_str().unwrap().to_string();
    assert_eq!(
        raw_initialize(&app, &token).await.status(),
        401,
        "the old token stops working"
    );
    assert_eq!(raw_initialize(&app, &new_token).await.status(), 200);
    // a token page of an agent that does not exist is not found
    assert_eq!(b.get("/agents/nobody/token?reveal=x").await.status(), 404);
    app.stop().await;
}

#[tokio::test]
async fn an_uploaded_openapi_document_is_imported_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let (http, base, cookie) = (b.http.clone(), b.base.clone(), b.cookie.clone().unwrap());
    let upload = |vendor: &'static str, text: String| {
        let form = reqwest::multipart::Form::new()
            .text("vendor", vendor)
            .text("base_url", "")
            .part(
                "document",
                reqwest::multipart::Part::text(text).file_name("spec.yaml"),
            );
        http.post(format!("{base}/vendors/import"))
            .header("cookie", cookie.clone())
            .multipart(form)
            .send()
    };
    let text = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    let r = upload("petstore", text).await.unwrap();
    assert_eq!(r.status(), 303);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let id = loc
        .strip_prefix("/vendors?import=")
        .expect("summary page")
        .to_string();
    let d: Value = b
        .call("vendors", &[("import", id.as_str())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(d["import"]["vendor"], "petstore");
    assert_eq!(d["import"]["imported"], 19);
    assert_eq!(d["import"]["error"], Value::Null);
    assert_eq!(d["vendors"][0]["slug"], "petstore");
    assert_eq!(app.graft.toolbox_size().await.unwrap(), 19);

    let r = upload("broken", "openapi: 3.0.0\npaths: [".into())
        .await
        .unwrap();
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let id = loc.strip_prefix("/vendors?import=").unwrap().to_string();
    let d: Value = b
        .call("vendors", &[("import", id.as_str())])
        .await
        .json()
        .await
        .unwrap();
    assert!(d["import"]["error"].as_str().is_some(), "{d}");
    assert_eq!(
        app.graft.toolbox_size().await.unwrap(),
        19,
        "nothing imported"
    );
    assert_eq!(
        d["vendors"].as_array().unwrap().len(),
        1,
        "no vendor created"
    );

    // a document over 32 MiB is read and refused with a summary, not a reset
    let big = format!(
        "{{\"openapi\": \"3.0.0\", \"x\": \"{}\"}}",
        "a".repeat(33 << 20)
    );
    let r = upload("huge", big).await.unwrap();
    assert_eq!(r.status(), 303);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let id = loc.strip_prefix("/vendors?import=").unwrap().to_string();
    let d: Value = b
        .call("vendors", &[("import", id.as_str())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(d["import"]["error"], "the document is larger than 32 MiB");
    app.stop().await;
}

#[tokio::test]
async fn posts_from_another_origin_and_planted_errors_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let (id, _) = agent(&app, "alpha").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let cookie = b.cookie.clone().unwrap();
    let form = [
        ("agent", "alpha"),
        ("name", "alpha"),
        ("cap", "99"),
        ("window", "21"),
    ];
    let post = |headers: Vec<(&'static str, String)>| {
        let mut r = b
            .http
            .post(format!("{}/api/edit_agent", b.base))
            .header("cookie", cookie.clone())
            .form(&form);
        for (k, v) in headers {
            r = r.header(k, v);
        }
        r.send()
    };
    // a page on another port of the same host is the same site, but not this origin
    let r = post(vec![("origin", "http://127.0.0.1:8099".into())])
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = post(vec![("sec-fetch-site", "same-site".into())])
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(app.graft.agent(id).await.unwrap().cap, 20, "nothing saved");
    // the console's own pages
    let r = post(vec![
        ("origin", format!("http://{}", app.addr)),
        ("sec-fetch-site", "same-origin".into()),
    ])
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(app.graft.agent(id).await.unwrap().cap, 99);

    // an error in a link from elsewhere is dropped; other parameters stay
    let r = b
        .http
        .get(format!(
            "{}/login?next=%2Fagents&__path=%2Fapi%2Flogin&__err=eyJSZWZ1c2VkIjoiaGkifQ",
            b.base
        ))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login?next=%2Fagents");
    // in any encoding Leptos would decode
    let r = b
        .http
        .get(format!(
            "{}/login?__path=%2Fapi%2Flogin&%5F%5Ferr=eyJSZWZ1c2VkIjoiaGkifQ",
            b.base
        ))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["location"], "/login");
    // nor through the sign-in's `next`
    let r = b
        .post_form(
            "login",
            "/login",
            &[
                ("name", "ops"),
                ("password", PASSWORD),
                (
                    "next",
                    "/agents?__path=%2Fapi%2Flogin&__err=eyJSZWZ1c2VkIjoiaGkifQ",
                ),
            ],
        )
        .await;
    // refused: the person lands on the home page instead
    assert_eq!(r.headers()["location"], "/");
    app.stop().await;
}

#[tokio::test]
async fn a_password_change_or_removal_ends_the_persons_other_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut laptop = Browser::new(&app);
    let mut phone = Browser::new(&app);
    laptop.sign_in("ops", PASSWORD).await;
    phone.sign_in("ops", PASSWORD).await;
    assert_eq!(phone.get("/agents").await.status(), 200);
    let r = laptop
        .call(
            "change_password",
            &[
                ("current", PASSWORD),
                ("new", "a new password"),
                ("confirm", "a new password"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        laptop.get("/agents").await.status(),
        200,
        "the session that changed it stays"
    );
    assert_eq!(phone.get("/agents").await.status(), 303, "the others end");

    // removed, then added again under the same name: the old cookie is still void
    app.graft.remove_user("ops").await.unwrap();
    assert_eq!(laptop.get("/agents").await.status(), 303);
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    assert_eq!(laptop.get("/agents").await.status(), 303);
    app.stop().await;
}

#[tokio::test]
async fn repeated_wrong_passwords_hold_the_name_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    app.graft.add_user("eve", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    for _ in 0..5 {
        let e: Value = b
            .call("login", &[("name", "ops"), ("password", "guess guess")])
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(e["Refused"], "Wrong name or password.");
    }
    // even the right password waits now, for that name from this address only (429)
    let r = b
        .call("login", &[("name", "OPS"), ("password", PASSWORD)])
        .await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    let e: Value = r.json().await.unwrap();
    assert!(
        e["TooMany"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Too many failed sign-ins"),
        "{e}"
    );
    assert_eq!(b.get("/agents").await.status(), 303);
    b.sign_in("eve", PASSWORD).await;
    assert_eq!(b.get("/agents").await.status(), 200);
    app.stop().await;
}

#[tokio::test]
async fn concurrent_wrong_passwords_are_all_counted() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut tries = tokio::task::JoinSet::new();
    for i in 0..60 {
        let mut b = Browser::new(&app);
        tries.spawn(async move {
            let guess = format!("guess number {i}");
            let e: Value = b
                .call("login", &[("name", "ops"), ("password", guess.as_str())])
                .await
                .json()
                .await
                .unwrap();
            e["Refused"]
                .as_str()
                .or(e["TooMany"]["message"].as_str())
                .unwrap_or_default()
                .to_string()
        });
    }
    let answers = tries.join_all().await;
    let checked = answers
        .iter()
        .filter(|a| *a == "Wrong name or password.")
        .count();
    let held = answers
        .iter()
        .filter(|a| a.starts_with("Too many failed sign-ins"))
        .count();
    assert_eq!((checked, held), (5, 55), "{answers:?}");
    app.stop().await;
}

/// The database, its WAL and the data directory are for their owner only (a copy of
/// them must not be readable by other users of the machine).
#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_database_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let s = settings(&data);
    s.ensure_data_dir().unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    // an existing database left readable by others is narrowed at the next start
    let db = data.join("graft.db");
    let pool = graft::db::connect(&sqlite_url(&data)).await.unwrap();
    sqlx::query("CREATE TABLE t (x)")
        .execute(pool.as_sqlite().unwrap())
        .await
        .unwrap();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&data.join("graft.db-wal")), 0o600);
    pool.close().await;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.ensure_data_dir().unwrap();
    let pool = graft::db::connect(&sqlite_url(&data)).await.unwrap();
    assert_eq!((mode(&data), mode(&db)), (0o700, 0o600));
    pool.close().await;
}

/// The bundle under `/pkg/` is revalidated, never served stale (issue 15 item 6): an
/// ETag and `Cache-Control: no-cache`; the same ETag in `If-None-Match` gets 304 without
/// a body; a rebuilt file gets a new ETag and its new bytes; no path escapes `pkg/`.
#[tokio::test]
async fn the_bundle_is_revalidated_by_etag() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("site/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("graft.css"), "body { color: red }").unwrap();
    std::fs::write(dir.path().join("site/secret.txt"), "outside pkg").unwrap();
    let app = spawn_app_in(dir.path()).await;
    let http = reqwest::Client::new();
    let url = format!("http://{}/pkg/graft.css", app.addr);

    let first = http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_string();
    assert_eq!(first.text().await.unwrap(), "body { color: red }");

    let again = http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty());

    // a rebuild: other bytes, another length and time
    tokio::time::sleep(Duration::from_millis(20)).await;
    std::fs::write(pkg.join("graft.css"), "body { color: blue; margin: 0 }").unwrap();
    let rebuilt = http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(rebuilt.status(), 200);
    assert_ne!(rebuilt.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(
        rebuilt.text().await.unwrap(),
        "body { color: blue; margin: 0 }"
    );

    // sent as written (reqwest would resolve the dots before sending)
    for escape in [
        "/pkg/../secret.txt",
        "/pkg/%2e%2e/secret.txt",
        "/pkg/..%2fsecret.txt",
    ] {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(app.addr).await.unwrap();
        tcp.write_all(
            format!("GET {escape} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 "), "{escape}: {answer}");
        assert!(
            !answer.contains("outside pkg"),
            "{escape} escaped pkg/: {answer}"
        );
        assert!(!answer.contains("etag"), "{escape} got an ETag: {answer}");
    }
    app.stop().await;
}

/// The bundle is sent precompressed (issue 28.12): a browser that accepts brotli gets
/// `graft_bg.wasm.br`, one that accepts only gzip gets `.gz`, one that accepts neither
/// the file itself; each answer varies on Accept-Encoding and keeps the file's ETag.
#[tokio::test]
async fn the_bundle_is_sent_precompressed_to_a_browser_that_accepts_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("site/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let wasm = pkg.join("graft_bg.wasm");
    std::fs::write(&wasm, b"\0asm the bundle itself").unwrap();
    std::fs::write(pkg.join("graft_bg.wasm.br"), b"brotli bytes").unwrap();
    std::fs::write(pkg.join("graft_bg.wasm.gz"), b"gzip bytes").unwrap();
    let app = spawn_app_in(dir.path()).await;
    let addr = app.addr;
    // sent as written: reqwest would ask for and decode an encoding itself
    let get = move |accept: Option<&'static str>| async move {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let accept = accept
            .map(|a| format!("Accept-Encoding: {a}\r\n"))
            .unwrap_or_default();
        tcp.write_all(
            format!("GET /pkg/graft_bg.wasm HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut answer = Vec::new();
        tcp.read_to_end(&mut answer).await.unwrap();
        String::from_utf8_lossy(&answer).to_lowercase()
    };
    let etag = {
        let m = std::fs::metadata(&wasm).unwrap();
        let t = m
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        format!("etag: w/\"{:x}-{:x}\"", m.len(), t)
    };
    for (accept, encoding, body) in [
        (Some("gzip, deflate, br, zstd"), Some("br"), "brotli bytes"),
        (Some("gzip"), Some("gzip"), "gzip bytes"),
        (None, None, "\0asm the bundle itself"),
    ] {
        let answer = get(accept).await;
        assert!(answer.starts_with("http/1.1 200"), "{accept:?}: {answer}");
        match encoding {
            Some(e) => assert!(
                answer.contains(&format!("content-encoding: {e}\r\n")),
                "{accept:?}: {answer}"
            ),
            None => assert!(!answer.contains("content-encoding"), "{answer}"),
        }
        assert!(answer.ends_with(body), "{accept:?}: {answer}");
        assert!(answer.contains("vary: accept-encoding"), "{answer}");
        assert_eq!(answer.matches("accept-encoding").count(), 1, "{answer}");
        assert!(answer.contains(&etag), "{etag}: {answer}");
    }
    app.stop().await;
}

/// `/` walks a newcomer through the first steps (a vendor, its connection, an agent),
/// each checked off once done, then shows the agents and what waits for a person
/// (issue 14.1). Like every page it needs a signed-in person, and sign-in lands there.
#[tokio::test]
async fn the_home_page_checks_off_the_first_steps() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    let r = b.get("/").await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login?next=%2F");
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/").await.text().await.unwrap();
    assert!(page.contains("First steps"), "{page}");
    assert_eq!(page.matches("To do.").count(), 3, "{page}");
    assert!(page.contains(r#"href="/vendors#import""#));

    import_petstore(&app.graft, "https://petstore.example").await;
    let page = b.get("/").await.text().await.unwrap();
    assert_eq!(page.matches("To do.").count(), 2, "{page}");
    assert!(page.contains("19 tools in the toolbox"), "{page}");

    app.graft
        .add_connection(
            "petstore",
            "main",
            "header",
            Some("api_key"),
            Some("special-key"),
        )
        .await
        .unwrap();
    app.graft
        .add_agent("hermes-laptop", None, Some(5), None)
        .await
        .unwrap();
    let page = b.get("/").await.text().await.unwrap();
    // every step done: the steps give way to the overview
    assert!(!page.contains("First steps"), "{page}");
    assert!(page.contains(r#"href="/agents/hermes-laptop""#), "{page}");
    assert!(page.contains("0 of 5"), "{page}");
    assert!(page.contains("never"), "{page}");
    assert!(
        page.contains("No sweep has demoted anything yet."),
        "{page}"
    );
    assert!(
        page.contains("No failed calls.") && page.contains("No calls yet."),
        "{page}"
    );

    // the overview: the last sweep's demotions, recent calls and failures
    let g = &app.graft;
    let hermes = g.agent_by_name("hermes-laptop").await.unwrap();
    g.promote_tool(
        &graft::service::Actor::Agent(hermes.id),
        hermes.id,
        "petstore",
        "get_inventory",
    )
    .await
    .unwrap();
    g.run_tool(
        hermes.id,
        "petstore",
        "add_pet",
        serde_json::json!({}),
        false,
    )
    .await
    .unwrap();
    g.run_tool(
        hermes.id,
        "petstore",
        "add_pet",
        serde_json::json!({"name": "rex", "photoUrls": []}),
        true,
    )
    .await
    .unwrap();
    let later = g.clock_now() + 40 * 86_400_000;
    let report = g.sweep_once(later, false).await.unwrap();
    assert_eq!(report.demotions(), 1);
    let page = b.get("/").await.text().await.unwrap();
    assert!(
        page.contains("The last sweep that demoted tools ran"),
        "{page}"
    );
    assert!(page.contains("demoted 1 tool:"), "{page}");
    let swept = &page[page.find(r#"id="last-sweep""#).unwrap()..];
    assert!(
        swept.contains("<code>petstore__get_inventory</code>")
            && swept.contains("unused past the idle window</li>"),
        "{page}"
    );
    let section = |id: &str| {
        let start = page.find(&format!(r#"id="{id}""#)).unwrap();
        page[start..][..page[start..].find("</section>").unwrap()].to_string()
    };
    let failures = section("recent-failures");
    assert_eq!(
        failures.matches("<tr data-outcome=").count(),
        1,
        "{failures}"
    );
    assert!(
        failures.contains(r#"data-outcome="invalid input""#),
        "{failures}"
    );
    let calls = section("recent-calls");
    assert_eq!(calls.matches("<tr data-outcome=").count(), 2, "{calls}");
    assert!(calls.contains(r#"href="/agents/hermes-laptop""#), "{calls}");
    app.stop().await;
}

/// Every page asks the person who signs in with the password Graft generated at first
/// start to change it, until they do; the nav counts the approvals that wait (issue 14.1).
#[tokio::test]
async fn the_generated_password_is_flagged_until_changed() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let generated = app.graft.ensure_admin().await.unwrap().unwrap();
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let banner = "You sign in with the password Graft generated at first start.";

    // a person with a password of their own sees no banner
    let mut ops = Browser::new(&app);
    ops.sign_in("ops", PASSWORD).await;
    let page = ops.get("/agents").await.text().await.unwrap();
    assert!(!page.contains(banner), "{page}");

    let mut b = Browser::new(&app);
    b.sign_in("admin", &generated).await;
    for path in ["/", "/agents", "/vendors", "/account"] {
        let page = b.get(path).await.text().await.unwrap();
        assert!(page.contains(banner), "{path}: {page}");
        assert!(
            !page.contains(r#"class="count""#),
            "{path}: nothing pending yet"
        );
    }
    let r = b
        .call(
            "change_password",
            &[
                ("current", generated.as_str()),
                ("new", "a password of my own"),
                ("confirm", "a password of my own"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = b.get("/").await.text().await.unwrap();
    assert!(!page.contains(banner), "{page}");

    // `graft user password` (a reset without the current password) clears it too
    let other = tempfile::tempdir().unwrap();
    let fresh = spawn_app_in(other.path()).await;
    let generated = fresh.graft.ensure_admin().await.unwrap().unwrap();
    let admin = fresh
        .graft
        .sign_in("admin", &generated)
        .await
        .unwrap()
        .unwrap();
    assert!(fresh.graft.password_is_generated(admin.id).await.unwrap());
    fresh
        .graft
        .reset_password("admin", "a password of my own")
        .await
        .unwrap();
    assert!(!fresh.graft.password_is_generated(admin.id).await.unwrap());
    fresh.stop().await;
    app.stop().await;
}

/// The console shows what agents did (issue 14.4): an agent's recent calls, narrowed by
/// outcome with plain links; a tool's calls by every agent; an approval row with the
/// request and the input of the call that asked; the banner of the row an agent's link
/// names says at once what was decided.
#[tokio::test]
async fn the_console_shows_each_call_and_what_an_approval_is_for() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, _) = agent(&app, "alpha").await;
    let g = &app.graft;
    // a secret-looking field (in a declared property: undeclared top-level inputs are
    // refused, issue 25.3) is redacted wherever the call is shown
    let pet = serde_json::json!({"name": "rex", "photoUrls": ["u"], "category": {"name": "dogs", "api_key": "k-123456"}});
    g.run_tool(id, "petstore", "add_pet", pet.clone(), true)
        .await
        .unwrap();
    g.run_tool(id, "petstore", "add_pet", pet, false)
        .await
        .unwrap();
    g.run_tool(
        id,
        "petstore",
        "get_pet_by_id",
        serde_json::json!({"petId": "x"}),
        false,
    )
    .await
    .unwrap();
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    // the agent page's search: ranked hits with their score, and a word when none match
    let page = b
        .get("/agents/alpha?q=add+a+pet")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("petstore__add_pet"), "{page}");
    assert!(page.contains("matches, best first"), "{page}");
    assert!(page.contains(r#"class="muted score""#), "{page}");
    let page = b
        .get("/agents/alpha?q=zqxv+wubble")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("No tool matches &quot;zqxv wubble&quot;")
            || page.contains(r#"No tool matches "zqxv wubble""#),
        "{page}"
    );

    let page = b.get("/agents/alpha").await.text().await.unwrap();
    assert!(page.contains("Recent calls"), "{page}");
    assert!(!page.contains("No tool matches"), "{page}");
    assert_eq!(page.matches("<tr data-outcome=").count(), 3, "{page}");
    for outcome in ["dry run", "waits for approval", "invalid input"] {
        assert!(
            page.contains(&format!(r#"data-outcome="{outcome}""#)),
            "{outcome}: {page}"
        );
    }
    assert!(
        page.contains("&lt;redacted&gt;") && !page.contains("k-123456"),
        "{page}"
    );
    assert!(
        page.contains(r#"href="/agents/alpha?calls=failed#calls""#),
        "{page}"
    );

    let failed = b
        .get("/agents/alpha?calls=failed")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(failed.matches("<tr data-outcome=").count(), 1, "{failed}");
    assert!(
        failed.contains(r#"data-outcome="invalid input""#),
        "{failed}"
    );
    assert!(
        failed.contains("/petId"),
        "the error told to the agent: {failed}"
    );
    let bad = b
        .get("/agents/alpha?calls=sideways")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(
        bad.matches("<tr data-outcome=").count(),
        3,
        "a stale filter link shows every call: {bad}"
    );
    let waiting = b
        .get("/agents/alpha?calls=approval")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(waiting.matches("<tr data-outcome=").count(), 1, "{waiting}");
    assert!(waiting.contains(r#"class="outcome waiting""#), "{waiting}");
    let oldest = g
        .calls(&Default::default(), 50)
        .await
        .unwrap()
        .last()
        .unwrap()
        .id;
    let older = b
        .get(&format!("/agents/alpha?before={oldest}&calls=dry-run"))
        .await
        .text()
        .await
        .unwrap();
    assert!(older.contains("No calls match."), "{older}");
    assert!(
        older.contains(r#"href="/agents/alpha?calls=dry-run#calls""#),
        "a way back to the newest: {older}"
    );

    let tool = b.get("/tools/petstore/add_pet").await.text().await.unwrap();
    assert_eq!(tool.matches("<tr data-outcome=").count(), 2, "{tool}");
    assert!(tool.contains(r#"href="/agents/alpha""#), "{tool}");

    let link = "/approvals?agent=alpha&tool=petstore__add_pet";
    let approvals = b.get(link).await.text().await.unwrap();
    assert!(
        approvals.contains("alpha asks to run petstore__add_pet"),
        "{approvals}"
    );
    assert!(approvals.contains("POST /pet"), "{approvals}");
    assert!(
        approvals.contains("Input of the call that asked"),
        "{approvals}"
    );
    assert!(
        approvals.contains(r#"{"category":{"api_key":"&lt;redacted&gt;","name":"dogs"},"name":"rex","photoUrls":["u"]}"#),
        "{approvals}"
    );
    let r = b
        .call(
            "decide",
            &[
                ("agent", "alpha"),
                ("tool", "petstore__add_pet"),
                ("decision", "grant"),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    let approvals = b.get(link).await.text().await.unwrap();
    assert!(
        approvals.contains("Approved: alpha may run petstore__add_pet."),
        "{approvals}"
    );
    assert!(!approvals.contains("asks to run"), "{approvals}");
    app.stop().await;
}

/// The Toolbox's browse_tools server function's answer.
async fn browse(b: &mut Browser, form: &[(&str, &str)]) -> Value {
    b.call("browse_tools", form).await.json().await.unwrap()
}

/// The Toolbox is browsable without a query (issue 14.2): every tool, 50 a page, of one
/// vendor or all, by name or by use, each with what its call does in words; with words it
/// searches as find_tool does, narrowed to the chosen vendor.
#[tokio::test]
async fn the_toolbox_pages_through_every_tool_by_vendor_and_by_use() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let paths: serde_json::Map<String, Value> = (0..60)
        .map(|i| {
            let op = serde_json::json!({"get": {"operationId": format!("read_gadget_{i:02}"), "summary": format!("Read gadget {i}")}});
            (format!("/gadgets/{i}"), op)
        })
        .collect();
    let doc = serde_json::json!({"openapi": "3.0.0", "info": {"title": "Gadgets", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}], "paths": paths});
    app.graft
        .import_openapi("gadgets", &doc.to_string(), None, &mut |_, _| {})
        .await
        .unwrap();
    let (id, _) = agent(&app, "alpha").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let names = |d: &Value| -> Vec<String> {
        d["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                format!(
                    "{}__{}",
                    t["vendor"].as_str().unwrap(),
                    t["name"].as_str().unwrap()
                )
            })
            .collect()
    };

    let first = browse(&mut b, &[]).await;
    assert_eq!(first["total"], 79, "{first}");
    assert_eq!(first["page"], 1);
    assert_eq!(names(&first).len(), 50);
    assert_eq!(names(&first)[0], "gadgets__read_gadget_00");
    assert_eq!(
        first["vendors"],
        serde_json::json!([
            ["gadgets", "Gadgets", 60],
            ["petstore", "Swagger Petstore - OpenAPI 3.0", 19]
        ])
    );
    let second = browse(&mut b, &[("page", "2")]).await;
    assert_eq!(names(&second).len(), 29);
    let mut all = names(&first);
    all.extend(names(&second));
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(all, sorted, "by name, every tool once across the pages");
    let past = browse(&mut b, &[("page", "9")]).await;
    assert_eq!(past["page"], 2, "a page past the end shows the last");

    let pets = browse(&mut b, &[("vendor", "petstore")]).await;
    assert_eq!(pets["total"], 19);
    let does: Vec<(String, String)> = pets["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["does"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        does.contains(&("add_pet".into(), "writes".into())),
        "{does:?}"
    );
    assert!(
        does.contains(&("delete_pet".into(), "deletes".into())),
        "{does:?}"
    );
    assert!(
        does.contains(&("get_inventory".into(), "reads".into())),
        "{does:?}"
    );

    // by use: calls that reached the vendor, every agent's together
    let g = &app.graft;
    for _ in 0..2 {
        graft::db::upsert_tool_usage(
            g.pool(),
            id,
            g.tool("petstore", "get_inventory").await.unwrap().id,
            g.clock_now(),
        )
        .await
        .unwrap();
    }
    graft::db::upsert_tool_usage(
        g.pool(),
        id,
        g.tool("gadgets", "read_gadget_42").await.unwrap().id,
        g.clock_now(),
    )
    .await
    .unwrap();
    let used = browse(&mut b, &[("sort", "use")]).await;
    assert_eq!(
        names(&used)[..2],
        ["petstore__get_inventory", "gadgets__read_gadget_42"]
    );
    assert_eq!(used["tools"][0]["calls"], 2);

    let e: Value = b
        .call("browse_tools", &[("vendor", "nope")])
        .await
        .json()
        .await
        .unwrap();
    assert!(e.to_string().contains("no vendor"), "{e}");
    let d = browse(&mut b, &[("sort", "size")]).await;
    assert_eq!(d["sort"], "name", "a stale order link sorts by name");
    let d = browse(&mut b, &[("page", &i64::MAX.to_string())]).await;
    assert_eq!(d["page"], 2, "a page far past the end shows the last: {d}");

    // the page without JavaScript: the form, the table, the pager links
    let page = b
        .get("/tools?vendor=gadgets&sort=use")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"<option value="gadgets" selected"#),
        "{page}"
    );
    assert!(
        page.contains("Tools 1–50 of 60, most used first."),
        "{page}"
    );
    assert!(
        page.contains(r#"href="/tools?vendor=gadgets&amp;sort=use&amp;page=2""#),
        "{page}"
    );
    assert!(
        page.contains(r#"<span class="badge reads">reads</span>"#),
        "{page}"
    );
    // words search as find_tool does, within the vendor chosen
    let d: Value = b
        .call(
            "search_tools",
            &[("query", "add a pet"), ("vendor", "petstore")],
        )
        .await
        .json()
        .await
        .unwrap();
    let hits = d["hits"].as_array().unwrap();
    assert_eq!(hits[0]["name"], "add_pet", "{d}");
    assert!(hits.iter().all(|h| h["vendor"] == "petstore"), "{d}");
    let page = b
        .get("/tools?q=gadget&vendor=petstore")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Nothing matches"), "{page}");

    // a search pages through its matches past the first 50 (issue 28.12), in the Toolbox
    // and on the agent page, with plain links
    let hit_names = |d: &Value| -> Vec<String> {
        d["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut pages = Vec::new();
    for p in ["1", "2"] {
        let d: Value = b
            .call(
                "search_tools",
                &[("query", "read gadget"), ("vendor", "gadgets"), ("page", p)],
            )
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(d["total"], 60, "{d}");
        assert_eq!(d["pages"], 2, "{d}");
        assert_eq!(d["page"], p.parse::<i64>().unwrap(), "{d}");
        pages.push(hit_names(&d));
    }
    assert_eq!((pages[0].len(), pages[1].len()), (50, 10), "{pages:?}");
    let mut every: Vec<String> = pages.concat();
    every.sort();
    every.dedup();
    assert_eq!(every.len(), 60, "each match once across the pages");
    let page = b
        .get("/tools?q=read+gadget&vendor=gadgets")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Matches 1–50 of 60, best first"), "{page}");
    assert!(
        page.contains(r#"href="/tools?q=read%20gadget&amp;vendor=gadgets&amp;hp=2""#),
        "{page}"
    );
    let page = b
        .get("/tools?q=read+gadget&vendor=gadgets&hp=2")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Matches 51–60 of 60, best first"), "{page}");
    assert!(
        page.contains(&format!("gadgets__{}", pages[1][0])),
        "{page}"
    );
    assert!(
        !page.contains(&format!(r#"data-tool="gadgets__{}""#, pages[0][0])),
        "{page}"
    );
    let page = b
        .get("/agents/alpha?q=read+gadget&hp=2")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Page 2 of 2"), "{page}");
    assert!(
        page.contains(r#"href="/agents/alpha?q=read%20gadget&amp;hp=1#promote""#),
        "{page}"
    );
    // a page past the last (an old link, an edited address) shows the last, not
    // "nothing matches"
    for p in ["3", "11", "999"] {
        let d: Value = b
            .call(
                "search_tools",
                &[("query", "read gadget"), ("vendor", "gadgets"), ("page", p)],
            )
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            (d["page"].as_i64(), d["pages"].as_i64()),
            (Some(2), Some(2)),
            "{p}: {d}"
        );
        assert_eq!(hit_names(&d), pages[1], "{p}");
    }
    let page = b
        .get("/tools?q=read+gadget&vendor=gadgets&hp=9")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Matches 51–60 of 60, best first"), "{page}");

    // a tool's page says in words what a call does, and leads back to its vendor's tools
    let page = b.get("/tools/petstore/add_pet").await.text().await.unwrap();
    assert!(page.contains("A call changes data at the vendor"), "{page}");
    assert!(page.contains(r#"href="/tools?vendor=petstore""#), "{page}");
    let r = b.get("/tools/petstore/nope").await;
    assert_eq!(r.status(), 404);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("There is no tool petstore__nope in the toolbox."),
        "{page}"
    );
    assert!(!page.contains("find_tool"), "{page}");
    app.stop().await;
}

/// A vendor's page edits its name and base URL with errors at their fields, and disables
/// it only when the box is ticked (issue 14.3, 14.5).
#[tokio::test]
async fn the_vendor_page_edits_and_disables_only_when_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let page = b.get("/vendors").await.text().await.unwrap();
    assert!(page.contains(r#"href="/vendors/petstore""#), "{page}");
    let page = b.get("/vendors/petstore").await.text().await.unwrap();
    assert!(page.contains("19 tools in the toolbox"), "{page}");
    assert!(
        page.contains("Import history") && page.contains("19 new tools"),
        "{page}"
    );

    let e: Value = b
        .call(
            "edit_vendor",
            &[
                ("slug", "petstore"),
                ("name", "Pets"),
                ("base_url", "not a url"),
            ],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(e["Field"]["field"], "base_url", "{e}");
    // another origin: only when the person ticks that they mean it (security review
    // 32.5: its connections wait for a confirmation there)
    let e: Value = b
        .call(
            "edit_vendor",
            &[
                ("slug", "petstore"),
                ("name", "Pets"),
                ("base_url", "https://pets.example/v3"),
            ],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(e["Field"]["field"], "confirm_move", "{e}");
    assert!(app
        .graft
        .vendor("petstore")
        .await
        .unwrap()
        .base_url
        .starts_with("http://127.0.0.1"));
    let r = b
        .call(
            "edit_vendor",
            &[
                ("slug", "petstore"),
                ("name", "Pets"),
                ("base_url", "https://pets.example/v3"),
                ("confirm_move", "yes"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    let v = app.graft.vendor("petstore").await.unwrap();
    assert_eq!(
        (v.display_name.as_str(), v.base_url.as_str()),
        ("Pets", "https://pets.example/v3")
    );

    let e: Value = b
        .call(
            "set_vendor_state",
            &[("slug", "petstore"), ("enabled", "no")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(e["Field"]["field"], "confirm", "{e}");
    assert!(app
        .graft
        .vendor("petstore")
        .await
        .unwrap()
        .disabled_at
        .is_none());
    let r = b
        .call(
            "set_vendor_state",
            &[("slug", "petstore"), ("enabled", "no"), ("confirm", "yes")],
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = b.get("/vendors/petstore").await.text().await.unwrap();
    assert!(
        page.contains("Disabled: its tools are out of search"),
        "{page}"
    );
    assert!(page.contains("Enable the vendor"), "{page}");
    let page = b.get("/vendors").await.text().await.unwrap();
    assert!(page.contains("<td>disabled</td>"), "{page}");
    app.stop().await;
}

/// Destructive actions need their second step (issue 14.5): rotating a token, revoking a
/// connection, revoking an approval and removing a vendor are refused at `confirm`
/// without `confirm=yes`, and change nothing; the pages offer each behind a `<details>`
/// step (or a checkbox) that works without JavaScript. The connection form starts with
/// the kind and header name the document's securitySchemes ask for, and its errors are
/// at their fields.
#[tokio::test]
async fn destructive_actions_need_a_second_step_and_connection_forms_help() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;
    let field = |v: &Value| v["Field"]["field"].as_str().unwrap_or_default().to_string();

    // the connection form, prefilled from petstore's api_key header scheme
    let page = b.get("/vendors/petstore").await.text().await.unwrap();
    assert!(
        page.contains(r#"<option value="header" selected"#),
        "the header kind is chosen: {page}"
    );
    assert!(
        page.contains(r#"name="name" placeholder="only for header and query" value="api_key""#),
        "{page}"
    );
    assert!(
        page.contains("petstore&#x27;s document asks for the header api_key.")
            || page.contains("petstore's document asks for the header api_key."),
        "{page}"
    );
    for (form, at) in [
        (
            vec![
                ("label", ""),
                ("kind", "bearer"),
                ("secret", "k-1234567890"),
            ],
            "label",
        ),
        (
            vec![
                ("label", "p"),
                ("kind", "header"),
                ("secret", "k-1234567890"),
            ],
            "name",
        ),
        (
            vec![("label", "p"), ("kind", "bearer"), ("secret", "short")],
            "secret",
        ),
        (
            vec![
                ("label", "p"),
                ("kind", "basic"),
                ("secret", "no-colon-here"),
            ],
            "secret",
        ),
        (
            vec![
                ("label", "p"),
                ("kind", "magic"),
                ("secret", "k-1234567890"),
            ],
            "kind",
        ),
        (
            vec![
                ("label", "\u{202E}live"),
                ("kind", "bearer"),
                ("secret", "k-1234567890"),
            ],
            "label",
        ),
    ] {
        let mut f = vec![("vendor", "petstore"), ("name", "")];
        f.extend(form);
        let e: Value = b.call("add_connection", &f).await.json().await.unwrap();
        assert_eq!(field(&e), at, "{e}");
    }
    assert!(app.graft.connections().await.unwrap().is_empty());
    let ok = [
        ("vendor", "petstore"),
        ("label", "prod"),
        ("kind", "header"),
        ("name", "api_key"),
        ("secret", "k-1234567890"),
    ];
    assert_eq!(b.call("add_connection", &ok).await.status(), 200);
    let e: Value = b.call("add_connection", &ok).await.json().await.unwrap();
    assert_eq!(field(&e), "label", "a label taken: {e}");
    let conn = app.graft.connections().await.unwrap()[0].id.to_string();

    // rotate: refused without the second step, the token still works
    let (_, token) = agent(&app, "hermes-1").await;
    let e: Value = b
        .call("rotate_token", &[("agent", "hermes-1")])
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    assert_eq!(raw_initialize(&app, &token).await.status(), 200);
    let page = b.get("/agents/hermes-1").await.text().await.unwrap();
    assert!(
        page.contains(r#"<details class="confirm"><summary>Rotate token"#),
        "{page}"
    );
    let r = b
        .call("rotate_token", &[("agent", "hermes-1"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);

    // revoke a connection
    let e: Value = b
        .call("revoke_connection", &[("id", conn.as_str())])
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    assert!(app.graft.connections().await.unwrap()[0]
        .revoked_at
        .is_none());
    let page = b.get("/vendors").await.text().await.unwrap();
    assert!(page.contains(r#"aria-label="Revoke prod""#), "{page}");
    let r = b
        .call(
            "revoke_connection",
            &[("id", conn.as_str()), ("confirm", "yes")],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(app.graft.connections().await.unwrap()[0]
        .revoked_at
        .is_some());

    // revoke an approval: deny and approve need no second step, revoke does
    let a = app.graft.agent_by_name("hermes-1").await.unwrap();
    let pet = serde_json::json!({"name": "rex", "photoUrls": ["u"]});
    app.graft
        .run_tool(a.id, "petstore", "add_pet", pet, false)
        .await
        .unwrap();
    let decide = |d: &'static str, confirm: Option<&'static str>| {
        let mut f = vec![
            ("agent", "hermes-1"),
            ("tool", "petstore__add_pet"),
            ("decision", d),
        ];
        if let Some(c) = confirm {
            f.push(("confirm", c));
        }
        f
    };
    let r = b.call("decide", &decide("grant", None)).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let e: Value = b
        .call("decide", &decide("revoke", None))
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    // a Deny clicked on a page that showed it pending takes back the grant: asked too
    let e: Value = b
        .call("decide", &decide("deny", None))
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    assert_eq!(
        app.graft.approvals().await.unwrap()[0].state.as_str(),
        "granted"
    );
    let page = b.get("/approvals").await.text().await.unwrap();
    assert!(
        page.contains(r#"<details class="confirm"><summary>Revoke"#),
        "{page}"
    );
    let r = b.call("decide", &decide("revoke", Some("yes"))).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        app.graft.approvals().await.unwrap()[0].state.as_str(),
        "denied"
    );

    // remove the vendor: the box must be ticked; then the Vendors page says so
    let e: Value = b
        .call("remove_vendor", &[("slug", "petstore")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(field(&e), "confirm", "{e}");
    assert_eq!(app.graft.vendors().await.unwrap().len(), 1);
    let r = b
        .call("remove_vendor", &[("slug", "petstore"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        "/vendors?removed=petstore"
    );
    assert!(app.graft.vendors().await.unwrap().is_empty());
    let page = b
        .get("/vendors?removed=petstore")
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Vendor petstore was removed"), "{page}");
    assert!(
        !page.contains(r#"href="/vendors/petstore" title"#),
        "off the vendor list: {page}"
    );
    let page = b.get("/vendors/petstore").await.text().await.unwrap();
    assert!(page.contains("Removed"), "{page}");
    assert!(!page.contains("Remove the vendor"), "{page}");
    let page = b.get("/tools/petstore/add_pet").await.text().await.unwrap();
    assert!(page.contains("Its vendor was removed"), "{page}");
    let page = b.get("/tools?vendor=petstore").await.text().await.unwrap();
    assert!(page.contains("vendor petstore was removed"), "{page}");

    // a vendor with its slug brings it back, and the page says so rather than "created"
    let r = b
        .call(
            "add_vendor",
            &[
                ("slug", "petstore"),
                ("name", ""),
                ("base_url", "https://pets.example"),
            ],
        )
        .await;
    assert_eq!(r.headers()["location"], "/vendors?back=petstore");
    let page = b.get("/vendors?back=petstore").await.text().await.unwrap();
    assert!(
        page.contains("Vendor petstore was removed before and is back"),
        "{page}"
    );
    // a banner says what is still true, not whatever the address says
    let page = b
        .get("/vendors?removed=petstore")
        .await
        .text()
        .await
        .unwrap();
    assert!(!page.contains("Vendor petstore was removed:"), "{page}");
    let v = app.graft.vendor("petstore").await.unwrap();
    assert!(v.removed_at.is_none());
    assert_ne!(
        v.display_name, "petstore",
        "the old name stays when none is given"
    );
    let long = "n".repeat(101);
    let e: Value = b
        .call(
            "edit_vendor",
            &[
                ("slug", "petstore"),
                ("name", long.as_str()),
                ("base_url", "https://pets.example"),
            ],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(field(&e), "name", "{e}");
    app.stop().await;
}

/// Issue 28.1: a person disables an agent (its token is refused at once, its sessions
/// end, its working set and history stay) and enables it again (the same token works);
/// disabling asks for a second step; only a person may do either.
#[tokio::test]
async fn a_disabled_agent_is_refused_until_a_person_enables_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let doc = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    app.graft
        .import_openapi("petstore", &doc, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    let (id, token) = agent(&app, "retiring").await;
    let (other_id, other) = agent(&app, "staying").await;
    let c = modern_client(&app, &token).await;
    let r = call(
        &c,
        "promote",
        serde_json::json!({"vendor": "petstore", "name": "find_pets_by_status"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    // the second step: without it nothing changes and the token still works
    let form = [("agent", "retiring"), ("disabled", "yes")];
    let e: Value = b
        .call("set_agent_disabled", &form)
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    assert_eq!(raw_initialize(&app, &token).await.status(), 200);
    let page = b.get("/agents/retiring").await.text().await.unwrap();
    assert!(
        page.contains(r#"<details class="confirm"><summary>Disable agent"#),
        "{page}"
    );

    let confirmed = [
        ("agent", "retiring"),
        ("disabled", "yes"),
        ("confirm", "yes"),
    ];
    assert_eq!(b.call("set_agent_disabled", &confirmed).await.status(), 200);
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);
    assert_eq!(
        raw_initialize(&app, &other).await.status(),
        200,
        "other agents are untouched"
    );
    let page = b.get("/agents/retiring").await.text().await.unwrap();
    assert!(page.contains("Enable the agent"), "{page}");
    let list = b.get("/agents").await.text().await.unwrap();
    assert!(list.contains("disabled"), "{list}");
    // kept: the working set and its history
    assert_eq!(app.graft.working_set(id).await.unwrap().len(), 1);
    assert_eq!(app.graft.history(id, 10, 0).await.unwrap().len(), 1);
    assert!(app.graft.working_set(other_id).await.unwrap().is_empty());
    // an agent cannot enable itself (nor anyone)
    let e = app
        .graft
        .set_agent_disabled(&graft::service::Actor::Agent(other_id), "retiring", false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("only a person"), "{e}");

    let enable = [("agent", "retiring"), ("disabled", "no")];
    assert_eq!(b.call("set_agent_disabled", &enable).await.status(), 200);
    assert_eq!(
        raw_initialize(&app, &token).await.status(),
        200,
        "the same token works again"
    );
    let e: Value = b
        .call(
            "set_agent_disabled",
            &[("agent", "retiring"), ("disabled", "maybe")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(e.to_string().contains("yes or no"), "{e}");
    let _ = c.cancel().await;
    app.stop().await;
}

#[tokio::test]
async fn a_removed_agent_keeps_its_history_and_its_name_and_changes_no_more() {
    use graft::domain::Cause;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_in(dir.path()).await;
    let doc = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    app.graft
        .import_openapi("petstore", &doc, Some("http://127.0.0.1:9"), &mut |_, _| {})
        .await
        .unwrap();
    let (id, token) = agent(&app, "retired").await;
    let (other_id, other) = agent(&app, "staying").await;
    let (c, events) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for name in ["find_pets_by_status", "get_pet_by_id"] {
        let r = call(
            &c,
            "promote",
            serde_json::json!({"vendor": "petstore", "name": name}),
        )
        .await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    events.wait_for(2).await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(&app);
    b.sign_in("ops", PASSWORD).await;

    // the second step: without it nothing changes
    let e: Value = b
        .call("remove_agent", &[("agent", "retired")])
        .await
        .json()
        .await
        .unwrap();
    assert!(unconfirmed(&e), "{e}");
    assert_eq!(raw_initialize(&app, &token).await.status(), 200);
    let page = b.get("/agents/retired").await.text().await.unwrap();
    assert!(
        page.contains(r#"<details class="confirm"><summary>Remove agent"#),
        "{page}"
    );
    // only people remove agents
    let e = app
        .graft
        .remove_agent(&graft::service::Actor::Agent(other_id), "retired")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("only a person"), "{e}");

    let r = b
        .call("remove_agent", &[("agent", "retired"), ("confirm", "yes")])
        .await;
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    // its token is refused; its open session hears one list_changed, then ends
    assert_eq!(raw_initialize(&app, &token).await.status(), 401);
    assert_eq!(raw_initialize(&app, &other).await.status(), 200);
    assert!(app.graft.working_set(id).await.unwrap().is_empty());
    let history = app.graft.history(id, 10, 0).await.unwrap();
    assert_eq!(history.len(), 4, "two promotions, two demotions");
    assert!(history[..2]
        .iter()
        .all(|h| h.cause == Cause::AgentRemoved && h.actor == "person:ops"));
    // the row stays with its name and history; the name is not given to a new agent, so
    // a form or link left open for it can never act on another agent
    let removed = app.graft.agent(id).await.unwrap();
    assert_eq!(removed.name, "retired");
    assert!(removed.removed_at.is_some());
    let page = b.get("/agents/retired").await.text().await.unwrap();
    assert!(page.contains("the agent was removed"), "History says why");
    assert!(page.contains("Removed "), "{page}");
    let list = b.get("/agents").await.text().await.unwrap();
    assert!(list.contains("removed"), "{list}");
    let e = app
        .graft
        .add_agent("retired", None, None, None)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("removed agent keeps its name"),
        "{e}"
    );
    let stale = [
        ("agent", "retired"),
        ("tool", "petstore__add_pet"),
        ("decision", "grant"),
    ];
    let e: Value = b.call("decide", &stale).await.json().await.unwrap();
    assert!(e.to_string().contains("was removed"), "{e}");

    // nothing about the removed agent changes again: no enable, rotation, rename or promote
    let name = "retired".to_string();
    for e in [
        app.graft
            .set_agent_disabled(&graft::service::Actor::Person("ops".into()), &name, false)
            .await
            .unwrap_err(),
        app.graft.rotate_token(id).await.unwrap_err(),
        app.graft
            .set_agent(&name, Some("back"), None, None)
            .await
            .unwrap_err(),
        app.graft
            .promote_tool(
                &graft::service::Actor::Person("ops".into()),
                id,
                "petstore",
                "get_pet_by_id",
            )
            .await
            .unwrap_err(),
        app.graft
            .remove_agent(&graft::service::Actor::Person("ops".into()), &name)
            .await
            .unwrap_err(),
    ] {
        assert!(e.to_string().contains("was removed"), "{e}");
    }
    assert!(app.graft.working_set(id).await.unwrap().is_empty());
    let _ = c.cancel().await;
    app.stop().await;
}

#[tokio::test]
async fn promotions_racing_a_removal_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_with_petstore(dir.path()).await;
    let (id, _) = agent(&app, "racing").await;
    let tools = [
        "get_pet_by_id",
        "find_pets_by_status",
        "find_pets_by_tags",
        "get_inventory",
    ];
    let mut tasks = Vec::new();
    for t in tools {
        let g = app.graft.clone();
        tasks.push(tokio::spawn(async move {
            // promote and demote until the agent is gone
            for _ in 0..200 {
                let a = graft::service::Actor::Agent(id);
                if g.promote_tool(&a, id, "petstore", t).await.is_err() {
                    break;
                }
                let _ = g.demote_tool(&a, id, "petstore", t).await;
                let _ = g.promote_tool(&a, id, "petstore", t).await;
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    app.graft
        .remove_agent(&graft::service::Actor::Person("ops".into()), "racing")
        .await
        .unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    assert!(
        app.graft.working_set(id).await.unwrap().is_empty(),
        "no promotion outlives the removal"
    );
    let history = app.graft.history(id, 10_000, 0).await.unwrap();
    let last_per_tool: std::collections::HashMap<String, String> = history
        .iter()
        .rev()
        .map(|h| (h.name.clone(), h.action.as_str().to_string()))
        .collect();
    assert!(
        last_per_tool.values().all(|a| a == "demote"),
        "{last_per_tool:?}"
    );
    app.stop().await;
}

/// Whether a server function's error says it did nothing for want of its second step.
fn unconfirmed(v: &Value) -> bool {
    v["Refused"]
        .as_str()
        .is_some_and(|m| m.starts_with("Nothing was done") && m.contains("second step"))
}
