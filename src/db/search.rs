//! Queries of search data (SPEC §3.4): each version's search text and stored embeddings.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

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
    execute!(
        conn,
        "UPDATE tool_versions SET search_text = $1 WHERE id = $2",
        text,
        version_id
    )?;
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
