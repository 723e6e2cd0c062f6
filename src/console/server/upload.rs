//! Uploading an OpenAPI document from the console's Vendors page (SPEC §6): a
//! multipart form, read within a cap, imported, and its summary shown.

use super::session::{person_of, Flash, PendingImport};
use super::ConsoleState;
use crate::console::server_fns::{import_text, said, summary_target, MAX_UPLOAD_BYTES};
use crate::console::words::ImportSummary;
use crate::service::users::Person;
use axum::extract::{Multipart, State};
use axum::response::{IntoResponse, Redirect, Response};
use http::header;
use tower_sessions::Session;

/// The header the hydrated upload form sends: `events` asks for the import's progress
/// as server-sent events ([`import_events`]); any other value for the summary's address
/// as text.
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
    // the hydrated page sends the form itself (to show the bytes sent and the import's
    // progress) and asks for the summary's address as text or as the last event, since a
    // request from a script follows redirects itself
    let answer = headers.get(UPLOAD_HEADER);
    let events = answer.is_some_and(|v| v == "events");
    let as_text = answer.is_some();
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let mut vendor = String::new();
    let upload = read_upload(form, &mut vendor).await;
    if events {
        return import_events(state, person, vendor, upload);
    }
    let target = upload_target(&state, &person, &vendor, upload, &mut |_, _| {}).await;
    go_to(&target, as_text)
}

/// The page an upload leads to: the summary of its import (`/vendors?import=…`), or its
/// preview (`/vendors?preview=…`); a refused upload gets a failure summary.
async fn upload_target(
    state: &ConsoleState,
    person: &Person,
    vendor: &str,
    upload: Result<Upload, String>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> String {
    let upload = match upload {
        Ok(u) => u,
        Err(e) => return summary_target(state, person, vendor, Err(e)),
    };
    if upload.preview {
        return preview_target(state, person, vendor, upload, progress).await;
    }
    let result = import_text(
        &state.graft,
        person,
        vendor,
        &upload.text,
        upload.base_url.as_deref(),
        progress,
    )
    .await;
    summary_target(state, person, vendor, result)
}

/// The import as server-sent events (issue 28.11): `progress` events with
/// `{"done": n, "total": m}` (operations planned of the document's, at most one per
/// percent), then one `done` event whose data is the page to show (as
/// [`upload_target`]). The import runs in its own task: a person who closes the tab
/// does not cut it in half (it is one transaction either way).
fn import_events(
    state: ConsoleState,
    person: Person,
    vendor: String,
    upload: Result<Upload, String>,
) -> Response {
    use axum::response::sse::{Event, Sse};
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Event>(128);
    tokio::spawn(async move {
        let ticks = tx.clone();
        let mut shown = None;
        let mut progress = move |done: usize, total: usize| {
            let percent = (done * 100).checked_div(total).unwrap_or(100);
            if shown != Some(percent) {
                shown = Some(percent);
                let data = serde_json::json!({"done": done, "total": total}).to_string();
                // a slow reader misses a tick, never the end
                let _ = ticks.try_send(Event::default().event("progress").data(data));
            }
        };
        let target = upload_target(&state, &person, &vendor, upload, &mut progress).await;
        let _ = tx.send(Event::default().event("done").data(target)).await;
    });
    let stream = futures::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|e| e.map(Ok::<_, std::convert::Infallible>))
    });
    // a comment every 15 s while the import writes, so no proxy cuts a quiet stream
    Sse::new(stream)
        .keep_alive(
            axum::response::sse::KeepAlive::new().interval(std::time::Duration::from_secs(15)),
        )
        .into_response()
}

/// A redirect to `target`, or (`as_text`, a script's request) `target` as text.
fn go_to(target: &str, as_text: bool) -> Response {
    if as_text {
        ([(header::CONTENT_TYPE, "text/plain")], target.to_string()).into_response()
    } else {
        Redirect::to(target).into_response()
    }
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
async fn preview_target(
    state: &ConsoleState,
    person: &Person,
    vendor: &str,
    upload: Upload,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> String {
    let actor = crate::service::Actor::Person(person.name.clone());
    let report = state
        .graft
        .preview_import(
            &actor,
            vendor,
            &upload.text,
            upload.base_url.as_deref(),
            progress,
        )
        .await;
    let summary = match report {
        Ok(r) => ImportSummary::from(r),
        Err(e) => return summary_target(state, person, vendor, Err(said(e))),
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
    format!("/vendors?preview={id}")
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
