//! Backend plumbing: the [`Pool`] and [`Conn`] over SQLite or PostgreSQL, [`on_db!`]
//! that runs one SQL string on either, and [`connect`] (SPEC §9).

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, Postgres};
use sqlx::sqlite::{
    Sqlite, SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{SqliteConnection, SqlitePool, Transaction};
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

/// Runs one statement that returns no rows on either backend and answers how many rows it
/// changed: `execute!(pool, "UPDATE agents SET name = $1 WHERE id = $2", name, id)` is
/// [`on_db!`] with one `.bind` per argument, in order, then `execute` and
/// `rows_affected()`. Evaluates to `Result<u64, sqlx::Error>`.
#[macro_export]
macro_rules! execute {
    ($on:expr, $sql:expr $(, $arg:expr)* $(,)?) => {
        $crate::on_db!($on, |e| sqlx::query($sql)
            $(.bind($arg))*
            .execute(e)
            .await
            .map(|r| r.rows_affected()))
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

/// The file a `sqlite://…` URL names, or `None` for any other URL (`graft db copy`
/// checks that the installation it copies exists).
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    SqliteConnectOptions::from_str(url)
        .ok()
        .map(|o| o.get_filename().to_path_buf())
}
