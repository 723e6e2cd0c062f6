//! The console's gate (SPEC §6, security review 32): which requests reach a page or a
//! server function, Host checks, redirects after sign-in, form errors kept across a
//! redirect, and the static files' revalidation.

use super::session::person_of;
use super::{ConsoleState, FORM_ERRORS_KEY};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use http::{header, StatusCode};
use std::sync::Arc;
use tower_sessions::Session;

/// Whether a `Host` header value is one of `allowed` (each `host` or `host:port`, as
/// rmcp's `allowed_hosts` reads them): host names compared without case and IPv6
/// brackets, the port only when the entry names one.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let split = |a: &str| -> Option<(String, Option<u16>)> {
        let a = a.trim();
        if a.is_empty() {
            return None;
        }
        match http::uri::Authority::try_from(a) {
            Ok(auth) => Some((
                auth.host().trim_matches(['[', ']']).to_ascii_lowercase(),
                auth.port_u16(),
            )),
            Err(_) => Some((a.trim_matches(['[', ']']).to_ascii_lowercase(), None)),
        }
    };
    let Some((h, p)) = split(host) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| split(a))
        .any(|(ah, ap)| ah == h && ap.is_none_or(|ap| Some(ap) == p))
}

/// Whether a request path holds a dot segment in any spelling (`..`, `.`, `%2e%2e`, …),
/// which no page or file of the console has: such a path is refused before the gate
/// reads it (`/pkg/../agents` passed as a file path, security review 32.15).
pub(crate) fn has_dot_segment(path: &str) -> bool {
    let decoded: String = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    [path, decoded.as_str()].iter().any(|p| {
        p.split(['/', '\\'])
            .any(|seg| matches!(seg.split(';').next().unwrap_or(""), "." | ".."))
    })
}

/// Paths anyone may fetch: the sign-in page and call, static files, the skill.
pub(crate) fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/login" | "/api/login" | "/api/logout" | "/favicon.ico" | "/skill/SKILL.md"
    ) || path.starts_with("/pkg/")
}

/// Whether a state-changing request comes from the console's own pages: a browser says
/// so in `Sec-Fetch-Site` (`same-origin`), or in `Origin` (this host, or the public URL's
/// origin). `SameSite=Lax` alone lets a page on another port of the same host post with
/// the cookie. Requests with neither header (scripts, curl) carry no ambient cookie risk.
pub(crate) fn from_own_pages(req: &Request, public_origin: &str) -> bool {
    let headers = req.headers();
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    origin == public_origin
        || origin == format!("http://{host}")
        || origin == format!("https://{host}")
}

/// Whether `next` is a path on this server that is safe to redirect to. The path is plain
/// (`/`, letters, digits, `_`, `-`, `.`; no empty, `.` or `..` segment, so nothing a
/// browser or router could turn into `//host`; browsers also drop tabs and newlines, which
/// made `/<TAB>/evil.example` one), and the query is visible ASCII without `\` and
/// without Leptos's error parameters (`__err`, `__path`, in any encoding), so a link
/// cannot carry a message through the sign-in.
pub fn is_local_path(next: &str) -> bool {
    if next.len() > 2048 {
        return false;
    }
    let (path, query) = next.split_once('?').unwrap_or((next, ""));
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let last = segments.len() - 1;
    let path_ok = rest
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"/_-.".contains(&c))
        && segments
            .iter()
            .enumerate()
            .all(|(i, s)| !matches!(*s, "." | "..") && (!s.is_empty() || i == last));
    let query_ok =
        query.bytes().all(|c| c.is_ascii_graphic() && c != b'\\') && !carries_form_error(query);
    path_ok && query_ok
}

/// Leptos's no-JavaScript error parameters in a page's query.
pub(crate) const FORM_ERROR_KEYS: [&str; 2] = ["__err", "__path"];

/// Whether a query carries Leptos's error parameters, read decoded as Leptos reads them
/// (`%5F%5Ferr` is `__err`).
pub(crate) fn carries_form_error(query: &str) -> bool {
    url::form_urlencoded::parse(query.as_bytes())
        .any(|(k, _)| FORM_ERROR_KEYS.contains(&k.as_ref()))
}

/// A query's pairs, decoded, without the keys in `drop`.
pub fn query_without(query: &str, drop: &[&str]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| !drop.contains(&k.as_ref()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Whether a request asks for HTML: a browser's navigation or plain form post (a script
/// of the hydrated console asks for JSON).
pub fn accepts_html(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// The gate in front of every console page and server function (SPEC §8: console pages
/// require login; state changes need the session): a POST from another origin gets 403;
/// signed out, a page goes to `/login?next=…`, a plain form post to `/login`, and a
/// server-function call from the browser gets 401. An error carried in a page's URL
/// (`__err`, the no-JavaScript form channel) is dropped unless the page was reached from
/// this console, so a link cannot plant a message on a page.
pub async fn gate(
    State(state): State<ConsoleState>,
    session: Session,
    req: Request,
    next: Next,
) -> Response {
    let mut res = gate_inner(state, session, req, next).await;
    // no page of the console may be framed by another page: a framed Approve button
    // was one click from a grant (security review 32.4)
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        http::HeaderValue::from_static("frame-ancestors 'none'"),
    );
    h.insert(
        header::X_FRAME_OPTIONS,
        http::HeaderValue::from_static("DENY"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    res
}

pub(crate) async fn gate_inner(
    state: ConsoleState,
    session: Session,
    mut req: Request,
    next: Next,
) -> Response {
    let graft = &state.graft;
    // the console answers only the names it is served under (DNS rebinding against a
    // loopback install, security review 32.13)
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("");
    if !host_allowed(host, &state.allowed_hosts) {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: this Host is not one Graft is served under (GRAFT_ALLOWED_HOSTS, GRAFT_PUBLIC_URL)",
        )
            .into_response();
    }
    if has_dot_segment(req.uri().path()) {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    }
    let method = req.method().clone();
    let is_form_post = method == http::Method::POST;
    if method != http::Method::GET && method != http::Method::HEAD {
        let public_origin = state.public_url.trim_end_matches('/');
        if !from_own_pages(&req, public_origin) {
            return (StatusCode::FORBIDDEN, "cross-origin request refused").into_response();
        }
    } else if let Some(query) = req.uri().query().filter(|q| carries_form_error(q)) {
        // an error shows only when this session's own post set it (see FormErrors)
        let owner: Option<String> = session.get(FORM_ERRORS_KEY).await.ok().flatten();
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let restored: Option<Vec<(String, String)>> = pairs
            .iter()
            .map(|(k, v)| {
                if k == "__err" {
                    let value = owner.as_deref().and_then(|o| state.form_errors.get(o, v))?;
                    Some((k.clone(), value))
                } else {
                    Some((k.clone(), v.clone()))
                }
            })
            .collect();
        match restored {
            Some(pairs) => {
                let q = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs)
                    .finish();
                if let Ok(uri) = format!("{}?{q}", req.uri().path()).parse() {
                    *req.uri_mut() = uri;
                }
            }
            None => {
                let kept = query_without(query, &FORM_ERROR_KEYS);
                let mut target = req.uri().path().to_string();
                if !kept.is_empty() {
                    target.push('?');
                    target.push_str(
                        &url::form_urlencoded::Serializer::new(String::new())
                            .extend_pairs(kept)
                            .finish(),
                    );
                }
                return Redirect::to(&target).into_response();
            }
        }
    }
    if is_public(req.uri().path()) || person_of(graft, &session).await.is_some() {
        let is_asset = req.uri().path().starts_with("/pkg/");
        let mut res = next.run(req).await;
        if is_form_post {
            keep_form_error(&state, &session, &mut res).await;
        }
        // pages show tokens and history: keep them out of caches
        if !is_asset {
            res.headers_mut().insert(
                header::CACHE_CONTROL,
                http::HeaderValue::from_static("no-store"),
            );
        }
        return res;
    }
    let path = req.uri().path();
    if req.method() == http::Method::GET {
        let target = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let next: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
        return Redirect::to(&format!("/login?next={next}")).into_response();
    }
    // a plain form post (no JavaScript) goes to the sign-in page; a script gets 401
    if accepts_html(req.headers()) || !path.starts_with("/api/") {
        return Redirect::to("/login").into_response();
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        "\"SignedOut\"",
    )
        .into_response()
}

/// A form post's redirect that carries a Leptos form error (`__err`) gets a token in its
/// place, the value kept for this session (see [`FormErrors`]).
pub(crate) async fn keep_form_error(state: &ConsoleState, session: &Session, res: &mut Response) {
    let Some(location) = res
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return;
    };
    let (path, query) = location.split_once('?').unwrap_or((&location, ""));
    if !carries_form_error(query) {
        return;
    }
    let owner: String = match session.get::<String>(FORM_ERRORS_KEY).await.ok().flatten() {
        Some(o) => o,
        None => {
            let o = crate::service::random_hex(16);
            if session.insert(FORM_ERRORS_KEY, o.clone()).await.is_err() {
                return;
            }
            o
        }
    };
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| {
            if k == "__err" {
                (
                    k.into_owned(),
                    state.form_errors.put(&owner, v.into_owned()),
                )
            } else {
                (k.into_owned(), v.into_owned())
            }
        })
        .collect();
    let q = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    if let Ok(v) = http::HeaderValue::from_str(&format!("{path}?{q}")) {
        res.headers_mut().insert(header::LOCATION, v);
    }
}

/// A server function's arguments that do not decode (a missing field, a number that is
/// not one, a body that is not the encoding it claims) are the client's error: leptos
/// answers them 500 with `{"Transport": "error deserializing server function arguments:
/// …"}`, which this layer turns into 400 with the same body (found by the http_endpoint
/// fuzz target). Other answers pass unchanged.
pub async fn argument_errors(req: Request, next: Next) -> Response {
    let is_server_fn = req.uri().path().starts_with("/api/");
    let resp = next.run(req).await;
    if !is_server_fn || resp.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal").into_response();
    };
    let transport = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .is_some_and(|v| v.get("Transport").is_some());
    if transport {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// `GET /skill/SKILL.md`: the Graft skill (agentskills.io format).
pub async fn skill() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
        crate::console::snippets::SKILL_MD,
    )
}

/// Revalidation for the console's bundle and stylesheet under `/pkg/` (RFC 9111 §5.2.2.4
/// `no-cache`, RFC 9110 §8.8.3 ETag and §13.1.2 `If-None-Match`): every answer for a file
/// there carries `Cache-Control: no-cache` and a weak ETag made of the file's length and
/// modification time (as nginx makes them), and a GET whose `If-None-Match` names the
/// current ETag gets 304 Not Modified without a body. A rebuilt bundle reaches the
/// browser on its next load (never a stale bundle next to new pages, which would not
/// hydrate); an unchanged one costs a round trip, not megabytes. The file handler sends
/// a file's precompressed neighbour (`graft_bg.wasm.br`, `.gz`, which
/// `scripts/build-site.sh` writes) to a browser that accepts its encoding (issue 28.12),
/// so every answer also says `Vary: Accept-Encoding` (RFC 9110 §12.5.5); the weak ETag
/// stands for all of a file's encodings. Paths outside `site_root/pkg` or missing files
/// pass through to the file handler (404).
pub async fn pkg_revalidate(
    State(site_root): State<Arc<std::path::PathBuf>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(rel) = req.uri().path().strip_prefix("/pkg/") else {
        return next.run(req).await;
    };
    let safe = !rel.is_empty()
        && std::path::Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let etag = safe
        .then(|| std::fs::metadata(site_root.join("pkg").join(rel)).ok())
        .flatten()
        .filter(|m| m.is_file())
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("W/\"{:x}-{:x}\"", m.len(), mtime)
        });
    let Some(etag) = etag else {
        return next.run(req).await;
    };
    let matches = req
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == etag.trim_start_matches("W/")
        });
    let mut res = if matches && matches!(*req.method(), http::Method::GET | http::Method::HEAD) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        next.run(req).await
    };
    if res.status().is_success() || res.status() == StatusCode::NOT_MODIFIED {
        let h = res.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-cache"),
        );
        if let Ok(v) = http::HeaderValue::from_str(&etag) {
            h.insert(header::ETAG, v);
        }
        let varies = h
            .get_all(header::VARY)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|v| v.trim().eq_ignore_ascii_case("accept-encoding"));
        if !varies {
            h.append(
                header::VARY,
                http::HeaderValue::from_static("accept-encoding"),
            );
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_dot_segments() {
        let allowed: Vec<String> = ["localhost", "127.0.0.1", "::1", "graft.example:8443"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for ok in [
            "localhost:3000",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:3000",
            "graft.example:8443",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "localhost.evil.example",
            "graft.example",
            "graft.example:443",
            "127.0.0.2",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
        for bad in [
            "/pkg/../agents",
            "/pkg/%2e%2e/agents",
            "/pkg/%2E./x",
            "/./agents",
            "/pkg/..;/x",
            "/a/..",
        ] {
            assert!(has_dot_segment(bad), "{bad}");
        }
        for ok in ["/", "/agents/a.b", "/pkg/graft.js", "/tools/x/y...z"] {
            assert!(!has_dot_segment(ok), "{ok}");
        }
    }

    #[test]
    fn only_plain_local_paths_are_followed_after_sign_in() {
        for ok in [
            "/",
            "/agents",
            "/agents/",
            "/agents/alpha.1?page=2",
            "/tools?q=list%20users",
            "/tools/petstore/add_pet",
        ] {
            assert!(is_local_path(ok), "{ok}");
        }
        for bad in [
            "",
            "agents",
            "//evil.example/",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/x",
            "/ /x",
            "https://evil.example/",
            "/é",
            "/.//example.com",
            "/..//example.com",
            "/%2e//example.com",
            "/a//b",
            "/agents/x?__err=abc",
            "/agents/x?a=1&%5F%5Ferr=abc",
            "/agents/x?__er%72=abc",
            "/agents/x?__path=%2Fapi",
        ] {
            assert!(!is_local_path(bad), "{bad:?}");
        }
    }
}
