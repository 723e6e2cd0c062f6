//! A tool's input (SPEC §3.5, issue 12.1, 12.2, 25.3, 25.10): the validators inputs are
//! checked with (`pattern`s bounded), request-body schemas made fit for an agent
//! (`allOf` merged, `readOnly` dropped), undeclared properties, and integral floats
//! written as the integers they are.

use super::inline::{NAME_MAPS, SUB_SCHEMA, SUB_SCHEMAS};
use serde_json::{Map, Value};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::schema::inline;
    use serde_json::json;

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
