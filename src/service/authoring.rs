//! Agents author tools (SPEC §3.4 `acquire` / `publish`, §2 `tool_versions`,
//! `tool_notes`): every version kept, publishing promotes for the author, notes kept
//! forever; and the operations of stored (not imported) OpenAPI documents.

use super::error::unique_or;
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::audit::AuditAction;
use crate::domain::authoring::{self, ToolSpec};
use crate::domain::names::VendorSlug;
use crate::domain::openapi;
use crate::domain::tool::{Hints, ToolDraft};
use crate::domain::{Cause, PromotedBy};
use serde::Serialize;
use serde_json::Value;

use super::versions::stale;
pub use super::versions::{HintChange, VersionChange};

/// The answer of `acquire` and `publish`: `{vendor, name, version, size}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Published {
    /// Version number now current.
    pub version: i64,
    /// The author's working-set size.
    pub size: i64,
}

/// Everything known about a tool, for `graft tool show` and the console.
#[derive(Debug, Clone)]
pub struct ToolDetail {
    /// The tool with its current version.
    pub tool: db::ToolRow,
    /// Every version, oldest first.
    pub versions: Vec<db::VersionRow>,
    /// Notes, oldest first.
    pub notes: Vec<db::NoteRow>,
    /// The agents that have it promoted.
    pub promoted_for: Vec<db::PromoterRow>,
    /// The connection its calls use now: `(label, why)`, or `None` for no credential.
    pub connection: Option<(String, String)>,
    /// Who authored each version, an agent by name ([`author_named`]: `agent:hermes`,
    /// `person:ops`, `import`).
    pub authors: Vec<String>,
}

/// `authored_by` with an agent's id replaced by its name, in the stored form
/// (`agent:3` → `agent:hermes`, `agent:#3` for an agent no longer listed); a person
/// (`person:ops`) and `import` stay as they are. The adapters put it in words with
/// `console::words::actor_in_words` (`agent hermes`, `ops`, `import`).
pub fn author_named(authored_by: &str, agents: &[(i64, String)]) -> String {
    match authored_by
        .strip_prefix("agent:")
        .and_then(|id| id.parse::<i64>().ok())
    {
        Some(id) => match agents.iter().find(|(a, _)| *a == id) {
            Some((_, name)) => format!("agent:{name}"),
            None => format!("agent:#{id}"),
        },
        None => authored_by.to_string(),
    }
}

/// What a new version does to the hints a person set (issue 12.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PersonHints {
    /// They stay (a publish that keeps the method).
    Keep,
    /// They are forgotten (the method changed; hints follow it again).
    Forget,
    /// A person sets them now; `read_only` when they said whether the tool only reads.
    Set { read_only: Option<bool> },
}

/// Refuses to author a tool of a disabled or removed vendor (its tools refuse calls).
/// Refuses authoring on an MCP vendor (SPEC §10.2): its tools are what its server lists.
fn refuse_mcp(v: &db::VendorRow) -> ServiceResult<()> {
    if v.kind == "mcp" {
        return Err(ServiceError::Invalid(format!(
            "vendor {} is an MCP server: its tools come from the server's tools/list, not from acquire (find_tool finds them; promote one)",
            v.slug
        )));
    }
    Ok(())
}

fn refuse_disabled(v: &db::VendorRow) -> ServiceResult<()> {
    if v.removed_at.is_some() {
        return Err(ServiceError::Invalid(format!(
            "vendor {} was removed: its tools cannot be called; a person brings it back by importing its document again",
            v.slug
        )));
    }
    match v.disabled_at {
        Some(_) => Err(ServiceError::Invalid(format!(
            "vendor {} is disabled: its tools cannot be called until a person enables it",
            v.slug
        ))),
        None => Ok(()),
    }
}

impl Graft {
    /// Spends one of an agent's `acquire`/`publish` per hour (security review 32.8);
    /// people are not metered. Errors: `Busy` saying when to try again.
    fn spend_authoring(&self, actor: &Actor) -> ServiceResult<()> {
        self.spend_hourly(actor, super::quota::Spend::Authoring, |q| {
            format!(
                "this agent published more than {} tools or versions in the last hour (GRAFT_AGENT_AUTHORING_PER_HOUR)",
                q.authoring_per_hour
            )
        })
    }
}

fn author_of(actor: &Actor) -> String {
    actor.label()
}

impl Graft {
    /// Authors a new tool from an agent's definition (`acquire`): version 1, promoted for
    /// the author (cause `publish`), one list_changed.
    /// Errors: `VendorNotFound`, `Invalid` (which rule), `ToolExists`.
    pub async fn acquire(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        spec: ToolSpec,
    ) -> ServiceResult<Published> {
        self.spend_authoring(actor)?;
        let v = self.vendor(vendor).await?;
        refuse_disabled(&v)?;
        refuse_mcp(&v)?;
        let slug = VendorSlug::parse(&v.slug).map_err(ServiceError::Invalid)?;
        let draft = authoring::draft(&slug, &spec).map_err(ServiceError::Invalid)?;
        // a name the vendor's document gives one of its operations stays that
        // operation's (security review 32.20): an agent cannot take it first and push
        // the real operation to a hashed name
        if v.has_document && matches!(actor, Actor::Agent(_)) {
            if let Some(text) = db::select_vendor_document(self.pool(), v.id).await? {
                let doc: Value =
                    serde_json::from_str(&text).map_err(|e| ServiceError::Internal(e.into()))?;
                if let Some(op) = crate::domain::openapi::list_operations(&doc)
                    .into_iter()
                    .find(|op| {
                        crate::domain::names::tool_name_for(&slug, &op.operation_id, &|_| false)
                            .0
                            .as_str()
                            == draft.name
                    })
                {
                    return Err(ServiceError::Invalid(format!(
                        "{vendor}__{} is the name of the operation {} of {vendor}'s OpenAPI document: acquire {{vendor: \"{vendor}\", operationId: \"{}\"}} to author it from the document, or choose another name",
                        draft.name, op.operation_id, op.operation_id
                    )));
                }
            }
        }
        self.insert_authored(actor, agent_id, v.id, &draft).await
    }

    /// Authors a new tool from an operation of the vendor's stored OpenAPI document
    /// (`acquire {vendor, operationId}`); `name` overrides the generated name.
    /// Errors: `VendorNotFound`, `Invalid` (no document, no such operation), `ToolExists`.
    pub async fn acquire_operation(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor: &str,
        operation_id: &str,
        name: Option<&str>,
    ) -> ServiceResult<(String, Published)> {
        self.spend_authoring(actor)?;
        let v = self.vendor(vendor).await?;
        refuse_disabled(&v)?;
        let slug = VendorSlug::parse(&v.slug).map_err(ServiceError::Invalid)?;
        let text = db::select_vendor_document(self.pool(), v.id)
            .await?
            .ok_or_else(|| ServiceError::Invalid(format!("vendor {vendor} has no stored OpenAPI document: describe the tool yourself (name, description, method, path, inputSchema)")))?;
        if let Some(existing) =
            db::select_tool_by_operation(self.pool(), v.id, operation_id).await?
        {
            return Err(ServiceError::ToolExists(format!(
                "operation {operation_id} is already the tool {vendor}__{existing}: promote it, or publish a new version of it"
            )));
        }
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| ServiceError::Internal(e.into()))?;
        let names: std::collections::HashSet<String> = db::select_tool_names(self.pool(), v.id)
            .await?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let named = super::credential_names(Some(&v));
        let mut draft =
            openapi::draft_operation(&doc, &slug, operation_id, &|n| names.contains(n), &named)
                .map_err(ServiceError::Invalid)?;
        if let Some(n) = name {
            crate::domain::names::ToolName::parse(&slug, n).map_err(ServiceError::Invalid)?;
            draft.name = n.to_string();
        }
        let p = self.insert_authored(actor, agent_id, v.id, &draft).await?;
        Ok((draft.name, p))
    }

    async fn insert_authored(
        &self,
        actor: &Actor,
        agent_id: i64,
        vendor_id: i64,
        d: &ToolDraft,
    ) -> ServiceResult<Published> {
        if let Actor::Agent(_) = actor {
            let max = self.inner.quotas.tools_per_agent;
            if db::count_tools_authored(self.pool(), &author_of(actor)).await? >= max {
                return Err(ServiceError::Invalid(format!(
                    "this agent has written {max} tools, the most one agent may (GRAFT_AGENT_TOOLS): publish new versions of yours, or ask a person"
                )));
            }
        }
        let vendor = db::select_vendors(self.pool())
            .await?
            .into_iter()
            .find(|v| v.id == vendor_id)
            .map(|v| v.slug)
            .unwrap_or_default();
        if db::select_tool(self.pool(), &vendor, &d.name)
            .await?
            .is_some()
        {
            return Err(ServiceError::ToolExists(format!(
                "{vendor}__{} exists already: promote it to use it, or publish a new version of it",
                d.name
            )));
        }
        let binding =
            serde_json::to_value(&d.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let author = author_of(actor);
        let nv = super::versions::version_row(d, &binding, d.hints, &author);
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let tool_id = db::insert_tool(
            &mut tx,
            vendor_id,
            &d.name,
            d.operation_id.as_deref(),
            &nv,
            now,
        )
        .await
        .map_err(|e| {
            unique_or(e, ServiceError::ToolExists, || {
                format!(
                    "{vendor}__{} exists already: promote it, or publish a new version of it",
                    d.name
                )
            })
        })?;
        let size = promote_published(&mut tx, agent_id, tool_id, actor, now).await?;
        tx.commit().await?;
        self.toolbox_changed().await;
        self.changed(&[agent_id]).await;
        Ok(Published { version: 1, size })
    }

    /// Publishes version n+1 of a tool (`publish`, `graft tool publish`): the current
    /// version with `change` applied, checked like `acquire`; an agent may publish only
    /// tools it authored (else `Forbidden`), and the tool is promoted for it (`agent_id`);
    /// a person's hints survive; every
    /// agent that has it promoted gets list_changed (its definition changed). Versions
    /// are immutable; calls use the newest from now on.
    /// Errors: `ToolNotFound`, `Invalid` (a retired tool or one of a removed vendor, an
    /// MCP server's tool, too many versions, a bad schema), `Forbidden`, `Conflict`.
    pub async fn publish(
        &self,
        actor: &Actor,
        agent_id: Option<i64>,
        vendor: &str,
        name: &str,
        change: VersionChange,
    ) -> ServiceResult<Published> {
        self.spend_authoring(actor)?;
        let tool = self.tool(vendor, name).await?;
        takes_versions(&tool)?;
        if tool.method == crate::domain::mcp_vendor::MCP_METHOD {
            return Err(ServiceError::Invalid(format!(
                "{vendor}__{name} is a tool of an MCP server: its definition comes from the server's tools/list (a person can still set its hints)"
            )));
        }
        if let (Actor::Agent(_), true) =
            (actor, tool.version >= self.inner.quotas.versions_per_tool)
        {
            return Err(ServiceError::Invalid(format!(
                "{vendor}__{name} has {} versions, the most an agent may publish of one tool (GRAFT_AGENT_VERSIONS_PER_TOOL): acquire a new tool, or ask a person",
                tool.version
            )));
        }
        if matches!(actor, Actor::Agent(_)) && tool.first_author != actor.label() {
            let whose = if tool.first_author == "import" {
                "imported from the vendor's OpenAPI document".to_string()
            } else if tool.first_author.starts_with("agent:") {
                "written by another agent".to_string()
            } else {
                "written by a person".to_string()
            };
            return Err(ServiceError::Forbidden(format!(
                "{vendor}__{name} was {whose}: agents publish new versions only of tools they authored. For a variant, acquire a tool of your own; to change this one, ask a person (console, or graft tool publish)"
            )));
        }
        let base = change.base_version;
        if let Some(base) = base.filter(|b| *b != tool.version) {
            return Err(stale(vendor, name, base, tool.version));
        }
        let change = VersionChange {
            base_version: None,
            ..change
        };
        if change == VersionChange::default() {
            return Err(ServiceError::Invalid(
                "nothing to publish: give at least one field to change (description, method, path, inputSchema, query, headers, bodyEncoding)".into(),
            ));
        }
        let binding: crate::domain::tool::Binding =
            serde_json::from_str(&tool.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let spec = ToolSpec {
            name: tool.name.clone(),
            description: change.description.unwrap_or(tool.description.clone()),
            method: change.method.unwrap_or(tool.method.clone()),
            path: change.path.unwrap_or(tool.path_template.clone()),
            input_schema: match change.input_schema {
                Some(s) => s,
                None => serde_json::from_str(&tool.input_schema)
                    .map_err(|e| ServiceError::Internal(e.into()))?,
            },
            query: change
                .query
                .unwrap_or_else(|| binding.query.keys().cloned().collect()),
            headers: change
                .headers
                .unwrap_or_else(|| binding.headers.keys().cloned().collect()),
            body_encoding: change.body_encoding.or_else(|| {
                binding.body.map(|b| match b {
                    crate::domain::tool::BodyEncoding::Json => "json".to_string(),
                    crate::domain::tool::BodyEncoding::Form => "form".to_string(),
                    crate::domain::tool::BodyEncoding::Multipart => "multipart".to_string(),
                })
            }),
            operation_id: tool.operation_id.clone(),
        };
        let slug = VendorSlug::parse(vendor).map_err(ServiceError::Invalid)?;
        let mut d = authoring::draft(&slug, &spec).map_err(ServiceError::Invalid)?;
        // an imported tool keeps its wire names, fixed headers and credential parameters
        // unless the agent changed where inputs go
        let same_shape = d.binding.path.keys().eq(binding.path.keys())
            && d.binding.query.keys().eq(binding.query.keys())
            && d.binding.headers.keys().eq(binding.headers.keys());
        if same_shape {
            d.binding.path = binding.path.clone();
            d.binding.query = binding.query.clone();
            d.binding.headers = binding.headers.clone();
            d.binding.fixed_headers = binding.fixed_headers.clone();
            d.binding.credential_params = binding.credential_params.clone();
            d.binding.cookies = binding.cookies.clone();
            d.binding.withheld = binding.withheld.clone();
            d.binding.file_parts = binding.file_parts.clone();
            d.binding.public = binding.public;
            d.binding.styles = binding.styles.clone();
            d.binding.body_styles = binding.body_styles.clone();
            d.binding.defaults = binding
                .defaults
                .iter()
                .filter(|(p, _)| d.input_schema["properties"].get(p.as_str()).is_some())
                .map(|(p, v)| (p.clone(), v.clone()))
                .collect();
            d.binding.body_property = binding
                .body_property
                .clone()
                .filter(|p| d.input_schema["properties"].get(p).is_some());
        }
        // hints a person set survive a publish that keeps the method; a new method's
        // hints follow the method and the person's are forgotten
        let keep = tool.hints_by.is_some() && tool.method.eq_ignore_ascii_case(&d.method);
        let (hints, person) = if keep {
            let h = Hints {
                read_only_hint: tool.read_only_hint,
                destructive_hint: tool.destructive_hint,
                idempotent_hint: tool.idempotent_hint,
                open_world_hint: tool.open_world_hint,
            };
            (h, PersonHints::Keep)
        } else {
            (d.hints, PersonHints::Forget)
        };
        let version = self
            .insert_version(actor, &tool, &d, hints, person, base)
            .await?;
        self.audit(
            actor,
            AuditAction::ToolPublish,
            &format!("{vendor}__{name}"),
            Some(&format!("version {version}")),
        )
        .await?;
        let Some(agent_id) = agent_id else {
            // a person's publish promotes nothing
            self.notify_holders(tool.id, None).await?;
            return Ok(Published { version, size: 0 });
        };
        let mut tx = self.write_tx().await?;
        let now = self.now();
        let size = promote_published(&mut tx, agent_id, tool.id, actor, now).await?;
        tx.commit().await?;
        self.notify_holders(tool.id, Some(agent_id)).await?;
        Ok(Published { version, size })
    }

    /// Inserts the next version of `tool`. When it changes what a call does
    /// ([`call_change`]), or an agent wrote it, every granted or pending approval of the
    /// tool becomes a pending request for this version, saying why (issue 12.15); an
    /// agent's version also ends a person's read-only marking. `person`: what becomes
    /// of a person's hints; `base`: the version the change was made from, when it must
    /// still be the newest (`Conflict` otherwise).
    async fn insert_version(
        &self,
        actor: &Actor,
        tool: &db::ToolRow,
        d: &ToolDraft,
        h: Hints,
        person: PersonHints,
        base: Option<i64>,
    ) -> ServiceResult<i64> {
        let binding =
            serde_json::to_value(&d.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let author = author_of(actor);
        let mut nv = super::versions::version_row(d, &binding, h, &author);
        nv.title = nv.title.or(tool.title.as_deref());
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let next = db::select_max_version(&mut tx, tool.id).await? + 1;
        // made from the version a person saw, and another written since (a publish, an
        // import, hints): refused, so nobody overwrites what they did not see
        if let Some(base) = base.filter(|b| *b != next - 1) {
            return Err(stale(&tool.vendor, &tool.name, base, next - 1));
        }
        db::insert_tool_version(&mut tx, tool.id, next, &nv, now).await?;
        let change = super::versions::call_change(tool, d, h);
        let reset = match (actor, change) {
            (Actor::Agent(_), Some(c)) => Some(format!("an agent wrote version {next}: {c}")),
            (Actor::Agent(_), None) => Some(format!("an agent wrote version {next}")),
            (_, Some(c)) => Some(c),
            (_, None) => None,
        };
        let reset_agents = match &reset {
            Some(why) => crate::db::reset_approvals(&mut tx, tool.id, next, why, now).await?,
            None => {
                crate::db::carry_approvals(&mut tx, tool.id, next).await?;
                Vec::new()
            }
        };
        match person {
            PersonHints::Keep => {}
            PersonHints::Forget => {
                db::update_hints_by(&mut tx, tool.id, None).await?;
                db::update_read_only_by(&mut tx, tool.id, None).await?;
            }
            PersonHints::Set { read_only } => {
                db::update_hints_by(&mut tx, tool.id, Some(&author)).await?;
                if let Some(ro) = read_only {
                    db::update_read_only_by(&mut tx, tool.id, ro.then_some(author.as_str()))
                        .await?;
                }
            }
        }
        if matches!(actor, Actor::Agent(_)) {
            db::update_read_only_by(&mut tx, tool.id, None).await?;
        }
        tx.commit().await?;
        if !reset_agents.is_empty() {
            let qualified = format!("{}__{}", tool.vendor, tool.name);
            tracing::info!(tool = %qualified, version = next, agents = reset_agents.len(), why = ?reset, "approvals back to pending");
            let why = format!("version {next}: {}", reset.as_deref().unwrap_or("changed"));
            self.approvals_asked_again(&qualified, reset_agents.len(), &why)
                .await;
        }
        self.toolbox_changed().await;
        Ok(next)
    }

    async fn notify_holders(&self, tool_id: i64, also: Option<i64>) -> ServiceResult<()> {
        let mut agents: Vec<i64> = db::select_promoters(self.pool(), tool_id)
            .await?
            .into_iter()
            .map(|p| p.agent_id)
            .collect();
        agents.extend(also);
        agents.sort_unstable();
        agents.dedup();
        self.changed(&agents).await;
        Ok(())
    }

    /// A person sets a tool's hints: a new version, the same definition with the given
    /// hints (SPEC §2; agents cannot). Errors: `ToolNotFound`, `Invalid` (an agent, a
    /// retired tool or one of a removed vendor).
    pub async fn set_hints(
        &self,
        actor: &Actor,
        vendor: &str,
        name: &str,
        change: HintChange,
    ) -> ServiceResult<i64> {
        if change == HintChange::default() {
            return Err(ServiceError::Invalid(
                "give at least one hint to change".into(),
            ));
        }
        if !matches!(actor, Actor::Person(_)) {
            return Err(ServiceError::Invalid(
                "only a person can set a tool's hints".into(),
            ));
        }
        let tool = self.tool(vendor, name).await?;
        takes_versions(&tool)?;
        let d = ToolDraft {
            name: tool.name.clone(),
            operation_id: tool.operation_id.clone(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            input_schema: serde_json::from_str(&tool.input_schema)
                .map_err(|e| ServiceError::Internal(e.into()))?,
            output_schema: tool
                .output_schema
                .as_deref()
                .and_then(|o| serde_json::from_str(o).ok()),
            method: tool.method.clone(),
            path_template: tool.path_template.clone(),
            binding: serde_json::from_str(&tool.binding)
                .map_err(|e| ServiceError::Internal(e.into()))?,
            hints: Hints::from_method(&tool.method),
            tags: Vec::new(),
        };
        let h = Hints {
            read_only_hint: change.read_only.unwrap_or(tool.read_only_hint),
            destructive_hint: change.destructive.unwrap_or(tool.destructive_hint),
            idempotent_hint: change.idempotent.unwrap_or(tool.idempotent_hint),
            open_world_hint: change.open_world.unwrap_or(tool.open_world_hint),
        };
        let v = self
            .insert_version(
                actor,
                &tool,
                &d,
                h,
                PersonHints::Set {
                    read_only: change.read_only,
                },
                None,
            )
            .await?;
        let mut said = vec![format!("version {v}, hints:")];
        for (hint, value) in [
            ("read-only", change.read_only),
            ("destructive", change.destructive),
            ("idempotent", change.idempotent),
            ("open world", change.open_world),
        ] {
            if let Some(value) = value {
                said.push(format!("{hint} {value}"));
            }
        }
        self.audit(
            actor,
            AuditAction::ToolPublish,
            &format!("{vendor}__{name}"),
            Some(&said.join(" ")),
        )
        .await?;
        self.notify_holders(tool.id, None).await?;
        Ok(v)
    }

    /// Adds a note to a tool (kept forever). Errors: `ToolNotFound`, `Invalid` (empty or
    /// over 4,000 characters).
    pub async fn add_note(
        &self,
        actor: &Actor,
        vendor: &str,
        name: &str,
        body: &str,
    ) -> ServiceResult<()> {
        let body = body.trim();
        if body.is_empty() || body.chars().count() > 4000 {
            return Err(ServiceError::Invalid(
                "a note has 1 to 4000 characters".into(),
            ));
        }
        let tool = self.tool(vendor, name).await?;
        db::insert_note(self.pool(), tool.id, &actor.label(), body, self.now()).await?;
        self.audit(
            actor,
            crate::domain::audit::AuditAction::ToolNote,
            &format!("{vendor}__{name}"),
            Some(body),
        )
        .await?;
        Ok(())
    }

    /// Everything about a tool. Errors: `ToolNotFound`.
    pub async fn tool_detail(&self, vendor: &str, name: &str) -> ServiceResult<ToolDetail> {
        let tool = self.tool(vendor, name).await?;
        let versions = db::select_versions(self.pool(), tool.id).await?;
        let agents: Vec<(i64, String)> = db::select_agents(self.pool())
            .await?
            .into_iter()
            .map(|a| (a.id, a.name))
            .collect();
        Ok(ToolDetail {
            authors: versions
                .iter()
                .map(|v| author_named(&v.authored_by, &agents))
                .collect(),
            versions,
            notes: db::select_notes(self.pool(), tool.id).await?,
            promoted_for: db::select_promoters(self.pool(), tool.id).await?,
            connection: self.connection_in_words(tool.id).await?,
            tool,
        })
    }

    /// Keeps an OpenAPI document on a vendor without importing its operations (for APIs
    /// whose thousands of operations nobody wants in the toolbox); agents `acquire` the
    /// ones they need. Errors: `VendorNotFound`, `Invalid` (not OpenAPI).
    pub async fn store_document(&self, vendor: &str, text: &str) -> ServiceResult<usize> {
        let v = self.vendor(vendor).await?;
        refuse_mcp(&v)?;
        let doc = openapi::parse_document(text).map_err(ServiceError::Invalid)?;
        openapi::spec_version(&doc).map_err(ServiceError::Invalid)?;
        let n = openapi::list_operations(&doc).len();
        let mut conn = self.pool().acquire().await?;
        let auth = openapi::connection_hint(&doc);
        db::update_vendor_document(
            &mut conn,
            v.id,
            &doc.to_string(),
            auth.as_ref().map(|(k, n)| (*k, n.as_deref())),
            None,
        )
        .await?;
        self.toolbox_changed().await;
        Ok(n)
    }
}

/// In a publish's transaction: the tool goes into its author's working set (promoted by
/// a publish, SPEC §3.4); returns the set's size.
async fn promote_published(
    tx: &mut super::WriteTx,
    agent_id: i64,
    tool_id: i64,
    actor: &Actor,
    now: i64,
) -> Result<i64, db::DbError> {
    super::promote_in(
        tx,
        agent_id,
        tool_id,
        PromotedBy::Publish,
        Cause::Publish,
        actor,
        now,
    )
    .await?;
    db::count_working_set(tx, agent_id).await
}

/// Refuses a new version (publish, hints) of a retired tool or of one whose vendor was
/// removed. Errors: `Invalid` saying so.
fn takes_versions(tool: &crate::db::ToolRow) -> ServiceResult<()> {
    if tool.retired_at.is_some() || tool.vendor_removed_at.is_some() {
        return Err(ServiceError::Invalid(format!(
            "{}__{} is retired or its vendor was removed: it takes no new version",
            tool.vendor, tool.name
        )));
    }
    Ok(())
}
