//! MCP vendors behind OAuth (issue 27.1): a remote MCP server that answers 401 with a
//! resource-metadata challenge (MCP 2025-11-25 "Authorization") is authorized by a person
//! in the console through rmcp's OAuth client (discovery, client registration or a client
//! ID metadata document, PKCE); its tokens are stored sealed on the vendor like every
//! secret, and refreshed by rmcp as they expire.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use rmcp::transport::auth::{AuthError, OAuthState};
use rmcp::transport::{AuthorizationManager, AuthorizationRequest};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a person has to finish an authorization at the server's authorization
/// server (ms).
const PENDING_MS: i64 = 15 * 60 * 1000;

/// The most authorizations waiting at once (the oldest go first).
const MAX_PENDING: usize = 64;

/// Where the server's authorization server sends the person back: the console route
/// that finishes the authorization.
pub const CALLBACK_PATH: &str = "/vendors/oauth/callback";

/// Authorizations a person started and has not finished: by the `state` of their
/// authorization request.
#[derive(Default)]
pub(crate) struct PendingAuthorizations(Mutex<HashMap<String, Pending>>);

struct Pending {
    vendor_id: i64,
    slug: String,
    person: String,
    started: i64,
    state: OAuthState,
}

impl Graft {
    /// Where a person is sent to authorize Graft at MCP vendor `slug`'s authorization
    /// server (issue 27.1): Graft discovers it from the server (RFC 9728 protected
    /// resource metadata, RFC 8414), registers itself as a client there (a client ID
    /// metadata document or RFC 7591 registration, as the server offers) with
    /// `<public URL>/vendors/oauth/callback` as its redirect URI, and answers the
    /// authorization URL (PKCE S256). The person's answer comes back to
    /// [`Graft::finish_mcp_oauth`] within 15 minutes. Errors: `VendorNotFound`,
    /// `Invalid` (not a remote MCP vendor, removed, or its authorization server could not
    /// be found or refused the registration), `Forbidden` (not a person).
    pub async fn start_mcp_oauth(&self, actor: &Actor, slug: &str) -> ServiceResult<String> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Forbidden(
                "only a person authorizes Graft at an MCP server".into(),
            ));
        };
        let v = self.live_vendor(slug).await?;
        let Some(url) = v.mcp_url.clone().filter(|_| v.kind == "mcp") else {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is not a remote MCP server: OAuth is for servers reached at a URL"
            )));
        };
        let said = |e: AuthError| {
            ServiceError::Invalid(format!(
                "{slug}'s authorization server could not be used: {e}"
            ))
        };
        let mut manager = if v.internal {
            AuthorizationManager::new_allowing_private_addresses(url.as_str()).await
        } else {
            AuthorizationManager::new(url.as_str()).await
        }
        .map_err(said)?;
        manager.set_credential_store(crate::proxy::mcp::SharedStore(self.oauth_store(v.id)));
        let mut state = OAuthState::Unauthorized(manager);
        let redirect = format!("{}{CALLBACK_PATH}", self.inner.public_url);
        state
            .start_authorization(AuthorizationRequest::new(redirect).with_client_name("Graft"))
            .await
            .map_err(said)?;
        let auth_url = state.get_authorization_url().await.map_err(said)?;
        let key = url::Url::parse(&auth_url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or_else(|| ServiceError::Invalid("the authorization URL has no state".into()))?;
        let now = self.now();
        let mut pending = self.inner.mcp_oauth.0.lock().expect("pending lock");
        pending.retain(|_, p| now - p.started < PENDING_MS);
        while pending.len() >= MAX_PENDING {
            let oldest = pending
                .iter()
                .min_by_key(|(_, p)| p.started)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => pending.remove(&k),
                None => break,
            };
        }
        pending.insert(
            key,
            Pending {
                vendor_id: v.id,
                slug: v.slug.clone(),
                person: person.clone(),
                started: now,
                state,
            },
        );
        tracing::info!(vendor = %v.slug, by = %person, "OAuth authorization of an MCP vendor started");
        Ok(auth_url)
    }

    /// Finishes an authorization the authorization server sent the person back from
    /// (`callback`: the whole URL, with `code`, `state` and, where given, `iss`, RFC
    /// 9207): the code is exchanged (PKCE), the tokens stored sealed on the vendor, its
    /// server started again with them and its tools read. Only the person who started
    /// it may finish it. Returns the vendor's slug and what the read found (or why it
    /// could not). Errors: `Invalid` (an unknown or expired state, an error the
    /// authorization server answered, a refused exchange), `Forbidden` (another person).
    pub async fn finish_mcp_oauth(
        &self,
        actor: &Actor,
        callback: &str,
    ) -> ServiceResult<(String, Result<super::ImportReport, String>)> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Forbidden(
                "only a person authorizes Graft at an MCP server".into(),
            ));
        };
        let url = url::Url::parse(callback)
            .map_err(|e| ServiceError::Invalid(format!("not a callback URL: {e}")))?;
        let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
        let key = query.get("state").cloned().unwrap_or_default();
        let found = {
            let mut pending = self.inner.mcp_oauth.0.lock().expect("pending lock");
            let now = self.now();
            pending.retain(|_, p| now - p.started < PENDING_MS);
            match pending.get(&key) {
                Some(p) if &p.person != person => {
                    return Err(ServiceError::Forbidden(format!(
                        "this authorization was started by {}: they finish it",
                        p.person
                    )))
                }
                Some(_) => pending.remove(&key),
                None => None,
            }
        };
        let Some(mut p) = found else {
            return Err(ServiceError::Invalid(
                "no authorization of an MCP server waits for this answer (it finished already, or started more than 15 minutes ago): start it again on the vendor's page".into(),
            ));
        };
        if let Some(error) = query.get("error") {
            let why = query
                .get("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            return Err(ServiceError::Invalid(format!(
                "{}'s authorization server answered {error}{why}: nothing was stored",
                p.slug
            )));
        }
        p.state.handle_callback_url(callback).await.map_err(|e| {
            ServiceError::Invalid(format!(
                "{}'s authorization server did not give tokens: {e}",
                p.slug
            ))
        })?;
        tracing::info!(vendor = %p.slug, by = %person, "an MCP vendor authorized Graft (OAuth); its tokens are sealed");
        // its server starts again with the tokens
        self.stop_mcp_server(p.vendor_id).await;
        self.state_changed().await;
        let read = self
            .refresh_mcp_vendor(actor, &p.slug)
            .await
            .map_err(|e| e.to_string());
        Ok((p.slug, read))
    }

    /// Forgets MCP vendor `slug`'s OAuth tokens (a person disconnects it): its server
    /// stops, and calls need a new authorization. Errors: `VendorNotFound`, `Invalid`.
    pub async fn forget_mcp_oauth(&self, actor: &Actor, slug: &str) -> ServiceResult<()> {
        let v = self.live_vendor(slug).await?;
        let mut tx = self.write_tx().await?;
        db::update_vendor_oauth(&mut tx, v.id, None).await?;
        tx.commit().await?;
        self.checkpoint().await;
        self.stop_mcp_server(v.id).await;
        self.state_changed().await;
        tracing::info!(vendor = %slug, by = %actor.label(), "an MCP vendor's OAuth tokens were dropped");
        Ok(())
    }
}
