//! The installation's settings in the console (issue 28.3): the team's webhook.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{back_saying_saved, signed_in, with_status, ConsoleError};
#[cfg(feature = "ssr")]
use crate::service::{Actor, ServiceError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The webhook as the Settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookItem {
    /// Where notices are posted, as `domain::notify::shown_url` shows it (no token).
    pub url: String,
    /// The whole URL, only when the person asked to see it.
    pub whole_url: Option<String>,
    /// `graft` or `slack`.
    pub format: String,
    /// Failed calls of one vendor within 5 minutes that make a notice.
    pub error_threshold: i64,
    /// When it was set (ms) and by whom.
    pub changed_at: i64,
    pub changed_by: String,
    /// This server's last delivery: when (ms), and what happened.
    pub last_delivery: Option<(i64, String)>,
    /// The signing secret, only when the person asked to see it.
    pub secret: Option<String>,
}

/// The Settings page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsData {
    /// The webhook, if one is set.
    pub webhook: Option<WebhookItem>,
    /// The window the threshold counts over (minutes).
    pub window_minutes: u32,
    /// The server's clock (ms).
    pub now: i64,
}

/// The settings; with `reveal`, the webhook's whole URL and secret too (a person copies
/// the secret to the receiver). Errors: `SignedOut`.
#[server(prefix = "/api", endpoint = "settings")]
pub async fn settings(reveal: bool) -> ConsoleResult<SettingsData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let graft = &state.graft;
        let webhook = match graft.webhook().await? {
            Some(w) => Some(WebhookItem {
                url: w.url,
                whole_url: if reveal {
                    graft.webhook_url().await?
                } else {
                    None
                },
                format: w.format.as_str().to_string(),
                error_threshold: w.error_threshold,
                changed_at: w.changed_at,
                changed_by: w.changed_by,
                last_delivery: w.last_delivery,
                secret: if reveal {
                    graft.webhook_secret().await?
                } else {
                    None
                },
            }),
            None => None,
        };
        Ok(SettingsData {
            webhook,
            window_minutes: crate::service::notify::ERROR_WINDOW_MINUTES,
            now: graft.clock_now(),
        })
    })
    .await
}

/// Sets the webhook: `url` (empty keeps the one set), `format` (`graft` or `slack`), `error_threshold`, and the
/// secret: `secret` when given (`whsec_…`), a new one when `new_secret` is `on`, else
/// the one set (a new one when none is; the page shows it on request). Errors: at `url`, `secret` or
/// `error_threshold`; `Refused` otherwise.
#[server(prefix = "/api", endpoint = "set_webhook")]
pub async fn set_webhook(
    url: String,
    format: String,
    error_threshold: String,
    secret: Option<String>,
    new_secret: Option<String>,
) -> ConsoleResult<()> {
    // what the form held is shown again after a plain form post's error (not the secret)
    let typed = [
        ("url", url.as_str()),
        ("format", format.as_str()),
        ("error_threshold", error_threshold.as_str()),
    ];
    with_status(async {
        webhook_set(&url, &format, &error_threshold, secret, new_secret)
            .await
            .map_err(|e| e.typed(&typed))
    })
    .await
}

/// [`set_webhook`]'s work, before its errors are given what the form held.
#[cfg(feature = "ssr")]
async fn webhook_set(
    url: &str,
    format: &str,
    error_threshold: &str,
    secret: Option<String>,
    new_secret: Option<String>,
) -> ConsoleResult<()> {
    use crate::domain::notify::Format;
    use crate::service::notify::SecretChoice;
    let (state, person) = signed_in().await?;
    let format = Format::parse(format.trim())
        .ok_or_else(|| ConsoleError::field("format", "choose graft or slack"))?;
    let threshold: i64 = error_threshold.trim().parse().map_err(|_| {
        ConsoleError::field(
            "error_threshold",
            "a whole number of failed calls, 1 to 1000",
        )
    })?;
    let choice = match (secret.as_deref().map(str::trim), new_secret.as_deref()) {
        (Some(s), _) if !s.is_empty() => SecretChoice::Given(s.to_string()),
        (_, Some("on" | "true")) => SecretChoice::New,
        _ => SecretChoice::Keep,
    };
    match state
        .graft
        .set_webhook(&Actor::Person(person.name), url, format, threshold, choice)
        .await
    {
        Ok(_) => {
            back_saying_saved("webhook");
            Ok(())
        }
        Err(ServiceError::Invalid(m)) => {
            let field = if m.contains("secret") {
                "secret"
            } else if m.contains("threshold") {
                "error_threshold"
            } else {
                "url"
            };
            Err(ConsoleError::field(field, m))
        }
        Err(e) => Err(e.into()),
    }
}

/// Removes the webhook. Errors: `SignedOut`.
#[server(prefix = "/api", endpoint = "clear_webhook")]
pub async fn clear_webhook() -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        state
            .graft
            .clear_webhook(&Actor::Person(person.name))
            .await?;
        back_saying_saved("webhook-removed");
        Ok(())
    })
    .await
}

/// Sends a test notice now and says what the receiver answered. Errors: `Refused` when
/// no webhook is set.
#[server(prefix = "/api", endpoint = "test_webhook")]
pub async fn test_webhook() -> ConsoleResult<String> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let said = state
            .graft
            .test_webhook(&Actor::Person(person.name))
            .await?;
        back_saying_saved("test");
        Ok(match said {
            Ok(status) => format!("Delivered: the receiver answered {status}."),
            Err(why) => format!("Not delivered: {why}."),
        })
    })
    .await
}
