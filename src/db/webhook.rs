//! The installation's outgoing webhook (issue 28.3): at most one row.

use super::{DbResult, Pool};
use crate::domain::notify::Format;
use crate::{execute, on_db};
use sqlx::FromRow;

/// The webhook as set (`webhook_settings`).
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct WebhookRow {
    /// Where notices are posted as it may be shown (`domain::notify::shown_url`); the
    /// whole URL when `url_ciphertext` is empty (a row set before URLs were sealed).
    pub url: String,
    /// The whole URL, sealed with Graft's key (it can hold a token); empty in a row set
    /// before URLs were sealed.
    pub url_ciphertext: String,
    /// The signing secret, sealed with Graft's key.
    pub secret_ciphertext: String,
    #[sqlx(try_from = "String")]
    pub format: Format,
    /// Failed calls of one vendor within 5 minutes that make a notice.
    pub error_threshold: i64,
    /// When it was set (ms since the epoch).
    pub changed_at: i64,
    /// Who set it.
    pub changed_by: String,
}

/// The webhook, if one is set.
pub async fn select_webhook(pool: &Pool) -> DbResult<Option<WebhookRow>> {
    on_db!(pool, |e| {
        sqlx::query_as(
        "SELECT url, url_ciphertext, secret_ciphertext, format, error_threshold, changed_at, changed_by \
         FROM webhook_settings WHERE id = 1"
    )
    .fetch_optional(e)
    .await
    })
}

/// Sets the webhook (replacing the one set before).
pub async fn upsert_webhook(pool: &Pool, w: &WebhookRow) -> DbResult<()> {
    execute!(
        pool,
        "INSERT INTO webhook_settings (id, url, url_ciphertext, secret_ciphertext, format, error_threshold, changed_at, changed_by) \
         VALUES (1, $1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET url = excluded.url, \
         url_ciphertext = excluded.url_ciphertext, \
         secret_ciphertext = excluded.secret_ciphertext, format = excluded.format, \
         error_threshold = excluded.error_threshold, changed_at = excluded.changed_at, \
         changed_by = excluded.changed_by",
        &w.url,
        &w.url_ciphertext,
        &w.secret_ciphertext,
        w.format.as_str(),
        w.error_threshold,
        w.changed_at,
        &w.changed_by
    )?;
    Ok(())
}

/// Removes the webhook; whether one was set.
pub async fn delete_webhook(pool: &Pool) -> DbResult<bool> {
    Ok(execute!(pool, "DELETE FROM webhook_settings WHERE id = 1")? > 0)
}

/// Seals the URL of a row set before URLs were sealed: `url` becomes `shown` and
/// `url_ciphertext` `sealed`, only while the row still has no sealed URL (another
/// instance may have done it first). Whether this call did it.
pub async fn seal_webhook_url(pool: &Pool, shown: &str, sealed: &str) -> DbResult<bool> {
    Ok(execute!(
        pool,
        "UPDATE webhook_settings SET url = $1, url_ciphertext = $2 \
         WHERE id = 1 AND url_ciphertext = ''",
        shown,
        sealed
    )? > 0)
}
