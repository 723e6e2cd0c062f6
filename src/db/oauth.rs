//! Queries of Graft's OAuth authorization server (SPEC §10.1, issue 26): clients,
//! grants (a person's consent: a client acting as an agent), codes and tokens, the
//! last two by their SHA-256 hashes only.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// An `oauth_clients` row.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct OAuthClientRow {
    pub id: i64,
    /// The `client_id` clients send: random for a registered client, the document's URL
    /// for a metadata client.
    pub client_id: String,
    pub name: String,
    /// JSON array of redirect URIs.
    pub redirect_uris: String,
    /// `dynamic` (RFC 7591) or `metadata` (a client ID metadata document).
    pub registered: String,
    /// When it was registered or its document first read (ms).
    pub created_at: i64,
    /// A metadata client: when its document was last read (ms).
    pub fetched_at: Option<i64>,
    /// When a person first granted it an agent (ms); `None`: unused.
    pub first_granted_at: Option<i64>,
}

const CLIENT_COLUMNS: &str =
    "id, client_id, name, redirect_uris, registered, created_at, fetched_at, first_granted_at";

/// The client with a `client_id`.
pub async fn select_oauth_client(pool: &Pool, client_id: &str) -> DbResult<Option<OAuthClientRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1"
    ))
    .bind(client_id)
    .fetch_optional(e)
    .await)
}

/// Registers a client; returns its row id.
#[allow(clippy::too_many_arguments)]
pub async fn insert_oauth_client(
    pool: &Pool,
    client_id: &str,
    name: &str,
    redirect_uris: &str,
    registered: &str,
    registered_from: Option<&str>,
    now: i64,
) -> DbResult<i64> {
    let fetched = (registered == "metadata").then_some(now);
    on_db!(pool, |e| {
        sqlx::query_scalar(
        "INSERT INTO oauth_clients (client_id, name, redirect_uris, registered, registered_from, created_at, fetched_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id"
    )
    .bind(client_id)
    .bind(name)
    .bind(redirect_uris)
    .bind(registered)
    .bind(registered_from)
    .bind(now)
    .bind(fetched)
    .fetch_one(e)
    .await
    })
}

/// A metadata client's document read again: its name and redirect URIs.
pub async fn update_oauth_client_document(
    pool: &Pool,
    id: i64,
    name: &str,
    redirect_uris: &str,
    now: i64,
) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE oauth_clients SET name = $2, redirect_uris = $3, fetched_at = $4 WHERE id = $1",
        id,
        name,
        redirect_uris,
        now
    )?;
    Ok(())
}

/// Registrations from one address since `since` (ms): the per-address rate.
pub async fn count_registrations_from(pool: &Pool, from: &str, since: i64) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM oauth_clients WHERE registered_from = $1 AND created_at >= $2"
    )
    .bind(from)
    .bind(since)
    .fetch_one(e)
    .await)
}

/// Registered clients that no person ever granted an agent.
pub async fn count_unused_clients(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT COUNT(*) FROM oauth_clients WHERE first_granted_at IS NULL"
    )
    .fetch_one(e)
    .await)
}

/// Deletes registrations older than `before` (ms) that no person ever granted an agent
/// (they have no grants, so nothing refers to them); returns how many.
pub async fn delete_unused_clients(pool: &Pool, before: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM oauth_clients WHERE first_granted_at IS NULL AND created_at < $1",
        before
    )
}

/// Deletes the `n` oldest registrations no person ever granted an agent of the network
/// (`registered_from`) that has the most of them waiting, so a flood from some networks
/// evicts its own registrations before anyone else's.
pub async fn delete_busiest_unused_clients(pool: &Pool, n: i64) -> DbResult<u64> {
    execute!(
        pool,
        "DELETE FROM oauth_clients WHERE id IN (SELECT id FROM oauth_clients WHERE first_granted_at IS NULL \
         AND registered_from = (SELECT registered_from FROM oauth_clients WHERE first_granted_at IS NULL \
           AND registered_from IS NOT NULL GROUP BY registered_from ORDER BY COUNT(*) DESC, MIN(created_at) LIMIT 1) \
         ORDER BY created_at, id LIMIT $1)",
        n
    )
}

/// A person's consent: `client` acts as `agent_id` for `resource`; returns the grant's
/// id. The client is marked used.
pub async fn insert_oauth_grant(
    conn: &mut Conn,
    client: i64,
    agent_id: i64,
    resource: &str,
    granted_by: &str,
    now: i64,
) -> DbResult<i64> {
    execute!(
        conn,
        "UPDATE oauth_clients SET first_granted_at = $2 WHERE id = $1 AND first_granted_at IS NULL",
        client,
        now
    )?;
    on_db!(conn, |e| sqlx::query_scalar(
        "INSERT INTO oauth_grants (client_id, agent_id, resource, granted_by, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id"
    )
    .bind(client)
    .bind(agent_id)
    .bind(resource)
    .bind(granted_by)
    .bind(now)
    .fetch_one(e)
    .await)
}

/// Stores an authorization code (its hash) for a grant.
pub async fn insert_oauth_code(
    conn: &mut Conn,
    code_hash: &str,
    grant_id: i64,
    redirect_uri: &str,
    code_challenge: &str,
    expires_at: i64,
) -> DbResult<()> {
    execute!(
        conn,
        "INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
        code_hash,
        grant_id,
        redirect_uri,
        code_challenge,
        expires_at
    )?;
    Ok(())
}

/// An authorization code with its grant, as the token endpoint checks it.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct OAuthCodeRow {
    pub grant_id: i64,
    pub redirect_uri: String,
    pub code_challenge: String,
    /// ms.
    pub expires_at: i64,
    /// When it was exchanged before (ms): a second use of a code.
    pub used_at: Option<i64>,
    /// The grant's client's `client_id`.
    pub client_id: String,
    pub resource: String,
    /// When the grant was revoked (ms), if it was.
    pub revoked_at: Option<i64>,
}

/// Marks a code used (a code is used once, whatever the outcome) and returns what it
/// was for, with `used_at` set when an earlier call used it already; `None` when unknown.
pub async fn take_oauth_code(
    conn: &mut Conn,
    code_hash: &str,
    now: i64,
) -> DbResult<Option<OAuthCodeRow>> {
    let row: Option<OAuthCodeRow> = on_db!(conn, |e| {
        sqlx::query_as(
        "SELECT c.grant_id, c.redirect_uri, c.code_challenge, c.expires_at, c.used_at, cl.client_id, g.resource, g.revoked_at \
         FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id JOIN oauth_clients cl ON cl.id = g.client_id \
         WHERE c.code_hash = $1"
    )
    .bind(code_hash)
    .fetch_optional(e)
    .await
    })?;
    if row.as_ref().is_some_and(|r| r.used_at.is_none()) {
        execute!(
            conn,
            "UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1",
            code_hash,
            now
        )?;
    }
    Ok(row)
}

/// Deletes codes that expired before `before` (ms), and tokens that expired before it
/// (a refresh token's replacement is newer; nothing reads an expired one).
pub async fn delete_expired_oauth(conn: &mut Conn, before: i64) -> DbResult<u64> {
    let codes = execute!(
        conn,
        "DELETE FROM oauth_codes WHERE expires_at < $1",
        before
    )?;
    let tokens = execute!(
        conn,
        "DELETE FROM oauth_tokens WHERE expires_at < $1",
        before
    )?;
    Ok(codes + tokens)
}

/// Stores a token (its hash): `kind` `access` or `refresh`.
pub async fn insert_oauth_token(
    conn: &mut Conn,
    token_hash: &str,
    grant_id: i64,
    kind: &str,
    now: i64,
    expires_at: i64,
) -> DbResult<()> {
    execute!(
        conn,
        "INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        token_hash,
        grant_id,
        kind,
        now,
        expires_at
    )?;
    Ok(())
}

/// A token with its grant and agent.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct OAuthTokenRow {
    pub id: i64,
    pub grant_id: i64,
    /// `access` or `refresh`.
    pub kind: String,
    /// ms.
    pub expires_at: i64,
    /// A refresh token: when it was exchanged (ms).
    pub used_at: Option<i64>,
    /// The token's own revocation (ms).
    pub revoked_at: Option<i64>,
    /// The grant's revocation (ms).
    pub grant_revoked_at: Option<i64>,
    pub agent_id: i64,
    pub resource: String,
    /// The grant's client's `client_id`.
    pub client_id: String,
}

/// The token with a hash.
pub async fn select_oauth_token(pool: &Pool, token_hash: &str) -> DbResult<Option<OAuthTokenRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT t.id, t.grant_id, t.kind, t.expires_at, t.used_at, t.revoked_at, g.revoked_at AS grant_revoked_at, \
         g.agent_id, g.resource, cl.client_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id \
         JOIN oauth_clients cl ON cl.id = g.client_id WHERE t.token_hash = $1"
    )
    .bind(token_hash)
    .fetch_optional(e)
    .await
    })
}

/// Marks a refresh token used unless it was; returns whether this call did (a second
/// exchange of the same token finds it used).
pub async fn use_refresh_token(conn: &mut Conn, id: i64, now: i64) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "UPDATE oauth_tokens SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL",
        id,
        now
    )? > 0)
}

/// Revokes one token.
pub async fn revoke_oauth_token(pool: &Pool, id: i64, now: i64) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE oauth_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
        id,
        now
    )?;
    Ok(())
}

/// Revokes a grant (every token of it stops working); returns whether it was live.
pub async fn revoke_oauth_grant(conn: &mut Conn, grant_id: i64, now: i64) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
        grant_id,
        now
    )? > 0)
}

/// Revokes every grant of an agent (its token was rotated, or it was removed); returns
/// how many were live.
pub async fn revoke_agent_grants(conn: &mut Conn, agent_id: i64, now: i64) -> DbResult<u64> {
    execute!(
        conn,
        "UPDATE oauth_grants SET revoked_at = $2 WHERE agent_id = $1 AND revoked_at IS NULL",
        agent_id,
        now
    )
}

/// Notes that a grant's token was used (at most once a minute per grant, by the
/// caller's choice).
pub async fn update_grant_last_used(pool: &Pool, grant_id: i64, now: i64) -> DbResult<()> {
    execute!(
        pool,
        "UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1",
        grant_id,
        now
    )?;
    Ok(())
}

/// One live grant of an agent, as its console page lists it.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct OAuthGrantRow {
    pub id: i64,
    /// The client's name (what it said of itself).
    pub client_name: String,
    /// The client's `client_id`.
    pub client_id: String,
    /// JSON array of the client's redirect URIs.
    pub redirect_uris: String,
    /// `person:<name>`.
    pub granted_by: String,
    /// ms.
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    /// When its newest unused refresh token expires (ms): the grant ends then unless
    /// the client refreshes.
    pub expires_at: Option<i64>,
}

/// An agent's grants that can act at `now` (ms): not revoked, with a live refresh token
/// or a code not exchanged yet; newest first.
pub async fn select_agent_grants(
    pool: &Pool,
    agent_id: i64,
    now: i64,
) -> DbResult<Vec<OAuthGrantRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT g.id, cl.name AS client_name, cl.client_id, cl.redirect_uris, g.granted_by, g.created_at, g.last_used_at, \
         (SELECT MAX(t.expires_at) FROM oauth_tokens t WHERE t.grant_id = g.id AND t.kind = 'refresh' \
          AND t.used_at IS NULL AND t.revoked_at IS NULL) AS expires_at \
         FROM oauth_grants g JOIN oauth_clients cl ON cl.id = g.client_id \
         WHERE g.agent_id = $1 AND g.revoked_at IS NULL AND (\
           EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.kind = 'refresh' \
                   AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at >= $2) \
           OR EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = g.id AND c.used_at IS NULL AND c.expires_at >= $2)) \
         ORDER BY g.created_at DESC, g.id DESC"
    )
    .bind(agent_id)
    .bind(now)
    .fetch_all(e)
    .await
    })
}

/// The agent a grant belongs to, when the grant is live.
pub async fn select_grant_agent(pool: &Pool, grant_id: i64) -> DbResult<Option<i64>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT agent_id FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL"
    )
    .bind(grant_id)
    .fetch_optional(e)
    .await)
}

/// The agent of a grant, live or not.
pub async fn select_grant_owner(pool: &Pool, grant_id: i64) -> DbResult<Option<i64>> {
    on_db!(pool, |e| sqlx::query_scalar(
        "SELECT agent_id FROM oauth_grants WHERE id = $1"
    )
    .bind(grant_id)
    .fetch_optional(e)
    .await)
}
