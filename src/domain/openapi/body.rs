//! Request bodies: the media type Graft sends (JSON, form, multipart), the
//! `Content-Type` it fixes, and a multipart body's files as the agent fills them
//! (issue 12.7; OpenAPI 3.0 `format: binary`, 3.1 `contentMediaType`, Swagger 2.0 `file`).

use crate::domain::tool::BodyEncoding;
use serde_json::{json, Map, Value};

pub(super) fn media_type_choice(types: &[String]) -> Option<BodyEncoding> {
    let is_json = |t: &str| {
        let t = t
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        t == "application/json"
            || t.ends_with("+json")
            || t == "*/*"
            || t == "application/*"
            || t == "text/json"
    };
    if types.iter().any(|t| is_json(t)) {
        Some(BodyEncoding::Json)
    } else if types.iter().any(|t| {
        t.to_ascii_lowercase()
            .starts_with("application/x-www-form-urlencoded")
    }) {
        Some(BodyEncoding::Form)
    } else if types
        .iter()
        .any(|t| t.to_ascii_lowercase().starts_with("multipart/form-data"))
    {
        Some(BodyEncoding::Multipart)
    } else {
        None
    }
}

/// The `Content-Type` Graft fixes for a body encoding; none for multipart, whose
/// boundary the HTTP client writes.
pub(super) fn fixed_content_type(enc: BodyEncoding) -> Option<&'static str> {
    match enc {
        BodyEncoding::Json => Some("application/json"),
        BodyEncoding::Form => Some("application/x-www-form-urlencoded"),
        BodyEncoding::Multipart => None,
    }
}

/// Whether a (request body property) schema is a file: `type: string` with `format:
/// binary` (OpenAPI 3.0, Swagger 2.0's `type: file`) or a `contentMediaType` without a
/// `contentEncoding` (OpenAPI 3.1).
pub(super) fn is_file_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("string")
        && (v.get("format").and_then(Value::as_str) == Some("binary")
            || (v.get("contentMediaType").is_some() && v.get("contentEncoding").is_none()))
}

/// A multipart body's schema as the agent fills it (issue 12.7): each file part becomes
/// a base64 string (`contentEncoding: base64`) with an optional `<part>_filename`
/// sibling; the parts that are files are recorded in `file_parts`. Errors: a body that
/// is not an object, or a list of files.
pub(super) fn multipart_schema(s: &Value, file_parts: &mut Vec<String>) -> Result<Value, String> {
    let Some(props) = s.get("properties").and_then(Value::as_object) else {
        return Err("a multipart/form-data body that is not an object is not supported".into());
    };
    let mut out = s.clone();
    let mut new_props = Map::new();
    for (name, v) in props {
        if v.get("items").is_some_and(is_file_schema) {
            return Err(format!(
                "multipart part {name:?} is a list of files, which is not supported"
            ));
        }
        if is_file_schema(v) {
            let lead = v
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!("{} ", d.trim()))
                .unwrap_or_default();
            new_props.insert(
                name.clone(),
                json!({"type": "string", "contentEncoding": "base64",
                       "description": format!("{lead}The file's contents, base64-encoded (RFC 4648).")}),
            );
            let fname = crate::domain::tool::filename_property(name);
            if !props.contains_key(&fname) {
                new_props.insert(
                    fname,
                    json!({"type": "string", "description": format!("The file name sent with {name} (optional).")}),
                );
            }
            file_parts.push(name.clone());
        } else {
            new_props.insert(name.clone(), v.clone());
        }
    }
    out["properties"] = Value::Object(new_props);
    Ok(out)
}
