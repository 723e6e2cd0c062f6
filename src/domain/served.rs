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

/// Longest description Graft serves, in characters: Claude Code cuts tool descriptions
/// at 2,048 without saying so (CLIENTS.md; issue 29.4).
pub const DESCRIPTION_CHARS: usize = 2048;

/// The served format's version: a change to what [`definition`] writes counts every
/// tool again.
const SERVED_FORMAT: u32 = 3;

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
    /// The version's binding (JSON text): an MCP vendor's tool serves the `icons` and
    /// `_meta` its server gave ([`super::tool::Upstream`]).
    pub binding: &'a str,
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
    /// An MCP vendor's tool's icons, as its server gave them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// An MCP vendor's tool's `_meta`, as its server gave it.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
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
    // only an MCP vendor's tool has more to serve: other bindings are not read again
    let upstream = t
        .binding
        .contains("\"upstream\"")
        .then(|| serde_json::from_str::<super::tool::Binding>(t.binding).ok())
        .flatten()
        .and_then(|b| b.upstream)
        .unwrap_or_default();
    let input_schema = input.unwrap_or_else(bare);
    let required: Vec<&str> = input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Definition {
        name: format!("{}__{}", t.vendor, t.name),
        title: t.title.map(str::to_string),
        description: description(t.description, t.vendor, &required),
        input_schema,
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
        icons: upstream.icons,
        meta: upstream.meta,
    }
}

/// A description as served: as written when it has at most [`DESCRIPTION_CHARS`]
/// characters; else the essentials first (what the tool does, its vendor, its required
/// inputs), then as much of the text as fits, and a note that Graft cut it.
pub fn description(text: &str, vendor: &str, required: &[&str]) -> String {
    let n = text.chars().count();
    if n <= DESCRIPTION_CHARS {
        return text.to_string();
    }
    let what = super::search::text::first_sentence(&super::search::text::plain_text(text), 300);
    let inputs = if required.is_empty() {
        String::new()
    } else {
        format!(" Required inputs: {}.", required.join(", "))
    };
    let head = format!("{what} Vendor: {vendor}.{inputs}\n\n");
    let note = format!(
        "… [cut by Graft from {} characters to the {} clients show; a person can read the whole text in Graft's console]",
        crate::numbers::grouped(n as i64),
        crate::numbers::grouped(DESCRIPTION_CHARS as i64)
    );
    let room = DESCRIPTION_CHARS.saturating_sub(head.chars().count() + note.chars().count());
    let body: String = text.chars().take(room).collect();
    let out = format!("{head}{body}{note}");
    // a head that alone is too long (hundreds of required inputs) is cut too
    if out.chars().count() > DESCRIPTION_CHARS {
        let keep = DESCRIPTION_CHARS - note.chars().count();
        return format!("{}{note}", out.chars().take(keep).collect::<String>());
    }
    out
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

/// `text` cut to at most `keep` tokens (o200k_base) at a character boundary when it
/// has more than `over`, with the number of tokens the whole text has; `None` when it
/// has `over` or fewer.
pub fn cut_to_tokens(text: &str, over: usize, keep: usize) -> Option<(String, usize)> {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let tokens = bpe.encode_ordinary(text);
    if tokens.len() <= over {
        return None;
    }
    // the tokens of an ordinary encoding are the text's bytes in order
    let mut end = bpe
        .decode_bytes(&tokens[..keep.min(tokens.len())])
        .map_or(0, |b| b.len())
        .min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some((text[..end].to_string(), tokens.len()))
}

/// What a stored count was computed on: the tokenizer and the schema budget. A count
/// with another basis is computed again.
pub fn basis(schema_budget: usize) -> String {
    format!("{TOKENIZER};schema_budget={schema_budget};served={SERVED_FORMAT}")
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
            binding: "{}",
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
        assert!(
            text.starts_with(r#"{"name":"acme__get_thing","title":"Get a thing","description""#),
            "{text}"
        );
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

    #[test]
    fn a_long_description_is_served_under_2048_characters_with_the_essentials_first() {
        let short = "Reads one thing.";
        assert_eq!(description(short, "acme", &["id"]), short);
        let long = format!(
            "Creates an envelope and sends it for signature. {}",
            "Details about recipients, tabs and documents follow here. ".repeat(90)
        );
        assert!(long.chars().count() > 5000);
        let d = description(&long, "docusign", &["accountId", "envelopeDefinition"]);
        assert!(
            d.chars().count() <= DESCRIPTION_CHARS,
            "{}",
            d.chars().count()
        );
        assert!(d.starts_with("Creates an envelope and sends it for signature. Vendor: docusign. Required inputs: accountId, envelopeDefinition."), "{d}");
        assert!(
            d.ends_with("a person can read the whole text in Graft's console]"),
            "{d}"
        );
        assert!(d.contains(&format!(
            "cut by Graft from {} characters to the 2,048 clients show",
            crate::numbers::grouped(long.chars().count() as i64)
        )));
        let many: Vec<String> = (0..500).map(|i| format!("field_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(description(&long, "docusign", &many).chars().count() <= DESCRIPTION_CHARS);
    }

    #[test]
    fn a_text_is_cut_to_its_token_budget_at_a_character() {
        let text = "Ünïcödé words and more words, ".repeat(400);
        let total = count(&text) as usize;
        assert!(cut_to_tokens(&text, total, 500).is_none());
        let (cut, all) = cut_to_tokens(&text, total - 1, 500).unwrap();
        assert_eq!(all, total);
        assert!(count(&cut) <= 500 && count(&cut) >= 490, "{}", count(&cut));
        assert!(text.starts_with(&cut));
    }
}
