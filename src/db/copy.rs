//! `graft db copy`: moves a SQLite installation up to PostgreSQL (issue 11.6, SPEC §9).
//! Every table, in one PostgreSQL transaction, from one SQLite read transaction (a
//! consistent snapshot); connection secrets are copied sealed, as they are, so the
//! PostgreSQL instances need the same secret key. Console sign-in sessions are not
//! copied: people sign in again.

use super::Pool;
use sqlx::postgres::Postgres;
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, Row};

/// The tables Graft copies, parents before children (foreign keys). A table of either
/// schema that is not here (and is not bookkeeping: `_sqlx_migrations`, `sqlite_*`,
/// `tower_sessions`) makes the copy refuse to start, so a new table is never left
/// behind silently.
pub const TABLES: [&str; 30] = [
    "vendors",
    "connections",
    "tools",
    "tool_versions",
    "tool_notes",
    "starter_templates",
    "agents",
    "working_set",
    "tool_usage",
    "history",
    "approvals",
    "approval_decisions",
    "audit_events",
    "call_details",
    "tool_calls",
    "change_events",
    "users",
    "embeddings",
    "imports",
    "recent_searches",
    "search_evidence",
    "starter_template_tools",
    "agent_starter_tools",
    "oauth_clients",
    "oauth_grants",
    "oauth_codes",
    "oauth_tokens",
    "call_counts",
    "agent_call_days",
    "webhook_settings",
];

/// Rows read from SQLite and written to PostgreSQL at a time.
const BATCH_ROWS: i64 = 500;

/// One copied table: its name and the rows found on both sides after the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub table: &'static str,
    /// Rows in the SQLite table, which the PostgreSQL table was checked to hold too.
    pub rows: i64,
}

/// Why a copy did not happen. Nothing was written either way.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The copy refused to start or to commit (the message says why).
    #[error("{0}; nothing was copied")]
    Refused(String),
    /// A database failed (or PostgreSQL refused a value).
    #[error("{0}; nothing was copied")]
    Db(sqlx::Error),
}

impl From<sqlx::Error> for CopyError {
    fn from(e: sqlx::Error) -> Self {
        CopyError::Db(e)
    }
}

/// A value of one column, by its PostgreSQL type.
enum Cell {
    Int(Option<i64>),
    Bool(Option<bool>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

/// Copies every table of `from` (SQLite) into `to` (PostgreSQL, migrated and empty)
/// and checks each table's row count on both sides before committing; identity
/// sequences continue after the copied ids, and the target is analyzed.
///
/// Errors (nothing is written): [`CopyError::Refused`]: `from` is not SQLite or `to` not PostgreSQL; the target
/// holds rows already (`Configuration`, naming the table); a table is unknown to the
/// copy; a count differs. [`CopyError::Db`]: a database failed, or PostgreSQL refused a
/// value (e.g. a NUL character in a text).
pub async fn copy_sqlite_to_postgres(from: &Pool, to: &Pool) -> Result<Vec<Copied>, CopyError> {
    let (Pool::Sqlite(src), Pool::Postgres(dst)) = (from, to) else {
        return Err(CopyError::Refused(
            "graft db copy copies a SQLite database into a PostgreSQL one".into(),
        ));
    };
    let mut src = src.acquire().await?;
    let mut dst = dst.acquire().await?;
    // every table of both schemas must be known here
    let sqlite_tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut *src)
            .await?;
    let pg_tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::TEXT FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    .fetch_all(&mut *dst)
    .await?;
    for t in sqlite_tables.iter().chain(&pg_tables) {
        let bookkeeping =
            t.starts_with("_sqlx") || t.starts_with("sqlite_") || t == "tower_sessions";
        if !bookkeeping && !TABLES.contains(&t.as_str()) {
            return Err(CopyError::Refused(format!(
                "graft db copy does not know the table {t}"
            )));
        }
    }
    let mut read = src.begin().await?;
    let mut write = dst.begin().await?;
    // a mistyped data directory opens a new, empty database: nothing to move up
    let mut source_rows = 0i64;
    for table in TABLES {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&mut *read)
            .await?;
        source_rows += n;
    }
    if source_rows == 0 {
        return Err(CopyError::Refused(
            "the SQLite database is empty: is --data-dir (or DATABASE_URL) the installation's?"
                .into(),
        ));
    }
    for table in TABLES {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&mut *write)
            .await?;
        if n > 0 {
            return Err(CopyError::Refused(format!(
                "the target database is not empty ({table} has {n} rows): graft db copy \
                 only fills an empty database"
            )));
        }
    }
    let mut copied = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let columns: Vec<(String, String)> = sqlx::query_as(
            "SELECT column_name::TEXT, data_type::TEXT FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
        )
        .bind(table)
        .fetch_all(&mut *write)
        .await?;
        let names: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
        let list = names.join(", ");
        let mut last_rowid = i64::MIN;
        let mut rows_copied = 0i64;
        loop {
            let rows: Vec<SqliteRow> = sqlx::query(&format!(
                "SELECT rowid, {list} FROM {table} WHERE rowid > $1 ORDER BY rowid LIMIT {BATCH_ROWS}"
            ))
            .bind(last_rowid)
            .fetch_all(&mut *read)
            .await?;
            let Some(last) = rows.last() else { break };
            last_rowid = last.try_get(0)?;
            let mut batch: Vec<Vec<Cell>> = Vec::with_capacity(rows.len());
            for row in &rows {
                let mut cells = Vec::with_capacity(columns.len());
                for (i, (name, ty)) in columns.iter().enumerate() {
                    let at = i + 1;
                    let cell = match ty.as_str() {
                        "bigint" | "integer" => Cell::Int(row.try_get(at)?),
                        "boolean" => Cell::Bool(row.try_get(at)?),
                        "text" => Cell::Text(row.try_get(at)?),
                        "bytea" => Cell::Bytes(row.try_get(at)?),
                        other => {
                            return Err(CopyError::Refused(format!(
                                "graft db copy cannot copy {table}.{name} of type {other}"
                            )))
                        }
                    };
                    cells.push(cell);
                }
                batch.push(cells);
            }
            let mut qb =
                sqlx::QueryBuilder::<Postgres>::new(format!("INSERT INTO {table} ({list}) "));
            qb.push_values(batch, |mut b, cells| {
                for c in cells {
                    match c {
                        Cell::Int(v) => b.push_bind(v),
                        Cell::Bool(v) => b.push_bind(v),
                        Cell::Text(v) => b.push_bind(v),
                        Cell::Bytes(v) => b.push_bind(v),
                    };
                }
            });
            if let Err(e) = qb.build().execute(&mut *write).await {
                // which table, and which rows, PostgreSQL refused (a NUL in a text, say)
                return Err(CopyError::Refused(format!(
                    "PostgreSQL refused a row of {table} (one of the {} after rowid {}): {e}",
                    rows.len(),
                    rows.first()
                        .and_then(|r| r.try_get::<i64, _>(0).ok())
                        .unwrap_or(0)
                        - 1
                )));
            }
            rows_copied += rows.len() as i64;
        }
        let had: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&mut *read)
            .await?;
        let has: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&mut *write)
            .await?;
        if had != has || had != rows_copied {
            return Err(CopyError::Refused(format!(
                "{table}: {had} rows in SQLite, {rows_copied} copied, {has} in PostgreSQL"
            )));
        }
        if names.contains(&"id") {
            sqlx::query(&format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {table}"
            ))
            .execute(&mut *write)
            .await?;
        }
        copied.push(Copied { table, rows: had });
    }
    write.commit().await?;
    read.rollback().await?;
    // statistics for the planner now, not at autovacuum's leisure: without them the
    // first sweep over a big copy can take minutes (seen: 133 s, then 0.9 s)
    sqlx::query("ANALYZE").execute(&mut *dst).await?;
    Ok(copied)
}
