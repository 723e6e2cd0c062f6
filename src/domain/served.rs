//! What a client receives for a vendor tool, and what it costs in tokens (issue 29.1).
//!
//! [`definition`] is the one place that writes a tool version's MCP definition (SPEC §3.3;
//! MCP 2025-06-18 "Tools": `name`, `title`, `description`, `inputSchema`, `outputSchema`,
//! `annotations`): `mcp/` serves exactly this JSON in tools/list, and [`tokens`] counts it
//! with OpenAI's `o200k_base` BPE (tiktoken-rs, vocabulary compiled in), the unit a
//! model's context is measured in.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The tokenizer Graft counts with.
pub const TOKENIZER: &str = "o200k_base";

/// The fields of one tool version that its served definition is made of.
#[derive(Debug, Clone, Copy)]
pub struct Served<'a> {
    /// Vendor slug: the served name is `<vendor>__<name>`.
    pub vendor: &'a str,
    /// Tool name within the vendor.
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: &'a str,
    /// Input schema as stored (JSON text); unreadable text serves `{"type":"object"}`.
    pub input_schema: &'a str,
    /// Output schema as stored (JSON text), if any.
    pub output_schema: Option<&'a str>,
    /// readOnlyHint, destructiveHint, idempotentHint, openWorldHint.
    pub hints: [bool; 4],
}

/// An MCP tool definition (MCP 2025-06-18 "Tools"), its fields in the order MCP
/// servers write them (rmcp's `Tool`), so that its JSON text is byte for byte what a
/// client receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// `<vendor>__<name>`.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// The served input schema (an object).
    pub input_schema: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    pub annotations: Annotations,
}

/// MCP tool annotations, in the order MCP servers write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

/// The MCP tool definition of `t` (SPEC §3.3), its input schema fitted to `schema_budget`
/// bytes (issue 12.13: calls still validate against the full schema) and closed with
/// `additionalProperties: false` where Graft refuses undeclared inputs (issue 25.3) and
/// folding kept every declared property.
pub fn definition(t: &Served<'_>, schema_budget: usize) -> Definition {
    let input = match serde_json::from_str::<Value>(t.input_schema) {
        Ok(full) => {
            let mut served = super::schema::fit(&full, schema_budget);
            let count = |s: &Value| {
                s.get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.len())
            };
            if !super::schema::admits_undeclared(&full) && count(&served) == count(&full) {
                if let Value::Object(m) = &mut served {
                    m.insert("additionalProperties".into(), Value::Bool(false));
                }
            }
            match served {
                Value::Object(m) => Some(m),
                _ => None,
            }
        }
        Err(_) => None,
    };
    let bare = || {
        let mut m = Map::new();
        m.insert("type".into(), json!("object"));
        m
    };
    let [read_only_hint, destructive_hint, idempotent_hint, open_world_hint] = t.hints;
    Definition {
        name: format!("{}__{}", t.vendor, t.name),
        title: t.title.map(str::to_string),
        description: t.description.to_string(),
        input_schema: input.unwrap_or_else(bare),
        output_schema: match t
            .output_schema
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
        {
            Some(Value::Object(out)) => Some(out),
            _ => None,
        },
        annotations: Annotations {
            read_only_hint,
            destructive_hint,
            idempotent_hint,
            open_world_hint,
        },
    }
}

/// Tokens of `text` in [`TOKENIZER`] (special-token text counts as ordinary text).
pub fn count(text: &str) -> i64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as i64
}

/// Tokens of a served definition: [`count`] of its compact JSON, as a client receives it
/// in a tools/list result.
pub fn tokens(definition: &Definition) -> i64 {
    count(&serde_json::to_string(definition).unwrap_or_default())
}

/// What a stored count was computed on: the tokenizer and the schema budget. A count
/// with another basis is computed again.
pub fn basis(schema_budget: usize) -> String {
    format!("{TOKENIZER};schema_budget={schema_budget}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served<'a>(schema: &'a str) -> Served<'a> {
        Served {
            vendor: "acme",
            name: "get_thing",
            title: Some("Get a thing"),
            description: "Reads one thing by its id.",
            input_schema: schema,
            output_schema: None,
            hints: [true, false, true, true],
        }
    }

    #[test]
    fn a_definition_names_the_tool_and_closes_a_closed_schema() {
        let d = definition(
            &served(r#"{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}"#),
            16 << 10,
        );
        // the order MCP servers write
        let text = serde_json::to_string(&d).unwrap();
        assert!(text.starts_with(r#"{"name":"acme__get_thing","title":"Get a thing","description""#), "{text}");
        let d = serde_json::to_value(&d).unwrap();
        assert_eq!(d["name"], "acme__get_thing");
        assert_eq!(d["title"], "Get a thing");
        assert_eq!(d["inputSchema"]["additionalProperties"], false);
        assert_eq!(d["annotations"]["readOnlyHint"], true);
        assert_eq!(d["annotations"]["destructiveHint"], false);
        assert!(d.get("outputSchema").is_none());
    }

    #[test]
    fn an_unreadable_schema_serves_a_bare_object() {
        assert_eq!(
            Value::Object(definition(&served("not json"), 16 << 10).input_schema),
            json!({"type": "object"})
        );
    }

    #[test]
    fn tokens_grow_with_the_text_and_match_the_tokenizer() {
        let short = definition(&served(r#"{"type":"object"}"#), 16 << 10);
        let mut long = short.clone();
        long.description = "Reads one thing by its id. ".repeat(50);
        assert!(tokens(&long) > tokens(&short) + 100);
        let direct = tiktoken_rs::o200k_base()
            .expect("bundled vocabulary")
            .encode_with_special_tokens(&serde_json::to_string(&short).unwrap())
            .len() as i64;
        assert_eq!(tokens(&short), direct);
        assert_eq!(count(""), 0);
    }
}
