//! The only module that speaks SQL (sqlx). Small named query functions, `$1`
//! placeholders, SQL that also runs on PostgreSQL. Times are `i64` milliseconds since the
//! Unix epoch (UTC).
//!
//! Multi-row changes take a `&mut Conn` so the service runs them inside one
//! transaction (SPEC §2: a promotion writes `working_set` + `history` together or not at
//! all).

pub mod authoring;
pub mod console;
pub mod copy;
pub mod runs;
pub mod sweep;

use serde_json::Value;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, Postgres};
use sqlx::sqlite::{
    Sqlite, SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{FromRow, SqliteConnection, SqlitePool, Transaction};
use std::str::FromStr;
use std::time::Duration;

/// Runs one statement on whichever backend `$on` (a [`Pool`] or a [`Conn`]) holds:
/// `on_db!(pool, |e| sqlx::query("…").bind(x).fetch_one(e).await)`. The body is compiled
/// once per backend, so one SQL string serves both (SPEC §9); `e` is `&SqlitePool` /
/// `&PgPool` for a pool and `&mut SqliteConnection` / `&mut PgConnection` for a
/// connection. Both arms must have one type: map `execute`'s result to
/// `rows_affected()`.
#[macro_export]
macro_rules! on_db {
    ($on:expr, |$e:ident| $body:expr) => {
        match $on.exec() {
            $crate::db::Exec::Sqlite($e) => $body,
            $crate::db::Exec::Postgres($e) => $body,
        }
    };
}

/// Which database a [`Pool`] speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded default (`sqlite://PATH`).
    Sqlite,
    /// PostgreSQL 14 or newer (`postgres://…`), for several instances on one database.
    Postgres,
}

impl Backend {
    /// `"sqlite"` or `"postgres"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// One backend's executor, as [`on_db!`] matches it.
pub enum Exec<S, P> {
    /// SQLite's.
    Sqlite(S),
    /// PostgreSQL's.
    Postgres(P),
}

/// The database pool: SQLite or PostgreSQL (SPEC §9), chosen by the URL at start.
#[derive(Debug, Clone)]
pub enum Pool {
    /// The embedded default.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
}

impl Pool {
    /// The executor [`on_db!`] runs statements on.
    pub fn exec(&self) -> Exec<&SqlitePool, &PgPool> {
        match self {
            Pool::Sqlite(p) => Exec::Sqlite(p),
            Pool::Postgres(p) => Exec::Postgres(p),
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite pool, when this is SQLite (its tests and tools read the file directly).
    pub fn as_sqlite(&self) -> Option<&SqlitePool> {
        match self {
            Pool::Sqlite(p) => Some(p),
            Pool::Postgres(_) => None,
        }
    }

    /// The PostgreSQL pool, when this is PostgreSQL.
    pub fn as_postgres(&self) -> Option<&PgPool> {
        match self {
            Pool::Postgres(p) => Some(p),
            Pool::Sqlite(_) => None,
        }
    }

    /// A connection of the pool, outside any transaction (each statement commits).
    /// Errors: the pool is closed or no connection came within its timeout.
    pub async fn acquire(&self) -> DbResult<Conn> {
        Ok(match self {
            Pool::Sqlite(p) => Conn::Sqlite(p.acquire().await?),
            Pool::Postgres(p) => Conn::Postgres(p.acquire().await?),
        })
    }

    /// Begins a write transaction that is the only writer until it ends, across every
    /// process on this database: SQLite's `BEGIN IMMEDIATE`; on PostgreSQL `BEGIN` and a
    /// transaction-level advisory lock ([`WRITE_LOCK_KEY`]), released at commit or
    /// rollback. Errors: no connection, or the lock was not had within the lock timeout
    /// (10 s, as SQLite's busy timeout).
    pub async fn begin_write(&self) -> DbResult<Conn> {
        Ok(match self {
            Pool::Sqlite(p) => Conn::SqliteTx(p.begin_with("BEGIN IMMEDIATE").await?),
            Pool::Postgres(p) => {
                let mut tx = p.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(WRITE_LOCK_KEY)
                    .execute(&mut *tx)
                    .await?;
                Conn::PostgresTx(tx)
            }
        })
    }

    /// Closes every connection (waits for those in use to come back).
    pub async fn close(&self) {
        match self {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
    }
}

/// The PostgreSQL advisory-lock key that write transactions take (`pg_advisory_xact_lock`):
/// "graft" in ASCII, so that it is unlikely to meet another application's key.
pub const WRITE_LOCK_KEY: i64 = 0x0067_7261_6674;

/// A connection (or transaction) to run several statements on; see [`Pool::acquire`] and
/// [`Pool::begin_write`].
pub enum Conn {
    /// A SQLite connection in autocommit.
    Sqlite(PoolConnection<Sqlite>),
    /// A PostgreSQL connection in autocommit.
    Postgres(PoolConnection<Postgres>),
    /// A SQLite transaction.
    SqliteTx(Transaction<'static, Sqlite>),
    /// A PostgreSQL transaction.
    PostgresTx(Transaction<'static, Postgres>),
}

impl Conn {
    /// The executor [`on_db!`] runs statements on.
    pub fn exec(&mut self) -> Exec<&mut SqliteConnection, &mut PgConnection> {
        match self {
            Conn::Sqlite(c) => Exec::Sqlite(&mut **c),
            Conn::Postgres(c) => Exec::Postgres(&mut **c),
            Conn::SqliteTx(t) => Exec::Sqlite(&mut **t),
            Conn::PostgresTx(t) => Exec::Postgres(&mut **t),
        }
    }

    /// Commits a transaction (nothing to do for a connection in autocommit).
    /// Errors: the commit failed; nothing of the transaction is kept.
    pub async fn commit(self) -> DbResult<()> {
        match self {
            Conn::SqliteTx(t) => t.commit().await,
            Conn::PostgresTx(t) => t.commit().await,
            Conn::Sqlite(_) | Conn::Postgres(_) => Ok(()),
        }
    }
}

/// Result of a query.
pub type DbResult<T> = Result<T, sqlx::Error>;

/// Opens the database at `url` and applies its backend's migrations
/// (`migrations/sqlite/` or `migrations/postgres/`).
///
/// - `sqlite://PATH` (or `sqlite:PATH`): created when missing, owner-only, WAL, foreign
///   keys on, 10 s busy timeout.
/// - `postgres://…` / `postgresql://…`: PostgreSQL 14 or newer; sessions run in UTC with a
///   10 s `lock_timeout` (the busy timeout's analogue) and a 10 s
///   `idle_in_transaction_session_timeout` (a stalled writer releases the write lock); a
///   connection is waited for 5 s at most.
///
/// Errors: an unsupported URL, a database that cannot be reached or opened, or a failed
/// migration.
pub async fn connect(url: &str) -> Result<Pool, sqlx::Error> {
    if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        return connect_postgres(url).await.map(Pool::Postgres);
    }
    if !url.starts_with("sqlite:") {
        return Err(sqlx::Error::Configuration(
            "unsupported DATABASE_URL: use sqlite://PATH or postgres://USER@HOST/DATABASE".into(),
        ));
    }
    let options = SqliteConnectOptions::from_str(url)?;
    owner_only(options.get_filename()).map_err(|e| {
        sqlx::Error::Configuration(
            format!(
                "cannot restrict {} to its owner: {e}",
                options.get_filename().display()
            )
            .into(),
        )
    })?;
    let options = options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        // deleted content (a revoked connection's sealed secret) is overwritten with
        // zeros, not left in free pages of the file (security review 32.6)
        .pragma("secure_delete", "ON")
        .busy_timeout(Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await?;
    sqlx::migrate!("migrations/sqlite").run(&pool).await?;
    Ok(Pool::Sqlite(pool))
}

/// Moves what the SQLite write-ahead log holds into the database file and empties the
/// log (`PRAGMA wal_checkpoint(TRUNCATE)`), so that deleted secrets do not stay in the
/// log's old frames (security review 32.6). A checkpoint blocked by readers is retried
/// by the next one; nothing to do on PostgreSQL, whose log is the server's own.
pub async fn checkpoint(pool: &Pool) -> DbResult<()> {
    if let Pool::Sqlite(p) = pool {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(p)
            .await?;
    }
    Ok(())
}

/// The query parameters sqlx's PostgreSQL driver reads from a URL.
const POSTGRES_PARAMS: &[&str] = &[
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "statement-cache-capacity",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
];

/// Refuses a PostgreSQL URL with a query parameter the driver does not read: sqlx would
/// log it with its value at warn level (`?pass=…` put a password in the log; security
/// review 32.18). The error names the parameter, never its value.
fn check_postgres_params(url: &str) -> Result<(), sqlx::Error> {
    let Ok(u) = url::Url::parse(url) else {
        return Ok(()); // sqlx says what is wrong with it
    };
    for (k, _) in u.query_pairs() {
        if !POSTGRES_PARAMS.contains(&k.as_ref()) && !k.starts_with("options[") {
            return Err(sqlx::Error::Configuration(
                format!(
                    "the database URL has a parameter the PostgreSQL driver does not read: {k:?} (its value is not shown); known: {}",
                    POSTGRES_PARAMS.join(", ")
                )
                .into(),
            ));
        }
    }
    Ok(())
}

/// Opens a PostgreSQL pool and migrates it (see [`connect`]).
async fn connect_postgres(url: &str) -> Result<PgPool, sqlx::Error> {
    check_postgres_params(url)?;
    let options = PgConnectOptions::from_str(url)?
        .options([
            ("lock_timeout", "10s"),
            // a writer that stalls inside a transaction (a frozen process, a partition)
            // loses it, and with it the write lock every instance waits for
            ("idle_in_transaction_session_timeout", "10s"),
            ("TimeZone", "UTC"),
            // "relation already exists, skipping" and the like are not news
            ("client_min_messages", "warning"),
        ])
        .application_name("graft");
    // one connection first: its error says why ("Connection refused", a bad password),
    // where the pool's would only say that it timed out
    {
        use sqlx::Connection;
        PgConnection::connect_with(&options).await?.close().await?;
    }
    let pool = PgPoolOptions::new()
        .max_connections(16)
        // a database that went away answers database_unavailable in seconds
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options)
        .await?;
    sqlx::migrate!("migrations/postgres").run(&pool).await?;
    Ok(pool)
}

/// Makes the database file at `path` readable by its owner only (0600 on Unix), creating
/// it empty when missing so that SQLite never creates it with the umask's mode; SQLite
/// gives its `-wal` and `-shm` files the database file's mode, and existing ones are
/// narrowed too. In-memory databases (sqlx names them `file:sqlx-in-memory-N`) are left
/// alone.
/// Errors: the file cannot be created or its mode set.
fn owner_only(path: &std::path::Path) -> std::io::Result<()> {
    let name = path.to_string_lossy();
    if name.is_empty() || name == ":memory:" || name.starts_with("file:") {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let parent_exists = path
            .parent()
            .is_none_or(|d| d.as_os_str().is_empty() || d.is_dir());
        // a missing directory is SQLite's error to report ("unable to open")
        if !path.exists() && parent_exists {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let p = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
            if let Ok(meta) = std::fs::metadata(&p) {
                if meta.permissions().mode() & 0o077 != 0 {
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))?;
                }
            }
        }
    }
    Ok(())
}

/// Whether `e` says the database cannot be reached rather than that a statement failed:
/// I/O and TLS errors, a pool that timed out or closed, and PostgreSQL's connection
/// exceptions (SQLSTATE class 08), operator interventions (57P01–57P03: shutdown,
/// crash, "cannot connect now"), a lock not had within `lock_timeout` (55P03: another
/// instance holds the write lock too long) and a transaction PostgreSQL ended because it
/// sat idle (25P03: this process was frozen while it held the lock). sqlx drops broken connections and opens new
/// ones, so the next statement after the database is back succeeds.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            c.starts_with("08") || c.starts_with("57P") || c == "55P03" || c == "25P03"
        }),
        _ => false,
    }
}

/// What is wrong with a value the database refused to store, when that is the input's
/// fault rather than Graft's: PostgreSQL refuses NUL characters in text (SQLSTATE
/// 22021, 22P05) and index entries over ~2.7 kB (54000); SQLite stores both.
pub fn refused_value(e: &sqlx::Error) -> Option<&'static str> {
    let sqlx::Error::Database(d) = e else {
        return None;
    };
    match d.code()?.as_ref() {
        "22021" | "22P05" => Some("text with a NUL character (\\u0000) cannot be stored"),
        "54000" => Some("a value is too long to be stored"),
        _ => None,
    }
}

/// Whether `e` is a unique-constraint violation.
pub fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

// ---------------------------------------------------------------- agents

/// An `agents` row.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct AgentRow {
    /// Id.
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// Harness label (e.g. "hermes").
    pub harness: Option<String>,
    /// Working-set cap, 1..=500.
    pub cap: i64,
    /// Idle window in days, 1..=3650.
    pub idle_window_days: i64,
    /// Creation time (ms).
    pub created_at: i64,
    /// Last authenticated request (ms).
    pub last_seen_at: Option<i64>,
}

const AGENT_COLUMNS: &str = "id, name, harness, cap, idle_window_days, created_at, last_seen_at";

/// Inserts an agent; returns its id. Errors: the name or token hash is taken (unique).
pub async fn insert_agent(
    pool: &Pool,
    name: &str,
    harness: Option<&str>,
    token_hash: &str,
    cap: i64,
    idle_window_days: i64,
    now: i64,
) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "INSERT INTO agents (name, harness, token_hash, cap, idle_window_days, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(name)
    .bind(harness)
    .bind(token_hash)
    .bind(cap)
    .bind(idle_window_days)
    .bind(now)
    .fetch_one(e)
    .await)
}

/// Every agent, by name.
pub async fn select_agents(pool: &Pool) -> DbResult<Vec<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents ORDER BY name"
    ))
    .fetch_all(e)
    .await)
}

/// `(agent id, working-set size)` of every agent with at least one entry.
pub async fn select_working_set_sizes(pool: &Pool) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT agent_id, COUNT(*) FROM working_set GROUP BY agent_id"
    )
    .fetch_all(e)
    .await)
}

/// The agent holding a token hash.
pub async fn select_agent_by_token_hash(
    pool: &Pool,
    token_hash: &str,
) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE token_hash = $1"
    ))
    .bind(token_hash)
    .fetch_optional(e)
    .await)
}

/// The agent with a name.
pub async fn select_agent_by_name(pool: &Pool, name: &str) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE name = $1"
    ))
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// The agent with an id.
pub async fn select_agent(pool: &Pool, id: i64) -> DbResult<Option<AgentRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(e)
    .await)
}

/// Sets `last_seen_at`.
pub async fn update_agent_last_seen(pool: &Pool, id: i64, now: i64) -> DbResult<()> {
    on_db!(pool, |e| sqlx::query(
        "UPDATE agents SET last_seen_at = $1 WHERE id = $2"
    )
    .bind(now)
    .bind(id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

// ---------------------------------------------------------------- vendors

/// A `vendors` row without its document.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct VendorRow {
    /// Id.
    pub id: i64,
    /// Slug (SPEC §2).
    pub slug: String,
    /// Display name.
    pub display_name: String,
    /// Base URL every request of its tools starts with.
    pub base_url: String,
    /// Whether an OpenAPI document is stored.
    pub has_document: bool,
    /// Creation time (ms).
    pub created_at: i64,
    /// When a person disabled it (ms): its tools leave search and refuse calls.
    pub disabled_at: Option<i64>,
    /// When a person removed it (ms; issue 14.3): disabled too, hidden from the lists,
    /// its document dropped and its connections revoked; its tools stay for history.
    pub removed_at: Option<i64>,
    /// The connection kind its document's securitySchemes call for (`bearer`, `header`,
    /// `query`, `basic`), read at import; `None` without a document or a usable scheme.
    pub auth_kind: Option<String>,
    /// The header or query parameter an `apiKey` scheme names.
    pub auth_name: Option<String>,
    /// A person marked it internal: its calls may reach private and link-local
    /// addresses (security review 32.7).
    pub internal: bool,
    /// Parameter names a person said carry the connection's secret (comma-separated;
    /// issue 25.2), for documents that declare the credential as an ordinary parameter.
    pub credential_params: Option<String>,
}

/// Changes a vendor's display name and/or base URL (each when given).
pub async fn update_vendor(
    conn: &mut Conn,
    id: i64,
    display_name: Option<&str>,
    base_url: Option<&str>,
) -> DbResult<()> {
    on_db!(conn, |e| {
        sqlx::query(
        "UPDATE vendors SET display_name = COALESCE($2, display_name), base_url = COALESCE($3, base_url) WHERE id = $1",
    )
    .bind(id)
    .bind(display_name)
    .bind(base_url)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// Disables a vendor at `at` (ms) or enables it (`None`).
pub async fn update_vendor_disabled(conn: &mut Conn, id: i64, at: Option<i64>) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE vendors SET disabled_at = $2 WHERE id = $1"
    )
    .bind(id)
    .bind(at)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Removes a vendor at `at` (ms; disabled too, its document dropped) or brings it back
/// (`None`: enabled, with no document until one is imported).
pub async fn update_vendor_removed(conn: &mut Conn, id: i64, at: Option<i64>) -> DbResult<()> {
    match at {
        Some(at) => on_db!(conn, |e| {
            sqlx::query(
            "UPDATE vendors SET removed_at = $2, disabled_at = COALESCE(disabled_at, $2), openapi_document = NULL WHERE id = $1",
        )
        .bind(id)
        .bind(at)
        .execute(e)
        .await
        .map(|r| r.rows_affected())
        }),
        None => on_db!(conn, |e| sqlx::query(
            "UPDATE vendors SET removed_at = NULL, disabled_at = NULL WHERE id = $1"
        )
        .bind(id)
        .execute(e)
        .await
        .map(|r| r.rows_affected())),
    }?;
    Ok(())
}

/// Clears the default connection of every tool of a vendor.
pub async fn clear_vendor_tool_connections(conn: &mut Conn, vendor_id: i64) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tools SET default_connection_id = NULL WHERE vendor_id = $1"
    )
    .bind(vendor_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A vendor's tools (retired ones not counted) and the working-set entries of its tools.
pub async fn select_vendor_counts(pool: &Pool, vendor_id: i64) -> DbResult<(i64, i64)> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM tools WHERE vendor_id = $1 AND retired_at IS NULL), \
         (SELECT COUNT(*) FROM working_set w JOIN tools t ON t.id = w.tool_id WHERE t.vendor_id = $1)",
    )
    .bind(vendor_id)
    .fetch_one(e).await
    })
}

/// `(agent, tool)` of every working-set entry of a vendor's tools.
pub async fn select_vendor_entries(conn: &mut Conn, vendor_id: i64) -> DbResult<Vec<(i64, i64)>> {
    on_db!(conn, |e| {
        sqlx::query_as(
        "SELECT w.agent_id, w.tool_id FROM working_set w JOIN tools t ON t.id = w.tool_id WHERE t.vendor_id = $1",
    )
    .bind(vendor_id)
    .fetch_all(e).await
    })
}

const VENDOR_COLUMNS: &str =
    "id, slug, display_name, base_url, (openapi_document IS NOT NULL) AS has_document, created_at, disabled_at, removed_at, auth_kind, auth_name, internal, credential_params";

/// Sets the parameter names a person says carry a vendor's credential (`None`: none).
pub async fn update_vendor_credential_params(
    conn: &mut Conn,
    id: i64,
    names: Option<&str>,
) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE vendors SET credential_params = $1 WHERE id = $2"
    )
    .bind(names)
    .bind(id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Marks a vendor internal or not (security review 32.7).
pub async fn update_vendor_internal(conn: &mut Conn, id: i64, internal: bool) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE vendors SET internal = $1 WHERE id = $2"
    )
    .bind(internal)
    .bind(id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Inserts a vendor; returns its id. Errors: the slug is taken.
pub async fn insert_vendor(
    conn: &mut Conn,
    slug: &str,
    display_name: &str,
    base_url: &str,
    now: i64,
) -> DbResult<i64> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "INSERT INTO vendors (slug, display_name, base_url, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(slug)
    .bind(display_name)
    .bind(base_url)
    .bind(now)
    .fetch_one(e).await
    })
}

/// Every vendor, by slug.
pub async fn select_vendors(pool: &Pool) -> DbResult<Vec<VendorRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {VENDOR_COLUMNS} FROM vendors ORDER BY slug"
    ))
    .fetch_all(e)
    .await)
}

/// The vendor with a slug.
pub async fn select_vendor_by_slug(pool: &Pool, slug: &str) -> DbResult<Option<VendorRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {VENDOR_COLUMNS} FROM vendors WHERE slug = $1"
    ))
    .bind(slug)
    .fetch_optional(e)
    .await)
}

/// Stores a vendor's OpenAPI document (JSON text), how it says calls authenticate
/// (`auth`: connection kind and header or parameter name, from its securitySchemes) and,
/// when given, its base URL.
pub async fn update_vendor_document(
    conn: &mut Conn,
    id: i64,
    document: &str,
    auth: Option<(&str, Option<&str>)>,
    base_url: Option<&str>,
) -> DbResult<()> {
    on_db!(conn, |e| {
        sqlx::query(
        "UPDATE vendors SET openapi_document = $1, base_url = COALESCE($2, base_url), auth_kind = $4, auth_name = $5 WHERE id = $3",
    )
    .bind(document)
    .bind(base_url)
    .bind(id)
    .bind(auth.map(|a| a.0))
    .bind(auth.and_then(|a| a.1))
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

// ---------------------------------------------------------------- tools

/// A tool with its current (newest) version, as lists and calls need it.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct ToolRow {
    /// Tool id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Name within the vendor.
    pub name: String,
    /// The OpenAPI operation key it came from.
    pub operation_id: Option<String>,
    /// Current version number.
    pub version: i64,
    /// Title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Input schema (JSON text).
    pub input_schema: String,
    /// Output schema (JSON text).
    pub output_schema: Option<String>,
    /// HTTP method.
    pub method: String,
    /// Path template.
    pub path_template: String,
    /// Binding (JSON text).
    pub binding: String,
    /// MCP readOnlyHint.
    pub read_only_hint: bool,
    /// MCP destructiveHint.
    pub destructive_hint: bool,
    /// MCP idempotentHint.
    pub idempotent_hint: bool,
    /// MCP openWorldHint.
    pub open_world_hint: bool,
    /// Who made the current version: `agent:<id>`, `person:<name>` or `import`.
    pub authored_by: String,
    /// Who made version 1 (an agent-authored tool asks a person before its first call).
    pub first_author: String,
    /// The person whose hints the tool carries (they survive publishes), if any.
    pub hints_by: Option<String>,
    /// The person who marked the tool read-only, since the last version an agent wrote.
    pub read_only_by: Option<String>,
    /// When a re-import retired it (its operation left the document), ms.
    pub retired_at: Option<i64>,
    /// When its vendor was disabled, ms.
    pub vendor_disabled_at: Option<i64>,
    /// When its vendor was removed, ms (its vendor is disabled as well).
    pub vendor_removed_at: Option<i64>,
}

impl ToolRow {
    /// Whether a call needs a person's approval first (SPEC §4.4, issue 12.15): a write
    /// (by method and readOnlyHint); and, whatever the method, a definition an agent
    /// wrote (a tool an agent described with `acquire`, or a version an agent published;
    /// not version 1 of an operation taken as the vendor's document describes it) until
    /// a person marks it read-only (`graft tool hints … --read-only true`) after the last
    /// version an agent wrote.
    pub fn gated(&self) -> bool {
        let by_agent = |who: &str| who.starts_with("agent:");
        let agent_tool = by_agent(&self.first_author) && self.operation_id.is_none();
        let agent_version =
            by_agent(&self.authored_by) && !(self.version == 1 && self.operation_id.is_some());
        let person_vouched =
            self.read_only_by.is_some() && self.read_only_hint && !by_agent(&self.authored_by);
        crate::service::run::writes(&self.method, self.read_only_hint)
            || ((agent_tool || agent_version) && !person_vouched)
    }
}

const TOOL_SELECT: &str = "SELECT t.id, vd.slug AS vendor, t.name, t.operation_id, v.version, v.title, v.description, \
     v.input_schema, v.output_schema, v.method, v.path_template, v.binding, v.read_only_hint, v.destructive_hint, \
     v.idempotent_hint, v.open_world_hint, v.authored_by, t.hints_by, t.read_only_by, t.retired_at, \
     vd.disabled_at AS vendor_disabled_at, vd.removed_at AS vendor_removed_at, \
     (SELECT f.authored_by FROM tool_versions f WHERE f.tool_id = t.id AND f.version = 1) AS first_author \
     FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
     JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id)";

/// A new tool version to insert.
#[derive(Debug, Clone)]
pub struct NewVersion<'a> {
    /// Title.
    pub title: Option<&'a str>,
    /// Description.
    pub description: &'a str,
    /// Input schema.
    pub input_schema: &'a Value,
    /// Output schema.
    pub output_schema: Option<&'a Value>,
    /// HTTP method.
    pub method: &'a str,
    /// Path template.
    pub path_template: &'a str,
    /// Binding.
    pub binding: &'a Value,
    /// Hints: read-only, destructive, idempotent, open-world.
    pub hints: [bool; 4],
    /// `agent:<id>`, `console:<user>` or `import`.
    pub authored_by: &'a str,
    /// The version's search text (JSON of `domain::search::SearchText`).
    pub search_text: String,
}

/// Inserts a tool and its version 1; returns the tool id. Errors: the name is taken.
pub async fn insert_tool(
    conn: &mut Conn,
    vendor_id: i64,
    name: &str,
    operation_id: Option<&str>,
    v: &NewVersion<'_>,
    now: i64,
) -> DbResult<i64> {
    let id: i64 = on_db!(conn, |e| {
        sqlx::query_scalar(
        "INSERT INTO tools (vendor_id, name, operation_id, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(vendor_id)
    .bind(name)
    .bind(operation_id)
    .bind(now)
    .fetch_one(e).await
    })?;
    insert_tool_version(conn, id, 1, v, now).await?;
    Ok(id)
}

/// Inserts version `version` of a tool.
pub async fn insert_tool_version(
    conn: &mut Conn,
    tool_id: i64,
    version: i64,
    v: &NewVersion<'_>,
    now: i64,
) -> DbResult<()> {
    on_db!(conn, |e| {
        sqlx::query(
        "INSERT INTO tool_versions (tool_id, version, title, description, input_schema, output_schema, method, \
         path_template, binding, read_only_hint, destructive_hint, idempotent_hint, open_world_hint, authored_by, created_at, search_text) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    )
    .bind(tool_id)
    .bind(version)
    .bind(v.title)
    .bind(v.description)
    .bind(v.input_schema.to_string())
    .bind(v.output_schema.map(|s| s.to_string()))
    .bind(v.method)
    .bind(v.path_template)
    .bind(v.binding.to_string())
    .bind(v.hints[0])
    .bind(v.hints[1])
    .bind(v.hints[2])
    .bind(v.hints[3])
    .bind(v.authored_by)
    .bind(now)
    .bind(&v.search_text)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// Names and operation keys of a vendor's tools.
pub async fn select_tool_names(
    pool: &Pool,
    vendor_id: i64,
) -> DbResult<Vec<(String, Option<String>)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT name, operation_id FROM tools WHERE vendor_id = $1"
    )
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// A tool by vendor slug and name, with its current version.
pub async fn select_tool(pool: &Pool, vendor: &str, name: &str) -> DbResult<Option<ToolRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TOOL_SELECT} WHERE vd.slug = $1 AND t.name = $2"
    ))
    .bind(vendor)
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// `(tool id, vendor, name, description, read-only, destructive)` of every tool's current
/// version, for search.
pub async fn select_search_docs(pool: &Pool) -> DbResult<Vec<SearchDocRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT t.id, vd.slug AS vendor, vd.display_name AS vendor_name, t.name, v.read_only_hint, v.destructive_hint, v.search_text \
         FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
         JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) \
         WHERE t.retired_at IS NULL AND vd.disabled_at IS NULL ORDER BY t.id",
    )
    .fetch_all(e).await
    })
}

/// A tool's current version as the search index reads it.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct SearchDocRow {
    /// Tool id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Vendor display name.
    pub vendor_name: String,
    /// Tool name.
    pub name: String,
    /// readOnlyHint.
    pub read_only_hint: bool,
    /// destructiveHint.
    pub destructive_hint: bool,
    /// Search text JSON (NULL before it was computed).
    pub search_text: Option<String>,
}

/// Versions without search text (made before it existed): `(version id, tool name,
/// operation key, title, description, method, path template, input schema)`.
pub async fn select_versions_without_search_text(
    pool: &Pool,
) -> DbResult<
    Vec<(
        i64,
        String,
        Option<String>,
        Option<String>,
        String,
        String,
        String,
        String,
    )>,
> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT v.id, t.name, t.operation_id, v.title, v.description, v.method, v.path_template, v.input_schema \
         FROM tool_versions v JOIN tools t ON t.id = v.tool_id WHERE v.search_text IS NULL",
    )
    .fetch_all(e).await
    })
}

/// Sets a version's search text.
pub async fn update_version_search_text(
    conn: &mut Conn,
    version_id: i64,
    text: &str,
) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tool_versions SET search_text = $1 WHERE id = $2"
    )
    .bind(text)
    .bind(version_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Every stored embedding of `model`: `(text hash, vector bytes)`.
pub async fn select_embeddings(pool: &Pool, model: &str) -> DbResult<Vec<(String, Vec<u8>)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT text_hash, vector FROM embeddings WHERE model = $1"
    )
    .bind(model)
    .fetch_all(e)
    .await)
}

/// Stores embeddings of `model` (`(text hash, vector bytes)`); one already stored stays.
pub async fn insert_embeddings(
    conn: &mut Conn,
    model: &str,
    rows: &[(String, Vec<u8>)],
) -> DbResult<()> {
    for chunk in rows.chunks(200) {
        on_db!(conn, |e| {
            let mut qb =
                sqlx::QueryBuilder::new("INSERT INTO embeddings (model, text_hash, vector) ");
            qb.push_values(chunk, |mut b, (hash, vector)| {
                b.push_bind(model).push_bind(hash).push_bind(vector);
            });
            qb.push(" ON CONFLICT (model, text_hash) DO NOTHING");
            qb.build().execute(e).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(())
}

/// Number of tools in the toolbox.
pub async fn count_tools(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM tools t JOIN vendors v ON v.id = t.vendor_id \
         WHERE t.retired_at IS NULL AND v.removed_at IS NULL",
    )
    .fetch_one(e)
    .await)
}

// ---------------------------------------------------------------- working sets

/// A working-set entry with its tool's current version.
#[derive(Debug, Clone, FromRow, PartialEq)]
pub struct EntryRow {
    /// The tool.
    #[sqlx(flatten)]
    pub tool: ToolRow,
    /// When it was promoted (ms).
    pub promoted_at: i64,
    /// `agent`, `publish`, `console` or `rule`.
    pub promoted_by: String,
}

/// The agent's working set in a stable order (vendor, name).
pub async fn select_working_set(pool: &Pool, agent_id: i64) -> DbResult<Vec<EntryRow>> {
    let sql = TOOL_SELECT.replacen(
        "SELECT t.id,",
        "SELECT ws.promoted_at, ws.promoted_by, t.id,",
        1,
    ) + " JOIN working_set ws ON ws.tool_id = t.id WHERE ws.agent_id = $1 ORDER BY vd.slug, t.name";
    on_db!(pool, |e| sqlx::query_as(&sql)
        .bind(agent_id)
        .fetch_all(e)
        .await)
}

/// An agent's working set as `(tool id, current version)`, ordered by vendor and name.
pub async fn select_working_set_versions(pool: &Pool, agent_id: i64) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT t.id, (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) FROM working_set ws \
         JOIN tools t ON t.id = ws.tool_id JOIN vendors vd ON vd.id = t.vendor_id \
         WHERE ws.agent_id = $1 ORDER BY vd.slug, t.name",
    )
    .bind(agent_id)
    .fetch_all(e).await
    })
}

/// Tools with their current version, by id.
pub async fn select_tools_by_ids(pool: &Pool, ids: &[i64]) -> DbResult<Vec<ToolRow>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(on_db!(pool, |e| {
            let mut qb = sqlx::QueryBuilder::new(format!("{TOOL_SELECT} WHERE t.id IN ("));
            let mut list = qb.separated(", ");
            for id in chunk {
                list.push_bind(*id);
            }
            qb.push(")");
            qb.build_query_as::<ToolRow>().fetch_all(e).await
        })?);
    }
    Ok(out)
}

/// Ids of the tools in an agent's working set.
pub async fn select_working_set_ids(pool: &Pool, agent_id: i64) -> DbResult<Vec<i64>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT tool_id FROM working_set WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}

/// Size of an agent's working set.
pub async fn count_working_set(conn: &mut Conn, agent_id: i64) -> DbResult<i64> {
    on_db!(conn, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM working_set WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_one(e)
    .await)
}

/// Adds an entry unless present; returns whether a row was inserted.
pub async fn insert_working_set_entry(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    promoted_by: &str,
    now: i64,
) -> DbResult<bool> {
    let r = on_db!(conn, |e| {
        sqlx::query(
        "INSERT INTO working_set (agent_id, tool_id, promoted_at, promoted_by) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (agent_id, tool_id) DO NOTHING",
    )
    .bind(agent_id)
    .bind(tool_id)
    .bind(now)
    .bind(promoted_by)
    .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(r == 1)
}

/// Removes an entry; returns whether a row was deleted.
pub async fn delete_working_set_entry(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
) -> DbResult<bool> {
    let r = on_db!(conn, |e| sqlx::query(
        "DELETE FROM working_set WHERE agent_id = $1 AND tool_id = $2"
    )
    .bind(agent_id)
    .bind(tool_id)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(r == 1)
}

/// Appends a history row.
pub async fn insert_history(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    action: &str,
    cause: &str,
    actor: &str,
    now: i64,
) -> DbResult<()> {
    on_db!(conn, |e| {
        sqlx::query("INSERT INTO history (agent_id, tool_id, action, cause, actor, at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(agent_id)
        .bind(tool_id)
        .bind(action)
        .bind(cause)
        .bind(actor)
        .bind(now)
        .execute(e).await.map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// A history row with the tool's qualified parts.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct HistoryRow {
    /// Id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// `promote` or `demote`.
    pub action: String,
    /// Cause (SPEC §1).
    pub cause: String,
    /// Who acted.
    pub actor: String,
    /// When (ms).
    pub at: i64,
}

/// An agent's history, newest first.
pub async fn select_history(
    pool: &Pool,
    agent_id: i64,
    limit: i64,
    offset: i64,
) -> DbResult<Vec<HistoryRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT h.id, vd.slug AS vendor, t.name, h.action, h.cause, h.actor, h.at FROM history h \
         JOIN tools t ON t.id = h.tool_id JOIN vendors vd ON vd.id = t.vendor_id \
         WHERE h.agent_id = $1 ORDER BY h.at DESC, h.id DESC LIMIT $2 OFFSET $3",
    )
    .bind(agent_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(e)
    .await)
}

/// A tool as the console's Toolbox lists it when browsing (issue 14.2): its current
/// version's method and hints, and its use summed over every agent.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct BrowseRow {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// Current version's description.
    pub description: String,
    /// Current version's HTTP method (as stored).
    pub method: String,
    /// readOnlyHint.
    pub read_only_hint: bool,
    /// destructiveHint.
    pub destructive_hint: bool,
    /// Calls that reached the vendor, every agent's together.
    pub calls: i64,
    /// The last such call (ms), by any agent.
    pub last_used_at: Option<i64>,
}

/// How the Toolbox orders tools when browsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowseOrder {
    /// By vendor slug, then name.
    Name,
    /// Most calls first, then by vendor slug and name.
    Use,
}

/// One page of the toolbox (`limit` tools from `offset`) of one vendor or all, in
/// `order`, with the number of tools in all.
pub async fn select_toolbox_page(
    pool: &Pool,
    vendor: Option<&str>,
    order: BrowseOrder,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<BrowseRow>, i64)> {
    let order_by = match order {
        BrowseOrder::Name => "vd.slug, t.name",
        BrowseOrder::Use => "calls DESC, vd.slug, t.name",
    };
    let rows = on_db!(pool, |e| {
        sqlx::query_as(&format!(
        "SELECT vd.slug AS vendor, t.name, v.description, v.method, v.read_only_hint, v.destructive_hint, \
         COALESCE(u.calls, 0) AS calls, u.last_used_at FROM tools t JOIN vendors vd ON vd.id = t.vendor_id \
         JOIN tool_versions v ON v.tool_id = t.id AND v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id) \
         LEFT JOIN (SELECT tool_id, CAST(SUM(calls) AS BIGINT) AS calls, MAX(last_used_at) AS last_used_at FROM tool_usage GROUP BY tool_id) u \
         ON u.tool_id = t.id WHERE ($1 IS NULL OR vd.slug = $1) AND t.retired_at IS NULL AND vd.disabled_at IS NULL ORDER BY {order_by} LIMIT $2 OFFSET $3"
    ))
    .bind(vendor)
    .bind(limit)
    .bind(offset)
    .fetch_all(e).await
    })?;
    let total = on_db!(pool, |e| {
        sqlx::query_scalar(
        "SELECT COUNT(*) FROM tools t JOIN vendors vd ON vd.id = t.vendor_id WHERE ($1 IS NULL OR vd.slug = $1) AND t.retired_at IS NULL AND vd.disabled_at IS NULL",
    )
    .bind(vendor)
    .fetch_one(e).await
    })?;
    Ok((rows, total))
}

/// Every vendor with its number of tools: `(slug, display name, tools)`, by slug.
pub async fn select_vendor_tool_counts(pool: &Pool) -> DbResult<Vec<(String, String, i64)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT vd.slug, vd.display_name, COUNT(t.id) FROM vendors vd LEFT JOIN tools t ON t.vendor_id = vd.id AND t.retired_at IS NULL \
         WHERE vd.disabled_at IS NULL \
         GROUP BY vd.id, vd.slug, vd.display_name ORDER BY vd.slug",
    )
    .fetch_all(e).await
    })
}

/// A tool with its newest version that import wrote (instead of its current one), when
/// there is one.
pub async fn select_last_imported_version(
    conn: &mut Conn,
    tool_id: i64,
) -> DbResult<Option<ToolRow>> {
    let sql = TOOL_SELECT.replace(
        "v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id)",
        "v.version = (SELECT MAX(version) FROM tool_versions WHERE tool_id = t.id AND authored_by = 'import')",
    ) + " WHERE t.id = $1";
    on_db!(conn, |e| sqlx::query_as(&sql)
        .bind(tool_id)
        .fetch_optional(e)
        .await)
}

/// Marks a tool retired at `at` (ms), or restores it (`None`).
pub async fn update_tool_retired(conn: &mut Conn, tool_id: i64, at: Option<i64>) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "UPDATE tools SET retired_at = $2 WHERE id = $1"
    )
    .bind(tool_id)
    .bind(at)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Records an import of a vendor's document: who (`person:<name>`, `rule`), when (ms),
/// and its summary (JSON of the service's import report).
pub async fn insert_import(
    conn: &mut Conn,
    vendor_id: i64,
    actor: &str,
    at: i64,
    summary: &str,
) -> DbResult<()> {
    on_db!(conn, |e| sqlx::query(
        "INSERT INTO imports (vendor_id, actor, at, summary) VALUES ($1, $2, $3, $4)"
    )
    .bind(vendor_id)
    .bind(actor)
    .bind(at)
    .bind(summary)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The newest `limit` imports of every vendor: `(vendor slug, actor, ms, summary JSON)`.
pub async fn select_recent_imports(
    pool: &Pool,
    limit: i64,
) -> DbResult<Vec<(String, String, i64, String)>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT vd.slug, i.actor, i.at, i.summary FROM imports i JOIN vendors vd ON vd.id = i.vendor_id \
         ORDER BY i.at DESC, i.id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(e).await
    })
}

/// A vendor's imports, newest first: `(actor, ms, summary JSON)`.
pub async fn select_imports(pool: &Pool, vendor_id: i64) -> DbResult<Vec<(String, i64, String)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT actor, at, summary FROM imports WHERE vendor_id = $1 ORDER BY at DESC, id DESC",
    )
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// Every tool of a vendor with its current version, by name.
pub async fn select_vendor_tools(pool: &Pool, vendor: &str) -> DbResult<Vec<ToolRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TOOL_SELECT} WHERE vd.slug = $1 ORDER BY t.name"
    ))
    .bind(vendor)
    .fetch_all(e)
    .await)
}

/// Number of history rows of an agent.
pub async fn count_history(pool: &Pool, agent_id: i64) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM history WHERE agent_id = $1"
    )
    .bind(agent_id)
    .fetch_one(e)
    .await)
}

/// The PostgreSQL channel that announces change events (`LISTEN graft_changes`); see
/// [`insert_change_events`] for its payload.
pub const CHANGES_CHANNEL: &str = "graft_changes";

/// Records that agents' working sets changed, from process `origin` (SPEC §3.5).
///
/// On PostgreSQL the rows are written in one transaction holding the write lock
/// ([`WRITE_LOCK_KEY`]), so ids become visible in the order they were given (a reader's
/// cursor never passes an id that commits later), and the same transaction announces
/// them on [`CHANGES_CHANNEL`] (delivered at commit) with the payload
/// `"<origin> <id>,<id>,…"` (agent ids; `0` the toolbox, `-1` an agent's or a
/// connection's state), or `"<origin> *"` when the list would pass PostgreSQL's
/// 8,000-byte payload limit. Listeners read the rows themselves; the payload lets them
/// skip their own changes. SQLite's single writer already keeps ids in commit order.
/// Errors: the database failed; nothing was recorded.
pub async fn insert_change_events(
    pool: &Pool,
    agents: &[i64],
    origin: &str,
    now: i64,
) -> DbResult<()> {
    if agents.is_empty() {
        return Ok(());
    }
    let mut conn = match pool {
        Pool::Sqlite(_) => pool.acquire().await?,
        Pool::Postgres(_) => pool.begin_write().await?,
    };
    // 3 parameters a row: 1,000 rows stay under every backend's limit on parameters
    for chunk in agents.chunks(1000) {
        on_db!(conn, |e| {
            let mut qb =
                sqlx::QueryBuilder::new("INSERT INTO change_events (agent_id, origin, at) ");
            qb.push_values(chunk, |mut b, a| {
                b.push_bind(*a).push_bind(origin).push_bind(now);
            });
            qb.build().execute(e).await.map(|r| r.rows_affected())
        })?;
    }
    if let Conn::PostgresTx(tx) = &mut conn {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANGES_CHANNEL)
            .bind(change_payload(origin, agents))
            .execute(&mut **tx)
            .await?;
    }
    conn.commit().await
}

/// The [`CHANGES_CHANNEL`] payload of a change batch (see [`insert_change_events`]).
pub fn change_payload(origin: &str, agents: &[i64]) -> String {
    let ids: Vec<String> = agents.iter().map(i64::to_string).collect();
    let payload = format!("{origin} {}", ids.join(","));
    if payload.len() < 7_900 {
        payload
    } else {
        format!("{origin} *")
    }
}

/// The origin a [`CHANGES_CHANNEL`] payload names (its first word).
pub fn payload_origin(payload: &str) -> &str {
    payload.split(' ').next().unwrap_or("")
}

/// Change events after `after` from other origins: `(id, agent id)`.
pub async fn select_change_events(
    pool: &Pool,
    after: i64,
    origin: &str,
) -> DbResult<Vec<(i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, agent_id FROM change_events WHERE id > $1 AND origin <> $2 ORDER BY id",
    )
    .bind(after)
    .bind(origin)
    .fetch_all(e)
    .await)
}

/// The newest change event id (0 when none).
pub async fn select_last_change_event(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COALESCE(MAX(id), 0) FROM change_events"
    )
    .fetch_one(e)
    .await)
}

/// Forgets change events older than `before` (ms), except the newest: `id` is SQLite's
/// rowid (no AUTOINCREMENT), so the next id is the largest present plus one, and an
/// emptied table would hand out ids again that other processes' cursors have passed
/// (they would never see those changes).
pub async fn delete_change_events_before(pool: &Pool, before: i64) -> DbResult<()> {
    on_db!(pool, |e| sqlx::query(
        "DELETE FROM change_events WHERE at < $1 AND id < (SELECT MAX(id) FROM change_events)",
    )
    .bind(before)
    .execute(e)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}
