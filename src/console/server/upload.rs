//! Uploading an OpenAPI document from the console's Vendors page (SPEC §6): a
//! multipart form, read within a cap, imported, and its summary shown.

use super::session::{person_of, Flash};
use super::ConsoleState;
use crate::console::server_fns::MAX_UPLOAD_BYTES;
use crate::console::words::ImportSummary;
use crate::service::users::Person;
use crate::service::Graft;
use axum::extract::{Multipart, State};
use axum::response::{IntoResponse, Redirect, Response};
use http::header;
use tower_sessions::Session;

/// The header the hydrated upload form sends to get the summary's address as text.
pub const UPLOAD_HEADER: &str = "x-graft-upload";

/// Largest request to `/vendors/import`: twice the largest document, so a document a
/// little too big is read whole and answered with a summary rather than a reset.
pub const MAX_UPLOAD_REQUEST: usize = 2 * MAX_UPLOAD_BYTES;

/// `POST /vendors/import` (multipart: `vendor`, optional `base_url`, `document`): imports
/// every operation of an uploaded OpenAPI document as tools (one transaction: all or
/// nothing), then shows the summary on `/vendors?import=…`.
pub async fn import_upload(
    State(state): State<ConsoleState>,
    session: Session,
    headers: http::HeaderMap,
    form: Multipart,
) -> Response {
    // the hydrated page sends the form itself (to show the bytes sent) and asks for the
    // summary's address as text, since a request from a script follows redirects itself
    let as_text = headers.contains_key(UPLOAD_HEADER);
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let mut vendor = String::new();
    let result = read_and_import(&state.graft, &person, form, &mut vendor).await;
    summary_page(&state, &person, &vendor, as_text, result)
}

/// Reads the upload form (`vendor` into `vendor`, `base_url`, `document`) and imports the
/// document. Errors: why nothing was imported, in words for the summary.
pub(crate) async fn read_and_import(
    graft: &Graft,
    person: &Person,
    mut form: Multipart,
    vendor: &mut String,
) -> Result<crate::service::ImportReport, String> {
    let (mut base_url, mut document) = (String::new(), None);
    while let Some(field) = form.next_field().await.map_err(|e| e.body_text())? {
        let name = field.name().unwrap_or_default().to_string();
        let bytes = field.bytes().await.map_err(|e| e.body_text())?;
        match name.as_str() {
            "vendor" => *vendor = String::from_utf8_lossy(&bytes).trim().to_string(),
            "base_url" => base_url = String::from_utf8_lossy(&bytes).trim().to_string(),
            "document" => document = Some(bytes),
            _ => {}
        }
    }
    if document
        .as_ref()
        .is_some_and(|d| d.len() > MAX_UPLOAD_BYTES)
    {
        return Err(format!(
            "the document is larger than {} MiB",
            MAX_UPLOAD_BYTES >> 20
        ));
    }
    let text = match document.as_deref().map(std::str::from_utf8) {
        Some(Ok(t)) if !t.trim().is_empty() => t,
        Some(Ok(_)) | None => return Err("choose an OpenAPI document to upload".into()),
        Some(Err(_)) => return Err("the document is not UTF-8 text (JSON or YAML)".into()),
    };
    let base = Some(base_url.as_str()).filter(|b| !b.is_empty());
    match graft
        .import_openapi_by(
            &crate::service::Actor::Person(person.name.clone()),
            vendor,
            text,
            base,
            &mut |_, _| {},
        )
        .await
    {
        Ok(r) => {
            tracing::info!(vendor = %r.vendor, imported = r.imported, by = %person.name, "OpenAPI import in the console");
            // the new tools' embeddings, without holding the page (a search meanwhile
            // computes what it needs itself)
            let g = graft.clone();
            tokio::spawn(async move {
                if let Err(e) = g.embed_toolbox(&mut |_, _| {}).await {
                    tracing::warn!(error = ?e, "embedding the imported tools failed");
                }
            });
            Ok(r)
        }
        Err(crate::service::ServiceError::Internal(e)) => {
            tracing::error!(error = ?e, "import failed");
            Err("internal error; see the server log".into())
        }
        Err(e) => Err(e.to_string()),
    }
}

pub(crate) fn summary_page(
    state: &ConsoleState,
    person: &Person,
    vendor: &str,
    as_text: bool,
    result: Result<crate::service::ImportReport, String>,
) -> Response {
    let summary = match result {
        Ok(r) => ImportSummary::from(r),
        Err(e) => ImportSummary {
            vendor: vendor.to_string(),
            operations: 0,
            imported: 0,
            renamed: vec![],
            skipped: vec![],
            withheld: vec![],
            updated: vec![],
            unchanged: 0,
            restored: vec![],
            retired: vec![],
            kept: vec![],
            writes_kept: vec![],
            demoted: 0,
            brought_back: false,
            moved: vec![],
            adopted_base_url: None,
            origin_moved: None,
            error: Some(e),
        },
    };
    let id = state
        .flash
        .put(&person.name, Flash::Import(Box::new(summary)));
    let target = format!("/vendors?import={id}");
    if as_text {
        ([(header::CONTENT_TYPE, "text/plain")], target).into_response()
    } else {
        Redirect::to(&target).into_response()
    }
}
