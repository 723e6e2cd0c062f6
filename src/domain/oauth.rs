//! The pure rules of Graft's OAuth authorization server (SPEC §10.1, issue 26; MCP
//! 2025-11-25 and 2026-07-28 "Authorization", OAuth 2.1): which redirect URIs a client
//! may register, how one from an authorization request matches, PKCE S256 (RFC 7636),
//! what a client ID metadata document must say, and the canonical resource of `/mcp`
//! (RFC 8707). No I/O.

use base64::Engine;
use sha2::{Digest, Sha256};

/// Custom URI schemes accepted without configuration: Cursor's
/// (`cursor://anysphere.cursor-mcp/oauth/callback`). Others need
/// `GRAFT_OAUTH_ALLOWED_SCHEMES`.
pub const BUILT_IN_SCHEMES: &[&str] = &["cursor"];

/// Most redirect URIs one client may register.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Longest redirect URI, client name or client id, in bytes.
pub const MAX_FIELD_BYTES: usize = 2000;

/// The resource clients were given for `/mcp`: the public URL without a trailing
/// slash, then `/mcp` (`https://graft.example/mcp`, never `…//mcp` or `…/mcp/`). The
/// protected-resource metadata names it byte for byte (VS Code compares) and every
/// token is bound to it.
pub fn mcp_resource(public_url: &str) -> String {
    format!("{}/mcp", public_url.trim_end_matches('/'))
}

/// Whether `host` is a loopback host name (RFC 8252 §7.3: such a redirect URI matches
/// on any port).
fn is_loopback(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1")
}

/// Checks one redirect URI a client registers (RFC 7591 §2, OAuth 2.1 §2.3.1): an
/// absolute URI without a fragment, and `https`, `http` on a loopback host (VS Code's
/// `http://127.0.0.1:<port>`, Claude Code's `http://localhost:<port>/callback`), or a
/// custom scheme in [`BUILT_IN_SCHEMES`] or `allowed_schemes`. Errors: why not, in words
/// an operator can act on.
pub fn check_redirect_uri(uri: &str, allowed_schemes: &[String]) -> Result<(), String> {
    if uri.len() > MAX_FIELD_BYTES {
        return Err(format!("a redirect URI is at most {MAX_FIELD_BYTES} bytes"));
    }
    let parsed =
        url::Url::parse(uri).map_err(|e| format!("{uri:?} is not an absolute URI ({e})"))?;
    if parsed.fragment().is_some() {
        return Err(format!(
            "{uri:?} has a fragment, which a redirect URI may not have"
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "{uri:?} holds a user name or password, which a redirect URI may not have"
        ));
    }
    match parsed.scheme() {
        "https" if parsed.host_str().is_some() => Ok(()),
        "http" if parsed.host_str().is_some_and(is_loopback) => Ok(()),
        "http" => Err(format!(
            "{uri:?} is plain http on another host than loopback: use https"
        )),
        "javascript" | "data" | "file" | "vbscript" => {
            Err(format!("{uri:?} uses a scheme no redirect may use"))
        }
        s if BUILT_IN_SCHEMES.contains(&s) || allowed_schemes.iter().any(|a| a == s) => Ok(()),
        s => Err(format!(
            "{uri:?} uses the custom scheme {s:?}, which this server does not allow (an operator can add it to GRAFT_OAUTH_ALLOWED_SCHEMES)"
        )),
    }
}

/// Whether the `redirect_uri` of an authorization or token request matches one a
/// client registered: exactly, or, for `http` on a loopback host, with any port (RFC
/// 8252 §7.3, which native clients such as VS Code rely on).
pub fn redirect_matches(registered: &[String], requested: &str) -> bool {
    if registered.iter().any(|r| r == requested) {
        return true;
    }
    let Ok(req) = url::Url::parse(requested) else {
        return false;
    };
    // only the port may differ: not the spelling (case, dot segments), a user name or a
    // fragment
    let plain = req.as_str() == requested || req.as_str().strip_suffix('/') == Some(requested);
    if req.scheme() != "http"
        || !req.host_str().is_some_and(is_loopback)
        || !plain
        || req.fragment().is_some()
        || !req.username().is_empty()
        || req.password().is_some()
    {
        return false;
    }
    registered.iter().any(|r| {
        url::Url::parse(r).is_ok_and(|reg| {
            reg.scheme() == "http"
                && reg.host_str() == req.host_str()
                && reg.path() == req.path()
                && reg.query() == req.query()
        })
    })
}

/// RFC 7636 §4.2 S256: `BASE64URL(SHA256(verifier))`, the `code_challenge` a client
/// sends for `verifier`.
pub fn s256_challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// RFC 7636 §4.6 with S256: whether `BASE64URL(SHA256(verifier)) == challenge`. The
/// verifier must be 43–128 characters of `[A-Za-z0-9-._~]` (§4.1).
pub fn pkce_verified(verifier: &str, challenge: &str) -> bool {
    let ok_chars = verifier
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._~".contains(&c));
    if !(43..=128).contains(&verifier.len()) || !ok_chars {
        return false;
    }
    s256_challenge(verifier) == challenge
}

/// Whether a `code_challenge` has the shape of an S256 challenge (43 base64url
/// characters, the encoding of 32 bytes).
pub fn challenge_well_formed(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// What a client says of itself, from a registration request (RFC 7591 §2) or a client
/// ID metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientMetadata {
    /// `client_name`, or the redirect host when none is given.
    pub name: String,
    /// `redirect_uris`, each checked by [`check_redirect_uri`].
    pub redirect_uris: Vec<String>,
}

/// Reads the metadata of a public client (RFC 7591 §2; the client ID metadata document
/// draft): `redirect_uris` (1 to [`MAX_REDIRECT_URIS`], each allowed), an optional
/// `client_name`, `token_endpoint_auth_method` `none` or absent (Graft's clients are
/// public: PKCE, no secret), `grant_types` within authorization_code and refresh_token,
/// `response_types` within code. Errors: RFC 7591 §3.2.2's
/// `("invalid_redirect_uri" | "invalid_client_metadata", description)`.
pub fn read_client_metadata(
    doc: &serde_json::Value,
    allowed_schemes: &[String],
) -> Result<ClientMetadata, (&'static str, String)> {
    let meta = |m: String| ("invalid_client_metadata", m);
    let Some(obj) = doc.as_object() else {
        return Err(meta("the client metadata is not a JSON object".into()));
    };
    let uris: Vec<String> = match obj.get("redirect_uris") {
        Some(serde_json::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|u| u.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                (
                    "invalid_redirect_uri",
                    "redirect_uris holds a value that is not a string".to_string(),
                )
            })?,
        _ => {
            return Err((
                "invalid_redirect_uri",
                "redirect_uris must be a non-empty array of URIs".into(),
            ))
        }
    };
    if uris.len() > MAX_REDIRECT_URIS {
        return Err((
            "invalid_redirect_uri",
            format!("at most {MAX_REDIRECT_URIS} redirect URIs"),
        ));
    }
    for u in &uris {
        check_redirect_uri(u, allowed_schemes).map_err(|e| ("invalid_redirect_uri", e))?;
    }
    // a client that asks for a secret is registered as a public one all the same and told
    // so ("none" in the answer, RFC 7591 §3.2.1): claude.ai and Claude Desktop ask for
    // client_secret_post
    match obj.get("token_endpoint_auth_method").and_then(|v| v.as_str()) {
        None | Some("none" | "client_secret_post" | "client_secret_basic") => {}
        Some(other) => {
            return Err(meta(format!(
                "token_endpoint_auth_method {other:?} is not supported: Graft's clients are public (\"none\", with PKCE)"
            )))
        }
    }
    if let Some(g) = obj.get("grant_types") {
        let ok = g.as_array().is_some_and(|a| {
            a.iter().all(|v| {
                matches!(
                    v.as_str(),
                    Some("authorization_code") | Some("refresh_token")
                )
            })
        });
        if !ok {
            return Err(meta(
                "grant_types may hold only authorization_code and refresh_token".into(),
            ));
        }
    }
    if let Some(r) = obj.get("response_types") {
        let ok = r
            .as_array()
            .is_some_and(|a| a.iter().all(|v| v.as_str() == Some("code")));
        if !ok {
            return Err(meta("response_types may hold only code".into()));
        }
    }
    let name = match obj.get("client_name") {
        None | Some(serde_json::Value::Null) => url::Url::parse(&uris[0])
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| "an OAuth client".into()),
        Some(serde_json::Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() || s.len() > 200 || s.chars().any(|c| c.is_control() || is_format(c)) {
                return Err(meta(
                    "client_name must be 1 to 200 characters without control or invisible formatting characters".into(),
                ));
            }
            s.to_string()
        }
        Some(_) => return Err(meta("client_name must be a string".into())),
    };
    Ok(ClientMetadata {
        name,
        redirect_uris: uris,
    })
}

/// Whether `c` is an invisible formatting character (Unicode category Cf: zero-width
/// spaces and joiners, direction overrides and isolates, the byte-order mark, the soft
/// hyphen), which could make one name look like another on the consent page.
fn is_format(c: char) -> bool {
    matches!(c,
        // Cf: soft hyphen, Arabic and Syriac marks, zero-width and direction controls,
        // invisible operators, the byte-order mark, interlinear annotations, Egyptian and
        // musical format controls, tags
        '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}'
        | '\u{08E2}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}' | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0001}'
        | '\u{E0020}'..='\u{E007F}'
        // blank-looking letters and joiners: the combining grapheme joiner, variation
        // selectors, Hangul fillers, the blank Braille pattern
        | '\u{034F}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' | '\u{115F}'
        | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}')
}

/// Whether a `client_id` is a client ID metadata document's URL (an `https` URL with
/// a path, per the draft; `http` on loopback too when `loopback` is allowed, which only
/// tests do with `GRAFT_VENDOR_LOOPBACK=allow`).
pub fn is_metadata_client_id(client_id: &str, loopback: bool) -> bool {
    url::Url::parse(client_id).is_ok_and(|u| {
        let path_ok = u.path() != "/" && !u.path().is_empty() && u.fragment().is_none();
        match u.scheme() {
            "https" => path_ok && u.host_str().is_some(),
            "http" => loopback && path_ok && u.host_str().is_some_and(is_loopback),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_real_clients_redirect_uris_are_accepted_and_others_refused() {
        for uri in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "https://chatgpt.com/connector/oauth/abc123",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://127.0.0.1:33418",
            "http://127.0.0.1:33418/",
            "https://vscode.dev/redirect",
            "http://localhost:8976/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
        ] {
            assert_eq!(check_redirect_uri(uri, &[]), Ok(()), "{uri}");
        }
        for uri in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "myapp://callback",
            "https://claude.ai/cb#frag",
            "not a uri",
            "/relative",
            "https://user:pw@evil.example/cb",
        ] {
            assert!(check_redirect_uri(uri, &[]).is_err(), "{uri}");
        }
        assert_eq!(
            check_redirect_uri("myapp://callback", &["myapp".into()]),
            Ok(())
        );
    }

    #[test]
    fn loopback_redirects_match_on_any_port_and_others_exactly() {
        let reg = vec![
            "http://127.0.0.1:1234/callback".to_string(),
            "https://claude.ai/api/mcp/auth_callback".to_string(),
        ];
        assert!(redirect_matches(&reg, "http://127.0.0.1:5678/callback"));
        assert!(!redirect_matches(&reg, "http://127.0.0.1:5678/other"));
        assert!(!redirect_matches(&reg, "http://localhost:5678/callback"));
        assert!(redirect_matches(
            &reg,
            "https://claude.ai/api/mcp/auth_callback"
        ));
        assert!(!redirect_matches(
            &reg,
            "https://claude.ai/api/mcp/auth_callback/"
        ));
        assert!(!redirect_matches(
            &reg,
            "https://claude.ai:8443/api/mcp/auth_callback"
        ));
        for spelled in [
            "http://127.0.0.1:5678/callback#x",
            "http://evil.example@127.0.0.1:5678/callback",
            "http://127.0.0.1:5678/x/../callback",
            "HTTP://127.0.0.1:5678/callback",
        ] {
            assert!(!redirect_matches(&reg, spelled), "{spelled}");
        }
    }

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(challenge_well_formed(challenge));
        assert!(pkce_verified(verifier, challenge));
        assert!(!pkce_verified(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX",
            challenge
        ));
        assert!(!pkce_verified("short", challenge));
    }

    #[test]
    fn the_resource_never_doubles_or_ends_with_a_slash() {
        assert_eq!(mcp_resource("https://g.example"), "https://g.example/mcp");
        assert_eq!(mcp_resource("https://g.example/"), "https://g.example/mcp");
        assert_eq!(
            mcp_resource("https://g.example/base/"),
            "https://g.example/base/mcp"
        );
    }

    #[test]
    fn client_metadata_is_read_and_refused_in_rfc_7591_terms() {
        let m = read_client_metadata(
            &json!({"client_name": "Claude", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
                    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                    "token_endpoint_auth_method": "none"}),
            &[],
        )
        .unwrap();
        assert_eq!(m.name, "Claude");
        let no_name =
            read_client_metadata(&json!({"redirect_uris": ["http://127.0.0.1:9/cb"]}), &[])
                .unwrap();
        assert_eq!(no_name.name, "127.0.0.1");
        let bad = |doc| read_client_metadata(&doc, &[]).unwrap_err().0;
        assert_eq!(bad(json!({"redirect_uris": []})), "invalid_redirect_uri");
        assert_eq!(
            bad(json!({"redirect_uris": ["http://evil.example/"]})),
            "invalid_redirect_uri"
        );
        assert_eq!(
            bad(
                json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"})
            ),
            "invalid_client_metadata"
        );
        assert!(read_client_metadata(
            &json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_post"}),
            &[]
        )
        .is_ok());
        assert_eq!(
            bad(
                json!({"redirect_uris": ["https://a.example/cb"], "client_name": "Claude\u{202e}gnp.exe"})
            ),
            "invalid_client_metadata"
        );
        assert_eq!(
            bad(
                json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]})
            ),
            "invalid_client_metadata"
        );
    }

    #[test]
    fn metadata_client_ids_are_https_urls_with_a_path() {
        assert!(is_metadata_client_id(
            "https://app.example/oauth/client.json",
            false
        ));
        assert!(!is_metadata_client_id("https://app.example/", false));
        assert!(!is_metadata_client_id("3f2a9c", false));
        assert!(!is_metadata_client_id(
            "http://127.0.0.1:9/client.json",
            false
        ));
        assert!(is_metadata_client_id(
            "http://127.0.0.1:9/client.json",
            true
        ));
    }
}
