//! One operation into a tool draft (SPEC §2): its path, query, header and cookie
//! parameters and its body become one root object input schema, bound to where each
//! input goes; fixed `Accept`/`Content-Type` and credential parameters are left out, and
//! GET/HEAD/DELETE never get a body (its properties go to the query string).

use super::body::{fixed_content_type, is_file_schema, media_type_choice, multipart_schema};
use super::document::{deref, path_placeholders, string_list, SpecVersion};
use super::security::is_public;
use crate::domain::schema;
use crate::domain::tool::{Binding, BodyEncoding, Hints, ParamStyle, ToolDraft};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// Header parameters Graft fills itself and never asks of the agent.
const FIXED_HEADERS: &[&str] = &["accept", "content-type"];

/// Longest description stored (characters); longer ones are cut with an ellipsis. What
/// clients are served is cut further, essentials first (`domain::served::description`,
/// 2,048), and search reads the first 2,000
/// (`domain::search::enrich::MAX_INDEXED_DESCRIPTION`).
pub const MAX_DESCRIPTION: usize = 10_000;

pub use crate::domain::search::text::truncate_chars;

/// A schema's named properties (`properties`), none when it names none.
fn properties(s: &Value) -> impl Iterator<Item = (&String, &Value)> {
    s.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
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

pub(super) struct OpCtx<'a> {
    pub(super) doc: &'a Value,
    pub(super) version: SpecVersion,
    pub(super) credentials: &'a HashSet<(String, String)>,
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

    pub(super) fn draft(
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
                        for (k, v) in properties(&merged) {
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
                    for (k, v) in properties(&s) {
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
                for (k, v) in properties(&s) {
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
            output_schema: None,
            method: upper.clone(),
            path_template: path.to_string(),
            binding,
            hints: Hints::for_operation(
                &upper,
                op.get("operationId").and_then(Value::as_str),
                path,
                summary,
            ),
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

#[cfg(test)]
mod tests {
    use crate::domain::openapi::tests::plan;
    use crate::domain::schema;
    use crate::domain::tool::BodyEncoding;
    use serde_json::json;

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
}
