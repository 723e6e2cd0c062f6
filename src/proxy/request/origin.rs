//! Where a request may go: on the vendor's origin (scheme, host and port, RFC 6454 §4)
//! and under its base path, with no dot segment in any spelling; checked for the request
//! Graft builds and for every redirect it follows.

use url::Url;

/// Whether `url` is on `base`'s origin (scheme, host and port, RFC 6454 §4).
pub fn same_origin(url: &Url, base: &Url) -> bool {
    url.scheme() == base.scheme()
        && url.host_str() == base.host_str()
        && url.port_or_known_default() == base.port_or_known_default()
}

/// Whether `url`'s path is `base`'s path or below it, segment-wise (`/v1` holds `/v1`
/// and `/v1/x`, not `/v10`), with nothing a server could read as climbing out: no dot
/// segment in any spelling (`..`, `%2e%2e`, `..;x`, and after percent-decoding twice:
/// `..%2f`, `..%5c`, `..%3b`, `%252e%252e`), no NUL or other control byte, and no
/// percent-encoding that decodes to something other than UTF-8 (overlong `%C0%AE`).
pub fn under_base_path(url: &Url, base: &Url) -> bool {
    let root = base.path().trim_end_matches('/');
    let path = url.path();
    let below = root.is_empty()
        || path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'));
    below && !climbs(path)
}

/// Whether a URL path holds anything a server could read as a dot segment (see
/// [`under_base_path`]).
fn climbs(path: &str) -> bool {
    let mut text = path.to_string();
    for _ in 0..3 {
        // `\` is a separator to some servers, `;` starts matrix parameters
        if text
            .split(['/', '\\'])
            .any(|seg| matches!(seg.split(';').next().unwrap_or(""), "." | ".."))
        {
            return true;
        }
        if !text.contains('%') {
            return false;
        }
        let decoded: Vec<u8> = percent_encoding::percent_decode_str(&text).collect();
        match String::from_utf8(decoded) {
            // a lone `%` (a value's own `%25`, decoded) stays as it is
            Ok(t) if t == text => return false,
            Ok(t) if !t.chars().any(char::is_control) => text = t,
            _ => return true,
        }
    }
    // still changing after three rounds of decoding: nothing legitimate nests that deep
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_spelling_of_a_dot_segment_leaves_the_base_path() {
        let base = Url::parse("https://api.test/api").unwrap();
        // found by a newcomer's review: each of these was followed with the credential
        for path in [
            "/api/..%2foutside",
            "/api/%2e%2e%2foutside",
            "/api/..%5coutside",
            "/api/..%3b/outside",
            "/api/%C0%AE%C0%AE/outside",
            "/api/..%00/outside",
            "/api/x/..%3B",
            "/api/%252e%252e/outside",
            "/api/..;/outside",
            "/api/%2e%2E/outside",
        ] {
            let url = Url::parse(&format!("https://api.test{path}")).unwrap();
            assert!(!under_base_path(&url, &base), "{path}");
        }
        for path in [
            "/api",
            "/api/x",
            "/api/100%25",
            "/api/a%2Fb",
            "/api/caf%C3%A9",
            "/api/...x",
            "/api//x",
        ] {
            let url = Url::parse(&format!("https://api.test{path}")).unwrap();
            assert!(under_base_path(&url, &base), "{path}");
        }
        assert!(!under_base_path(
            &Url::parse("https://api.test/apix").unwrap(),
            &base
        ));
    }
}
