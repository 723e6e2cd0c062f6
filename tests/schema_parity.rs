//! Issue 11.1: the PostgreSQL schema (migrations/postgres) holds the same tables,
//! columns, types, nullability and indexes as the SQLite one (migrations/sqlite), so one
//! set of queries serves both. PostgreSQL comes from `GRAFT_TEST_DATABASE_URL` (a
//! database is created on that server and dropped after) or from a throwaway cluster
//! that scripts/pg-cluster.sh starts from Debian's `postgresql` package.

use sqlx::migrate::Migrator;
use sqlx::{Connection, Executor, Row};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// `(table, column, type class, nullable)`.
type Columns = BTreeSet<(String, String, String, bool)>;

/// A PostgreSQL database for one test, dropped (or its cluster stopped) on drop.
struct Postgres {
    url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Cluster(tempfile::TempDir),
    Database { server: String, name: String },
}

impl Postgres {
    async fn start() -> Postgres {
        if let Ok(server) = std::env::var("GRAFT_TEST_DATABASE_URL") {
            let name = format!("graft_parity_{}", std::process::id());
            let mut c = sqlx::PgConnection::connect(&server).await.unwrap();
            c.execute(format!("CREATE DATABASE {name}").as_str())
                .await
                .unwrap();
            let mut url = url_of(&server);
            url.set_path(&format!("/{name}"));
            return Postgres {
                url: url.to_string(),
                cleanup: Cleanup::Database { server, name },
            };
        }
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(root().join("scripts/pg-cluster.sh"))
            .arg("start")
            .arg(dir.path().join("pg"))
            .output()
            .expect("scripts/pg-cluster.sh runs");
        assert!(
            out.status.success(),
            "the throwaway PostgreSQL did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Postgres {
            url: String::from_utf8(out.stdout).unwrap().trim().to_string(),
            cleanup: Cleanup::Cluster(dir),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::Cluster(dir) => {
                let _ = Command::new(root().join("scripts/pg-cluster.sh"))
                    .arg("stop")
                    .arg(dir.path().join("pg"))
                    .status();
            }
            Cleanup::Database { server, name } => {
                let (server, name) = (server.clone(), name.clone());
                // a fresh runtime: drop runs outside the test's
                let _ = std::thread::spawn(move || {
                    tokio::runtime::Runtime::new().unwrap().block_on(async {
                        if let Ok(mut c) = sqlx::PgConnection::connect(&server).await {
                            let _ = c
                                .execute(format!("DROP DATABASE IF EXISTS {name}").as_str())
                                .await;
                        }
                    })
                })
                .join();
            }
        }
    }
}

fn url_of(s: &str) -> url::Url {
    url::Url::parse(s).expect("GRAFT_TEST_DATABASE_URL is a postgres:// URL")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The class of a column type, the same word for both backends' spelling of it.
fn class(declared: &str) -> String {
    match declared.to_ascii_lowercase().as_str() {
        "integer" | "bigint" => "integer",
        "boolean" => "boolean",
        "text" => "text",
        "blob" | "bytea" => "bytes",
        other => other,
    }
    .to_string()
}

/// Tables that are not Graft's: the migrators' own and the console session store's
/// (tower-sessions creates it on each backend in its own shape).
fn ours(table: &str) -> bool {
    !table.starts_with("_sqlx") && !table.starts_with("sqlite_") && table != "tower_sessions"
}

#[tokio::test]
async fn postgres_and_sqlite_schemas_hold_the_same_tables_columns_and_indexes() {
    // SQLite, migrated as Graft migrates it
    let dir = tempfile::tempdir().unwrap();
    let sqlite_url = format!("sqlite://{}?mode=rwc", dir.path().join("g.db").display());
    let mut lite = sqlx::SqliteConnection::connect(&sqlite_url).await.unwrap();
    Migrator::new(root().join("migrations/sqlite"))
        .await
        .unwrap()
        .run(&mut lite)
        .await
        .unwrap();
    let mut sqlite_columns = Columns::new();
    for r in sqlx::query(
        "SELECT m.name AS t, p.name AS c, p.type AS ty, p.\"notnull\" AS nn, p.pk AS pk \
         FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'",
    )
    .fetch_all(&mut lite)
    .await
    .unwrap()
    {
        let t: String = r.get("t");
        if ours(&t) {
            // an INTEGER PRIMARY KEY is the rowid: never NULL, whatever notnull says
            let nullable = r.get::<i64, _>("nn") == 0 && r.get::<i64, _>("pk") == 0;
            sqlite_columns.insert((t, r.get("c"), class(r.get("ty")), nullable));
        }
    }
    let sqlite_indexes: BTreeSet<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
    )
    .fetch_all(&mut lite)
    .await
    .unwrap()
    .into_iter()
    .collect();

    // PostgreSQL, migrated the same way from its own files
    let pg = Postgres::start().await;
    let mut conn = sqlx::PgConnection::connect(&pg.url).await.unwrap();
    Migrator::new(root().join("migrations/postgres"))
        .await
        .unwrap()
        .run(&mut conn)
        .await
        .unwrap();
    let mut pg_columns = Columns::new();
    for r in sqlx::query(
        "SELECT table_name::text AS t, column_name::text AS c, data_type::text AS ty, is_nullable::text AS n \
         FROM information_schema.columns WHERE table_schema = 'public'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
    {
        let t: String = r.get("t");
        if ours(&t) {
            let nullable = r.get::<String, _>("n") == "YES";
            pg_columns.insert((t, r.get("c"), class(r.get("ty")), nullable));
        }
    }
    // the indexes made by CREATE INDEX (not those of keys and UNIQUE constraints)
    let pg_indexes: BTreeSet<String> = sqlx::query_scalar(
        "SELECT i.indexname::text FROM pg_indexes i WHERE i.schemaname = 'public' \
         AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname)",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .collect();

    assert!(sqlite_columns.len() > 100, "{sqlite_columns:?}");
    let only_sqlite: Vec<_> = sqlite_columns.difference(&pg_columns).collect();
    let only_pg: Vec<_> = pg_columns.difference(&sqlite_columns).collect();
    assert!(
        only_sqlite.is_empty() && only_pg.is_empty(),
        "the schemas differ:\n only in SQLite: {only_sqlite:?}\n only in PostgreSQL: {only_pg:?}"
    );
    assert_eq!(sqlite_indexes, pg_indexes);
    conn.close().await.unwrap();
}
