//! A tool edited on its page (issue 28.10): a person's note, the connection its calls
//! use, and a new version with another description or input schema.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{back_saying_saved, signed_in, with_status, ConsoleError};
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
            Err(ServiceError::Invalid(m)) if schema_changed => {
                Err(ConsoleError::field("input_schema", m))
            }
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("description", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}
