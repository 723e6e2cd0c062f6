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
    let mut ctx = Ctx {
        stack: Vec::new(),
        budget: MAX_NODES,
    };
    inline_at(root, schema, &mut ctx)
}

/// Whether an inlining of `schema` stays within [`MAX_NODES`] (nothing was cut for size).
pub fn inlines_within_budget(root: &Value, schema: &Value) -> bool {
    let mut ctx = Ctx {
        stack: Vec::new(),
        budget: MAX_NODES,
    };
    inline_at(root, schema, &mut ctx);
    ctx.budget > 0
}

struct Ctx {
    /// The `$ref`s being expanded, outermost first.
    stack: Vec<String>,
    /// Schema objects still allowed.
    budget: usize,
}

fn inline_at(root: &Value, schema: &Value, stack: &mut Ctx) -> Value {
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
        } else if stack.budget == 0 {
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

/// Whether `v` (any JSON value) holds a `$ref` or an `x-` keyword anywhere outside
/// property-name maps. Used by tests and by authoring checks.
pub fn has_ref_or_extension(v: &Value) -> bool {
    fn walk(v: &Value, names: bool) -> bool {
        match v {
            Value::Object(m) => m.iter().any(|(k, sub)| {
                if !names && (k == "$ref" || k.starts_with("x-")) {
                    return true;
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
    fn unresolved_refs_are_cut() {
        let out = inline(&json!({}), &json!({"$ref": "other.json#/X"}));
        assert!(!has_ref_or_extension(&out));
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
