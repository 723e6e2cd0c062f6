//! Graft's meta-tools (SPEC §3.4). Only implemented ones are listed and callable; their
//! input schemas have a root object, no union and no `$ref`.

use super::{tool_error, tool_ok};
use crate::domain::search::read_part;
use crate::service::{Actor, Graft, RunAnswer, ServiceError};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::transform::RecursiveTransform;
use schemars::{generate::SchemaSettings, JsonSchema, Schema};
use serde::Deserialize;
use serde_json::{json, Value};

/// Meta-tools this server implements, in `tools/list` order.
pub const OFFERED: &[&str] = &[
    "find_tool",
    "promote",
    "demote",
    "run_tool",
    "acquire",
    "publish",
];

/// Whether `name` is an implemented meta-tool.
pub fn offered(name: &str) -> bool {
    OFFERED.contains(&name)
}

/// The input schema of a meta-tool, derived from its argument type (as rmcp's examples
/// derive theirs): JSON Schema 2020-12 with a root object, every subschema inline (no
/// `$ref`), and no union: an optional field is left out of `required` rather than typed
/// `["string", "null"]`, since some clients refuse type unions (CLIENTS.md). Field docs
/// become descriptions; `deny_unknown_fields` becomes `additionalProperties: false`.
fn input_schema<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
            s.transforms.push(Box::new(RecursiveTransform(plain_types)));
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.remove("title");
    match schema.to_value() {
        Value::Object(m) => m,
        _ => unreachable!("argument types are structs, whose schemas are objects"),
    }
}

/// `"type": [T, "null"]` becomes `"type": T` (see [`input_schema`]); the `"default":
/// null` of an optional field and Rust's integer `format` (`int64`, which no client
/// needs) are left out.
fn plain_types(schema: &mut Schema) {
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    if schema.get("format").and_then(Value::as_str) == Some("int64") {
        schema.remove("format");
    }
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
}

/// The `_meta` key Claude Code reads to show a tool without its own tool search
/// (CLIENTS.md; issue 29.4): Graft's meta-tools are how an agent reaches the toolbox, so
/// they must always be in its model's list.
pub const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

/// The meta-tools' definitions, in order, each with `_meta: {"anthropic/alwaysLoad":
/// true}`.
pub fn tools() -> Vec<Tool> {
    let mut always = JsonObject::new();
    always.insert(ALWAYS_LOAD.into(), Value::Bool(true));
    let always = rmcp::model::MetaObject(always);
    let tools = vec![
        Tool::new(
            "find_tool",
            "Search Graft's toolbox of vendor API tools, promoted or not, ranked by how well each fits what you mean. Describe the task in your own words, as you would to a colleague: the action and the object, the vendor if you know it (\"create a GitHub issue\", \"did the SMS we sent to +447700900123 get delivered?\"). Ids, names and quoted text may stay in; they weigh less than the task's words. The first 64 words are read. Hits come best first, each with the vendor and name that promote, demote and run_tool take, a one-sentence description, whether it is promoted for you now, its readOnlyHint and destructiveHint, what it costs your context in tokens once promoted, and a score from 0 to 1. When nothing fits, the answer says so and points at acquire.",
            input_schema::<FindToolArgs>(),
        )
        .with_title("Find a tool")
        .with_annotations(ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false)),
        Tool::new(
            "promote",
            "Put a toolbox tool into your working set, so that it appears in your tool list as <vendor>__<name>. Harmless: a tool that writes still asks a person on its first call. Answers the working set's new size and tokens against your cap and token budget.",
            input_schema::<VendorNameArgs>(),
        )
        .with_title("Promote a tool")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).idempotent(true).open_world(false)),
        Tool::new(
            "demote",
            "Take a tool out of your working set when you are done with it. Deletes nothing: find_tool finds it again and promote brings it back. Answers the working set's new size and tokens.",
            input_schema::<VendorNameArgs>(),
        )
        .with_title("Demote a tool")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).idempotent(true).open_world(false)),
        Tool::new(
            "run_tool",
            "Run any toolbox tool without promoting it, exactly as calling <vendor>__<name> would: the same input validation, the same approval rule for writes, the same answer. Use it for a tool you just promoted that is not in your list yet, or one you need once. With dryRun true, reads (GET, HEAD) reach the vendor and every other method stops at Graft with a preview of the request.",
            input_schema::<RunToolArgs>(),
        )
        .with_title("Run a tool")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(true).idempotent(false).open_world(true)),
        Tool::new(
            "acquire",
            "Author a new tool of an existing vendor when find_tool finds none (call find_tool first: a demoted tool is one promote away). Either describe it (vendor, name, description, method, path, inputSchema, and optionally query, headers, bodyEncoding), or give {vendor, operationId} of an operation find_tool listed as acquirable from the vendor's stored OpenAPI document. The tool is published as version 1 and promoted for you; call it through run_tool until your client re-reads its list.",
            definition_schema("vendor"),
        )
        .with_title("Author a tool")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).idempotent(false).open_world(false)),
        Tool::new(
            "publish",
            "Publish a new version of a tool: give {vendor, name} (or name as <vendor>__<name>) and any field to change (description, method, path, inputSchema, query, headers, bodyEncoding). Versions are kept forever; calls use the newest. Promotes the tool for you if it is not.",
            definition_schema("name"),
        )
        .with_title("Publish a new version")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false).idempotent(false).open_world(false)),
    ];
    tools
        .into_iter()
        .map(|t| t.with_meta(always.clone()))
        .collect()
}

/// acquire's and publish's schema: [`DefinitionArgs`] with `required` the one field each
/// needs; publish takes no `operationId` (only acquire reads an operation from the stored
/// document).
fn definition_schema(required: &str) -> JsonObject {
    let mut schema = input_schema::<DefinitionArgs>();
    if required == "name" {
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            props.remove("operationId");
        }
    }
    schema.insert("required".into(), json!([required]));
    schema
}

/// The MCP result of a run (SPEC §4.7).
pub fn run_result(answer: RunAnswer) -> CallToolResult {
    match answer {
        RunAnswer::Ok {
            text,
            structured,
            media,
        } => {
            use crate::service::answer::Media;
            use rmcp::model::{ContentBlock, ResourceContents};
            let mut content = vec![ContentBlock::text(text)];
            match media {
                Some(Media::Image { mime, data }) => content.push(ContentBlock::image(data, mime)),
                Some(Media::Blob { mime, data, uri }) => content.push(ContentBlock::resource(
                    ResourceContents::blob(data, uri).with_mime_type(mime),
                )),
                None => {}
            }
            let mut r = CallToolResult::success(content);
            r.structured_content = structured;
            r
        }
        RunAnswer::Passed { result, .. } => serde_json::from_value(result).unwrap_or_else(|e| {
            tool_error(
                "vendor_error",
                &format!("the MCP server's result is not a tool result: {e}"),
                json!({}),
            )
        }),
        RunAnswer::Err {
            code,
            message,
            details,
        } => tool_error(code, &message, details),
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindToolArgs {
    /// What you want to do, in your own words: the action and the object, the vendor if known, e.g. "list open pull requests on GitHub". Up to 2,000 characters; the first 64 words are read.
    query: String,
    /// Most hits to return (1 to 50, default 10).
    #[schemars(range(min = 1, max = 50), extend("default" = 10))]
    limit: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunToolArgs {
    /// The tool's vendor (from find_tool).
    vendor: Option<String>,
    /// The tool's name within its vendor (from find_tool); or, without vendor, the full <vendor>__<name>.
    name: String,
    /// The tool's input, as its input schema describes.
    #[serde(default)]
    #[schemars(with = "Option<JsonObject>")]
    input: Option<Value>,
    /// Preview a write instead of sending it (reads still run).
    #[serde(default, rename = "dryRun")]
    dry_run: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)] // the hint fields are read only to tell the agent they were ignored
struct DefinitionArgs {
    /// An existing vendor (find_tool's nothing-found answer lists them).
    vendor: Option<String>,
    /// Tool name: a-z, 0-9 and '_', no '__'; <vendor>__<name> at most 52 characters.
    name: Option<String>,
    /// What the tool does, for the model.
    description: Option<String>,
    /// HTTP method.
    #[schemars(extend("enum" = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))]
    method: Option<String>,
    /// Path after the vendor's base URL, with {placeholders} that are inputSchema properties, e.g. /v1/items/{id}.
    path: Option<String>,
    /// JSON Schema of the input: a root {"type": "object", "properties": {...}}; $ref/$defs are inlined.
    #[schemars(with = "Option<JsonObject>")]
    input_schema: Option<Value>,
    /// Properties sent as query parameters.
    query: Option<Vec<String>>,
    /// Properties sent as headers.
    headers: Option<Vec<String>>,
    /// How the remaining properties are sent as the body (json by default; GET, HEAD and DELETE send them in the query).
    #[schemars(extend("enum" = ["json", "form"]))]
    body_encoding: Option<String>,
    /// An operation of the vendor's stored OpenAPI document (from find_tool's acquirable list).
    operation_id: Option<String>,
    // hints an agent may send; they are ignored: an author's hints follow the method
    /// Ignored: hints follow the method (GET/HEAD read-only, DELETE destructive).
    read_only_hint: Option<bool>,
    #[schemars(skip)]
    destructive_hint: Option<bool>,
    #[schemars(skip)]
    idempotent_hint: Option<bool>,
    #[schemars(skip)]
    open_world_hint: Option<bool>,
    #[schemars(skip)]
    annotations: Option<Value>,
}

impl DefinitionArgs {
    fn sent_hints(&self) -> bool {
        self.read_only_hint.is_some()
            || self.destructive_hint.is_some()
            || self.idempotent_hint.is_some()
            || self.open_world_hint.is_some()
            || self.annotations.is_some()
    }
}

const HINTS_NOTE: &str = " The hints you sent were ignored: an authored tool's hints follow its method (a person can change them).";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VendorNameArgs {
    /// The tool's vendor (from find_tool).
    vendor: Option<String>,
    /// The tool's name within its vendor (from find_tool); or, without vendor, the full <vendor>__<name> as your tool list shows it.
    name: String,
}

/// The `(vendor, name)` a meta-tool call means: `vendor` and `name` as given, or a
/// qualified `<vendor>__<name>` (as tools/list shows it) in `name` when `vendor` is
/// absent or the same vendor. Errors (`invalid_input`): no vendor at all, or a qualified
/// name of another vendor than `vendor`.
fn tool_ref(vendor: Option<String>, name: String) -> Result<(String, String), CallToolResult> {
    let bad = |message: String| tool_error("invalid_input", &message, json!({}));
    match (vendor, crate::domain::names::split_qualified(&name)) {
        (Some(v), Some((qv, qn))) if qv == v => Ok((v, qn.to_string())),
        (Some(v), Some((qv, _))) => Err(bad(format!(
            "name {name:?} is a tool of vendor {qv:?}, but vendor is {v:?}: give the name within its vendor, or leave vendor out"
        ))),
        (Some(v), None) => Ok((v, name)),
        (None, Some((qv, qn))) => Ok((qv.to_string(), qn.to_string())),
        (None, None) => Err(bad(format!(
            "which vendor's {name:?}? Give vendor and name, or name as <vendor>__<name> as your tool list shows it"
        ))),
    }
}

fn parse<T: for<'de> Deserialize<'de>>(args: JsonObject) -> Result<T, CallToolResult> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        tool_error(
            "invalid_input",
            &format!("invalid arguments: {e}"),
            json!({}),
        )
    })
}

fn service_error(e: ServiceError) -> CallToolResult {
    if let ServiceError::Internal(cause) = &e {
        tracing::error!(error = ?cause, "meta-tool failed");
    }
    let extra = match &e {
        ServiceError::Busy { retry_after, .. } => {
            json!({"retryAfterSeconds": retry_after.as_secs().max(1)})
        }
        _ => json!({}),
    };
    tool_error(e.code(), &e.to_string(), extra)
}

/// Runs meta-tool `name` for `agent_id`. Every outcome is a tool result (errors have
/// `isError`).
pub async fn call(
    graft: &Graft,
    actor: &Actor,
    agent_id: i64,
    name: &str,
    args: JsonObject,
    cancel: &tokio_util::sync::CancellationToken,
) -> CallToolResult {
    let result = match name {
        "find_tool" => find_tool(graft, agent_id, args).await,
        "promote" | "demote" => promote_or_demote(graft, actor, agent_id, name, args).await,
        "run_tool" => run_tool(graft, agent_id, args, cancel).await,
        "acquire" => acquire(graft, actor, agent_id, args).await,
        "publish" => publish(graft, actor, agent_id, args).await,
        _ => Err(tool_error(
            "invalid_input",
            &format!("{name} is not a Graft meta-tool"),
            json!({}),
        )),
    };
    result.unwrap_or_else(|e| e)
}

async fn find_tool(
    graft: &Graft,
    agent_id: i64,
    args: JsonObject,
) -> Result<CallToolResult, CallToolResult> {
    let a: FindToolArgs = parse(args)?;
    // never refused for its length (issue 24.1): the ranking reads its first part
    let (query, cut) = read_part(&a.query);
    let cut_note = cut.map(|c| format!("\n({})", c.note())).unwrap_or_default();
    let limit = a.limit.unwrap_or(10);
    if !(1..=50).contains(&limit) {
        return Err(tool_error(
            "invalid_input",
            &format!("limit must be between 1 and 50 (got {limit})"),
            json!({}),
        ));
    }
    let found = graft
        .find_tool(agent_id, query, limit as usize)
        .await
        .map_err(service_error)?;
    if found.hits.is_empty() {
        let vendors = graft.vendor_slugs().await.map_err(service_error)?;
        let vendor_text = if vendors.is_empty() {
            "the toolbox is empty".to_string()
        } else {
            format!("vendors: {}", vendors.join(", "))
        };
        let acquirable = graft.acquirable(query, 5).await.map_err(service_error)?;
        let next = if acquirable.is_empty() {
            "To author the tool you need, call acquire with vendor, name, description, method, path and inputSchema (and query, headers, bodyEncoding if needed).".to_string()
        } else {
            let ops: Vec<String> = acquirable
                .iter()
                .map(|o| {
                    format!(
                        "{{vendor: \"{}\", operationId: \"{}\"}} ({})",
                        o.vendor, o.operation_id, o.summary
                    )
                })
                .collect();
            format!(
                "These operations of stored OpenAPI documents match and are one acquire away: {}. Or call acquire with vendor, name, description, method, path and inputSchema.",
                ops.join("; ")
            )
        };
        let message = format!("No tool in the toolbox matches {query:?} ({vendor_text}). {next}");
        return Ok(tool_ok(
            format!("{message}{cut_note}"),
            with_cut_note(
                json!({"hits": [], "total": 0, "message": message, "vendors": vendors, "acquirable": acquirable, "cut": cut.is_some()}),
                cut.as_ref(),
            ),
        ));
    }
    let mut text = format!("{} of {} matching tools:\n", found.hits.len(), found.total);
    for h in &found.hits {
        let flags = match (h.promoted, h.read_only_hint) {
            (true, true) => " [promoted, read-only]",
            (true, false) => " [promoted]",
            (false, true) => " [read-only]",
            (false, false) => "",
        };
        let tokens = h
            .tokens
            .map(|t| format!(", {}", crate::console::words::tokens(t)))
            .unwrap_or_default();
        text.push_str(&format!(
            "- {}__{}{} ({:.2}{tokens}): {}\n",
            h.vendor, h.name, flags, h.score, h.description
        ));
    }
    Ok(tool_ok(
        format!("{}{cut_note}", text.trim_end()),
        with_cut_note(
            json!({"hits": found.hits, "total": found.total, "cut": cut.is_some()}),
            cut.as_ref(),
        ),
    ))
}

/// find_tool's structuredContent with `cutNote`, the note of what the ranking did not
/// read, when the request was cut (Claude Code shows the model only structuredContent).
fn with_cut_note(mut v: Value, cut: Option<&crate::domain::search::Cut>) -> Value {
    if let Some(c) = cut {
        v["cutNote"] = json!(c.note());
    }
    v
}

fn published(
    vendor: &str,
    name: &str,
    p: crate::service::authoring::Published,
    verb: &str,
    note: &str,
) -> CallToolResult {
    let text = format!(
        "{verb} {vendor}__{name} version {}; it is in your working set ({}). Call it through run_tool until your client re-reads its tool list.{note}",
        p.version,
        crate::console::words::count(p.size, "tool")
    );
    // Claude Code gives the model only structuredContent when there is one (issue
    // 29.4): the next step goes there too
    tool_ok(
        text.clone(),
        json!({"vendor": vendor, "name": name, "version": p.version, "size": p.size, "message": text}),
    )
}

async fn acquire(
    graft: &Graft,
    actor: &Actor,
    agent_id: i64,
    args: JsonObject,
) -> Result<CallToolResult, CallToolResult> {
    let mut a: DefinitionArgs = parse(args)?;
    let note = if a.sent_hints() { HINTS_NOTE } else { "" };
    let Some(vendor) = a.vendor.take() else {
        return Err(tool_error(
            "invalid_input",
            "acquire needs vendor: the vendor whose API the new tool calls",
            json!({}),
        ));
    };
    if let Some(op) = &a.operation_id {
        let explicit = a.description.is_some()
            || a.method.is_some()
            || a.path.is_some()
            || a.input_schema.is_some()
            || a.query.is_some()
            || a.headers.is_some()
            || a.body_encoding.is_some();
        if explicit {
            return Err(tool_error(
                "invalid_input",
                "give either {vendor, operationId} (the operation as the document describes it, optionally with name) or a definition (name, description, method, path, inputSchema, query, headers, bodyEncoding), not both",
                json!({}),
            ));
        }
        {
            let (name, p) = graft
                .acquire_operation(actor, agent_id, &vendor, op, a.name.as_deref())
                .await
                .map_err(service_error)?;
            return Ok(published(&vendor, &name, p, "Acquired", note));
        }
    }
    let missing: Vec<&str> = [
        ("name", a.name.is_none()),
        ("description", a.description.is_none()),
        ("method", a.method.is_none()),
        ("path", a.path.is_none()),
        ("inputSchema", a.input_schema.is_none()),
    ]
    .iter()
    .filter(|(_, m)| *m)
    .map(|(f, _)| *f)
    .collect();
    if !missing.is_empty() {
        return Err(tool_error(
            "invalid_input",
            &format!("acquire needs {} (or just vendor and operationId of a stored document's operation)", missing.join(", ")),
            json!({"missing": missing}),
        ));
    }
    let spec = crate::domain::authoring::ToolSpec {
        name: a.name.clone().unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        method: a.method.unwrap_or_default(),
        path: a.path.unwrap_or_default(),
        input_schema: a.input_schema.unwrap_or_default(),
        query: a.query.unwrap_or_default(),
        headers: a.headers.unwrap_or_default(),
        body_encoding: a.body_encoding,
        operation_id: a.operation_id,
    };
    let name = spec.name.clone();
    let p = graft
        .acquire(actor, agent_id, &vendor, spec)
        .await
        .map_err(service_error)?;
    Ok(published(&vendor, &name, p, "Acquired", note))
}

async fn publish(
    graft: &Graft,
    actor: &Actor,
    agent_id: i64,
    args: JsonObject,
) -> Result<CallToolResult, CallToolResult> {
    let a: DefinitionArgs = parse(args)?;
    let note = if a.sent_hints() { HINTS_NOTE } else { "" };
    let Some(name) = a.name.clone() else {
        return Err(tool_error(
            "invalid_input",
            "publish needs vendor and name",
            json!({}),
        ));
    };
    let (vendor, name) = tool_ref(a.vendor.clone(), name)?;
    if a.operation_id.is_some() {
        return Err(tool_error(
            "invalid_input",
            "publish changes a tool's definition; operationId cannot be changed",
            json!({}),
        ));
    }
    let change = crate::service::authoring::VersionChange {
        description: a.description,
        method: a.method,
        path: a.path,
        input_schema: a.input_schema,
        query: a.query,
        headers: a.headers,
        body_encoding: a.body_encoding,
        base_version: None,
    };
    let p = graft
        .publish(actor, Some(agent_id), &vendor, &name, change)
        .await
        .map_err(service_error)?;
    Ok(published(&vendor, &name, p, "Published", note))
}

async fn run_tool(
    graft: &Graft,
    agent_id: i64,
    args: JsonObject,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<CallToolResult, CallToolResult> {
    let a: RunToolArgs = parse(args)?;
    let (vendor, name) = tool_ref(a.vendor, a.name)?;
    let input = a.input.unwrap_or_else(|| json!({}));
    if !input.is_object() {
        return Err(tool_error(
            "invalid_input",
            "input must be a JSON object",
            json!({}),
        ));
    }
    let answer = graft
        .run_tool_cancellable(agent_id, &vendor, &name, input, a.dry_run, cancel)
        .await
        .map_err(service_error)?;
    Ok(run_result(answer))
}

async fn promote_or_demote(
    graft: &Graft,
    actor: &Actor,
    agent_id: i64,
    verb: &str,
    args: JsonObject,
) -> Result<CallToolResult, CallToolResult> {
    let a: VendorNameArgs = parse(args)?;
    let (vendor, name) = tool_ref(a.vendor, a.name)?;
    let qualified = format!("{vendor}__{name}");
    if verb == "promote" {
        let s = graft
            .promote_tool(actor, agent_id, &vendor, &name)
            .await
            .map_err(service_error)?;
        let mut text = if s.changed {
            format!("Promoted {qualified}. {}", set_in_words(&s))
        } else {
            format!("{qualified} was already promoted. {}", set_in_words(&s))
        };
        if offered("run_tool") {
            text.push_str(
                " If your client has not re-read its tool list, call it through run_tool.",
            );
        }
        Ok(tool_ok(text.clone(), set_json(&s, &text)))
    } else {
        let s = graft
            .demote_tool(actor, agent_id, &vendor, &name)
            .await
            .map_err(service_error)?;
        let text = format!("Demoted {qualified}. {}", set_in_words(&s));
        Ok(tool_ok(text.clone(), set_json(&s, &text)))
    }
}

/// A warning when the agent's tool list (Graft's own tools and its working set) nears or
/// passes what its harness's client takes (issue 29.3).
fn client_warning(s: &crate::service::SetSize) -> Option<String> {
    crate::clients::client_limit_warning(
        s.harness.as_deref(),
        s.size,
        crate::clients::Reader::Agent,
    )
}

/// The working set after a promote or demote, in words (issue 29.2): its size against
/// the cap, its tokens against the budget, and past the budget by how much and what the
/// next sweep would demote.
fn set_in_words(s: &crate::service::SetSize) -> String {
    use crate::console::words::{count, tokens};
    let limits = match s.token_budget {
        Some(b) => format!(
            "cap {}, token budget {}",
            s.cap,
            crate::console::words::grouped(b)
        ),
        None => format!("cap {}", s.cap),
    };
    let mut text = format!(
        "Your working set holds {}, {} ({limits}).",
        count(s.size, "tool"),
        tokens(s.tokens)
    );
    if let Some(w) = client_warning(s) {
        text.push(' ');
        text.push_str(&w);
    }
    let over_budget = s.token_budget.filter(|b| s.tokens > *b);
    let over = match (over_budget, s.size > s.cap) {
        (Some(b), _) => Some(format!(
            "That is {} over your token budget",
            tokens(s.tokens - b)
        )),
        (None, true) => Some(format!("That is over your cap of {}", s.cap)),
        (None, false) => None,
    };
    if let Some(over) = over {
        text.push(' ');
        text.push_str(&over);
        if s.would_demote.is_empty() {
            text.push_str(
                ": every tool in it was called since its promotion, so the sweep keeps them all.",
            );
        } else {
            text.push_str(&format!(
                ": the next sweep would demote {} (not called since promoted, oldest first). To choose yourself what goes, demote tools you no longer need.",
                s.would_demote.join(", ")
            ));
        }
    }
    text
}

/// The working set after a promote or demote as structuredContent: `size`, `cap`,
/// `tokens`; `tokenBudget` and `overBudget` when a budget is set; `wouldDemote` (what
/// the next sweep would demote for the cap or the budget) when a budget is set or the
/// set is over its cap; `clientWarning` near a client's limit; and
/// `message`, the answer's text (Claude Code gives the model only structuredContent
/// when there is one, issue 29.4, so the next step must be there too).
fn set_json(s: &crate::service::SetSize, message: &str) -> Value {
    let mut v = json!({"size": s.size, "cap": s.cap, "tokens": s.tokens, "message": message});
    if let Some(w) = client_warning(s) {
        v["clientWarning"] = json!(w);
    }
    if let Some(b) = s.token_budget {
        v["tokenBudget"] = json!(b);
        v["overBudget"] = json!((s.tokens - b).max(0));
    }
    if s.token_budget.is_some() || !s.would_demote.is_empty() {
        v["wouldDemote"] = json!(s.would_demote);
    }
    v
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Every schema path that is a union, a `$ref` or a `"type"` list (MCP clients that
    /// refuse them, CLIENTS.md).
    fn unions(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let here = format!("{at}/{k}");
                    if ["anyOf", "oneOf", "allOf", "$ref", "$defs"].contains(&k.as_str())
                        || (k == "type" && !x.is_string())
                    {
                        out.push(here.clone());
                    }
                    unions(x, here, out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    unions(x, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn meta_tool_schemas_are_closed_objects_without_unions() {
        for tool in super::tools() {
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
            let mut found = Vec::new();
            unions(&schema, String::new(), &mut found);
            assert!(found.is_empty(), "{}: {found:?}", tool.name);
            let props = schema["properties"].as_object().unwrap();
            for (name, p) in props {
                assert!(
                    p["description"].is_string(),
                    "{}.{name} has no description",
                    tool.name
                );
            }
            for r in schema["required"].as_array().unwrap() {
                assert!(
                    props.contains_key(r.as_str().unwrap()),
                    "{}: {r}",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn schemas_carry_what_the_argument_types_check() {
        let tools = super::tools();
        let get = |n: &str| {
            Value::Object(
                tools
                    .iter()
                    .find(|t| t.name == n)
                    .unwrap()
                    .input_schema
                    .as_ref()
                    .clone(),
            )
        };
        let find = get("find_tool");
        assert_eq!(find["required"], serde_json::json!(["query"]));
        assert_eq!(find["properties"]["limit"]["minimum"], 1);
        assert_eq!(find["properties"]["limit"]["maximum"], 50);
        assert_eq!(find["properties"]["limit"]["default"], 10);
        assert_eq!(get("run_tool")["properties"]["input"]["type"], "object");
        assert_eq!(get("run_tool")["properties"]["dryRun"]["type"], "boolean");
        let acquire = get("acquire");
        assert_eq!(acquire["required"], serde_json::json!(["vendor"]));
        assert!(acquire["properties"]["operationId"].is_object());
        let publish = get("publish");
        assert_eq!(publish["required"], serde_json::json!(["name"]));
        assert!(publish["properties"].get("operationId").is_none());
        assert!(publish["properties"].get("destructiveHint").is_none());
        assert_eq!(publish["properties"]["method"]["enum"][0], "GET");
        assert_eq!(publish["properties"]["inputSchema"]["type"], "object");
        assert_eq!(get("promote")["required"], serde_json::json!(["name"]));
    }
}
