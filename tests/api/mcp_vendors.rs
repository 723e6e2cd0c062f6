//! MCP servers as vendors (issue 27, SPEC §10.2), against a real rmcp server over
//! Streamable HTTP (`upstream.rs`) in both protocol eras, through Graft's MCP endpoint
//! with rmcp's client as the agent.

use crate::helpers::*;
use crate::upstream::{first_tools, serve_upstream, Upstream};
use graft::domain::mcp_vendor::Server;
use graft::service::Actor;
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn person() -> Actor {
    Actor::Person("ops".into())
}

/// Graft with MCP vendor `notes` on a fresh upstream; an agent with its token.
async fn setup(
    dir: &std::path::Path,
    modern: bool,
    tweak: impl FnOnce(&mut graft::config::Settings),
) -> (TestApp, Upstream, String) {
    let (url, upstream) = serve_upstream(modern).await;
    let mut s = settings(dir);
    tweak(&mut s);
    let app = spawn_app_with(s).await;
    let (_, report) = app
        .graft
        .add_mcp_vendor(&person(), "notes", Some("Notes"), &Server::Url(url))
        .await
        .unwrap();
    let report = report.expect("the server's tools were read");
    // the server's background task may have read the new vendor first
    assert_eq!(
        report.imported + report.unchanged,
        first_tools().len(),
        "{report:?}"
    );
    let (_, token) = agent(&app, "bot").await;
    (app, upstream, token)
}

fn structured(r: &rmcp::model::CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

#[tokio::test]
async fn an_mcp_servers_tools_run_through_graft_with_approvals_and_dry_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), false, |_| {}).await;
    let (client, handler) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;

    // found by find_tool like any tool, promoted, served with what the server said
    let found = call(&client, "find_tool", json!({"query": "write a note"})).await;
    let hits = structured(&found)["hits"].clone();
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .take(3)
            .any(|h| h["name"] == "write_note"),
        "{hits}"
    );
    for name in ["read_note", "write_note", "picture", "fail", "bad_output"] {
        let r = call(&client, "promote", json!({"vendor": "notes", "name": name})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    handler.wait_for(5).await;
    let listed = client.list_tools(None).await.unwrap().tools;
    let read = listed
        .iter()
        .find(|t| t.name == "notes__read_note")
        .unwrap();
    let read = serde_json::to_value(read).unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true, "{read}");
    assert_eq!(read["annotations"]["openWorldHint"], false);
    assert_eq!(read["title"], "Read a note");
    assert_eq!(read["_meta"]["example.com/ui"]["card"], true);
    assert_eq!(read["outputSchema"]["required"], json!(["id", "text"]));
    // $refs inlined for clients that refuse them
    assert_eq!(read["inputSchema"]["properties"]["id"]["type"], "string");
    assert!(!read.to_string().contains("$ref"), "{read}");
    let write = listed
        .iter()
        .find(|t| t.name == "notes__write_note")
        .unwrap();
    let write = serde_json::to_value(write).unwrap();
    // no annotations from the server: MCP's defaults, a destructive write
    assert_eq!(write["annotations"]["readOnlyHint"], false, "{write}");
    assert_eq!(write["annotations"]["destructiveHint"], true);

    // a read runs; the arguments reach the server unchanged
    let r = call(&client, "notes__read_note", json!({"id": "n-1"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(structured(&r), json!({"id": "n-1", "text": "hello"}));
    assert_eq!(text(&r), "the note says hello");
    assert_eq!(upstream.calls_of("read_note")[0].0, json!({"id": "n-1"}));

    // input is checked against the schema before anything is sent
    let r = call(&client, "notes__read_note", json!({"id": 7})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).starts_with("invalid_input"), "{}", text(&r));
    assert_eq!(upstream.calls_of("read_note").len(), 1);

    // a write asks a person first; a dry run previews it and sends nothing
    let dry = call(
        &client,
        "run_tool",
        json!({"vendor": "notes", "name": "write_note", "input": {"text": "hi"}, "dryRun": true}),
    )
    .await;
    assert_eq!(structured(&dry)["dryRun"], true, "{}", text(&dry));
    assert_eq!(structured(&dry)["request"]["tool"], "write-note");
    assert_eq!(
        structured(&dry)["request"]["arguments"],
        json!({"text": "hi"})
    );
    let r = call(&client, "notes__write_note", json!({"text": "hi"})).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    assert!(upstream.calls_of("write-note").is_empty());
    app.graft
        .decide_approval(&person(), "bot", "notes", "write_note", true)
        .await
        .unwrap();
    let r = call(&client, "notes__write_note", json!({"text": "hi"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(text(&r), "wrote \"hi\"");
    assert_eq!(upstream.calls_of("write-note")[0].0, json!({"text": "hi"}));

    // every kind of content passes through whole
    let r = call(&client, "notes__picture", json!({})).await;
    let kinds: Vec<String> = serde_json::to_value(&r.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        ["text", "image", "audio", "resource_link", "resource"],
        "{r:?}"
    );

    // the server's own error result passes as one; the calls log says so
    let r = call(&client, "notes__fail", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "the note store is read-only today");
    // a result its output schema does not allow is not given to the agent as a success
    let r = call(&client, "notes__bad_output", json!({})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("output schema"), "{}", text(&r));
    // Graft's own error of a tool with an output schema carries no structuredContent
    // (SDK clients check it against the schema)
    let r = call(&client, "notes__read_note", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(r.structured_content.is_none(), "{r:?}");
    let calls = app.graft.calls(&Default::default(), 50).await.unwrap();
    let codes: Vec<Option<String>> = calls.iter().map(|c| c.error_code.clone()).collect();
    assert!(codes.contains(&Some("tool_error".into())), "{codes:?}");
    assert!(
        codes.contains(&Some("approval_required".into())),
        "{codes:?}"
    );
    // the calls log keeps the exchange with the server (issue 28.9): the tools/call as
    // sent and the server's result
    let read = calls
        .iter()
        .rfind(|c| c.name == "read_note" && c.error_code.is_none())
        .unwrap();
    let (_, detail) = app.graft.call(read.id).await.unwrap().unwrap();
    let detail = detail.expect("an MCP tool's exchange is kept");
    let sent: Value = serde_json::from_str(detail.request.as_deref().unwrap()).unwrap();
    assert_eq!(sent["method"], "tools/call");
    assert_eq!(sent["tool"], "read_note");
    assert_eq!(sent["arguments"], json!({"id": "n-1"}));
    let answered: Value = serde_json::from_str(detail.response.as_deref().unwrap()).unwrap();
    assert_eq!(answered["structuredContent"]["text"], "hello", "{answered}");
    app.stop().await;
}

#[tokio::test]
async fn a_remote_servers_credential_goes_as_its_header_and_never_reaches_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), true, |_| {}).await;
    // a local server's kind of credential is refused for a remote one
    let e = app
        .graft
        .add_connection("notes", "env", "env", Some("TOKEN"), Some("s3cret-value-1"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("remote MCP server"), "{e}");
    app.graft
        .add_connection("notes", "key", "bearer", None, Some("s3cret-value-1"))
        .await
        .unwrap();
    let client = modern_client(&app, &token).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "notes", "name": "whoami", "input": {}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(
        upstream.calls_of("whoami")[0].1.as_deref(),
        Some("Bearer s3cret-value-1")
    );
    assert!(!text(&r).contains("s3cret-value-1"), "{}", text(&r));
    assert!(text(&r).contains("<redacted>"), "{}", text(&r));
    // nor does the calls log's detail keep it
    let last = app.graft.calls(&Default::default(), 1).await.unwrap();
    let (_, detail) = app.graft.call(last[0].id).await.unwrap().unwrap();
    let answered = detail.unwrap().response.unwrap();
    assert!(
        !answered.contains("s3cret-value-1") && answered.contains("<redacted>"),
        "{answered}"
    );
    // a rotated key: the newer connection is the one sent, at once
    app.graft
        .add_connection("notes", "key2", "bearer", None, Some("s3cret-value-2"))
        .await
        .unwrap();
    call(
        &client,
        "run_tool",
        json!({"vendor": "notes", "name": "whoami", "input": {}}),
    )
    .await;
    assert_eq!(
        upstream.calls_of("whoami")[1].1.as_deref(),
        Some("Bearer s3cret-value-2")
    );
    app.stop().await;
}

/// The tool list a server changes while Graft runs: in both eras Graft hears it, reads
/// the list again, versions what changed and retires what is gone, and the agents that
/// held a retired tool get list_changed.
#[tokio::test]
async fn a_servers_changed_list_versions_retires_and_tells_agents_legacy() {
    changed_list(false).await;
}

#[tokio::test]
async fn a_servers_changed_list_versions_retires_and_tells_agents_modern() {
    changed_list(true).await;
}

async fn changed_list(modern: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), modern, |s| {
        s.mcp.relist = Duration::from_secs(1);
    })
    .await;
    let (client, handler) = legacy_client(&app, &token, ProtocolVersion::V_2025_11_25).await;
    for name in ["read_note", "write_note"] {
        call(&client, "promote", json!({"vendor": "notes", "name": name})).await;
    }
    handler.wait_for(2).await;
    app.graft
        .decide_approval(&person(), "bot", "notes", "write_note", true)
        .await
        .unwrap();
    // the server takes write-note away and says read_note does more
    let mut tools = first_tools();
    tools.retain(|t| t["name"] != "write-note");
    tools[0]["description"] = json!("Reads the note with an id, and deletes it.");
    tools.push(json!({"name": "new_tool", "description": "Something new.", "inputSchema": {"type": "object"}}));
    upstream.set_tools(tools).await;
    // Graft's background task reads the list again (no call needed) and tells the agent
    handler.wait_for(3).await;
    let names = tool_names(&client).await;
    assert!(
        !names.contains(&"notes__write_note".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"notes__read_note".to_string()));
    let history = app.graft.history(1, 10, 0).await.unwrap();
    let gone = history.iter().find(|h| h.name == "write_note").unwrap();
    assert_eq!(gone.cause, graft::domain::Cause::UpstreamRemoved);
    let read = app.graft.tool("notes", "read_note").await.unwrap();
    assert_eq!(read.version, 2);
    assert!(read.description.contains("deletes it"));
    assert!(app.graft.tool("notes", "new_tool").await.is_ok());
    let r = call(&client, "notes__write_note", json!({"text": "x"})).await;
    assert_ne!(r.is_error, Some(false), "a retired tool does not run");
    // the server lists it again: it is restored (not promoted again)
    upstream.set_tools(first_tools()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while app
        .graft
        .tool("notes", "write_note")
        .await
        .unwrap()
        .retired_at
        .is_some()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "write_note was not restored"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.stop().await;
}

/// A client handler that counts progress notifications.
#[derive(Clone, Default)]
struct Progress(Arc<AtomicUsize>);

impl ClientHandler for Progress {
    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn progress_cancellation_and_timeouts_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), false, |s| {
        s.mcp.call_timeout = Duration::from_secs(2);
    })
    .await;
    let progress = Progress::default();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            app.mcp_url(),
        )
        .auth_header(token.clone()),
    );
    let client: RunningService<RoleClient, Progress> =
        progress.clone().serve(transport).await.unwrap();
    let run = |name: &str| {
        CallToolRequestParams::new("run_tool").with_arguments(
            json!({"vendor": "notes", "name": name, "input": {}})
                .as_object()
                .unwrap()
                .clone(),
        )
    };
    // the server's progress reaches the agent, on the agent's progress token
    let r = client.call_tool(run("slow")).await.unwrap();
    assert_eq!(text(&r), "counted to three");
    assert_eq!(progress.0.load(Ordering::SeqCst), 3);
    // the agent cancels: the server's call is cancelled too
    let _ = tokio::time::timeout(Duration::from_millis(300), client.call_tool(run("hang"))).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while upstream.0.cancelled.load(Ordering::SeqCst) < 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream call was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // no answer within GRAFT_MCP_CALL_TIMEOUT: a clear tool error, and the server is told
    let r = client.call_tool(run("hang")).await.unwrap();
    assert_eq!(code(&r).as_deref(), Some("vendor_timeout"), "{}", text(&r));
    assert!(text(&r).contains("GRAFT_MCP_CALL_TIMEOUT"));
    // five megabytes are cut to the result budget with a note, not dropped
    let r = client.call_tool(run("big")).await.unwrap();
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size <= 600 << 10, "{size}");
    assert!(text(&r).len() > 1000);
    app.stop().await;
}

#[tokio::test]
async fn a_server_that_is_down_is_kept_and_other_vendors_are_unaffected() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _upstream, token) = setup(dir.path(), false, |_| {}).await;
    // a port nobody listens on
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let (v, read) = app
        .graft
        .add_mcp_vendor(&person(), "down", None, &Server::Url(url))
        .await
        .unwrap();
    assert_eq!(v.kind, "mcp");
    let why = read.unwrap_err();
    assert!(why.contains("could not be read"), "{why}");
    let v = app.graft.vendor("down").await.unwrap();
    assert!(v.mcp_error.is_some());
    let e = app
        .graft
        .refresh_mcp_vendor(&person(), "down")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("tools/list"), "{e}");
    // the other vendor still answers
    let client = modern_client(&app, &token).await;
    let r = call(
        &client,
        "run_tool",
        json!({"vendor": "notes", "name": "read_note", "input": {"id": "a"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    // an MCP vendor takes no OpenAPI document and no acquired tool
    let doc = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    let e = app
        .graft
        .import_openapi("notes", &doc, None, &mut |_, _| {})
        .await
        .unwrap_err();
    assert!(e.to_string().contains("MCP server"), "{e}");
    // removing the vendor stops its server here and retires nothing it had
    app.graft.remove_vendor(&person(), "notes").await.unwrap();
    assert_eq!(
        app.graft
            .mcp_server_state(app.graft.vendor("notes").await.unwrap().id),
        graft::proxy::mcp::ServerState::Stopped
    );
    app.stop().await;
}

#[tokio::test]
async fn calls_past_the_in_flight_limit_fail_clearly_and_an_expired_session_is_renewed() {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), false, |s| {
        s.mcp.max_inflight = 1;
        s.mcp.queue_wait = Duration::from_millis(300);
        s.mcp.call_timeout = Duration::from_secs(3);
    })
    .await;
    let client = modern_client(&app, &token).await;
    let run = |name: &'static str| {
        let input = if name == "read_note" {
            json!({"id": "x"})
        } else {
            json!({})
        };
        json!({"vendor": "notes", "name": name, "input": input})
    };
    // one call holds the only place; the next waits 300 ms, then fails clearly
    let holding = call(&client, "run_tool", run("hang"));
    let waiting = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        call(&client, "run_tool", run("read_note")).await
    };
    let (held, busy) = tokio::join!(holding, waiting);
    assert_eq!(
        code(&held).as_deref(),
        Some("vendor_timeout"),
        "{}",
        text(&held)
    );
    assert_eq!(
        code(&busy).as_deref(),
        Some("vendor_busy"),
        "{}",
        text(&busy)
    );
    assert!(
        text(&busy).contains("GRAFT_MCP_MAX_INFLIGHT"),
        "{}",
        text(&busy)
    );
    // once it is free, calls run
    let r = call(&client, "run_tool", run("read_note")).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));

    // the server forgets Graft's session: Graft initializes again and the call runs
    upstream.end_sessions().await;
    let r = call(&client, "run_tool", run("read_note")).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(upstream.calls_of("read_note").len(), 2);
    app.stop().await;
}

/// A remote MCP server behind OAuth (issue 27.1): another Graft, its own authorization
/// server. A person starts the authorization from this Graft (which discovers that
/// server, registers itself and answers the authorization URL), approves at the other
/// Graft's consent page, comes back to `/vendors/oauth/callback` signed in here; the
/// tokens are stored sealed, the server's tools are read, an agent calls one, and a
/// token that expired is renewed by rmcp's client on its own.
#[tokio::test]
async fn a_server_behind_oauth_is_authorized_by_a_person_and_its_tokens_renew() {
    use crate::console::{Browser, PASSWORD};
    let (up_dir, down_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let up = spawn_app_public(
        up_dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |s| {
            s.oauth.access_ttl = Duration::from_secs(2);
        },
    )
    .await;
    up.graft.add_user("owner", PASSWORD).await.unwrap();
    let mut up_browser = Browser::new(&up);
    up_browser.sign_in("owner", PASSWORD).await;
    let down = spawn_app_public(
        down_dir.path(),
        false,
        Arc::new(graft::service::SystemClock),
        |_| {},
    )
    .await;
    down.graft.add_user("ops", PASSWORD).await.unwrap();
    let mut down_browser = Browser::new(&down);
    down_browser.sign_in("ops", PASSWORD).await;

    // without a token the server answers 401 with its challenge: the vendor is kept
    let (_, read) = down
        .graft
        .add_mcp_vendor(&person(), "up", None, &Server::Url(up.mcp_url()))
        .await
        .unwrap();
    let why = read.unwrap_err();
    assert!(why.contains("authorization"), "{why}");

    // the person starts it here and approves there, as a new agent of that Graft
    let ops = Actor::Person("ops".into());
    let auth_url = down.graft.start_mcp_oauth(&ops, "up").await.unwrap();
    let auth = url::Url::parse(&auth_url).unwrap();
    assert_eq!(auth.port(), Some(up.addr.port()), "{auth_url}");
    let path = format!("{}?{}", auth.path(), auth.query().unwrap());
    let back = crate::oauth::consent(&mut up_browser, &path, ("new", "from-down"), "approve").await;
    assert_eq!(back.status(), 303);
    let callback = back.headers()["location"].to_str().unwrap().to_string();
    assert!(callback.contains("/vendors/oauth/callback?"), "{callback}");
    // only a signed-in person of this Graft finishes it
    let stranger = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(&callback)
        .send()
        .await
        .unwrap();
    let to = stranger.headers()["location"].to_str().unwrap();
    assert!(to.starts_with("/login?next="), "{to}");
    let done = down_browser
        .get(
            callback
                .strip_prefix(&format!("http://{}", down.addr))
                .unwrap(),
        )
        .await;
    assert_eq!(done.status(), 303);
    assert_eq!(done.headers()["location"], "/vendors/up?oauth=connected");
    let v = down.graft.vendor("up").await.unwrap();
    assert!(v.has_oauth && v.mcp_error.is_none(), "{v:?}");
    // the state cannot be used twice
    let again = down
        .graft
        .finish_mcp_oauth(&ops, &callback)
        .await
        .unwrap_err();
    assert!(again.to_string().contains("no authorization"), "{again}");

    // its tools (the other Graft's own, as its new agent sees them) are in the toolbox
    assert!(down.graft.tool("up", "find_tool").await.is_ok());
    let (_, token) = agent(&down, "bot").await;
    let client = modern_client(&down, &token).await;
    let find = json!({"vendor": "up", "name": "find_tool", "input": {"query": "anything"}});
    let r = call(&client, "run_tool", find.clone()).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    // the access token lives 2 s there: rmcp's client renews it, the call runs
    tokio::time::sleep(Duration::from_secs(3)).await;
    let r = call(&client, "run_tool", find).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    // no token lies in the clear in this Graft's database
    let sealed = graft::db::select_vendor_oauth(down.graft.pool(), v.id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        !sealed.contains("access_token") && !sealed.contains("refresh"),
        "{sealed}"
    );

    // dropped: the server stops and its calls need a new authorization
    down.graft.forget_mcp_oauth(&ops, "up").await.unwrap();
    assert!(!down.graft.vendor("up").await.unwrap().has_oauth);
    down.stop().await;
    up.stop().await;
}

/// A server cannot undo a person's decisions by what it lists: a write it now calls a
/// read stays a write (a denial stands, a dry run previews), and a list that pages
/// without end is cut.
#[tokio::test]
async fn a_server_cannot_turn_its_write_into_a_read_nor_page_without_end() {
    let dir = tempfile::tempdir().unwrap();
    let (app, upstream, token) = setup(dir.path(), false, |_| {}).await;
    let client = modern_client(&app, &token).await;
    let write = json!({"vendor": "notes", "name": "write_note", "input": {"text": "x"}});
    let r = call(&client, "run_tool", write.clone()).await;
    assert_eq!(
        code(&r).as_deref(),
        Some("approval_required"),
        "{}",
        text(&r)
    );
    app.graft
        .decide_approval(&person(), "bot", "notes", "write_note", false)
        .await
        .unwrap();
    // the server now says write-note only reads
    let mut tools = first_tools();
    tools[1]["annotations"] = json!({"readOnlyHint": true});
    upstream.set_tools(tools).await;
    let report = app
        .graft
        .refresh_mcp_vendor(&person(), "notes")
        .await
        .unwrap();
    assert_eq!(
        report.writes_kept,
        vec!["write_note".to_string()],
        "{report:?}"
    );
    let t = app.graft.tool("notes", "write_note").await.unwrap();
    assert!(!t.read_only_hint, "the server made its write a read");
    let r = call(&client, "run_tool", write.clone()).await;
    assert_eq!(code(&r).as_deref(), Some("approval_denied"), "{}", text(&r));
    let mut dry = write.clone();
    dry["dryRun"] = json!(true);
    let r = call(&client, "run_tool", dry).await;
    assert_eq!(structured(&r)["dryRun"], true, "{}", text(&r));
    assert!(upstream.calls_of("write-note").is_empty());

    // a list that never ends is read up to 100 pages, then cut
    upstream
        .0
        .endless
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let read = tokio::time::timeout(
        Duration::from_secs(30),
        app.graft.refresh_mcp_vendor(&person(), "notes"),
    )
    .await
    .expect("the read of an endless list ends");
    let report = read.unwrap();
    assert_eq!(report.operations, 100, "{report:?}");
    app.stop().await;
}

/// Testing an MCP vendor's connection reaches its server with that connection alone and
/// writes nothing (issue 28.2): of two bearer tokens for one server, the right one
/// passes and the wrong one fails, whichever the vendor's calls use; its tools stay as
/// they were (none, here: its first read was refused).
#[tokio::test]
async fn an_mcp_connection_is_tested_alone_and_the_test_changes_nothing() {
    let (up_dir, down_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clock = || Arc::new(graft::service::SystemClock) as Arc<dyn graft::service::Clock>;
    let up = spawn_app_public(up_dir.path(), false, clock(), |_| {}).await;
    let down = spawn_app_public(down_dir.path(), false, clock(), |_| {}).await;
    let (_, up_token) = agent(&up, "from-down").await;
    let (_, read) = down
        .graft
        .add_mcp_vendor(&person(), "up", None, &Server::Url(up.mcp_url()))
        .await
        .unwrap();
    assert!(read.is_err());
    let good = down
        .graft
        .add_connection("up", "good", "bearer", None, Some(&up_token))
        .await
        .unwrap();
    // the newer one is what the vendor's calls send
    let bad = down
        .graft
        .add_connection("up", "bad", "bearer", None, Some("wrong-token-123456"))
        .await
        .unwrap();
    let t = down
        .graft
        .test_connection(&person(), good.id)
        .await
        .unwrap();
    assert!(t.ok, "{t:?}");
    assert!(t.message.contains("this connection alone"), "{}", t.message);
    let t = down.graft.test_connection(&person(), bad.id).await.unwrap();
    assert!(!t.ok, "{t:?}");
    assert!(!t.message.contains("wrong-token-123456"), "{}", t.message);
    // nothing of the vendor changed: no tools, and the test's server is not running
    assert!(down.graft.tool("up", "find_tool").await.is_err());
    let v = down.graft.vendor("up").await.unwrap();
    assert_eq!(down.graft.vendor_counts(v.id).await.unwrap().0, 0);
    assert!(matches!(
        down.graft.mcp_server_state(-good.id),
        graft::proxy::mcp::ServerState::Stopped
    ));
    // a test is not a use
    let list = down.graft.connections().await.unwrap();
    assert!(list.iter().all(|c| c.last_used_at.is_none()));
    down.stop().await;
    up.stop().await;
}
