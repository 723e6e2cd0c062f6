//! Queries of vendors (SPEC §2): rows, state, stored documents, counts.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// A `vendors` row without its document.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct VendorRow {
    pub id: i64,
    /// Slug (SPEC §2).
    pub slug: String,
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
    /// its connections revoked; its tools and document stay (for history, and Restore).
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
    /// `openapi` or `mcp` (SPEC §10.2).
    pub kind: String,
    /// An MCP vendor's remote server (Streamable HTTP URL).
    pub mcp_url: Option<String>,
    /// An MCP vendor's local server: its command as a JSON array (program, arguments).
    pub mcp_command: Option<String>,
    /// The directory a local server starts in.
    pub mcp_cwd: Option<String>,
    /// When its server's tools/list was last read (ms).
    pub mcp_refreshed_at: Option<i64>,
    /// What went wrong the last time it was read or started; `None` when it worked.
    pub mcp_error: Option<String>,
    /// Whether OAuth tokens of its remote server are stored (sealed).
    pub has_oauth: bool,
    /// The connection its tools without a default of their own use (issue 28.2).
    pub default_connection_id: Option<i64>,
}

/// Changes a vendor's display name and/or base URL (each when given).
pub async fn update_vendor(
    conn: &mut Conn,
    id: i64,
    display_name: Option<&str>,
    base_url: Option<&str>,
) -> DbResult<()> {
    execute!(conn, "UPDATE vendors SET display_name = COALESCE($2, display_name), base_url = COALESCE($3, base_url) WHERE id = $1", id, display_name, base_url)?;
    Ok(())
}

/// Disables a vendor at `at` (ms) or enables it (`None`).
pub async fn update_vendor_disabled(conn: &mut Conn, id: i64, at: Option<i64>) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET disabled_at = $2 WHERE id = $1",
        id,
        at
    )?;
    Ok(())
}

/// Removes a vendor at `at` (ms; disabled too; its document is kept, so a person can
/// restore it, issue 28.11) or brings it back (`None`: enabled).
pub async fn update_vendor_removed(conn: &mut Conn, id: i64, at: Option<i64>) -> DbResult<()> {
    match at {
        Some(at) => execute!(conn, "UPDATE vendors SET removed_at = $2, disabled_at = COALESCE(disabled_at, $2) WHERE id = $1", id, at),
        None => execute!(
            conn,
            "UPDATE vendors SET removed_at = NULL, disabled_at = NULL WHERE id = $1",
            id
        ),
    }?;
    Ok(())
}

/// Forgets a vendor's stored document (a removed vendor brought back at a base URL a
/// person gives: the document was of the API it had).
pub async fn clear_vendor_document(conn: &mut Conn, id: i64) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET openapi_document = NULL WHERE id = $1",
        id
    )?;
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
    "id, slug, display_name, base_url, (openapi_document IS NOT NULL) AS has_document, created_at, disabled_at, removed_at, auth_kind, auth_name, internal, credential_params, \
     kind, mcp_url, mcp_command, mcp_cwd, mcp_refreshed_at, mcp_error, (mcp_oauth IS NOT NULL) AS has_oauth, default_connection_id";

/// Sets the parameter names a person says carry a vendor's credential (`None`: none).
pub async fn update_vendor_credential_params(
    conn: &mut Conn,
    id: i64,
    names: Option<&str>,
) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET credential_params = $1 WHERE id = $2",
        names,
        id
    )?;
    Ok(())
}

/// Marks a vendor internal or not (security review 32.7).
pub async fn update_vendor_internal(conn: &mut Conn, id: i64, internal: bool) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET internal = $1 WHERE id = $2",
        internal,
        id
    )?;
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

/// Inserts an MCP vendor (SPEC §10.2): a remote server's `url` (also its base URL) or a
/// local server's `command` (JSON array) and `cwd`; returns its id. Errors: the slug is
/// taken.
#[allow(clippy::too_many_arguments)]
pub async fn insert_mcp_vendor(
    conn: &mut Conn,
    slug: &str,
    display_name: &str,
    url: Option<&str>,
    command: Option<&str>,
    cwd: Option<&str>,
    now: i64,
) -> DbResult<i64> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "INSERT INTO vendors (slug, display_name, base_url, created_at, kind, mcp_url, mcp_command, mcp_cwd) \
         VALUES ($1, $2, $3, $4, 'mcp', $5, $6, $7) RETURNING id",
    )
    .bind(slug)
    .bind(display_name)
    .bind(url.unwrap_or(""))
    .bind(now)
    .bind(url)
    .bind(command)
    .bind(cwd)
    .fetch_one(e).await
    })
}

/// Makes vendor `id` an MCP vendor reached at `url` or by `command` in `cwd` (a removed
/// vendor's slug brought back as an MCP vendor, or a person's change of its server).
pub async fn update_vendor_mcp_server(
    conn: &mut Conn,
    id: i64,
    url: Option<&str>,
    command: Option<&str>,
    cwd: Option<&str>,
) -> DbResult<()> {
    execute!(conn, "UPDATE vendors SET kind = 'mcp', mcp_url = $2, mcp_command = $3, mcp_cwd = $4, base_url = $5, openapi_document = NULL WHERE id = $1", id, url, command, cwd, url.unwrap_or(""))?;
    Ok(())
}

/// Makes vendor `id` an OpenAPI vendor again (a removed MCP vendor's slug brought back
/// by an import or as an HTTP vendor).
pub async fn update_vendor_openapi_kind(conn: &mut Conn, id: i64) -> DbResult<()> {
    execute!(conn, "UPDATE vendors SET kind = 'openapi', mcp_url = NULL, mcp_command = NULL, mcp_cwd = NULL, mcp_refreshed_at = NULL, mcp_error = NULL, mcp_oauth = NULL WHERE id = $1", id)?;
    Ok(())
}

/// An MCP vendor's OAuth credentials, sealed (issue 27.1).
pub async fn select_vendor_oauth(pool: &Pool, vendor_id: i64) -> DbResult<Option<String>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT mcp_oauth FROM vendors WHERE id = $1"
    )
    .bind(vendor_id)
    .fetch_one(e)
    .await)
}

/// Stores (or, with `None`, drops) an MCP vendor's sealed OAuth credentials.
pub async fn update_vendor_oauth(conn: &mut Conn, id: i64, sealed: Option<&str>) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET mcp_oauth = $2 WHERE id = $1",
        id,
        sealed
    )?;
    Ok(())
}

/// Retires every tool of vendor `id` still in use (a removed vendor brought back as the
/// other kind: an OpenAPI vendor's tools mean nothing to an MCP server, and the other way
/// round); returns how many.
pub async fn update_vendor_tools_retired(conn: &mut Conn, id: i64, at: i64) -> DbResult<u64> {
    execute!(
        conn,
        "UPDATE tools SET retired_at = $2 WHERE vendor_id = $1 AND retired_at IS NULL",
        id,
        at
    )
}

/// Notes that an MCP vendor's tools/list was read at `at` (ms), or that reading or
/// starting it failed with `error` (its tools stay as they were).
pub async fn update_vendor_mcp_read(
    conn: &mut Conn,
    id: i64,
    at: Option<i64>,
    error: Option<&str>,
) -> DbResult<()> {
    execute!(conn, "UPDATE vendors SET mcp_refreshed_at = COALESCE($2, mcp_refreshed_at), mcp_error = $3 WHERE id = $1", id, at, error)?;
    Ok(())
}

/// Every vendor, by slug.
pub async fn select_vendors(pool: &Pool) -> DbResult<Vec<VendorRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {VENDOR_COLUMNS} FROM vendors ORDER BY slug"
    ))
    .fetch_all(e)
    .await)
}

/// The vendor with an id.
pub async fn select_vendor_by_id(pool: &Pool, id: i64) -> DbResult<Option<VendorRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {VENDOR_COLUMNS} FROM vendors WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(e)
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
    execute!(conn, "UPDATE vendors SET openapi_document = $1, base_url = COALESCE($2, base_url), auth_kind = $4, auth_name = $5 WHERE id = $3", document, base_url, id, auth.map(|a| a.0), auth.and_then(|a| a.1))?;
    Ok(())
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

/// A vendor's stored OpenAPI document (JSON text).
pub async fn select_vendor_document(pool: &Pool, vendor_id: i64) -> DbResult<Option<String>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT openapi_document FROM vendors WHERE id = $1"
    )
    .bind(vendor_id)
    .fetch_one(e)
    .await)
}
