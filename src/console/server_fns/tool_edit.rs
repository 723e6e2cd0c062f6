//! A tool edited on its page (issue 28.10): a person's note, the connection its calls
//! use, and a new version with another description or input schema.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{back_saying_saved, signed_in, with_status, ConsoleError, Flash};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;

/// Adds the signed-in person's note to `vendor__name` (SPEC §2 `tool_notes`: what the
/// team has said about it, kept forever; `graft tool note` adds one too). Errors: at `body` (empty, over 4,000 characters), else
/// `Refused`.
#[server(prefix = "/api", endpoint = "add_tool_note")]
pub async fn add_tool_note(vendor: String, name: String, body: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let actor = Actor::Person(person.name);
        match state.graft.add_note(&actor, &vendor, &name, &body).await {
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("body", m)),
            other => {
                other?;
                back_saying_saved("note");
                Ok(())
            }
        }
    })
    .await
}

/// Chooses the connection `vendor__name`'s calls use: `connection` is the id of one of
/// its vendor's live connections, or empty for the vendor's default (SPEC §10.5).
/// Errors: at `connection` (not a number, another vendor's, revoked), else `Refused`.
#[server(prefix = "/api", endpoint = "choose_tool_connection")]
pub async fn choose_tool_connection(
    vendor: String,
    name: String,
    connection: String,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let id = match connection.trim() {
            "" => None,
            n => Some(n.parse::<i64>().map_err(|_| {
                ConsoleError::field("connection", format!("{n:?} is not a connection"))
            })?),
        };
        let actor = Actor::Person(person.name);
        match state
            .graft
            .set_tool_connection(&actor, &vendor, &name, id)
            .await
        {
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("connection", m)),
            other => {
                other?;
                back_saying_saved("connection");
                Ok(())
            }
        }
    })
    .await
}

/// Publishes version n+1 of `vendor__name` as the signed-in person (SPEC §5's publish,
/// the rules an agent's publish follows: the schema checked, approvals asked again when
/// what a call sends changed, holders told with list_changed). `description` (CommonMark)
/// and `input_schema` (JSON Schema, as JSON text) replace the current ones where they
/// differ; line ends are kept as `\n`. `seen` is the version the page showed: a newer
/// one since is refused, so nobody overwrites a change they did not see. Errors: at `description` (nothing changed, too long), at
/// `input_schema` (not JSON, not a schema Graft takes), else `Refused` (an MCP server's
/// tool, a newer version).
#[server(prefix = "/api", endpoint = "publish_tool")]
pub async fn publish_tool(
    vendor: String,
    name: String,
    seen: i64,
    description: String,
    input_schema: String,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let tool = state.graft.tool(&vendor, &name).await?;
        if tool.version != seen {
            return Err(ConsoleError::Refused(format!(
                "{vendor}__{name} is at version {} now, not version {seen} that you edited: look at it again",
                tool.version
            )));
        }
        let description = description.replace("\r\n", "\n").trim().to_string();
        let schema: serde_json::Value = serde_json::from_str(&input_schema).map_err(|e| {
            ConsoleError::field("input_schema", format!("not JSON: {e}"))
        })?;
        let current: Option<serde_json::Value> = serde_json::from_str(&tool.input_schema).ok();
        let change = crate::service::authoring::VersionChange {
            description: (description != tool.description.trim()).then_some(description),
            input_schema: (current.as_ref() != Some(&schema)).then_some(schema),
            base_version: Some(seen),
            ..Default::default()
        };
        if change.description.is_none() && change.input_schema.is_none() {
            return Err(ConsoleError::field(
                "description",
                "nothing changed: edit the description or the input schema",
            ));
        }
        let schema_changed = change.input_schema.is_some();
        let actor = Actor::Person(person.name);
        match state.graft.publish(&actor, None, &vendor, &name, change).await {
            Ok(_) => {
                back_saying_saved("version");
                Ok(())
            }
            // the description's rules name it first (domain::authoring::draft); any
            // other refusal of a changed schema is the schema's
            Err(ServiceError::Invalid(m)) if schema_changed && !m.starts_with("description") => {
                Err(ConsoleError::field("input_schema", m))
            }
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("description", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// One field of the tool page's "Try it" form (issue 28.10): a top-level property of the
/// tool's input schema ([`crate::domain::try_form::form_fields`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TryField {
    /// The property's name.
    pub name: String,
    /// `text`, `integer`, `number`, `boolean`, `choice` or `json`.
    pub kind: String,
    /// Whether the schema requires it.
    pub required: bool,
    /// Its description (first sentence, plain text).
    pub description: Option<String>,
    /// The choices of a `choice`.
    pub options: Vec<String>,
    /// A secret: `format: password`, `writeOnly`, or a name such as `password` or
    /// `api_key` ([`crate::proxy::redact`]'s secret words). Typed as a password and not
    /// shown again after a try.
    #[serde(default)]
    pub secret: bool,
}

/// What trying a tool found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TryResult {
    /// Whether an agent's call would be sent.
    pub ok: bool,
    /// The request it would send (pretty JSON, the credential redacted), or why it
    /// would be refused.
    pub text: String,
    /// The form field a refusal is about, when it is about one.
    pub field: Option<String>,
    /// Whether the request was sent to the vendor (`text` is then its answer).
    #[serde(default)]
    pub sent: bool,
    /// A try no longer kept (or never this person's, or another tool's).
    #[serde(default)]
    pub gone: bool,
}

/// A try the page shows again ([`tried_tool`]): its result and the form's values.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeptTry {
    /// The id it is kept under (what a send after a dry run names).
    pub id: String,
    /// What the dry run or the send found.
    pub result: TryResult,
    /// The values typed, by field name (`""` for the whole input as JSON), without
    /// those of secret fields.
    pub values: std::collections::BTreeMap<String, String>,
}

/// The "Try it" form of `input_schema` (JSON text).
#[cfg(feature = "ssr")]
pub(crate) fn try_fields(input_schema: &str) -> Vec<TryField> {
    use crate::domain::try_form::FieldKind;
    crate::service::try_call::form_fields_of(input_schema)
        .into_iter()
        .map(|f| TryField {
            kind: match f.kind {
                FieldKind::Text => "text",
                FieldKind::Integer => "integer",
                FieldKind::Number => "number",
                FieldKind::Boolean => "boolean",
                FieldKind::Choice => "choice",
                FieldKind::Json => "json",
            }
            .into(),
            description: f.description.map(|d| {
                crate::console::words::mark_bidi(&crate::domain::search::text::first_sentence(
                    &crate::domain::search::text::plain_text(&d),
                    160,
                ))
            }),
            secret: f.secret,
            name: f.name,
            required: f.required,
            options: f.options,
        })
        .collect()
}

#[cfg(feature = "ssr")]
impl TryResult {
    /// A refusal: `text` (bidi controls marked) and the form field it is about.
    fn refused(text: &str, field: Option<String>) -> Self {
        TryResult {
            ok: false,
            text: crate::console::words::mark_bidi(text),
            field,
            sent: false,
            gone: false,
        }
    }
}

/// The input the "Try it" form's `values` make for `tool` (the form's values by field
/// name, or under `""` the whole input as JSON text), or why they make none, at its
/// field.
#[cfg(feature = "ssr")]
fn form_input(
    tool: &crate::service::ToolView,
    values: &std::collections::BTreeMap<String, String>,
) -> Result<serde_json::Value, TryResult> {
    match values.get("").filter(|v| !v.trim().is_empty()) {
        Some(whole) => serde_json::from_str(whole).map_err(|e| {
            TryResult::refused(&format!("the input is not JSON: {e}"), Some(String::new()))
        }),
        None => crate::domain::try_form::input_from_form(
            &crate::service::try_call::form_fields_of(&tool.input_schema),
            values,
        )
        .map_err(|(field, message)| TryResult::refused(&message, Some(field))),
    }
}

/// What the page shows of a try of one of `vendor`'s tools: the request a dry run would
/// send (pretty JSON), the vendor's answer to a send (its status first, or that the
/// vendor may have acted when a request got no answer), or why it was refused.
#[cfg(feature = "ssr")]
fn try_result(outcome: crate::service::try_call::TryOutcome, vendor: &str) -> TryResult {
    use crate::console::words::mark_bidi;
    use crate::service::try_call::TryOutcome;
    let (ok, text, sent) = match outcome {
        TryOutcome::Request(r) => (
            true,
            serde_json::to_string_pretty(&r).unwrap_or_default(),
            false,
        ),
        TryOutcome::Answer {
            ok,
            status,
            text,
            unanswered,
        } => {
            let text = match status {
                Some(status) => format!("HTTP {status}\n{text}"),
                None if unanswered => format!("No answer: the request went out and the vendor may have acted on it. Check at {vendor} before sending it again.\n{text}"),
                None => text,
            };
            (ok, text, true)
        }
        TryOutcome::Refused { code, message } => {
            return TryResult::refused(&format!("{code}: {message}"), refused_field(&message))
        }
    };
    TryResult {
        ok,
        text: mark_bidi(&text),
        field: None,
        sent,
        gone: false,
    }
}

/// The form field a schema refusal is about: the first segment of the first JSON
/// pointer it names (`… input schema: /age: 999 is greater than …` → `age`; RFC 6901's
/// `~1` and `~0` decoded), or `None` for the whole input (`/: …`) or another refusal.
#[cfg(feature = "ssr")]
fn refused_field(message: &str) -> Option<String> {
    let at = match message.strip_prefix('/') {
        Some(rest) => rest,
        None => &message[message.find(": /")? + 3..],
    };
    let (pointer, _) = at.split_once(": ")?;
    let first = pointer.split('/').next().filter(|f| !f.is_empty())?;
    Some(first.replace("~1", "/").replace("~0", "~"))
}

/// Keeps a try of `vendor__name` (at `version`, with the form's `values`) for `person`
/// (10 minutes, in memory) and returns the page that shows it: `/tools/V/N?{param}=ID#try`.
/// The values stay out of the address: they may be secrets.
#[cfg(feature = "ssr")]
fn keep_try(
    state: &crate::console::server::ConsoleState,
    person: &str,
    (vendor, name, version): (&str, &str, i64),
    values: &std::collections::BTreeMap<String, String>,
    result: &TryResult,
    param: &str,
) -> String {
    let kept = serde_json::json!({
        "tool": format!("{vendor}__{name}"),
        "version": version,
        "values": values,
        "result": result,
    });
    let id = state.flash.put(person, Flash::Tried(kept));
    let segment = crate::console::words::segment;
    format!(
        "/tools/{}/{}?{param}={id}#try",
        segment(vendor),
        segment(name)
    )
}

/// The try `id` kept for `person` of `vendor__name`: `(version, values, result)`, or
/// `None` when it is gone, another person's or another tool's (a send keeps the values
/// the page may show again only: see [`crate::service::try_call::shown_values`]).
#[cfg(feature = "ssr")]
fn kept(
    state: &crate::console::server::ConsoleState,
    person: &str,
    id: &str,
    vendor: &str,
    name: &str,
) -> Option<(i64, std::collections::BTreeMap<String, String>, TryResult)> {
    let mut kept = state.flash.peek_tried(person, id)?;
    if kept["tool"] != format!("{vendor}__{name}").as_str() {
        return None;
    }
    Some((
        kept["version"].as_i64()?,
        serde_json::from_value(kept["values"].take()).ok()?,
        serde_json::from_value(kept["result"].take()).ok()?,
    ))
}

/// A dry run of `vendor__name` by `person` (issue 28.10) with the "Try it" form's
/// `values` (by field name; `""` the whole input as JSON): the input is checked as an
/// agent's call checks it and the request built with the credential redacted; nothing
/// is sent, logged or approved ([`crate::service::Graft::try_tool`]). The try is kept
/// for the person and the page that shows it returned (`?tried=ID#try`); a refusal (an
/// unknown tool, an MCP server's tool, a bad value) is what it shows.
#[cfg(feature = "ssr")]
pub(crate) async fn dry_run(
    state: &crate::console::server::ConsoleState,
    person: &str,
    vendor: &str,
    name: &str,
    values: std::collections::BTreeMap<String, String>,
) -> String {
    let refused = |e: crate::service::ServiceError| TryResult::refused(&e.to_string(), None);
    let (version, result) = match state.graft.tool(vendor, name).await {
        Err(e) => (0, refused(e)),
        Ok(tool) => {
            let result = match form_input(&tool, &values) {
                Err(r) => r,
                Ok(input) => match state.graft.try_tool(vendor, name, input).await {
                    Ok(outcome) => try_result(outcome, vendor),
                    Err(e) => refused(e),
                },
            };
            (tool.version, result)
        }
    };
    keep_try(
        state,
        person,
        (vendor, name, version),
        &values,
        &result,
        "tried",
    )
}

/// Sends `vendor__name` to the vendor as the signed-in person with the values of their
/// dry run `tried` (issue 28.10; [`crate::service::Graft::try_send`]): the checks of an
/// agent's call, the connection's credential, no approval (a write needs `confirm` =
/// `yes`); a tool changed since the dry run is not sent; a dry run is sent once. The
/// answer is kept for the
/// person for 10 minutes, without its secret values, and the page shows it
/// (`/tools/V/N?sent=ID#try`), with or without JavaScript. What reaches the service is
/// audited: a send, and one refused for a changed tool or an unconfirmed write, with
/// why. Errors: `Refused` (the dry run no longer kept or not this person's, a write not
/// confirmed, a changed tool, an MCP server's tool), not audited before the service.
#[server(prefix = "/api", endpoint = "send_tool")]
pub async fn send_tool(
    vendor: String,
    name: String,
    tried: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        // a dry run's: a send keeps no secret to send again
        let dry_run = kept(&state, &person.name, &tried, &vendor, &name).filter(|k| !k.2.sent);
        let Some((version, values, _)) = dry_run else {
            return Err(ConsoleError::Refused(
                "there is no dry run of yours to send here: a dry run is kept 10 minutes and sent once. Dry-run it again, then send".into(),
            ));
        };
        let tool = state.graft.tool(&vendor, &name).await?;
        let result = match form_input(&tool, &values) {
            Err(refused) => refused,
            Ok(input) => {
                let actor = Actor::Person(person.name.clone());
                let send = crate::service::try_call::TrySend {
                    version: Some(version),
                    confirmed: confirm.as_deref() == Some("yes"),
                };
                match state.graft.try_send(&actor, &vendor, &name, send, input).await {
                    Ok(outcome) => {
                        // sent once: a second post of the same form (back, resubmit)
                        // sends nothing; one refused before sending may be sent again
                        use crate::service::try_call::TryOutcome;
                        if let TryOutcome::Answer { status, unanswered, .. } = &outcome {
                            if status.is_some() || *unanswered {
                                let _ = state.flash.take(&person.name, &tried);
                            }
                        }
                        try_result(outcome, &vendor)
                    }
                    Err(ServiceError::Conflict(m)) => return Err(ConsoleError::Refused(m)),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        let target = keep_try(
            &state,
            &person.name,
            (&vendor, &name, version),
            &crate::service::try_call::shown_values(&tool.input_schema, values),
            &result,
            "sent",
        );
        leptos_axum::redirect(&target);
        Ok(())
    })
    .await
}

/// The try `id` of `vendor`'s `name` kept for the signed-in person (a dry run or a
/// send; left in place for 10 minutes, so a reload shows it again), without the values
/// of secret fields; `None` when it is gone, another person's or another tool's.
/// Errors: `SignedOut`.
#[server(prefix = "/api", endpoint = "tried_tool")]
pub async fn tried_tool(
    id: String,
    vendor: String,
    name: String,
) -> ConsoleResult<Option<KeptTry>> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let Some((_, values, result)) = kept(&state, &person.name, &id, &vendor, &name) else {
            return Ok(None);
        };
        let values = match state.graft.tool(&vendor, &name).await {
            Ok(tool) => crate::service::try_call::shown_values(&tool.input_schema, values),
            // a tool gone since: which fields were secret is not known
            Err(_) => Default::default(),
        };
        Ok(Some(KeptTry { id, result, values }))
    })
    .await
}
