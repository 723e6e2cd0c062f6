//! The request Graft plans (SPEC §4.2): its URL, headers and body, a multipart body's
//! parts (RFC 7578) decoded from the agent's input, and the redacted preview of a
//! dry run (SPEC §4.3).

use super::credential::REDACTED;
use super::params::scalar_text;
use crate::domain::tool::Binding;
use serde_json::{Map, Value};
use url::Url;

/// A request ready to send (or to preview).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRequest {
    /// The vendor's base URL: the request and every redirect it follows stay on its
    /// origin and under its path.
    pub base: Url,
    /// Upper-case method.
    pub method: String,
    /// Absolute URL on the vendor's origin.
    pub url: Url,
    /// Headers in order (names as sent).
    pub headers: Vec<(String, String)>,
    /// Body bytes, when the method carries one (not for multipart).
    pub body: Option<Vec<u8>>,
    /// A `multipart/form-data` body's parts (RFC 7578), sent by the HTTP client, which
    /// writes the boundary and its `Content-Type`.
    pub multipart: Option<Vec<Part>>,
}

/// One part of a multipart body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The part's name (`Content-Disposition: form-data; name=…`).
    pub name: String,
    /// A file part's file name (the part's name when the agent gave none); `None` for
    /// a field.
    pub filename: Option<String>,
    /// The part's bytes (a field's UTF-8 text, or a file's decoded contents).
    pub data: Vec<u8>,
}

impl PlannedRequest {
    /// The preview of SPEC §4.3: `{method, url, headers, body}` (body as JSON when it is
    /// JSON, else text).
    pub fn preview(&self) -> Value {
        let headers: Map<String, Value> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut body = self.body.as_ref().map(|b| {
            serde_json::from_slice::<Value>(b)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(b).into_owned()))
        });
        if let Some(parts) = &self.multipart {
            // the parts without a file's bytes
            let shown: Vec<Value> = parts
                .iter()
                .map(|p| match &p.filename {
                    Some(f) => serde_json::json!({"name": p.name, "filename": f, "bytes": p.data.len()}),
                    None => serde_json::json!({"name": p.name, "value": String::from_utf8_lossy(&p.data)}),
                })
                .collect();
            body = Some(serde_json::json!({"multipart/form-data": shown}));
        }
        let url = self.url.as_str().replace("%3Credacted%3E", REDACTED);
        serde_json::json!({"method": self.method, "url": url, "headers": headers, "body": body})
    }
}

/// The parts of a multipart body from the agent's input object: each file part decoded
/// from base64 (standard or URL-safe alphabet), named by its `<part>_filename` input or
/// else by the part's name; lists of scalars as repeated parts; objects as JSON text;
/// `null` left out. Errors (`invalid_input`): a file part that is not base64 text.
pub(super) fn multipart_parts(payload: &Value, b: &Binding) -> Result<Vec<Part>, String> {
    use base64::Engine;
    let Value::Object(m) = payload else {
        return Ok(Vec::new());
    };
    let filename_inputs: Vec<String> = b
        .file_parts
        .iter()
        .map(|p| crate::domain::tool::filename_property(p))
        .collect();
    let mut parts = Vec::new();
    for (k, v) in m {
        if v.is_null() || filename_inputs.contains(k) {
            continue;
        }
        if b.file_parts.contains(k) {
            let text = v
                .as_str()
                .ok_or_else(|| format!("{k:?} must be the file's contents as a base64 string"))?;
            let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            let data = base64::engine::general_purpose::STANDARD
                .decode(&compact)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(&compact))
                .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&compact))
                .map_err(|e| format!("{k:?} is not base64 (RFC 4648): {e}"))?;
            let filename = m
                .get(&crate::domain::tool::filename_property(k))
                .and_then(Value::as_str)
                .filter(|f| !f.is_empty())
                .unwrap_or(k)
                .to_string();
            if filename.chars().any(|c| c.is_control() || c == '"') {
                return Err(format!(
                    "the file name of {k:?} may not hold quotes or control characters"
                ));
            }
            parts.push(Part {
                name: k.clone(),
                filename: Some(filename),
                data,
            });
            continue;
        }
        let texts: Vec<String> = match v {
            Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
                items.iter().filter_map(scalar_text).collect()
            }
            Value::Object(_) | Value::Array(_) => vec![v.to_string()],
            other => vec![scalar_text(other).unwrap_or_default()],
        };
        for t in texts {
            parts.push(Part {
                name: k.clone(),
                filename: None,
                data: t.into_bytes(),
            });
        }
    }
    Ok(parts)
}
