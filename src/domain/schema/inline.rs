//! Inlining (SPEC §3.4): every `$ref` resolved into the schema (cycles, depth and size
//! cut to a budget), `x-*` keys dropped, and OpenAPI-only keywords turned into JSON
//! Schema 2020-12; also the keyword vocabulary the other passes walk by.

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
pub(super) const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is one schema.
pub(super) const SUB_SCHEMA: &[&str] = &[
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
pub(super) const SUB_SCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

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
}
