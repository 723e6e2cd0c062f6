//! What the calls log keeps of a call's exchange with its vendor (issue 28.9), for the
//! console's call detail.

use crate::proxy::redact::{logged_input, redact_forms, secret_field, secret_forms};
use serde_json::{json, Value};

/// Who sends an HTTP tool's call, and how (SPEC §4.1, §4.3): an agent's dry run stops
/// before a write; an agent's call asks for approval where SPEC §4.4 says so; a person
/// who sends a tool from its page (issue 28.10) decides themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sending {
    DryRun,
    Agent,
    Person,
}

impl Sending {
    /// An agent's call: a dry run when `dry_run`.
    pub(super) fn agent(dry_run: bool) -> Self {
        if dry_run {
            Self::DryRun
        } else {
            Self::Agent
        }
    }
}

/// What the calls log's detail keeps of one call (issue 28.9): JSON texts, redacted of
/// the connection's secrets and secret-looking fields by the run, and of the
/// input's secret values by the caller.
#[derive(Debug, Default)]
pub(super) struct SentDetail {
    /// The request as sent (`{method, url, headers, body}`, SPEC §4.3's preview).
    pub(super) request: Option<String>,
    /// The vendor's answer (`{status, headers, body}`).
    pub(super) response: Option<String>,
    /// The connection's secrets and the input's secret values, redacted before anything
    /// is cut (a secret cut in two would no longer be found).
    pub(super) hidden: Vec<String>,
}

/// Bytes of the kept headers' text past which the rest are left out.
const DETAIL_HEADER_BYTES: usize = 4096;

/// Bytes of an answer's text body the detail keeps (cut there, ending in "…").
const DETAIL_BODY_BYTES: usize = 8192;

/// The detail of an answer: its status, the headers Graft keeps (redacted already), and
/// its body: a JSON body with secret-looking fields redacted (at most 4 KB, as the calls
/// log keeps an input), else the text the agent received, cut to [`DETAIL_BODY_BYTES`].
pub(super) fn response_detail(
    status: u16,
    headers: &serde_json::Map<String, Value>,
    json_body: Option<&Value>,
    text: &str,
    secrets: &[String],
) -> String {
    // the kept headers, to a bound (a vendor that reflects headers would fill the log)
    let mut kept = serde_json::Map::new();
    let mut bytes = 0;
    for (name, value) in headers {
        bytes += name.len() + value.to_string().len();
        if bytes > DETAIL_HEADER_BYTES {
            kept.insert("…".into(), Value::String("more headers left out".into()));
            break;
        }
        kept.insert(name.clone(), value.clone());
    }
    let headers = &kept;
    // a JSON answer too big to have been parsed for the agent is parsed here, so that
    // its secret-looking fields are redacted like a small one's
    let parsed = match json_body {
        Some(_) => None,
        None => serde_json::from_str::<Value>(text)
            .ok()
            .filter(|v| v.is_object() || v.is_array()),
    };
    match json_body.or(parsed.as_ref()) {
        Some(body) => logged_input(
            &json!({"status": status, "headers": headers, "body": body}),
            secrets,
        ),
        None => {
            // read only as far as the kept part needs: a start tag past it is still
            // found whole (START_TAG_BYTES), a pair or element cut at the end reads
            // <redacted> to the end
            let (read, read_all) = redact_forms(
                text,
                &secret_forms(secrets),
                DETAIL_BODY_BYTES + 2 * START_TAG_BYTES,
            );
            let mut body = redact_elements(&redact_pairs(&read));
            if !read_all && body.len() <= DETAIL_BODY_BYTES {
                body.push('…');
            } else if body.len() > DETAIL_BODY_BYTES {
                let mut end = DETAIL_BODY_BYTES;
                while !body.is_char_boundary(end) {
                    end -= 1;
                }
                body.truncate(end);
                body.push('…');
            }
            json!({"status": status, "headers": headers, "body": body}).to_string()
        }
    }
}

/// `text` with the value of every `name=value` and `name: value` pair whose name looks
/// secret ([`secret_field`]: `password=…`, `access_token=…`, `"client_secret": "…"` in
/// text that is not whole JSON) replaced by `<redacted>`; the value ends at `&`, `,`,
/// `;`, `<`, a quote or whitespace.
fn redact_pairs(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'=' || b == b':' {
            // the name before: letters, digits, '_', '-', '.', maybe quoted
            let mut end = i;
            if end > 0 && bytes[end - 1] == b'"' {
                end -= 1;
            }
            let mut start = end;
            while start > 0
                && (bytes[start - 1].is_ascii_alphanumeric()
                    || matches!(bytes[start - 1], b'_' | b'-' | b'.'))
            {
                start -= 1;
            }
            if start < end && secret_field(&text[start..end]) {
                let mut v = i + 1;
                while v < bytes.len() && matches!(bytes[v], b' ' | b'"' | b'\'') {
                    v += 1;
                }
                let mut w = v;
                while w < bytes.len()
                    && !matches!(
                        bytes[w],
                        b'&' | b','
                            | b';'
                            | b'<'
                            | b'"'
                            | b'\''
                            | b' '
                            | b'\n'
                            | b'\r'
                            | b'\t'
                            | b'}'
                    )
                {
                    w += 1;
                }
                if w > v {
                    out.push_str(&text[copied..v]);
                    out.push_str("<redacted>");
                    copied = w;
                    i = w;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// How far past an element's name its start tag may end (a longer one is left alone,
/// so a body full of `<` without `>` costs linear time).
const START_TAG_BYTES: usize = 1024;

/// `text` with the text of every XML (or HTML) element whose local name looks secret
/// ([`secret_field`]: `<password>…</password>`, `<ns:ApiKey a="1">…</ns:ApiKey>`)
/// replaced by `<redacted>`; the text ends at the next `<`. Elements holding elements,
/// empty ones and `<x/>` are left as they are.
fn redact_elements(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < bytes.len()
            && (bytes[j].is_ascii_alphanumeric() || matches!(bytes[j], b'_' | b'-' | b'.' | b':'))
        {
            j += 1;
        }
        let name = &text[i + 1..j];
        let local = name.rsplit(':').next().unwrap_or(name);
        if !local.is_empty() && secret_field(local) {
            let window = &bytes[j..bytes.len().min(j + START_TAG_BYTES)];
            if let Some(gt) = window.iter().position(|&b| b == b'>').map(|k| j + k) {
                let v = gt + 1;
                let w = text[v..].find('<').map_or(bytes.len(), |k| v + k);
                if bytes[gt - 1] != b'/' && !text[v..w].trim().is_empty() {
                    out.push_str(&text[copied..v]);
                    out.push_str("<redacted>");
                    copied = w;
                    i = w;
                    continue;
                }
            }
        }
        i = j;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_pairs_in_text_are_redacted() {
        assert_eq!(
            redact_pairs("access_token=abc123&scope=read&password=hunter2"),
            "access_token=<redacted>&scope=read&password=<redacted>"
        );
        assert_eq!(
            redact_pairs(r#"{"client_secret": "k-77", "name": "x""#),
            r#"{"client_secret": "<redacted>", "name": "x""#
        );
        assert_eq!(redact_pairs("ratio: 3"), "ratio: 3");
    }

    #[test]
    fn secret_elements_in_xml_are_redacted() {
        assert_eq!(
            redact_elements(
                r#"<auth><ns:ApiKey kind="live">k-9</ns:ApiKey><user>ann</user><password/><token></token></auth>"#
            ),
            r#"<auth><ns:ApiKey kind="live"><redacted></ns:ApiKey><user>ann</user><password/><token></token></auth>"#
        );
        assert_eq!(
            redact_elements("<secret>s3</secret> total=4"),
            "<secret><redacted></secret> total=4"
        );
        // a start tag that never ends, and `<` alone, are left as they are
        let odd = format!("<password {} < <", "a".repeat(2000));
        assert_eq!(redact_elements(&odd), odd);
        // through the detail: a vendor's XML answer keeps no secret-looking element
        let d = response_detail(
            200,
            &serde_json::Map::new(),
            None,
            "<?xml version=\"1.0\"?><session><sessionToken>tk-55</sessionToken></session>",
            &[],
        );
        assert!(!d.contains("tk-55"), "{d}");
    }

    #[test]
    fn a_big_json_answer_is_redacted_by_field_and_headers_are_bounded() {
        let body = format!(
            r#"{{"password": "pw-1", "pad": "{}"}}"#,
            "x".repeat(200_000)
        );
        let mut headers = serde_json::Map::new();
        for i in 0..200 {
            headers.insert(format!("x-h-{i}"), Value::String("v".repeat(100)));
        }
        let d = response_detail(200, &headers, None, &body, &[]);
        assert!(!d.contains("pw-1"), "{}", &d[..200]);
        assert!(d.len() < 12_000, "{}", d.len());
        let d = response_detail(200, &headers, None, "plain text", &[]);
        assert!(d.contains("more headers left out"), "{d}");
        assert!(d.len() < 6_000, "{}", d.len());
    }
}
