//! The use cases of Graft: the only API the adapters (MCP, CLI, console) call. Each
//! state change takes the acting identity ([`Actor`]) and writes every row it touches in
//! one transaction, then tells the change hub once per batch (SPEC §2, §3.5).

pub mod activity;
pub mod agents;
pub mod answer;
pub mod approvals;
pub mod audit;
pub mod authoring;
mod call_detail;
pub mod calls;
pub mod changes;
pub mod connection_care;
pub mod connections;
pub mod error;
pub(crate) mod hot;
pub mod hub;
pub mod import;
pub mod input;
pub mod learning;
pub mod live;
pub mod lookups;
pub mod mcp_oauth;
pub mod mcp_vendors;
pub mod notify;
pub mod oauth;
pub mod oauth_credentials;
pub mod oauth_tokens;
pub mod quota;
pub mod run;
pub mod run_answer;
pub mod search;
pub mod secrets;
pub mod starters;
pub mod sweep;
pub mod tokens;
pub mod tools;
pub mod try_call;
pub mod upstream;
pub mod users;
pub mod vendors;
pub mod versions;
pub mod working_set;

pub use activity::{Activity, ActivityRange, VendorLatency};
pub use agents::*;
pub use approvals::{ApprovalFilter, DecideHow};
pub use changes::*;
pub use import::*;
pub use starters::*;
pub use vendors::*;
pub use working_set::*;

use crate::db::{self, Pool};
/// What the adapters read and filter by: the service's names for the rows it answers
/// with (the db layer's structs, re-exported), so that no adapter names `crate::db`.
pub use crate::db::{
    ApprovalRow as ApprovalView, Backend, BrowseOrder, CallFilter, CallLogRow as CallView,
    CallOutcome, ChangeListener, DecisionRow as DecisionView, Heard, SessionDb,
    ToolRow as ToolView, VendorRow as VendorView, VersionRow as VersionView,
};
use crate::domain::search::{SearchIndex, SearchParams};
use crate::proxy::{Proxy, ProxyLimits};
use chrono::{DateTime, Utc};
pub use error::{unique_or, ServiceError, ServiceResult};
use hub::ChangeHub;
pub use learning::LearnedView;
use rand::RngCore;
pub use run::{RunAnswer, ToolCall};
pub use search::{Acquirable, HitExplain, SearchResult, SearchStatus, ToolHit, SEARCH_DEPTH};
use secrets::SecretKey;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::{Arc, RwLock};
pub use tokens::served;

/// Where the current time comes from (injectable so tests and `graft sweep --at` can
/// set it).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time, UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Who performs a state change (recorded as the history `actor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An agent over MCP, by id.
    Agent(i64),
    /// A person (console user name, or `cli` for the command line).
    Person(String),
    /// Graft itself (the sweep, a revoked connection).
    Rule,
}

impl Actor {
    /// The history `actor` text: `agent:<id>`, `person:<name>` or `rule`.
    pub fn label(&self) -> String {
        match self {
            Self::Agent(id) => format!("agent:{id}"),
            Self::Person(name) => format!("person:{name}"),
            Self::Rule => "rule".into(),
        }
    }
}

/// Refuses a change to a removed agent (issue 28.1): its page stays readable, nothing
/// on it can be changed. Errors: `Invalid`, saying so.
pub(crate) fn alive(a: &db::AgentRow) -> ServiceResult<()> {
    match a.removed_at {
        Some(_) => Err(removed_agent(&a.name)),
        None => Ok(()),
    }
}

/// The refusal of a change to the removed agent `name` ([`alive`], and the row-lock
/// check of a transaction that found it removed meanwhile).
pub(crate) fn removed_agent(name: &str) -> ServiceError {
    ServiceError::Invalid(format!(
        "agent {name} was removed: its history is kept, and nothing else about it can change; create a new agent instead"
    ))
}

/// Hashes an agent token for storage: SHA-256, hex. Tokens carry 256 random bits, so a
/// fast hash is enough (no password stretching needed) and lookups stay indexable.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new agent token: `graft_` + 64 hex digits (32 bytes from the OS RNG).
pub fn new_token() -> String {
    format!("graft_{}", random_hex(32))
}

/// `n` random bytes (OS RNG) as lowercase hex (`2n` characters).
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// A write transaction holding this process's write lock until it ends (see
/// `Graft::write_tx`); derefs to the transaction.
pub(crate) struct WriteTx {
    tx: db::Conn,
    _guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    metrics: Arc<crate::metrics::Metrics>,
    /// The working-set changes this transaction wrote, by (action, cause).
    changes: Vec<(crate::domain::HistoryAction, crate::domain::Cause, u64)>,
}

impl WriteTx {
    /// Notes `n` working-set changes written in this transaction; they are counted in
    /// `graft_working_set_changes_total` when it commits (issue 30.1), never when it
    /// rolls back. Every path that writes history rows goes through here
    /// ([`promote_in`], [`demote_in`], the sweep), so no change path can forget them.
    pub fn record(
        &mut self,
        action: crate::domain::HistoryAction,
        cause: crate::domain::Cause,
        n: u64,
    ) {
        if n > 0 {
            self.changes.push((action, cause, n));
        }
    }

    /// Commits (and releases the lock), then counts the changes it wrote.
    pub async fn commit(self) -> Result<(), db::DbError> {
        self.tx.commit().await?;
        for (action, cause, n) in self.changes {
            self.metrics.working_set_changes(action, cause, n);
        }
        Ok(())
    }
}

impl std::ops::Deref for WriteTx {
    type Target = db::Conn;
    fn deref(&self) -> &Self::Target {
        &self.tx
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.tx
    }
}

/// Graft's service: cheap to clone (an `Arc` inside).
#[derive(Clone, Debug)]
pub struct Graft {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    hub: ChangeHub,
    /// What the console's open pages follow (issue 28.3).
    live: live::LiveBus,
    /// The team's webhook: settings read, counts, deliveries (issue 28.3).
    notifier: notify::Notifier,
    /// When this process last told other processes that a call was logged (ms).
    calls_announced: std::sync::atomic::AtomicI64,
    clock: Arc<dyn Clock>,
    /// The search index over the current toolbox; `None` after a change until rebuilt.
    search: RwLock<Option<Arc<SearchIndex>>>,
    /// Seals and opens connection secrets.
    key: SecretKey,
    /// Sends vendor requests.
    proxy: Proxy,
    /// Graft's public URL (approval links), without a trailing `/`.
    public_url: String,
    /// This process's random id in `change_events`.
    origin: String,
    /// The index over operations of stored documents that are not tools yet; `None`
    /// after a change.
    stored_ops: RwLock<Option<Arc<search::StoredIndex>>>,
    /// Held while an index is built, so concurrent searches build it once.
    index_build: tokio::sync::Mutex<()>,
    /// Counts toolbox changes: an index built from a read older than the last change
    /// is used for the search that built it, never kept.
    search_gen: std::sync::atomic::AtomicU64,
    /// Wakes the server's background index builder after a toolbox change.
    search_dropped: tokio::sync::Notify,
    /// The toolbox's learned field (issue 24.3); `None` after this process learned.
    learned: RwLock<Option<learning::LearnedCache>>,
    /// One build of the learned field at a time, and what it reuses.
    learned_build: learning::LearnedBuild,
    /// The sentence-embedding model; `None`: search is lexical-only.
    model: Option<Arc<crate::semantic::Model>>,
    /// What tool calls read, kept in memory until something changes.
    hot: hot::HotCache,
    /// Held by this process's writers (see `Graft::write_tx`).
    write_lock: Arc<tokio::sync::Mutex<()>>,
    /// Compiled input-schema validators, with the schema they were compiled from, by
    /// (tool id, version): versions are immutable.
    validators: Mutex<HashMap<(i64, i64), Arc<input::InputCheck>>>,
    /// Input validations running at once, process-wide ([`input::validation_slots`]).
    validation_slots: Arc<tokio::sync::Semaphore>,
    /// One validation at a time per agent.
    agent_validations: Mutex<HashMap<i64, Arc<tokio::sync::Semaphore>>>,
    /// Password checks (argon2, ~19 MiB and tens of ms each) running at once,
    /// process-wide, apart from the validation slots ([`users::PASSWORD_CHECKS`]).
    password_checks: tokio::sync::Semaphore,
    /// Per-agent limits and their counts.
    quotas: quota::Quotas,
    /// The OAuth authorization server's settings and what it keeps in memory.
    oauth: oauth::OAuthState,
    meter: quota::Meter,
    /// This server's Prometheus metrics (issue 30.1).
    metrics: Arc<crate::metrics::Metrics>,
    /// The MCP client of every MCP vendor's server (issue 27).
    upstreams: crate::proxy::mcp::Upstreams,
    /// Held while an MCP vendor's tools/list is stored: two reads at once (the timer
    /// and a list_changed) would add the same new tool twice.
    mcp_sync: tokio::sync::Mutex<()>,
    /// OAuth authorizations of MCP vendors a person started (issue 27.1).
    mcp_oauth: mcp_oauth::PendingAuthorizations,
    /// When this process last wrote each connection's last use (ms).
    connections_used: Mutex<HashMap<i64, i64>>,
    /// The last test of each connection in this process: `(ms, ok, what happened)`.
    connection_tests: Mutex<HashMap<i64, (i64, bool, String)>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// What the service needs besides the database.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Graft's public URL, e.g. `http://127.0.0.1:3000` (approval links point there).
    pub public_url: String,
    /// The key that seals connection secrets.
    pub key: SecretKey,
    /// Proxy timeouts and response cap.
    pub limits: ProxyLimits,
    /// The sentence-embedding model for semantic search (`None`: lexical-only).
    pub model: Option<Arc<crate::semantic::Model>>,
    /// How vendor host names are resolved (`None`: the system's resolver; tests give a
    /// stub).
    pub lookup: Option<Arc<dyn crate::proxy::destination::Lookup>>,
    /// What one agent may make Graft do (security review 32.8).
    pub quotas: quota::Quotas,
    /// The OAuth authorization server's lifetimes and redirect schemes (issue 26).
    pub oauth: oauth::OAuthSettings,
    /// MCP vendors' call timeout, calls in flight and refresh interval (issue 27).
    pub mcp: crate::proxy::mcp::UpstreamLimits,
}

impl ServiceConfig {
    /// A configuration with a fresh random key and default limits (tests, benchmarks),
    /// vendors on loopback allowed (their vendors run on this machine).
    pub fn ephemeral(public_url: &str) -> Self {
        Self {
            public_url: public_url.trim_end_matches('/').to_string(),
            key: SecretKey::generate(),
            limits: ProxyLimits {
                vendor_loopback: true,
                ..ProxyLimits::default()
            },
            model: None,
            lookup: None,
            quotas: quota::Quotas::default(),
            oauth: oauth::OAuthSettings::default(),
            mcp: crate::proxy::mcp::UpstreamLimits::default(),
        }
    }

    /// The same with a sentence-embedding model.
    pub fn with_model(mut self, model: Option<Arc<crate::semantic::Model>>) -> Self {
        self.model = model;
        self
    }
}

impl Graft {
    /// Stops vendor `vendor_id`'s server in this process (it starts again on the next
    /// need, with the vendor's current command and connections).
    pub(crate) async fn stop_mcp_server(&self, vendor_id: i64) {
        self.inner.upstreams.stop(vendor_id).await;
    }

    /// The ranking knobs for the loaded model: the defaults for a static model,
    /// [`SearchParams::transformer`] for the full encoder.
    pub fn search_params(&self) -> SearchParams {
        match self
            .inner
            .model
            .as_deref()
            .map(crate::semantic::Model::kind)
        {
            #[cfg(feature = "transformer")]
            Some(crate::semantic::Kind::Transformer) => SearchParams::transformer(),
            _ => SearchParams::default(),
        }
    }

    /// The store of the console's sign-in sessions, in Graft's database (SPEC §6).
    /// Errors: `Unavailable` when PostgreSQL cannot say its current schema.
    pub async fn session_store(&self) -> ServiceResult<SessionDb> {
        Ok(SessionDb::open(self.pool()).await?)
    }

    /// The limits in force: timeouts, response cap, result and schema budgets.
    pub fn limits(&self) -> ProxyLimits {
        self.inner.proxy.limits()
    }

    /// Opens the database at `database_url` (migrating it) with `clock` and `config`.
    /// Errors: the database cannot be opened or migrated; the HTTP client cannot be built.
    pub async fn open(
        database_url: &str,
        clock: Arc<dyn Clock>,
        config: ServiceConfig,
    ) -> anyhow::Result<Self> {
        let pool = db::connect(database_url).await?;
        let graft = Self::with_pool(pool, clock, config)?;
        let filled = graft.backfill_search_text().await?;
        if filled > 0 {
            tracing::info!(
                versions = filled,
                "computed the search text of older tool versions"
            );
        }
        Ok(graft)
    }

    /// Wraps an open pool. Errors: the HTTP client cannot be built.
    pub fn with_pool(
        pool: Pool,
        clock: Arc<dyn Clock>,
        config: ServiceConfig,
    ) -> anyhow::Result<Self> {
        let lookup = config
            .lookup
            .unwrap_or_else(|| Arc::new(crate::proxy::destination::SystemLookup));
        let proxy = Proxy::new(config.limits, lookup.clone()).map_err(anyhow::Error::msg)?;
        let (mcp_public, mcp_internal) = proxy.mcp_clients();
        let upstreams = crate::proxy::mcp::Upstreams::new(config.mcp, mcp_public, mcp_internal);
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                hub: ChangeHub::default(),
                live: live::LiveBus::default(),
                notifier: notify::Notifier::new(
                    1_000,
                    lookup,
                    crate::proxy::destination::Reach {
                        internal: config.limits.webhook_internal,
                        loopback: config.limits.vendor_loopback,
                    },
                )
                .map_err(anyhow::Error::msg)?,
                calls_announced: std::sync::atomic::AtomicI64::new(0),
                clock,
                search: RwLock::new(None),
                stored_ops: RwLock::new(None),
                index_build: tokio::sync::Mutex::new(()),
                search_gen: std::sync::atomic::AtomicU64::new(0),
                search_dropped: tokio::sync::Notify::new(),
                learned: RwLock::new(None),
                learned_build: learning::LearnedBuild::default(),
                model: config.model,
                hot: hot::HotCache::default(),
                write_lock: Arc::new(tokio::sync::Mutex::new(())),
                key: config.key,
                proxy,
                public_url: config.public_url.trim_end_matches('/').to_string(),
                origin: new_token(),
                validators: Mutex::new(HashMap::new()),
                validation_slots: Arc::new(tokio::sync::Semaphore::new(input::validation_slots())),
                agent_validations: Mutex::new(HashMap::new()),
                password_checks: tokio::sync::Semaphore::new(users::PASSWORD_CHECKS),
                quotas: config.quotas,
                oauth: oauth::OAuthState::new(config.oauth),
                meter: quota::Meter::default(),
                metrics: Arc::new(crate::metrics::Metrics::new()),
                upstreams,
                mcp_sync: tokio::sync::Mutex::new(()),
                mcp_oauth: Default::default(),
                connections_used: Mutex::new(HashMap::new()),
                connection_tests: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// This server's Prometheus metrics (issue 30.1): what the service counts (tool runs,
    /// vendor requests, working-set changes, sweeps, searches) and the `/mcp` edge adds
    /// (MCP operations).
    pub fn metrics(&self) -> &Arc<crate::metrics::Metrics> {
        &self.inner.metrics
    }

    /// The gauges of a `/metrics` scrape that the database holds (pending approvals,
    /// tools, agents; global on a shared database) and this process's change streams;
    /// `sessions` is the MCP edge's and stays 0 here. Errors: the database failed.
    pub async fn metric_gauges(&self) -> ServiceResult<crate::metrics::Gauges> {
        Ok(crate::metrics::Gauges {
            sessions: 0,
            streams: self.hub().channels() as i64,
            pending_approvals: db::count_pending_approvals(&self.inner.pool).await?,
            tools: db::count_tools(&self.inner.pool).await?,
            agents: db::count_agents(&self.inner.pool).await?,
        })
    }

    /// The change hub (SPEC §3.5).
    pub fn hub(&self) -> &ChangeHub {
        &self.inner.hub
    }

    /// The bus the console's open pages follow (issue 28.3).
    pub fn live(&self) -> &live::LiveBus {
        &self.inner.live
    }

    /// The database pool (for the server's session store and health check).
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// This process's random id in `change_events` (and in change notifications).
    pub fn origin(&self) -> &str {
        &self.inner.origin
    }

    fn now(&self) -> i64 {
        ms(self.inner.clock.now())
    }

    /// A write transaction: `BEGIN IMMEDIATE`, so two writers queue on SQLite's lock
    /// (within busy_timeout) instead of failing when a read lock cannot be upgraded.
    /// Writers of this process first queue on an async lock: SQLite's own wait for a
    /// busy database sleeps in steps of up to 100 ms, which put ~60 ms on the slowest
    /// calls when eight sessions recorded their calls at once (issue 15).
    async fn write_tx(&self) -> Result<WriteTx, db::DbError> {
        // SQLite: writers of this process queue here rather than on the file's lock.
        // PostgreSQL: each waits on the advisory lock by itself, so that a lock held
        // elsewhere costs every waiter one lock timeout at most, not one per writer ahead
        let guard = match self.inner.pool {
            Pool::Sqlite(_) => Some(self.inner.write_lock.clone().lock_owned().await),
            Pool::Postgres(_) => None,
        };
        let tx = self.inner.pool.begin_write().await?;
        Ok(WriteTx {
            tx,
            _guard: guard,
            metrics: self.inner.metrics.clone(),
            changes: Vec::new(),
        })
    }

    /// The service clock's current time in ms since the epoch (the sweeper's `now`).
    pub fn clock_now(&self) -> i64 {
        self.now()
    }

    /// Empties SQLite's write-ahead log into the database file (after a secret was
    /// dropped); a failure is only logged: the next checkpoint does the same.
    pub(crate) async fn checkpoint(&self) {
        if let Err(e) = db::checkpoint(&self.inner.pool).await {
            tracing::warn!(error = ?e, "checkpointing the write-ahead log failed");
        }
    }
}
