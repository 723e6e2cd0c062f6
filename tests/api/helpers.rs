//! Test harness: a real Graft server on 127.0.0.1:0 over a fresh database (a SQLite file,
//! or a PostgreSQL database with `GRAFT_TEST_BACKEND=postgres`), and real
//! MCP clients (rmcp) for both protocol eras.

use graft::config::Settings;
use graft::server::Application;
use graft::service::{Graft, SystemClock};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where the shared vendor documents are.
pub fn specs_dir() -> PathBuf {
    std::env::var_os("GRAFT_SPECS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs"))
}

/// A running Graft.
pub struct TestApp {
    pub addr: SocketAddr,
    pub graft: Graft,
    pub shutdown: CancellationToken,
    pub server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestApp {
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn stop(self) {
        self.shutdown.cancel();
        let r = tokio::time::timeout(Duration::from_secs(10), self.server).await;
        assert!(
            matches!(r, Ok(Ok(Ok(())))),
            "server did not stop cleanly: {r:?}"
        );
    }
}

pub fn settings(dir: &Path) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        database_url: db_url(dir),
        addr: "127.0.0.1:0".parse().unwrap(),
        public_url: None,
        allowed_hosts: vec![],
        allowed_origins: vec![],
        session_idle: Duration::from_secs(600),
        site_root: dir.join("site"),
        secret_key: None,
        secret_key_file: None,
        sweep_interval: Duration::from_secs(3600),
        // the test vendors run on loopback
        limits: graft::proxy::ProxyLimits {
            vendor_loopback: true,
            ..Default::default()
        },
        embedding_model: None,
        connection_limits: Default::default(),
        metrics_token: None,
        metrics: true,
        quotas: Default::default(),
        trusted_proxies: vec![],
        oauth: graft::service::oauth::OAuthSettings::default(),
        mcp: Default::default(),
    }
}

/// A second service on a database file (another process: the CLI, another server),
/// with a fresh random secret key.
pub async fn open_graft(url: &str, clock: Arc<dyn graft::service::Clock>) -> Graft {
    Graft::open(
        url,
        clock,
        graft::service::ServiceConfig::ephemeral("http://127.0.0.1:3000"),
    )
    .await
    .expect("open db")
}

/// A `sqlite://` URL for `graft.db` in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}?mode=rwc", dir.join("graft.db").display())
}

/// Whether the suite runs on PostgreSQL: `GRAFT_TEST_BACKEND=postgres`, with
/// `GRAFT_TEST_DATABASE_URL` naming a server where the test user may create databases
/// (scripts/test.sh starts a throwaway cluster and sets both).
pub fn on_postgres() -> bool {
    std::env::var("GRAFT_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// The database of `dir` on the suite's backend (SPEC §9): SQLite's `graft.db` in
/// `dir`, or on PostgreSQL a database of its own named after `dir` (created once, the
/// same for every call with `dir`, so a restart finds what the last run wrote).
pub fn db_url(dir: &Path) -> String {
    if !on_postgres() {
        return sqlite_url(dir);
    }
    let admin = std::env::var("GRAFT_TEST_DATABASE_URL").expect(
        "GRAFT_TEST_BACKEND=postgres needs GRAFT_TEST_DATABASE_URL (scripts/test.sh sets it)",
    );
    let mut url = url::Url::parse(&admin).expect("GRAFT_TEST_DATABASE_URL is a URL");
    let name = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        dir.hash(&mut h);
        format!("graft_t_{:016x}", h.finish())
    };
    static CREATED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut created = CREATED.lock().unwrap();
    if !created.contains(&name) {
        let (admin, db) = (admin.clone(), name.clone());
        // a thread of its own: callers may be inside a runtime, and this fn is sync
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async move {
                    use sqlx::Connection;
                    let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
                    let exists: bool = sqlx::query_scalar(
                        "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)",
                    )
                    .bind(&db)
                    .fetch_one(&mut c)
                    .await
                    .unwrap();
                    if !exists {
                        sqlx::query(&format!("CREATE DATABASE {db}"))
                            .execute(&mut c)
                            .await
                            .unwrap();
                    }
                })
        })
        .join()
        .expect("create the test database");
        created.push(name.clone());
    }
    url.set_path(&format!("/{name}"));
    url.to_string()
}

/// Runs the `graft` binary on `dir`'s data directory and database (the suite's backend)
/// as the person `rui` (`USER`), vendors on this machine allowed
/// (`GRAFT_VENDOR_LOOPBACK=allow`) and no webhook from the environment; `env` is set
/// last, so it may change any of these. Asynchronous, so that a server or vendor of the
/// same test keeps answering while the command runs. Answers (success, stdout then
/// stderr).
pub async fn cli(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_graft"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("DATABASE_URL", db_url(dir))
        .env("USER", "rui")
        .env("GRAFT_VENDOR_LOOPBACK", "allow")
        .env_remove("GRAFT_WEBHOOK_SECRET")
        .env_remove("GRAFT_WEBHOOK_URL")
        .envs(env.iter().copied())
        .output()
        .await
        .expect("run graft");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// Starts Graft on port 0 over the database in `dir`.
pub async fn spawn_app_in(dir: &Path) -> TestApp {
    spawn_app_with(settings(dir)).await
}

/// Starts Graft on port 0 with `s`.
pub async fn spawn_app_with(s: Settings) -> TestApp {
    let graft = Graft::open(
        &s.database_url,
        Arc::new(SystemClock),
        s.service_config().unwrap(),
    )
    .await
    .expect("open db");
    spawn_app_with_graft(s, graft).await
}

/// Starts Graft on a free port whose URL is its public URL (`GRAFT_PUBLIC_URL`, with a
/// trailing `/` when `slash`), as OAuth needs: tokens are bound to `<public URL>/mcp`.
/// `tweak` changes the settings before the service opens; `clock` is its clock.
pub async fn spawn_app_public(
    dir: &Path,
    slash: bool,
    clock: Arc<dyn graft::service::Clock>,
    tweak: impl FnOnce(&mut Settings),
) -> TestApp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut s = settings(dir);
    s.addr = addr;
    s.public_url = Some(format!("http://{addr}{}", if slash { "/" } else { "" }));
    tweak(&mut s);
    let graft = Graft::open(&s.database_url, clock, s.service_config().unwrap())
        .await
        .expect("open db");
    spawn_on(s, graft, listener).await
}

/// Starts Graft on port 0 over an existing service (e.g. one with a fake clock).
pub async fn spawn_app_with_graft(s: Settings, graft: Graft) -> TestApp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    spawn_on(s, graft, listener).await
}

async fn spawn_on(s: Settings, graft: Graft, listener: tokio::net::TcpListener) -> TestApp {
    // RUST_LOG=… shows the server's logs in a test run
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "off".into()),
        )
        .with_test_writer()
        .try_init();
    let app = Application::build(&s, graft.clone(), listener)
        .await
        .unwrap();
    let addr = app.local_addr().unwrap();
    let shutdown = app.shutdown_token();
    let server = tokio::spawn(app.run());
    TestApp {
        addr,
        graft,
        shutdown,
        server,
    }
}

/// Starts Graft with the petstore document imported (vendor `petstore`).
pub async fn spawn_app_with_petstore(dir: &Path) -> TestApp {
    let app = spawn_app_in(dir).await;
    import_petstore(&app.graft, "http://127.0.0.1:9/anything").await;
    app
}

/// Imports the shared petstore document as vendor `petstore` (19 tools) at `base_url`.
pub async fn import_petstore(graft: &Graft, base_url: &str) {
    let text = std::fs::read_to_string(specs_dir().join("petstore_openapi.yaml")).unwrap();
    graft
        .import_openapi("petstore", &text, Some(base_url), &mut |_, _| {})
        .await
        .unwrap();
}

/// A clock the test sets (ms since the epoch).
#[derive(Debug, Default)]
pub struct FakeClock(pub std::sync::atomic::AtomicI64);

impl FakeClock {
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl graft::service::Clock for FakeClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

/// A client handler that counts legacy `notifications/tools/list_changed`.
#[derive(Clone)]
pub struct Counting {
    pub changes: Arc<AtomicUsize>,
    pub notify: Arc<tokio::sync::Notify>,
    pub version: ProtocolVersion,
}

impl Counting {
    pub fn new(version: ProtocolVersion) -> Self {
        Self {
            changes: Arc::default(),
            notify: Arc::default(),
            version,
        }
    }

    pub fn count(&self) -> usize {
        self.changes.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` notifications arrived (10 s at most).
    pub async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.count() < n {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            assert!(
                !left.is_zero(),
                "expected {n} list_changed notifications, got {}",
                self.count()
            );
            let _ = tokio::time::timeout(left, self.notify.notified()).await;
        }
    }
}

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("graft-tests", "0"),
        )
        .with_protocol_version(self.version.clone())
    }

    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

fn transport(url: &str, token: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .auth_header(token.to_string())
            .reinit_on_expired_session(false),
    )
}

/// A 2025-era client (initialize + session + GET stream).
pub async fn legacy_client(
    app: &TestApp,
    token: &str,
    version: ProtocolVersion,
) -> (RunningService<RoleClient, Counting>, Counting) {
    legacy_client_at(&app.mcp_url(), token, version).await
}

/// A 2025-era client of the MCP endpoint at `url`.
pub async fn legacy_client_at(
    url: &str,
    token: &str,
    version: ProtocolVersion,
) -> (RunningService<RoleClient, Counting>, Counting) {
    let handler = Counting::new(version);
    let client = handler
        .clone()
        .serve(transport(url, token))
        .await
        .expect("legacy client connects");
    (client, handler)
}

/// A 2026-07-28 client (server/discover, stateless requests).
pub async fn modern_client(app: &TestApp, token: &str) -> RunningService<RoleClient, Counting> {
    modern_client_at(&app.mcp_url(), token).await
}

/// A 2026-07-28 client of the MCP endpoint at `url`.
pub async fn modern_client_at(url: &str, token: &str) -> RunningService<RoleClient, Counting> {
    Counting::new(ProtocolVersion::V_2026_07_28)
        .serve_with_lifecycle(
            transport(url, token),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("modern client connects")
}

/// Calls a tool with JSON arguments.
pub async fn call(
    client: &RunningService<RoleClient, Counting>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .expect("tools/call answered")
}

/// Names in the client's tools/list.
pub async fn tool_names(client: &RunningService<RoleClient, Counting>) -> Vec<String> {
    client
        .list_tools(None)
        .await
        .expect("tools/list")
        .tools
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Creates an agent; returns (id, token).
pub async fn agent(app: &TestApp, name: &str) -> (i64, String) {
    let (a, token) = app.graft.add_agent(name, None, None, None).await.unwrap();
    (a.id, token)
}

/// How long a test's HTTP request may take before it fails: a request the server never
/// answers fails at its own line instead of holding the test until nextest kills it.
pub const HTTP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A plain HTTP client whose requests fail after [`HTTP_TIMEOUT`].
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(HTTP_TIMEOUT)
        .build()
        .expect("an HTTP client")
}

/// Raw `initialize` POST; returns the response.
pub async fn raw_initialize(app: &TestApp, token: &str) -> reqwest::Response {
    raw_initialize_with(app, token, None).await
}

/// Raw `initialize` POST with one extra header (e.g. `origin`, `host`).
pub async fn raw_initialize_with(
    app: &TestApp,
    token: &str,
    extra: Option<(&str, &str)>,
) -> reqwest::Response {
    let mut r = http_client()
        .post(app.mcp_url())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some((k, v)) = extra {
        r = r.header(k, v);
    }
    r.body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#)
        .send()
        .await
        .unwrap()
}

/// Raw `tools/list` POST inside a session.
pub async fn raw_tools_list(app: &TestApp, token: &str, session: &str) -> reqwest::Response {
    http_client()
        .post(app.mcp_url())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
        .send()
        .await
        .unwrap()
}

/// The embedding model for search tests, loaded once per test binary: the directory in
/// `GRAFT_TEST_MODEL`, else `$GRAFT_CACHE/models/<default model>` (default cache
/// `~/.cache/graft`), fetched there by `scripts/get-model.sh` when missing (CI does the
/// same before the tests). Panics when it cannot be had: a search test never passes
/// without the model it is about.
pub fn test_model() -> Arc<graft::semantic::Model> {
    static MODEL: std::sync::OnceLock<Arc<graft::semantic::Model>> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var_os("GRAFT_TEST_MODEL")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    let cache = std::env::var_os("GRAFT_CACHE")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| {
                            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| ".".into()))
                                .join(".cache/graft")
                        });
                    cache.join("models").join(graft::semantic::DEFAULT_MODEL)
                });
            if !dir.join("config.json").is_file() {
                let status = std::process::Command::new("bash")
                    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/get-model.sh"))
                    .arg(&dir)
                    .status()
                    .expect("run scripts/get-model.sh");
                assert!(
                    status.success(),
                    "scripts/get-model.sh {} failed",
                    dir.display()
                );
            }
            let model = graft::semantic::Model::open(&dir)
                .unwrap_or_else(|e| panic!("the embedding model in {}: {e:#}", dir.display()));
            Arc::new(model)
        })
        .clone()
}

/// `structuredContent.error.code` of a tool error (SPEC §3.4), when there is one.
pub fn code(r: &CallToolResult) -> Option<String> {
    r.structured_content
        .as_ref()?
        .pointer("/error/code")?
        .as_str()
        .map(str::to_string)
}

/// The text content of a tool result, its blocks joined by newlines.
pub fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `graft serve` process (the binary cargo built) on a free loopback port, killed
/// when dropped.
pub struct Served {
    child: std::process::Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Served {
    /// The MCP endpoint, `<base>/mcp`.
    pub fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `graft serve` on the database `url` with its data directory `data_dir`,
/// loopback vendors allowed, no embedding model, the extra environment `env` and its
/// log (stderr) to `log` (none: discarded), and waits until `/healthz` answers (30 s at
/// most, else panics naming `name`).
pub async fn serve(
    url: &str,
    data_dir: &Path,
    env: &[(&str, &str)],
    log: Option<&Path>,
    name: &str,
) -> Served {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let stderr = match log {
        Some(p) => std::process::Stdio::from(std::fs::File::create(p).unwrap()),
        None => std::process::Stdio::null(),
    };
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_graft"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", url)
        .env("GRAFT_VENDOR_LOOPBACK", "allow")
        .env_remove("GRAFT_EMBEDDING_MODEL")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let served = Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let up = std::time::Instant::now();
    while reqwest::get(format!("{}/healthz", served.base))
        .await
        .is_err()
    {
        assert!(
            up.elapsed() < Duration::from_secs(30),
            "{name} did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    served
}

/// A vendor of two operations under bearer auth: `createItem` (POST /items, a write that
/// asks for approval) and `listItems` (GET /items, a read), as tools `create_item` and
/// `list_items`.
pub const ACME_ITEMS: &str = r#"
openapi: 3.0.3
info: {title: Acme, version: "1"}
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
    get: {operationId: listItems, responses: {"200": {description: ok}}}
"#;
