//! MCP servers as vendors (SPEC §10.2, issue 27): what an upstream server's `tools/list`
//! becomes in the toolbox, and how its server is named. Pure: the service reads the
//! upstream (`proxy::mcp`) and stores the drafts planned here.
//!
//! An MCP vendor's tool is stored as any tool version is (SPEC §2 `tool_versions`), with
//! method [`MCP_METHOD`], the upstream tool's name as its path template and its
//! operationId (so a re-read finds it and a name gone from the list retires it), the
//! inlined input schema, the output schema and annotations as the server gave them, and
//! the server's `_meta` and `icons` in its binding ([`crate::domain::tool::Upstream`]).

use super::names::{tool_name_for, VendorSlug};
use super::tool::{Binding, Hints, ToolDraft, Upstream};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// The method an MCP vendor's tool versions carry: its calls are MCP `tools/call`s, not
/// HTTP requests. The write rule reads it as it reads GET: a read when readOnlyHint is
/// true ([`crate::domain::approval::writes`]).
pub const MCP_METHOD: &str = "MCP";

/// The most tools one upstream list may bring (a server listing more is cut, and the
/// report says so): the toolbox of one vendor stays within what an import handles.
pub const MAX_UPSTREAM_TOOLS: usize = 5_000;

/// Longest stored `_meta` or `icons` of one tool, in bytes of JSON; a larger one is
/// dropped (every agent holding the tool pays for it in tokens).
pub const MAX_META_BYTES: usize = 8 * 1024;

/// One entry of an upstream `tools/list` result (MCP 2025-11-25 server/tools, "Tool"),
/// read from its JSON.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamTool {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: Option<UpstreamAnnotations>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
    #[serde(default)]
    pub icons: Option<Value>,
}

/// An upstream tool's annotations (MCP 2025-11-25 "ToolAnnotations"): every field is
/// optional, and what is missing takes MCP's default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamAnnotations {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub read_only_hint: Option<bool>,
    #[serde(default)]
    pub destructive_hint: Option<bool>,
    #[serde(default)]
    pub idempotent_hint: Option<bool>,
    #[serde(default)]
    pub open_world_hint: Option<bool>,
}

impl UpstreamTool {
    /// The tool's hints, MCP's defaults where the server is silent (readOnlyHint false,
    /// destructiveHint true, idempotentHint false, openWorldHint true): a tool that does
    /// not say it only reads is a write and asks a person first (SPEC §10.2).
    pub fn hints(&self) -> Hints {
        let a = self.annotations.clone().unwrap_or_default();
        let read_only_hint = a.read_only_hint.unwrap_or(false);
        Hints {
            read_only_hint,
            // destructiveHint and idempotentHint mean something only for a write
            destructive_hint: !read_only_hint && a.destructive_hint.unwrap_or(true),
            idempotent_hint: read_only_hint || a.idempotent_hint.unwrap_or(false),
            open_world_hint: a.open_world_hint.unwrap_or(true),
        }
    }
}

/// What a `tools/list` of an MCP vendor's server plans for its toolbox (the shape of an
/// OpenAPI import's plan, so one sync stores both).
#[derive(Debug, Clone, Default)]
pub struct ListPlan {
    /// Tools the vendor does not have yet.
    pub tools: Vec<ToolDraft>,
    /// Tools the vendor has (found by their upstream name), as the server lists them now.
    pub existing: Vec<ToolDraft>,
    /// `(upstream name, why)` of listed tools Graft cannot serve.
    pub skipped: Vec<(String, String)>,
    /// `(upstream name, tool name)` where the tool name is not the upstream's in snake
    /// case (shortened to fit 52 characters, or taken).
    pub renamed: Vec<(String, String)>,
    /// Entries in the list.
    pub total: usize,
}

/// Plans the tools of `vendor` from its server's `tools/list` entries (all pages, as
/// JSON). `known` maps the upstream names of the vendor's tools to their tool names (a
/// known name keeps its tool); `taken` says which other tool names exist. New names are
/// the upstream name in snake case, shortened deterministically past 52 characters with
/// the vendor (SPEC §2), and made unique in list order. Entries that are not tools, that
/// repeat a name, or whose input schema Graft cannot serve ([`served_input`]) are
/// skipped with a reason; the list is cut at [`MAX_UPSTREAM_TOOLS`].
pub fn plan_list(
    vendor: &VendorSlug,
    listed: &[Value],
    known: &HashMap<String, String>,
    taken: &dyn Fn(&str) -> bool,
) -> ListPlan {
    let mut plan = ListPlan {
        total: listed.len(),
        ..Default::default()
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut named: HashSet<String> = HashSet::new();
    for (i, entry) in listed.iter().enumerate() {
        let tool: UpstreamTool = match serde_json::from_value(entry.clone()) {
            Ok(t) => t,
            Err(e) => {
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("entry {}", i + 1), str::to_string);
                plan.skipped
                    .push((name, format!("not a tool definition: {e}")));
                continue;
            }
        };
        if i >= MAX_UPSTREAM_TOOLS {
            plan.skipped.push((
                tool.name.clone(),
                format!("the server lists more than {MAX_UPSTREAM_TOOLS} tools"),
            ));
            continue;
        }
        // what a person reads of the name (approvals, dry runs) is what it is: no
        // control, invisible or reordering character (MCP 2025-11-25 "Tool names": A-Z,
        // a-z, 0-9, `_`, `-`, `.`; other printable characters are taken)
        if tool.name.chars().any(|c| {
            c.is_control()
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
        }) {
            plan.skipped.push((
                crate::domain::markup::visible(&tool.name),
                "its name holds control or invisible characters".into(),
            ));
            continue;
        }
        if tool.name.is_empty() || tool.name.chars().count() > 128 {
            plan.skipped.push((
                crate::domain::search::text::truncate_chars(&tool.name, 128),
                "a tool name has 1 to 128 characters (MCP 2025-11-25 \"Tool names\")".into(),
            ));
            continue;
        }
        if !seen.insert(tool.name.clone()) {
            plan.skipped
                .push((tool.name.clone(), "the server lists this name twice".into()));
            continue;
        }
        let draft = match draft(&tool) {
            Ok(d) => d,
            Err(why) => {
                plan.skipped.push((tool.name.clone(), why));
                continue;
            }
        };
        match known.get(&tool.name) {
            Some(name) => {
                named.insert(name.clone());
                plan.existing.push(ToolDraft {
                    name: name.clone(),
                    ..draft
                });
            }
            None => {
                let (name, renamed) =
                    tool_name_for(vendor, &tool.name, &|n| taken(n) || named.contains(n));
                let name = name.to_string();
                named.insert(name.clone());
                if renamed || name != tool.name {
                    plan.renamed.push((tool.name.clone(), name.clone()));
                }
                plan.tools.push(ToolDraft { name, ..draft });
            }
        }
    }
    plan
}

/// The draft of one upstream tool, its name left empty for [`plan_list`] to give.
/// Errors: why Graft cannot serve its input schema.
fn draft(tool: &UpstreamTool) -> Result<ToolDraft, String> {
    let input_schema = served_input(&tool.input_schema)?;
    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .map(|t| crate::domain::search::text::truncate_chars(t.trim(), 200))
        .filter(|t| !t.is_empty());
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .or_else(|| title.clone())
        .unwrap_or_else(|| format!("The tool {} of an MCP server.", tool.name));
    let small = |v: &Value| v.to_string().len() <= MAX_META_BYTES;
    // `_meta` is an object, `icons` an array of `{src, …}` (MCP 2025-11-25 "Icon"):
    // anything else would not read as a tool on the agent's side
    let meta = tool.meta.clone().filter(|m| m.is_object() && small(m));
    let icons = tool.icons.clone().filter(|i| {
        small(i)
            && i.as_array().is_some_and(|a| {
                a.iter()
                    .all(|icon| icon.get("src").is_some_and(Value::is_string))
            })
    });
    let output_schema = tool
        .output_schema
        .clone()
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("object"));
    Ok(ToolDraft {
        name: String::new(),
        operation_id: Some(tool.name.clone()),
        title,
        description: crate::domain::search::text::truncate_chars(
            &description,
            crate::domain::openapi::MAX_DESCRIPTION,
        ),
        input_schema,
        output_schema,
        method: MCP_METHOD.to_string(),
        path_template: tool.name.clone(),
        binding: Binding {
            upstream: Some(Upstream { meta, icons }),
            ..Default::default()
        },
        hints: tool.hints(),
        tags: Vec::new(),
    })
}

/// An upstream input schema as Graft serves it (SPEC §3.4): `$ref`s inlined against the
/// schema itself (`$defs` dropped), a root `{"type": "object", "properties": {…}}`.
/// Errors: not a JSON object, larger than [`crate::domain::authoring::MAX_SCHEMA_BYTES`]
/// (or [`crate::domain::authoring::MAX_INLINED_BYTES`] once inlined), a reference outside
/// the schema, not JSON Schema, patterns Graft cannot match in linear time, a root that
/// is not an object or is a union (several clients drop a server for one such tool), or
/// a property name not every client accepts. The arguments go to the server unchanged,
/// so nothing is renamed or wrapped.
pub fn served_input(schema: &Value) -> Result<Value, String> {
    use crate::domain::authoring::{MAX_INLINED_BYTES, MAX_SCHEMA_BYTES};
    use crate::domain::schema;
    let schema = match schema {
        Value::Object(m) if m.is_empty() => json!({"type": "object"}),
        Value::Object(_) => schema.clone(),
        Value::Null => json!({"type": "object"}),
        _ => return Err("its inputSchema is not a JSON object".into()),
    };
    if schema.to_string().len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its inputSchema is larger than {} KiB",
            MAX_SCHEMA_BYTES / 1024
        ));
    }
    if !schema::inlines_within_budget(&schema, &schema) {
        return Err("its inputSchema grows too large once its $refs are inlined".into());
    }
    let mut inlined = schema::inline(&schema, &schema);
    if let Value::Object(m) = &mut inlined {
        m.remove("$defs");
        m.remove("definitions");
    }
    if inlined.to_string().len() > MAX_INLINED_BYTES {
        return Err(format!(
            "its inputSchema is larger than {} KiB once its $refs are inlined",
            MAX_INLINED_BYTES / 1024
        ));
    }
    if contains_ref(&inlined) {
        return Err("its inputSchema has a $ref that does not resolve inside it".into());
    }
    if let Err(e) = schema::linear_validator(&inlined) {
        return Err(format!(
            "its inputSchema does not compile: {e} (patterns may not use backreferences or lookaround, which Graft cannot match in linear time)"
        ));
    }
    let Value::Object(mut root) = inlined else {
        return Err("its inputSchema is not a JSON object".into());
    };
    match root.get("type") {
        None => {
            root.insert("type".into(), json!("object"));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "its inputSchema's root has type {other}, not \"object\" (MCP tools take an object)"
            ))
        }
    }
    for k in ["oneOf", "anyOf", "allOf", "not", "if"] {
        if root.contains_key(k) {
            return Err(format!(
                "its inputSchema has {k:?} at its root, which several MCP clients refuse (Graft serves no such tool)"
            ));
        }
    }
    if !root.get("properties").is_some_and(Value::is_object) {
        root.insert("properties".into(), Value::Object(Map::new()));
    }
    if let Some(bad) = root["properties"].as_object().and_then(|p| {
        p.keys().find(|k| {
            k.is_empty()
                || k.len() > 64
                || !k
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        })
    }) {
        return Err(format!(
            "its input property {bad:?} is a name not every MCP client accepts (1 to 64 of A-Z, a-z, 0-9, '_', '.', '-')"
        ));
    }
    Ok(Value::Object(root))
}

/// Whether a `$ref` is left anywhere in `v`.
fn contains_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(contains_ref),
        Value::Array(a) => a.iter().any(contains_ref),
        _ => false,
    }
}

/// How an MCP vendor's server is reached (SPEC §10.2): a remote server's Streamable HTTP
/// URL, or a local program started with its arguments in a working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// `https://…/mcp` (or `http://` on loopback and private networks a person trusts).
    Url(String),
    /// A program and its arguments (argv; no shell), and the directory it starts in.
    Command {
        argv: Vec<String>,
        cwd: Option<String>,
    },
}

/// The most arguments, and bytes in all, of a local server's command.
pub const MAX_COMMAND_ARGS: usize = 64;
const MAX_COMMAND_BYTES: usize = 4096;

/// Splits a command line as a POSIX shell would split words (single and double quotes,
/// backslash escapes), without running a shell: no variables, globs, pipes or
/// redirections (`$`, `` ` ``, `|`, `;`, `&`, `<`, `>` outside quotes are refused, so
/// nothing reads as shell that would not run as one). Errors: empty, unbalanced quotes,
/// a shell operator, more than [`MAX_COMMAND_ARGS`] words or 4,096 bytes, a NUL.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    if line.len() > MAX_COMMAND_BYTES {
        return Err(format!(
            "the command is longer than {MAX_COMMAND_BYTES} bytes"
        ));
    }
    if line.contains('\0') {
        return Err("the command contains a NUL character".into());
    }
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("the command has an unclosed ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return Err("the command has an unclosed \" quote".into()),
                        },
                        Some(ch @ ('$' | '`')) => {
                            return Err(format!(
                                "the command uses {ch:?}, which only a shell expands: Graft runs the program directly (write the value itself)"
                            ))
                        }
                        Some(ch) => word.push(ch),
                        None => return Err("the command has an unclosed \" quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(ch) => word.push(ch),
                    None => return Err("the command ends with a lone backslash".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '$' | '`' | '|' | ';' | '&' | '<' | '>' | '(' | ')' => {
                return Err(format!(
                    "the command uses {c:?}, which only a shell reads: Graft runs the program directly, without a shell (variables go in connections of kind env)"
                ))
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() || words[0].is_empty() {
        return Err("the command is empty: give the program to start and its arguments".into());
    }
    if words.len() > MAX_COMMAND_ARGS {
        return Err(format!(
            "the command has more than {MAX_COMMAND_ARGS} words"
        ));
    }
    Ok(words)
}

/// A command as a person reads it: words joined by spaces, a word quoted when it holds
/// white space, quotes or backslashes (the inverse of [`split_command`]).
pub fn join_command(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && !w
                    .chars()
                    .any(|c| c.is_whitespace() || "'\"\\$`|;&<>()".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Environment variable names a connection of kind `env` may set: a POSIX name
/// (`[A-Za-z_][A-Za-z0-9_]*`, at most 128 bytes) that is not one the process needs to
/// start as Graft starts it (`PATH`, `HOME`, the loader's `LD_*` and `DYLD_*`).
pub fn check_env_name(name: &str) -> Result<(), String> {
    let posix = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !posix {
        return Err(format!(
            "{name:?} is not an environment variable name (letters, digits and '_', not starting with a digit)"
        ));
    }
    let upper = name.to_ascii_uppercase();
    if upper == "PATH" || upper == "HOME" || upper.starts_with("LD_") || upper.starts_with("DYLD_")
    {
        return Err(format!(
            "{name} is set by Graft for the process (or changes how programs load), not by a connection"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slug() -> VendorSlug {
        VendorSlug::parse("files").unwrap()
    }

    #[test]
    fn annotations_take_mcp_defaults() {
        let t: UpstreamTool =
            serde_json::from_value(json!({"name": "write", "inputSchema": {"type": "object"}}))
                .unwrap();
        let h = t.hints();
        assert!(!h.read_only_hint && h.destructive_hint && !h.idempotent_hint && h.open_world_hint);
        let t: UpstreamTool = serde_json::from_value(json!({"name": "read", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": true, "openWorldHint": false}}))
        .unwrap();
        let h = t.hints();
        assert!(h.read_only_hint && !h.destructive_hint && h.idempotent_hint && !h.open_world_hint);
    }

    #[test]
    fn a_list_becomes_drafts_with_safe_unique_names() {
        let listed = vec![
            json!({"name": "read-file", "description": "Reads a file.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, "annotations": {"readOnlyHint": true}, "_meta": {"ui": 1}}),
            json!({"name": "readFile", "inputSchema": {"type": "object"}}),
            json!({"name": "read-file", "inputSchema": {"type": "object"}}),
            json!({"name": "bad", "inputSchema": {"anyOf": [{"type": "object"}]}}),
            json!({"name": "refs", "inputSchema": {"type": "object", "$defs": {"P": {"type": "string"}}, "properties": {"p": {"$ref": "#/$defs/P"}}}}),
            json!({"name": "x".repeat(80), "inputSchema": {}}),
            json!({"nope": true}),
            json!({"name": "rea\u{202E}d", "inputSchema": {}}),
        ];
        let plan = plan_list(&slug(), &listed, &HashMap::new(), &|_| false);
        assert_eq!(plan.total, 8);
        let names: Vec<&str> = plan.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?} {:?}", plan.skipped);
        assert_eq!(names[0], "read_file");
        // readFile snake-cases to read_file too: it is made unique, deterministically
        assert_ne!(names[1], "read_file");
        assert!(names.iter().all(|n| n.len() + "files__".len() <= 52));
        let first = &plan.tools[0];
        assert_eq!(first.operation_id.as_deref(), Some("read-file"));
        assert_eq!(first.path_template, "read-file");
        assert_eq!(first.method, MCP_METHOD);
        assert!(first.hints.read_only_hint);
        assert_eq!(
            first.binding.upstream.as_ref().unwrap().meta,
            Some(json!({"ui": 1}))
        );
        let refs = plan
            .tools
            .iter()
            .find(|t| t.path_template == "refs")
            .unwrap();
        assert_eq!(refs.input_schema["properties"]["p"]["type"], "string");
        assert!(refs.input_schema.get("$defs").is_none());
        let skipped: Vec<&str> = plan.skipped.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            skipped.contains(&"bad") && skipped.contains(&"read-file") && skipped.len() == 4,
            "{skipped:?}"
        );
        // a second read keeps the names it gave
        let known: HashMap<String, String> = plan
            .tools
            .iter()
            .map(|t| (t.path_template.clone(), t.name.clone()))
            .collect();
        let again = plan_list(&slug(), &listed, &known, &|_| true);
        assert!(again.tools.is_empty());
        assert_eq!(again.existing.len(), 4);
        assert_eq!(again.existing[0].name, "read_file");
    }

    #[test]
    fn commands_split_as_a_shell_would_without_one() {
        assert_eq!(
            split_command(r#"npx -y "@scope/server x" 'a b' c\ d"#).unwrap(),
            vec!["npx", "-y", "@scope/server x", "a b", "c d"]
        );
        for bad in [
            "",
            "  ",
            "a | b",
            "echo $HOME",
            "a; b",
            "\"open",
            "x `id`",
            "a > f",
        ] {
            assert!(split_command(bad).is_err(), "{bad:?}");
        }
        let argv = split_command(r#"python3 "my server.py" --name 'it''s'"#).unwrap();
        assert_eq!(split_command(&join_command(&argv)).unwrap(), argv);
    }

    #[test]
    fn env_names() {
        assert!(check_env_name("GITHUB_TOKEN").is_ok());
        for bad in ["", "1X", "A-B", "PATH", "LD_PRELOAD", "a b"] {
            assert!(check_env_name(bad).is_err(), "{bad:?}");
        }
    }
}
