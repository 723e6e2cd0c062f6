//! Enrichment (SPEC §3.4): the search text of one tool version or one operation of a
//! stored document, computed once when the version is made (import, acquire, publish)
//! and stored with it, so that the words an agent uses meet the document's words.

use super::text::{number_forms, plain_text, words};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool's search text by field; each field is plain space-separated words (not yet
/// stemmed: stemming happens when the index is built, so a stemmer change needs no
/// migration). Stored as JSON in `tool_versions.search_text`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchText {
    /// Words of the tool name and the operationId (`reposCreateWebhook` → repos create
    /// webhook).
    #[serde(default)]
    pub name: String,
    /// The operation's summary (or the tool's title).
    #[serde(default)]
    pub summary: String,
    /// The operation's tags.
    #[serde(default)]
    pub tags: String,
    /// Path segments as words, singular and plural, placeholders dropped.
    #[serde(default)]
    pub path: String,
    /// Verbs an agent would use for the method (`GET` on a collection: list, find,
    /// search, get; on an item: get, read, show, fetch; …).
    #[serde(default)]
    pub verbs: String,
    /// Parameter (input property) names as words.
    #[serde(default)]
    pub params: String,
    /// The description as plain text (Markdown and HTML reduced).
    #[serde(default)]
    pub description: String,
}

/// What enrichment reads of a tool version or an operation.
#[derive(Debug, Clone, Copy)]
pub struct EnrichInput<'a> {
    /// Tool name (`repos_create_webhook`).
    pub name: &'a str,
    /// The OpenAPI operationId, when there is one.
    pub operation_id: Option<&'a str>,
    /// HTTP method, any case.
    pub method: &'a str,
    /// Path template (`/repos/{owner}/{repo}/hooks`).
    pub path: &'a str,
    /// Summary or title.
    pub summary: Option<&'a str>,
    /// Description (Markdown or HTML allowed).
    pub description: &'a str,
    pub tags: &'a [String],
    /// The input schema (`{"type":"object","properties":{…}}`): its property names are
    /// the parameter names; a `body` object's properties count too.
    pub input_schema: Option<&'a Value>,
}

/// Verbs an agent uses for a method on a collection or on one item (issue 10).
pub fn method_verbs(method: &str, on_item: bool) -> &'static [&'static str] {
    match (method.to_ascii_uppercase().as_str(), on_item) {
        ("GET", false) => &["list", "find", "search", "get"],
        ("GET", true) => &["get", "read", "show", "fetch"],
        ("POST", _) => &["create", "add", "new", "send", "make"],
        ("PUT" | "PATCH", _) => &["update", "edit", "change", "set"],
        ("DELETE", _) => &["delete", "remove", "cancel"],
        ("HEAD", _) => &["check", "exists"],
        _ => &[],
    }
}

/// Whether a path addresses one item: its last segment is a placeholder (`/pets/{id}`).
fn on_item(path: &str) -> bool {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .is_some_and(|s| s.starts_with('{') && s.ends_with('}'))
}

/// Computes the search text (see [`SearchText`]'s fields).
pub fn enrich(input: &EnrichInput<'_>) -> SearchText {
    let mut name_words = words(input.name);
    if let Some(op) = input.operation_id {
        for w in words(op) {
            if !name_words.contains(&w) {
                name_words.push(w);
            }
        }
    }
    let mut path_words: Vec<String> = Vec::new();
    for segment in input.path.split('/') {
        if segment.is_empty() || segment.contains('{') {
            continue;
        }
        for w in words(segment) {
            for form in number_forms(&w) {
                if !path_words.contains(&form) {
                    path_words.push(form);
                }
            }
        }
    }
    let mut params: Vec<String> = Vec::new();
    if let Some(props) = input
        .input_schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        let nested = props
            .get("body")
            .and_then(|b| b.get("properties"))
            .and_then(Value::as_object);
        for key in props
            .keys()
            .chain(nested.into_iter().flat_map(|m| m.keys()))
        {
            for w in words(key) {
                if !params.contains(&w) {
                    params.push(w);
                }
            }
        }
    }
    let description = plain_text(input.description);
    let summary = input
        .summary
        .map(plain_text)
        .filter(|s| !s.is_empty())
        .unwrap_or_default();
    SearchText {
        name: name_words.join(" "),
        summary,
        tags: input
            .tags
            .iter()
            .map(|t| words(t).join(" "))
            .collect::<Vec<_>>()
            .join(" "),
        path: path_words.join(" "),
        verbs: method_verbs(input.method, on_item(input.path)).join(" "),
        params: params.join(" "),
        description,
    }
}

/// How much of a description search reads (characters): the first 2,000, as when
/// imports stored descriptions at that length, so that storing more changed no ranking.
pub const MAX_INDEXED_DESCRIPTION: usize = 2000;

/// The search text of a tool version: its `title` is the summary (an authored tool
/// without one takes the description's first sentence), and a description that repeats
/// the summary at its start (as imports write it) is read without the repeat.
#[allow(clippy::too_many_arguments)]
pub fn enrich_version(
    name: &str,
    operation_id: Option<&str>,
    title: Option<&str>,
    description: &str,
    method: &str,
    path: &str,
    tags: &[String],
    input_schema: Option<&Value>,
) -> SearchText {
    let description = &super::text::truncate_chars(description, MAX_INDEXED_DESCRIPTION);
    let first;
    let summary = match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => Some(t),
        None => {
            first = super::text::first_sentence(&plain_text(description), 200);
            (!first.is_empty()).then_some(first.as_str())
        }
    };
    let rest = title
        .and_then(|t| description.trim_start().strip_prefix(t.trim()))
        .unwrap_or(description);
    enrich(&EnrichInput {
        name,
        operation_id,
        method,
        path,
        summary,
        description: rest,
        tags,
        input_schema,
    })
}

/// The search text of a tool draft (import, acquire, publish).
pub fn enrich_draft(d: &crate::domain::tool::ToolDraft) -> SearchText {
    enrich_version(
        &d.name,
        d.operation_id.as_deref(),
        d.title.as_deref(),
        &d.description,
        &d.method,
        &d.path_template,
        &d.tags,
        Some(&d.input_schema),
    )
}

impl SearchText {
    /// The short plain-text description a hit shows (SPEC §3.4): the first sentence of
    /// the summary, else of the description, at most `max` characters.
    pub fn short(&self, max: usize) -> String {
        let source = if self.summary.is_empty() {
            &self.description
        } else {
            &self.summary
        };
        super::text::first_sentence(source, max)
    }

    /// The text a sentence-embedding model reads for this tool: what it does in a few
    /// words (the vendor, the summary — else the description's first sentence — and the
    /// name's words), at most `max_chars`. Short on purpose: a static model averages its
    /// tokens, and a description's notes (plans, pagination, deprecation) drown what the
    /// operation does (measured on the development set).
    pub fn embedding_text(&self, vendor: &str, max_chars: usize) -> String {
        let what = if self.summary.is_empty() {
            super::text::first_sentence(&self.description, 160)
        } else {
            self.summary.clone()
        };
        let text = format!("{vendor}: {what} ({})", self.name);
        text.chars().take(max_chars).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operation_ids_paths_and_methods_become_words() {
        let schema = json!({"type": "object", "properties": {"owner": {}, "repo": {}, "body": {"type": "object", "properties": {"contentType": {}}}}});
        let t = enrich(&EnrichInput {
            name: "repos_create_webhook",
            operation_id: Some("repos/create-webhook"),
            method: "post",
            path: "/repos/{owner}/{repo}/hooks",
            summary: Some("Create a repository webhook"),
            description:
                "Repositories can have multiple webhooks <b>installed</b>. See [docs](https://x.y).",
            tags: &["repos".to_string()],
            input_schema: Some(&schema),
        });
        assert_eq!(t.name, "repos create webhook");
        assert_eq!(t.path, "repos repo hooks hook");
        assert_eq!(t.verbs, "create add new send make");
        assert_eq!(t.params, "body owner repo content type");
        assert_eq!(t.summary, "Create a repository webhook.");
        assert_eq!(
            t.description,
            "Repositories can have multiple webhooks installed. See docs."
        );
        assert_eq!(t.tags, "repos");
    }

    #[test]
    fn get_on_an_item_and_on_a_collection_differ() {
        assert_eq!(method_verbs("GET", on_item("/pets/{petId}"))[0], "get");
        assert!(method_verbs("GET", on_item("/pets")).contains(&"list"));
        assert!(method_verbs("delete", true).contains(&"remove"));
        assert!(method_verbs("PATCH", true).contains(&"edit"));
    }

    #[test]
    fn the_short_description_is_one_plain_sentence() {
        let t = enrich(&EnrichInput {
            name: "x",
            operation_id: None,
            method: "GET",
            path: "/x",
            summary: None,
            description: "**Lists** things. And more.",
            tags: &[],
            input_schema: None,
        });
        assert_eq!(t.short(160), "Lists things.");
    }
}
