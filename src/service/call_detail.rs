//! What the calls log keeps of a call's exchange with its vendor (issue 28.9), for the
//! console's call detail.

use crate::proxy::redact::{logged_input, redact};
use serde_json::{json, Value};

/// What the calls log's detail keeps of one call (issue 28.9): JSON texts, redacted of
/// the connection's secrets and secret-looking fields by the run, and of the
/// input's secret values by the caller.
#[derive(Debug, Default)]
pub(super) struct SentDetail {
    /// The request as sent (`{method, url, headers, body}`, SPEC §4.3's preview).
    pub(super) request: Option<String>,
    /// The vendor's answer (`{status, headers, body}`).
    pub(super) response: Option<String>,
}

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
    match json_body {
        Some(body) => logged_input(
            &json!({"status": status, "headers": headers, "body": body}),
            secrets,
        ),
        None => {
            let mut body = redact(text, secrets);
            if body.len() > DETAIL_BODY_BYTES {
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
