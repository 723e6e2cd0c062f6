//! Console sign-in sessions' table (`tower_sessions`: SQLite migration 0005, PostgreSQL
//! migration 0002): tower-sessions' sqlx store on Graft's backend (SPEC §6).

use super::{DbResult, Pool};
use tower_sessions::session_store::ExpiredDeletion;
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// tower-sessions' sqlx store on Graft's backend.
#[derive(Debug, Clone)]
pub enum SessionDb {
    /// On SQLite.
    Sqlite(SqliteStore),
    /// On PostgreSQL.
    Postgres(PostgresStore),
}

impl SessionDb {
    /// The store over `pool`, in the schema Graft's tables are in. Errors: PostgreSQL
    /// could not say its current schema, or refused the table name.
    pub async fn open(pool: &Pool) -> DbResult<SessionDb> {
        Ok(match pool {
            Pool::Sqlite(p) => SessionDb::Sqlite(SqliteStore::new(p.clone())),
            Pool::Postgres(p) => {
                let schema: String = sqlx::query_scalar("SELECT current_schema()")
                    .fetch_one(p)
                    .await?;
                let store = PostgresStore::new(p.clone())
                    .with_schema_name(&schema)
                    .and_then(|s| s.with_table_name("tower_sessions"))
                    .map_err(|e| sqlx::Error::Configuration(e.into()))?;
                SessionDb::Postgres(store)
            }
        })
    }
}

#[async_trait::async_trait]
impl tower_sessions::session_store::SessionStore for SessionDb {
    async fn create(
        &self,
        record: &mut tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.create(record).await,
            SessionDb::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(
        &self,
        record: &tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.save(record).await,
            SessionDb::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<Option<tower_sessions::session::Record>> {
        match self {
            SessionDb::Sqlite(s) => s.load(id).await,
            SessionDb::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.delete(id).await,
            SessionDb::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for SessionDb {
    async fn delete_expired(&self) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.delete_expired().await,
            SessionDb::Postgres(s) => s.delete_expired().await,
        }
    }
}
