//! Graft as its own OAuth authorization server (issue 26, SPEC §10.1) over real HTTP:
//! the metadata documents, the 401 challenge, dynamic registration with the real
//! clients' redirect URIs, a person's consent on the console, the code exchange with
//! PKCE, an rmcp client acting as the chosen agent with the access token, refresh with
//! rotation, revocation, expiry, audience, client ID metadata documents, and agent
//! tokens that keep working.

use crate::console::{Browser, PASSWORD};
use crate::helpers::*;
use graft::domain::oauth::s256_challenge;
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};
use std::sync::Arc;

const VERIFIER: &str = "a-code-verifier-of-forty-three-characters-or-more_0123456789";
const CALLBACK: &str = "http://127.0.0.1:53682/callback";

fn base(app: &TestApp) -> String {
    format!("http://{}", app.addr)
}

async fn get_json(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// Registers a public client with `redirect_uris`; the answer's status and body.
async fn register(app: &TestApp, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/register", base(app)))
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn client_id(app: &TestApp, name: &str) -> String {
    let (status, body) = register(
        app,
        json!({"client_name": name, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["client_id"].as_str().unwrap().to_string()
}

/// The authorization request's path and query, for `client` with the test verifier.
fn authorize_path(app: &TestApp, client: &str, state: &str) -> String {
    let q = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", client),
            ("redirect_uri", CALLBACK),
            ("code_challenge", &s256_challenge(VERIFIER)),
            ("code_challenge_method", "S256"),
            ("state", state),
            ("resource", &app.graft.mcp_resource()),
        ])
        .finish();
    format!("/oauth/authorize?{q}")
}

/// The consent form's fields (hidden inputs and the nonce) from its page.
fn form_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|s| {
            let name = s.split("name=\"").nth(1)?.split('"').next()?;
            let value = s.split("value=\"").nth(1)?.split('"').next()?;
            Some((
                name.to_string(),
                value.replace("&amp;", "&").replace("&quot;", "\""),
            ))
        })
        .collect()
}

/// A signed-in person approves `client`'s request as `agent` (`new` makes it); the
/// redirect back to the client.
pub(crate) async fn consent(
    b: &mut Browser,
    path: &str,
    agent: (&str, &str),
    decision: &str,
) -> reqwest::Response {
    let page = b.get(path).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let mut fields = form_fields(&html);
    fields.push(("agent_kind".into(), agent.0.into()));
    if agent.0 == "new" {
        fields.push(("new_name".into(), agent.1.into()));
    } else {
        fields.push(("agent".into(), agent.1.into()));
    }
    fields.push(("decision".into(), decision.into()));
    let mut r = b
        .http
        .post(format!("{}/oauth/authorize", b.base))
        .header("accept", "text/html")
        .form(&fields);
    if let Some(c) = &b.cookie {
        r = r.header("cookie", c);
    }
    r.send().await.unwrap()
}

fn query_of(location: &str) -> std::collections::HashMap<String, String> {
    let u = url::Url::parse(location).unwrap();
    u.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

async fn token(app: &TestApp, form: &[(&str, &str)]) -> (u16, Value, Option<String>) {
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/token", base(app)))
        .form(form)
        .send()
        .await
        .unwrap();
    let cache = r
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_string());
    (r.status().as_u16(), r.json().await.unwrap(), cache)
}

async fn exchange(app: &TestApp, client: &str, code: &str) -> (u16, Value) {
    let resource = app.graft.mcp_resource();
    let (s, v, _) = token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client),
            ("redirect_uri", CALLBACK),
            ("code_verifier", VERIFIER),
            ("resource", &resource),
        ],
    )
    .await;
    (s, v)
}

async fn refresh(app: &TestApp, client: &str, refresh_token: &str) -> (u16, Value) {
    let (s, v, _) = token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client),
        ],
    )
    .await;
    (s, v)
}

/// The status of a `tools/list` on `/mcp` with `token` (a 2025 initialize then a list).
async fn mcp_status(app: &TestApp, token: &str) -> u16 {
    raw_initialize(app, token).await.status().as_u16()
}

/// An app with petstore and a console user `ops`, signed in in the returned browser.
async fn signed_in(app: &TestApp) -> Browser {
    import_petstore(&app.graft, "http://127.0.0.1:9/anything").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut b = Browser::new(app);
    b.sign_in("ops", PASSWORD).await;
    b
}

/// Consent and exchange: the token answer for a new client acting as `agent`.
async fn connect(app: &TestApp, b: &mut Browser, client: &str, agent: (&str, &str)) -> Value {
    let r = consent(b, &authorize_path(app, client, "st-1"), agent, "approve").await;
    assert_eq!(r.status(), 303);
    let back = query_of(r.headers()["location"].to_str().unwrap());
    let (status, tokens) = exchange(app, client, &back["code"]).await;
    assert_eq!(status, 200, "{tokens}");
    tokens
}

#[tokio::test]
async fn metadata_names_the_public_mcp_url_exactly_and_mcp_challenges_with_it() {
    for slash in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let app = spawn_app_public(
            dir.path(),
            slash,
            Arc::new(graft::service::SystemClock),
            |_| {},
        )
        .await;
        let origin = base(&app);
        let resource = format!("{origin}/mcp");
        for path in [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ] {
            let (status, prm) = get_json(&format!("{origin}{path}")).await;
            assert_eq!(status, 200);
            assert_eq!(
                prm["resource"], resource,
                "GRAFT_PUBLIC_URL with a slash: {slash}"
            );
            assert_eq!(prm["authorization_servers"], json!([origin]));
        }
        let (status, asm) =
            get_json(&format!("{origin}/.well-known/oauth-authorization-server")).await;
        assert_eq!(status, 200);
        assert_eq!(asm["issuer"], origin);
        assert_eq!(
            asm["authorization_endpoint"],
            format!("{origin}/oauth/authorize")
        );
        assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(asm["client_id_metadata_document_supported"], true);
        assert!(asm["token_endpoint_auth_methods_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("none")));
        assert_eq!(asm["authorization_response_iss_parameter_supported"], true);

        // no token, in both eras: 401 naming the resource metadata
        let challenge =
            format!(r#"resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#);
        let http = reqwest::Client::new();
        for (version, body) in [
            (
                "2025-11-25",
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
            ),
            (
                "2026-07-28",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
            ),
        ] {
            let r = http
                .post(app.mcp_url())
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", version)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401, "{version}");
            let h = r.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .to_string();
            assert!(h.starts_with("Bearer "), "{h}");
            assert!(h.contains(&challenge), "{version}: {h}");
            assert!(!h.contains("invalid_token"), "{h}");
        }
        // a wrong token: the same, with invalid_token
        let r = http
            .post(app.mcp_url())
            .bearer_auth("graft_oat_0000")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        let h = r.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            h.contains(&challenge) && h.contains(r#"error="invalid_token""#),
            "{h}"
        );
        app.stop().await;
    }
}

#[tokio::test]
async fn registration_takes_the_real_clients_redirect_uris_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    for (client, uris) in [
        (
            "claude.ai",
            vec![
                "https://claude.ai/api/mcp/auth_callback",
                "https://claude.com/api/mcp/auth_callback",
            ],
        ),
        (
            "ChatGPT",
            vec![
                "https://chatgpt.com/connector/oauth/abc123",
                "https://chatgpt.com/connector_platform_oauth_redirect",
            ],
        ),
        (
            "Visual Studio Code",
            vec!["http://127.0.0.1:33418", "https://vscode.dev/redirect"],
        ),
        ("Claude Code", vec!["http://localhost:8976/callback"]),
        (
            "Cursor",
            vec!["cursor://anysphere.cursor-mcp/oauth/callback"],
        ),
    ] {
        let (status, body) =
            register(&app, json!({"client_name": client, "redirect_uris": uris})).await;
        assert_eq!(status, 201, "{client}: {body}");
        assert_eq!(body["redirect_uris"], json!(uris));
        assert_eq!(body["token_endpoint_auth_method"], "none");
        assert!(body["client_id"].as_str().is_some_and(|c| c.len() >= 32));
    }
    for (uris, why) in [
        (json!(["myapp://callback"]), "invalid_redirect_uri"),
        (json!(["http://evil.example/cb"]), "invalid_redirect_uri"),
        (json!([]), "invalid_redirect_uri"),
    ] {
        let (status, body) =
            register(&app, json!({"client_name": "x", "redirect_uris": uris})).await;
        assert_eq!((status, body["error"].as_str()), (400, Some(why)), "{body}");
    }
    // claude.ai's and Claude Desktop's registration asks for client_secret_post: it is
    // registered as a public client and told so
    let (status, body) = register(
        &app,
        json!({"client_name": "Claude", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
               "token_endpoint_auth_method": "client_secret_post",
               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert!(body.get("client_secret").is_none());
    let (status, body) = register(
        &app,
        json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_client_metadata"))
    );
    // only JSON: a page elsewhere cannot post it without a preflight
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/register", base(&app)))
        .header("content-type", "text/plain")
        .body(r#"{"redirect_uris": ["https://a.example/cb"]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    app.stop().await;

    // an operator may allow another scheme
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |s| {
            s.oauth.allowed_schemes = vec!["myapp".into()];
        },
    )
    .await;
    let (status, _) = register(&app, json!({"redirect_uris": ["myapp://callback"]})).await;
    assert_eq!(status, 201);
    app.stop().await;
}

#[tokio::test]
async fn an_oauth_client_signs_in_through_the_consent_page_and_acts_as_the_chosen_agent() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    import_petstore(&app.graft, "http://127.0.0.1:9/anything").await;
    app.graft.add_user("ops", PASSWORD).await.unwrap();
    let client = client_id(&app, "Claude Code").await;
    let path = authorize_path(&app, &client, "state-7q");

    // signed out: to the sign-in page, and back to the consent after it
    let mut b = Browser::new(&app);
    let r = b.get(&path).await;
    assert_eq!(r.status(), 303);
    let login = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        login.starts_with("/login?next=%2Foauth%2Fauthorize%3F"),
        "{login}"
    );
    b.sign_in("ops", PASSWORD).await;
    let page = b.get(&path).await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.unwrap();
    assert!(html.contains("Connect Claude Code to Graft?"), "{html}");
    assert!(
        html.contains("<strong>127.0.0.1</strong>"),
        "the redirect host is shown"
    );
    assert!(
        html.contains("It registered itself"),
        "a registered client is flagged"
    );

    // approve as a new agent: back to the client with code, state and iss
    let r = consent(&mut b, &path, ("new", "claude-code-oauth"), "approve").await;
    assert_eq!(r.status(), 303);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with(&format!("{CALLBACK}?")), "{location}");
    let back = query_of(&location);
    assert_eq!(back["state"], "state-7q");
    assert_eq!(back["iss"], base(&app));
    let code = back["code"].clone();

    // PKCE: another verifier is refused, and the code is used up by that attempt
    let resource = app.graft.mcp_resource();
    let (status, body, _) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("redirect_uri", CALLBACK),
            (
                "code_verifier",
                "another-verifier-of-forty-three-characters-and-more",
            ),
            ("resource", &resource),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    let (status, body) = exchange(&app, &client, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );

    // a new consent, the right verifier: tokens, never cached
    let r = consent(&mut b, &path, ("existing", "claude-code-oauth"), "approve").await;
    let code = query_of(r.headers()["location"].to_str().unwrap())["code"].clone();
    let (status, tokens, cache) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("redirect_uri", CALLBACK),
            ("code_verifier", VERIFIER),
            ("resource", &resource),
        ],
    )
    .await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(cache.as_deref(), Some("no-store"));
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_string();
    assert!(access.starts_with("graft_oat_"));

    // the client acts as the agent: its promote shows in that agent's working set
    let agent = app.graft.agent_by_name("claude-code-oauth").await.unwrap();
    let (mcp, _) = legacy_client_at(&app.mcp_url(), &access, ProtocolVersion::V_2025_11_25).await;
    let r = call(
        &mcp,
        "promote",
        json!({"vendor": "petstore", "name": "get_pet_by_id"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(tool_names(&mcp)
        .await
        .contains(&"petstore__get_pet_by_id".to_string()));
    let set = app.graft.working_set(agent.id).await.unwrap();
    assert_eq!(set.len(), 1);
    mcp.cancel().await.unwrap();
    let modern = modern_client_at(&app.mcp_url(), &access).await;
    assert!(tool_names(&modern)
        .await
        .contains(&"petstore__get_pet_by_id".to_string()));
    modern.cancel().await.unwrap();
    let grants = app.graft.oauth_grants(agent.id).await.unwrap();
    // the first consent's code was burned, then replayed: that grant ended
    assert_eq!(grants.len(), 1, "the consent that holds tokens: {grants:?}");
    assert_eq!(grants[0].client, "Claude Code");
    assert_eq!(grants[0].granted_by, "person:ops");

    // refresh rotates: new tokens; the old refresh token once more revokes the grant
    let (status, fresh) = refresh(&app, &client, &refresh_token).await;
    assert_eq!(status, 200, "{fresh}");
    let access2 = fresh["access_token"].as_str().unwrap().to_string();
    assert_ne!(access2, access);
    assert_eq!(mcp_status(&app, &access2).await, 200);
    let (status, body) = refresh(&app, &client, &refresh_token).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert_eq!(
        mcp_status(&app, &access2).await,
        401,
        "reuse revoked the grant"
    );
    let (status, _) = refresh(&app, &client, fresh["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 400);

    // denial: back to the client with access_denied; nothing granted
    let r = consent(&mut b, &path, ("existing", "claude-code-oauth"), "deny").await;
    let back = query_of(r.headers()["location"].to_str().unwrap());
    assert_eq!(back["error"], "access_denied");
    assert_eq!(back["state"], "state-7q");
    assert!(
        app.graft.oauth_grants(agent.id).await.unwrap().is_empty(),
        "the reused refresh token ended the last grant; a denial adds none"
    );

    // the agent's own bearer token still works
    let (_, own) = agent_token(&app, "plain-bot").await;
    assert_eq!(mcp_status(&app, &own).await, 200);
    app.stop().await;
}

async fn agent_token(app: &TestApp, name: &str) -> (i64, String) {
    agent(app, name).await
}

#[tokio::test]
async fn refused_requests_say_why_where_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FakeClock::default());
    clock.set(1_800_000_000_000);
    let app = spawn_app_public(dir.path(), false, clock.clone(), |_| {}).await;
    let mut b = signed_in(&app).await;
    let client = client_id(&app, "Cursor").await;

    // a redirect URI the client did not register: shown, never redirected
    let path = authorize_path(&app, &client, "s")
        .replace("53682", "53683")
        .replace("callback", "other");
    let r = b.get(&path).await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("is not one the client"));
    // an unknown client: shown
    let r = b.get(&authorize_path(&app, "no-such-client", "s")).await;
    assert_eq!(r.status(), 400);
    // another resource: shown while no person approved the client (anyone can register
    // any redirect URI), told at the redirect URI once one did (below)
    let other = authorize_path(&app, &client, "s1").replace("%2Fmcp", "%2Fother");
    let r = b.get(&other).await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("invalid_target"));

    // a code lives 60 seconds
    let r = consent(
        &mut b,
        &authorize_path(&app, &client, "s3"),
        ("new", "cursor-bot"),
        "approve",
    )
    .await;
    let code = query_of(r.headers()["location"].to_str().unwrap())["code"].clone();
    clock.set(1_800_000_061_000);
    let (status, body) = exchange(&app, &client, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{body}"
    );
    // approved once, the client hears its errors at its redirect URI
    let r = b.get(&other).await;
    assert_eq!(r.status(), 303);
    let back = query_of(r.headers()["location"].to_str().unwrap());
    assert_eq!(
        (back["error"].as_str(), back["state"].as_str()),
        ("invalid_target", "s1")
    );
    let plain = authorize_path(&app, &client, "s2").replace("S256", "plain");
    let back = query_of(b.get(&plain).await.headers()["location"].to_str().unwrap());
    assert_eq!(back["error"], "invalid_request");
    // another client's code, an unknown grant type, a missing verifier
    let r = consent(
        &mut b,
        &authorize_path(&app, &client, "s4"),
        ("existing", "cursor-bot"),
        "approve",
    )
    .await;
    let code = query_of(r.headers()["location"].to_str().unwrap())["code"].clone();
    let other_client = client_id(&app, "Other").await;
    let (status, body) = exchange(&app, &other_client, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, body, _) =
        token(&app, &[("grant_type", "password"), ("client_id", &client)]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (status, body, _) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &client),
            ("code", "x"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );

    // two consent pages open at once in one session (two clients signing in): both
    // work; a page's nonce does not approve another request; a nonce is used once
    let first = b
        .get(&authorize_path(&app, &client, "tab-1"))
        .await
        .text()
        .await
        .unwrap();
    let second = b
        .get(&authorize_path(&app, &client, "tab-2"))
        .await
        .text()
        .await
        .unwrap();
    let decide = |fields: Vec<(String, String)>| {
        let mut f = fields;
        f.extend([
            ("agent_kind".to_string(), "existing".to_string()),
            ("agent".into(), "cursor-bot".into()),
            ("decision".into(), "approve".into()),
        ]);
        b.http
            .post(format!("{}/oauth/authorize", b.base))
            .header("cookie", b.cookie.clone().unwrap())
            .form(&f)
            .send()
    };
    let mut swapped = form_fields(&first);
    for (k, v) in swapped.iter_mut() {
        if k == "state" {
            *v = "tab-2".into();
        }
    }
    assert_eq!(
        decide(swapped).await.unwrap().status(),
        400,
        "another request's nonce"
    );
    assert_eq!(decide(form_fields(&second)).await.unwrap().status(), 303);
    assert_eq!(decide(form_fields(&first)).await.unwrap().status(), 303);
    assert_eq!(
        decide(form_fields(&first)).await.unwrap().status(),
        400,
        "used up"
    );

    // a consent form replayed, or from another session, is refused
    let page = b
        .get(&authorize_path(&app, &client, "s5"))
        .await
        .text()
        .await
        .unwrap();
    let mut fields = form_fields(&page);
    fields.extend([
        ("agent_kind".to_string(), "existing".to_string()),
        ("agent".into(), "cursor-bot".into()),
        ("decision".into(), "approve".into()),
    ]);
    let mut stranger = Browser::new(&app);
    stranger.sign_in("ops", PASSWORD).await;
    let r = stranger
        .http
        .post(format!("{}/oauth/authorize", stranger.base))
        .header("cookie", stranger.cookie.clone().unwrap())
        .form(&fields)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "another session's nonce");
    app.stop().await;
}

#[tokio::test]
async fn tokens_expire_refresh_revoke_and_end_with_the_agents_token() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FakeClock::default());
    clock.set(1_800_000_000_000);
    let app = spawn_app_public(dir.path(), false, clock.clone(), |s| {
        s.oauth.access_ttl = std::time::Duration::from_secs(5);
    })
    .await;
    let mut b = signed_in(&app).await;
    let client = client_id(&app, "VS Code").await;
    let tokens = connect(&app, &mut b, &client, ("new", "vscode-bot")).await;
    assert_eq!(tokens["expires_in"], 5);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp_status(&app, access).await, 200);
    clock.set(1_800_000_006_000);
    assert_eq!(mcp_status(&app, access).await, 401, "expired");
    let (status, fresh) = refresh(&app, &client, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let access = fresh["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp_status(&app, &access).await, 200);

    // a code used twice revokes the tokens its first use gave (RFC 6749 §4.1.2)
    let r = consent(
        &mut b,
        &authorize_path(&app, &client, "replay"),
        ("existing", "vscode-bot"),
        "approve",
    )
    .await;
    let code = query_of(r.headers()["location"].to_str().unwrap())["code"].clone();
    let (status, first) = exchange(&app, &client, &code).await;
    assert_eq!(status, 200);
    let replayed = first["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp_status(&app, &replayed).await, 200);
    let (status, body) = exchange(&app, &client, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(mcp_status(&app, &replayed).await, 401);

    // RFC 7009: revoking the refresh token ends the grant's access tokens too
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/revoke", base(&app)))
        .form(&[
            ("token", fresh["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(mcp_status(&app, &access).await, 401);
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/revoke", base(&app)))
        .form(&[("token", "unknown")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "an unknown token is no error");

    // a person revokes a grant on the agent's page; rotating the agent's token ends the rest
    let agent = app.graft.agent_by_name("vscode-bot").await.unwrap();
    let one = connect(&app, &mut b, &client, ("existing", "vscode-bot")).await;
    let two = connect(&app, &mut b, &client, ("existing", "vscode-bot")).await;
    let grants = app.graft.oauth_grants(agent.id).await.unwrap();
    assert_eq!(grants.len(), 2);
    app.graft
        .revoke_oauth_grant(
            &graft::service::Actor::Person("ops".into()),
            "vscode-bot",
            grants[0].id,
        )
        .await
        .unwrap();
    assert_eq!(
        mcp_status(&app, two["access_token"].as_str().unwrap()).await,
        401,
        "the newest grant was revoked"
    );
    assert_eq!(
        mcp_status(&app, one["access_token"].as_str().unwrap()).await,
        200
    );
    app.graft.rotate_token(agent.id).await.unwrap();
    assert_eq!(
        mcp_status(&app, one["access_token"].as_str().unwrap()).await,
        401,
        "rotation ends OAuth tokens"
    );
    assert!(app.graft.oauth_grants(agent.id).await.unwrap().is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_token_for_another_resource_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    let mut b = signed_in(&app).await;
    let client = client_id(&app, "ChatGPT").await;
    let tokens = connect(&app, &mut b, &client, ("new", "gpt-bot")).await;
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp_status(&app, &access).await, 200);
    app.stop().await;
    // the same database served under another public URL: the token's audience differs
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    assert_eq!(mcp_status(&app, &access).await, 401);
    let (status, body) = refresh(&app, &client, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "refresh works: {body}");
    // a refresh names the grant's resource; asking for another is invalid_target
    let (status, body, _) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", body["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
            ("resource", &app.graft.mcp_resource()),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_target"))
    );
    app.stop().await;
}

#[tokio::test]
async fn a_client_id_metadata_document_names_the_client() {
    // the client's document, served by a local HTTP server
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let doc_url = format!(
        "http://{}/oauth/client.json",
        listener.local_addr().unwrap()
    );
    let doc = json!({"client_id": doc_url, "client_name": "Metadata Client", "redirect_uris": [CALLBACK],
                     "token_endpoint_auth_method": "none"});
    let served = doc.clone();
    let router = axum::Router::new().route(
        "/oauth/client.json",
        axum::routing::get(move || {
            let d = served.clone();
            async move { axum::Json(d) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    let mut b = signed_in(&app).await;
    let path = authorize_path(&app, &doc_url, "m1");
    let html = b.get(&path).await.text().await.unwrap();
    assert!(html.contains("Connect Metadata Client to Graft?"), "{html}");
    assert!(html.contains("known by its metadata document"), "{html}");
    // anyone can host a document naming any redirect URI: until a person approves it,
    // its errors are shown here, not sent there
    let wrong = authorize_path(&app, &doc_url, "m0").replace("%2Fmcp", "%2Fother");
    let r = b.get(&wrong).await;
    assert_eq!(r.status(), 400);
    let tokens = connect(&app, &mut b, &doc_url, ("new", "meta-bot")).await;
    assert_eq!(
        mcp_status(&app, tokens["access_token"].as_str().unwrap()).await,
        200
    );
    // a document that names another client_id is refused
    let liar = format!(
        "{}/liar.json",
        doc_url.trim_end_matches("/oauth/client.json")
    );
    let r = b.get(&authorize_path(&app, &liar, "m2")).await;
    assert_eq!(r.status(), 400);
    app.stop().await;
}

#[tokio::test]
async fn the_agent_page_lists_its_oauth_clients_and_a_person_revokes_one() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_app_public(
        dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    let mut b = signed_in(&app).await;
    let client = client_id(&app, "claude.ai").await;
    let tokens = connect(&app, &mut b, &client, ("new", "web-bot")).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp_status(&app, access).await, 200);

    let r = b.call("agent", &[("name", "web-bot"), ("page", "1")]).await;
    assert_eq!(r.status(), 200);
    let data: Value = r.json().await.unwrap();
    let clients = data["oauth_clients"].as_array().unwrap();
    assert_eq!(clients.len(), 1, "{data}");
    assert_eq!(clients[0]["client"], "claude.ai");
    assert_eq!(clients[0]["redirect_host"], "127.0.0.1");
    assert_eq!(clients[0]["granted_by"], "ops");
    assert!(
        clients[0]["last_used_at"].is_i64(),
        "the token's use is noted"
    );
    assert_eq!(data["mcp_url"], app.graft.mcp_resource());
    let grant = clients[0]["id"].as_i64().unwrap().to_string();

    // the page renders the card (server side, as a browser without JavaScript sees it)
    let html = b.get("/agents/web-bot").await.text().await.unwrap();
    assert!(
        html.contains("OAuth clients") && html.contains(r#"data-oauth-client="claude.ai""#),
        "{html}"
    );

    // revoking needs its second step, then ends the client's access at once
    let r = b
        .call(
            "revoke_oauth_client",
            &[("agent", "web-bot"), ("grant", &grant)],
        )
        .await;
    assert_ne!(r.status(), 200);
    assert_eq!(mcp_status(&app, access).await, 200);
    let r = b
        .post_form(
            "revoke_oauth_client",
            "/agents/web-bot",
            &[("agent", "web-bot"), ("grant", &grant), ("confirm", "yes")],
        )
        .await;
    assert_eq!(r.status(), 302, "a plain form goes back to its page");
    assert_eq!(mcp_status(&app, access).await, 401);
    let data: Value = b
        .call("agent", &[("name", "web-bot"), ("page", "1")])
        .await
        .json()
        .await
        .unwrap();
    assert!(data["oauth_clients"].as_array().unwrap().is_empty());
    // another agent's grant id is refused
    let (_, _) = agent(&app, "other").await;
    let r = b
        .call(
            "revoke_oauth_client",
            &[("agent", "other"), ("grant", &grant), ("confirm", "yes")],
        )
        .await;
    assert_ne!(r.status(), 200);
    app.stop().await;
}
