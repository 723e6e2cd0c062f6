//! The schema a client is served within a byte budget (issue 12.13): `$`-named
//! properties dropped, then long extras, deep structure and optional properties cut,
//! step by step, while the schema is over budget.

use super::inline::{NAME_MAPS, SUB_SCHEMA, SUB_SCHEMAS};
use serde_json::{Map, Value};

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
