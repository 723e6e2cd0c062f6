//! The tool page's "Try it" form (issue 28.10): one field per top-level property of a
//! tool's input schema (JSON Schema 2020-12 `properties`), and the input an agent would
//! send, read back from what the person typed. Pure.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Fields a form offers at most; a wider schema is tried as one JSON object.
pub const MAX_FIELDS: usize = 40;

/// How a property is typed in the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// `type: string`: a text field, sent as typed.
    Text,
    /// `type: integer`: sent as a JSON integer.
    Integer,
    /// `type: number`: sent as a JSON number.
    Number,
    /// `type: boolean`: true or false.
    Boolean,
    /// `enum` of strings: one of them.
    Choice,
    /// Anything else (objects, arrays, unions): JSON text.
    Json,
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormField {
    /// The property's name.
    pub name: String,
    /// How it is typed.
    pub kind: FieldKind,
    /// Whether the schema requires it.
    pub required: bool,
    /// The property's description, when it has one.
    pub description: Option<String>,
    /// The choices of a [`FieldKind::Choice`].
    pub options: Vec<String>,
    /// Whether the schema marks it as a secret: `format: password` (OpenAPI 3.0 §4.4)
    /// or `writeOnly: true` (JSON Schema 2020-12 validation §9.4).
    pub secret: bool,
}

/// The form of `schema` (an object schema): its properties by name, required ones
/// first; empty when it has none or more than [`MAX_FIELDS`]. A property named `""` has
/// no field (the form's whole-input field takes that name).
pub fn form_fields(schema: &Value) -> Vec<FormField> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
    if props.len() > MAX_FIELDS {
        return vec![];
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<FormField> = props
        .iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, p)| {
            let options: Vec<String> = p
                .get("enum")
                .and_then(Value::as_array)
                .filter(|e| e.iter().all(Value::is_string))
                .map(|e| {
                    e.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let ty = match p.get("type") {
                Some(Value::String(t)) => Some(t.as_str()),
                // `["string", "null"]`: the one that is not null
                Some(Value::Array(ts)) => {
                    let mut named = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
                    match (named.next(), named.next()) {
                        (Some(t), None) => Some(t),
                        _ => None,
                    }
                }
                _ => None,
            };
            let kind = match ty {
                _ if !options.is_empty() => FieldKind::Choice,
                Some("string") => FieldKind::Text,
                Some("integer") => FieldKind::Integer,
                Some("number") => FieldKind::Number,
                Some("boolean") => FieldKind::Boolean,
                _ => FieldKind::Json,
            };
            FormField {
                name: name.clone(),
                kind,
                required: required.contains(&name.as_str()),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                options,
                secret: marked_secret(p),
            }
        })
        .collect();
    fields.sort_by_key(|f| !f.required);
    fields
}

/// Whether a property's schema marks it secret: `format: password` (OpenAPI 3.0 §4.4)
/// or `writeOnly: true` (JSON Schema 2020-12 validation §9.4).
fn marked_secret(property: &Value) -> bool {
    property.get("format").and_then(Value::as_str) == Some("password")
        || property.get("writeOnly").and_then(Value::as_bool) == Some(true)
}

/// The top-level properties of `schema` it marks secret (see [`FormField::secret`]),
/// however many properties it has.
pub fn secret_properties(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter(|(_, p)| marked_secret(p))
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `schema` (a property's schema) names a property anywhere below it that
/// `secret_name` says is secret, or marks one secret: a JSON value of it may hold one.
pub fn may_hold_secret(schema: &Value, secret_name: &dyn Fn(&str) -> bool) -> bool {
    match schema {
        Value::Object(m) => {
            let here = m
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|props| {
                    props
                        .iter()
                        .any(|(name, p)| secret_name(name) || marked_secret(p))
                });
            here || m.values().any(|v| may_hold_secret(v, secret_name))
        }
        Value::Array(items) => items.iter().any(|v| may_hold_secret(v, secret_name)),
        _ => false,
    }
}

/// The input an agent would send, from the form's values by field name: an empty value
/// is left out; a number, a boolean and JSON are parsed. Errors: `(field, message)` for
/// a value that is not of its field's kind (quoting the value, unless the field is
/// [`FormField::secret`] or JSON). Values of unknown names are ignored.
pub fn input_from_form(
    fields: &[FormField],
    values: &BTreeMap<String, String>,
) -> Result<Value, (String, String)> {
    let mut input = Map::new();
    for f in fields {
        let Some(raw) = values
            .get(&f.name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
        else {
            continue;
        };
        // a secret's value is not quoted back, nor JSON (which may hold one)
        let bad = |what: &str| {
            let shown = match f.secret || f.kind == FieldKind::Json {
                true => "the value".to_string(),
                false => format!("{:?}", crate::domain::openapi::truncate_chars(raw, 60)),
            };
            (f.name.clone(), format!("{shown} is not {what}"))
        };
        let value = match f.kind {
            FieldKind::Text | FieldKind::Choice => Value::String(values[&f.name].clone()),
            FieldKind::Integer => integer(raw).map(Value::from).ok_or_else(|| {
                if !raw.is_empty()
                    && raw
                        .trim_start_matches('-')
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                {
                    bad("an integer Graft can send (from -2^63 to 2^63-1)")
                } else {
                    bad("an integer")
                }
            })?,
            FieldKind::Number => raw
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| bad("a number"))?,
            FieldKind::Boolean => match raw {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(bad("true or false")),
            },
            FieldKind::Json => serde_json::from_str(raw).map_err(|_| bad("JSON"))?,
        };
        input.insert(f.name.clone(), value);
    }
    Ok(Value::Object(input))
}

/// An integer as JSON Schema counts one (a number with no fractional part, 2020-12
/// §6.1.1): `42`, `-7`, and also `1e3` or `10.0`, exactly, within ±2^53 for the latter
/// forms (what a double holds exactly). `None` for anything else.
fn integer(raw: &str) -> Option<i64> {
    if let Ok(n) = raw.parse::<i64>() {
        return Some(n);
    }
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    let f = raw.parse::<f64>().ok()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= EXACT).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_integer_may_be_written_as_json_schema_counts_one() {
        for (raw, n) in [
            ("42", Some(42)),
            ("-7", Some(-7)),
            ("1e3", Some(1000)),
            ("10.0", Some(10)),
        ] {
            assert_eq!(integer(raw), n, "{raw}");
        }
        for raw in ["1.5", "1e300", "NaN", "inf", "ten", ""] {
            assert_eq!(integer(raw), None, "{raw}");
        }
    }

    #[test]
    fn fields_follow_the_schema_and_values_come_back_typed() {
        let schema = json!({
            "type": "object",
            "required": ["id"],
            "properties": {
                "verbose": {"type": "boolean"},
                "id": {"type": "string", "description": "the item"},
                "limit": {"type": "integer"},
                "ratio": {"type": ["number", "null"]},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "pass": {"type": "string", "format": "password"},
                "key": {"type": "string", "writeOnly": true}
            }
        });
        let fields = form_fields(&schema);
        let kinds: Vec<(&str, FieldKind, bool)> = fields
            .iter()
            .map(|f| (f.name.as_str(), f.kind, f.required))
            .collect();
        assert_eq!(kinds[0], ("id", FieldKind::Text, true));
        let mut secret: Vec<&str> = fields
            .iter()
            .filter(|f| f.secret)
            .map(|f| f.name.as_str())
            .collect();
        secret.sort();
        assert_eq!(secret, ["key", "pass"]);
        for want in [
            ("verbose", FieldKind::Boolean, false),
            ("limit", FieldKind::Integer, false),
            ("ratio", FieldKind::Number, false),
            ("state", FieldKind::Choice, false),
            ("tags", FieldKind::Json, false),
        ] {
            assert!(kinds.contains(&want), "{want:?} in {kinds:?}");
        }
        let values: BTreeMap<String, String> = [
            ("id", " 42 "),
            ("limit", "10"),
            ("ratio", "0.5"),
            ("verbose", "true"),
            ("state", "open"),
            ("tags", r#"["a"]"#),
            ("unknown", "x"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        assert_eq!(
            input_from_form(&fields, &values).unwrap(),
            json!({"id": " 42 ", "limit": 10, "ratio": 0.5, "verbose": true, "state": "open", "tags": ["a"]})
        );
        for (field, value) in [
            ("limit", "ten"),
            ("ratio", "NaN"),
            ("verbose", "yes"),
            ("tags", "[oops"),
        ] {
            let values: BTreeMap<String, String> = [(field.to_string(), value.to_string())].into();
            let (at, _) = input_from_form(&fields, &values).unwrap_err();
            assert_eq!(at, field);
        }
        // past 64 bits: said so, not "not an integer"
        let huge: BTreeMap<String, String> =
            [("limit".to_string(), "-99999999999999999999".to_string())].into();
        let (at, message) = input_from_form(&fields, &huge).unwrap_err();
        assert_eq!(at, "limit");
        assert!(
            message.contains("is not an integer Graft can send (from -2^63 to 2^63-1)"),
            "{message}"
        );
        // a secret's value is not quoted back
        let mut secret_limit = fields.clone();
        secret_limit
            .iter_mut()
            .for_each(|f| f.secret = f.name == "limit");
        let typed: BTreeMap<String, String> = [("limit".to_string(), "s3cr3t".to_string())].into();
        let (_, message) = input_from_form(&secret_limit, &typed).unwrap_err();
        assert_eq!(message, "the value is not an integer");
        assert!(
            may_hold_secret(&schema, &|n| n == "nobody"),
            "pass is marked"
        );
        let nested = json!({"properties": {"settings": {"type": "object",
            "properties": {"region": {"type": "string"}, "api_key": {"type": "string"}}}}});
        assert!(may_hold_secret(&nested["properties"]["settings"], &|n| n == "api_key"));
        assert!(!may_hold_secret(
            &json!({"type": "array", "items": {"type": "string"}}),
            &|_| true
        ));
        let mut marked = secret_properties(&schema);
        marked.sort();
        assert_eq!(marked, ["key", "pass"]);
        let empty: BTreeMap<String, String> = [("id".to_string(), "  ".to_string())].into();
        assert_eq!(input_from_form(&fields, &empty).unwrap(), json!({}));
        assert!(form_fields(&json!({"type": "object"})).is_empty());
    }
}
