//! The use cases of Graft: the only API the adapters (MCP, CLI, console) call. Each
//! state change takes the acting identity ([`Actor`]) and writes every row it touches in
//! one transaction, then tells the change hub once per batch (SPEC §2, §3.5).

pub mod access;
pub mod answer;
pub mod authoring;
pub mod error;
pub(crate) mod hot;
pub mod hub;
pub mod people;
pub mod quota;
pub mod run;
pub mod search;
pub mod secrets;
pub mod sweep;

use crate::db::{self, AgentRow, EntryRow, Pool, VendorRow};
use crate::domain::names::{ToolName, VendorSlug};
use crate::domain::search::SearchIndex;
use crate::domain::{self, openapi, Cause, PromotedBy};
use crate::proxy::{Proxy, ProxyLimits};
use chrono::{DateTime, Utc};
pub use error::{unique_or, ServiceError, ServiceResult};
use hub::ChangeHub;
use rand::RngCore;
pub use run::RunAnswer;
pub use search::{Acquirable, SearchResult, SearchStatus, ToolHit};
use secrets::SecretKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::{Arc, RwLock};

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

/// An agent with its working-set size.
#[derive(Debug, Clone, Serialize)]
pub struct AgentSummary {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Harness label.
    pub harness: Option<String>,
    /// Working-set cap.
    pub cap: i64,
    /// Idle window, days.
    pub idle_window_days: i64,
    /// Tools in the working set now.
    pub size: i64,
    /// Last authenticated request (ms since the epoch).
    pub last_seen_at: Option<i64>,
}

/// A working set's size against its cap: the answer of `promote` and `demote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SetSize {
    /// Entries now.
    pub size: i64,
    /// The agent's cap.
    pub cap: i64,
    /// Whether the call changed the set (false for a no-op promotion).
    #[serde(skip)]
    pub changed: bool,
}

/// What an OpenAPI import did (issue 14.3: a re-import of a changed document updates the
/// vendor's tools).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ImportReport {
    /// Vendor slug.
    pub vendor: String,
    /// Operations in the document.
    pub operations: usize,
    /// Tools created.
    pub imported: usize,
    /// `(tool name, what changed)` of tools that got a new version (authored by import).
    pub updated: Vec<(String, String)>,
    /// Tools the document describes as their current version does.
    pub unchanged: usize,
    /// Tools whose operation came back to the document (they were retired).
    pub restored: Vec<String>,
    /// Tools retired: their operation is gone from the document (demoted everywhere,
    /// kept for history).
    pub retired: Vec<String>,
    /// Tools left alone because an agent wrote their current version (acquire, publish).
    pub kept: Vec<String>,
    /// Working-set entries demoted because their tool was retired.
    pub demoted: usize,
    /// `(operation, name)` of tools whose name is not the plain snake case.
    pub renamed: Vec<(String, String)>,
    /// `(operation, reason)` of operations left out.
    pub skipped: Vec<(String, String)>,
    /// `(operation, "header Authorization")` of declared parameters not offered to
    /// agents: headers Graft or the connection sets (issue 12.4).
    pub withheld: Vec<(String, String)>,
    /// Whether the vendor had been removed and this import brought it back (enabled).
    pub brought_back: bool,
    /// `(old name, new name)` of agents' tools renamed because the document has an
    /// operation of their name (an import wins the name; security review 32.20).
    pub moved: Vec<(String, String)>,
    /// The base URL taken from the document's servers for a vendor this import
    /// created: every call goes there, so the person is shown it (security review 32.7).
    pub adopted_base_url: Option<String>,
    /// `(old origin, new origin)` when the import's base URL moved an existing vendor to
    /// another origin (its connections are suspended; security review 32.5).
    pub origin_moved: Option<(String, String)>,
}

/// Longest vendor display name, in characters (a longer document title is cut).
pub const MAX_VENDOR_NAME: usize = 100;

/// Refuses a vendor display name over [`MAX_VENDOR_NAME`] characters. Errors: the rule,
/// as a sentence.
pub fn check_vendor_name(name: &str) -> Result<(), String> {
    if name.chars().count() > MAX_VENDOR_NAME {
        return Err(format!(
            "a vendor name has at most {MAX_VENDOR_NAME} characters"
        ));
    }
    Ok(())
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

/// The `change_events.agent_id` of a toolbox change (agent ids start at 1).
pub const TOOLBOX_CHANGE: i64 = 0;
/// The `change_events.agent_id` of another change other processes must hear of (an
/// agent's settings or token, a connection, a vendor): they drop what they cached.
pub const STATE_CHANGE: i64 = -1;
/// `change_events.agent_id` values at or below this mark an agent whose token was
/// rotated: agent `TOKEN_ROTATED - value`; other processes end its channels too.
pub const TOKEN_ROTATED: i64 = -2;

/// How often `last_seen_at` is written at most, per agent (ms).
const LAST_SEEN_RESOLUTION_MS: i64 = 60_000;

/// A write transaction holding this process's write lock until it ends (see
/// `Graft::write_tx`); derefs to the transaction.
pub(crate) struct WriteTx {
    tx: db::Conn,
    _guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl WriteTx {
    /// Commits (and releases the lock).
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
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
    /// The sentence-embedding model; `None`: search is lexical-only.
    model: Option<Arc<crate::semantic::Model>>,
    /// What tool calls read, kept in memory until something changes.
    hot: hot::HotCache,
    /// Held by this process's writers (see `Graft::write_tx`).
    write_lock: Arc<tokio::sync::Mutex<()>>,
    /// Compiled input-schema validators, with the schema they were compiled from, by
    /// (tool id, version): versions are immutable.
    validators: Mutex<HashMap<(i64, i64), Arc<run::InputCheck>>>,
    /// Input validations running at once, process-wide ([`run::validation_slots`]).
    validation_slots: Arc<tokio::sync::Semaphore>,
    /// One validation at a time per agent.
    agent_validations: Mutex<HashMap<i64, Arc<tokio::sync::Semaphore>>>,
    /// Password checks (argon2, ~19 MiB and tens of ms each) running at once,
    /// process-wide, apart from the validation slots ([`people::PASSWORD_CHECKS`]).
    password_checks: tokio::sync::Semaphore,
    /// Per-agent limits and their counts.
    quotas: quota::Quotas,
    meter: quota::Meter,
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
        }
    }

    /// The same with a sentence-embedding model.
    pub fn with_model(mut self, model: Option<Arc<crate::semantic::Model>>) -> Self {
        self.model = model;
        self
    }
}

impl Graft {
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
        let proxy = Proxy::new(config.limits, lookup).map_err(anyhow::Error::msg)?;
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                hub: ChangeHub::default(),
                clock,
                search: RwLock::new(None),
                stored_ops: RwLock::new(None),
                index_build: tokio::sync::Mutex::new(()),
                model: config.model,
                hot: hot::HotCache::default(),
                write_lock: Arc::new(tokio::sync::Mutex::new(())),
                key: config.key,
                proxy,
                public_url: config.public_url.trim_end_matches('/').to_string(),
                origin: new_token(),
                validators: Mutex::new(HashMap::new()),
                validation_slots: Arc::new(tokio::sync::Semaphore::new(run::validation_slots())),
                agent_validations: Mutex::new(HashMap::new()),
                password_checks: tokio::sync::Semaphore::new(people::PASSWORD_CHECKS),
                quotas: config.quotas,
                meter: quota::Meter::default(),
            }),
        })
    }

    /// The change hub (SPEC §3.5).
    pub fn hub(&self) -> &ChangeHub {
        &self.inner.hub
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
    async fn write_tx(&self) -> Result<WriteTx, sqlx::Error> {
        // SQLite: writers of this process queue here rather than on the file's lock.
        // PostgreSQL: each waits on the advisory lock by itself, so that a lock held
        // elsewhere costs every waiter one lock timeout at most, not one per writer ahead
        let guard = match self.inner.pool {
            Pool::Sqlite(_) => Some(self.inner.write_lock.clone().lock_owned().await),
            Pool::Postgres(_) => None,
        };
        let tx = self.inner.pool.begin_write().await?;
        Ok(WriteTx { tx, _guard: guard })
    }

    /// Tells every channel of these agents that their working sets changed: this
    /// process's through the hub, other processes' (the CLI, another server) through
    /// `change_events`, which servers poll (SPEC §3.5). One call per change batch.
    async fn changed(&self, agents: &[i64]) {
        self.inner.hot.bump();
        for a in agents {
            self.inner.hub.notify(*a);
        }
        if let Err(e) =
            db::insert_change_events(&self.inner.pool, agents, &self.inner.origin, self.now()).await
        {
            tracing::warn!(error = ?e, "cannot record a change event for other processes");
        }
    }

    /// The newest change event: where a server starts forwarding other processes'
    /// changes.
    pub async fn change_cursor(&self) -> ServiceResult<i64> {
        Ok(db::select_last_change_event(&self.inner.pool).await?)
    }

    /// Forwards changes recorded by other processes after `after` to this process's
    /// channels (one notice per agent per poll); returns the new cursor. Events older
    /// than an hour are forgotten.
    pub async fn forward_foreign_changes(&self, after: i64) -> ServiceResult<i64> {
        let events = db::select_change_events(&self.inner.pool, after, &self.inner.origin).await?;
        if !events.is_empty() {
            self.inner.hot.bump();
        }
        if events.iter().any(|e| e.1 == TOOLBOX_CHANGE) {
            self.invalidate_search();
        }
        for rotated in events.iter().map(|e| e.1).filter(|a| *a <= TOKEN_ROTATED) {
            self.inner.hub.disconnect(TOKEN_ROTATED - rotated);
        }
        let mut agents: Vec<i64> = events.iter().map(|e| e.1).filter(|a| *a > 0).collect();
        agents.sort_unstable();
        agents.dedup();
        for a in agents {
            self.inner.hub.notify(a);
        }
        let cursor = events.last().map_or(after, |e| e.0);
        if cursor % 256 == 0 || events.len() > 256 {
            db::delete_change_events_before(&self.inner.pool, self.now() - 3_600_000).await?;
        }
        Ok(cursor)
    }

    /// The service clock's current time in ms since the epoch (the sweeper's `now`).
    pub fn clock_now(&self) -> i64 {
        self.now()
    }

    // ------------------------------------------------------------ agents

    /// Creates an agent; returns it and its token, which is shown once and stored only
    /// as a hash. Errors: invalid name/cap/window, or the name is taken (`Conflict`).
    pub async fn add_agent(
        &self,
        name: &str,
        harness: Option<&str>,
        cap: Option<i64>,
        idle_window_days: Option<i64>,
    ) -> ServiceResult<(AgentRow, String)> {
        let name = domain::check_agent_name(name).map_err(ServiceError::Invalid)?;
        let cap =
            domain::check_cap(cap.unwrap_or(domain::DEFAULT_CAP)).map_err(ServiceError::Invalid)?;
        let window =
            domain::check_idle_window(idle_window_days.unwrap_or(domain::DEFAULT_IDLE_WINDOW_DAYS))
                .map_err(ServiceError::Invalid)?;
        let harness = harness.map(str::trim).filter(|h| !h.is_empty());
        if let Some(h) = harness {
            if h.chars().count() > 40 || h.chars().any(char::is_control) {
                return Err(ServiceError::Invalid(
                    "a harness label is at most 40 characters, without control characters".into(),
                ));
            }
        }
        let token = new_token();
        let id = db::insert_agent(
            &self.inner.pool,
            &name,
            harness,
            &hash_token(&token),
            cap,
            window,
            self.now(),
        )
        .await
        .map_err(|e| {
            unique_or(e, ServiceError::Conflict, || {
                format!("an agent named {name:?} exists already")
            })
        })?;
        let agent = db::select_agent(&self.inner.pool, id)
            .await?
            .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("agent vanished")))?;
        self.state_changed().await;
        Ok((agent, token))
    }

    /// Every agent with its working-set size, by name.
    pub async fn list_agents(&self) -> ServiceResult<Vec<AgentSummary>> {
        let agents = db::select_agents(&self.inner.pool).await?;
        // two queries for any number of agents (the console lists them all)
        let sizes: HashMap<i64, i64> = db::select_working_set_sizes(&self.inner.pool)
            .await?
            .into_iter()
            .collect();
        Ok(agents
            .into_iter()
            .map(|a| AgentSummary {
                size: sizes.get(&a.id).copied().unwrap_or(0),
                id: a.id,
                name: a.name,
                harness: a.harness,
                cap: a.cap,
                idle_window_days: a.idle_window_days,
                last_seen_at: a.last_seen_at,
            })
            .collect())
    }

    /// The agent a bearer token belongs to, or `None`. Records `last_seen_at` (at most
    /// once a minute per agent).
    pub async fn authenticate(&self, token: &str) -> ServiceResult<Option<AgentRow>> {
        let hash = hash_token(token);
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        let agent = match hot.agent(&hash, epoch) {
            Some(a) => a,
            None => {
                let a = db::select_agent_by_token_hash(&self.inner.pool, &hash).await?;
                hot.put_agent(hash, epoch, a.clone());
                a
            }
        };
        let Some(agent) = agent else {
            return Ok(None);
        };
        let now = self.now();
        if hot.seen_due(&agent, now, LAST_SEEN_RESOLUTION_MS) {
            db::update_agent_last_seen(&self.inner.pool, agent.id, now).await?;
        }
        Ok(Some(agent))
    }

    /// A tool by vendor and name for a call: from memory while nothing changed.
    /// Errors: `ToolNotFound`.
    pub async fn tool_for_call(&self, vendor: &str, name: &str) -> ServiceResult<Arc<db::ToolRow>> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        if let Some(t) = hot.tool(vendor, name, epoch) {
            return Ok(t);
        }
        // a retired tool or one of a disabled vendor resolves too: its call is refused,
        // and recorded in the calls log, by run_tool_row
        let t = Arc::new(self.tool(vendor, name).await?);
        hot.put_tool(epoch, t.clone());
        Ok(t)
    }

    /// Whether a tool is in an agent's working set (from memory while nothing changed).
    pub async fn is_promoted(&self, agent_id: i64, tool_id: i64) -> ServiceResult<bool> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        let set = match hot.set(agent_id, epoch) {
            Some(s) => s,
            None => {
                let ids: HashSet<i64> = db::select_working_set_ids(&self.inner.pool, agent_id)
                    .await?
                    .into_iter()
                    .collect();
                let s = Arc::new(ids);
                hot.put_set(agent_id, epoch, s.clone());
                s
            }
        };
        Ok(set.contains(&tool_id))
    }

    /// The cache epoch: it changes whenever anything a call or a tool list reads
    /// changed (here, or in another process within a second); adapters key their own
    /// caches by it.
    pub fn cache_epoch(&self) -> u64 {
        self.inner.hot.epoch()
    }

    /// An agent's working set as `(tool id, current version)`, in `tools/list` order
    /// (vendor, name): a light read (no definitions).
    pub async fn working_set_versions(&self, agent_id: i64) -> ServiceResult<Vec<(i64, i64)>> {
        Ok(db::select_working_set_versions(&self.inner.pool, agent_id).await?)
    }

    /// Tools with their current version, by id (any order; unknown ids are left out).
    pub async fn tools_by_ids(&self, ids: &[i64]) -> ServiceResult<Vec<db::ToolRow>> {
        Ok(db::select_tools_by_ids(&self.inner.pool, ids).await?)
    }

    /// The agent with an id. Errors: `AgentNotFound`.
    pub async fn agent(&self, id: i64) -> ServiceResult<AgentRow> {
        db::select_agent(&self.inner.pool, id)
            .await?
            .ok_or_else(|| ServiceError::AgentNotFound(format!("no agent with id {id}")))
    }

    /// The agent with a name. Errors: `AgentNotFound`.
    pub async fn agent_by_name(&self, name: &str) -> ServiceResult<AgentRow> {
        db::select_agent_by_name(&self.inner.pool, name)
            .await?
            .ok_or_else(|| ServiceError::AgentNotFound(format!("no agent named {name:?}")))
    }

    // ------------------------------------------------------------ vendors and import

    /// Creates a vendor; the slug of a removed vendor brings that vendor back (enabled,
    /// with this name and base URL, its tools callable again and no document until one
    /// is imported). Errors: invalid slug or base URL, or the slug is taken.
    pub async fn add_vendor(
        &self,
        slug: &str,
        display_name: Option<&str>,
        base_url: &str,
    ) -> ServiceResult<VendorRow> {
        let slug = VendorSlug::parse(slug).map_err(ServiceError::Invalid)?;
        let base_url = check_base_url(base_url)?;
        let name = display_name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(slug.as_str());
        check_vendor_name(name).map_err(ServiceError::Invalid)?;
        // a removed vendor's slug brings that vendor back, with the URL (and the name)
        // given
        if let Some(old) = db::select_vendor_by_slug(&self.inner.pool, slug.as_str()).await? {
            if old.removed_at.is_some() {
                let keep = display_name.map(str::trim).is_none_or(str::is_empty);
                let name = if keep {
                    old.display_name.as_str()
                } else {
                    name
                };
                let mut tx = self.write_tx().await?;
                db::update_vendor_removed(&mut tx, old.id, None).await?;
                db::update_vendor(&mut tx, old.id, Some(name), Some(&base_url)).await?;
                // approvals given at the old origin do not follow it to a new one
                let (was, is) = (origin_of(&old.base_url), origin_of(&base_url));
                if was != is {
                    move_origin_in(
                        &mut tx,
                        old.id,
                        slug.as_str(),
                        &was,
                        &is,
                        &Actor::Rule,
                        self.now(),
                    )
                    .await?;
                }
                tx.commit().await?;
                tracing::info!(vendor = slug.as_str(), "removed vendor brought back");
                self.state_changed().await;
                self.toolbox_changed().await;
                return self.vendor(slug.as_str()).await;
            }
        }
        let mut conn = self.inner.pool.acquire().await?;
        db::insert_vendor(&mut conn, slug.as_str(), name, &base_url, self.now())
            .await
            .map_err(|e| {
                unique_or(e, ServiceError::Conflict, || {
                    format!("a vendor {:?} exists already", slug.as_str())
                })
            })?;
        self.vendor(slug.as_str()).await
    }

    /// Changes a vendor (issue 14.3): its display name and/or base URL (checked as for a
    /// new vendor), and whether it is `enabled`. A base URL on another origin (scheme,
    /// host or port) suspends the vendor's connections until a person confirms them
    /// ([`Graft::confirm_connections`]) and sets its granted approvals back to pending,
    /// both saying from where to where (security review 32.5; see
    /// [`Graft::origin_move`] to ask first). Disabling takes its tools out of search
    /// and refuses their calls and promotions, and demotes them from every working set
    /// (cause `vendor_disabled`; each agent affected gets list_changed); enabling brings
    /// the tools back to search (agents promote them again). Returns the vendor and the
    /// entries demoted. Errors: `VendorNotFound`, `Invalid` (removed, nothing to change, a
    /// bad URL or an empty name).
    pub async fn set_vendor(
        &self,
        actor: &Actor,
        slug: &str,
        display_name: Option<&str>,
        base_url: Option<&str>,
        enabled: Option<bool>,
    ) -> ServiceResult<(VendorRow, usize)> {
        let v = self.live_vendor(slug).await?;
        if display_name.is_none() && base_url.is_none() && enabled.is_none() {
            return Err(ServiceError::Invalid(
                "nothing to change: give a name, a base URL, or enable or disable".into(),
            ));
        }
        let name = match display_name.map(str::trim) {
            Some("") => return Err(ServiceError::Invalid("the name is empty".into())),
            Some(n) => {
                check_vendor_name(n).map_err(ServiceError::Invalid)?;
                Some(n)
            }
            other => other,
        };
        let url = base_url.map(check_base_url).transpose()?;
        let moved = url
            .as_deref()
            .map(|u| (origin_of(&v.base_url), origin_of(u)))
            .filter(|(old, new)| old != new);
        let now = self.now();
        let mut tx = self.write_tx().await?;
        db::update_vendor(&mut tx, v.id, name, url.as_deref()).await?;
        if let Some((old, new)) = &moved {
            move_origin_in(&mut tx, v.id, slug, old, new, actor, now).await?;
        }
        let mut demoted: Vec<(i64, i64)> = Vec::new();
        match (enabled, v.disabled_at) {
            (Some(false), None) => {
                db::update_vendor_disabled(&mut tx, v.id, Some(now)).await?;
                demoted = db::select_vendor_entries(&mut tx, v.id).await?;
                demote_in(&mut tx, &demoted, Cause::VendorDisabled, actor, now).await?;
            }
            (Some(true), Some(_)) => db::update_vendor_disabled(&mut tx, v.id, None).await?,
            _ => {}
        }
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), name = ?name, base_url = ?url, enabled = ?enabled, demoted = demoted.len(), "vendor changed");
        // the base URL is read by calls, the name and the state by search
        self.state_changed().await;
        self.toolbox_changed().await;
        self.changed_entries(&demoted).await;
        Ok((self.vendor(slug).await?, demoted.len()))
    }

    /// Removes a vendor (issue 14.3): it is disabled (its tools leave search and refuse
    /// calls, acquire and promotion), its tools are demoted from every working set
    /// (cause `vendor_removed`; each agent affected gets list_changed), its connections
    /// are revoked with their secrets dropped (and its tools' default connections
    /// cleared), its stored document is dropped, and it
    /// leaves the vendor lists. Its tools, versions, history, calls and import history
    /// stay for the record; importing its document again (or adding a vendor with its
    /// slug) brings it back. Returns `(entries demoted, connections revoked)`.
    /// Errors: `VendorNotFound`, `Invalid` (removed already).
    pub async fn remove_vendor(&self, actor: &Actor, slug: &str) -> ServiceResult<(usize, i64)> {
        let v = self.vendor(slug).await?;
        if v.removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} was removed already"
            )));
        }
        let now = self.now();
        let mut tx = self.write_tx().await?;
        db::update_vendor_removed(&mut tx, v.id, Some(now)).await?;
        let demoted = db::select_vendor_entries(&mut tx, v.id).await?;
        demote_in(&mut tx, &demoted, Cause::VendorRemoved, actor, now).await?;
        let revoked = db::runs::revoke_vendor_connections(&mut tx, v.id, now).await?;
        // its tools' default connections are revoked: a tool brought back uses the
        // vendor's new connection, not a pin to a dead one
        db::clear_vendor_tool_connections(&mut tx, v.id).await?;
        tx.commit().await?;
        self.checkpoint().await;
        tracing::info!(vendor = slug, by = %actor.label(), demoted = demoted.len(), connections = revoked, "vendor removed");
        self.state_changed().await;
        self.toolbox_changed().await;
        self.changed_entries(&demoted).await;
        Ok((demoted.len(), revoked))
    }

    /// Whether giving vendor `slug` the base URL `new` moves it to another origin:
    /// `(old origin, new origin)` when it does (then its connections are suspended and
    /// its approvals go back to pending). Errors: `VendorNotFound`, `Invalid` (a bad URL).
    pub async fn origin_move(
        &self,
        slug: &str,
        new: &str,
    ) -> ServiceResult<Option<(String, String)>> {
        let v = self.live_vendor(slug).await?;
        let new = check_base_url(new)?;
        let (old, new) = (origin_of(&v.base_url), origin_of(&new));
        Ok((old != new).then_some((old, new)))
    }

    /// A person confirms a vendor's connections at its current base URL (after a move to
    /// another origin); returns how many were suspended. Errors: `VendorNotFound`,
    /// `Invalid` (removed, or nothing suspended).
    pub async fn confirm_connections(&self, actor: &Actor, slug: &str) -> ServiceResult<u64> {
        let v = self.live_vendor(slug).await?;
        let mut tx = self.write_tx().await?;
        let n = db::runs::confirm_vendor_connections(&mut tx, v.id).await?;
        tx.commit().await?;
        if n == 0 {
            return Err(ServiceError::Invalid(format!(
                "no connection of {slug} waits for a confirmation"
            )));
        }
        tracing::info!(vendor = slug, by = %actor.label(), connections = n, origin = %origin_of(&v.base_url), "connections confirmed at the vendor's new origin");
        self.state_changed().await;
        Ok(n)
    }

    /// Marks a vendor internal or not (security review 32.7): an internal vendor's calls
    /// may go to private and link-local addresses; loopback needs
    /// `GRAFT_VENDOR_LOOPBACK=allow` whatever the mark. Errors: `VendorNotFound`,
    /// `Invalid` (removed).
    pub async fn set_vendor_internal(
        &self,
        actor: &Actor,
        slug: &str,
        internal: bool,
    ) -> ServiceResult<VendorRow> {
        let v = self.live_vendor(slug).await?;
        let mut tx = self.write_tx().await?;
        db::update_vendor_internal(&mut tx, v.id, internal).await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), internal, "vendor marked");
        self.state_changed().await;
        self.vendor(slug).await
    }

    /// Says which parameters of vendor `slug`'s operations carry its connection's secret
    /// besides what its security schemes name (issue 25.2: a document such as Slack's
    /// declares its token as an ordinary required parameter), then imports its stored
    /// document again so its tools follow: those parameters are no longer inputs, and
    /// the secret is put in them. An empty list goes back to the schemes alone. Returns
    /// the import's report (`None` without a stored document: the next import applies
    /// it). Errors: `VendorNotFound`, `Invalid` (removed, or a name that is not a header
    /// or parameter name).
    pub async fn set_vendor_credential_params(
        &self,
        actor: &Actor,
        slug: &str,
        names: &[String],
    ) -> ServiceResult<Option<ImportReport>> {
        let v = self.live_vendor(slug).await?;
        let names: Vec<String> = names
            .iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        if let Some(bad) = names
            .iter()
            .find(|n| !crate::domain::tool::is_header_token(n) || n.contains(','))
        {
            return Err(ServiceError::Invalid(format!(
                "{bad:?} is not a parameter name"
            )));
        }
        let joined = (!names.is_empty()).then(|| names.join(","));
        let mut tx = self.write_tx().await?;
        db::update_vendor_credential_params(&mut tx, v.id, joined.as_deref()).await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), params = ?names, "credential parameters set");
        self.state_changed().await;
        match db::authoring::select_vendor_document(self.pool(), v.id).await? {
            Some(text) => Ok(Some(
                self.import_openapi_by(actor, slug, &text, None, &mut |_, _| {})
                    .await?,
            )),
            None => Ok(None),
        }
    }

    /// Spends one of an agent's promotions and demotions per hour (security review
    /// 32.8: each writes a history row); people and the rule are not metered.
    /// Errors: `Busy` saying when to try again.
    fn spend_change(&self, actor: &Actor) -> ServiceResult<()> {
        let Actor::Agent(agent_id) = actor else {
            return Ok(());
        };
        let q = &self.inner.quotas;
        self.inner
            .meter
            .spend(q, *agent_id, quota::Spend::Change)
            .map_err(|wait| ServiceError::Busy {
                message: format!(
                    "this agent promoted or demoted more than {} times in the last hour (GRAFT_AGENT_CHANGES_PER_HOUR): nothing was changed; try again in {} s",
                    q.changes_per_hour,
                    wait.as_secs().max(1)
                ),
                retry_after: wait,
            })
    }

    /// Empties SQLite's write-ahead log into the database file (after a secret was
    /// dropped); a failure is only logged: the next checkpoint does the same.
    pub(crate) async fn checkpoint(&self) {
        if let Err(e) = db::checkpoint(&self.inner.pool).await {
            tracing::warn!(error = ?e, "checkpointing the write-ahead log failed");
        }
    }

    /// Tells the agents of `(agent, tool)` entries taken out of working sets that their
    /// lists changed, each agent once.
    pub(crate) async fn changed_entries(&self, entries: &[(i64, i64)]) {
        let mut agents: Vec<i64> = entries.iter().map(|(a, _)| *a).collect();
        agents.sort_unstable();
        agents.dedup();
        self.changed(&agents).await;
    }

    /// A vendor's tools (retired ones not counted) and the working-set entries of them.
    pub async fn vendor_counts(&self, vendor_id: i64) -> ServiceResult<(i64, i64)> {
        Ok(db::select_vendor_counts(&self.inner.pool, vendor_id).await?)
    }

    /// The vendor with a slug. Errors: `VendorNotFound` naming the vendors there are.
    pub async fn vendor(&self, slug: &str) -> ServiceResult<VendorRow> {
        match db::select_vendor_by_slug(&self.inner.pool, slug).await? {
            Some(v) => Ok(v),
            None => {
                let all = self.vendor_slugs().await?;
                let list = if all.is_empty() {
                    "there are no vendors yet".to_string()
                } else {
                    format!("vendors: {}", all.join(", "))
                };
                Err(ServiceError::VendorNotFound(format!(
                    "no vendor {slug:?} ({list})"
                )))
            }
        }
    }

    /// The vendor with a slug, unless it was removed. Errors: `VendorNotFound`,
    /// `Invalid` (removed: importing its document again brings it back).
    pub async fn live_vendor(&self, slug: &str) -> ServiceResult<VendorRow> {
        let v = self.vendor(slug).await?;
        if v.removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} was removed: import its OpenAPI document again (or add a vendor {slug}) to bring it back"
            )));
        }
        Ok(v)
    }

    /// When `slug` is a removed vendor's, how many tools it has: adding a vendor with
    /// that slug brings them back (the console and CLI say so).
    pub async fn removed_vendor_tools(&self, slug: &str) -> ServiceResult<Option<i64>> {
        match db::select_vendor_by_slug(&self.inner.pool, slug).await? {
            Some(v) if v.removed_at.is_some() => Ok(Some(self.vendor_counts(v.id).await?.0)),
            _ => Ok(None),
        }
    }

    /// The slugs of removed vendors (importing a document under one brings it back).
    pub async fn removed_vendors(&self) -> ServiceResult<Vec<String>> {
        Ok(db::select_vendors(&self.inner.pool)
            .await?
            .into_iter()
            .filter(|v| v.removed_at.is_some())
            .map(|v| v.slug)
            .collect())
    }

    /// Every vendor that is not removed, by slug.
    pub async fn vendors(&self) -> ServiceResult<Vec<VendorRow>> {
        Ok(db::select_vendors(&self.inner.pool)
            .await?
            .into_iter()
            .filter(|v| v.removed_at.is_none())
            .collect())
    }

    /// Every vendor slug (the nothing-found answer and `vendor_not_found` list them).
    pub async fn vendor_slugs(&self) -> ServiceResult<Vec<String>> {
        Ok(self
            .vendors()
            .await?
            .into_iter()
            .filter(|v| v.disabled_at.is_none())
            .map(|v| v.slug)
            .collect())
    }

    /// Imports every operation of an OpenAPI document (`text`: JSON or YAML) as a tool of
    /// `vendor`, version 1, authored by `import`, and keeps the document on the vendor.
    /// With `create_base_url`, a missing vendor is created with that base URL (else the
    /// document's). Operations already imported are skipped, so a second import adds
    /// nothing. All tools go in one transaction: a failure leaves the toolbox unchanged.
    /// `progress(done, total)` follows the planning.
    /// Errors: vendor not found, a document that is not OpenAPI 2.0/3.x.
    pub async fn import_openapi(
        &self,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<ImportReport> {
        self.import_openapi_by(&Actor::Rule, vendor, text, base_url, progress)
            .await
    }

    /// [`Graft::import_openapi`] by `actor` (the person the vendor's import history
    /// names). Importing a document again updates the vendor's tools (issue 14.3), in
    /// the same transaction: an operation whose definition changed gets a new version
    /// authored by `import` (approvals go back to pending when what a call does changed,
    /// as for any version); a new operation becomes a tool; the tool of an operation gone
    /// from the document is retired (demoted from every working set with cause
    /// `retired`, kept for history); a retired tool whose operation is back is restored;
    /// tools whose current version an agent wrote are left alone. Agents whose working
    /// set changed get list_changed. The summary is kept in the vendor's import history.
    pub async fn import_openapi_by(
        &self,
        actor: &Actor,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<ImportReport> {
        let doc = openapi::parse_document(text).map_err(ServiceError::Invalid)?;
        openapi::spec_version(&doc).map_err(ServiceError::Invalid)?;
        let slug = VendorSlug::parse(vendor).map_err(ServiceError::Invalid)?;
        let override_url = base_url.map(check_base_url).transpose()?;
        let existing_vendor = db::select_vendor_by_slug(&self.inner.pool, vendor).await?;
        let current: Vec<db::ToolRow> = match &existing_vendor {
            Some(_) => db::select_vendor_tools(&self.inner.pool, vendor).await?,
            None => Vec::new(),
        };
        // an agent's tool does not keep a name the document's operation has: the import
        // takes it, and the agent's tool gets another (security review 32.20)
        let names: HashSet<String> = current
            .iter()
            .filter(|t| !t.first_author.starts_with("agent:"))
            .map(|t| t.name.clone())
            .collect();
        let agent_held: HashMap<&str, &db::ToolRow> = current
            .iter()
            .filter(|t| t.first_author.starts_with("agent:"))
            .map(|t| (t.name.as_str(), t))
            .collect();
        let imported: HashMap<String, String> = current
            .iter()
            .filter_map(|t| Some((t.operation_id.clone()?, t.name.clone())))
            .collect();
        let named = credential_names(existing_vendor.as_ref());
        let plan = openapi::plan_import_with(
            &doc,
            &slug,
            &|n| names.contains(n),
            &imported,
            &named,
            progress,
        )
        .map_err(ServiceError::Invalid)?;
        let live = current
            .iter()
            .filter(|t| t.retired_at.is_none() && t.first_author == "import")
            .count();
        if plan.tools.is_empty() && plan.existing.is_empty() && live > 0 {
            return Err(ServiceError::Invalid(format!(
                "the document has no operation Graft can import ({} operations, {} skipped): importing it would retire all {live} tools of {vendor}; nothing was changed",
                plan.total_operations,
                plan.skipped.len()
            )));
        }
        let now = self.now();
        // the vendor (when new), its tools and its document: one transaction
        let mut tx = self.write_tx().await?;
        let vendor_id = match &existing_vendor {
            Some(v) if v.removed_at.is_some() => {
                db::update_vendor_removed(&mut tx, v.id, None).await?;
                v.id
            }
            Some(v) => v.id,
            None => {
                let url = match override_url.clone().or_else(|| plan.base_url.clone()) {
                    Some(u) => check_base_url(&u)?,
                    None => {
                        return Err(ServiceError::Invalid(format!(
                            "vendor {vendor:?} does not exist and the document declares no absolute base URL: pass --base-url"
                        )))
                    }
                };
                let title = doc
                    .pointer("/info/title")
                    .and_then(|t| t.as_str())
                    .map(str::trim)
                    .filter(|t| !t.is_empty());
                db::insert_vendor(
                    &mut tx,
                    slug.as_str(),
                    &title
                        .map(|t| t.chars().take(MAX_VENDOR_NAME).collect::<String>())
                        .unwrap_or_else(|| slug.to_string()),
                    &url,
                    now,
                )
                .await?
            }
        };
        let mut moved: Vec<(String, String)> = Vec::new();
        let mut moved_ids: Vec<i64> = Vec::new();
        {
            let mut taken: HashSet<String> = current.iter().map(|t| t.name.clone()).collect();
            taken.extend(plan.tools.iter().map(|t| t.name.clone()));
            for t in &plan.tools {
                let Some(held) = agent_held.get(t.name.as_str()) else {
                    continue;
                };
                let (new_name, _) = crate::domain::names::tool_name_for(
                    &slug,
                    &format!("{}_by_agent", held.name),
                    &|n| taken.contains(n),
                );
                let new_name = new_name.to_string();
                taken.insert(new_name.clone());
                db::authoring::update_tool_name(&mut tx, held.id, &new_name).await?;
                db::authoring::insert_note_in(
                    &mut tx,
                    held.id,
                    "graft",
                    &format!(
                        "Renamed from {vendor}__{} to {vendor}__{new_name}: the vendor's OpenAPI document, imported now, has an operation of that name, and an import wins the name.",
                        held.name
                    ),
                    now,
                )
                .await?;
                moved.push((held.name.clone(), new_name));
                moved_ids.push(held.id);
            }
        }
        for t in &plan.tools {
            ToolName::parse(&slug, &t.name).map_err(|e| {
                ServiceError::Internal(anyhow::anyhow!("importer made a bad name: {e}"))
            })?;
            let binding =
                serde_json::to_value(&t.binding).map_err(|e| ServiceError::Internal(e.into()))?;
            let nv = version_row(t, &binding, t.hints, "import");
            db::insert_tool(
                &mut tx,
                vendor_id,
                &t.name,
                t.operation_id.as_deref(),
                &nv,
                now,
            )
            .await?;
        }
        let mut report = ImportReport {
            imported: plan.tools.len(),
            moved,
            adopted_base_url: match (&existing_vendor, &override_url) {
                (None, None) => plan.base_url.clone(),
                _ => None,
            },
            ..Default::default()
        };
        let by_name: HashMap<&str, &db::ToolRow> =
            current.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut notify: Vec<i64> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        // an operation still in the document that no longer drafts (now unsupported)
        // keeps its tool as it is
        let still_there: HashSet<&str> =
            plan.skipped.iter().map(|s| s.operation.as_str()).collect();
        for d in &plan.existing {
            let Some(old) = by_name.get(d.name.as_str()) else {
                continue;
            };
            seen.insert(old.name.as_str());
            if old.authored_by.starts_with("agent:") {
                report.kept.push(old.name.clone());
                continue;
            }
            // a person's version (hints, a description) stays until the document changes
            // the operation since the version import last wrote
            let baseline = if old.authored_by == "import" {
                (*old).clone()
            } else {
                match db::select_last_imported_version(&mut tx, old.id).await? {
                    Some(v) => v,
                    None => (*old).clone(),
                }
            };
            if old.retired_at.is_some() {
                db::update_tool_retired(&mut tx, old.id, None).await?;
                report.restored.push(old.name.clone());
            }
            // a person's hints survive a new version that keeps the method
            let hints = if old.hints_by.is_some() && old.method.eq_ignore_ascii_case(&d.method) {
                crate::domain::tool::Hints {
                    read_only_hint: old.read_only_hint,
                    destructive_hint: old.destructive_hint,
                    idempotent_hint: old.idempotent_hint,
                    open_world_hint: old.open_world_hint,
                }
            } else {
                d.hints
            };
            let binding =
                serde_json::to_value(&d.binding).map_err(|e| ServiceError::Internal(e.into()))?;
            let Some(what) = definition_change(&baseline, d, &binding, hints) else {
                if old.retired_at.is_none() {
                    report.unchanged += 1;
                }
                continue;
            };
            let next = old.version + 1;
            let nv = version_row(d, &binding, hints, "import");
            db::insert_tool_version(&mut tx, old.id, next, &nv, now).await?;
            match authoring::call_change(old, d, hints) {
                Some(why) => {
                    db::runs::reset_approvals(&mut tx, old.id, next, &why, now).await?;
                }
                None => db::runs::carry_approvals(&mut tx, old.id, next).await?,
            }
            notify.extend(
                db::sweep::select_entries_of_tools(&mut tx, &[old.id])
                    .await?
                    .into_iter()
                    .map(|(a, _)| a),
            );
            report.updated.push((old.name.clone(), what));
        }
        // operations gone from the document: their imported tools retire
        let gone: Vec<&db::ToolRow> = current
            .iter()
            .filter(|t| {
                t.operation_id
                    .as_deref()
                    .is_some_and(|o| !still_there.contains(o))
                    && t.retired_at.is_none()
                    && t.first_author == "import"
                    && !seen.contains(t.name.as_str())
            })
            .collect();
        for t in &gone {
            db::update_tool_retired(&mut tx, t.id, Some(now)).await?;
            report.retired.push(t.name.clone());
            let entries = db::sweep::select_entries_of_tools(&mut tx, &[t.id]).await?;
            demote_in(&mut tx, &entries, Cause::Retired, actor, now).await?;
            report.demoted += entries.len();
            notify.extend(entries.iter().map(|(a, _)| *a));
        }
        let auth = openapi::connection_hint(&doc);
        // `--base-url` on an existing vendor may move it to another origin
        let origin_moved = match (&existing_vendor, &override_url) {
            // a removed vendor brought back elsewhere too: its approvals do not follow
            (Some(v), Some(u)) if origin_of(&v.base_url) != origin_of(u) => {
                let (old, new) = (origin_of(&v.base_url), origin_of(u));
                move_origin_in(&mut tx, vendor_id, slug.as_str(), &old, &new, actor, now).await?;
                Some((old, new))
            }
            _ => None,
        };
        db::update_vendor_document(
            &mut tx,
            vendor_id,
            &doc.to_string(),
            auth.as_ref().map(|(k, n)| (*k, n.as_deref())),
            override_url.as_deref(),
        )
        .await?;
        let withheld = plan
            .tools
            .iter()
            .flat_map(|t| {
                let op = t.operation_id.clone().unwrap_or_default();
                t.binding
                    .withheld
                    .iter()
                    .map(move |(location, name)| (op.clone(), format!("{location} {name}")))
            })
            .collect();
        let report = ImportReport {
            brought_back: existing_vendor
                .as_ref()
                .is_some_and(|v| v.removed_at.is_some()),
            vendor: slug.to_string(),
            operations: plan.total_operations,
            withheld,
            renamed: plan.renamed,
            origin_moved,
            skipped: plan
                .skipped
                .into_iter()
                .map(|s| (s.operation, s.reason))
                .collect(),
            ..report
        };
        let summary =
            serde_json::to_string(&report).map_err(|e| ServiceError::Internal(e.into()))?;
        db::insert_import(&mut tx, vendor_id, &actor.label(), now, &summary).await?;
        tx.commit().await?;
        self.toolbox_changed().await;
        notify.sort_unstable();
        notify.dedup();
        self.changed(&notify).await;
        Ok(report)
    }

    /// The newest `limit` imports of every vendor: `(vendor, who, ms, summary)`.
    pub async fn recent_imports(
        &self,
        limit: i64,
    ) -> ServiceResult<Vec<(String, String, i64, ImportReport)>> {
        Ok(db::select_recent_imports(&self.inner.pool, limit)
            .await?
            .into_iter()
            .map(|(v, who, at, text)| (v, who, at, serde_json::from_str(&text).unwrap_or_default()))
            .collect())
    }

    /// The vendor's imports, newest first: `(who, ms, summary)`. Errors: `VendorNotFound`.
    pub async fn imports(&self, vendor: &str) -> ServiceResult<Vec<(String, i64, ImportReport)>> {
        let v = self.vendor(vendor).await?;
        Ok(db::select_imports(&self.inner.pool, v.id)
            .await?
            .into_iter()
            .map(|(who, at, text)| (who, at, serde_json::from_str(&text).unwrap_or_default()))
            .collect())
    }

    // ------------------------------------------------------------ toolbox search

    /// The toolbox changed (an import, a new version, a stored document): this
    /// process's indexes are rebuilt at the next search, and other processes hear of it
    /// through `change_events` (agent [`TOOLBOX_CHANGE`]).
    async fn toolbox_changed(&self) {
        self.inner.hot.bump();
        self.invalidate_search();
        if let Err(e) = db::insert_change_events(
            &self.inner.pool,
            &[TOOLBOX_CHANGE],
            &self.inner.origin,
            self.now(),
        )
        .await
        {
            tracing::warn!(error = ?e, "cannot record a toolbox change for other processes");
        }
    }

    /// Something that tool calls read changed (an agent's settings or token, a
    /// connection, a vendor): this process's caches are dropped, and other processes
    /// drop theirs through `change_events` (agent [`STATE_CHANGE`]).
    async fn state_changed(&self) {
        self.inner.hot.bump();
        if let Err(e) = db::insert_change_events(
            &self.inner.pool,
            &[STATE_CHANGE],
            &self.inner.origin,
            self.now(),
        )
        .await
        {
            tracing::warn!(error = ?e, "cannot record a change for other processes");
        }
    }

    fn invalidate_search(&self) {
        *self.inner.search.write().expect("search lock") = None;
        *self.inner.stored_ops.write().expect("cache lock") = None;
    }

    // ------------------------------------------------------------ working sets

    /// The agent's working set, stable order (vendor, name), with each tool's current
    /// version.
    pub async fn working_set(&self, agent_id: i64) -> ServiceResult<Vec<EntryRow>> {
        Ok(db::select_working_set(&self.inner.pool, agent_id).await?)
    }

    /// A tool by vendor and name, with its current version. Errors: `ToolNotFound`.
    pub async fn tool(&self, vendor: &str, name: &str) -> ServiceResult<db::ToolRow> {
        db::select_tool(&self.inner.pool, vendor, name)
            .await?
            .ok_or_else(|| {
                ServiceError::ToolNotFound(format!(
                    "no tool {vendor}__{name} in the toolbox; call find_tool to search it"
                ))
            })
    }

    /// Puts a tool in an agent's working set (SPEC §3.4 `promote`): working_set and
    /// history in one transaction, then one list_changed. Promoting a promoted tool is a
    /// no-op answering the size. Never fails on the cap (the sweep applies it).
    /// Errors: `ToolNotFound`, `AgentNotFound`.
    pub async fn promote_tool(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<SetSize> {
        self.spend_change(actor)?;
        let (by, cause) = match actor {
            Actor::Agent(_) => (PromotedBy::Agent, Cause::Agent),
            Actor::Person(_) => (PromotedBy::Console, Cause::Console),
            Actor::Rule => (PromotedBy::Rule, Cause::Rule),
        };
        self.promote_as(actor, agent_id, vendor, name, by, cause)
            .await
    }

    async fn promote_as(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
        by: PromotedBy,
        cause: Cause,
    ) -> ServiceResult<SetSize> {
        let agent = self.agent(agent_id).await?;
        let tool = self.tool(vendor, name).await?;
        usable(&tool)?;
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let changed = promote_in(&mut tx, agent_id, tool.id, by, cause, actor, now).await?;
        let size = db::count_working_set(&mut tx, agent_id).await?;
        tx.commit().await?;
        if changed {
            self.changed(&[agent_id]).await;
        }
        Ok(SetSize {
            size,
            cap: agent.cap,
            changed,
        })
    }

    /// Takes a tool out of an agent's working set (SPEC §3.4 `demote`): working_set and
    /// history in one transaction, then one list_changed.
    /// Errors: `ToolNotFound`, `NotPromoted`, `AgentNotFound`.
    pub async fn demote_tool(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<SetSize> {
        self.spend_change(actor)?;
        let cause = match actor {
            Actor::Agent(_) => Cause::Agent,
            Actor::Person(_) => Cause::Console,
            Actor::Rule => Cause::Rule,
        };
        let agent = self.agent(agent_id).await?;
        let tool = self.tool(vendor, name).await?;
        let now = self.now();
        let mut tx = self.write_tx().await?;
        if !db::delete_working_set_entry(&mut tx, agent_id, tool.id).await? {
            return Err(ServiceError::NotPromoted(format!(
                "{vendor}__{name} is not in the working set"
            )));
        }
        db::insert_history(
            &mut tx,
            agent_id,
            tool.id,
            "demote",
            cause.as_str(),
            &actor.label(),
            now,
        )
        .await?;
        let size = db::count_working_set(&mut tx, agent_id).await?;
        tx.commit().await?;
        self.changed(&[agent_id]).await;
        Ok(SetSize {
            size,
            cap: agent.cap,
            changed: true,
        })
    }

    /// An agent's history, newest first.
    pub async fn history(
        &self,
        agent_id: i64,
        limit: i64,
        offset: i64,
    ) -> ServiceResult<Vec<db::HistoryRow>> {
        Ok(db::select_history(&self.inner.pool, agent_id, limit, offset).await?)
    }

    /// The calls log (issue 14.4), newest first: at most `limit` (clamped to 1–500) calls
    /// that `filter` admits, each with its agent's and tool's names, outcome and redacted
    /// input. Every call of an agent is there, first-class or through `run_tool`, dry
    /// runs and refused ones included.
    pub async fn calls(
        &self,
        filter: &db::runs::CallFilter,
        limit: i64,
    ) -> ServiceResult<Vec<db::runs::CallLogRow>> {
        Ok(db::runs::select_call_log(&self.inner.pool, filter, limit.clamp(1, 500)).await?)
    }

    /// What the newest sweep that demoted anything demoted: `(agent, vendor, tool name,
    /// cause, ms)` rows, all at one time; empty when no sweep has demoted anything.
    pub async fn last_sweep(&self) -> ServiceResult<Vec<(String, String, String, String, i64)>> {
        Ok(db::sweep::select_last_sweep(&self.inner.pool).await?)
    }

    /// One page of the toolbox for browsing without a query (issue 14.2): `limit`
    /// (clamped to 1–200) tools from `offset` of `vendor` (a slug; none: every vendor) in
    /// `order`, and how many there are in all. Errors: `VendorNotFound` for an unknown
    /// slug, `Invalid` for a removed or disabled vendor.
    pub async fn browse_tools(
        &self,
        vendor: Option<&str>,
        order: db::BrowseOrder,
        limit: i64,
        offset: i64,
    ) -> ServiceResult<(Vec<db::BrowseRow>, i64)> {
        if let Some(v) = vendor {
            if self.live_vendor(v).await?.disabled_at.is_some() {
                return Err(ServiceError::Invalid(format!(
                    "vendor {v} is disabled: its tools are out of the Toolbox until a person enables it"
                )));
            }
        }
        Ok(db::select_toolbox_page(
            &self.inner.pool,
            vendor,
            order,
            limit.clamp(1, 200),
            offset.max(0),
        )
        .await?)
    }

    /// Every vendor with its number of tools: `(slug, display name, tools)`, by slug.
    pub async fn vendor_tool_counts(&self) -> ServiceResult<Vec<(String, String, i64)>> {
        Ok(db::select_vendor_tool_counts(&self.inner.pool).await?)
    }

    /// Number of tools in the toolbox.
    pub async fn toolbox_size(&self) -> ServiceResult<i64> {
        Ok(db::count_tools(&self.inner.pool).await?)
    }
}

/// In a transaction: puts a tool in an agent's working set unless it is there, with its
/// history row (SPEC §2: together or not at all). Returns whether the set changed.
pub(crate) async fn promote_in(
    conn: &mut db::Conn,
    agent_id: i64,
    tool_id: i64,
    by: PromotedBy,
    cause: Cause,
    actor: &Actor,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let changed = db::insert_working_set_entry(conn, agent_id, tool_id, by.as_str(), now).await?;
    if changed {
        db::insert_history(
            conn,
            agent_id,
            tool_id,
            "promote",
            cause.as_str(),
            &actor.label(),
            now,
        )
        .await?;
    }
    Ok(changed)
}

/// In a transaction: takes each `(agent, tool)` entry out of its working set with its
/// history row (`demote`, `cause`, by `actor`): the twin of [`promote_in`] for demotions
/// a change of the toolbox causes (a revoked connection, a retired tool, a disabled
/// vendor).
pub(crate) async fn demote_in(
    conn: &mut db::Conn,
    entries: &[(i64, i64)],
    cause: Cause,
    actor: &Actor,
    now: i64,
) -> Result<(), sqlx::Error> {
    for (agent_id, tool_id) in entries {
        // an entry another writer took out meanwhile gets no second history row
        if !db::delete_working_set_entry(conn, *agent_id, *tool_id).await? {
            continue;
        }
        db::insert_history(
            conn,
            *agent_id,
            *tool_id,
            "demote",
            cause.as_str(),
            &actor.label(),
            now,
        )
        .await?;
    }
    Ok(())
}

/// The stored form of a draft version (SPEC §2 `tool_versions`), with its binding as JSON
/// and the hints to store (an author's follow the method; a person's are their own).
pub(crate) fn version_row<'a>(
    d: &'a crate::domain::tool::ToolDraft,
    binding: &'a serde_json::Value,
    hints: crate::domain::tool::Hints,
    authored_by: &'a str,
) -> db::NewVersion<'a> {
    db::NewVersion {
        title: d.title.as_deref(),
        description: &d.description,
        input_schema: &d.input_schema,
        output_schema: None,
        method: &d.method,
        path_template: &d.path_template,
        binding,
        hints: [
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ],
        authored_by,
        search_text: serde_json::to_string(&domain::search::enrich::enrich_draft(d))
            .unwrap_or_default(),
    }
}

/// Refuses a tool that cannot be called or promoted: retired (its operation left the
/// vendor's document, issue 14.3). Errors: `ToolNotFound` saying so.
pub(crate) fn usable(t: &db::ToolRow) -> ServiceResult<()> {
    if t.vendor_removed_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{}: its vendor {} was removed; importing its document again brings it back",
            t.vendor, t.name, t.vendor
        )));
    }
    if t.vendor_disabled_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{}: its vendor {} is disabled; a person can enable it again",
            t.vendor, t.name, t.vendor
        )));
    }
    if t.retired_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{} was retired: the vendor's OpenAPI document no longer has its operation",
            t.vendor, t.name
        )));
    }
    Ok(())
}

/// What a re-imported operation changes in its tool's current version, in words (every
/// field: the call's shape as [`authoring::call_change`] words it, plus the title, the
/// description, the input schema and the hints), or `None` when nothing differs.
fn definition_change(
    old: &db::ToolRow,
    d: &crate::domain::tool::ToolDraft,
    binding: &serde_json::Value,
    hints: crate::domain::tool::Hints,
) -> Option<String> {
    let mut what: Vec<String> = Vec::new();
    if let Some(c) = authoring::call_change(old, d, hints) {
        what.push(c);
    } else if serde_json::from_str::<serde_json::Value>(&old.binding)
        .ok()
        .as_ref()
        != Some(binding)
    {
        what.push("the binding".into());
    }
    if old.title != d.title {
        what.push("the title".into());
    }
    if old.description != d.description {
        what.push("the description".into());
    }
    if serde_json::from_str::<serde_json::Value>(&old.input_schema)
        .ok()
        .as_ref()
        != Some(&d.input_schema)
    {
        what.push("the input schema".into());
    }
    let old_hints = [
        old.read_only_hint,
        old.destructive_hint,
        old.idempotent_hint,
        old.open_world_hint,
    ];
    let new_hints = [
        hints.read_only_hint,
        hints.destructive_hint,
        hints.idempotent_hint,
        hints.open_world_hint,
    ];
    if old_hints != new_hints {
        what.push("the hints".into());
    }
    (!what.is_empty()).then(|| what.join("; "))
}

/// A vendor's base URL moved from origin `old` to `new`: stored secrets and approved
/// writes were given for the old origin, so none of them goes to the new one until a
/// person says so (security review 32.5): its live connections are suspended and its
/// granted approvals go back to pending, both saying from where to where.
async fn move_origin_in(
    tx: &mut db::Conn,
    vendor_id: i64,
    slug: &str,
    old: &str,
    new: &str,
    actor: &Actor,
    now: i64,
) -> ServiceResult<()> {
    let why = format!("the vendor's base URL moved from {old} to {new}");
    let suspended = db::runs::suspend_vendor_connections(tx, vendor_id, &why, now).await?;
    let repended = db::runs::reset_vendor_approvals(tx, vendor_id, &why, now).await?;
    tracing::warn!(vendor = slug, by = %actor.label(), from = %old, to = %new, connections = suspended, approvals = repended.len(), "vendor moved to another origin: connections suspended, approvals pending again");
    Ok(())
}

/// The parameter names a person said carry `vendor`'s credential (issue 25.2).
pub(crate) fn credential_names(vendor: Option<&VendorRow>) -> Vec<String> {
    vendor
        .and_then(|v| v.credential_params.as_deref())
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The origin of a URL (RFC 6454: `scheme://host[:port]`, the port only when not the
/// scheme's default), or the URL itself when it does not parse.
pub fn origin_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| url.to_string())
}

/// Checks a vendor base URL: absolute `http`/`https` with a host, no query or fragment;
/// returned without a trailing `/`. Errors: `Invalid` with the reason.
pub fn check_base_url(url: &str) -> ServiceResult<String> {
    let u = url.trim();
    // the URL is quoted in errors without what precedes an '@' (it may hold a password)
    let shown = match u.split_once('@') {
        Some((_, host)) => format!("…@{host}"),
        None => u.to_string(),
    };
    let shown = shown.as_str();
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .ok_or_else(|| {
            ServiceError::Invalid(format!(
                "base URL {shown:?} must start with http:// or https://"
            ))
        })?;
    let host = rest.split('/').next().unwrap_or("");
    if url::Url::parse(u)
        .ok()
        .and_then(|p| p.host_str().map(str::to_string))
        .is_none()
    {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?} is not a valid URL"
        )));
    }
    if host.is_empty()
        || host.contains('@')
        || u.contains('?')
        || u.contains('#')
        || u.chars().any(char::is_whitespace)
    {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?} must be scheme://host[:port][/path] without user info, query or fragment"
        )));
    }
    Ok(u.trim_end_matches('/').to_string())
}
