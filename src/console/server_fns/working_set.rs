//! An agent's working set in the console (SPEC §2 `working_set`, §6): a person promotes
//! or demotes a tool for an agent (history cause `console`); the working set and its
//! history are shown on the agent's page ([`super::agent`]).

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{signed_in, split_tool, with_status};
#[cfg(feature = "ssr")]
use crate::service::Actor;
use leptos::prelude::*;

/// Promotes a tool for an agent as this person (history cause `console`; list_changed
/// reaches that agent only). `tool` is `vendor__name`.
#[server(prefix = "/api", endpoint = "promote")]
pub async fn promote(agent: String, tool: String) -> ConsoleResult<()> {
    with_status(move_tool(agent, tool, true)).await
}

/// Demotes a tool for an agent as this person (history cause `console`).
#[server(prefix = "/api", endpoint = "demote")]
pub async fn demote(agent: String, tool: String) -> ConsoleResult<()> {
    with_status(move_tool(agent, tool, false)).await
}

/// Promotes (or demotes) `tool` (`vendor__name`) for `agent` as the signed-in person.
#[cfg(feature = "ssr")]
pub(crate) async fn move_tool(agent: String, tool: String, promote: bool) -> ConsoleResult<()> {
    let (state, person) = signed_in().await?;
    let a = state.graft.agent_by_name(&agent).await?;
    let (vendor, name) = split_tool(&tool)?;
    let actor = Actor::Person(person.name);
    if promote {
        state.graft.promote_tool(&actor, a.id, vendor, name).await?;
    } else {
        state.graft.demote_tool(&actor, a.id, vendor, name).await?;
    }
    Ok(())
}
