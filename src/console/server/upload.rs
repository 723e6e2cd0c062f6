//! Uploading an OpenAPI document from the console's Vendors page (SPEC §6): a
//! multipart form, read within a cap, imported, and its summary shown.

use super::session::{person_of, Flash, PendingImport};
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

/// `POST /vendors/import` (multipart: `vendor`, optional `base_url`, `document`, and
/// `preview` for a preview): imports every operation of an uploaded OpenAPI document as
/// tools (one transaction: all or nothing), then shows the summary on
/// `/vendors?import=…`; or shows what it would do on `/vendors?preview=…`, where the
/// person applies it (issue 28.11).
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
    let upload = match read_upload(form, &mut vendor).await {
        Ok(u) => u,
        Err(e) => return summary_page(&state, &person, &vendor, as_text, Err(e)),
    };
    if upload.preview {
        return preview_page(&state, &person, &vendor, upload, as_text).await;
    }
    let result = import_text(
        &state.graft,
        &person,
        &vendor,
        &upload.text,
        upload.base_url.as_deref(),
    )
    .await;
    summary_page(&state, &person, &vendor, as_text, result)
}

/// An upload form as read.
pub(crate) struct Upload {
    /// The document's text.
    pub text: String,
    /// The base URL given, if any.
    pub base_url: Option<String>,
    /// The person asked for a preview (`preview=1`, the form's Preview button).
    pub preview: bool,
}

/// Previews `upload` ([`Graft::preview_import`]) and keeps it for the person, who
/// applies it from `/vendors?preview=…` (issue 28.11); a refused document gets the
/// failure summary, as an import would.
async fn preview_page(
    state: &ConsoleState,
    person: &Person,
    vendor: &str,
    upload: Upload,
    as_text: bool,
) -> Response {
    let actor = crate::service::Actor::Person(person.name.clone());
    let report = state
        .graft
        .preview_import(&actor, vendor, &upload.text, upload.base_url.as_deref())
        .await;
    let summary = match report {
        Ok(r) => ImportSummary::from(r),
        Err(e) => return summary_page(state, person, vendor, as_text, Err(said(e))),
    };
    let id = state.flash.put(
        &person.name,
        Flash::Preview(Box::new(PendingImport {
            vendor: vendor.to_string(),
            base_url: upload.base_url,
            text: upload.text,
            summary,
        })),
    );
    let target = format!("/vendors?preview={id}");
    if as_text {
        ([(header::CONTENT_TYPE, "text/plain")], target).into_response()
    } else {
        Redirect::to(&target).into_response()
    }
}

/// A service error in words for the summary (an internal one only in the log).
fn said(e: crate::service::ServiceError) -> String {
    match e {
        crate::service::ServiceError::Internal(e) => {
            tracing::error!(error = ?e, "import failed");
            "internal error; see the server log".into()
        }
        e => e.to_string(),
    }
}

/// Reads the upload form (`vendor` into `vendor`, `base_url`, `document`, `preview`).
/// Errors: why nothing can be imported, in words for the summary.
pub(crate) async fn read_upload(
    mut form: Multipart,
    vendor: &mut String,
) -> Result<Upload, String> {
    let (mut base_url, mut document, mut preview) = (String::new(), None, false);
    while let Some(field) = form.next_field().await.map_err(|e| e.body_text())? {
        let name = field.name().unwrap_or_default().to_string();
        let bytes = field.bytes().await.map_err(|e| e.body_text())?;
        match name.as_str() {
            "vendor" => *vendor = String::from_utf8_lossy(&bytes).trim().to_string(),
            "base_url" => base_url = String::from_utf8_lossy(&bytes).trim().to_string(),
            "document" => document = Some(bytes),
            "preview" => preview = !bytes.is_empty(),
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
        Some(Ok(t)) if !t.trim().is_empty() => t.to_string(),
        Some(Ok(_)) | None => return Err("choose an OpenAPI document to upload".into()),
        Some(Err(_)) => return Err("the document is not UTF-8 text (JSON or YAML)".into()),
    };
    Ok(Upload {
        text,
        base_url: Some(base_url).filter(|b| !b.is_empty()),
        preview,
    })
}

/// Imports `text` as vendor `vendor` for `person`, then embeds the new tools in the
/// background. Errors: why nothing was imported, in words.
pub(crate) async fn import_text(
    graft: &Graft,
    person: &Person,
    vendor: &str,
    text: &str,
    base_url: Option<&str>,
) -> Result<crate::service::ImportReport, String> {
    let actor = crate::service::Actor::Person(person.name.clone());
    let r = graft
        .import_openapi_by(&actor, vendor, text, base_url, &mut |_, _| {})
        .await
        .map_err(said)?;
    tracing::info!(vendor = %r.vendor, imported = r.imported, by = %person.name, "OpenAPI import in the console");
    // the new tools' embeddings, without holding the page (a search meanwhile computes
    // what it needs itself)
    let g = graft.clone();
    tokio::spawn(async move {
        if let Err(e) = g.embed_toolbox(&mut |_, _| {}).await {
            tracing::warn!(error = ?e, "embedding the imported tools failed");
        }
    });
    Ok(r)
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
            error: Some(e),
            ..Default::default()
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
