//! OpenAPI import (issue 2 item 4): Swagger 2.0 and OpenAPI 3.0 / 3.1 documents, JSON or
//! YAML, become tool drafts, one per operation.
//!
//! Documents are read by serde_json and serde_norway into a `serde_json::Value`, and the
//! OpenAPI structure (paths, operations, parameters, requestBody, security schemes) is
//! walked here. No Rust OpenAPI crate reads all three versions of the documents Graft
//! must import: measured on ../shared/specs, `oas3` 0.22 refuses both Swagger 2.0
//! documents and `openapiv3`/`openapiv3-extended` refuse 3.1 and 2.0; and schemas must stay
//! raw JSON anyway to be inlined and served as JSON Schema.
//!
//! Rules: names per SPEC §2 via [`names::tool_name_for`]; one root object input schema
//! holding path, query, header and body inputs; fixed `Accept`/`Content-Type` and
//! credential parameters left out; GET/HEAD/DELETE never get a body (its properties go
//! to the query string); hints from the method.

use super::names::{self, VendorSlug};
use super::schema;
use super::tool::{Binding, BodyEncoding, Hints, ParamStyle, ToolDraft};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};

const OPERATION_METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// Header parameters Graft fills itself and never asks of the agent.
const FIXED_HEADERS: &[&str] = &["accept", "content-type"];
/// Longest description served; longer ones are cut with an ellipsis.
pub const MAX_DESCRIPTION: usize = 2000;

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

/// One operation of a document that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `operationId`, or `METHOD /path`.
    pub operation: String,
    /// A sentence saying why.
    pub reason: String,
}

/// What importing a document will do; nothing is stored yet.
#[derive(Debug, Clone, Default)]
pub struct ImportPlan {
    /// The base URL the document declares (first server / `schemes`+`host`+`basePath`).
    pub base_url: Option<String>,
    /// One draft per importable operation not yet in the toolbox, in document order.
    pub tools: Vec<ToolDraft>,
    /// One draft per importable operation already in the toolbox, under its tool's name
    /// (a re-import compares them with the tools' current versions).
    pub existing: Vec<ToolDraft>,
    /// `(operation, name)` for each tool whose name is not the plain snake case of its
    /// operation (shortened or told apart from another).
    pub renamed: Vec<(String, String)>,
    /// Operations left out, with reasons.
    pub skipped: Vec<Skipped>,
    /// Every operation seen.
    pub total_operations: usize,
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

fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
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
fn operations(doc: &Value) -> Vec<(String, String, &Value, &Value)> {
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

/// Cuts `s` to at most `max` characters, ending in `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Makes a JSON property name every client accepts (`^[a-zA-Z0-9_.-]{1,64}$`) from an
/// OpenAPI parameter name.
fn property_name(raw: &str) -> String {
    let mut s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    while s.contains("__") {
        s = s.replace("__", "_");
    }
    let s = s.trim_matches('_').chars().take(64).collect::<String>();
    if s.is_empty() {
        "param".into()
    } else {
        s
    }
}

fn unique_property(props: &Map<String, Value>, base: String) -> String {
    if !props.contains_key(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|c| !props.contains_key(c))
        .unwrap_or(base)
}

/// The connection a document's security schemes call for (issue 14.5), as
/// `(kind, header or query parameter name)`: `apiKey` in a header → `("header", name)`,
/// in the query → `("query", name)`; HTTP `bearer`, `oauth2` and `openIdConnect` →
/// `("bearer", None)`; HTTP `basic` (Swagger 2.0 `basic`) → `("basic", None)`. An API
/// key (pasted once) is preferred to HTTP auth, and that to OAuth (whose token comes
/// from a flow); among equals, the schemes the document's top-level `security` requires
/// come first, then the others in document order. `None` when no scheme is one Graft's
/// connections can send (a cookie, for instance). Follows OpenAPI 3.x "Security Scheme Object" and Swagger 2.0
/// `securityDefinitions`.
pub fn connection_hint(doc: &Value) -> Option<(&'static str, Option<String>)> {
    let schemes = doc
        .pointer("/components/securitySchemes")
        .or_else(|| doc.get("securityDefinitions"))
        .and_then(Value::as_object)?;
    let required: Vec<&str> = doc
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    let ordered = required
        .iter()
        .filter_map(|n| schemes.get(*n))
        .chain(schemes.values());
    // (rank, kind, name): a key a person pastes beats a token from an OAuth flow
    let usable = |s: &Value| -> Option<(u8, &'static str, Option<String>)> {
        let field = |k: &str| s.get(k).and_then(Value::as_str);
        match field("type")? {
            "apiKey" => {
                let name = field("name").map(str::trim).filter(|n| !n.is_empty())?;
                match field("in")? {
                    "header" => Some((0, "header", Some(name.to_string()))),
                    "query" => Some((0, "query", Some(name.to_string()))),
                    _ => None,
                }
            }
            "http" => match field("scheme")?.to_ascii_lowercase().as_str() {
                "bearer" => Some((1, "bearer", None)),
                "basic" => Some((1, "basic", None)),
                _ => None,
            },
            "basic" => Some((1, "basic", None)),
            "oauth2" | "openIdConnect" => Some((2, "bearer", None)),
            _ => None,
        }
    };
    ordered
        .filter_map(|s| usable(deref(doc, s)))
        .enumerate()
        .min_by_key(|(i, (rank, _, _))| (*rank, *i))
        .map(|(_, (_, kind, name))| (kind, name))
}

/// The parameter each `apiKey` security scheme puts the credential in, by scheme name:
/// `(in, name lower-cased)` (OpenAPI 3.1 §4.8.27 "Security Scheme Object"; Swagger 2.0
/// `securityDefinitions`).
fn scheme_params(doc: &Value) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    let schemes = doc
        .pointer("/components/securitySchemes")
        .or_else(|| doc.get("securityDefinitions"))
        .and_then(Value::as_object);
    for (scheme, s) in schemes.into_iter().flatten() {
        let s = deref(doc, s);
        if s.get("type").and_then(Value::as_str) == Some("apiKey") {
            if let (Some(n), Some(i)) = (
                s.get("name").and_then(Value::as_str),
                s.get("in").and_then(Value::as_str),
            ) {
                out.insert(scheme.clone(), (i.to_string(), n.to_ascii_lowercase()));
            }
        }
    }
    out
}

/// The parameters that carry the credential for one operation (issue 25.2): those of the
/// `apiKey` schemes its effective security requirement names (its own `security`, else
/// the document's; every alternative counted). Only a document that declares no
/// requirement anywhere lets every scheme's parameter count. A parameter that merely
/// looks like one (`key`, `token`) is an ordinary input.
fn credential_params(
    doc: &Value,
    op: &Value,
    schemes: &HashMap<String, (String, String)>,
) -> HashSet<(String, String)> {
    let requirement = op.get("security").or_else(|| doc.get("security"));
    match requirement.and_then(Value::as_array) {
        Some(alternatives) => alternatives
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|r| r.keys())
            .filter_map(|name| schemes.get(name).cloned())
            .collect(),
        None => schemes.values().cloned().collect(),
    }
}

/// `found` and the parameters a person named, in each place a parameter can carry one.
fn with_named(mut found: HashSet<(String, String)>, names: &[String]) -> HashSet<(String, String)> {
    for n in names {
        for location in ["query", "header", "cookie"] {
            found.insert((location.to_string(), n.trim().to_ascii_lowercase()));
        }
    }
    found
}

fn media_type_choice(types: &[String]) -> Option<BodyEncoding> {
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
fn fixed_content_type(enc: BodyEncoding) -> Option<&'static str> {
    match enc {
        BodyEncoding::Json => Some("application/json"),
        BodyEncoding::Form => Some("application/x-www-form-urlencoded"),
        BodyEncoding::Multipart => None,
    }
}

/// Whether a (request body property) schema is a file: `type: string` with `format:
/// binary` (OpenAPI 3.0, Swagger 2.0's `type: file`) or a `contentMediaType` without a
/// `contentEncoding` (OpenAPI 3.1).
fn is_file_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("string")
        && (v.get("format").and_then(Value::as_str) == Some("binary")
            || (v.get("contentMediaType").is_some() && v.get("contentEncoding").is_none()))
}

/// A multipart body's schema as the agent fills it (issue 12.7): each file part becomes
/// a base64 string (`contentEncoding: base64`) with an optional `<part>_filename`
/// sibling; the parts that are files are recorded in `file_parts`. Errors: a body that
/// is not an object, or a list of files.
fn multipart_schema(s: &Value, file_parts: &mut Vec<String>) -> Result<Value, String> {
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

/// Plans the import of `doc` for `vendor`.
///
/// `taken(name)` says whether a name is already used in this vendor's toolbox;
/// `imported` maps the operation keys already in the toolbox to their tools' names: those
/// operations are drafted under that name into [`ImportPlan::existing`], for the caller
/// to compare (a re-import, issue 14.3). `progress(done, total)` is
/// called after each operation. Errors: the document is not OpenAPI 2.0/3.x or has no
/// `paths`.
pub fn plan_import(
    doc: &Value,
    vendor: &VendorSlug,
    taken: &dyn Fn(&str) -> bool,
    imported: &HashMap<String, String>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<ImportPlan, String> {
    plan_import_with(doc, vendor, taken, imported, &[], progress)
}

/// [`plan_import`] where the parameters named in `credential_names` (case-insensitive,
/// in the query, a header or a cookie) carry the connection's secret as a security
/// scheme's would: a person said so for a document that declares its credential as an
/// ordinary parameter (Slack's `token`; issue 25.2).
pub fn plan_import_with(
    doc: &Value,
    vendor: &VendorSlug,
    taken: &dyn Fn(&str) -> bool,
    imported: &HashMap<String, String>,
    credential_names: &[String],
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<ImportPlan, String> {
    let version = spec_version(doc)?;
    if !doc.get("paths").is_some_and(Value::is_object) {
        return Err("the document has no \"paths\" object".into());
    }
    let ops = operations(doc);
    let mut plan = ImportPlan {
        base_url: base_url(doc),
        total_operations: ops.len(),
        ..Default::default()
    };
    let schemes = scheme_params(doc);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut keys: HashSet<String> = HashSet::new();
    for (i, (method, path, item, op)) in ops.iter().enumerate() {
        let mut key = operation_key(op, method, path);
        if !keys.insert(key.clone()) {
            // an operationId used twice: the second is known by its method and path, so
            // that a re-import finds each operation's own tool
            key = format!("{} {path}", method.to_ascii_uppercase());
            keys.insert(key.clone());
        }
        if method == "trace" {
            plan.skipped.push(Skipped {
                operation: key,
                reason: "TRACE operations are not imported".into(),
            });
        } else {
            let credentials = with_named(credential_params(doc, op, &schemes), credential_names);
            let ctx = OpCtx {
                doc,
                version,
                credentials: &credentials,
            };
            match ctx.draft(method, path, item, op) {
                Ok(mut draft) if imported.contains_key(&key) => {
                    draft.name = imported[&key].clone();
                    draft.operation_id = Some(key);
                    plan.existing.push(draft);
                }
                Ok(mut draft) => {
                    let is_taken = |n: &str| used.contains(n) || taken(n);
                    let (name, renamed) = names::tool_name_for(vendor, &key, &is_taken);
                    if renamed {
                        plan.renamed.push((key.clone(), name.to_string()));
                    }
                    used.insert(name.to_string());
                    draft.name = name.to_string();
                    draft.operation_id = Some(key);
                    plan.tools.push(draft);
                }
                Err(reason) => plan.skipped.push(Skipped {
                    operation: key,
                    reason,
                }),
            }
        }
        progress(i + 1, ops.len());
    }
    Ok(plan)
}

struct OpCtx<'a> {
    doc: &'a Value,
    version: SpecVersion,
    credentials: &'a HashSet<(String, String)>,
}

/// Whether an operation declares that it needs no credential: its own `security` is an
/// empty list, or it has none and the document's top-level `security` is an empty list
/// (OpenAPI 3.1 §4.8.10 and §4.8.30; Swagger 2.0 alike). A document that declares no
/// `security` anywhere is not public: its connection is what the person set up.
pub fn is_public(doc: &Value, op: &Value) -> bool {
    let empty = |v: &Value| v.as_array().is_some_and(Vec::is_empty);
    match op.get("security") {
        Some(s) => empty(s),
        None => doc.get("security").is_some_and(empty),
    }
}

impl OpCtx<'_> {
    /// Whether a parameter is the one a security scheme puts the credential in.
    fn is_credential(&self, location: &str, name: &str) -> bool {
        self.credentials
            .contains(&(location.to_string(), name.to_ascii_lowercase()))
    }

    /// The JSON Schema of a parameter (3.x `schema`/`content`; 2.0 inline keywords).
    fn parameter_schema(&self, p: &Value) -> Value {
        let raw = if let Some(s) = p.get("schema") {
            s.clone()
        } else if let Some(s) = p
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.values().next())
            .and_then(|m| m.get("schema"))
        {
            s.clone()
        } else {
            // Swagger 2.0 non-body parameter: its schema keywords sit on the parameter
            let mut m = Map::new();
            if let Value::Object(obj) = p {
                for (k, v) in obj {
                    if ![
                        "name",
                        "in",
                        "required",
                        "description",
                        "collectionFormat",
                        "allowEmptyValue",
                    ]
                    .contains(&k.as_str())
                    {
                        m.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(m)
        };
        let mut s = schema::inline(self.doc, &raw);
        if let (Some(d), Value::Object(m)) = (p.get("description").and_then(Value::as_str), &mut s)
        {
            m.entry("description").or_insert_with(|| {
                Value::String(truncate_chars(
                    &crate::domain::markup::html_to_markdown(d.trim()),
                    1000,
                ))
            });
        }
        s
    }

    fn draft(
        &self,
        method: &str,
        path: &str,
        item: &Value,
        op: &Value,
    ) -> Result<ToolDraft, String> {
        let upper = method.to_ascii_uppercase();
        let no_body_method = matches!(upper.as_str(), "GET" | "HEAD" | "DELETE");

        // parameters: path level first, then operation level overriding by (name, in)
        let mut params: Vec<&Value> = Vec::new();
        for list in [item.get("parameters"), op.get("parameters")]
            .into_iter()
            .flatten()
        {
            for p in list.as_array().into_iter().flatten() {
                let p = deref(self.doc, p);
                let key = |x: &Value| (x.get("name").cloned(), x.get("in").cloned());
                params.retain(|q| key(q) != key(p));
                params.push(p);
            }
        }

        let mut props = Map::new();
        let mut required: Vec<String> = Vec::new();
        let mut binding = Binding {
            public: is_public(self.doc, op),
            ..Binding::default()
        };
        let mut form_fields = Map::new();
        let mut form_required = Vec::new();
        let mut body_schema: Option<(Value, bool, BodyEncoding)> = None;
        // a merged body's `additionalProperties` and `patternProperties`, kept at the root
        let mut root_extra: (Option<Value>, Option<Value>) = (None, None);
        // how a form body's arrays and objects are written, by property
        let mut form_styles: HashMap<String, ParamStyle> = HashMap::new();

        for p in &params {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
            let is_required =
                p.get("required").and_then(Value::as_bool).unwrap_or(false) || location == "path";
            match location {
                "path" | "query" | "header" | "cookie" => {
                    if location == "header"
                        && FIXED_HEADERS.contains(&name.to_ascii_lowercase().as_str())
                    {
                        continue;
                    }
                    if location != "path" && self.is_credential(location, name) {
                        binding
                            .credential_params
                            .push((location.to_string(), name.to_string()));
                        continue;
                    }
                    if location == "header" && crate::domain::tool::is_owned_header(name) {
                        // Graft or the connection sets it: not offered, and an input of
                        // that name is refused rather than sent anywhere else
                        binding
                            .withheld
                            .push((location.to_string(), name.to_string()));
                        continue;
                    }
                    let prop = unique_property(&props, property_name(name));
                    let param_schema = self.parameter_schema(p);
                    // required with a default: optional for the agent, the default sent
                    match param_schema.get("default") {
                        Some(d) if is_required && !d.is_null() => {
                            binding.defaults.insert(prop.clone(), d.clone());
                        }
                        _ if is_required => required.push(prop.clone()),
                        _ => {}
                    }
                    let style = ParamStyle::declared(
                        location,
                        p.get("style").and_then(Value::as_str),
                        p.get("explode").and_then(Value::as_bool),
                        p.get("collectionFormat").and_then(Value::as_str),
                        self.version == SpecVersion::Swagger2,
                    );
                    let structured = |s: &Value| {
                        matches!(
                            s.get("type").and_then(Value::as_str),
                            Some("array" | "object")
                        ) || s.get("items").is_some()
                            || s.get("properties").is_some()
                    };
                    let json_content = p
                        .get("content")
                        .and_then(Value::as_object)
                        .and_then(|c| c.keys().next())
                        .is_some_and(|t| {
                            let t = t.to_ascii_lowercase();
                            t.starts_with("application/json") || t.contains("+json")
                        });
                    if json_content {
                        binding.styles.insert(
                            prop.clone(),
                            ParamStyle {
                                style: crate::domain::tool::Style::Json,
                                explode: false,
                            },
                        );
                    } else if structured(&param_schema)
                        || p.get("style").is_some()
                        || p.get("explode").is_some()
                        || p.get("collectionFormat").is_some()
                    {
                        binding.styles.insert(prop.clone(), style);
                    }
                    props.insert(prop.clone(), param_schema);
                    match location {
                        "path" => binding.path.insert(name.to_string(), prop),
                        "query" => binding.query.insert(prop, name.to_string()),
                        "cookie" => binding.cookies.insert(prop, name.to_string()),
                        _ => binding.headers.insert(prop, name.to_string()),
                    };
                }
                "body" => {
                    let s = schema::inline(self.doc, p.get("schema").unwrap_or(&json!({})));
                    let consumes = self.consumes(op);
                    let enc = media_type_choice(&consumes).unwrap_or(BodyEncoding::Json);
                    body_schema = Some((s, is_required, enc));
                }
                "formData" => {
                    if self.version == SpecVersion::Swagger2
                        && p.get("type").and_then(Value::as_str) == Some("array")
                    {
                        form_styles.insert(
                            name.to_string(),
                            ParamStyle::declared(
                                "formData",
                                None,
                                None,
                                p.get("collectionFormat").and_then(Value::as_str),
                                true,
                            ),
                        );
                    }
                    let mut field = self.parameter_schema(p);
                    if p.get("type").and_then(Value::as_str) == Some("file") {
                        // Swagger 2.0's file: a binary string, sent as a multipart file
                        field["type"] = json!("string");
                        field["format"] = json!("binary");
                    }
                    form_fields.insert(name.to_string(), field);
                    if is_required {
                        form_required.push(Value::String(name.to_string()));
                    }
                }
                _ => {} // an unknown location: nothing is offered or sent
            }
        }
        if !form_fields.is_empty() {
            let consumes = self.consumes(op);
            let has_file = form_fields.values().any(is_file_schema);
            let enc = if has_file
                || (consumes.iter().any(|c| c.starts_with("multipart/"))
                    && !consumes
                        .iter()
                        .any(|c| c.starts_with("application/x-www-form-urlencoded")))
            {
                BodyEncoding::Multipart
            } else {
                BodyEncoding::Form
            };
            let s = json!({"type": "object", "properties": form_fields, "required": form_required});
            body_schema = Some((s, !form_required.is_empty(), enc));
        }
        if let Some(rb) = op.get("requestBody") {
            let rb = deref(self.doc, rb);
            let rb_required = rb.get("required").and_then(Value::as_bool).unwrap_or(false);
            let content = rb.get("content").and_then(Value::as_object);
            let types: Vec<String> = content
                .map(|c| c.keys().cloned().collect())
                .unwrap_or_default();
            match media_type_choice(&types) {
                Some(enc) => {
                    let mt = types
                        .iter()
                        .find(|t| media_type_choice(std::slice::from_ref(*t)) == Some(enc))
                        .expect("chosen type is present");
                    let raw = content
                        .and_then(|c| c.get(mt))
                        .and_then(|m| m.get("schema"))
                        .cloned()
                        .unwrap_or(json!({}));
                    let s = schema::inline(self.doc, &raw);
                    if enc == BodyEncoding::Form {
                        // OpenAPI 3.1 §4.8.15 "Encoding Object": form + explode unless the
                        // media type's `encoding` says otherwise
                        let encoding = content
                            .and_then(|c| c.get(mt))
                            .and_then(|m| m.get("encoding"));
                        let merged = schema::for_request(&s);
                        for (k, v) in merged
                            .get("properties")
                            .and_then(Value::as_object)
                            .into_iter()
                            .flatten()
                        {
                            let structured = matches!(
                                v.get("type").and_then(Value::as_str),
                                Some("array" | "object")
                            ) || v.get("items").is_some()
                                || v.get("properties").is_some();
                            let e = encoding.and_then(|e| e.get(k));
                            if structured || e.is_some() {
                                form_styles.insert(
                                    k.clone(),
                                    ParamStyle::declared(
                                        "formData",
                                        e.and_then(|e| e.get("style")).and_then(Value::as_str),
                                        e.and_then(|e| e.get("explode")).and_then(Value::as_bool),
                                        None,
                                        false,
                                    ),
                                );
                            }
                        }
                    }
                    body_schema = Some((s, rb_required, enc));
                    if let Some(ct) = fixed_content_type(enc).filter(|_| !no_body_method) {
                        binding
                            .fixed_headers
                            .insert("Content-Type".into(), ct.into());
                    }
                }
                None if types.is_empty() => {}
                None if rb_required && !no_body_method => {
                    return Err(format!(
                        "request body media type {} is not supported (JSON, form and multipart bodies are)",
                        types.join(", ")
                    ));
                }
                None => {}
            }
        } else if let Some((_, _, enc)) = &body_schema {
            if let Some(ct) = fixed_content_type(*enc).filter(|_| !no_body_method) {
                binding
                    .fixed_headers
                    .insert("Content-Type".into(), ct.into());
            }
        }

        if let Some((s, body_required, enc)) = body_schema {
            let mut s = schema::for_request(&s);
            if enc == BodyEncoding::Multipart {
                if no_body_method {
                    return Err(format!(
                        "{upper} with a multipart/form-data body is not supported"
                    ));
                }
                s = multipart_schema(&s, &mut binding.file_parts)?;
            }
            let mergeable = schema::is_plain_object(&s)
                && s.get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(|bp| bp.keys().all(|k| !props.contains_key(k)));
            if no_body_method {
                // GET/HEAD/DELETE never carry a body: plain-object properties go to the query
                if mergeable {
                    let body_req: Vec<String> = string_list(s.get("required"));
                    for (k, v) in s
                        .get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        let prop = unique_property(&props, property_name(k));
                        props.insert(prop.clone(), v.clone());
                        if body_req.contains(k) && body_required {
                            required.push(prop.clone());
                        }
                        binding.query.insert(prop, k.clone());
                    }
                }
            } else if mergeable {
                // what the body admits beyond its named properties stays admitted (and
                // goes into the body): `additionalProperties` other than false,
                // `patternProperties`, or no properties named at all (a free-form object)
                let extra = match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => None,
                    Some(v) => Some(v.clone()),
                    None if s.get("properties").is_none()
                        && s.get("patternProperties").is_none() =>
                    {
                        Some(Value::Bool(true))
                    }
                    None => None,
                };
                root_extra = (extra, s.get("patternProperties").cloned());
                let body_req: Vec<String> = string_list(s.get("required"));
                for (k, v) in s
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    props.insert(k.clone(), v.clone());
                    if enc == BodyEncoding::Form {
                        if let Some(st) = form_styles.get(k) {
                            binding.body_styles.insert(k.clone(), *st);
                        }
                    }
                    match v.get("default") {
                        Some(d) if body_req.contains(k) && !d.is_null() => {
                            binding.defaults.insert(k.clone(), d.clone());
                        }
                        _ if body_req.contains(k) => required.push(k.clone()),
                        _ => {}
                    }
                }
                binding.body = Some(enc);
            } else {
                let prop = unique_property(&props, "body".into());
                let mut s = s;
                if let Value::Object(m) = &mut s {
                    let union = ["oneOf", "anyOf"].into_iter().find(|k| m.contains_key(*k));
                    let lead = match union {
                        Some(k) => format!("The whole request body: one of several shapes ({k}), pick one and send it here."),
                        None => "The whole request body.".to_string(),
                    };
                    let text = match m.get("description").and_then(Value::as_str) {
                        Some(d) if !d.trim().is_empty() => format!("{lead} {}", d.trim()),
                        _ => lead,
                    };
                    m.insert("description".into(), Value::String(text));
                }
                props.insert(prop.clone(), s);
                if body_required {
                    required.push(prop.clone());
                }
                binding.body = Some(enc);
                binding.body_property = Some(prop);
            }
        }

        // placeholders the document forgot to declare (httpbin's /anything/{anything})
        for placeholder in path_placeholders(path) {
            if let std::collections::btree_map::Entry::Vacant(slot) =
                binding.path.entry(placeholder.clone())
            {
                let prop = unique_property(&props, property_name(&placeholder));
                props.insert(prop.clone(), json!({"type": "string", "description": format!("The {{{placeholder}}} part of the path.")}));
                required.push(prop.clone());
                slot.insert(prop);
            }
        }

        if let Some(accept) = self.accept(op) {
            binding.fixed_headers.insert("Accept".into(), accept);
        }

        let mut input_schema = json!({"type": "object", "properties": props});
        if let Some(extra) = root_extra.0 {
            input_schema["additionalProperties"] = extra;
        }
        if let Some(patterns) = root_extra.1 {
            input_schema["patternProperties"] = patterns;
        }
        required.dedup();
        if !required.is_empty() {
            input_schema["required"] = json!(required);
        }
        if let Err(e) = schema::validator(&input_schema) {
            return Err(format!("its input schema is not valid JSON Schema: {e}"));
        }
        let summary = op
            .get("summary")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let details = op
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let description = match (summary, details) {
            (Some(s), Some(d)) if d != s => format!("{s}\n\n{d}"),
            (Some(s), _) => s.to_string(),
            (None, Some(d)) => d.to_string(),
            (None, None) => format!("{upper} {path}"),
        };
        Ok(ToolDraft {
            name: String::new(),
            operation_id: None,
            title: summary.map(|s| truncate_chars(s, 120)),
            description: truncate_chars(
                &crate::domain::markup::html_to_markdown(&description),
                MAX_DESCRIPTION,
            ),
            input_schema,
            method: upper.clone(),
            path_template: path.to_string(),
            binding,
            hints: Hints::from_method(&upper),
            tags: string_list(op.get("tags")),
        })
    }

    fn consumes(&self, op: &Value) -> Vec<String> {
        string_list(op.get("consumes").or_else(|| self.doc.get("consumes")))
    }

    /// The `Accept` header: the JSON type of the first 2xx response when declared.
    fn accept(&self, op: &Value) -> Option<String> {
        let types: Vec<String> = if self.version == SpecVersion::Swagger2 {
            string_list(op.get("produces").or_else(|| self.doc.get("produces")))
        } else {
            let responses = op.get("responses").and_then(Value::as_object)?;
            let ok = responses
                .iter()
                .filter(|(k, _)| k.starts_with('2'))
                .map(|(_, v)| v)
                .next()?;
            deref(self.doc, ok)
                .get("content")
                .and_then(Value::as_object)
                .map(|c| c.keys().cloned().collect())
                .unwrap_or_default()
        };
        types
            .iter()
            .find(|t| t.starts_with("application/json"))
            .or_else(|| types.iter().find(|t| t.ends_with("+json")))
            .or_else(|| types.first())
            .filter(|t| !t.contains('*'))
            .cloned()
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
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

/// A draft for one operation of `doc`, found by its operation key (`operationId`, or
/// `METHOD /path`), named for `vendor` (avoiding names `taken` says are used).
/// Errors: no such operation, or one that cannot become a tool (with why).
pub fn draft_operation(
    doc: &Value,
    vendor: &VendorSlug,
    key: &str,
    taken: &dyn Fn(&str) -> bool,
    credential_names: &[String],
) -> Result<ToolDraft, String> {
    let version = spec_version(doc)?;
    let schemes = scheme_params(doc);
    for (method, path, item, op) in operations(doc) {
        if operation_key(op, &method, &path) != key {
            continue;
        }
        if method == "trace" {
            return Err("TRACE operations are not imported".into());
        }
        let credentials = with_named(credential_params(doc, op, &schemes), credential_names);
        let ctx = OpCtx {
            doc,
            version,
            credentials: &credentials,
        };
        let mut d = ctx.draft(&method, &path, item, op)?;
        let (name, _) = names::tool_name_for(vendor, key, taken);
        d.name = name.to_string();
        d.operation_id = Some(key.to_string());
        return Ok(d);
    }
    Err(format!(
        "the vendor's stored OpenAPI document has no operation {key:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_hint_reads_security_schemes() {
        // the petstore document's schemes: OAuth first, an API key header second
        let petstore = json!({"openapi": "3.0.2", "info": {"title": "p", "version": "1"}, "paths": {},
            "components": {"securitySchemes": {
                "petstore_auth": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://x/", "scopes": {}}}},
                "api_key": {"type": "apiKey", "name": "api_key", "in": "header"}}}});
        assert_eq!(
            connection_hint(&petstore),
            Some(("header", Some("api_key".into())))
        );
        let doc = |schemes: Value, security: Value| {
            json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
                   "components": {"securitySchemes": schemes}, "security": security})
        };
        let bearer = json!({"type": "http", "scheme": "Bearer"});
        let basic = json!({"type": "http", "scheme": "basic"});
        let query = json!({"type": "apiKey", "in": "query", "name": "key"});
        let cookie = json!({"type": "apiKey", "in": "cookie", "name": "sid"});
        let oauth = json!({"type": "oauth2", "flows": {}});
        // the required one first among equals; a key beats HTTP auth beats OAuth
        assert_eq!(
            connection_hint(&doc(json!({"a": basic, "b": bearer}), json!([{"b": []}]))),
            Some(("bearer", None))
        );
        assert_eq!(
            connection_hint(&doc(json!({"a": basic, "b": bearer}), json!([]))),
            Some(("basic", None))
        );
        assert_eq!(
            connection_hint(&doc(json!({"o": oauth, "q": query}), json!([{"o": []}]))),
            Some(("query", Some("key".into())))
        );
        assert_eq!(
            connection_hint(&doc(json!({"o": oauth}), json!([]))),
            Some(("bearer", None))
        );
        // nothing Graft can send, and no schemes at all
        assert_eq!(connection_hint(&doc(json!({"c": cookie}), json!([]))), None);
        assert_eq!(
            connection_hint(&json!({"openapi": "3.0.0", "paths": {}})),
            None
        );
        // Swagger 2.0, through a $ref-free securityDefinitions
        let swagger = json!({"swagger": "2.0", "paths": {},
            "securityDefinitions": {"b": {"type": "basic"}, "k": {"type": "apiKey", "in": "header", "name": "X-Key"}}});
        assert_eq!(
            connection_hint(&swagger),
            Some(("header", Some("X-Key".into())))
        );
    }

    fn plan(doc: Value) -> ImportPlan {
        let v = VendorSlug::parse("acme").unwrap();
        plan_import(&doc, &v, &|_| false, &HashMap::new(), &mut |_, _| {}).unwrap()
    }

    #[test]
    fn path_level_parameters_and_json_body_are_merged() {
        let p = plan(json!({
            "openapi": "3.0.0", "servers": [{"url": "https://api.acme.test/v1/"}],
            "components": {"schemas": {"Pet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "x-note": {"type": "string"}}, "x-tag": 1}}},
            "paths": {"/owners/{ownerId}/pets": {
                "parameters": [{"name": "ownerId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "post": {"operationId": "createPet", "summary": "Create a pet",
                    "parameters": [{"name": "Accept", "in": "header", "schema": {"type": "string"}}],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                    "responses": {"201": {"description": "ok", "content": {"application/json": {}}}}}
            }}
        }));
        assert_eq!(p.base_url.as_deref(), Some("https://api.acme.test/v1"));
        let t = &p.tools[0];
        assert_eq!(t.name, "create_pet");
        assert_eq!(t.operation_id.as_deref(), Some("createPet"));
        assert_eq!(t.input_schema["required"], json!(["ownerId", "name"]));
        assert!(t.input_schema["properties"].get("Accept").is_none());
        assert_eq!(
            t.binding.path.get("ownerId").map(String::as_str),
            Some("ownerId")
        );
        assert_eq!(t.binding.body, Some(BodyEncoding::Json));
        assert_eq!(
            t.binding.fixed_headers.get("Accept").map(String::as_str),
            Some("application/json")
        );
        assert!(!schema::has_ref_or_extension(&t.input_schema));
        assert!(!t.hints.read_only_hint);
    }

    #[test]
    fn get_bodies_go_to_the_query_and_unions_go_under_body() {
        let p = plan(json!({
            "openapi": "3.1.0",
            "paths": {"/things": {
                "get": {"requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"expand": {"type": "array"}}}}}}},
                "post": {"requestBody": {"content": {"application/json": {"schema": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}}}
            }}
        }));
        let get = p.tools.iter().find(|t| t.method == "GET").unwrap();
        assert_eq!(get.name, "get_things");
        assert_eq!(get.binding.body, None);
        assert_eq!(
            get.binding.query.get("expand").map(String::as_str),
            Some("expand")
        );
        let post = p.tools.iter().find(|t| t.method == "POST").unwrap();
        assert_eq!(post.binding.body_property.as_deref(), Some("body"));
        assert!(post.input_schema["properties"]["body"]["oneOf"].is_array());
        assert!(post.input_schema.get("oneOf").is_none());
    }

    #[test]
    fn swagger2_form_data_and_an_ordinary_token_parameter() {
        // issue 25.2: Slack's `token` is declared as an ordinary parameter (its security
        // scheme is OAuth), so it stays an input; only a scheme's own parameter is the
        // credential's place
        let p = plan(json!({
            "swagger": "2.0", "host": "slack.test", "basePath": "/api", "schemes": ["https"],
            "securityDefinitions": {"oauth": {"type": "oauth2"}, "k": {"type": "apiKey", "in": "query", "name": "api_key"}},
            "paths": {"/chat.postMessage": {"post": {"operationId": "chat_postMessage", "consumes": ["application/x-www-form-urlencoded"],
                "parameters": [
                    {"name": "token", "in": "header", "required": true, "type": "string"},
                    {"name": "key", "in": "query", "type": "string"},
                    {"name": "API_KEY", "in": "query", "type": "string"},
                    {"name": "channel", "in": "formData", "required": true, "type": "string"}
                ]}}}
        }));
        assert_eq!(p.base_url.as_deref(), Some("https://slack.test/api"));
        let t = &p.tools[0];
        assert!(t.input_schema["properties"].get("token").is_some());
        assert!(t.input_schema["properties"].get("key").is_some());
        assert!(t.input_schema["properties"].get("API_KEY").is_none());
        assert_eq!(
            t.binding.credential_params,
            vec![("query".to_string(), "API_KEY".to_string())]
        );
        assert_eq!(t.binding.body, Some(BodyEncoding::Form));
        assert_eq!(t.input_schema["required"], json!(["token", "channel"]));
        assert!(!t.binding.public);
    }

    #[test]
    fn only_the_operations_own_schemes_name_credential_parameters() {
        // issue 25 review: a scheme other operations use does not make `key` the
        // credential of an operation whose security is bearer only
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "legacy": {"type": "apiKey", "in": "query", "name": "key"}}},
            "security": [{"bearer": []}],
            "paths": {
                "/sorted": {"get": {"operationId": "sorted", "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}]}},
                "/legacy": {"get": {"operationId": "legacy", "security": [{"legacy": []}], "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}]}}
            }
        }));
        let t = |n: &str| p.tools.iter().find(|t| t.name == n).unwrap();
        assert!(t("sorted").input_schema["properties"].get("key").is_some());
        assert!(t("sorted").binding.credential_params.is_empty());
        assert!(t("legacy").input_schema["properties"].get("key").is_none());
        assert_eq!(
            t("legacy").binding.credential_params,
            vec![("query".to_string(), "key".to_string())]
        );
    }

    #[test]
    fn a_free_form_body_still_takes_what_it_admits() {
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "paths": {
                "/free": {"post": {"operationId": "free", "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}}},
                "/map": {"post": {"operationId": "map", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}}}},
                "/closed": {"post": {"operationId": "closed", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}}
            }
        }));
        let t = |n: &str| p.tools.iter().find(|t| t.name == n).unwrap();
        assert_eq!(t("free").input_schema["additionalProperties"], true);
        assert_eq!(
            t("map").input_schema["additionalProperties"],
            json!({"type": "string"})
        );
        assert!(t("closed")
            .input_schema
            .get("additionalProperties")
            .is_none());
    }

    #[test]
    fn an_empty_security_list_makes_an_operation_public() {
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {"b": {"type": "http", "scheme": "bearer"}}},
            "security": [{"b": []}],
            "paths": {
                "/health": {"get": {"operationId": "health", "security": []}},
                "/me": {"get": {"operationId": "me"}},
                "/maybe": {"get": {"operationId": "maybe", "security": [{}, {"b": []}]}}
            }
        }));
        let public = |n: &str| p.tools.iter().find(|t| t.name == n).unwrap().binding.public;
        assert!(public("health"));
        assert!(!public("me"));
        assert!(!public("maybe"));
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "security": [],
            "paths": {"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b", "security": [{"k": []}]}}}
        }));
        assert!(p.tools[0].binding.public && !p.tools[1].binding.public);
    }

    #[test]
    fn parameter_styles_are_recorded_as_declared() {
        use crate::domain::tool::{ParamStyle, Style};
        let p = plan(json!({
            "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {"/items/{ids}": {"get": {"operationId": "items", "parameters": [
                {"name": "ids", "in": "path", "required": true, "style": "label", "explode": true, "schema": {"type": "array", "items": {"type": "integer"}}},
                {"name": "tag", "in": "query", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "filter", "in": "query", "schema": {"type": "object", "properties": {"owner": {"type": "string"}}}},
                {"name": "q", "in": "query", "schema": {"type": "string"}}
            ]}}}
        }));
        let st = &p.tools[0].binding.styles;
        assert_eq!(
            st["ids"],
            ParamStyle {
                style: Style::Label,
                explode: true
            }
        );
        assert_eq!(
            st["tag"],
            ParamStyle {
                style: Style::Form,
                explode: false
            }
        );
        assert_eq!(
            st["filter"],
            ParamStyle {
                style: Style::Form,
                explode: true
            }
        );
        assert!(!st.contains_key("q"));
        let p = plan(json!({
            "swagger": "2.0", "host": "x.test",
            "paths": {"/a": {"get": {"operationId": "a", "parameters": [
                {"name": "csv", "in": "query", "type": "array", "items": {"type": "string"}},
                {"name": "multi", "in": "query", "type": "array", "collectionFormat": "multi", "items": {"type": "string"}},
                {"name": "pipes", "in": "header", "type": "array", "collectionFormat": "pipes", "items": {"type": "string"}}
            ]}}}
        }));
        let st = &p.tools[0].binding.styles;
        assert_eq!(
            st["csv"],
            ParamStyle {
                style: Style::Form,
                explode: false
            }
        );
        assert_eq!(
            st["multi"],
            ParamStyle {
                style: Style::Form,
                explode: true
            }
        );
        assert_eq!(
            st["pipes"],
            ParamStyle {
                style: Style::PipeDelimited,
                explode: false
            }
        );
    }

    #[test]
    fn reimport_drafts_known_operations_under_their_names_and_bad_documents_error() {
        let v = VendorSlug::parse("acme").unwrap();
        let doc = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b"}}}});
        let known: HashMap<String, String> = [("a".to_string(), "old_name".to_string())].into();
        let p = plan_import(&doc, &v, &|n| n == "old_name", &known, &mut |_, _| {}).unwrap();
        assert_eq!(
            p.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        assert_eq!(p.existing.len(), 1);
        assert_eq!(p.existing[0].name, "old_name");
        assert_eq!(p.existing[0].operation_id.as_deref(), Some("a"));
        assert!(p.skipped.is_empty());
        // an operationId used twice: the second is known by method and path, so each
        // operation finds its own tool again
        let dup = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "dup"}}, "/b": {"get": {"operationId": "dup"}}}});
        let first = plan_import(&dup, &v, &|_| false, &HashMap::new(), &mut |_, _| {}).unwrap();
        let keys: Vec<_> = first
            .tools
            .iter()
            .map(|t| t.operation_id.clone().unwrap())
            .collect();
        assert_eq!(keys, ["dup", "GET /b"]);
        let known: HashMap<String, String> = first
            .tools
            .iter()
            .map(|t| (t.operation_id.clone().unwrap(), t.name.clone()))
            .collect();
        let again = plan_import(
            &dup,
            &v,
            &|n| known.values().any(|k| k == n),
            &known,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(again.tools.is_empty());
        assert_eq!(
            again
                .existing
                .iter()
                .map(|t| t.path_template.as_str())
                .collect::<Vec<_>>(),
            ["/a", "/b"]
        );
        assert_eq!(again.existing[0].name, first.tools[0].name);
        assert_eq!(again.existing[1].name, first.tools[1].name);
        assert!(plan_import(
            &json!({"hello": 1}),
            &v,
            &|_| false,
            &HashMap::new(),
            &mut |_, _| {}
        )
        .is_err());
    }

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
