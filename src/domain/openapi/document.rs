//! Reading an OpenAPI document (issue 2 item 4): JSON or YAML text into JSON, its version
//! (Swagger 2.0, OpenAPI 3.0, 3.1), its base URL, `$ref`s, and its operations, also listed
//! with their search text for a stored, not imported, document (SPEC §3.4).

use crate::domain::schema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

const OPERATION_METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Which OpenAPI family a document belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecVersion {
    /// `swagger: "2.0"`.
    Swagger2,
    /// `openapi: 3.0.x`.
    OpenApi30,
    /// `openapi: 3.1.x` (and later 3.x).
    OpenApi31,
}

/// An operation of a stored document, for `find_tool`'s nothing-found answer and for
/// `acquire {vendor, operationId}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationSummary {
    /// `operationId`, or `METHOD /path` when there is none.
    pub operation_id: String,
    /// Summary (or the start of the description).
    pub summary: String,
}

/// Parses a document's text (JSON, else YAML) into JSON. Errors: one sentence.
pub fn parse_document(text: &str) -> Result<Value, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(text)
            .map_err(|e| format!("the document is not valid JSON: {e}"));
    }
    let doc: YamlJson = serde_norway::from_str(text)
        .map_err(|e| format!("the document is neither JSON nor valid YAML: {e}"))?;
    Ok(doc.0)
}

/// JSON read from YAML. Integers outside i64/u64 (OpenAI writes int64 bounds as
/// `-9223372036854776000`) become floats instead of failing the whole document.
struct YamlJson(Value);

impl<'de> Deserialize<'de> for YamlJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(YamlJsonVisitor).map(YamlJson)
    }
}

struct YamlJsonVisitor;

impl<'de> serde::de::Visitor<'de> for YamlJsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(json!(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(json!(v))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(float(v as f64))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(float(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        YamlJson::deserialize(d).map(|y| y.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(YamlJson(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((YamlKey(k), YamlJson(v))) = map.next_entry()? {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// A mapping key: strings as they are, numbers and booleans as their text (YAML allows
/// `200:` as a response code key).
struct YamlKey(String);

impl<'de> Deserialize<'de> for YamlKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = YamlJson::deserialize(d)?.0;
        Ok(YamlKey(match v {
            Value::String(s) => s,
            other => other.to_string(),
        }))
    }
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Tells the document's version. Errors: not an OpenAPI/Swagger document.
pub fn spec_version(doc: &Value) -> Result<SpecVersion, String> {
    if let Some(s) = doc.get("swagger").and_then(Value::as_str) {
        return if s.starts_with("2.") {
            Ok(SpecVersion::Swagger2)
        } else {
            Err(format!(
                "unsupported Swagger version {s:?} (2.0 is supported)"
            ))
        };
    }
    match doc.get("openapi").and_then(Value::as_str) {
        Some(s) if s.starts_with("3.0") => Ok(SpecVersion::OpenApi30),
        Some(s) if s.starts_with("3.") => Ok(SpecVersion::OpenApi31),
        Some(s) => Err(format!(
            "unsupported OpenAPI version {s:?} (3.0, 3.1 and Swagger 2.0 are supported)"
        )),
        None => Err(
            "not an OpenAPI document: it has neither an \"openapi\" nor a \"swagger\" field".into(),
        ),
    }
}

/// The base URL a document declares, when it is absolute.
pub fn base_url(doc: &Value) -> Option<String> {
    if doc.get("swagger").is_some() {
        let host = doc.get("host")?.as_str()?;
        let scheme = doc
            .get("schemes")
            .and_then(Value::as_array)
            .and_then(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .find(|x| *x == "https")
                    .or_else(|| s.first().and_then(Value::as_str))
            })
            .unwrap_or("https");
        let base = doc.get("basePath").and_then(Value::as_str).unwrap_or("");
        return Some(format!("{scheme}://{host}{}", base.trim_end_matches('/')));
    }
    let server = doc.get("servers")?.as_array()?.first()?;
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(vars) = server.get("variables").and_then(Value::as_object) {
        for (k, v) in vars {
            if let Some(d) = v.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{k}}}"), d);
            }
        }
    }
    (url.starts_with("http://") || url.starts_with("https://"))
        .then(|| url.trim_end_matches('/').to_string())
}

pub(super) fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..8 {
        match cur
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| schema::resolve_pointer(doc, r))
        {
            Some(t) => cur = t,
            None => break,
        }
    }
    cur
}

/// The operation key Graft keeps for an operation: its operationId, else `METHOD /path`.
pub fn operation_key(op: &Value, method: &str, path: &str) -> String {
    match op.get("operationId").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => format!("{} {path}", method.to_ascii_uppercase()),
    }
}

/// Every operation in the document: (method, path, path item, operation).
pub(super) fn operations(doc: &Value) -> Vec<(String, String, &Value, &Value)> {
    let mut out = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, item) in paths {
        let item = deref(doc, item);
        for m in OPERATION_METHODS {
            if let Some(op) = item.get(*m).filter(|o| o.is_object()) {
                out.push((m.to_string(), path.clone(), item, op));
            }
        }
    }
    out
}

/// Lists the operations of a stored document (for stored, not imported, documents).
pub fn list_operations(doc: &Value) -> Vec<OperationSummary> {
    operations(doc)
        .into_iter()
        .map(|(m, p, _, op)| OperationSummary {
            operation_id: operation_key(op, &m, &p),
            summary: summary_of(op).unwrap_or_else(|| format!("{} {p}", m.to_ascii_uppercase())),
        })
        .collect()
}

/// Every operation of a stored document with its search text (SPEC §3.4: acquirable
/// operations are ranked as tools are). Parameter names come from the operation's and
/// its path item's `parameters` and the top-level properties of a JSON request body.
pub fn search_operations(
    doc: &Value,
) -> Vec<(OperationSummary, crate::domain::search::SearchText)> {
    operations(doc)
        .into_iter()
        .map(|(m, p, item, op)| {
            let key = operation_key(op, &m, &p);
            let mut props = Map::new();
            for list in [item.get("parameters"), op.get("parameters")] {
                for param in list.and_then(Value::as_array).into_iter().flatten() {
                    if let Some(name) = deref(doc, param).get("name").and_then(Value::as_str) {
                        props.insert(name.to_string(), Value::Null);
                    }
                }
            }
            let body = op
                .get("requestBody")
                .map(|b| deref(doc, b))
                .and_then(|b| b.get("content"))
                .and_then(Value::as_object)
                .and_then(|c| c.values().next())
                .and_then(|m| m.get("schema"))
                .map(|s| deref(doc, s));
            if let Some(body_props) = body
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
            {
                for name in body_props.keys() {
                    props.insert(name.clone(), Value::Null);
                }
            }
            let schema = json!({"properties": props});
            let summary = op.get("summary").and_then(Value::as_str);
            let description = op.get("description").and_then(Value::as_str).unwrap_or("");
            let text = crate::domain::search::enrich::enrich_version(
                &key,
                op.get("operationId").and_then(Value::as_str),
                summary,
                description,
                &m,
                &p,
                &string_list(op.get("tags")),
                Some(&schema),
            );
            let summary =
                summary_of(op).unwrap_or_else(|| format!("{} {p}", m.to_ascii_uppercase()));
            (
                OperationSummary {
                    operation_id: key,
                    summary,
                },
                text,
            )
        })
        .collect()
}

fn summary_of(op: &Value) -> Option<String> {
    let s = op
        .get("summary")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    s.map(str::to_string).or_else(|| {
        op.get("description")
            .and_then(Value::as_str)
            .map(|d| {
                d.trim()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect::<String>()
            })
            .filter(|s| !s.is_empty())
    })
}

pub(super) fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Path `{placeholders}` in a template, in order.
pub fn path_placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push(rest[start + 1..start + end].to_string());
        rest = &rest[start + end + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_big_numbers_become_floats() {
        let v = parse_document("openapi: 3.1.0\nx: -9223372036854776000\n").unwrap();
        assert!(v["x"].is_f64());
    }

    #[test]
    fn placeholders_are_listed() {
        assert_eq!(path_placeholders("/a/{b}/c/{d}.json"), vec!["b", "d"]);
    }
}
