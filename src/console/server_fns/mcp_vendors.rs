//! MCP vendors in the console (issue 27): adding one, reading its tools again, and
//! authorizing Graft at a remote server behind OAuth.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{
    back_saying_saved, confirmed, signed_in, with_status, ConsoleError,
};
#[cfg(feature = "ssr")]
use crate::console::words::{segment, ImportSummary};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;

/// Adds an MCP vendor (issue 27.1): a remote server's `url`, or a local server's
/// `command` (the program and its arguments, split as a shell splits words, run without
/// one) started in `cwd`; then its tools/list is read and the person lands on its page,
/// which says what was read or why it could not be. Errors: at `slug` (rules, taken),
/// `name`, `url`, `command` (none or both given, shell syntax) or `cwd`.
#[server(prefix = "/api", endpoint = "add_mcp_vendor")]
pub async fn add_mcp_vendor(
    slug: String,
    name: String,
    url: String,
    command: String,
    cwd: String,
) -> ConsoleResult<()> {
    use crate::domain::mcp_vendor::{split_command, Server};
    with_status(async move {
        let (state, person) = signed_in().await?;
        if let Err(m) = crate::domain::names::VendorSlug::parse(slug.trim()) {
            return Err(ConsoleError::field("slug", m));
        }
        crate::service::check_vendor_name(name.trim())
            .map_err(|m| ConsoleError::field("name", m))?;
        let server = match (url.trim(), command.trim()) {
            ("", "") => {
                return Err(ConsoleError::field(
                    "url",
                    "give the server's URL, or the command that starts it",
                ))
            }
            (u, "") => {
                if let Err(e) = crate::service::check_base_url(u) {
                    return Err(ConsoleError::field("url", e.to_string()));
                }
                Server::Url(u.to_string())
            }
            ("", c) => Server::Command {
                argv: split_command(c).map_err(|m| ConsoleError::field("command", m))?,
                cwd: Some(cwd.trim().to_string()).filter(|d| !d.is_empty()),
            },
            _ => {
                return Err(ConsoleError::field(
                    "command",
                    "give a URL or a command, not both",
                ))
            }
        };
        match state
            .graft
            .add_mcp_vendor(&Actor::Person(person.name.clone()), slug.trim(), Some(name.as_str()), &server)
            .await
        {
            Ok((v, _)) => {
                tracing::info!(vendor = %v.slug, by = %person.name, "MCP vendor added in the console");
                leptos_axum::redirect(&format!("/vendors/{}", segment(&v.slug)));
                Ok(())
            }
            Err(ServiceError::Conflict(m)) => Err(ConsoleError::field("slug", m)),
            Err(ServiceError::Invalid(m)) if m.contains("working directory") => {
                Err(ConsoleError::field("cwd", m))
            }
            Err(ServiceError::Invalid(m)) if m.contains("command") => {
                Err(ConsoleError::field("command", m))
            }
            Err(ServiceError::Invalid(m)) if m.contains("URL") => Err(ConsoleError::field("url", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// Reads an MCP vendor's tools/list again now (issue 27.2); answers what changed in one
/// sentence. Errors: `Refused` with the reason (not an MCP vendor, disabled, its server
/// could not be read).
#[server(prefix = "/api", endpoint = "refresh_mcp_vendor")]
pub async fn refresh_mcp_vendor(slug: String) -> ConsoleResult<String> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let report = state
            .graft
            .refresh_mcp_vendor(&Actor::Person(person.name), &slug)
            .await?;
        Ok(ImportSummary::from(report).headline())
    })
    .await
}

/// Starts authorizing Graft at MCP vendor `slug`'s authorization server (issue 27.1):
/// the person is sent there, and comes back to `/vendors/oauth/callback`. Errors:
/// `Refused` with the reason (not a remote MCP server, its authorization server could not
/// be found or refused Graft's registration).
#[server(prefix = "/api", endpoint = "start_mcp_oauth")]
pub async fn start_mcp_oauth(slug: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let url = state
            .graft
            .start_mcp_oauth(&Actor::Person(person.name), &slug)
            .await?;
        leptos_axum::redirect(&url);
        Ok(())
    })
    .await
}

/// Drops MCP vendor `slug`'s OAuth tokens (its server stops; calls need a new
/// authorization). Must be confirmed: `confirm` = `yes`.
#[server(prefix = "/api", endpoint = "forget_mcp_oauth")]
pub async fn forget_mcp_oauth(slug: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "dropping its tokens stops the server's calls until it is authorized again",
        )?;
        state
            .graft
            .forget_mcp_oauth(&Actor::Person(person.name), &slug)
            .await?;
        back_saying_saved("vendor");
        Ok(())
    })
    .await
}
