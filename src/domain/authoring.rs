//! Authoring tools (SPEC §3.4 `acquire` / `publish`): the checks an agent-written
//! definition must pass before it becomes a version, and the draft it becomes.
//!
//! Checks: the name rules of SPEC §2; a method of [`METHODS`]; a path starting with `/`
//! whose every `{placeholder}` is an input property; an input schema that is a valid
//! JSON Schema with a root object (served inlined: no `$ref`/`$defs` left, no root
//! union); `query` and `headers` naming input properties, and no header Graft reserves.
//! Hints of agent-authored versions follow the method: an agent cannot mark a POST or a
//! DELETE read-only.

use super::names::{ToolName, VendorSlug};
use super::openapi::path_placeholders;
use super::schema;
use super::tool::{Binding, BodyEncoding, Hints, ToolDraft, METHODS};
use serde_json::Value;

/// Headers an authored tool may not take from its input besides those Graft owns
/// ([`crate::domain::tool::is_owned_header`]): Graft sets them from the definition.
const RESERVED_HEADERS: &[&str] = &["content-type", "accept"];
/// Largest input schema an agent may send (bytes of JSON).
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Largest input schema served after inlining (bytes of JSON).
pub const MAX_INLINED_BYTES: usize = 64 * 1024;
/// Longest description an agent may write.
pub const MAX_AUTHORED_DESCRIPTION: usize = 4000;

/// Every `$ref` value in a schema.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                if k == "$ref" {
                    if let Value::String(r) = sub {
                        out.push(r.clone());
                    }
                } else {
                    refs(sub, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Checks a path template: `/`-rooted, balanced `{name}` placeholders, no dot segments,
/// no `%`, `\\`, `?`, `#`, whitespace, and no `//` at its start.
fn check_path(path: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("path {path:?} is invalid: {why}"));
    if !path.starts_with('/') || path.starts_with("//") {
        return bad("it must start with a single '/'");
    }
    if path
        .chars()
        .any(|c| c.is_whitespace() || "?#%\\".contains(c))
    {
        return bad("no query, fragment, '%', '\\' or spaces");
    }
    if path.split('/').any(|seg| {
        let bare = seg.split(';').next().unwrap_or("");
        bare == "." || bare == ".."
    }) {
        return bad("no '.' or '..' segments (nor '..;…', read as '..' by some servers)");
    }
    let mut open = false;
    for c in path.chars() {
        match c {
            '{' if !open => open = true,
            '}' if open => open = false,
            '{' | '}' => return bad("unbalanced '{' or '}'"),
            _ => {}
        }
    }
    if open || path.contains("{}") {
        return bad("unbalanced '{' or '}', or an empty placeholder");
    }
    Ok(())
}

/// An agent's definition of a tool version.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Name within the vendor.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// HTTP method (any case).
    pub method: String,
    /// Path template relative to the vendor's base URL.
    pub path: String,
    pub input_schema: Value,
    /// Properties sent as query parameters.
    pub query: Vec<String>,
    /// Properties sent as headers.
    pub headers: Vec<String>,
    /// `json` (default) or `form`.
    pub body_encoding: Option<String>,
    /// The operationId it came from, if any.
    pub operation_id: Option<String>,
}

/// Checks `spec` for `vendor` and turns it into a draft.
/// Errors: a sentence saying which rule failed (for `invalid_input`).
pub fn draft(vendor: &VendorSlug, spec: &ToolSpec) -> Result<ToolDraft, String> {
    let name = ToolName::parse(vendor, &spec.name)?;
    let method = spec.method.trim().to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(format!(
            "method {:?} is not an HTTP method Graft sends (use one of {})",
            spec.method,
            METHODS.join(", ")
        ));
    }
    let description = spec.description.trim();
    if description.is_empty() {
        return Err("description is empty: say what the tool does, for the model".into());
    }
    if description.chars().count() > MAX_AUTHORED_DESCRIPTION {
        return Err(format!(
            "description is longer than {MAX_AUTHORED_DESCRIPTION} characters"
        ));
    }
    check_path(&spec.path)?;
    if !spec.input_schema.is_object() {
        return Err("inputSchema must be a JSON Schema object".into());
    }
    if spec.input_schema.to_string().len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "inputSchema is larger than {} KiB",
            MAX_SCHEMA_BYTES / 1024
        ));
    }
    let mut references = Vec::new();
    refs(&spec.input_schema, &mut references);
    if let Some(r) = references
        .iter()
        .find(|r| schema::resolve_pointer(&spec.input_schema, r).is_none())
    {
        return Err(format!(
            "inputSchema has a $ref {r:?} that does not resolve inside the schema (use #/$defs/…)"
        ));
    }
    if !schema::inlines_within_budget(&spec.input_schema, &spec.input_schema) {
        return Err("inputSchema grows too large once its $refs are inlined".into());
    }
    let inlined = schema::inline(&spec.input_schema, &spec.input_schema);
    if inlined.to_string().len() > MAX_INLINED_BYTES {
        return Err(format!(
            "inputSchema is larger than {} KiB once its $refs are inlined",
            MAX_INLINED_BYTES / 1024
        ));
    }
    if let Err(e) = jsonschema::meta::validate(&spec.input_schema) {
        return Err(format!("inputSchema is not a valid JSON Schema: {e}"));
    }
    if let Err(e) = schema::linear_validator(&inlined) {
        return Err(format!(
            "inputSchema does not compile: {e} (patterns may not use backreferences or lookaround, which Graft cannot match in linear time)"
        ));
    }
    if inlined.get("type").and_then(Value::as_str) != Some("object") {
        return Err("inputSchema must have \"type\": \"object\" at its root".into());
    }
    for k in ["oneOf", "anyOf", "allOf", "not", "if"] {
        if inlined.get(k).is_some() {
            return Err(format!("inputSchema may not have {k:?} at its root (several MCP clients refuse such tools): put the union under a property"));
        }
    }
    let mut input_schema = inlined;
    if !input_schema.get("properties").is_some_and(Value::is_object) {
        input_schema["properties"] = serde_json::json!({});
    }
    let props = input_schema["properties"]
        .as_object()
        .expect("set above")
        .clone();
    if let Some(bad) = props.keys().find(|k| {
        k.is_empty()
            || k.len() > 64
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
    }) {
        return Err(format!("property name {bad:?} is not accepted by every MCP client: use 1 to 64 of A-Z, a-z, 0-9, '_', '.', '-'"));
    }
    let mut binding = Binding::default();
    for p in path_placeholders(&spec.path) {
        if !props.contains_key(&p) {
            return Err(format!(
                "path placeholder {{{p}}} is not a property of inputSchema"
            ));
        }
        binding.path.insert(p.clone(), p);
    }
    for q in &spec.query {
        if !props.contains_key(q) {
            return Err(format!(
                "query names {q:?}, which is not a property of inputSchema"
            ));
        }
        binding.query.insert(q.clone(), q.clone());
    }
    for h in &spec.headers {
        if !props.contains_key(h) {
            return Err(format!(
                "headers names {h:?}, which is not a property of inputSchema"
            ));
        }
        if h.is_empty()
            || crate::domain::tool::is_owned_header(h)
            || RESERVED_HEADERS.contains(&h.to_ascii_lowercase().as_str())
            || !h
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "{h:?} cannot be an input header (Graft or the connection sets it)"
            ));
        }
        binding.headers.insert(h.clone(), h.clone());
    }
    let has_body = !matches!(method.as_str(), "GET" | "HEAD" | "DELETE" | "OPTIONS");
    binding.body = match spec
        .body_encoding
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("json") => has_body.then_some(BodyEncoding::Json),
        Some("form") => has_body.then_some(BodyEncoding::Form),
        // a person re-publishing an imported multipart operation keeps its encoding
        Some("multipart") => has_body.then_some(BodyEncoding::Multipart),
        Some(other) => return Err(format!("bodyEncoding {other:?} is not json or form")),
    };
    Ok(ToolDraft {
        name: name.to_string(),
        operation_id: spec.operation_id.clone(),
        title: None,
        description: description.to_string(),
        input_schema,
        output_schema: None,
        method: method.clone(),
        path_template: spec.path.clone(),
        binding,
        // a GET whose name says it changes state stays a write when it is published
        // again (issue 28.7)
        hints: Hints::for_operation(
            &method,
            spec.operation_id.as_deref(),
            &spec.path,
            description.lines().next(),
        ),
        tags: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "get_item".into(),
            description: "Get an item".into(),
            method: "get".into(),
            path: "/items/{id}".into(),
            input_schema: json!({"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}, "verbose": {"type": "boolean"}}, "$defs": {"Id": {"type": "string"}}}),
            query: vec!["verbose".into()],
            headers: vec![],
            body_encoding: None,
            operation_id: None,
        }
    }

    fn v() -> VendorSlug {
        VendorSlug::parse("acme").unwrap()
    }

    #[test]
    fn a_good_spec_is_inlined_and_bound() {
        let d = draft(&v(), &spec()).unwrap();
        assert_eq!(d.method, "GET");
        assert_eq!(
            d.input_schema["properties"]["id"],
            json!({"type": "string"})
        );
        assert!(
            !schema::has_ref_or_extension(&d.input_schema) && d.input_schema.get("$defs").is_none()
        );
        assert_eq!(d.binding.path["id"], "id");
        assert!(d.hints.read_only_hint);
    }

    #[test]
    fn each_rule_has_its_error() {
        type Case = (Box<dyn Fn(&mut ToolSpec)>, &'static str);
        let cases: Vec<Case> = vec![
            (Box::new(|s| s.name = "Bad__Name".into()), "tool name"),
            (Box::new(|s| s.name = "a".repeat(60)), "too long"),
            (Box::new(|s| s.method = "FETCH".into()), "method"),
            (Box::new(|s| s.path = "items".into()), "path"),
            (Box::new(|s| s.path = "/a/../b".into()), "'..'"),
            (Box::new(|s| s.path = "//evil.test/x".into()), "single '/'"),
            (Box::new(|s| s.path = "/%2e%2e/x".into()), "'%'"),
            (Box::new(|s| s.path = "/items/{id".into()), "unbalanced"),
            (
                Box::new(|s| {
                    s.input_schema =
                        json!({"type": "object", "properties": {"id": {"$ref": "#/$defs/Nope"}}})
                }),
                "does not resolve",
            ),
            (
                Box::new(
                    |s| s.input_schema = json!({"type": "object", "properties": {"id": {"$ref": "https://x.test/s.json"}}}),
                ),
                "does not resolve",
            ),
            (
                Box::new(|s| {
                    s.input_schema =
                        json!({"type": "object", "properties": {"a b": {"type": "string"}}})
                }),
                "property name",
            ),
            (
                Box::new(|s| s.description = "x".repeat(4001)),
                "longer than",
            ),
            (Box::new(|s| s.path = "/items/{nope}".into()), "placeholder"),
            (
                Box::new(|s| s.input_schema = json!({"type": "array"})),
                "root",
            ),
            (
                Box::new(|s| {
                    s.input_schema = json!({"type": "object", "properties": {"id": {"type": 5}}})
                }),
                "valid JSON Schema",
            ),
            (
                Box::new(|s| s.input_schema = json!({"oneOf": [{"type": "object"}]})),
                "type",
            ),
            (Box::new(|s| s.query = vec!["missing".into()]), "query"),
            (Box::new(|s| s.headers = vec!["id".into()]), "header"),
            (Box::new(|s| s.description = " ".into()), "description"),
            (
                Box::new(|s| s.body_encoding = Some("xml".into())),
                "bodyEncoding",
            ),
        ];
        for (change, expect) in cases {
            let mut s = spec();
            if expect == "header" {
                s.input_schema["properties"]["Authorization"] = json!({"type": "string"});
                s.headers = vec!["Authorization".into()];
            } else {
                change(&mut s);
            }
            let e = draft(&v(), &s).unwrap_err();
            assert!(e.contains(expect), "{expect}: {e}");
        }
    }

    #[test]
    fn hints_follow_the_method_for_authors() {
        let mut s = spec();
        s.method = "DELETE".into();
        let d = draft(&v(), &s).unwrap();
        assert!(!d.hints.read_only_hint && d.hints.destructive_hint);
    }
}
