//! MCP vendors (SPEC §10.2, issue 27): adding one, reading its server's tools/list into
//! the toolbox (at its addition, on its server's list_changed, on a timer and on demand),
//! and its server's state.

use super::import::{
    insert_drafted_tool, note_update, retire_in, update_from_source, ImportReport,
};
use super::{unique_or, Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, VendorRow};
use crate::domain::audit::AuditAction;
use crate::domain::mcp_vendor::{plan_list, split_command, Server};
use crate::domain::names::VendorSlug;
use crate::domain::Cause;
pub use crate::proxy::mcp::ServerState;
use std::collections::{HashMap, HashSet};

impl Graft {
    /// Adds MCP vendor `slug` (SPEC §10.2) whose server is `server` (a remote server's
    /// URL; a local server's command, which only a person gives: never through MCP),
    /// then reads its tools/list. The vendor is kept when the read fails (its server is
    /// down, asks for authorization or needs a connection first): the second value says
    /// why, and [`Graft::refresh_mcp_vendor`] reads it again. A removed vendor's slug
    /// brings that vendor back as this MCP vendor. Errors: `Invalid` (slug, name, URL,
    /// command or directory), `Conflict` (the slug is taken).
    pub async fn add_mcp_vendor(
        &self,
        actor: &Actor,
        slug: &str,
        display_name: Option<&str>,
        server: &Server,
    ) -> ServiceResult<(VendorRow, Result<ImportReport, String>)> {
        let slug = VendorSlug::parse(slug).map_err(ServiceError::Invalid)?;
        let (url, command, cwd) = checked_server(server)?;
        let name = display_name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(slug.as_str());
        super::check_vendor_name(name).map_err(ServiceError::Invalid)?;
        let now = self.now();
        let mut tx = self.write_tx().await?;
        match db::select_vendor_by_slug(self.pool(), slug.as_str()).await? {
            Some(old) if old.removed_at.is_some() => {
                db::update_vendor_removed(&mut tx, old.id, None).await?;
                if old.kind != "mcp" {
                    db::update_vendor_tools_retired(&mut tx, old.id, now).await?;
                }
                db::update_vendor(&mut tx, old.id, Some(name), None).await?;
                db::update_vendor_mcp_server(
                    &mut tx,
                    old.id,
                    url.as_deref(),
                    command.as_deref(),
                    cwd.as_deref(),
                )
                .await?;
            }
            Some(_) => {
                return Err(ServiceError::Conflict(format!(
                    "a vendor {:?} exists already",
                    slug.as_str()
                )))
            }
            None => {
                db::insert_mcp_vendor(
                    &mut tx,
                    slug.as_str(),
                    name,
                    url.as_deref(),
                    command.as_deref(),
                    cwd.as_deref(),
                    now,
                )
                .await
                .map_err(|e| {
                    unique_or(e, ServiceError::Conflict, || {
                        format!("a vendor {:?} exists already", slug.as_str())
                    })
                })?;
            }
        }
        tx.commit().await?;
        tracing::info!(vendor = slug.as_str(), by = %actor.label(), url = ?url, command = ?command, "MCP vendor added");
        let detail = match (&url, &command) {
            (Some(u), _) => format!("added at {u}"),
            (None, Some(c)) => format!("added as the local command {c}"),
            (None, None) => "added".to_string(),
        };
        self.audit(actor, AuditAction::VendorMcp, slug.as_str(), Some(&detail))
            .await?;
        self.state_changed().await;
        let read = self
            .refresh_mcp_vendor(actor, slug.as_str())
            .await
            .map_err(|e| e.to_string());
        Ok((self.vendor(slug.as_str()).await?, read))
    }

    /// Reads MCP vendor `slug`'s tools/list (all pages) into the toolbox, in one
    /// transaction (issue 27.2): a new tool is added (its name client-safe, `<vendor>__`
    /// `<name>` ≤ 52 characters, collisions resolved deterministically); a changed one
    /// gets a new version, its approvals back to pending when what it does changed (its
    /// description, or a read that became a write); a tool gone from the list is retired
    /// and demoted from every working set with cause `upstream_removed`, and one that is
    /// back is restored; agents whose working set changed get list_changed. The read is
    /// kept in the vendor's import history, and when it fails, the reason on the vendor
    /// (its tools stay as they were). Errors: `VendorNotFound`, `Invalid` (not an MCP
    /// vendor, removed, disabled, or its server could not be read).
    pub async fn refresh_mcp_vendor(
        &self,
        actor: &Actor,
        slug: &str,
    ) -> ServiceResult<ImportReport> {
        let v = self.live_vendor(slug).await?;
        if v.kind != "mcp" {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is not an MCP vendor: import its OpenAPI document again instead"
            )));
        }
        if v.disabled_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is disabled: enable it first"
            )));
        }
        let spec = match self.upstream_spec(slug).await? {
            Ok(spec) => spec,
            Err(answer) => {
                let why = match answer {
                    super::RunAnswer::Err { message, .. } => message,
                    _ => "its server cannot be reached".into(),
                };
                self.note_mcp_read(v.id, None, Some(&why)).await;
                return Err(ServiceError::Invalid(why));
            }
        };
        let listed = match self.inner.upstreams.list_tools(&spec).await {
            Ok(l) => l,
            Err(e) => {
                let why = crate::proxy::redact::redact(
                    &format!("its server's tools/list could not be read: {e}"),
                    &spec.secrets(),
                );
                self.note_mcp_read(v.id, None, Some(&why)).await;
                return Err(ServiceError::Invalid(why));
            }
        };
        self.sync_listed(actor, &v, &listed).await
    }

    /// Stores what a tools/list said (see [`Graft::refresh_mcp_vendor`]).
    async fn sync_listed(
        &self,
        actor: &Actor,
        v: &VendorRow,
        listed: &[serde_json::Value],
    ) -> ServiceResult<ImportReport> {
        let slug = VendorSlug::parse(&v.slug).map_err(ServiceError::Invalid)?;
        let _one_at_a_time = self.inner.mcp_sync.lock().await;
        let current = db::select_vendor_tools(self.pool(), &v.slug).await?;
        let known: HashMap<String, String> = current
            .iter()
            .filter(|t| t.first_author == "import")
            .filter_map(|t| Some((t.operation_id.clone()?, t.name.clone())))
            .collect();
        let taken: HashSet<String> = current.iter().map(|t| t.name.clone()).collect();
        let plan = plan_list(&slug, listed, &known, &|n| taken.contains(n));
        let now = self.now();
        let mut tx = self.write_tx().await?;
        for t in &plan.tools {
            insert_drafted_tool(
                &mut tx,
                &slug,
                v.id,
                t,
                "a server's tool got a bad name",
                now,
            )
            .await?;
        }
        let mut report = ImportReport {
            vendor: v.slug.clone(),
            operations: plan.total,
            imported: plan.tools.len(),
            renamed: plan.renamed.clone(),
            skipped: plan.skipped.clone(),
            ..Default::default()
        };
        let by_name: HashMap<&str, &db::ToolRow> =
            current.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut notify: Vec<i64> = Vec::new();
        // (agent id, tool name) of each grant a changed tool asks again
        let mut asked_again: Vec<(i64, String)> = Vec::new();
        for d in &plan.existing {
            let Some(old) = by_name.get(d.name.as_str()) else {
                continue;
            };
            // a server cannot turn its own write into a read (that would end the
            // approvals and denials people gave): it stays a write until a person says
            let mut d = d.clone();
            let was_write = crate::domain::approval::writes(&old.method, old.read_only_hint);
            if was_write && d.hints.read_only_hint && old.retired_at.is_none() {
                d.hints.read_only_hint = false;
                d.hints.idempotent_hint = old.idempotent_hint;
                d.hints.destructive_hint = old.destructive_hint;
                report.writes_kept.push(old.name.clone());
            }
            let update = update_from_source(&mut tx, old, &d, now).await?;
            note_update(&mut report, &mut notify, &mut asked_again, old, update);
        }
        // tools the server no longer lists (a listed tool Graft skipped now keeps its
        // tool as it is)
        let listed_names: HashSet<&str> = listed
            .iter()
            .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str))
            .collect();
        for t in current.iter().filter(|t| {
            t.retired_at.is_none()
                && t.first_author == "import"
                && t.operation_id
                    .as_deref()
                    .is_some_and(|o| !listed_names.contains(o))
        }) {
            retire_in(
                &mut tx,
                t,
                Cause::UpstreamRemoved,
                actor,
                now,
                &mut report,
                &mut notify,
            )
            .await?;
        }
        db::update_vendor_mcp_read(&mut tx, v.id, Some(now), None).await?;
        report.asked_again = super::import::asked_again_by_name(self.pool(), asked_again).await?;
        let changed =
            report.imported + report.updated.len() + report.retired.len() + report.restored.len()
                > 0;
        // a read that changed nothing is not kept in the import history (the timer reads
        // every ten minutes)
        if changed {
            let summary =
                serde_json::to_string(&report).map_err(|e| ServiceError::Internal(e.into()))?;
            db::insert_import(&mut tx, v.id, &actor.label(), now, &summary).await?;
        }
        tx.commit().await?;
        if changed {
            tracing::info!(vendor = %v.slug, by = %actor.label(), new = report.imported, updated = report.updated.len(), retired = report.retired.len(), "an MCP vendor's tools changed");
            self.toolbox_changed().await;
        }
        self.state_changed().await;
        notify.sort_unstable();
        notify.dedup();
        self.changed(&notify).await;
        let why = "its server changed what its tools' calls do";
        self.approvals_asked_again(&v.slug, report.approvals_reset, why)
            .await;
        Ok(report)
    }

    /// Notes a read of an MCP vendor's server: when it worked (`at`), or what went wrong.
    async fn note_mcp_read(&self, vendor_id: i64, at: Option<i64>, error: Option<&str>) {
        let noted = async {
            let mut tx = self.write_tx().await?;
            db::update_vendor_mcp_read(&mut tx, vendor_id, at, error).await?;
            tx.commit().await
        };
        if let Err(e) = noted.await {
            tracing::warn!(error = ?e, vendor_id, "could not note an MCP vendor's read");
        }
    }

    /// Reads again the tools/list of every live MCP vendor not read within the refresh
    /// interval (GRAFT_MCP_REFRESH; the server's background task, issue 27.2); returns
    /// how many were read. A failure is noted on its vendor and logged.
    pub async fn refresh_mcp_vendors_due(&self) -> ServiceResult<usize> {
        let every = self.inner.upstreams.limits().refresh.as_millis() as i64;
        let now = self.now();
        let mut read = 0;
        for v in self.vendors().await? {
            let due = v
                .mcp_refreshed_at
                .is_none_or(|at| now - at >= every || at > now);
            if v.kind == "mcp" && v.disabled_at.is_none() && due {
                read += 1;
                if let Err(e) = self.refresh_mcp_vendor(&Actor::Rule, &v.slug).await {
                    tracing::warn!(vendor = %v.slug, error = %e, "an MCP vendor's tools could not be read");
                }
            }
        }
        Ok(read)
    }

    /// Reads again the tools/list of the MCP vendor whose server said its list changed
    /// (`notifications/tools/list_changed`). A failure is noted and logged.
    pub async fn mcp_list_changed(&self, vendor_id: i64) {
        let vendors = match self.vendors().await {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "vendors could not be read");
                return;
            }
        };
        if let Some(v) = vendors
            .iter()
            .find(|v| v.id == vendor_id && v.kind == "mcp" && v.disabled_at.is_none())
        {
            if let Err(e) = self.refresh_mcp_vendor(&Actor::Rule, &v.slug).await {
                tracing::warn!(vendor = %v.slug, error = %e, "an MCP vendor's changed tools could not be read");
            }
        }
    }

    /// The limits of MCP vendors' servers in force (issue 27).
    pub fn mcp_limits(&self) -> crate::proxy::mcp::UpstreamLimits {
        self.inner.upstreams.limits()
    }

    /// Vendor ids whose server announced a changed tool list (for the server's task
    /// that reads them again).
    pub fn mcp_changes(&self) -> tokio::sync::broadcast::Receiver<i64> {
        self.inner.upstreams.changes()
    }

    /// The state of an MCP vendor's server in this process (issue 27.5): running (since
    /// when, its process, its protocol version and name), restarting (the last error,
    /// when it is tried again) or stopped.
    pub fn mcp_server_state(&self, vendor_id: i64) -> ServerState {
        self.inner.upstreams.state(vendor_id)
    }

    /// Stops this process's MCP servers whose vendor another process disabled, removed,
    /// or gave another server or other connections (they start again, as they are now,
    /// at the next need).
    pub(crate) async fn check_mcp_servers(&self) {
        for (vendor_id, fingerprint) in self.inner.upstreams.running_servers() {
            let current = match db::select_vendor_by_id(self.pool(), vendor_id).await {
                Ok(Some(v)) if v.kind == "mcp" && v.disabled_at.is_none() => {
                    match self.upstream_spec(&v.slug).await {
                        Ok(Ok(spec)) => Some(spec.fingerprint()),
                        _ => None,
                    }
                }
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(error = ?e, vendor_id, "cannot check an MCP vendor's server");
                    continue;
                }
            };
            if current.as_deref() != Some(fingerprint.as_str()) {
                tracing::info!(
                    vendor_id,
                    "an MCP vendor changed in another process: its server here stops"
                );
                self.stop_mcp_server(vendor_id).await;
            }
        }
    }

    /// Stops every MCP server this process started (Graft is stopping).
    pub async fn stop_mcp_servers(&self) {
        self.inner.upstreams.stop_all().await;
    }
}

/// A server as stored: `(url, command as a JSON array, cwd)`. Errors: `Invalid` for a
/// URL that is not http(s) with a host, an empty or shell-like command, a working
/// directory that is not an absolute path to a directory.
fn checked_server(
    server: &Server,
) -> ServiceResult<(Option<String>, Option<String>, Option<String>)> {
    match server {
        Server::Url(url) => {
            let url = super::check_base_url(url).map_err(|e| match e {
                ServiceError::Invalid(m) => {
                    ServiceError::Invalid(m.replacen("base URL", "MCP server URL", 1))
                }
                other => other,
            })?;
            Ok((Some(url), None, None))
        }
        Server::Command { argv, cwd } => {
            if argv.is_empty() || argv[0].trim().is_empty() {
                return Err(ServiceError::Invalid(
                    "the command is empty: give the program to start and its arguments".into(),
                ));
            }
            // the words as split_command would give them back
            split_command(&crate::domain::mcp_vendor::join_command(argv))
                .map_err(ServiceError::Invalid)?;
            let cwd = match cwd.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
                Some(dir) => {
                    let path = std::path::Path::new(dir);
                    if !path.is_absolute() || !path.is_dir() {
                        return Err(ServiceError::Invalid(format!(
                            "the working directory {dir:?} is not an absolute path to a directory"
                        )));
                    }
                    Some(dir.to_string())
                }
                None => None,
            };
            let command =
                serde_json::to_string(argv).map_err(|e| ServiceError::Internal(e.into()))?;
            Ok((None, Some(command), cwd))
        }
    }
}
