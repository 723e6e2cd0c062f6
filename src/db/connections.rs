//! Queries of connections (SPEC §4.3): sealed secrets, per-tool defaults, revocation.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// Clears the default connection of every tool of a vendor.
pub async fn clear_vendor_tool_connections(conn: &mut Conn, vendor_id: i64) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE tools SET default_connection_id = NULL WHERE vendor_id = $1",
        vendor_id
    )?;
    Ok(())
}

/// A `connections` row (the secret stays sealed).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ConnectionRow {
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    pub label: String,
    /// `none`, `bearer`, `header`, `query` or `basic`.
    pub auth_kind: String,
    /// Header or query parameter name (for `header` / `query`).
    pub header_or_param_name: Option<String>,
    /// Sealed secret (base64 of nonce || ciphertext).
    pub secret_ciphertext: Option<String>,
    /// Creation time (ms).
    pub created_at: i64,
    /// Revocation time (ms).
    pub revoked_at: Option<i64>,
    /// When the vendor's base URL moved to another origin (ms): the connection sends
    /// nothing until a person confirms it there (security review 32.5).
    pub suspended_at: Option<i64>,
    /// Why, in words (the old and new origin).
    pub suspended_reason: Option<String>,
    /// When a call last used it (ms; written at most once a minute per process).
    pub last_used_at: Option<i64>,
    /// When its secret was last replaced in place (ms).
    pub secret_replaced_at: Option<i64>,
    /// Whether it is its vendor's default connection (issue 28.2).
    pub vendor_default: bool,
    /// Its vendor's kind: `openapi` or `mcp` (an MCP vendor's connections all apply).
    pub vendor_kind: String,
}

const CONNECTION_SELECT: &str =
    "SELECT c.id, v.slug AS vendor, c.label, c.auth_kind, c.header_or_param_name, \
     c.secret_ciphertext, c.created_at, c.revoked_at, c.suspended_at, c.suspended_reason, \
     c.last_used_at, c.secret_replaced_at, \
     (v.default_connection_id IS NOT NULL AND v.default_connection_id = c.id) AS vendor_default, \
     v.kind AS vendor_kind \
     FROM connections c JOIN vendors v ON v.id = c.vendor_id";

/// Replaces a connection's secret in place (a person rotates a key without a second
/// connection, issue 28.2), at `now` (ms).
pub async fn update_connection_replaced(
    conn: &mut Conn,
    id: i64,
    sealed: &str,
    now: i64,
) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE connections SET secret_ciphertext = $1, secret_replaced_at = $2 WHERE id = $3",
        sealed,
        now,
        id
    )?;
    Ok(())
}

/// Notes that a call used connection `id` at `at` (ms).
pub async fn update_connection_used(pool: &Pool, id: i64, at: i64) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE connections SET last_used_at = $1 WHERE id = $2",
        at,
        id
    )?;
    Ok(())
}

/// Sets (or clears) a vendor's default connection (issue 28.2).
pub async fn update_vendor_default_connection(
    conn: &mut Conn,
    vendor_id: i64,
    connection_id: Option<i64>,
) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE vendors SET default_connection_id = $1 WHERE id = $2",
        connection_id,
        vendor_id
    )?;
    Ok(())
}

/// Replaces a connection's sealed secret (a key rotation re-seals every secret).
pub async fn update_connection_secret(conn: &mut Conn, id: i64, sealed: &str) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE connections SET secret_ciphertext = $1 WHERE id = $2",
        sealed,
        id
    )?;
    Ok(())
}

/// Suspends every live connection of a vendor (its base URL moved to another origin:
/// `why` says from where to where); returns how many.
pub async fn suspend_vendor_connections(
    conn: &mut Conn,
    vendor_id: i64,
    why: &str,
    now: i64,
) -> DbResult<u64> {
    execute!(
        conn,
        "UPDATE connections SET suspended_at = $1, suspended_reason = $2 \
         WHERE vendor_id = $3 AND revoked_at IS NULL",
        now,
        why,
        vendor_id
    )
}

/// A person confirmed a vendor's connections at its current base URL; returns how many
/// were suspended.
pub async fn confirm_vendor_connections(conn: &mut Conn, vendor_id: i64) -> DbResult<u64> {
    execute!(
        conn,
        "UPDATE connections SET suspended_at = NULL, suspended_reason = NULL \
         WHERE vendor_id = $1 AND suspended_at IS NOT NULL",
        vendor_id
    )
}

/// Inserts a connection; returns its id. Errors: the label is taken for the vendor.
pub async fn insert_connection(
    conn: &mut Conn,
    vendor_id: i64,
    label: &str,
    auth_kind: &str,
    name: Option<&str>,
    sealed: Option<&str>,
    now: i64,
) -> DbResult<i64> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "INSERT INTO connections (vendor_id, label, auth_kind, header_or_param_name, secret_ciphertext, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(vendor_id)
    .bind(label)
    .bind(auth_kind)
    .bind(name)
    .bind(sealed)
    .bind(now)
    .fetch_one(e).await
    })
}

/// Every connection, by vendor and label.
pub async fn select_connections(pool: &Pool) -> DbResult<Vec<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} ORDER BY v.slug, c.label"
    ))
    .fetch_all(e)
    .await)
}

/// A vendor's connections.
pub async fn select_vendor_connections(
    pool: &Pool,
    vendor_id: i64,
) -> DbResult<Vec<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} WHERE c.vendor_id = $1 ORDER BY c.id"
    ))
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// A vendor's connections, read in a write transaction (what it decides on stays true
/// until it commits).
pub async fn select_vendor_connections_in(
    conn: &mut Conn,
    vendor_id: i64,
) -> DbResult<Vec<ConnectionRow>> {
    on_db!(conn, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} WHERE c.vendor_id = $1 ORDER BY c.id"
    ))
    .bind(vendor_id)
    .fetch_all(e)
    .await)
}

/// A vendor's default connection, read in a write transaction.
pub async fn select_vendor_default_connection_in(
    conn: &mut Conn,
    vendor_id: i64,
) -> DbResult<Option<i64>> {
    on_db!(conn, |e| sqlx::query_scalar(
        "SELECT default_connection_id FROM vendors WHERE id = $1"
    )
    .bind(vendor_id)
    .fetch_optional(e)
    .await)
    .map(Option::flatten)
}

/// One connection.
pub async fn select_connection(pool: &Pool, id: i64) -> DbResult<Option<ConnectionRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{CONNECTION_SELECT} WHERE c.id = $1"
    ))
    .bind(id)
    .fetch_optional(e)
    .await)
}

/// Marks a connection revoked and drops its sealed secret (a revoked secret is never
/// sent again, so it is not kept; security review 32.6); returns whether it was active.
/// A vendor whose default it was has no default after (its calls use its only live
/// connection, or ask a person to choose one).
pub async fn revoke_connection(conn: &mut Conn, id: i64, now: i64) -> DbResult<bool> {
    let r = execute!(conn, "UPDATE connections SET revoked_at = $1, secret_ciphertext = NULL WHERE id = $2 AND revoked_at IS NULL", now, id)?;
    execute!(
        conn,
        "UPDATE vendors SET default_connection_id = NULL WHERE default_connection_id = $1",
        id
    )?;
    Ok(r == 1)
}

/// Revokes every live connection of a vendor at `now` (ms) and drops the sealed secrets
/// of all of them (a removed vendor's credentials are not kept); returns how many were
/// live.
pub async fn revoke_vendor_connections(conn: &mut Conn, vendor_id: i64, now: i64) -> DbResult<i64> {
    let live: i64 = on_db!(conn, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM connections WHERE vendor_id = $1 AND revoked_at IS NULL",
    )
    .bind(vendor_id)
    .fetch_one(e)
    .await)?;
    execute!(conn, "UPDATE connections SET revoked_at = COALESCE(revoked_at, $1), secret_ciphertext = NULL WHERE vendor_id = $2", now, vendor_id)?;
    execute!(
        conn,
        "UPDATE vendors SET default_connection_id = NULL WHERE id = $1",
        vendor_id
    )?;
    Ok(live)
}

/// `(vendor id, the tool's default connection id, the vendor's default connection id)`
/// of a tool.
pub async fn select_tool_connection(
    pool: &Pool,
    tool_id: i64,
) -> DbResult<(i64, Option<i64>, Option<i64>)> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT t.vendor_id, t.default_connection_id, v.default_connection_id \
         FROM tools t JOIN vendors v ON v.id = t.vendor_id WHERE t.id = $1"
    )
    .bind(tool_id)
    .fetch_one(e)
    .await)
}

/// Sets (or clears) a tool's default connection.
pub async fn update_tool_connection(
    conn: &mut Conn,
    tool_id: i64,
    connection_id: Option<i64>,
) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE tools SET default_connection_id = $1 WHERE id = $2",
        connection_id,
        tool_id
    )?;
    Ok(())
}

/// Tools whose calls use a connection: those with it as default; the vendor's tools
/// without a default when it is the vendor's default; and, when the vendor has no
/// default and it is the vendor's only active connection, the vendor's tools without a
/// default.
pub async fn select_tools_using_connection(
    conn: &mut Conn,
    connection_id: i64,
) -> DbResult<Vec<i64>> {
    on_db!(conn, |e| {
        sqlx::query_scalar(
        "SELECT t.id FROM tools t WHERE t.default_connection_id = $1 \
         UNION \
         SELECT t.id FROM tools t JOIN vendors v ON v.id = t.vendor_id \
         WHERE v.default_connection_id = $1 AND t.default_connection_id IS NULL \
         UNION \
         SELECT t.id FROM tools t JOIN connections c ON c.vendor_id = t.vendor_id \
         JOIN vendors v ON v.id = t.vendor_id \
         WHERE c.id = $1 AND t.default_connection_id IS NULL AND c.revoked_at IS NULL \
         AND v.default_connection_id IS NULL \
         AND (SELECT COUNT(*) FROM connections o WHERE o.vendor_id = c.vendor_id AND o.revoked_at IS NULL) = 1",
    )
    .bind(connection_id)
    .fetch_all(e).await
    })
}
