//! The token side of Graft's OAuth authorization server (SPEC §10.1, issue 26): the
//! token endpoint's two grants (OAuth 2.1 §4.1.3 code with PKCE, §4.3 refresh with
//! rotation), revocation (RFC 7009), the access tokens `/mcp` accepts (RFC 8707
//! audience: `<public URL>/mcp`), and the grants people see and revoke on an agent's
//! page. The clients, the authorization request and the consent are in
//! [`super::oauth`].

use super::oauth::{ms, OAuthError, OAuthGrantView, TokenResponse, ACCESS_PREFIX, REFRESH_PREFIX};
use super::{hash_token, random_hex, Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::oauth as rules;

impl Graft {
    async fn issue_tokens(
        &self,
        tx: &mut super::WriteTx,
        grant: i64,
        now: i64,
    ) -> Result<TokenResponse, OAuthError> {
        let s = &self.inner.oauth.settings;
        let access = format!("{ACCESS_PREFIX}{}", random_hex(32));
        let refresh = format!("{REFRESH_PREFIX}{}", random_hex(32));
        db::insert_oauth_token(
            tx,
            &hash_token(&access),
            grant,
            "access",
            now,
            now + ms(s.access_ttl),
        )
        .await?;
        db::insert_oauth_token(
            tx,
            &hash_token(&refresh),
            grant,
            "refresh",
            now,
            now + ms(s.refresh_ttl),
        )
        .await?;
        Ok(TokenResponse {
            access_token: access,
            token_type: "Bearer",
            expires_in: s.access_ttl.as_secs(),
            refresh_token: refresh,
        })
    }

    /// The token endpoint's `authorization_code` grant (OAuth 2.1 §4.1.3): the code
    /// (taken out whatever the outcome), its client, its redirect URI when given, the
    /// PKCE verifier, and `resource` when given. Errors: `invalid_request` (a missing
    /// parameter), `invalid_grant` (unknown, used, expired code; another client's;
    /// another redirect URI; a verifier that does not match; a revoked grant),
    /// `invalid_target` (another resource).
    pub async fn exchange_code(
        &self,
        client_id: Option<&str>,
        code: Option<&str>,
        redirect_uri: Option<&str>,
        verifier: Option<&str>,
        resource: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        let (Some(client_id), Some(code), Some(verifier)) = (client_id, code, verifier) else {
            return Err(OAuthError::new(
                "invalid_request",
                "send client_id, code and code_verifier",
            ));
        };
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let row = db::take_oauth_code(&mut tx, &hash_token(code), now).await?;
        let refuse = |d: &str| Err(OAuthError::new("invalid_grant", d));
        // a code used twice: whoever holds it is not to be trusted, so what its first use
        // gave is revoked (RFC 6749 §4.1.2)
        // (only its own client's replay counts: a stranger's guess ends nothing)
        if let Some(r) = row.as_ref().filter(|r| r.used_at.is_some()) {
            let revoked = r.client_id == client_id
                && db::revoke_oauth_grant(&mut tx, r.grant_id, now).await?;
            tx.commit().await?;
            if !revoked {
                return refuse("the authorization code was used already");
            }
            self.grant_ended(r.grant_id).await;
            tracing::warn!(
                grant = r.grant_id,
                "an authorization code was used twice: its grant is revoked"
            );
            return refuse("the authorization code was used already; the tokens it gave are revoked: authorize again");
        }
        // the code is used now, whatever follows: commit that first
        tx.commit().await?;
        let Some(row) = row else {
            return Err(OAuthError::new(
                "invalid_grant",
                "the authorization code is unknown",
            ));
        };
        if row.expires_at < now {
            return refuse(
                "the authorization code expired (codes live 60 seconds): authorize again",
            );
        }
        if row.client_id != client_id {
            return refuse("the authorization code was issued to another client");
        }
        if redirect_uri.is_some_and(|r| r != row.redirect_uri) {
            return refuse("redirect_uri differs from the authorization request's");
        }
        if !rules::pkce_verified(verifier, &row.code_challenge) {
            return refuse("code_verifier does not match the code_challenge (PKCE S256)");
        }
        if row.revoked_at.is_some() {
            return refuse("the grant was revoked");
        }
        if resource.is_some_and(|r| r != row.resource) {
            return Err(OAuthError::new(
                "invalid_target",
                format!("the code was granted for {}", row.resource),
            ));
        }
        let mut tx = self.write_tx().await?;
        let tokens = self.issue_tokens(&mut tx, row.grant_id, now).await?;
        tx.commit().await?;
        Ok(tokens)
    }

    /// The token endpoint's `refresh_token` grant (OAuth 2.1 §4.3): the refresh token
    /// is used once and replaced; a second use of one revokes its whole grant (a stolen
    /// token is worth nothing once its owner refreshed). Errors: `invalid_request`,
    /// `invalid_grant` (unknown, expired, used, revoked; another client's; the agent
    /// removed or disabled), `invalid_target`.
    pub async fn refresh_oauth(
        &self,
        client_id: Option<&str>,
        refresh_token: Option<&str>,
        resource: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        let (Some(client_id), Some(token)) = (client_id, refresh_token) else {
            return Err(OAuthError::new(
                "invalid_request",
                "send client_id and refresh_token",
            ));
        };
        let refuse = |d: &str| Err(OAuthError::new("invalid_grant", d));
        let Some(row) = db::select_oauth_token(self.pool(), &hash_token(token)).await? else {
            return refuse("the refresh token is unknown");
        };
        let now = self.now();
        if row.kind != "refresh" {
            return refuse("that is not a refresh token");
        }
        if row.client_id != client_id {
            return refuse("the refresh token was issued to another client");
        }
        if row.revoked_at.is_some() || row.grant_revoked_at.is_some() {
            return refuse("the refresh token was revoked: authorize again");
        }
        if row.expires_at < now {
            return refuse("the refresh token expired: authorize again");
        }
        if resource.is_some_and(|r| r != row.resource) {
            return Err(OAuthError::new(
                "invalid_target",
                format!("the grant is for {}", row.resource),
            ));
        }
        let agent = self.agent(row.agent_id).await?;
        if agent.removed_at.is_some() || agent.disabled_at.is_some() {
            return refuse("the agent this client acts as is disabled or removed");
        }
        let mut tx = self.write_tx().await?;
        if !db::use_refresh_token(&mut tx, row.id, now).await? {
            let revoked = db::revoke_oauth_grant(&mut tx, row.grant_id, now).await?;
            tx.commit().await?;
            if revoked {
                self.grant_ended(row.grant_id).await;
            }
            tracing::warn!(
                grant = row.grant_id,
                "a refresh token was used twice: its grant is revoked"
            );
            return refuse(
                "the refresh token was used already; its grant is revoked: authorize again",
            );
        }
        let tokens = self.issue_tokens(&mut tx, row.grant_id, now).await?;
        tx.commit().await?;
        Ok(tokens)
    }

    /// Revocation (RFC 7009): a refresh token revokes its grant (every token of it); an
    /// access token only itself. An unknown token, or another client's, changes nothing
    /// (the endpoint answers 200 either way, §2.2).
    pub async fn revoke_oauth(&self, token: &str, client_id: Option<&str>) -> ServiceResult<()> {
        let Some(row) = db::select_oauth_token(self.pool(), &hash_token(token)).await? else {
            return Ok(());
        };
        if client_id.is_some_and(|c| c != row.client_id) {
            return Ok(());
        }
        // a token already dead changes nothing, and ends no stream
        if row.grant_revoked_at.is_some() || row.revoked_at.is_some() {
            return Ok(());
        }
        let now = self.now();
        if row.kind == "refresh" {
            let mut tx = self.write_tx().await?;
            db::revoke_oauth_grant(&mut tx, row.grant_id, now).await?;
            tx.commit().await?;
        } else {
            db::revoke_oauth_token(self.pool(), row.id, now).await?;
        }
        // the streams its tokens opened end too
        self.grant_ended(row.grant_id).await;
        Ok(())
    }

    /// The agent an OAuth access token acts as, on `/mcp`: a live access token of a
    /// live grant, for [`Graft::mcp_resource`] (another resource's token is refused,
    /// RFC 8707 audience), of an agent neither disabled nor removed. `None` otherwise.
    /// Notes the grant's use (at most once a minute).
    pub async fn authenticate_oauth(&self, token: &str) -> ServiceResult<Option<db::AgentRow>> {
        let Some(row) = db::select_oauth_token(self.pool(), &hash_token(token)).await? else {
            return Ok(None);
        };
        let now = self.now();
        if row.kind != "access"
            || row.revoked_at.is_some()
            || row.grant_revoked_at.is_some()
            || row.expires_at < now
            || row.resource != self.mcp_resource()
        {
            return Ok(None);
        }
        let agent = self.agent(row.agent_id).await?;
        if agent.disabled_at.is_some() || agent.removed_at.is_some() {
            return Ok(None);
        }
        let due = {
            let mut seen = self.inner.oauth.last_used.lock().expect("oauth lock");
            let last = seen.get(&row.grant_id).copied().unwrap_or(i64::MIN);
            let due = now.saturating_sub(last) >= 60_000;
            if due {
                seen.insert(row.grant_id, now);
            }
            due
        };
        if due {
            db::update_grant_last_used(self.pool(), row.grant_id, now).await?;
        }
        Ok(Some(agent))
    }

    /// An agent's live OAuth grants, newest first (its console page).
    pub async fn oauth_grants(&self, agent_id: i64) -> ServiceResult<Vec<OAuthGrantView>> {
        Ok(db::select_agent_grants(self.pool(), agent_id, self.now())
            .await?
            .into_iter()
            .map(|g| {
                let uris: Vec<String> = serde_json::from_str(&g.redirect_uris).unwrap_or_default();
                let redirect_host = uris
                    .first()
                    .and_then(|u| url::Url::parse(u).ok())
                    .map(|u| {
                        u.host_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("{}:", u.scheme()))
                    })
                    .unwrap_or_default();
                OAuthGrantView {
                    id: g.id,
                    client: g.client_name,
                    redirect_host,
                    granted_by: g.granted_by,
                    created_at: g.created_at,
                    last_used_at: g.last_used_at,
                    expires_at: g.expires_at,
                }
            })
            .collect())
    }

    /// A person revokes a grant of `agent` (its console page): every token of it stops
    /// working at once. Errors: `AgentNotFound`, `Invalid` (no such live grant of that
    /// agent), `Forbidden` (not a person).
    pub async fn revoke_oauth_grant(
        &self,
        actor: &Actor,
        agent: &str,
        grant_id: i64,
    ) -> ServiceResult<()> {
        if !matches!(actor, Actor::Person(_)) {
            return Err(ServiceError::Forbidden(
                "only a person can revoke an OAuth client".into(),
            ));
        }
        let a = self.agent_by_name(agent).await?;
        if db::select_grant_agent(self.pool(), grant_id).await? != Some(a.id) {
            return Err(ServiceError::Invalid(format!(
                "agent {agent} has no live OAuth client {grant_id}"
            )));
        }
        let mut tx = self.write_tx().await?;
        db::revoke_oauth_grant(&mut tx, grant_id, self.now()).await?;
        tx.commit().await?;
        self.grant_ended(grant_id).await;
        tracing::info!(agent = %agent, grant = grant_id, by = %actor.label(), "an OAuth client's access was revoked");
        let detail = format!("grant {grant_id}");
        self.audit(
            actor,
            crate::domain::audit::AuditAction::AgentRevokeClient,
            &a.name,
            Some(&detail),
        )
        .await?;
        Ok(())
    }

    /// After a grant ended: caches drop, and the agent's open sessions and streams end,
    /// the client's among them (sessions belong to the agent, so its other clients
    /// reconnect once, with tokens that still work).
    async fn grant_ended(&self, grant_id: i64) {
        self.state_changed().await;
        match db::select_grant_owner(self.pool(), grant_id).await {
            Ok(Some(agent)) => {
                self.end_sessions(agent).await;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = ?e, grant = grant_id, "cannot end the sessions of a revoked grant's agent")
            }
        }
    }
}
