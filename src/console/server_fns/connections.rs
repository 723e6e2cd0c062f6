//! A vendor's connections in the console (issue 28.2): its default, a secret replaced in
//! place, a connection tested with one harmless read.

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
