//! Imports in the console (issue 28.11): applying a previewed upload, restoring a
//! removed vendor from its stored document, and what an import leaves for the page that
//! follows it (its summary). The upload itself is a plain route
//! (`crate::console::server::import_upload`), since it is a multipart form.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{confirmed, signed_in, with_status, ConsoleError, Flash};
#[cfg(feature = "ssr")]
use crate::console::words::ImportSummary;
#[cfg(feature = "ssr")]
use crate::service::users::Person;
#[cfg(feature = "ssr")]
use crate::service::{Actor, Graft};
use leptos::prelude::*;

/// Largest OpenAPI document the console imports (Stripe's is about 4 MB).
pub const MAX_UPLOAD_BYTES: usize = 32 * 1024 * 1024;

/// Applies the upload previewed under `preview` (issue 28.11): the document as uploaded
/// is imported now (what it does is said again: the toolbox may have changed since the
/// preview), then the page shows the summary. Errors: `Refused` when the preview is gone
/// (applied, older than 10 minutes, another person's, or kept by another instance).
#[server(prefix = "/api", endpoint = "apply_import")]
pub async fn apply_import(preview: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        let Some(Flash::Preview(p)) = state.flash.take(&person.name, &preview) else {
            return Err(ConsoleError::Refused(
                "that preview is gone (applied already, or older than 10 minutes): upload the document again".into(),
            ));
        };
        let result = import_text(
            &state.graft,
            &person,
            &p.vendor,
            &p.text,
            p.base_url.as_deref(),
            &mut |_, _| {},
        )
        .await;
        let mut summary = summary_of(&p.vendor, result);
        let said = p.summary.headline();
        if summary.error.is_none() && summary.headline() != said {
            summary.differs_from_preview = Some(said);
        }
        leptos_axum::redirect(&put_summary(&state, &person, summary));
        Ok(())
    })
    .await
}

/// Discards the upload previewed under `preview` (issue 28.11): it can no longer be
/// applied; nothing else changes. Then the Vendors page. Errors: `SignedOut`.
#[server(prefix = "/api", endpoint = "discard_import")]
pub async fn discard_import(preview: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if let Some(Flash::Preview(p)) = state.flash.take(&person.name, &preview) {
            tracing::info!(vendor = %p.vendor, by = %person.name, "import preview discarded");
        }
        leptos_axum::redirect("/vendors");
        Ok(())
    })
    .await
}

/// Brings removed vendor `slug` back as it was ([`Graft::restore_vendor`], issue 28.11),
/// then the Vendors page says so. Must be confirmed: `confirm` = `yes`. Errors:
/// `Refused` (not removed, an MCP server).
#[server(prefix = "/api", endpoint = "restore_vendor")]
pub async fn restore_vendor(slug: String, confirm: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        confirmed(
            confirm.as_deref(),
            "restoring brings the vendor's tools back into search and calls",
        )?;
        state
            .graft
            .restore_vendor(&Actor::Person(person.name), &slug)
            .await?;
        leptos_axum::redirect(&format!(
            "/vendors?back={}",
            crate::console::words::segment(&slug)
        ));
        Ok(())
    })
    .await
}

#[cfg(feature = "ssr")]
/// A service error in words for the summary (an internal one only in the log).
pub(crate) fn said(e: crate::service::ServiceError) -> String {
    match e {
        crate::service::ServiceError::Internal(e) => {
            tracing::error!(error = ?e, "import failed");
            "internal error; see the server log".into()
        }
        e => e.to_string(),
    }
}

#[cfg(feature = "ssr")]
/// Imports `text` as vendor `vendor` for `person` (`progress(done, total)` as
/// [`Graft::import_openapi_by`] says it), then embeds the new tools in the background.
/// Errors: why nothing was imported, in words.
pub(crate) async fn import_text(
    graft: &Graft,
    person: &Person,
    vendor: &str,
    text: &str,
    base_url: Option<&str>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<crate::service::ImportReport, String> {
    let actor = crate::service::Actor::Person(person.name.clone());
    let r = graft
        .import_openapi_by(&actor, vendor, text, base_url, progress)
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

#[cfg(feature = "ssr")]
/// Keeps the summary of an import's `result` for `person`; the page that shows it.
pub(crate) fn summary_target(
    state: &crate::console::server::ConsoleState,
    person: &Person,
    vendor: &str,
    result: Result<crate::service::ImportReport, String>,
) -> String {
    put_summary(state, person, summary_of(vendor, result))
}

#[cfg(feature = "ssr")]
/// The summary of an import of `vendor`'s `result`.
fn summary_of(vendor: &str, result: Result<crate::service::ImportReport, String>) -> ImportSummary {
    match result {
        Ok(r) => ImportSummary::from(r),
        Err(e) => ImportSummary {
            vendor: vendor.to_string(),
            error: Some(e),
            ..Default::default()
        },
    }
}

#[cfg(feature = "ssr")]
/// Keeps `summary` for `person` (10 minutes, once); the page that shows it.
fn put_summary(
    state: &crate::console::server::ConsoleState,
    person: &Person,
    summary: ImportSummary,
) -> String {
    let id = state
        .flash
        .put(&person.name, Flash::Import(Box::new(summary)));
    format!("/vendors?import={id}")
}
