//! Graft as its own OAuth 2.1 authorization server for MCP clients (SPEC §10.1, issue
//! 26; MCP 2025-11-25 and 2026-07-28 "Authorization"): clients register (RFC 7591) or
//! are known by a client ID metadata document; a person's consent on the console makes
//! a grant (that client acts as one agent); the code (PKCE S256, RFC 7636; 60 s, once)
//! becomes an access token (`GRAFT_OAUTH_ACCESS_TTL`) and a refresh token
//! (`GRAFT_OAUTH_REFRESH_TTL`) that rotates; tokens are opaque, stored hashed, bound to
//! the grant's (agent, client, resource = `<public URL>/mcp`, RFC 8707) and revocable
//! (RFC 7009). Errors are RFC 6749 §5.2 / RFC 7591 §3.2.2 codes with a description.

use super::{hash_token, random_hex, Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::oauth as rules;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Prefix of an OAuth access token (`graft_oat_` + 64 hex digits): `/mcp` tells it from
/// an agent's own token (`graft_` + 64 hex) without a second lookup.
pub const ACCESS_PREFIX: &str = "graft_oat_";
/// Prefix of an OAuth refresh token.
pub const REFRESH_PREFIX: &str = "graft_ort_";
/// How long an authorization code lives (OAuth 2.1 §4.1.2 recommends at most 10 min).
pub const CODE_TTL: Duration = Duration::from_secs(60);
/// How long a client ID metadata document is trusted before it is read again.
pub const METADATA_TTL: Duration = Duration::from_secs(3600);
/// Largest client ID metadata document read, in bytes.
pub const METADATA_MAX_BYTES: usize = 16 * 1024;
/// How long reading a metadata document may take.
pub const METADATA_TIMEOUT: Duration = Duration::from_secs(5);
/// Registrations one address may make per hour.
pub const REGISTRATIONS_PER_HOUR: i64 = 20;
/// Registered clients no person has granted an agent yet, at most: past it, the oldest
/// waiting ones are deleted to make room.
pub const MAX_UNUSED_CLIENTS: i64 = 500;
/// How long a registration waits for a person's approval before it is deleted (ms).
pub const UNUSED_CLIENT_TTL_MS: i64 = 3_600_000;

/// The authorization server's settings (configuration: `GRAFT_OAUTH_ACCESS_TTL`,
/// `GRAFT_OAUTH_REFRESH_TTL`, `GRAFT_OAUTH_ALLOWED_SCHEMES`).
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// Access token lifetime (default 1 hour).
    pub access_ttl: Duration,
    /// Refresh token lifetime (default 30 days); each refresh starts a new one.
    pub refresh_ttl: Duration,
    /// Custom redirect URI schemes an operator allows beyond the built-in ones.
    pub allowed_schemes: Vec<String>,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            access_ttl: Duration::from_secs(3600),
            refresh_ttl: Duration::from_secs(30 * 24 * 3600),
            allowed_schemes: Vec::new(),
        }
    }
}

/// What the authorization server keeps in memory: its settings and when each grant's
/// use was last written.
#[derive(Debug, Default)]
pub(super) struct OAuthState {
    pub(super) settings: OAuthSettings,
    pub(super) last_used: Mutex<HashMap<i64, i64>>,
}

impl OAuthState {
    pub(super) fn new(settings: OAuthSettings) -> Self {
        Self {
            settings,
            last_used: Mutex::new(HashMap::new()),
        }
    }
}

/// An error of the token, registration or revocation endpoint: an RFC 6749 §5.2 /
/// RFC 7591 §3.2.2 / RFC 8707 `error` code, a description, and the HTTP status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
    /// `invalid_target`, `invalid_redirect_uri`, `invalid_client_metadata`,
    /// `temporarily_unavailable`, `server_error`.
    pub error: &'static str,
    pub description: String,
    /// 400, 401 (invalid_client), 429 (too many registrations) or 503.
    pub status: u16,
}

impl OAuthError {
    pub(super) fn new(error: &'static str, description: impl Into<String>) -> Self {
        let status = match error {
            "invalid_client" => 401,
            _ => 400,
        };
        Self {
            error,
            description: description.into(),
            status,
        }
    }
}

impl From<ServiceError> for OAuthError {
    fn from(e: ServiceError) -> Self {
        tracing::error!(error = %e, "the authorization server failed");
        Self {
            error: "server_error",
            description: "the authorization server could not complete the request; try again"
                .into(),
            status: 503,
        }
    }
}

impl From<db::DbError> for OAuthError {
    fn from(e: db::DbError) -> Self {
        ServiceError::from(e).into()
    }
}

/// A client as the consent page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// Row id.
    pub id: i64,
    /// The `client_id` it sends.
    pub client_id: String,
    /// What it calls itself.
    pub name: String,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Whether it is known by a metadata document (its `client_id` is that URL) rather
    /// than a registration anyone could have made.
    pub by_metadata: bool,
    /// Whether a person approved it for an agent before.
    pub approved: bool,
}

/// A registration's answer (RFC 7591 §3.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub client: OAuthClient,
    /// `client_id_issued_at`, seconds since the epoch.
    pub issued_at: i64,
}

/// The parameters of an authorization request (OAuth 2.1 §4.1.1, RFC 8707, RFC 7636).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct AuthorizationRequest {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

/// An authorization request that may be shown to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedAuthorization {
    pub client: OAuthClient,
    /// The redirect URI the answer goes to.
    pub redirect_uri: String,
    pub code_challenge: String,
    pub state: Option<String>,
    /// The resource the token will be for (`<public URL>/mcp`).
    pub resource: String,
}

/// Why an authorization request cannot be shown to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeRefusal {
    /// The client or its redirect URI is unknown or wrong: the answer must not go to
    /// the redirect URI (OAuth 2.1 §4.1.2.1); the page says why.
    Show(String),
    /// Anything else: the client hears it at its redirect URI (this URL, with `error`,
    /// `error_description`, `state` and `iss`).
    Redirect(String),
}

/// Which agent a person connects a client to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentChoice {
    /// An agent that exists, by name.
    Existing(String),
    /// A new agent with this name, cap and idle window (defaults when `None`).
    New {
        name: String,
        cap: Option<i64>,
        idle_window_days: Option<i64>,
    },
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    /// `Bearer`.
    pub token_type: &'static str,
    /// Seconds.
    pub expires_in: u64,
    pub refresh_token: String,
}

/// A live grant on an agent's console page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OAuthGrantView {
    pub id: i64,
    /// The client's name.
    pub client: String,
    /// The host its redirects go to (what a person recognises: `claude.ai`).
    pub redirect_host: String,
    /// `person:<name>`.
    pub granted_by: String,
    /// ms.
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    /// When it ends unless the client refreshes (ms).
    pub expires_at: Option<i64>,
}

pub(super) fn client_of(row: db::OAuthClientRow) -> OAuthClient {
    OAuthClient {
        id: row.id,
        by_metadata: row.registered == "metadata",
        approved: row.first_granted_at.is_some(),
        redirect_uris: serde_json::from_str(&row.redirect_uris).unwrap_or_default(),
        client_id: row.client_id,
        name: row.name,
    }
}

/// `uri` with `pairs` added to its query (the values form-encoded).
fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    match url::Url::parse(uri) {
        Ok(mut u) => {
            {
                let mut q = u.query_pairs_mut();
                for (k, v) in pairs {
                    q.append_pair(k, v);
                }
            }
            u.to_string()
        }
        Err(_) => uri.to_string(),
    }
}

pub(super) fn ms(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

impl Graft {
    /// The issuer (RFC 8414): Graft's public URL without a trailing slash.
    pub fn oauth_issuer(&self) -> &str {
        &self.inner.public_url
    }

    /// The resource every OAuth token is for: `<public URL>/mcp`
    /// ([`rules::mcp_resource`]).
    pub fn mcp_resource(&self) -> String {
        rules::mcp_resource(&self.inner.public_url)
    }

    /// The authorization server's settings.
    pub fn oauth_settings(&self) -> &OAuthSettings {
        &self.inner.oauth.settings
    }

    /// Registers a client (RFC 7591): `metadata` is the request's JSON, `from` the
    /// client's network (its IPv4 address or IPv6 /64; at most
    /// [`REGISTRATIONS_PER_HOUR`] from one); registrations no person approved within
    /// an hour are deleted, and past [`MAX_UNUSED_CLIENTS`] the oldest of the network
    /// with the most waiting (a flood evicts its own first). Errors:
    /// `invalid_redirect_uri`, `invalid_client_metadata`, or 429
    /// `temporarily_unavailable` over the rate.
    pub async fn register_oauth_client(
        &self,
        metadata: &serde_json::Value,
        from: Option<&str>,
    ) -> Result<Registered, OAuthError> {
        let meta = rules::read_client_metadata(metadata, &self.oauth_settings().allowed_schemes)
            .map_err(|(e, d)| OAuthError::new(e, d))?;
        let now = self.now();
        let too_many = |d: String| OAuthError {
            error: "temporarily_unavailable",
            description: d,
            status: 429,
        };
        if let Some(addr) = from {
            if db::count_registrations_from(self.pool(), addr, now - 3_600_000).await?
                >= REGISTRATIONS_PER_HOUR
            {
                return Err(too_many(format!(
                    "at most {REGISTRATIONS_PER_HOUR} registrations an hour from one address"
                )));
            }
        }
        // a registration is used within minutes (the person approves right away): one
        // not approved within an hour goes, and over the cap the oldest waiting ones make
        // room, so filling the cap never locks real clients out
        db::delete_unused_clients(self.pool(), now - UNUSED_CLIENT_TTL_MS).await?;
        let waiting = db::count_unused_clients(self.pool()).await?;
        if waiting >= MAX_UNUSED_CLIENTS {
            db::delete_busiest_unused_clients(self.pool(), waiting - MAX_UNUSED_CLIENTS + 1)
                .await?;
        }
        let client_id = random_hex(16);
        let uris = serde_json::to_string(&meta.redirect_uris)
            .map_err(|e| ServiceError::Internal(e.into()))?;
        let id = db::insert_oauth_client(
            self.pool(),
            &client_id,
            &meta.name,
            &uris,
            "dynamic",
            from,
            now,
        )
        .await?;
        tracing::info!(client = %meta.name, client_id = %client_id, "an OAuth client registered");
        Ok(Registered {
            client: OAuthClient {
                id,
                client_id,
                name: meta.name,
                redirect_uris: meta.redirect_uris,
                by_metadata: false,
                approved: false,
            },
            issued_at: now / 1000,
        })
    }

    /// The client with `client_id`: a registered one, or one whose `client_id` is the
    /// URL of its metadata document, read (bounded, with the vendors' SSRF rules) and
    /// kept for [`METADATA_TTL`]. Errors: a sentence for the consent page (unknown, or
    /// a document that cannot be read or does not name itself).
    pub async fn oauth_client(&self, client_id: &str) -> Result<OAuthClient, String> {
        if client_id.is_empty() || client_id.len() > rules::MAX_FIELD_BYTES {
            return Err("the request names no valid client_id".into());
        }
        let known = db::select_oauth_client(self.pool(), client_id)
            .await
            .map_err(|e| e.to_string())?;
        let loopback = self.inner.proxy.limits().vendor_loopback;
        if !rules::is_metadata_client_id(client_id, loopback) {
            return known
                .map(client_of)
                .ok_or_else(|| format!("no OAuth client {client_id:?} is registered here: the client must register (or use a client ID metadata document) first"));
        }
        let now = self.now();
        if let Some(row) = known.as_ref() {
            if row.fetched_at.is_some_and(|f| now - f < ms(METADATA_TTL)) {
                return Ok(client_of(row.clone()));
            }
        }
        let read = self.read_client_document(client_id).await;
        match (read, known) {
            (Ok(meta), Some(row)) => {
                let uris = serde_json::to_string(&meta.redirect_uris).unwrap_or_default();
                db::update_oauth_client_document(self.pool(), row.id, &meta.name, &uris, now)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(OAuthClient {
                    id: row.id,
                    client_id: client_id.to_string(),
                    name: meta.name,
                    redirect_uris: meta.redirect_uris,
                    by_metadata: true,
                    approved: row.first_granted_at.is_some(),
                })
            }
            (Ok(meta), None) => {
                let uris = serde_json::to_string(&meta.redirect_uris).unwrap_or_default();
                let id = db::insert_oauth_client(
                    self.pool(),
                    client_id,
                    &meta.name,
                    &uris,
                    "metadata",
                    None,
                    now,
                )
                .await
                .map_err(|e| e.to_string())?;
                Ok(OAuthClient {
                    id,
                    client_id: client_id.to_string(),
                    name: meta.name,
                    redirect_uris: meta.redirect_uris,
                    by_metadata: true,
                    approved: false,
                })
            }
            // a document read before stays good while its server is down
            (Err(e), Some(row)) => {
                tracing::warn!(client_id, error = %e, "re-reading a client ID metadata document failed: the copy read before serves");
                Ok(client_of(row))
            }
            (Err(e), None) => Err(e),
        }
    }

    async fn read_client_document(&self, client_id: &str) -> Result<rules::ClientMetadata, String> {
        let url = url::Url::parse(client_id).map_err(|e| e.to_string())?;
        let body = self
            .inner
            .proxy
            .fetch_small(&url, METADATA_MAX_BYTES, METADATA_TIMEOUT)
            .await
            .map_err(|e| {
                format!("the client's metadata document at {client_id} could not be read: {e}")
            })?;
        let doc: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
            format!("the client's metadata document at {client_id} is not JSON ({e})")
        })?;
        if doc.get("client_id").and_then(|v| v.as_str()) != Some(client_id) {
            return Err(format!(
                "the client's metadata document at {client_id} does not name that URL as its client_id"
            ));
        }
        rules::read_client_metadata(&doc, &self.oauth_settings().allowed_schemes).map_err(
            |(_, d)| format!("the client's metadata document at {client_id} is refused: {d}"),
        )
    }

    /// Checks an authorization request before a person sees it (OAuth 2.1 §4.1.1):
    /// a known client and one of its redirect URIs first (else [`AuthorizeRefusal::Show`]),
    /// then `response_type=code`, an S256 `code_challenge`, and `resource` (when given)
    /// equal to [`Graft::mcp_resource`] (else [`AuthorizeRefusal::Redirect`] with
    /// `unsupported_response_type`, `invalid_request` or `invalid_target`; shown instead
    /// for a registered client no person has approved yet).
    pub async fn check_authorization(
        &self,
        req: &AuthorizationRequest,
    ) -> Result<CheckedAuthorization, AuthorizeRefusal> {
        let client = self
            .oauth_client(req.client_id.as_deref().unwrap_or(""))
            .await
            .map_err(AuthorizeRefusal::Show)?;
        let redirect_uri = match req.redirect_uri.as_deref() {
            Some(r) if rules::redirect_matches(&client.redirect_uris, r) => r.to_string(),
            Some(r) => {
                return Err(AuthorizeRefusal::Show(format!(
                    "the redirect URI {r:?} is not one the client {:?} registered",
                    client.name
                )))
            }
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => {
                return Err(AuthorizeRefusal::Show(
                    "the request names no redirect_uri, and the client registered several".into(),
                ))
            }
        };
        // anyone can register a client with any https redirect URI: until a person has
        // approved such a client, its errors are shown here instead of sent there, so a
        // link to Graft cannot bounce a signed-in person anywhere (RFC 9700 §4.11.2)
        // (a metadata document too: anyone can host one naming any redirect URI)
        let trusted = client.approved;
        let refuse = |error: &str, description: &str| {
            if trusted {
                AuthorizeRefusal::Redirect(self.error_redirect(
                    &redirect_uri,
                    req.state.as_deref(),
                    error,
                    description,
                ))
            } else {
                AuthorizeRefusal::Show(format!("{description} ({error})"))
            }
        };
        if req.response_type.as_deref() != Some("code") {
            return Err(refuse(
                "unsupported_response_type",
                "only the authorization code flow (response_type=code) is supported",
            ));
        }
        let challenge = req.code_challenge.as_deref().unwrap_or("");
        if req.code_challenge_method.as_deref() != Some("S256")
            || !rules::challenge_well_formed(challenge)
        {
            return Err(refuse(
                "invalid_request",
                "PKCE is required: send code_challenge (S256 of a code_verifier) and code_challenge_method=S256",
            ));
        }
        let resource = self.mcp_resource();
        if req.resource.as_deref().is_some_and(|r| r != resource) {
            return Err(refuse(
                "invalid_target",
                &format!("this server issues tokens only for its MCP endpoint, {resource}"),
            ));
        }
        Ok(CheckedAuthorization {
            client,
            redirect_uri,
            code_challenge: challenge.to_string(),
            state: req.state.clone(),
            resource,
        })
    }

    /// The redirect that tells a client its request failed (RFC 6749 §4.1.2.1, RFC
    /// 9207 `iss`).
    pub fn error_redirect(
        &self,
        redirect_uri: &str,
        state: Option<&str>,
        error: &str,
        description: &str,
    ) -> String {
        let mut pairs = vec![("error", error), ("error_description", description)];
        if let Some(s) = state {
            pairs.push(("state", s));
        }
        pairs.push(("iss", self.oauth_issuer()));
        with_query(redirect_uri, &pairs)
    }

    /// A person approves: the client acts as `agent` (created here when new) from now
    /// on. A grant and a code (60 s, once) are stored; the answer is the redirect to the
    /// client with `code`, `state` and `iss` (RFC 9207). Errors: `Invalid` from agent
    /// creation (the name's rules), `AgentNotFound`, `Invalid` for a removed or disabled
    /// agent, `Forbidden` for a non-person actor.
    pub async fn grant_authorization(
        &self,
        actor: &Actor,
        req: &CheckedAuthorization,
        agent: &AgentChoice,
    ) -> ServiceResult<String> {
        if !matches!(actor, Actor::Person(_)) {
            return Err(ServiceError::Forbidden(
                "only a person can connect an OAuth client to an agent".into(),
            ));
        }
        let agent = match agent {
            AgentChoice::Existing(name) => {
                let a = self.agent_by_name(name).await?;
                super::alive(&a)?;
                if a.disabled_at.is_some() {
                    return Err(ServiceError::Invalid(format!(
                        "agent {name} is disabled: enable it first, or connect the client to another agent"
                    )));
                }
                a
            }
            AgentChoice::New {
                name,
                cap,
                idle_window_days,
            } => self.add_agent(name, None, *cap, *idle_window_days).await?.0,
        };
        let now = self.now();
        let code = random_hex(32);
        let mut tx = self.write_tx().await?;
        // what expired a day ago is of no use, not even to tell a replay
        db::delete_expired_oauth(&mut tx, now - 86_400_000).await?;
        let grant = db::insert_oauth_grant(
            &mut tx,
            req.client.id,
            agent.id,
            &req.resource,
            &actor.label(),
            now,
        )
        .await?;
        db::insert_oauth_code(
            &mut tx,
            &hash_token(&code),
            grant,
            &req.redirect_uri,
            &req.code_challenge,
            now + ms(CODE_TTL),
        )
        .await?;
        tx.commit().await?;
        self.state_changed().await;
        tracing::info!(client = %req.client.name, agent = %agent.name, by = %actor.label(), "an OAuth client was connected to an agent");
        let detail = format!("OAuth client {:?} for {}", req.client.name, req.resource);
        self.audit(
            actor,
            crate::domain::audit::AuditAction::AgentConnectClient,
            &agent.name,
            Some(&detail),
        )
        .await?;
        let mut pairs = vec![("code", code.as_str())];
        if let Some(s) = &req.state {
            pairs.push(("state", s));
        }
        pairs.push(("iss", self.oauth_issuer()));
        Ok(with_query(&req.redirect_uri, &pairs))
    }
}
