//! JSON Schemas as Graft serves them (SPEC §3.4): every `$ref` inlined (cycles cut at a
//! fixed depth), no `x-*` keys, and OpenAPI-only keywords turned into JSON Schema
//! 2020-12 (`nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`, `example`,
//! `discriminator`, `xml`, `externalDocs`), so that strict MCP clients keep the tool.

use serde_json::{Map, Value};

/// How many `$ref`s deep one path of a schema may go before it is cut to `{}`.
pub const MAX_REF_DEPTH: usize = 6;
/// Most schema objects one inlining may produce: `$ref`s past this budget are cut, so a
/// small schema of references to references cannot grow without bound.
pub const MAX_NODES: usize = 10_000;
/// Most bytes (about: string lengths, names and 8 per other JSON value) of non-schema
/// values (`default`, `enum`, `examples`, descriptions, …) one inlining may copy. A big
/// value referenced many times through `$defs` would otherwise be copied without bound
/// (a 250 KB schema grew a process to 7 GB); past this budget such values are dropped and
/// [`inlines_within_budget`] says no.
pub const MAX_COPY_BYTES: usize = 8 * 1024 * 1024;

/// Keywords whose value is a map from names to schemas: its keys are names, not
/// keywords, so an `x-` name there is kept.
const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is one schema.
const SUB_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of schemas.
const SUB_SCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an instance (data), not a schema: copied as they are, even
/// when the data holds a `$ref` or `x-` key.
const DATA: &[&str] = &["default", "enum", "const", "examples"];
/// OpenAPI keywords that are not JSON Schema and are dropped.
const DROPPED: &[&str] = &[
    "discriminator",
    "xml",
    "externalDocs",
    "example",
    "nullable",
    "$schema",
    "$id",
    "$anchor",
    "$comment",
];

/// Backtracking steps one `pattern` match may take (fancy-regex) before it fails the
/// input: only patterns with backreferences or lookaround backtrack at all (the others run
/// on the `regex` crate's linear-time engine), and only those of imported vendor schemas
/// can reach it, since authored ones must compile on the linear engine
/// ([`linear_validator`]).
pub const BACKTRACK_LIMIT: usize = 20_000;
/// Bytes one compiled pattern (and its lazy DFA cache) may take.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// The validator Graft checks tool inputs with (JSON Schema 2020-12, or the draft named
/// by `$schema`): `pattern`s run with a [`BACKTRACK_LIMIT`], so that no input can keep a
/// CPU busy for long. Errors: the schema does not compile (the message says why).
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex()
                .backtrack_limit(BACKTRACK_LIMIT)
                .size_limit(PATTERN_SIZE_LIMIT)
                .dfa_size_limit(PATTERN_SIZE_LIMIT),
        )
        .build(schema)
        .map_err(|e| e.to_string())
}

/// The validator for a schema an agent or a person authored (SPEC §3.5): every `pattern`
/// must compile on the `regex` crate's engine, whose matching time is linear in the
/// input, so backreferences and lookaround are refused. Errors: the schema does not
/// compile that way (the message names the pattern).
pub fn linear_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::regex()
                .size_limit(PATTERN_SIZE_LIMIT)
                .dfa_size_limit(PATTERN_SIZE_LIMIT),
        )
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Resolves a local JSON pointer reference (`#/components/schemas/Pet`) in `root`.
pub fn resolve_pointer<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// Inlines and cleans `schema`, resolving `$ref`s against `root` (the whole document,
/// or the schema itself for a standalone schema with `$defs`).
///
/// A `$ref` met again inside its own expansion, one deeper than [`MAX_REF_DEPTH`], or
/// one that does not resolve locally becomes `{}` with a description saying why.
/// Sibling keywords beside a `$ref` (OpenAPI 3.1) override the target's.
pub fn inline(root: &Value, schema: &Value) -> Value {
    inline_at(root, schema, &mut Ctx::new())
}

/// Whether an inlining of `schema` stays within [`MAX_NODES`] and [`MAX_COPY_BYTES`]
/// (nothing was cut or dropped for size). The work it does is bounded by the same
/// budgets, so it answers quickly for any input.
pub fn inlines_within_budget(root: &Value, schema: &Value) -> bool {
    let mut ctx = Ctx::new();
    inline_at(root, schema, &mut ctx);
    !ctx.exceeded
}

struct Ctx {
    /// The `$ref`s being expanded, outermost first.
    stack: Vec<String>,
    /// Schema objects still allowed.
    budget: usize,
    /// Bytes of copied values still allowed.
    copy_budget: usize,
    /// Whether something was cut or dropped because a budget ran out.
    exceeded: bool,
}

impl Ctx {
    fn new() -> Self {
        Ctx {
            stack: Vec::new(),
            budget: MAX_NODES,
            copy_budget: MAX_COPY_BYTES,
            exceeded: false,
        }
    }
}

/// About how many bytes `v` takes (string lengths, key lengths, 8 per other value),
/// counted only up to `limit`: the walk stops as soon as it passes it.
fn weight(v: &Value, limit: usize) -> usize {
    let mut total = 0usize;
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        total += match v {
            Value::String(s) => s.len() + 2,
            Value::Array(a) => {
                todo.extend(a.iter());
                8
            }
            Value::Object(m) => {
                for (k, x) in m {
                    total += k.len() + 2;
                    todo.push(x);
                }
                8
            }
            _ => 8,
        };
        if total > limit {
            break;
        }
    }
    total
}

fn inline_at(root: &Value, schema: &Value, stack: &mut Ctx) -> Value {
    if stack.budget == 0 {
        stack.exceeded = true;
    }
    stack.budget = stack.budget.saturating_sub(1);
    let Value::Object(obj) = schema else {
        // booleans are valid schemas; anything else is not a schema: allow anything
        return if schema.is_boolean() {
            schema.clone()
        } else {
            Value::Object(Map::new())
        };
    };
    if let Some(Value::String(reference)) = obj.get("$ref") {
        let target = if stack.stack.iter().any(|r| r == reference) {
            Some(cut(&format!("{reference} (recursive; cut)")))
        } else if stack.stack.len() >= MAX_REF_DEPTH {
            Some(cut(&format!("{reference} (nested too deep; cut)")))
        } else if stack.budget == 0 || stack.copy_budget == 0 {
            stack.exceeded = true;
            Some(cut(&format!("{reference} (schema too large; cut)")))
        } else if let Some(t) = resolve_pointer(root, reference) {
            stack.stack.push(reference.clone());
            let inlined = inline_at(root, t, stack);
            stack.stack.pop();
            Some(inlined)
        } else {
            Some(cut(&format!("{reference} (unresolved reference)")))
        };
        let mut merged = match target {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        for (k, v) in obj {
            if k == "$ref" {
                continue;
            }
            if let Some(clean) = clean_keyword(root, k, v, stack) {
                merged.insert(k.clone(), clean);
            }
        }
        return Value::Object(merged);
    }
    let mut out = Map::new();
    for (k, v) in obj {
        if let Some(clean) = clean_keyword(root, k, v, stack) {
            out.insert(k.clone(), clean);
        }
    }
    fix_openapi_keywords(obj, &mut out);
    Value::Object(out)
}

fn cut(why: &str) -> Value {
    let mut m = Map::new();
    m.insert("description".into(), Value::String(why.into()));
    Value::Object(m)
}

fn clean_keyword(root: &Value, k: &str, v: &Value, stack: &mut Ctx) -> Option<Value> {
    if k.starts_with("x-") || DROPPED.contains(&k) {
        return None;
    }
    if NAME_MAPS.contains(&k) {
        if k == "$defs" || k == "definitions" {
            // every reference is inlined, so the definitions are no longer needed
            return None;
        }
        let Value::Object(m) = v else { return None };
        let mut out = Map::new();
        for (name, sub) in m {
            out.insert(name.clone(), inline_at(root, sub, stack));
        }
        return Some(Value::Object(out));
    }
    if SUB_SCHEMA.contains(&k) {
        return match v {
            // draft-04 tuple `items: [..]` is still an array of schemas
            Value::Array(a) => Some(Value::Array(
                a.iter().map(|s| inline_at(root, s, stack)).collect(),
            )),
            _ => Some(inline_at(root, v, stack)),
        };
    }
    if SUB_SCHEMAS.contains(&k) {
        let Value::Array(a) = v else { return None };
        return Some(Value::Array(
            a.iter().map(|s| inline_at(root, s, stack)).collect(),
        ));
    }
    if !DATA.contains(&k) && has_ref_or_extension(v) {
        // a keyword Graft does not know (a typo, a vendor's own) whose value refers into
        // `$defs`, which are gone once inlined: a dangling reference a strict client
        // would fail on (found by the schema_acquire fuzz target)
        return None;
    }
    let w = weight(v, stack.copy_budget);
    if w > stack.copy_budget {
        stack.copy_budget = 0;
        stack.exceeded = true;
        return None;
    }
    stack.copy_budget -= w;
    Some(v.clone())
}

/// A JSON Schema type name for the names real documents use by mistake (`int`, `bool`,
/// …); `None` for names that mean nothing.
fn json_type(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "string" | "str" | "text" | "file" => "string",
        "integer" | "int" | "int32" | "int64" | "long" => "integer",
        "number" | "float" | "double" | "decimal" => "number",
        "boolean" | "bool" => "boolean",
        "object" | "dict" | "map" => "object",
        "array" | "list" => "array",
        "null" => "null",
        _ => return None,
    })
}

/// OpenAPI 3.0 `nullable: true` → a `null` type; boolean exclusive bounds → numeric;
/// misspelled type names (Swagger's `int`) → JSON Schema's.
fn fix_openapi_keywords(src: &Map<String, Value>, out: &mut Map<String, Value>) {
    match out.get("type").cloned() {
        Some(Value::String(t)) => match json_type(&t) {
            Some(fixed) => {
                out.insert("type".into(), Value::String(fixed.into()));
            }
            None => {
                out.remove("type");
            }
        },
        Some(Value::Array(ts)) => {
            let fixed: Vec<Value> = ts
                .iter()
                .filter_map(|t| t.as_str().and_then(json_type))
                .map(|t| Value::String(t.into()))
                .collect();
            if fixed.is_empty() {
                out.remove("type");
            } else {
                out.insert("type".into(), Value::Array(fixed));
            }
        }
        Some(_) => {
            out.remove("type");
        }
        None => {}
    }
    if src.get("nullable") == Some(&Value::Bool(true)) {
        match out.get("type").cloned() {
            Some(Value::String(t)) => {
                out.insert(
                    "type".into(),
                    Value::Array(vec![Value::String(t), Value::String("null".into())]),
                );
            }
            Some(Value::Array(mut ts)) => {
                if !ts.contains(&Value::String("null".into())) {
                    ts.push(Value::String("null".into()));
                }
                out.insert("type".into(), Value::Array(ts));
            }
            _ => {}
        }
        if let Some(Value::Array(e)) = out.get_mut("enum") {
            if !e.contains(&Value::Null) {
                e.push(Value::Null);
            }
        }
    }
    for (excl, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(b)) = out.get(excl).cloned() {
            out.remove(excl);
            if b {
                if let Some(n) = out.remove(bound) {
                    out.insert(excl.into(), n);
                }
            }
        }
    }
}

/// Whether `schema` is an object schema whose properties can be merged into a tool's
/// root input object: `type: object` or `properties`, and no union or `not` at its root.
pub fn is_plain_object(schema: &Value) -> bool {
    let Value::Object(m) = schema else {
        return false;
    };
    let typed_object = match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => m.contains_key("properties"),
    };
    typed_object
        && !["oneOf", "anyOf", "allOf", "not", "if"]
            .iter()
            .any(|k| m.contains_key(*k))
}

/// An inlined request-body schema made fit for an agent's input (issue 12.1, 12.2):
/// every `allOf` of object parts merged into one object ([`merge_all_of`]), then every
/// `readOnly` property dropped from `properties` and `required` ([`drop_read_only`]).
pub fn for_request(schema: &Value) -> Value {
    drop_read_only(&merge_all_of(schema))
}

/// Merges `allOf` whose parts are all object schemas (`type: object`, `properties` or
/// an `allOf` of those; `$ref`s already inlined) into one object schema: the union of
/// the parts' `properties` (a property two parts define differently keeps both as its
/// own `allOf`) and of their `required`; the schema's own keywords win over the parts'
/// (`description`, `title`); parts' `additionalProperties` are dropped, since each part
/// would otherwise refuse the others' properties. Applied at every depth (properties,
/// items, unions' branches). An `allOf` with a part of another kind (a string, a union)
/// is left as it is: JSON Schema 2020-12 §10.2.1.1 semantics stay exact there.
pub fn merge_all_of(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = map_subschemas(m, &merge_all_of);
    let Some(Value::Array(parts)) = out.get("allOf") else {
        return Value::Object(out);
    };
    let objectish = |p: &Value| {
        p.as_object().is_some_and(|pm| {
            let typed = match pm.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(_) => false,
                None => true,
            };
            typed
                && !["oneOf", "anyOf", "allOf", "not", "if", "$ref"]
                    .iter()
                    .any(|k| pm.contains_key(*k))
        })
    };
    let own_type_ok = match out.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => true,
    };
    if parts.is_empty() || !own_type_ok || !parts.iter().all(objectish) {
        return Value::Object(out);
    }
    let parts = parts.clone();
    out.remove("allOf");
    let mut props: Map<String, Value> = match out.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match out.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    for part in &parts {
        let pm = part.as_object().expect("checked objectish");
        if let Some(Value::Object(pp)) = pm.get("properties") {
            for (name, sub) in pp {
                match props.get(name) {
                    None => {
                        props.insert(name.clone(), sub.clone());
                    }
                    Some(existing) if existing == sub => {}
                    Some(existing) => {
                        let both = serde_json::json!({"allOf": [existing.clone(), sub.clone()]});
                        props.insert(name.clone(), both);
                    }
                }
            }
        }
        if let Some(Value::Array(r)) = pm.get("required") {
            for name in r {
                if !required.contains(name) {
                    required.push(name.clone());
                }
            }
        }
        for (k, v) in pm {
            if matches!(
                k.as_str(),
                "properties" | "required" | "type" | "additionalProperties"
            ) {
                continue;
            }
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Value::Object(out)
}

/// `m` with `f` applied to each of its sub-schemas (the values of `properties` and the
/// other name maps, `items` and the other single sub-schemas, the members of unions);
/// every other keyword as it is.
fn map_subschemas(m: &Map<String, Value>, f: &dyn Fn(&Value) -> Value) -> Map<String, Value> {
    m.iter()
        .map(|(k, v)| {
            let mapped = if NAME_MAPS.contains(&k.as_str()) {
                match v {
                    Value::Object(props) => Value::Object(
                        props
                            .iter()
                            .map(|(name, sub)| (name.clone(), f(sub)))
                            .collect(),
                    ),
                    other => other.clone(),
                }
            } else if SUB_SCHEMA.contains(&k.as_str()) || SUB_SCHEMAS.contains(&k.as_str()) {
                match v {
                    Value::Array(a) => Value::Array(a.iter().map(f).collect()),
                    other => f(other),
                }
            } else {
                v.clone()
            };
            (k.clone(), mapped)
        })
        .collect()
}

/// Drops every property marked `readOnly: true` (server-set, like `id`: OpenAPI 3.x
/// "SHOULD NOT be sent as part of the request") from `properties` and `required`, at
/// every depth; `writeOnly` properties stay.
pub fn drop_read_only(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let is_read_only = |v: &Value| v.get("readOnly") == Some(&Value::Bool(true));
    let mut dropped: Vec<String> = Vec::new();
    let mut kept = m.clone();
    if let Some(Value::Object(props)) = kept.get_mut("properties") {
        props.retain(|name, sub| {
            let ro = is_read_only(sub);
            if ro {
                dropped.push(name.clone());
            }
            !ro
        });
    }
    let mut out = map_subschemas(&kept, &drop_read_only);
    if !dropped.is_empty() {
        if let Some(Value::Array(r)) = out.get_mut("required") {
            r.retain(|n| n.as_str().is_none_or(|n| !dropped.iter().any(|d| d == n)));
            if r.is_empty() {
                out.remove("required");
            }
        }
    }
    Value::Object(out)
}

/// Whether an object schema admits properties its `properties` do not name: an explicit
/// `additionalProperties` other than `false`, or any `patternProperties` (JSON Schema
/// 2020-12 §10.3.2). An absent `additionalProperties` counts as no: Graft builds every
/// tool's root schema from named parameters, and what the document did not name is not
/// sent anywhere (issue 25.3).
pub fn admits_undeclared(schema: &Value) -> bool {
    schema
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
        || schema.get("patternProperties").is_some()
}

/// The top-level input properties that `schema` does not declare, in input order, when
/// the schema does not admit undeclared ones ([`admits_undeclared`]); else none.
pub fn undeclared(schema: &Value, input: &Map<String, Value>) -> Vec<String> {
    if admits_undeclared(schema) {
        return Vec::new();
    }
    let props = schema.get("properties").and_then(Value::as_object);
    input
        .keys()
        .filter(|k| !props.is_some_and(|p| p.contains_key(k.as_str())))
        .cloned()
        .collect()
}

/// Whether a schema lets a value be an integer: `type` is or holds `integer`, or a
/// member of `anyOf`/`oneOf`/`allOf` does.
fn allows_integer(schema: &Value) -> bool {
    let by_type = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    by_type
        || ["anyOf", "oneOf", "allOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(|m| m.iter().any(allows_integer))
        })
}

/// Rewrites, in place, every number of `value` with no fractional part that sits where
/// `schema` expects an integer (`5.0`, `120000.0`, `1e3`: models write these) as that
/// integer, so that it is validated and sent as the integer it is (issue 25.10).
/// Follows `properties`, `items` (one schema or a tuple's `prefixItems`),
/// `additionalProperties` and the members of unions. A number is written as the integer
/// its double holds (`1e18` as `1000000000000000000`) while that fits an `i64` or `u64`;
/// past that it stays as it is.
pub fn integral_floats_to_integers(schema: &Value, value: &mut Value) {
    const I64_END: f64 = 9_223_372_036_854_775_808.0; // 2^63
    const U64_END: f64 = 18_446_744_073_709_551_616.0; // 2^64
    match value {
        Value::Number(n) if n.is_f64() && allows_integer(schema) => {
            if let Some(f) = n.as_f64() {
                if f.is_finite() && f.fract() == 0.0 {
                    if (-I64_END..I64_END).contains(&f) {
                        *value = Value::from(f as i64);
                    } else if (0.0..U64_END).contains(&f) {
                        *value = Value::from(f as u64);
                    }
                }
            }
        }
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in m.iter_mut() {
                if let Some(s) = props.and_then(|p| p.get(k)).or(extra) {
                    integral_floats_to_integers(s, v);
                }
            }
        }
        Value::Array(items) => {
            let tuple = schema.get("prefixItems").and_then(Value::as_array);
            for (i, v) in items.iter_mut().enumerate() {
                let s = match (tuple.and_then(|t| t.get(i)), schema.get("items")) {
                    (Some(s), _) => s,
                    (None, Some(s)) if s.is_object() => s,
                    (None, Some(Value::Array(t))) => match t.get(i) {
                        Some(s) => s,
                        None => continue,
                    },
                    _ => continue,
                };
                integral_floats_to_integers(s, v);
            }
        }
        _ => {}
    }
    if !matches!(value, Value::Number(_)) {
        for k in ["anyOf", "oneOf", "allOf"] {
            for member in schema
                .get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if member.get("properties").is_some() || member.get("items").is_some() {
                    integral_floats_to_integers(member, value);
                }
            }
        }
    }
}

/// The schema a client is served, within `budget` bytes of JSON (issue 12.13): an input
/// schema of hundreds of kilobytes is more than a client accepts in one message and more
/// than a model can read. Calls are still validated against the full schema (its errors
/// name the nested shape by JSON pointer) and the console shows it in full.
///
/// Steps, each only while the schema is over budget: (1) properties whose names start
/// with `$` (a schema describing schemas, as Kubernetes' `JSONSchemaProps`, has `$ref`
/// and `$schema` properties that clients take for references) are dropped at every
/// depth, always; (2) `examples`, `default`s of objects and descriptions longer than 200
/// characters below the top level go; (3) objects and unions nested deeper than `d`
/// levels become `{type: object}` (or no type for a union) with a one-line description,
/// for `d` from the deepest level up to 1; (4) the top level's optional properties go,
/// the description of the root saying how many; (5) the required properties lose their
/// descriptions, then everything but their type. `required` properties always stay,
/// even when their names and types alone are over the budget.
pub fn fit(schema: &Value, budget: usize) -> Value {
    let mut s = drop_dollar_properties(schema);
    let size = |v: &Value| serde_json::to_string(v).map_or(usize::MAX, |t| t.len());
    if size(&s) <= budget {
        return s;
    }
    strip_deep_extras(&mut s, 0);
    if size(&s) <= budget {
        return s;
    }
    let deepest = depth(&s);
    for d in (1..deepest).rev() {
        let mut cut = s.clone();
        collapse_below(&mut cut, 0, d);
        if size(&cut) <= budget || d == 1 {
            s = cut;
            if size(&s) <= budget {
                return s;
            }
            break;
        }
    }
    // the top level alone is too big: keep the required properties
    if let Value::Object(root) = &mut s {
        let required: Vec<String> = root
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Value::Object(props)) = root.get_mut("properties") {
            let before = props.len();
            props.retain(|k, _| required.contains(k));
            let dropped = before - props.len();
            if dropped > 0 {
                let note = format!(
                    "{dropped} optional properties are not listed here (the schema is too large to serve); they are still accepted, and the console's tool page shows them."
                );
                let text = match root.get("description").and_then(Value::as_str) {
                    Some(d) => format!("{d} {note}"),
                    None => note,
                };
                root.insert("description".into(), Value::String(text));
            }
        }
    }
    // still over: the required properties lose their descriptions, then all but their
    // type (the names and types are what a call cannot do without)
    for strip in [false, true] {
        if size(&s) <= budget {
            break;
        }
        if let Some(Value::Object(props)) = s.get_mut("properties") {
            for p in props.values_mut() {
                if let Value::Object(m) = p {
                    if strip {
                        m.retain(|k, _| k == "type");
                    } else {
                        m.remove("description");
                    }
                }
            }
        }
    }
    s
}

fn drop_dollar_properties(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, sub)| {
                    let cleaned = if NAME_MAPS.contains(&k.as_str()) {
                        match sub {
                            Value::Object(props) => Value::Object(
                                props
                                    .iter()
                                    .filter(|(name, _)| !name.starts_with('$'))
                                    .map(|(name, p)| (name.clone(), drop_dollar_properties(p)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else if k == "required" {
                        match sub {
                            Value::Array(a) => Value::Array(
                                a.iter()
                                    .filter(|n| n.as_str().is_none_or(|n| !n.starts_with('$')))
                                    .cloned()
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        drop_dollar_properties(sub)
                    };
                    (k.clone(), cleaned)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(drop_dollar_properties).collect()),
        other => other.clone(),
    }
}

/// The sub-schemas of a schema object, mutable: properties' values, items, unions.
fn children_mut(m: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for (k, v) in m.iter_mut() {
        if NAME_MAPS.contains(&k.as_str()) {
            if let Value::Object(props) = v {
                out.extend(props.values_mut());
            }
        } else if SUB_SCHEMA.contains(&k.as_str()) || SUB_SCHEMAS.contains(&k.as_str()) {
            match v {
                Value::Array(a) => out.extend(a.iter_mut()),
                other => out.push(other),
            }
        }
    }
    out
}

/// How many schema levels deep `v` goes (a leaf is 1).
fn depth(v: &Value) -> usize {
    let Value::Object(m) = v else { return 0 };
    let mut deepest = 0;
    for (k, sub) in m {
        if NAME_MAPS.contains(&k.as_str()) {
            if let Value::Object(props) = sub {
                deepest = deepest.max(props.values().map(depth).max().unwrap_or(0));
            }
        } else if SUB_SCHEMA.contains(&k.as_str()) || SUB_SCHEMAS.contains(&k.as_str()) {
            deepest = deepest.max(match sub {
                Value::Array(a) => a.iter().map(depth).max().unwrap_or(0),
                other => depth(other),
            });
        }
    }
    deepest + 1
}

fn strip_deep_extras(v: &mut Value, level: usize) {
    let Value::Object(m) = v else { return };
    m.remove("examples");
    if level > 0 {
        if m.get("default")
            .is_some_and(|d| d.is_object() || d.is_array())
        {
            m.remove("default");
        }
        if let Some(Value::String(d)) = m.get_mut("description") {
            if d.chars().count() > 200 {
                *d = first_sentence(d);
            }
        }
    }
    for child in children_mut(m) {
        strip_deep_extras(child, level + 1);
    }
}

/// The first sentence (or 200 characters) of a description, on one line.
fn first_sentence(d: &str) -> String {
    let line = d.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = line
        .find(". ")
        .map(|i| i + 1)
        .unwrap_or(line.len())
        .min(line.char_indices().nth(200).map_or(line.len(), |(i, _)| i));
    line[..end].to_string()
}

/// Replaces every sub-schema deeper than `keep` levels that has structure of its own
/// (properties, items of objects, unions) with a one-line stand-in.
fn collapse_below(v: &mut Value, level: usize, keep: usize) {
    let Value::Object(m) = v else { return };
    if level >= keep {
        let structured = ["properties", "oneOf", "anyOf", "allOf", "patternProperties"]
            .iter()
            .any(|k| m.contains_key(*k))
            || m.get("items").is_some_and(|i| depth(i) > 1);
        if structured {
            let what = if m.contains_key("properties") {
                let n = m
                    .get("properties")
                    .and_then(Value::as_object)
                    .map_or(0, Map::len);
                format!("an object with {n} properties")
            } else if m.contains_key("items") {
                "a list of structured items".to_string()
            } else {
                "one of several shapes".to_string()
            };
            let lead = m
                .get("description")
                .and_then(Value::as_str)
                .map(first_sentence)
                .filter(|s| !s.is_empty())
                .map(|s| format!("{s} "))
                .unwrap_or_default();
            let mut stand_in = Map::new();
            match m.get("type") {
                Some(t) => {
                    stand_in.insert("type".into(), t.clone());
                }
                None if m.contains_key("properties") => {
                    stand_in.insert("type".into(), Value::String("object".into()));
                }
                None => {}
            }
            stand_in.insert(
                "description".into(),
                Value::String(format!(
                    "{lead}({what}; its shape is not shown to keep the tool small: an invalid value is answered with the exact path and rule, and the console's tool page shows it)"
                )),
            );
            *m = stand_in;
            return;
        }
    }
    for child in children_mut(m) {
        collapse_below(child, level + 1, keep);
    }
}

/// Whether `v` (a schema) holds a `$ref` or an `x-` keyword anywhere outside
/// property-name maps and instance values (`default`, `enum`, `const`, `examples`).
/// Used by tests, by authoring checks and by inlining (an unknown keyword holding one is
/// dropped).
pub fn has_ref_or_extension(v: &Value) -> bool {
    fn walk(v: &Value, names: bool) -> bool {
        match v {
            Value::Object(m) => m.iter().any(|(k, sub)| {
                if !names && (k == "$ref" || k.starts_with("x-")) {
                    return true;
                }
                if !names && DATA.contains(&k.as_str()) {
                    return false;
                }
                walk(sub, !names && NAME_MAPS.contains(&k.as_str()))
            }),
            Value::Array(a) => a.iter().any(|x| walk(x, false)),
            _ => false,
        }
    }
    walk(v, false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn undeclared_inputs_and_integral_floats() {
        use serde_json::json;
        let s = json!({"type": "object", "properties": {"limit": {"type": "integer"}, "ids": {"type": "array", "items": {"type": ["integer", "null"]}},
            "page": {"type": "object", "properties": {"size": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}}, "ratio": {"type": "number"}}});
        let input = json!({"limit": 5, "colour": "red", "Limit": 1});
        assert_eq!(
            undeclared(&s, input.as_object().unwrap()),
            ["Limit", "colour"]
        );
        let open = json!({"type": "object", "properties": {}, "additionalProperties": true});
        assert!(undeclared(&open, input.as_object().unwrap()).is_empty());
        let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
        assert_eq!(undeclared(&closed, input.as_object().unwrap()).len(), 3);
        let mut v = json!({"limit": 120000.0, "ids": [1.0, 2.5, null], "page": {"size": 5.0}, "ratio": 2.0, "other": 3.0});
        integral_floats_to_integers(&s, &mut v);
        assert_eq!(
            v.to_string(),
            r#"{"ids":[1,2.5,null],"limit":120000,"other":3.0,"page":{"size":5},"ratio":2.0}"#
        );
        let mut huge = json!({"limit": 1e300});
        integral_floats_to_integers(&s, &mut huge);
        assert!(huge["limit"].is_f64());
        let mut big = json!({"limit": 1e18, "ids": [1.5e19]});
        integral_floats_to_integers(&s, &mut big);
        assert_eq!(
            big.to_string(),
            r#"{"ids":[15000000000000000000],"limit":1000000000000000000}"#
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn refs_are_inlined_and_cycles_cut() {
        let doc = json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}, "x-name": {"type": "string"}}, "x-internal": true},
        }}});
        let out = inline(&doc, &json!({"$ref": "#/components/schemas/Node"}));
        assert!(!has_ref_or_extension(&out), "{out}");
        assert_eq!(out["properties"]["x-name"], json!({"type": "string"}));
        let cut = &out["properties"]["child"];
        assert!(
            cut["description"].as_str().unwrap().contains("recursive"),
            "{out}"
        );
    }

    #[test]
    fn openapi_keywords_become_json_schema() {
        let out = inline(
            &json!({}),
            &json!({"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true, "example": 3}),
        );
        assert_eq!(
            out,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 0})
        );
    }

    #[test]
    fn misspelled_types_are_fixed() {
        assert_eq!(
            inline(&json!({}), &json!({"type": "int"})),
            json!({"type": "integer"})
        );
        assert_eq!(
            inline(&json!({}), &json!({"type": ["bool", "null"]})),
            json!({"type": ["boolean", "null"]})
        );
        assert_eq!(
            inline(&json!({}), &json!({"type": "weird", "description": "d"})),
            json!({"description": "d"})
        );
    }

    #[test]
    fn siblings_of_ref_override() {
        let doc = json!({"$defs": {"A": {"type": "string", "description": "a"}}});
        let out = inline(&doc, &json!({"$ref": "#/$defs/A", "description": "b"}));
        assert_eq!(out, json!({"type": "string", "description": "b"}));
    }

    #[test]
    fn references_to_references_stay_within_a_budget() {
        // 12 definitions, each referring to the next 10 times: 10^12 nodes if inlined naively
        let mut defs = serde_json::Map::new();
        for i in 0..12 {
            let props: serde_json::Map<String, Value> = (0..10)
                .map(|j| {
                    (
                        format!("p{j}"),
                        if i == 11 {
                            json!({"type": "string"})
                        } else {
                            json!({"$ref": format!("#/$defs/D{}", i + 1)})
                        },
                    )
                })
                .collect();
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": props}),
            );
        }
        let schema = json!({"$defs": defs, "type": "object", "properties": {"root": {"$ref": "#/$defs/D0"}}});
        let out = inline(&schema, &schema);
        assert!(
            out.to_string().len() < 4_000_000,
            "{}",
            out.to_string().len()
        );
        assert!(!inlines_within_budget(&schema, &schema));
        assert!(inlines_within_budget(
            &json!({}),
            &json!({"type": "object"})
        ));
    }

    #[test]
    fn big_values_referenced_many_times_stay_within_a_budget() {
        // a 100 KB `default` reached through 4 levels of 8 references each: 4,096 copies
        // (400 MB) if inlined naively; the security review's 250 KB schema reached 7 GB
        let big: Vec<u32> = (0..20_000).collect();
        let mut defs = serde_json::Map::new();
        defs.insert("Big".into(), json!({"type": "array", "default": big}));
        for i in 0..4 {
            let next = if i == 3 {
                "Big".to_string()
            } else {
                format!("D{}", i + 1)
            };
            let props: serde_json::Map<String, Value> = (0..8)
                .map(|j| (format!("p{j}"), json!({"$ref": format!("#/$defs/{next}")})))
                .collect();
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": props}),
            );
        }
        let schema = json!({"$defs": defs, "type": "object", "properties": {"root": {"$ref": "#/$defs/D0"}}});
        assert!(!inlines_within_budget(&schema, &schema));
        let out = inline(&schema, &schema);
        let size = out.to_string().len();
        assert!(size <= 2 * MAX_COPY_BYTES, "{size}");
        // the same shape with a small default is fine
        let small = serde_json::to_string(&schema)
            .unwrap()
            .replace(&serde_json::to_string(&big).unwrap(), "[1,2,3]");
        let small: Value = serde_json::from_str(&small).unwrap();
        assert!(inlines_within_budget(&small, &small));
    }

    #[test]
    fn patterns_are_bounded() {
        let backref = json!({"type": "string", "pattern": "^((a|aa)+)\\1$"});
        assert!(
            linear_validator(&backref).is_err(),
            "refused for authored tools"
        );
        assert!(
            linear_validator(&json!({"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"})).is_ok()
        );
        // an imported schema keeps it, and a hostile input stops at the backtrack limit
        let v = validator(&backref).unwrap();
        let input = json!(format!("{}b", "a".repeat(50_000)));
        let errors: Vec<String> = v.iter_errors(&input).map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(v.is_valid(&json!("aaaa")));
    }

    #[test]
    fn unknown_keywords_lose_their_dangling_refs() {
        // found by the schema_acquire fuzz target: `]tems` (a mangled `items`) kept a
        // `$ref` into `$defs`, which inlining removes
        let schema = json!({"type": "object", "properties": {"tags": {"type": "array",
            "]tems": {"$ref": "#/$defs/Tag"}, "default": [{"$ref": "data, not a schema"}]}},
            "$defs": {"Tag": {"type": "string"}}});
        let out = inline(&schema, &schema);
        assert!(!has_ref_or_extension(&out), "{out}");
        assert_eq!(
            out["properties"]["tags"]["default"][0]["$ref"],
            "data, not a schema"
        );
        assert!(out["properties"]["tags"].get("]tems").is_none());
    }

    #[test]
    fn unresolved_refs_are_cut() {
        let out = inline(&json!({}), &json!({"$ref": "other.json#/X"}));
        assert!(!has_ref_or_extension(&out));
    }

    #[test]
    fn all_of_object_parts_merge_and_read_only_properties_go() {
        let doc = json!({"components": {"schemas": {
            "Base": {"type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "string", "readOnly": true},
                "name": {"type": "string"}
            }},
            "Secret": {"type": "object", "properties": {"password": {"type": "string", "writeOnly": true}}}
        }}});
        let body = json!({
            "description": "A user.",
            "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"$ref": "#/components/schemas/Secret"},
                {"type": "object", "required": ["email"], "additionalProperties": false,
                 "properties": {"email": {"type": "string"},
                                "address": {"allOf": [
                                    {"properties": {"city": {"type": "string"}}, "required": ["city"]},
                                    {"properties": {"zip": {"type": "string"}, "created": {"type": "string", "readOnly": true}}}
                                ]}}}
            ]
        });
        let s = for_request(&inline(&doc, &body));
        assert_eq!(s["type"], "object");
        assert_eq!(s["description"], "A user.");
        assert!(s.get("allOf").is_none() && s.get("additionalProperties").is_none());
        let mut props: Vec<&str> = s["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        props.sort();
        assert_eq!(props, ["address", "email", "name", "password"]);
        assert_eq!(s["required"], json!(["name", "email"]));
        assert_eq!(
            s["properties"]["address"],
            json!({"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["city"]})
        );
        // a flat object validates; the read-only id is no longer required
        let v = jsonschema::validator_for(&s).unwrap();
        assert!(v.is_valid(
            &json!({"name": "a", "email": "a@b", "password": "x", "address": {"city": "c"}})
        ));
        assert!(!v.is_valid(&json!({"email": "a@b"})));
    }

    #[test]
    fn served_schemas_fit_their_budget_and_keep_what_is_required() {
        // a deep, wide schema: 40 top properties, each an object 4 levels deep
        fn deep(level: usize) -> Value {
            if level == 0 {
                return json!({"type": "string", "description": "x".repeat(300), "examples": ["a"]});
            }
            let props: Map<String, Value> =
                (0..5).map(|i| (format!("p{i}"), deep(level - 1))).collect();
            json!({"type": "object", "description": "A nested part. More words here.", "properties": props})
        }
        let props: Map<String, Value> = (0..40).map(|i| (format!("f{i}"), deep(4))).collect();
        let mut big = json!({"type": "object", "properties": props, "required": ["f0", "f7"]});
        big["properties"]["$ref"] = json!({"type": "string"});
        let full = serde_json::to_string(&big).unwrap().len();
        assert!(full > 500_000, "{full}");
        let small = fit(&big, 16 * 1024);
        let text = serde_json::to_string(&small).unwrap();
        assert!(text.len() <= 16 * 1024, "{}", text.len());
        assert!(!text.contains("$ref"));
        assert_eq!(small["required"], json!(["f0", "f7"]));
        assert!(small["properties"]["f0"]["type"] == "object");
        assert!(small["properties"]["f39"].is_object(), "top level kept");
        assert!(text.contains("its shape is not shown"));
        // the served schema still accepts what the full one accepts
        let v = jsonschema::validator_for(&small).unwrap();
        assert!(v.is_valid(&json!({"f0": {"p0": {"p1": {"p2": {"p3": "deep"}}}}, "f7": {}})));
        // a small schema is served as it is
        let tiny = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(fit(&tiny, 16 * 1024), tiny);
        // a huge flat top level keeps its required properties
        let wide: Map<String, Value> = (0..3000)
            .map(|i| {
                (
                    format!("field_{i}"),
                    json!({"type": "string", "description": "A field of the form."}),
                )
            })
            .collect();
        let wide = json!({"type": "object", "properties": wide, "required": ["field_1"]});
        let small = fit(&wide, 16 * 1024);
        assert!(serde_json::to_string(&small).unwrap().len() <= 16 * 1024);
        assert!(small["properties"]["field_1"].is_object());
        assert!(small["description"]
            .as_str()
            .unwrap()
            .contains("optional properties are not listed"));
        // 400 required properties with descriptions: names and types stay (when even
        // they are over the budget they are served anyway: a call needs them)
        let many: Map<String, Value> = (0..400)
            .map(|i| (format!("f{i}"), json!({"type": "string", "description": "A required field of the big form, described at length here."})))
            .collect();
        let names: Vec<String> = many.keys().cloned().collect();
        let many = json!({"type": "object", "properties": many, "required": names});
        let small = fit(&many, 16 * 1024);
        assert!(
            serde_json::to_string(&small).unwrap().len() <= 16 * 1024,
            "{}",
            serde_json::to_string(&small).unwrap().len()
        );
        assert_eq!(small["properties"].as_object().unwrap().len(), 400);
    }

    #[test]
    fn unions_and_mixed_all_of_stay() {
        let body = json!({"allOf": [{"type": "string"}, {"minLength": 2}]});
        assert_eq!(merge_all_of(&body), body);
        let union = json!({"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]});
        assert_eq!(for_request(&union), union);
    }

    #[test]
    fn plain_object_detection() {
        assert!(is_plain_object(
            &json!({"type": "object", "properties": {}})
        ));
        assert!(!is_plain_object(&json!({"oneOf": []})));
        assert!(!is_plain_object(&json!({"type": "array"})));
    }
}
