//! A vendor's answer as an MCP tool result (SPEC §4.6; MCP 2025-11-25 server/tools,
//! "Tool Result": text, image and embedded-resource content).
//!
//! - Text (`text/*`, JSON, XML, YAML, form, `+json`/`+xml` types, or no type and valid
//!   UTF-8) is decoded by its declared `charset` (WHATWG Encoding labels, via
//!   encoding_rs; UTF-8 when none), every secret redacted, JSON pretty-printed (in the
//!   vendor's key order, every number as the vendor wrote it: `domain::exact_json`) and,
//!   when an object, also given as `structuredContent` (a number no double holds exactly
//!   as a string of its digits).
//! - Images (`image/*` other than SVG) become image content (base64 + mimeType); other
//!   binary bodies an embedded blob resource. A binary body cut at the response cap, over
//!   the result budget, or holding the connection's secret is not passed on: a note says
//!   its type and size.
//! - The whole result (text + structuredContent + base64 data, measured as JSON-escaped
//!   bytes) stays within a budget (`GRAFT_RESULT_BUDGET`, default 512 KiB) so that a
//!   client's per-message limit (the Python SDK's 1 MiB per event) is never hit: first
//!   structuredContent is dropped (the text holds the same JSON), then the text is cut at
//!   a character boundary with a note saying how much was cut. Never invalid JSON.

use base64::Engine;
use serde_json::Value;

/// Binary content of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Media {
    /// MCP image content: base64 `data` of MIME type `mime`.
    Image {
        /// `image/png`, …
        mime: String,
        /// Base64 (RFC 4648 §4, padded).
        data: String,
    },
    /// MCP embedded resource with a blob: base64 `data` of MIME type `mime` at `uri`.
    Blob {
        /// `application/pdf`, `application/octet-stream`, …
        mime: String,
        /// Base64 (RFC 4648 §4, padded).
        data: String,
        /// Where the answer came from (the request URL without its query).
        uri: String,
    },
}

impl Media {
    fn data_len(&self) -> usize {
        match self {
            Media::Image { data, .. } | Media::Blob { data, .. } => data.len(),
        }
    }
}

/// What a body becomes for the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// Text for the model (the body, or a line about binary content).
    pub text: String,
    /// The body as JSON when it is JSON (an object for a 2xx answer's structuredContent).
    pub structured: Option<Value>,
    /// Binary content, when the body is binary and fits.
    pub media: Option<Media>,
    /// Whether the text was cut to the budget (structuredContent then never given).
    pub cut: bool,
}

impl Rendered {
    /// Text alone: no structuredContent, no media.
    fn text(text: String, cut: bool) -> Self {
        Self {
            text,
            structured: None,
            media: None,
            cut,
        }
    }
}

/// The MIME essence (`type/subtype`, lower case) and the `charset` parameter of a
/// `Content-Type` value (RFC 9110 §8.3.1).
pub fn media_type(content_type: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(ct) = content_type else {
        return (None, None);
    };
    let mut parts = ct.split(';');
    let essence = parts
        .next()
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty());
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
    });
    (essence, charset)
}

/// Whether a MIME essence names text an agent reads as text.
pub fn is_textual(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-www-form-urlencoded"
                | "application/yaml"
                | "application/x-yaml"
                | "application/x-ndjson"
                | "application/jsonl"
                | "application/graphql"
                | "application/sql"
                | "application/csv"
        )
}

/// Decodes `bytes` by the `charset` label (WHATWG Encoding Standard labels: `utf-8`,
/// `iso-8859-1`, `shift_jis`, …; a BOM wins); unknown or absent labels decode as UTF-8,
/// invalid sequences as U+FFFD.
pub fn decode_text(bytes: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(bytes).0.into_owned()
}

/// Bytes `s` takes as a JSON string's contents (serde_json's escaping: `"` `\` and
/// `\b\f\n\r\t` take 2, other controls 6, everything else its UTF-8 length).
pub fn escaped_len(s: &str) -> usize {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// `text` cut so that its escaped length is at most `budget` bytes, at a character
/// boundary, with a note of how many characters were cut; unchanged when it fits.
pub fn cut_text(text: &str, budget: usize) -> (String, bool) {
    if escaped_len(text) <= budget {
        return (text.to_string(), false);
    }
    let total = text.chars().count();
    // room for the notes (their length is small and escapes nothing but `\n`)
    let room = budget.saturating_sub(300);
    let mut used = 0;
    let mut end = 0;
    let mut shown = 0;
    for (i, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        let w = escaped_len(c.encode_utf8(&mut buf));
        if used + w > room {
            break;
        }
        used += w;
        end = i + c.len_utf8();
        shown += 1;
    }
    let note = format!(
        "\n[cut: {} of {} characters not shown; the answer is over Graft's result budget of {} bytes (GRAFT_RESULT_BUDGET)]",
        crate::numbers::grouped((total - shown) as i64),
        crate::numbers::grouped(total as i64),
        crate::numbers::grouped(budget as i64)
    );
    (format!("{}{note}", &text[..end]), true)
}

/// Tokens of the result budget kept, when an answer is cut, for what a run adds to it:
/// the status line, the headers that matter, the paging hint (a tenth of a small
/// budget). An answer within the budget is never cut for them.
const HEADER_ROOM_TOKENS: usize = 1000;

/// `text`, when it has more than `over` tokens (o200k_base), cut to `room` tokens with a
/// note of what was cut and how to ask for less, naming the result token budget
/// `budget` (issue 29.4); `None` when it has `over` or fewer. The note keeps the whole
/// within `room`. The bool is always `true` (cut).
pub fn cut_to_token_budget(
    text: &str,
    over: usize,
    room: usize,
    budget: usize,
) -> Option<(String, bool)> {
    let (kept, total) = crate::domain::served::cut_to_tokens(text, over, room.saturating_sub(120))?;
    let chars = text.chars().count();
    let shown = kept.chars().count();
    let note = format!(
        "\n[cut: {} of {} characters not shown; the answer is about {} tokens, over Graft's result budget of {} (GRAFT_RESULT_TOKEN_BUDGET), the most a client such as Claude Code takes. Ask for less: a narrower query or filter, or a page or limit input if the tool has one.]",
        crate::numbers::grouped((chars - shown) as i64),
        crate::numbers::grouped(chars as i64),
        crate::numbers::grouped(total as i64),
        crate::numbers::tokens(budget as i64),
    );
    Some((format!("{kept}{note}"), true))
}

/// Inputs that page or narrow an answer, by their name with case, `_` and `-` ignored
/// (GitHub's `per_page`, Stripe's `starting_after`, Slack's `cursor`, Twilio's
/// `PageSize`, Google's `pageToken`, OData's `$top`).
const PAGING_INPUTS: &[&str] = &[
    "page",
    "perpage",
    "pagesize",
    "pagetoken",
    "nextpagetoken",
    "limit",
    "cursor",
    "startingafter",
    "endingbefore",
    "offset",
    "maxresults",
    "top",
    "skip",
    "after",
    "before",
];

/// For an answer cut to the budget: the inputs of the tool's schema (JSON text) that
/// page or narrow its answer, as a line to add after the cut note, or `None` when it has
/// none.
pub fn paging_hint(input_schema: &str) -> Option<String> {
    let schema: Value = serde_json::from_str(input_schema).ok()?;
    let names: Vec<&str> = schema
        .get("properties")?
        .as_object()?
        .keys()
        .map(String::as_str)
        .filter(|k| {
            let plain: String = k
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            PAGING_INPUTS.contains(&plain.as_str())
        })
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "\n[to get the rest in smaller parts, this tool takes: {}]",
            names.join(", ")
        )
    })
}

/// `body` with every exact occurrence of a secret replaced by `<redacted>`.
fn redact_bytes(body: &[u8], secrets: &[String]) -> Vec<u8> {
    let mut out = body.to_vec();
    for s in secrets.iter().filter(|s| s.len() >= 3) {
        let finder = memchr::memmem::Finder::new(s.as_bytes());
        if finder.find(&out).is_none() {
            continue;
        }
        let mut next = Vec::with_capacity(out.len());
        let mut i = 0;
        while let Some(at) = finder.find(&out[i..]) {
            next.extend_from_slice(&out[i..i + at]);
            next.extend_from_slice(crate::proxy::request::REDACTED.as_bytes());
            i += at + s.len();
        }
        next.extend_from_slice(&out[i..]);
        out = next;
    }
    out
}

/// `v` with `redact` applied to every string and object key.
fn redact_value(v: Value, redact: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(redact(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| redact_value(x, redact)).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| (redact(&k), redact_value(x, redact)))
                .collect(),
        ),
        other => other,
    }
}

/// Whether `body` holds a secret as its UTF-8, UTF-16LE or UTF-16BE bytes, or base64.
fn contains_secret(body: &[u8], secrets: &[String]) -> bool {
    use base64::Engine;
    secrets.iter().filter(|s| s.len() >= 3).any(|s| {
        let le: Vec<u8> = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = s.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(s);
        [s.as_bytes(), &le, &be, b64.trim_end_matches('=').as_bytes()]
            .iter()
            .any(|form| memchr::memmem::find(body, form).is_some())
    })
}

/// How many bytes in words (`12,345 bytes`).
fn bytes_in_words(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out} bytes")
}

/// Renders a vendor body (see the module doc). `redact` replaces secrets in text;
/// `truncated` says the body was cut at `limits.response_cap`; the result stays within
/// `limits.result_budget`; `uri` names a blob.
pub fn render(
    body: &[u8],
    content_type: Option<&str>,
    truncated: bool,
    limits: &crate::proxy::ProxyLimits,
    redact: &dyn Fn(&str) -> String,
    secrets: &[String],
    uri: &str,
) -> Rendered {
    let (cap, budget) = (limits.response_cap, limits.result_budget);
    let (essence, charset) = media_type(content_type);
    let textual = match essence.as_deref() {
        Some(e) => {
            is_textual(e)
                // a JSON body under a binary label is still JSON
                || (!e.starts_with("image/")
                    && !truncated
                    && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok())
        }
        None => std::str::from_utf8(body).is_ok() || truncated,
    };
    if textual {
        // a body cut at the cap may end inside a secret, whose first characters no
        // redaction would recognise: drop as many trailing bytes as the longest encoding
        // of a secret redaction reads takes (an HTML reference with leading zeros, 32 per
        // byte), so no prefix of one is left
        let body = if truncated {
            let longest = secrets.iter().map(String::len).max().unwrap_or(0);
            &body[..body
                .len()
                .saturating_sub(crate::proxy::redact::MAX_REFERENCE_LEN * longest)]
        } else {
            body
        };
        // secrets go at every layer: in the raw bytes (before a declared charset could
        // disguise them), in the decoded text (URL and JSON encodings), and in the
        // parsed JSON's strings (`\u0026`-style escapes)
        let utf8 = charset
            .as_deref()
            .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
            .is_none_or(|e| e == encoding_rs::UTF_8);
        let mut text = match std::str::from_utf8(body) {
            // UTF-8 read as UTF-8: one pass of the encoding-aware redaction is enough
            Ok(t) if utf8 => decode_text(redact(t).as_bytes(), None),
            // URL, JSON and HTML encodings too, before a declared charset could scramble
            // them; then again in the decoded text
            Ok(t) => redact(&decode_text(redact(t).as_bytes(), charset.as_deref())),
            Err(_) => redact(&decode_text(
                &redact_bytes(body, secrets),
                charset.as_deref(),
            )),
        };
        let mut structured = None;
        if !truncated {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                // numbers exactly as the vendor wrote them, in the text and in the
                // value (issue 25.7); keys in the vendor's order in the text
                use crate::domain::exact_json;
                let v = if exact_json::all_numbers_fit(&text) {
                    v
                } else {
                    exact_json::to_value(&text).unwrap_or(v)
                };
                let v = redact_value(v, redact);
                text = exact_json::pretty(&text, redact)
                    .or_else(|| serde_json::to_string_pretty(&v).ok())
                    .unwrap_or(text);
                structured = Some(v);
            }
        } else {
            text.push_str(&format!("\n[response cut at {cap} bytes]"));
        }
        let text_len = escaped_len(&text);
        let tokens = limits.result_token_budget;
        // room for the status line and the headers the run adds to the text
        let room = tokens.saturating_sub(HEADER_ROOM_TOKENS.min(tokens / 10));
        if text_len > budget {
            // the token budget first (it keeps less), else the byte budget
            let (mut text, cut) = cut_to_token_budget(&text, tokens, room, tokens)
                .unwrap_or_else(|| cut_text(&text, budget));
            if truncated {
                text.push_str(&format!(
                    " [the vendor's answer was also over the response cap of {cap} bytes]"
                ));
            }
            return Rendered::text(text, cut);
        }
        if let Some(v) = &structured {
            // the pretty text is longer than the compact JSON: a cheap upper bound first
            if text_len * 2 > budget
                && text_len + serde_json::to_string(v).map_or(usize::MAX, |s| s.len()) > budget
            {
                structured = None;
            }
        }
        // the token budget (issue 29.4); a token is at least one byte, so a text shorter
        // in bytes than the budget in tokens is never counted
        if text_len > tokens {
            if let Some((text, cut)) = cut_to_token_budget(&text, tokens, room, tokens) {
                return Rendered::text(text, cut);
            }
            if let Some(v) = &structured {
                let both = format!("{text}{}", serde_json::to_string(v).unwrap_or_default());
                if both.len() > tokens && crate::domain::served::count(&both) > tokens as i64 {
                    structured = None;
                }
            }
        }
        return Rendered {
            text,
            structured,
            media: None,
            cut: false,
        };
    }
    let mime = essence.unwrap_or_else(|| "application/octet-stream".to_string());
    let size = bytes_in_words(body.len());
    let withheld = |why: &str| Rendered {
        text: format!("The answer is {mime}, {size}{why}; it is not shown."),
        structured: None,
        media: None,
        cut: false,
    };
    if truncated {
        return withheld(&format!(
            " or more (over the response cap of {})",
            bytes_in_words(cap)
        ));
    }
    if contains_secret(body, secrets) {
        return withheld(", and it contains the connection's secret");
    }
    let encoded_len = body.len().div_ceil(3) * 4;
    let text = format!("The answer is {mime}, {size}.");
    if encoded_len + escaped_len(&text) > budget {
        return withheld(&format!(
            ", over Graft's result budget of {budget} bytes in base64 (GRAFT_RESULT_BUDGET)"
        ));
    }
    let data = base64::engine::general_purpose::STANDARD.encode(body);
    let media = if mime.starts_with("image/") {
        Media::Image { mime, data }
    } else {
        Media::Blob {
            mime,
            data,
            uri: uri.to_string(),
        }
    };
    debug_assert!(media.data_len() == encoded_len);
    Rendered {
        text,
        structured: None,
        media: Some(media),
        cut: false,
    }
}

/// The key under which a JSON object answer's `structuredContent` carries the vendor's
/// meaningful response headers (issue 25.5): clients such as Claude Code give the model
/// only `structuredContent` when there is one, so pagination and rate limits must be in
/// it. Not added when the vendor's own object has that key.
pub const HEADERS_KEY: &str = "_headers";

/// The vendor's meaningful headers (`proxy::is_meaningful_header`) as a JSON object of
/// lower-case name → value, each value through `redact` (a `Location` may echo the
/// credential); a header sent several times joins its values with `, ` (RFC 9110 §5.3).
pub fn kept_headers(
    headers: &[(String, String)],
    redact: &dyn Fn(&str) -> String,
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for (k, v) in headers {
        let v = redact(v);
        match out.get_mut(k) {
            Some(Value::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(&v);
            }
            _ => {
                out.insert(k.clone(), Value::String(v));
            }
        }
    }
    out
}

/// The headers as lines after a blank line (`\n\nResponse headers:\nlink: …`), or
/// nothing when there are none.
pub fn header_lines(headers: &serde_json::Map<String, Value>) -> String {
    if headers.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = headers
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default()))
        .collect();
    format!("\n\nResponse headers:\n{}", lines.join("\n"))
}

/// Seconds to wait before retrying: `Retry-After` (RFC 9110 §10.2.3: delay-seconds or
/// an HTTP-date in any of the three formats recipients must accept, §5.6.7), else a
/// rate limit's reset (`RateLimit-Reset` / `X-RateLimit-Reset` / `X-Rate-Limit-Reset`:
/// seconds to wait, or a Unix time when larger than a billion, as GitHub writes it),
/// read against `now`; a time in the past is 0. `None` without any of them.
pub fn retry_after(
    headers: &serde_json::Map<String, Value>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<u64> {
    let get = |k: &str| headers.get(k).and_then(Value::as_str).map(str::trim);
    if let Some(v) = get("retry-after") {
        if let Ok(secs) = v.parse::<u64>() {
            return Some(secs);
        }
        let at = chrono::DateTime::parse_from_rfc2822(v)
            .map(|d| d.timestamp())
            .ok()
            .or_else(|| {
                // RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
                // (`Sun Nov  6 08:49:37 1994`)
                ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"]
                    .iter()
                    .find_map(|f| chrono::NaiveDateTime::parse_from_str(v, f).ok())
                    .map(|d| d.and_utc().timestamp())
            });
        if let Some(at) = at {
            return Some((at - now.timestamp()).max(0) as u64);
        }
    }
    let reset = ["ratelimit-reset", "x-ratelimit-reset", "x-rate-limit-reset"]
        .iter()
        .find_map(|k| get(k)?.split(',').next()?.trim().parse::<f64>().ok())?;
    if !reset.is_finite() || reset < 0.0 {
        return None;
    }
    let secs = if reset > 1e9 {
        reset - now.timestamp() as f64
    } else {
        reset
    };
    Some(secs.max(0.0).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cut_answer_names_the_inputs_that_page() {
        let stripe =
            r#"{"type":"object","properties":{"customer":{},"limit":{},"starting_after":{}}}"#;
        assert_eq!(
            paging_hint(stripe).as_deref(),
            Some("\n[to get the rest in smaller parts, this tool takes: limit, starting_after]")
        );
        let twilio = r#"{"type":"object","properties":{"PageSize":{},"Page":{},"To":{}}}"#;
        assert!(paging_hint(twilio)
            .unwrap()
            .ends_with("takes: Page, PageSize]"));
        assert_eq!(
            paging_hint(r#"{"type":"object","properties":{"id":{}}}"#),
            None
        );
        assert_eq!(paging_hint("not json"), None);
    }

    fn plain(s: &str) -> String {
        s.to_string()
    }

    fn limits(cap: usize, budget: usize) -> crate::proxy::ProxyLimits {
        crate::proxy::ProxyLimits {
            response_cap: cap,
            result_budget: budget,
            ..Default::default()
        }
    }

    fn r(body: &[u8], ct: Option<&str>, budget: usize) -> Rendered {
        render(
            body,
            ct,
            false,
            &limits(1 << 20, budget),
            &plain,
            &[],
            "http://v/x",
        )
    }

    #[test]
    fn headers_and_retry_after() {
        let h = kept_headers(
            &[
                ("link".into(), "<https://v/x?page=2>; rel=\"next\"".into()),
                ("link".into(), "<https://v/x?page=9>; rel=\"last\"".into()),
                ("location".into(), "https://v/x?key=s3cret".into()),
                ("retry-after".into(), "120".into()),
            ],
            &|t: &str| t.replace("s3cret", "<redacted>"),
        );
        assert_eq!(
            h["link"],
            "<https://v/x?page=2>; rel=\"next\", <https://v/x?page=9>; rel=\"last\""
        );
        assert_eq!(h["location"], "https://v/x?key=<redacted>");
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T10:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(retry_after(&h, now), Some(120));
        let mut d = serde_json::Map::new();
        d.insert("retry-after".into(), json!("Wed, 02 Dec 2026 10:01:30 GMT"));
        assert_eq!(retry_after(&d, now), Some(90));
        d.insert(
            "retry-after".into(),
            json!("Wednesday, 02-Dec-26 10:00:10 GMT"),
        );
        assert_eq!(retry_after(&d, now), Some(10));
        d.insert("retry-after".into(), json!("Wed Dec  2 10:00:20 2026"));
        assert_eq!(retry_after(&d, now), Some(20));
        d.insert("retry-after".into(), json!("soon"));
        assert_eq!(retry_after(&d, now), None);
        // a rate limit's reset, as seconds or as a Unix time
        let mut r = serde_json::Map::new();
        r.insert("x-ratelimit-reset".into(), json!("42"));
        assert_eq!(retry_after(&r, now), Some(42));
        r.insert(
            "x-ratelimit-reset".into(),
            json!((now.timestamp() + 61).to_string()),
        );
        assert_eq!(retry_after(&r, now), Some(61));
        assert!(header_lines(&h).starts_with("\n\nResponse headers:\nlink: <https://v/x?page=2>"));
        assert_eq!(header_lines(&serde_json::Map::new()), "");
    }

    #[test]
    fn numbers_stay_as_the_vendor_wrote_them() {
        let body = br#"{"id":123456789012345678901234567890,"price":0.1000000000000000055511151231257827,"n":3}"#;
        let a = r(body, Some("application/json"), 1 << 20);
        assert!(
            a.text.contains("123456789012345678901234567890"),
            "{}",
            a.text
        );
        assert!(
            a.text.contains("0.1000000000000000055511151231257827"),
            "{}",
            a.text
        );
        assert_eq!(
            a.structured,
            Some(
                json!({"id": "123456789012345678901234567890", "price": "0.1000000000000000055511151231257827", "n": 3})
            )
        );
    }

    #[test]
    fn json_text_images_and_blobs() {
        let a = r(br#"{"a":1}"#, Some("application/json; charset=utf-8"), 1000);
        assert_eq!(a.structured, Some(json!({"a": 1})));
        assert!(a.text.contains("\"a\": 1"));
        let png = [0x89u8, b'P', b'N', b'G', 0, 1, 2, 3];
        let a = r(&png, Some("image/png"), 1000);
        assert!(
            matches!(&a.media, Some(Media::Image { mime, data }) if mime == "image/png" && data == "iVBORwABAgM=")
        );
        assert!(a.text.contains("image/png, 8 bytes"), "{}", a.text);
        let a = r(b"%PDF-1.7\x00\xff", Some("application/pdf"), 1000);
        assert!(
            matches!(&a.media, Some(Media::Blob { mime, uri, .. }) if mime == "application/pdf" && uri == "http://v/x")
        );
        // SVG is text; JSON under a binary label is JSON
        assert!(r(b"<svg/>", Some("image/svg+xml"), 1000).media.is_none());
        let a = r(br#"{"b":2}"#, Some("application/octet-stream"), 1000);
        assert_eq!(a.structured, Some(json!({"b": 2})));
        // no type: UTF-8 is text, anything else is a blob
        assert!(r(b"hello", None, 1000).media.is_none());
        assert!(r(&[0xff, 0xfe, 0x00], None, 1000).media.is_some());
    }

    #[test]
    fn charsets_are_honoured() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            r(latin1, Some("text/plain; charset=ISO-8859-1"), 100).text,
            "café"
        );
        assert_eq!(
            r(latin1, Some("text/plain; charset=\"latin1\""), 100).text,
            "café"
        );
        let sjis = b"\x83\x65\x83\x58\x83\x67"; // テスト
        assert_eq!(
            r(sjis, Some("text/plain;charset=Shift_JIS"), 100).text,
            "テスト"
        );
        assert_eq!(r("é".as_bytes(), Some("text/plain"), 100).text, "é");
    }

    #[test]
    fn the_budget_drops_structured_content_then_cuts_at_a_character() {
        let big = json!({"items": (0..200).map(|i| format!("élément {i}")).collect::<Vec<_>>()});
        let body = serde_json::to_vec(&big).unwrap();
        let full = r(&body, Some("application/json"), 1 << 20);
        assert!(full.structured.is_some());
        let text_only = escaped_len(&full.text) + 10;
        let a = r(&body, Some("application/json"), text_only);
        assert_eq!((a.structured.is_none(), a.cut), (true, false));
        assert_eq!(a.text, full.text);
        let a = r(&body, Some("application/json"), 1000);
        assert!(a.cut && a.structured.is_none());
        assert!(escaped_len(&a.text) <= 1000, "{}", escaped_len(&a.text));
        assert!(a.text.contains("characters not shown"), "{}", a.text);
        // quotes and controls count as escaped
        let (t, cut) = cut_text(&"\"\n".repeat(1000), 500);
        assert!(cut && escaped_len(&t) <= 500);
        let image = vec![7u8; 3000];
        let a = r(&image, Some("image/png"), 1000);
        assert!(
            a.media.is_none() && a.text.contains("result budget"),
            "{}",
            a.text
        );
    }

    #[test]
    fn secrets_are_redacted_behind_json_escapes_and_charsets() {
        let secret = "s3cr3t&key<>".to_string();
        let redact = |t: &str| t.replace("s3cr3t&key<>", "<redacted>");
        let l = limits(1 << 20, 1 << 20);
        let body = br#"{"seen":"s3cr3t\u0026key\u003c\u003e"}"#;
        let a = render(
            body,
            Some("application/json"),
            false,
            &l,
            &redact,
            std::slice::from_ref(&secret),
            "u",
        );
        assert_eq!(a.structured, Some(json!({"seen": "<redacted>"})));
        assert!(!a.text.contains("s3cr3t"), "{}", a.text);
        let a = render(
            b"key=s3cr3t&key<>",
            Some("text/plain; charset=utf-16le"),
            false,
            &l,
            &redact,
            &[secret],
            "u",
        );
        let back: Vec<u8> = a
            .text
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert!(
            !String::from_utf8_lossy(&back).contains("s3cr3t"),
            "{}",
            a.text
        );
    }

    #[test]
    fn a_body_cut_inside_a_secret_keeps_no_part_of_it() {
        let secret = "sk_live_0123456789abcdef".to_string();
        let redact = |t: &str| t.replace(secret.as_str(), "<redacted>");
        for keep in 1..secret.len() {
            for encoded in [secret.clone(), secret.replace('_', "\\u005F")] {
                // the vendor's answer ends `keep` characters into the secret at the cap
                let body = format!("{{\"echo\": \"{}", &encoded[..keep.min(encoded.len())]);
                let a = render(
                    body.as_bytes(),
                    Some("application/json"),
                    true,
                    &limits(body.len(), 1 << 20),
                    &redact,
                    std::slice::from_ref(&secret),
                    "u",
                );
                let shown = a.text.split("\n[response cut").next().unwrap();
                assert!(
                    !shown.contains("sk_") && !shown.contains("sk\\u"),
                    "{keep}: {}",
                    a.text
                );
            }
        }
    }

    #[test]
    fn binary_with_the_secret_or_cut_is_withheld() {
        let a = render(
            b"\x00\x01s3cr3t-value\x02",
            Some("application/octet-stream"),
            false,
            &limits(100, 1000),
            &plain,
            &["s3cr3t-value".to_string()],
            "u",
        );
        assert!(a.media.is_none() && a.text.contains("secret"), "{}", a.text);
        let a = render(
            &[0u8; 100],
            Some("image/png"),
            true,
            &limits(100, 1000),
            &plain,
            &[],
            "u",
        );
        assert!(
            a.media.is_none() && a.text.contains("response cap"),
            "{}",
            a.text
        );
    }
}
