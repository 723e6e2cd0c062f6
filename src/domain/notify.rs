//! Notices Graft sends a team's webhook (issue 28.3): what happened, the body in the
//! installation's format, and its signature.
//!
//! Signing follows Standard Webhooks (standardwebhooks.com, "Signature scheme"): the
//! headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
//! (`v1,` then the base64 of HMAC-SHA256 over `"{id}.{timestamp}.{body}"`, keyed with
//! the bytes of the secret after its `whsec_` prefix, base64-decoded). A receiver
//! checks it with any Standard Webhooks library, or with a few lines of HMAC.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

/// What a notice is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// An agent's call waits for a person's approval (SPEC §4.4).
    ApprovalRequested {
        /// The agent's name.
        agent: String,
        /// The tool, `vendor__name`.
        tool: String,
        /// The version asked for.
        version: i64,
        /// Where a person decides (the console's Approvals page, narrowed).
        url: String,
    },
    /// Approvals people gave (or were asked for) need a decision again: a new version
    /// changed what a tool's calls do, or the vendor moved to another origin (SPEC §4.4).
    ApprovalsAskedAgain {
        /// What they are of: a tool (`vendor__name`) or a vendor's slug.
        scope: String,
        /// How many approvals (agent and tool pairs) are pending again.
        approvals: usize,
        /// What changed, in words.
        why: String,
        /// Where a person decides (the console's Approvals page).
        url: String,
    },
    /// A vendor failed `errors` calls within `minutes` (errors and timeouts, across
    /// agents), at or above the installation's threshold.
    VendorErrors {
        /// The vendor's slug.
        vendor: String,
        /// Failed calls in the window.
        errors: u32,
        /// The window, minutes.
        minutes: u32,
        /// Where a person sees them (the console's calls log, failed calls).
        url: String,
    },
    /// A connection failed: the vendor refused its credential on a call, or a person's
    /// test of it failed.
    ConnectionFailed {
        /// The vendor's slug.
        vendor: String,
        /// The connection's label.
        connection: String,
        /// What happened, in words (never the secret).
        why: String,
        /// Where a person tests or replaces it (the vendor's page in the console).
        url: String,
    },
    /// A person asked for a test notice from the console or the CLI.
    Test {
        /// Who asked.
        person: String,
    },
}

impl Notice {
    /// The event's type in the `graft` format (`approval.requested`,
    /// `approval.reset`, `vendor.errors`, `connection.failed`, `webhook.test`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ApprovalRequested { .. } => "approval.requested",
            Self::ApprovalsAskedAgain { .. } => "approval.reset",
            Self::VendorErrors { .. } => "vendor.errors",
            Self::ConnectionFailed { .. } => "connection.failed",
            Self::Test { .. } => "webhook.test",
        }
    }

    /// One sentence for a person (the Slack format's `text`).
    pub fn text(&self) -> String {
        match self {
            Self::ApprovalRequested {
                agent,
                tool,
                version,
                url,
            } => format!("{agent} asks to run {tool} version {version}. Approve or deny it: {url}"),
            Self::ApprovalsAskedAgain {
                scope,
                approvals,
                why,
                url,
            } => {
                let (n, verb) = if *approvals == 1 {
                    ("1 approval".to_string(), "needs")
                } else {
                    (format!("{approvals} approvals"), "need")
                };
                format!("{n} of {scope} {verb} a decision again: {why}. Decide: {url}")
            }
            Self::VendorErrors {
                vendor,
                errors,
                minutes,
                url,
            } => format!("{vendor}: {errors} calls failed in the last {minutes} minutes (errors or timeouts). See them: {url}"),
            Self::ConnectionFailed {
                vendor,
                connection,
                why,
                url,
            } => format!("{vendor}: connection {connection} failed: {why}. Test or replace it: {url}"),
            Self::Test { person } => format!("A test notice from Graft, sent by {person}."),
        }
    }

    /// What the notice says, as JSON fields (the `graft` format's `data`).
    fn data(&self) -> Value {
        match self {
            Self::ApprovalRequested {
                agent,
                tool,
                version,
                url,
            } => json!({"agent": agent, "tool": tool, "version": version, "approvalUrl": url}),
            Self::ApprovalsAskedAgain {
                scope,
                approvals,
                why,
                url,
            } => json!({"scope": scope, "approvals": approvals, "why": why, "approvalUrl": url}),
            Self::VendorErrors {
                vendor,
                errors,
                minutes,
                url,
            } => json!({"vendor": vendor, "errors": errors, "minutes": minutes, "callsUrl": url}),
            Self::ConnectionFailed {
                vendor,
                connection,
                why,
                url,
            } => json!({"vendor": vendor, "connection": connection, "why": why, "vendorUrl": url}),
            Self::Test { person } => json!({"person": person}),
        }
    }
}

/// The body a webhook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"type", "timestamp" (RFC 3339), "text", "data"}`: Standard Webhooks' payload
    /// shape.
    Graft,
    /// `{"text"}`: what a Slack incoming webhook (and Mattermost's, Discord's `/slack`
    /// endpoint) accepts.
    Slack,
}

super::str_enum!(Format {
    Graft => "graft",
    Slack => "slack",
});

/// The body of `notice` sent at `at_ms` (ms since the epoch) in `format`.
pub fn body(notice: &Notice, format: Format, at_ms: i64) -> String {
    let value = match format {
        Format::Graft => json!({
            "type": notice.kind(),
            "timestamp": chrono::DateTime::from_timestamp_millis(at_ms)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                .unwrap_or_default(),
            "text": notice.text(),
            "data": notice.data(),
        }),
        Format::Slack => json!({"text": slack_escaped(&notice.text())}),
    };
    value.to_string()
}

/// `text` as Slack's message text wants it (api.slack.com, "Formatting text for app
/// surfaces", escaping): `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;`, so a name or a
/// reason cannot turn into a link or a mention.
pub fn slack_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A webhook URL as the console, the CLI and the audit show it: scheme, host and port,
/// then `/…` when a path, a query or a fragment follows; never a user or password. Any
/// part of a path can be the receiver's token (a Slack incoming webhook's
/// `/services/T…/B…/…`, an ntfy topic, a webhook.site id), so the whole URL is kept
/// sealed and only this is stored in the clear. A string that is not a URL reads `…`.
pub fn shown_url(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url.trim()) else {
        return "…".to_string();
    };
    let mut shown = format!("{}://", parsed.scheme());
    if let Some(host) = parsed.host_str() {
        shown.push_str(host);
    }
    if let Some(port) = parsed.port() {
        shown.push_str(&format!(":{port}"));
    }
    if !parsed.path().trim_matches('/').is_empty()
        || parsed.query().is_some()
        || parsed.fragment().is_some()
    {
        shown.push_str("/…");
    }
    shown
}

/// The prefix of a Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// The key bytes of `secret` (`whsec_` and base64; between 24 and 64 bytes as
/// Standard Webhooks asks). Errors: in words, for a person's input.
pub fn secret_key(secret: &str) -> Result<Vec<u8>, String> {
    let b64 = secret.trim().strip_prefix(SECRET_PREFIX).ok_or_else(|| {
        format!("a webhook secret starts with {SECRET_PREFIX} (leave it empty and Graft makes one)")
    })?;
    let key = STANDARD
        .decode(b64)
        .map_err(|_| format!("after {SECRET_PREFIX}, a webhook secret is base64"))?;
    if !(24..=64).contains(&key.len()) {
        return Err(format!(
            "a webhook secret holds 24 to 64 bytes; this one holds {}",
            key.len()
        ));
    }
    Ok(key)
}

/// A new secret from 32 random bytes (`whsec_` and base64).
pub fn new_secret(random: [u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(random))
}

/// The `webhook-signature` header of `body` sent as message `id` at `timestamp` (Unix
/// seconds), keyed with `key` ([`secret_key`]).
pub fn signature(key: &[u8], id: &str, timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// Waits before retry `attempt` (1-based) of a delivery that failed: 1 s, 4 s, 16 s
/// (×4 each time); `None` after the last of [`ATTEMPTS`].
pub fn backoff_ms(attempt: u32, base_ms: u64) -> Option<u64> {
    (attempt < ATTEMPTS).then(|| base_ms.saturating_mul(4u64.saturating_pow(attempt - 1)))
}

/// Deliveries of one notice at most (the first and three retries).
pub const ATTEMPTS: u32 = 4;

/// Whether an answer with `status` is worth another attempt: a server error, 408 and
/// 429. Another 4xx says the receiver will not take it.
pub fn retry_status(status: u16) -> bool {
    status >= 500 || status == 408 || status == 429
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_url_keeps_no_token_or_password() {
        let slack = "https://hooks.slack.com/services/T0AAA/B0BBB/XXXXsecretXXXX";
        assert_eq!(shown_url(slack), "https://hooks.slack.com/…");
        assert_eq!(
            shown_url("https://bob:pw@ci.example.com:8443/hook?token=abc"),
            "https://ci.example.com:8443/…"
        );
        assert_eq!(
            shown_url("https://ntfy.sh/mysecrettopic"),
            "https://ntfy.sh/…"
        );
        assert_eq!(shown_url("http://127.0.0.1:9/"), "http://127.0.0.1:9");
        assert_eq!(shown_url("not a url"), "…");
    }

    #[test]
    fn signature_matches_the_standard_webhooks_example() {
        // the example of the Standard Webhooks specification (and svix's docs)
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = signature(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        // another body, another signature
        assert_ne!(
            signature(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, "{}"),
            sig
        );
    }

    #[test]
    fn slack_text_cannot_mention_or_link() {
        let n = Notice::ConnectionFailed {
            vendor: "acme".into(),
            connection: "<!channel> & <https://evil.test|click>".into(),
            why: "401".into(),
            url: "https://graft.example/vendors/acme".into(),
        };
        let slack: Value = serde_json::from_str(&body(&n, Format::Slack, 0)).unwrap();
        assert_eq!(
            slack["text"],
            "acme: connection &lt;!channel&gt; &amp; &lt;https://evil.test|click&gt; failed: 401. Test or replace it: https://graft.example/vendors/acme"
        );
        // Graft's own format keeps the words as they are
        let graft: Value = serde_json::from_str(&body(&n, Format::Graft, 0)).unwrap();
        assert!(graft["text"]
            .as_str()
            .unwrap()
            .contains("<!channel> & <https"));
    }

    #[test]
    fn secrets_are_checked_in_words() {
        assert!(secret_key("abc").unwrap_err().contains("whsec_"));
        assert!(secret_key("whsec_!!").unwrap_err().contains("base64"));
        assert!(secret_key("whsec_YWJj").unwrap_err().contains("24 to 64"));
        let made = new_secret([7; 32]);
        assert_eq!(secret_key(&made).unwrap(), vec![7; 32]);
    }

    #[test]
    fn bodies_in_each_format() {
        let n = Notice::ApprovalRequested {
            agent: "bot".into(),
            tool: "acme__create_item".into(),
            version: 2,
            url: "http://g/approvals?agent=bot&tool=acme__create_item".into(),
        };
        let g: Value = serde_json::from_str(&body(&n, Format::Graft, 1_700_000_000_000)).unwrap();
        assert_eq!(g["type"], "approval.requested");
        assert_eq!(g["timestamp"], "2023-11-14T22:13:20.000Z");
        assert_eq!(g["data"]["tool"], "acme__create_item");
        assert_eq!(g["data"]["version"], 2);
        let s: Value = serde_json::from_str(&body(&n, Format::Slack, 0)).unwrap();
        assert_eq!(s.as_object().unwrap().len(), 1, "Slack takes text alone");
        assert!(s["text"]
            .as_str()
            .unwrap()
            .starts_with("bot asks to run acme__create_item version 2."));
    }

    #[test]
    fn retries_back_off_and_stop() {
        assert_eq!(backoff_ms(1, 1000), Some(1000));
        assert_eq!(backoff_ms(2, 1000), Some(4000));
        assert_eq!(backoff_ms(3, 1000), Some(16000));
        assert_eq!(backoff_ms(ATTEMPTS, 1000), None);
        assert!(retry_status(500) && retry_status(429) && retry_status(503));
        assert!(!retry_status(400) && !retry_status(404) && !retry_status(200));
    }
}
