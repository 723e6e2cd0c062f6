//! `GET /healthz`: up or not for anyone; details (database, search mode, counts) only
//! with the metrics token (security review 32).

use super::auth;
use crate::service::Graft;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;
use std::sync::Arc;

/// What `/healthz` reads.
#[derive(Clone)]
pub(crate) struct HealthState {
    /// The service (the database check and counts).
    pub(crate) graft: Graft,
    /// `GRAFT_METRICS_TOKEN`.
    pub(crate) metrics_token: Option<Arc<str>>,
}

/// Whether a request carries `Authorization: Bearer <token>` for `token` (compared in
/// constant time).
pub(crate) fn has_metrics_token(headers: &http::HeaderMap, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return false;
    };
    match auth::bearer_token(headers.get(http::header::AUTHORIZATION)) {
        Some(Ok(given)) => {
            use sha2::Digest;
            // equal-length digests, compared without an early exit
            let (a, b) = (sha2::Sha256::digest(given), sha2::Sha256::digest(token));
            a.iter()
                .zip(b.iter())
                .fold(0u8, |acc, (x, y)| acc | (x ^ y))
                == 0
        }
        _ => false,
    }
}

/// `GET /healthz`: 200 `{"status":"ok","search":{"mode":"semantic"|"lexical","model":
/// ID|null}}` when the database answers, else 503 `{"status":"unavailable","reason":…}`
/// (issue 11.7). With `Authorization: Bearer <GRAFT_METRICS_TOKEN>` it adds `tools` (the
/// toolbox's size) and `streams` (open change channels: 2025-era sessions' notifiers and
/// 2026-era listen streams), which anonymous callers do not see (security review 32.21).
pub(crate) async fn healthz(
    State(state): State<HealthState>,
    headers: http::HeaderMap,
) -> impl IntoResponse {
    let graft = &state.graft;
    match graft.toolbox_size().await {
        Ok(n) => {
            let mut body = json!({"status": "ok", "search": graft.search_status()});
            if has_metrics_token(&headers, state.metrics_token.as_deref()) {
                body["tools"] = json!(n);
                body["streams"] = json!(graft.hub().channels());
            }
            (http::StatusCode::OK, Json(body))
        }
        Err(e) => {
            tracing::error!(error = ?e, "health check failed");
            let reason = match &e {
                crate::service::ServiceError::Unavailable(cause) => {
                    format!("the database is unavailable: {cause}")
                }
                _ => "the database failed a query".to_string(),
            };
            (
                http::StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable", "reason": reason})),
            )
        }
    }
}
