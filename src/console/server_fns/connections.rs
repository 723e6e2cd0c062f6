//! A vendor's connections in the console (SPEC §2 `connections`, issue 28.2): added,
//! revoked, confirmed at a vendor's new origin, its default, a secret replaced in place,
//! a connection tested with one harmless read.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{
    back_saying_saved, confirmed, signed_in, with_status, ConsoleError,
};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;

/// Makes connection `label` vendor `vendor`'s default (its tools without a default of
/// their own use it). Errors: `Refused` with the reason.
#[server(prefix = "/api", endpoint = "set_default_connection")]
pub async fn set_default_connection(vendor: String, label: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .set_vendor_default_connection(&Actor::Person(person.name), &vendor, Some(&label))
            .await?;
        back_saying_saved("connection");
        Ok(())
    })
    .await
}

/// Replaces connection `id`'s secret in place (write-only; calls use it at once). Must be
/// confirmed: `confirm` = `yes`. Errors: at `secret` (the kind's rules), else `Refused`.
#[server(prefix = "/api", endpoint = "replace_connection_secret")]
pub async fn replace_connection_secret(
    id: i64,
    secret: String,
    confirm: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "replacing a secret sends the new one with every call from now on; the old one is deleted",
        )?;
        if secret.trim().is_empty() {
            return Err(ConsoleError::field("secret", "give the new secret"));
        }
        match state
            .graft
            .replace_connection_secret(&Actor::Person(person.name), id, &secret)
            .await
        {
            Ok(_) => {
                back_saying_saved("connection");
                Ok(())
            }
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("secret", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// What testing a connection found, for its row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestResult {
    /// The connection tested.
    pub id: i64,
    /// Whether the vendor took the credential.
    pub ok: bool,
    /// What happened, in a sentence.
    pub message: String,
}

/// Tests connection `id` with one harmless read of its vendor (issue 28.2). Errors:
/// `Refused` (no such connection, revoked).
#[server(prefix = "/api", endpoint = "test_connection")]
pub async fn test_connection(id: i64) -> ConsoleResult<TestResult> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let t = state
            .graft
            .test_connection(&Actor::Person(person.name), id)
            .await?;
        // without JavaScript the page is loaded again and shows the test on its row
        back_saying_saved("test");
        Ok(TestResult {
            id,
            ok: t.ok,
            message: t.message,
        })
    })
    .await
}

/// Confirms a vendor's connections at its new base URL (after a move to another origin).
/// Errors: `Refused` when none waits.
#[server(prefix = "/api", endpoint = "confirm_connections")]
pub async fn confirm_connections(slug: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .confirm_connections(&Actor::Person(person.name), &slug)
            .await?;
        back_saying_saved("connections");
        Ok(())
    })
    .await
}

/// Adds a connection; the secret is sealed and never shown again (write-only).
/// Errors: at `label` (empty, too long, taken), `kind`, `name` (missing or not a valid
/// header or parameter name), `secret` (missing, short, not `user:password` for basic)
/// or `vendor` (unknown, removed); the rules are
/// [`crate::service::connections::check_connection`]'s.
#[server(prefix = "/api", endpoint = "add_connection")]
pub async fn add_connection(
    vendor: String,
    label: String,
    kind: String,
    name: String,
    secret: String,
    default: Option<String>,
) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let name = Some(name.trim()).filter(|n| !n.is_empty());
        let secret = Some(secret.trim_end_matches(['\r', '\n'])).filter(|s| !s.is_empty());
        crate::service::connections::check_connection(label.trim(), &kind, name, secret)
            .map_err(|(field, m)| ConsoleError::field(field, m))?;
        use crate::service::connection_care::DefaultChoice;
        let choice = match default.as_deref() {
            Some("new") => Some(DefaultChoice::New),
            Some("current") => Some(DefaultChoice::Current),
            _ => None,
        };
        let c = match state
            .graft
            .add_connection_choosing(
                &Actor::Person(person.name.clone()),
                &vendor,
                label.trim(),
                &kind,
                name,
                secret,
                choice,
            )
            .await
        {
            Ok(c) => c,
            Err(ServiceError::Conflict(m)) => return Err(ConsoleError::field("label", m)),
            Err(ServiceError::Invalid(m)) if m.contains("say which one") || m.contains("no default") => {
                return Err(ConsoleError::field("default", m))
            }
            Err(ServiceError::VendorNotFound(m) | ServiceError::Invalid(m)) => {
                return Err(ConsoleError::field("vendor", m))
            }
            Err(e) => return Err(e.into()),
        };
        tracing::info!(connection = c.id, vendor = %c.vendor, by = %person.name, "connection added in the console");
        back_saying_saved("connection");
        Ok(())
    })
    .await
}

/// Revokes a connection; the tools whose calls use it are demoted in every working set
/// (cause `connection_revoked`, SPEC §5). Must be confirmed: `confirm` = `yes`.
/// Errors: `Refused` (not confirmed, no such connection, revoked already).
#[server(prefix = "/api", endpoint = "revoke_connection")]
pub async fn revoke_connection(id: i64, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "revoking a connection fails the calls that use it and demotes their tools",
        )?;
        state
            .graft
            .revoke_connection(&Actor::Person(person.name), id)
            .await?;
        Ok(())
    })
    .await
}
