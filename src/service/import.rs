//! OpenAPI import (SPEC §2, §3.6): a document becomes tool versions, renamed, retired
//! and re-approved as its operations change.

use super::{
    check_base_url, credential_names, demote_in, move_origin_in, origin_of, MAX_VENDOR_NAME,
};
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self};
use crate::domain::audit::AuditAction;
use crate::domain::names::{ToolName, VendorSlug};
use crate::domain::{openapi, Cause};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

impl Graft {
    /// Imports every operation of an OpenAPI document (`text`: JSON or YAML) as a tool of
    /// `vendor`, version 1, authored by `import`, and keeps the document on the vendor.
    /// With `create_base_url`, a missing vendor is created with that base URL (else the
    /// document's). Operations already imported are skipped, so a second import adds
    /// nothing. All tools go in one transaction: a failure leaves the toolbox unchanged.
    /// `progress(done, total)` follows the planning.
    /// Errors: vendor not found, a document that is not OpenAPI 2.0/3.x.
    pub async fn import_openapi(
        &self,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<ImportReport> {
        self.import_openapi_by(&Actor::Rule, vendor, text, base_url, progress)
            .await
    }

    /// [`Graft::import_openapi`] by `actor` (the person the vendor's import history
    /// names). Importing a document again updates the vendor's tools (issue 14.3), in
    /// the same transaction: an operation whose definition changed gets a new version
    /// authored by `import` (approvals go back to pending when what a call does changed,
    /// as for any version); a new operation becomes a tool; the tool of an operation gone
    /// from the document is retired (demoted from every working set with cause
    /// `retired`, kept for history); a retired tool whose operation is back is restored;
    /// tools whose current version an agent wrote are left alone. Agents whose working
    /// set changed get list_changed. The summary is kept in the vendor's import history.
    pub async fn import_openapi_by(
        &self,
        actor: &Actor,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<ImportReport> {
        self.import_run(actor, vendor, text, base_url, progress, true)
            .await
    }

    /// What [`Graft::import_openapi_by`] would do (issue 28.11: a re-upload previewed
    /// before it applies): the same import run in a transaction that is rolled back, so
    /// the report (new, updated, retired, restored tools, approvals asked again, entries
    /// demoted) is exactly what applying it now would say. Nothing is written, no one is
    /// told, nothing is audited. `progress(done, total)` as the import's. Errors: as
    /// the import's.
    pub async fn preview_import(
        &self,
        actor: &Actor,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<ImportReport> {
        self.import_run(actor, vendor, text, base_url, progress, false)
            .await
    }

    /// The import, written when `apply`, else rolled back (a preview).
    async fn import_run(
        &self,
        actor: &Actor,
        vendor: &str,
        text: &str,
        base_url: Option<&str>,
        progress: &mut (dyn FnMut(usize, usize) + Send),
        apply: bool,
    ) -> ServiceResult<ImportReport> {
        let doc = openapi::parse_document(text).map_err(ServiceError::Invalid)?;
        openapi::spec_version(&doc).map_err(ServiceError::Invalid)?;
        let slug = VendorSlug::parse(vendor).map_err(ServiceError::Invalid)?;
        let override_url = base_url.map(check_base_url).transpose()?;
        let existing_vendor = db::select_vendor_by_slug(&self.inner.pool, vendor).await?;
        if let Some(v) = existing_vendor
            .as_ref()
            .filter(|v| v.kind == "mcp" && v.removed_at.is_none())
        {
            return Err(ServiceError::Invalid(format!(
                "vendor {} is an MCP server: its tools come from its tools/list (graft vendor refresh {}), not from an OpenAPI document",
                v.slug, v.slug
            )));
        }
        let current: Vec<db::ToolRow> = match &existing_vendor {
            Some(_) => db::select_vendor_tools(&self.inner.pool, vendor).await?,
            None => Vec::new(),
        };
        // an agent's tool does not keep a name the document's operation has: the import
        // takes it, and the agent's tool gets another (security review 32.20)
        let names: HashSet<String> = current
            .iter()
            .filter(|t| !t.first_author.starts_with("agent:"))
            .map(|t| t.name.clone())
            .collect();
        let agent_held: HashMap<&str, &db::ToolRow> = current
            .iter()
            .filter(|t| t.first_author.starts_with("agent:"))
            .map(|t| (t.name.as_str(), t))
            .collect();
        let imported: HashMap<String, String> = current
            .iter()
            .filter_map(|t| Some((t.operation_id.clone()?, t.name.clone())))
            .collect();
        let named = credential_names(existing_vendor.as_ref());
        let plan = openapi::plan_import_with(
            &doc,
            &slug,
            &|n| names.contains(n),
            &imported,
            &named,
            progress,
        )
        .map_err(ServiceError::Invalid)?;
        let live = current
            .iter()
            .filter(|t| t.retired_at.is_none() && t.first_author == "import")
            .count();
        if plan.tools.is_empty() && plan.existing.is_empty() && live > 0 {
            return Err(ServiceError::Invalid(format!(
                "the document has no operation Graft can import ({} operations, {} skipped): importing it would retire all {live} tools of {vendor}; nothing was changed",
                plan.total_operations,
                plan.skipped.len()
            )));
        }
        if plan.tools.is_empty() && plan.existing.is_empty() && existing_vendor.is_none() {
            return Err(ServiceError::Invalid(format!(
                "the document has no operation Graft can import ({} operations, {} skipped): vendor {vendor} was not created",
                plan.total_operations,
                plan.skipped.len()
            )));
        }
        let now = self.now();
        // the vendor (when new), its tools and its document: one transaction
        let mut tx = self.write_tx().await?;
        let vendor_id = match &existing_vendor {
            Some(v) if v.removed_at.is_some() => {
                db::update_vendor_removed(&mut tx, v.id, None).await?;
                if v.kind == "mcp" {
                    db::update_vendor_openapi_kind(&mut tx, v.id).await?;
                    db::update_vendor_tools_retired(&mut tx, v.id, now).await?;
                }
                v.id
            }
            Some(v) => v.id,
            None => {
                let url = match override_url.clone().or_else(|| plan.base_url.clone()) {
                    Some(u) => check_base_url(&u)?,
                    None => {
                        return Err(ServiceError::Invalid(format!(
                            "vendor {vendor:?} does not exist and the document declares no absolute http(s) base URL: give the API's base URL (the Base URL field, or --base-url)"
                        )))
                    }
                };
                let title = doc
                    .pointer("/info/title")
                    .and_then(|t| t.as_str())
                    .map(str::trim)
                    .filter(|t| !t.is_empty());
                db::insert_vendor(
                    &mut tx,
                    slug.as_str(),
                    &title
                        .map(|t| t.chars().take(MAX_VENDOR_NAME).collect::<String>())
                        .unwrap_or_else(|| slug.to_string()),
                    &url,
                    now,
                )
                .await
                .map_err(|e| {
                    super::unique_or(e, ServiceError::Conflict, || {
                        format!("another import created vendor {vendor:?} at the same moment: upload the document again to update it")
                    })
                })?
            }
        };
        let mut moved: Vec<(String, String)> = Vec::new();
        let mut moved_ids: Vec<i64> = Vec::new();
        {
            let mut taken: HashSet<String> = current.iter().map(|t| t.name.clone()).collect();
            taken.extend(plan.tools.iter().map(|t| t.name.clone()));
            for t in &plan.tools {
                let Some(held) = agent_held.get(t.name.as_str()) else {
                    continue;
                };
                let (new_name, _) = crate::domain::names::tool_name_for(
                    &slug,
                    &format!("{}_by_agent", held.name),
                    &|n| taken.contains(n),
                );
                let new_name = new_name.to_string();
                taken.insert(new_name.clone());
                db::update_tool_name(&mut tx, held.id, &new_name).await?;
                db::insert_note_in(
                    &mut tx,
                    held.id,
                    "graft",
                    &format!(
                        "Renamed from {vendor}__{} to {vendor}__{new_name}: the vendor's OpenAPI document, imported now, has an operation of that name, and an import wins the name.",
                        held.name
                    ),
                    now,
                )
                .await?;
                moved.push((held.name.clone(), new_name));
                moved_ids.push(held.id);
            }
        }
        for t in &plan.tools {
            insert_drafted_tool(
                &mut tx,
                &slug,
                vendor_id,
                t,
                "importer made a bad name",
                now,
            )
            .await?;
        }
        let mut report = ImportReport {
            imported: plan.tools.len(),
            created: plan.tools.iter().map(|t| t.name.clone()).collect(),
            moved,
            adopted_base_url: match (&existing_vendor, &override_url) {
                (None, None) => plan.base_url.clone(),
                _ => None,
            },
            ..Default::default()
        };
        let by_name: HashMap<&str, &db::ToolRow> =
            current.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut notify: Vec<i64> = Vec::new();
        // (agent id, tool name) of each grant a changed tool asks again
        let mut asked_again: Vec<(i64, String)> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        // an operation still in the document that no longer drafts (now unsupported)
        // keeps its tool as it is
        let still_there: HashSet<&str> =
            plan.skipped.iter().map(|s| s.operation.as_str()).collect();
        for d in &plan.existing {
            let Some(old) = by_name.get(d.name.as_str()) else {
                continue;
            };
            seen.insert(old.name.as_str());
            if old.authored_by.starts_with("agent:") {
                report.kept.push(old.name.clone());
                continue;
            }
            let update = update_from_source(&mut tx, old, d, now).await?;
            note_update(&mut report, &mut notify, &mut asked_again, old, update);
        }
        // operations gone from the document: their imported tools retire
        let gone: Vec<&db::ToolRow> = current
            .iter()
            .filter(|t| {
                t.operation_id
                    .as_deref()
                    .is_some_and(|o| !still_there.contains(o))
                    && t.retired_at.is_none()
                    && t.first_author == "import"
                    && !seen.contains(t.name.as_str())
            })
            .collect();
        for t in &gone {
            retire_in(
                &mut tx,
                t,
                Cause::Retired,
                actor,
                now,
                &mut report,
                &mut notify,
            )
            .await?;
        }
        let auth = openapi::connection_hint(&doc);
        // `--base-url` on an existing vendor may move it to another origin
        let mut origin_move = None;
        let origin_moved = match (&existing_vendor, &override_url) {
            // a removed vendor brought back elsewhere too: its approvals do not follow
            (Some(v), Some(u)) if origin_of(&v.base_url) != origin_of(u) => {
                let (old, new) = (origin_of(&v.base_url), origin_of(u));
                let moved =
                    move_origin_in(&mut tx, vendor_id, slug.as_str(), &old, &new, actor, now)
                        .await?;
                report.approvals_reset += moved.approvals;
                origin_move = Some(moved);
                Some((old, new))
            }
            _ => None,
        };
        db::update_vendor_document(
            &mut tx,
            vendor_id,
            &doc.to_string(),
            auth.as_ref().map(|(k, n)| (*k, n.as_deref())),
            override_url.as_deref(),
        )
        .await?;
        let withheld = plan
            .tools
            .iter()
            .flat_map(|t| {
                let op = t.operation_id.clone().unwrap_or_default();
                t.binding
                    .withheld
                    .iter()
                    .map(move |(location, name)| (op.clone(), format!("{location} {name}")))
            })
            .collect();
        let asked_again = asked_again_by_name(self.pool(), asked_again).await?;
        let report = ImportReport {
            asked_again,
            brought_back: existing_vendor
                .as_ref()
                .is_some_and(|v| v.removed_at.is_some()),
            vendor: slug.to_string(),
            operations: plan.total_operations,
            withheld,
            renamed: plan.renamed,
            origin_moved,
            skipped: plan
                .skipped
                .into_iter()
                .map(|s| (s.operation, s.reason))
                .collect(),
            ..report
        };
        if !apply {
            // a preview: the transaction is dropped, so rolled back; nothing was written
            drop(tx);
            return Ok(ImportReport {
                preview: true,
                ..report
            });
        }
        let summary =
            serde_json::to_string(&report).map_err(|e| ServiceError::Internal(e.into()))?;
        db::insert_import(&mut tx, vendor_id, &actor.label(), now, &summary).await?;
        tx.commit().await?;
        let by_move = origin_move.map_or(0, super::vendors::OriginMove::logged);
        self.toolbox_changed().await;
        notify.sort_unstable();
        notify.dedup();
        self.changed(&notify).await;
        // the approvals of changed tools, then those of the move (which counts only
        // grants still standing after the tools' own resets)
        let why = match &report.origin_moved {
            Some((old, new)) if report.approvals_reset > by_move => format!(
                "an import changed what its tools' calls do and moved its base URL from {old} to {new}"
            ),
            Some((old, new)) => format!("an import moved its base URL from {old} to {new}"),
            None => "an import changed what its tools' calls do".to_string(),
        };
        self.approvals_asked_again(&report.vendor, report.approvals_reset, &why)
            .await;
        let detail = format!(
            "{} operations: {} new, {} updated, {} retired{}",
            report.operations,
            report.imported,
            report.updated.len(),
            report.retired.len(),
            if report.brought_back {
                ", brought back"
            } else {
                ""
            }
        );
        self.audit(
            actor,
            AuditAction::VendorImport,
            slug.as_str(),
            Some(&detail),
        )
        .await?;
        Ok(report)
    }

    /// The newest `limit` imports of every vendor: `(vendor, who, ms, summary)`.
    pub async fn recent_imports(
        &self,
        limit: i64,
    ) -> ServiceResult<Vec<(String, String, i64, ImportReport)>> {
        Ok(db::select_recent_imports(&self.inner.pool, limit)
            .await?
            .into_iter()
            .map(|(v, who, at, text)| (v, who, at, serde_json::from_str(&text).unwrap_or_default()))
            .collect())
    }

    /// The vendor's imports, newest first: `(who, ms, summary)`. Errors: `VendorNotFound`.
    pub async fn imports(&self, vendor: &str) -> ServiceResult<Vec<(String, i64, ImportReport)>> {
        let v = self.vendor(vendor).await?;
        Ok(db::select_imports(&self.inner.pool, v.id)
            .await?
            .into_iter()
            .map(|(who, at, text)| (who, at, serde_json::from_str(&text).unwrap_or_default()))
            .collect())
    }
}

/// What an OpenAPI import did (issue 14.3: a re-import of a changed document updates the
/// vendor's tools).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ImportReport {
    /// Vendor slug.
    pub vendor: String,
    /// Operations in the document.
    pub operations: usize,
    /// Tools created.
    pub imported: usize,
    /// Their names.
    #[serde(default)]
    pub created: Vec<String>,
    /// `(tool name, what changed)` of tools that got a new version (authored by import).
    pub updated: Vec<(String, String)>,
    /// Tools the document describes as their current version does.
    pub unchanged: usize,
    /// Tools whose operation came back to the document (they were retired).
    pub restored: Vec<String>,
    /// Tools retired: their operation is gone from the document (demoted everywhere,
    /// kept for history).
    pub retired: Vec<String>,
    /// Tools left alone because an agent wrote their current version (acquire, publish).
    pub kept: Vec<String>,
    /// An MCP vendor's tools its server now calls reads: kept writes (their approvals
    /// and denials stand) until a person marks them read-only.
    pub writes_kept: Vec<String>,
    /// Working-set entries demoted because their tool was retired.
    pub demoted: usize,
    /// Approvals (granted or pending) asked again because a new version changed what
    /// the call does.
    pub approvals_reset: usize,
    /// `(agent, tool)` of each grant a changed tool now asks again, by name (an
    /// approval already pending, or one a base URL's move asks again, is counted in
    /// `approvals_reset` only).
    pub asked_again: Vec<(String, String)>,
    /// A preview: what the import would do; nothing was written (issue 28.11).
    pub preview: bool,
    /// `(operation, name)` of tools whose name is not the plain snake case.
    pub renamed: Vec<(String, String)>,
    /// `(operation, reason)` of operations left out.
    pub skipped: Vec<(String, String)>,
    /// `(operation, "header Authorization")` of declared parameters not offered to
    /// agents: headers Graft or the connection sets (issue 12.4).
    pub withheld: Vec<(String, String)>,
    /// Whether the vendor had been removed and this import brought it back (enabled).
    pub brought_back: bool,
    /// `(old name, new name)` of agents' tools renamed because the document has an
    /// operation of their name (an import wins the name; security review 32.20).
    pub moved: Vec<(String, String)>,
    /// The base URL taken from the document's servers for a vendor this import
    /// created: every call goes there, so the person is shown it (security review 32.7).
    pub adopted_base_url: Option<String>,
    /// `(old origin, new origin)` when the import's base URL moved an existing vendor to
    /// another origin (its connections are suspended; security review 32.5).
    pub origin_moved: Option<(String, String)>,
}

impl Graft {
    /// Says which parameters of vendor `slug`'s operations carry its connection's secret
    /// besides what its security schemes name (issue 25.2: a document such as Slack's
    /// declares its token as an ordinary required parameter), then imports its stored
    /// document again so its tools follow: those parameters are no longer inputs, and
    /// the secret is put in them. An empty list goes back to the schemes alone. Returns
    /// the import's report (`None` without a stored document: the next import applies
    /// it). Errors: `VendorNotFound`, `Invalid` (removed, or a name that is not a header
    /// or parameter name).
    pub async fn set_vendor_credential_params(
        &self,
        actor: &Actor,
        slug: &str,
        names: &[String],
    ) -> ServiceResult<Option<ImportReport>> {
        let v = self.live_vendor(slug).await?;
        let names: Vec<String> = names
            .iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        if let Some(bad) = names
            .iter()
            .find(|n| !crate::domain::tool::is_header_token(n) || n.contains(','))
        {
            return Err(ServiceError::Invalid(format!(
                "{bad:?} is not a parameter name"
            )));
        }
        let joined = (!names.is_empty()).then(|| names.join(","));
        let mut tx = self.write_tx().await?;
        db::update_vendor_credential_params(&mut tx, v.id, joined.as_deref()).await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), params = ?names, "credential parameters set");
        let detail = format!(
            "credential parameters: {}",
            joined.as_deref().unwrap_or("none")
        );
        self.audit(actor, AuditAction::VendorEdit, slug, Some(&detail))
            .await?;
        self.state_changed().await;
        match db::select_vendor_document(self.pool(), v.id).await? {
            Some(text) => Ok(Some(
                self.import_openapi_by(actor, slug, &text, None, &mut |_, _| {})
                    .await?,
            )),
            None => Ok(None),
        }
    }
}

/// `(agent id, tool)` pairs by the agent's name, sorted (an import writes no agent, so
/// the pool reads the names its transaction would). Errors: database faults.
pub(super) async fn asked_again_by_name(
    pool: &db::Pool,
    pairs: Vec<(i64, String)>,
) -> ServiceResult<Vec<(String, String)>> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let names: std::collections::HashMap<i64, String> = db::select_agents(pool)
        .await?
        .into_iter()
        .map(|a| (a.id, a.name))
        .collect();
    let mut out: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(id, tool)| {
            let agent = names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("agent #{id}"));
            (agent, tool)
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Inserts tool `t`, drafted from vendor `slug`'s source, as version 1 of a new tool
/// of vendor `vendor_id` authored by `import`, in `tx`. Errors: `Internal` (a name the
/// drafting got wrong: `{bad_name}: {why}`), database faults.
pub(super) async fn insert_drafted_tool(
    tx: &mut super::WriteTx,
    slug: &VendorSlug,
    vendor_id: i64,
    t: &crate::domain::tool::ToolDraft,
    bad_name: &str,
    now: i64,
) -> ServiceResult<()> {
    ToolName::parse(slug, &t.name)
        .map_err(|e| ServiceError::Internal(anyhow::anyhow!("{bad_name}: {e}")))?;
    let binding = serde_json::to_value(&t.binding).map_err(|e| ServiceError::Internal(e.into()))?;
    let nv = super::versions::version_row(t, &binding, t.hints, "import");
    db::insert_tool(tx, vendor_id, &t.name, t.operation_id.as_deref(), &nv, now).await?;
    Ok(())
}

/// Counts what [`update_from_source`] did to tool `old` in `report` (restored, updated
/// or unchanged, approvals reset), the agents to tell in `notify` and the `(agent id,
/// tool name)` of each grant asked again in `asked_again`.
pub(super) fn note_update(
    report: &mut ImportReport,
    notify: &mut Vec<i64>,
    asked_again: &mut Vec<(i64, String)>,
    old: &db::ToolRow,
    update: SourceUpdate,
) {
    if update.restored {
        report.restored.push(old.name.clone());
    }
    report.approvals_reset += update.approvals_reset;
    asked_again.extend(update.reset_for.iter().map(|a| (*a, old.name.clone())));
    match update.changed {
        Some((what, agents)) => {
            notify.extend(agents);
            report.updated.push((old.name.clone(), what));
        }
        None if old.retired_at.is_none() => report.unchanged += 1,
        None => {}
    }
}

/// Retires tool `t` (gone from its source) in `tx` and demotes it from every working
/// set with `cause`; counts it in `report` and its agents in `notify`. Errors: database
/// faults.
pub(super) async fn retire_in(
    tx: &mut super::WriteTx,
    t: &db::ToolRow,
    cause: Cause,
    actor: &Actor,
    now: i64,
    report: &mut ImportReport,
    notify: &mut Vec<i64>,
) -> ServiceResult<()> {
    db::update_tool_retired(tx, t.id, Some(now)).await?;
    report.retired.push(t.name.clone());
    let entries = db::sweep::select_entries_of_tools(tx, &[t.id]).await?;
    demote_in(tx, &entries, cause, actor, now).await?;
    report.demoted += entries.len();
    notify.extend(entries.iter().map(|(a, _)| *a));
    Ok(())
}

/// What [`update_from_source`] did to one tool.
pub(super) struct SourceUpdate {
    /// The tool was retired and is back.
    pub restored: bool,
    /// Approvals (granted or pending) that now ask again, for the new version.
    pub approvals_reset: usize,
    /// The agents whose grant now asks again (a request already pending is not one).
    pub reset_for: Vec<i64>,
    /// What its new version changed, in words, and the agents holding it (they get
    /// list_changed); `None` when the source describes it as its current version does.
    pub changed: Option<(String, Vec<i64>)>,
}

/// Brings tool `old` up to `d`, what its source (a vendor's OpenAPI document, an MCP
/// vendor's server) says of it now, in `tx`: a retired tool is restored; a changed
/// definition becomes a new version authored by `import`, its approvals going back to
/// pending when what a call does changed ([`super::versions::call_change`]) and carried
/// otherwise. A person's hints survive while the method stays; a person's version
/// (hints, a description) stays until the source changes since the version `import`
/// last wrote. Errors: database faults.
pub(super) async fn update_from_source(
    tx: &mut db::Conn,
    old: &db::ToolRow,
    d: &crate::domain::tool::ToolDraft,
    now: i64,
) -> ServiceResult<SourceUpdate> {
    let baseline = if old.authored_by == "import" {
        old.clone()
    } else {
        match db::select_last_imported_version(tx, old.id).await? {
            Some(v) => v,
            None => old.clone(),
        }
    };
    let restored = old.retired_at.is_some();
    if restored {
        db::update_tool_retired(tx, old.id, None).await?;
    }
    let hints = if old.hints_by.is_some() && old.method.eq_ignore_ascii_case(&d.method) {
        crate::domain::tool::Hints {
            read_only_hint: old.read_only_hint,
            destructive_hint: old.destructive_hint,
            idempotent_hint: old.idempotent_hint,
            open_world_hint: old.open_world_hint,
        }
    } else {
        d.hints
    };
    let binding = serde_json::to_value(&d.binding).map_err(|e| ServiceError::Internal(e.into()))?;
    let Some(what) = super::versions::definition_change(&baseline, d, &binding, hints) else {
        return Ok(SourceUpdate {
            restored,
            approvals_reset: 0,
            reset_for: Vec::new(),
            changed: None,
        });
    };
    let next = old.version + 1;
    let nv = super::versions::version_row(d, &binding, hints, "import");
    db::insert_tool_version(tx, old.id, next, &nv, now).await?;
    let reset_for = match super::versions::call_change(old, d, hints) {
        Some(why) => db::reset_approvals(tx, old.id, next, &why, now).await?,
        None => {
            db::carry_approvals(tx, old.id, next).await?;
            Vec::new()
        }
    };
    let agents = db::sweep::select_entries_of_tools(tx, &[old.id])
        .await?
        .into_iter()
        .map(|(a, _)| a)
        .collect();
    Ok(SourceUpdate {
        restored,
        approvals_reset: reset_for.len(),
        reset_for,
        changed: Some((what, agents)),
    })
}
