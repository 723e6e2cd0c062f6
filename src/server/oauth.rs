//! The OAuth endpoints anyone may call (SPEC §10.1, issue 26): the protected-resource
//! metadata of `/mcp` (RFC 9728), the authorization server metadata (RFC 8414),
//! dynamic registration (RFC 7591), the token endpoint (OAuth 2.1 §3.2) and revocation
//! (RFC 7009). The authorization endpoint, which needs a signed-in person, is the
//! console's (`console::server::oauth`). Browser-based clients may call these from any
//! origin (no cookies are read), so they answer CORS with `*`.

use crate::service::oauth::OAuthError;
use crate::service::Graft;
use axum::extract::{ConnectInfo, FromRequest, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde_json::json;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// What the endpoints read.
#[derive(Clone)]
pub struct OAuthHttp {
    pub graft: Graft,
    /// `GRAFT_TRUSTED_PROXIES`: whose `X-Forwarded-For` names the registering client.
    pub trusted_proxies: Arc<Vec<std::net::IpAddr>>,
}

/// The path of `/mcp`'s protected-resource metadata (RFC 9728 §3.1: the well-known
/// prefix, then the resource's path).
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The routes: both metadata documents (and the root protected-resource path, which
/// some clients try first), `/oauth/register`, `/oauth/token`, `/oauth/revoke`.
pub fn routes(state: OAuthHttp) -> Router {
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([http::Method::GET, http::Method::POST, http::Method::OPTIONS])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            "mcp-protocol-version".parse().unwrap(),
        ]);
    Router::new()
        .route(PRM_PATH, get(protected_resource))
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route("/oauth/register", post(register))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .with_state(state)
        .layer(cors)
}

/// RFC 9728 §2: `resource` is `/mcp`'s public URL byte for byte, Graft its own
/// authorization server, tokens only in the Authorization header.
async fn protected_resource(State(s): State<OAuthHttp>) -> Response {
    Json(json!({
        "resource": s.graft.mcp_resource(),
        "authorization_servers": [s.graft.oauth_issuer()],
        "bearer_methods_supported": ["header"],
        "resource_name": "Graft",
    }))
    .into_response()
}

/// RFC 8414 §2 with the MCP authorization spec's requirements (S256 PKCE, client ID
/// metadata documents, public clients) and RFC 9207's `iss` in authorization answers.
async fn authorization_server(State(s): State<OAuthHttp>) -> Response {
    let issuer = s.graft.oauth_issuer();
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "registration_endpoint": format!("{issuer}/oauth/register"),
        "revocation_endpoint": format!("{issuer}/oauth/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{issuer}/skill/SKILL.md"),
    }))
    .into_response()
}

/// An RFC 6749 §5.2 error answer, never cached.
fn error(e: OAuthError) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = uncached((
        status,
        Json(json!({"error": e.error, "error_description": e.description})),
    ));
    if status == StatusCode::TOO_MANY_REQUESTS {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("3600"));
    }
    resp
}

/// `answer` as a response that is never cached (`Cache-Control: no-store`, `Pragma:
/// no-cache`).
fn uncached(answer: impl IntoResponse) -> Response {
    let mut resp = answer.into_response();
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    resp
}

fn request_error(d: &str) -> OAuthError {
    OAuthError {
        error: "invalid_request",
        description: d.into(),
        status: 400,
    }
}

/// RFC 7591 §3: a JSON body of client metadata; 201 with the client's id.
async fn register(
    State(s): State<OAuthHttp>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    // JSON (RFC 7591 §3.1), its essence exactly
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_body {
        return error(OAuthError {
            error: "invalid_client_metadata",
            description: "send the client metadata as application/json (RFC 7591 §3.1)".into(),
            status: 400,
        });
    }
    let Ok(metadata) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return error(OAuthError {
            error: "invalid_client_metadata",
            description: "the body is not a JSON object of client metadata (RFC 7591 §2)".into(),
            status: 400,
        });
    };
    let from = network_of(crate::console::server::client_address(
        peer.ip(),
        &headers,
        &s.trusted_proxies,
    ));
    match s.graft.register_oauth_client(&metadata, Some(&from)).await {
        Ok(r) => uncached((
            StatusCode::CREATED,
            Json(json!({
                "client_id": r.client.client_id,
                "client_id_issued_at": r.issued_at,
                "client_name": r.client.name,
                "redirect_uris": r.client.redirect_uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            })),
        )),
        Err(e) => error(e),
    }
}

/// The network a registration is counted against: an IPv4 address, or an IPv6 /64
/// (one host usually holds a whole /64, so counting single IPv6 addresses counts
/// nothing).
fn network_of(addr: std::net::IpAddr) -> String {
    match addr {
        std::net::IpAddr::V4(a) => a.to_string(),
        std::net::IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = a.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// A form body's fields (`application/x-www-form-urlencoded`, OAuth 2.1 §3.2.2); a
/// field sent twice is refused (§3.1: parameters must not repeat).
fn form(headers: &HeaderMap, body: &[u8]) -> Result<HashMap<String, String>, OAuthError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ct
        .to_ascii_lowercase()
        .starts_with("application/x-www-form-urlencoded")
    {
        return Err(request_error(
            "send the parameters as application/x-www-form-urlencoded",
        ));
    }
    let mut fields = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        if fields.insert(k.to_string(), v.to_string()).is_some() {
            return Err(request_error(&format!("the parameter {k} is sent twice")));
        }
    }
    Ok(fields)
}

/// The fields of a form body, read by [`form`] (after the body is read whole); a
/// refused form answers [`error`].
struct OAuthForm(HashMap<String, String>);

impl<S: Send + Sync> FromRequest<S> for OAuthForm {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Response> {
        let headers = req.headers().clone();
        let body = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        form(&headers, &body).map(OAuthForm).map_err(error)
    }
}

/// The client's id from the form, or from HTTP Basic (a client that sends its id
/// there with an empty secret).
fn client_id_of(headers: &HeaderMap, f: &HashMap<String, String>) -> Option<String> {
    if let Some(c) = f.get("client_id") {
        return Some(c.clone());
    }
    let basic = headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Basic ")?;
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let id = text.split(':').next()?;
    Some(
        percent_encoding::percent_decode_str(id)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// OAuth 2.1 §3.2: `authorization_code` (with PKCE) and `refresh_token`; the answer is
/// never cached (§3.2.3).
async fn token(
    State(s): State<OAuthHttp>,
    headers: HeaderMap,
    OAuthForm(f): OAuthForm,
) -> Response {
    let client = client_id_of(&headers, &f);
    let get = |k: &str| f.get(k).map(String::as_str);
    let answer = match get("grant_type") {
        Some("authorization_code") => {
            s.graft
                .exchange_code(
                    client.as_deref(),
                    get("code"),
                    get("redirect_uri"),
                    get("code_verifier"),
                    get("resource"),
                )
                .await
        }
        Some("refresh_token") => {
            s.graft
                .refresh_oauth(client.as_deref(), get("refresh_token"), get("resource"))
                .await
        }
        Some(other) => Err(OAuthError {
            error: "unsupported_grant_type",
            description: format!(
                "grant_type {other:?} is not supported: use authorization_code or refresh_token"
            ),
            status: 400,
        }),
        None => Err(OAuthError {
            error: "invalid_request",
            description: "send grant_type".into(),
            status: 400,
        }),
    };
    match answer {
        Ok(t) => uncached(Json(t)),
        Err(e) => error(e),
    }
}

/// RFC 7009 §2: 200 whether or not the token was known.
async fn revoke(
    State(s): State<OAuthHttp>,
    headers: HeaderMap,
    OAuthForm(f): OAuthForm,
) -> Response {
    let Some(token) = f.get("token") else {
        return error(request_error("send token"));
    };
    let client = client_id_of(&headers, &f);
    match s.graft.revoke_oauth(token, client.as_deref()).await {
        Ok(()) => uncached(StatusCode::OK),
        Err(e) => error(e.into()),
    }
}
