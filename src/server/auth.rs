//! Bearer-token agents on `/mcp` (SPEC §3.1): an axum layer in front of the MCP service,
//! for both protocol eras.
//!
//! - `Authorization: Bearer <token>` on every request: an agent's own token, or an
//!   OAuth access token Graft issued for `/mcp` (issue 26, `graft_oat_…`); missing →
//!   401 with `WWW-Authenticate: Bearer realm="graft", resource_metadata="<public
//!   URL>/.well-known/oauth-protected-resource/mcp"` (RFC 9728 §5.1, so OAuth clients
//!   find the authorization server); malformed, unknown or expired → the same plus
//!   `error="invalid_token"` (RFC 6750 §3). Tokens are never read from the query string.
//! - Sessions are bound to the agent that opened them: the `Mcp-Session-Id` minted on an
//!   `initialize` response is recorded for that agent, and another agent presenting it
//!   gets 404, exactly as for an unknown session (rmcp does not bind sessions to tokens:
//!   BUILD-NOTES.md pitfall 5).
//! - `HEAD /mcp` (Hermes probes it) answers 405 with `Allow`.

use crate::service::AuthedAgent;
use crate::service::Graft;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, Method, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// State of the auth layer.
#[derive(Clone)]
pub struct AuthState {
    /// The service (token lookup).
    pub graft: Graft,
    /// Session → agent bindings.
    pub bindings: Arc<SessionBindings>,
    /// The URL of `/mcp`'s protected-resource metadata, named in every 401.
    pub resource_metadata: Arc<str>,
}

/// Which agent opened each live 2025-era MCP session.
pub struct SessionBindings {
    /// Session id → (agent id, order of opening).
    owners: Mutex<HashMap<String, (i64, u64)>>,
    opened: std::sync::atomic::AtomicU64,
    sessions: Arc<LocalSessionManager>,
}

/// Prune bindings of ended sessions once the map holds this many.
const PRUNE_AT: usize = 256;

/// Open 2025-era sessions one agent may hold (README "Limits"). Opening one more closes
/// that agent's oldest session, whose client then gets 404 and initializes again (MCP
/// 2025-11-25, Transports: Session Management); each session costs a task and buffers,
/// so without a cap one token could open sessions until memory runs out.
pub const MAX_SESSIONS_PER_AGENT: usize = 32;

impl SessionBindings {
    /// Bindings checked against rmcp's session manager when pruning.
    pub fn new(sessions: Arc<LocalSessionManager>) -> Self {
        Self {
            owners: Mutex::new(HashMap::new()),
            opened: std::sync::atomic::AtomicU64::new(0),
            sessions,
        }
    }

    fn owner(&self, session_id: &str) -> Option<i64> {
        self.owners
            .lock()
            .expect("bindings lock")
            .get(session_id)
            .map(|(agent, _)| *agent)
    }

    /// Sessions of `agent_id` that are bound, oldest first.
    fn sessions_of(&self, agent_id: i64) -> Vec<String> {
        let owners = self.owners.lock().expect("bindings lock");
        let mut mine: Vec<(&String, u64)> = owners
            .iter()
            .filter(|(_, (a, _))| *a == agent_id)
            .map(|(sid, (_, n))| (sid, *n))
            .collect();
        mine.sort_by_key(|(_, n)| *n);
        mine.into_iter().map(|(sid, _)| sid.clone()).collect()
    }

    /// Whether rmcp holds the session `session_id` (not ended, not expired).
    pub async fn is_live(&self, session_id: &str) -> bool {
        self.sessions.sessions.read().await.contains_key(session_id)
    }

    /// Forgets bindings of sessions rmcp no longer holds (ended or expired).
    async fn prune(&self) {
        let live: std::collections::HashSet<String> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        self.owners
            .lock()
            .expect("bindings lock")
            .retain(|sid, _| live.contains(sid));
    }

    /// Records that `agent_id` opened `session_id`; past [`MAX_SESSIONS_PER_AGENT`]
    /// closes that agent's oldest sessions.
    async fn bind(&self, session_id: String, agent_id: i64) {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let n = self
            .opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let len = {
            let mut owners = self.owners.lock().expect("bindings lock");
            owners.insert(session_id, (agent_id, n));
            owners.len()
        };
        if len >= PRUNE_AT && len.is_power_of_two() {
            self.prune().await;
        }
        if self.sessions_of(agent_id).len() > MAX_SESSIONS_PER_AGENT {
            self.prune().await;
            let mine = self.sessions_of(agent_id);
            let excess = mine.len().saturating_sub(MAX_SESSIONS_PER_AGENT);
            for sid in &mine[..excess] {
                self.owners.lock().expect("bindings lock").remove(sid);
                let id: rmcp::transport::streamable_http_server::session::SessionId =
                    Arc::from(sid.as_str());
                if let Err(e) = self.sessions.close_session(&id).await {
                    tracing::warn!(error = %e, "closing an agent's oldest session failed");
                }
            }
            if excess > 0 {
                tracing::info!(
                    agent_id,
                    closed = excess,
                    "an agent opened more sessions than allowed: closed its oldest"
                );
            }
        }
    }
}

fn unauthorized(invalid_token: bool, message: &str, resource_metadata: &str) -> Response {
    let mut challenge = format!(r#"Bearer realm="graft", resource_metadata="{resource_metadata}""#);
    if invalid_token {
        challenge.push_str(r#", error="invalid_token""#);
    }
    let mut resp = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({"error": message})),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// The token of an `Authorization: Bearer <token>` header: `None` when absent,
/// `Some(Err(()))` when present but not one bearer token (RFC 6750 §2.1 syntax; the
/// scheme is case-insensitive and followed by one or more spaces, RFC 9110 §11.4
/// `credentials = auth-scheme [ 1*SP token68 ]`).
pub fn bearer_token(value: Option<&HeaderValue>) -> Option<Result<&str, ()>> {
    let v = value?;
    let Ok(text) = v.to_str() else {
        return Some(Err(()));
    };
    let Some((scheme, token)) = text.split_once(' ') else {
        return Some(Err(()));
    };
    let token = token.trim_start_matches(' ');
    let token_ok = !token.is_empty()
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(c));
    if scheme.eq_ignore_ascii_case("bearer") && token_ok {
        Some(Ok(token))
    } else {
        Some(Err(()))
    }
}

/// Reads what is left of a small refused request's body (at most 64 KiB, for at most a
/// second) before `refusal` is sent: hyper closes a connection whose request body was
/// not read, and a client that already sent its next request on that kept-alive
/// connection would see it dropped instead of answered.
async fn drained(req: Request, refusal: Response) -> Response {
    let body = req.into_body();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        axum::body::to_bytes(body, 64 * 1024),
    )
    .await;
    refusal
}

/// The bearer-auth middleware (see the module doc).
pub async fn bearer_auth(State(state): State<AuthState>, mut req: Request, next: Next) -> Response {
    if req.method() == Method::HEAD {
        let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
        resp.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
        return resp;
    }
    let token = match bearer_token(req.headers().get(header::AUTHORIZATION)) {
        None => {
            let refusal = unauthorized(
                false,
                "missing bearer token: send Authorization: Bearer <agent token>, or sign in with OAuth",
                &state.resource_metadata,
            );
            return drained(req, refusal).await;
        }
        Some(Err(())) => {
            let refusal = unauthorized(
                true,
                "malformed Authorization header: send Authorization: Bearer <agent token>",
                &state.resource_metadata,
            );
            return drained(req, refusal).await;
        }
        Some(Ok(t)) => t.to_string(),
    };
    let found = if token.starts_with(crate::service::oauth::ACCESS_PREFIX) {
        state.graft.authenticate_oauth(&token).await
    } else {
        state.graft.authenticate(&token).await
    };
    let agent = match found {
        Ok(Some(a)) => a,
        Ok(None) => {
            let refusal = unauthorized(
                true,
                "unknown, expired or revoked token",
                &state.resource_metadata,
            );
            return drained(req, refusal).await;
        }
        Err(e) => {
            // the database is down (issue 11.7): a JSON-RPC error that says so, and when
            // to try again; nothing was done
            tracing::error!(error = ?e, "token lookup failed");
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32603, "message": e.to_string(), "data": {"code": e.code()}}
            });
            let mut resp = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            return resp;
        }
    };
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(sid) = &session {
        if state
            .bindings
            .owner(sid)
            .is_some_and(|owner| owner != agent.id)
        {
            tracing::warn!(agent = %agent.name, "refused a session opened by another agent");
            let mut resp = (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return resp;
        }
    }
    let is_delete = req.method() == Method::DELETE;
    if let (true, Some(sid)) = (is_delete, &session) {
        // ending a session that is unknown or already ended: 404, as for any other
        // request on it (MCP 2025-11-25 transports, Session Management; issue 25.13)
        if !state.bindings.is_live(sid).await {
            return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
    }
    req.extensions_mut().insert(AuthedAgent {
        id: agent.id,
        name: agent.name.clone(),
    });
    let mut resp = next.run(req).await;
    // rmcp ends a session with 202; the Python SDK expects 200 or 204 and logs a failure
    if is_delete && resp.status() == StatusCode::ACCEPTED {
        *resp.status_mut() = StatusCode::NO_CONTENT;
        *resp.body_mut() = axum::body::Body::empty();
    }
    if session.is_none() {
        if let Some(sid) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            state.bindings.bind(sid.to_string(), agent.id).await;
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parsing() {
        let h = |s: &'static str| HeaderValue::from_static(s);
        assert_eq!(bearer_token(None), None);
        assert_eq!(bearer_token(Some(&h("Bearer abc"))), Some(Ok("abc")));
        assert_eq!(bearer_token(Some(&h("bearer abc"))), Some(Ok("abc")));
        assert_eq!(bearer_token(Some(&h("Bearer  abc"))), Some(Ok("abc")));
        assert_eq!(bearer_token(Some(&h("Bearer   abc"))), Some(Ok("abc")));
        assert_eq!(bearer_token(Some(&h("Bearer  "))), Some(Err(())));
        assert_eq!(bearer_token(Some(&h("Bearer abc def"))), Some(Err(())));
        assert_eq!(bearer_token(Some(&h("Bearer Bearer abc"))), Some(Err(())));
        assert_eq!(bearer_token(Some(&h("Basic abc"))), Some(Err(())));
        assert_eq!(bearer_token(Some(&h("Bearer "))), Some(Err(())));
        assert_eq!(bearer_token(Some(&h("abc"))), Some(Err(())));
    }
}
