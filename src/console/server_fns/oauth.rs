//! An agent's OAuth clients on its console page (issue 26.4): which applications a
//! person connected to it (name, where its answers go, who approved, last use, when it
//! ends) and revoking one.

use super::ConsoleResult;
#[cfg(feature = "ssr")]
use super::{confirmed, signed_in, with_status};
#[cfg(feature = "ssr")]
use crate::service::Actor;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One live OAuth grant of an agent: a client acting as it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClientItem {
    /// The grant's id (what Revoke names).
    pub id: i64,
    /// What the client calls itself.
    pub client: String,
    /// The host its sign-in answers go to (`claude.ai`, `127.0.0.1`, `cursor:`).
    pub redirect_host: String,
    /// The person who approved it (`ops`).
    pub granted_by: String,
    /// When it was approved (ms).
    pub created_at: i64,
    /// When its token was last used (ms), at a minute's resolution.
    pub last_used_at: Option<i64>,
    /// When it ends unless the client refreshes (ms).
    pub expires_at: Option<i64>,
}

/// The OAuth clients of the agent `agent_id`, newest first.
#[cfg(feature = "ssr")]
pub(crate) async fn oauth_clients(
    graft: &crate::service::Graft,
    agent_id: i64,
) -> ConsoleResult<Vec<OAuthClientItem>> {
    Ok(graft
        .oauth_grants(agent_id)
        .await?
        .into_iter()
        .map(|g| OAuthClientItem {
            id: g.id,
            client: g.client,
            redirect_host: g.redirect_host,
            granted_by: crate::console::words::actor_in_words(&g.granted_by),
            created_at: g.created_at,
            last_used_at: g.last_used_at,
            expires_at: g.expires_at,
        })
        .collect())
}

/// Revokes one OAuth client of `agent` (`grant`, its id) once confirmed (`confirm` =
/// `yes`): its tokens stop working at once; the client must be approved again. Errors:
/// `Refused` (not confirmed, unknown agent or client).
#[server(prefix = "/api", endpoint = "revoke_oauth_client")]
pub async fn revoke_oauth_client(
    agent: String,
    grant: i64,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "revoking ends the client's access at once",
        )?;
        state
            .graft
            .revoke_oauth_grant(&Actor::Person(person.name), &agent, grant)
            .await?;
        Ok(())
    })
    .await
}
