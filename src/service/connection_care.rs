//! Keeping a vendor's credentials (issue 28.2): the vendor's default connection, a new
//! connection that says which one calls use, a secret replaced in place, a connection
//! tested with one harmless read, and when each was last used.

use super::connections::{check_connection, ConnectionInfo};
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::audit::AuditAction;
use serde::Serialize;

/// Which connection calls use once a new one is added to a vendor that has one already
/// (issue 28.2: adding a second connection asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultChoice {
    /// The new connection becomes the vendor's default.
    New,
    /// The vendor's current connection stays the one calls use (it becomes the default
    /// when there was none).
    Current,
}

/// What testing a connection found.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ConnectionTest {
    /// Whether the vendor accepted the credential.
    pub ok: bool,
    /// The read it sent (`vendor__name`), when there is one.
    pub tool: Option<String>,
    /// The HTTP status the vendor answered.
    pub status: Option<u16>,
    /// What happened, in a sentence.
    pub message: String,
}

/// Which connection a tool's calls use, as a person chooses it on the tool page (issue
/// 28.10): the tool's own default and the live connections of its vendor.
#[derive(Debug, Clone, Serialize)]
pub struct ToolConnectionChoice {
    /// The tool's own default connection's id; `None`: the vendor's default serves it.
    pub chosen: Option<i64>,
    /// The vendor's connections that are not revoked: `(id, label)`, oldest first.
    pub live: Vec<(i64, String)>,
}

impl Graft {
    /// The tool's own default connection and its vendor's live connections
    /// ([`ToolConnectionChoice`]). Errors: `ToolNotFound`.
    pub async fn tool_connection_choice(
        &self,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<ToolConnectionChoice> {
        let tool = self.tool(vendor, name).await?;
        let (vendor_id, chosen, _) = db::select_tool_connection(self.pool(), tool.id).await?;
        let live = db::select_vendor_connections(self.pool(), vendor_id)
            .await?
            .into_iter()
            .filter(|c| c.revoked_at.is_none())
            .map(|c| (c.id, c.label))
            .collect();
        Ok(ToolConnectionChoice { chosen, live })
    }

    /// Makes `label` vendor `slug`'s default connection (issue 28.2; `None` clears it):
    /// the vendor's tools without a default of their own use it. Errors:
    /// `VendorNotFound`, `Invalid` (removed, an MCP vendor, whose connections all apply;
    /// no such live connection).
    pub async fn set_vendor_default_connection(
        &self,
        actor: &Actor,
        slug: &str,
        label: Option<&str>,
    ) -> ServiceResult<()> {
        let v = self.live_vendor(slug).await?;
        if v.kind == "mcp" {
            return Err(ServiceError::Invalid(format!(
                "{slug} is an MCP server: each of its connections applies (a header or a variable), so it has no default"
            )));
        }
        let id = match label {
            None => None,
            Some(label) => {
                let conns = db::select_vendor_connections(self.pool(), v.id).await?;
                let c = conns
                    .iter()
                    .find(|c| c.label == label && c.revoked_at.is_none())
                    .ok_or_else(|| {
                        ServiceError::Invalid(format!(
                            "{slug} has no live connection labelled {label:?}"
                        ))
                    })?;
                Some(c.id)
            }
        };
        let detail = match label {
            Some(l) => format!("the vendor's default is now {l}"),
            None => "the vendor has no default now".to_string(),
        };
        let mut tx = self.write_tx().await?;
        db::update_vendor_default_connection(&mut tx, v.id, id).await?;
        self.audit_in(
            &mut tx,
            actor,
            AuditAction::ConnectionDefault,
            slug,
            Some(&detail),
        )
        .await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), connection = ?label, "vendor default connection set");
        self.state_changed().await;
        Ok(())
    }

    /// Adds a connection to `vendor` as [`Graft::add_connection`] does, saying which one
    /// calls use when the vendor has a live connection already (issue 28.2): a second
    /// connection never leaves calls ambiguous. `choice` `None` is refused then (the
    /// console and the CLI ask). An MCP vendor's connections all apply, so nothing is
    /// asked. Errors: those of [`Graft::add_connection`], and `Invalid` when a choice is
    /// needed and missing, or `Current` when several live connections leave no current
    /// one.
    #[allow(clippy::too_many_arguments)]
    pub async fn add_connection_choosing(
        &self,
        actor: &Actor,
        vendor: &str,
        label: &str,
        kind: &str,
        name: Option<&str>,
        secret: Option<&str>,
        choice: Option<DefaultChoice>,
    ) -> ServiceResult<ConnectionInfo> {
        let v = self.live_vendor(vendor).await?;
        let new = self.new_connection(&v, label, kind, name, secret)?;
        // what is decided on (the live connections, the default) stays true until the
        // new one commits: two people adding at once never leave calls ambiguous
        let mut tx = self.write_tx().await?;
        let all = db::select_vendor_connections_in(&mut tx, v.id).await?;
        // a label taken says so first (labels stay taken by revoked connections)
        if all.iter().any(|c| c.label == label.trim()) {
            return Err(ServiceError::Conflict(format!(
                "vendor {vendor} has a connection labelled {:?} already",
                label.trim()
            )));
        }
        let default_now = db::select_vendor_default_connection_in(&mut tx, v.id).await?;
        let live: Vec<db::ConnectionRow> =
            all.into_iter().filter(|c| c.revoked_at.is_none()).collect();
        let asks = v.kind != "mcp" && !live.is_empty();
        // the current one: the vendor's default, else its only live connection
        let current = default_now
            .filter(|id| live.iter().any(|c| c.id == *id))
            .or_else(|| (live.len() == 1).then(|| live[0].id));
        if asks {
            match choice {
                None => {
                    return Err(ServiceError::Invalid(format!(
                        "{vendor} has a live connection already ({}): say which one its calls use, the new one or the current one",
                        live.iter().map(|c| c.label.as_str()).collect::<Vec<_>>().join(", ")
                    )))
                }
                Some(DefaultChoice::Current) if current.is_none() => {
                    return Err(ServiceError::Invalid(format!(
                        "{vendor} has several live connections and no default: choose its default first, or make the new one the default"
                    )))
                }
                _ => {}
            }
        }
        let id = self.insert_new_connection(&mut tx, &v, &new).await?;
        // an HTTP vendor's default: the new one when asked for (a first connection too),
        // else the current one when there is a choice to keep
        let default = match choice {
            _ if v.kind == "mcp" => None,
            Some(DefaultChoice::New) => Some(Some(id)),
            _ if asks => Some(current),
            _ => None,
        };
        if let Some(default) = default {
            db::update_vendor_default_connection(&mut tx, v.id, default).await?;
        }
        tx.commit().await?;
        let c = self.connection_added(&v, id).await?;
        tracing::info!(vendor, connection = %c.label, by = %actor.label(), "connection added");
        let detail = format!(
            "{}{}",
            c.auth_kind,
            if c.vendor_default {
                ", the vendor's default"
            } else {
                ""
            }
        );
        self.audit(
            actor,
            AuditAction::ConnectionAdd,
            &super::connections::connection_target(&c),
            Some(&detail),
        )
        .await?;
        Ok(c)
    }

    /// Replaces connection `id`'s secret in place (issue 28.2: a key rotated without a
    /// second connection): calls use the new secret at once, the old one is gone (and
    /// leaves the write-ahead log); an MCP vendor's server starts again with it. Errors:
    /// `Invalid` (no such connection, revoked, of kind `none`, a secret the kind's rules
    /// refuse).
    pub async fn replace_connection_secret(
        &self,
        actor: &Actor,
        id: i64,
        secret: &str,
    ) -> ServiceResult<ConnectionInfo> {
        let c = db::select_connection(self.pool(), id)
            .await?
            .ok_or_else(|| ServiceError::Invalid(format!("no connection with id {id}")))?;
        if c.revoked_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "connection {id} ({}) is revoked: add a new one",
                c.label
            )));
        }
        if c.auth_kind == "none" {
            return Err(ServiceError::Invalid(format!(
                "connection {id} ({}) has no secret to replace",
                c.label
            )));
        }
        let secret = secret.trim_end_matches(['\r', '\n']);
        check_connection(
            &c.label,
            &c.auth_kind,
            c.header_or_param_name.as_deref(),
            Some(secret).filter(|s| !s.is_empty()),
        )
        .map_err(|(_, m)| ServiceError::Invalid(m))?;
        let sealed = self.inner.key.seal(secret);
        let mut tx = self.write_tx().await?;
        db::update_connection_replaced(&mut tx, id, &sealed, self.now()).await?;
        tx.commit().await?;
        // a test of the old secret says nothing of the new one
        self.inner
            .connection_tests
            .lock()
            .expect("tests lock")
            .remove(&id);
        self.checkpoint().await;
        self.state_changed().await;
        let v = self.vendor(&c.vendor).await?;
        if v.kind == "mcp" {
            self.stop_mcp_server(v.id).await;
        }
        tracing::info!(connection = id, vendor = %c.vendor, by = %actor.label(), "connection secret replaced");
        let info: ConnectionInfo = db::select_connection(self.pool(), id)
            .await?
            .map(Into::into)
            .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("connection vanished")))?;
        self.audit(
            actor,
            AuditAction::ConnectionReplace,
            &super::connections::connection_target(&info),
            None,
        )
        .await?;
        Ok(info)
    }

    /// Tests connection `id` with one harmless read (issue 28.2): for an HTTP vendor, a
    /// GET of its current tools that reads, takes no input, needs a credential and came
    /// from its document or a person (never one an agent wrote: an agent does not choose
    /// what a person's test sends), the shortest path, sent with this connection's
    /// credential; for an MCP vendor, its server's tools/list reached with this connection
    /// alone (a server of its own, stopped after; nothing of the vendor's tools changes).
    /// Nothing is logged as an agent's call, and a test is not a use. Errors: `Invalid`
    /// (no such connection, revoked, suspended, its vendor disabled or removed).
    pub async fn test_connection(&self, actor: &Actor, id: i64) -> ServiceResult<ConnectionTest> {
        let c = db::select_connection(self.pool(), id)
            .await?
            .ok_or_else(|| ServiceError::Invalid(format!("no connection with id {id}")))?;
        if c.revoked_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "connection {id} ({}) is revoked",
                c.label
            )));
        }
        // a suspended secret goes nowhere, a test included (security review 32.5)
        if c.suspended_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "connection {id} ({}) is suspended: {}; nothing was sent (confirm it on the vendor's page, or graft connection confirm {})",
                c.label,
                c.suspended_reason.clone().unwrap_or_default(),
                c.vendor
            )));
        }
        let v = self.vendor(&c.vendor).await?;
        if v.removed_at.is_some() || v.disabled_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {} is {}: nothing was sent",
                v.slug,
                if v.removed_at.is_some() {
                    "removed"
                } else {
                    "disabled"
                }
            )));
        }
        tracing::info!(connection = id, vendor = %c.vendor, by = %actor.label(), "connection tested");
        if v.kind == "mcp" {
            let test = self.test_mcp_connection(&v, &c).await?;
            self.keep_test(id, &test);
            if !test.ok {
                self.connection_failed(&v.slug, id, &test.message).await;
            }
            return Ok(test);
        }
        let tools = db::select_vendor_tools(self.pool(), &v.slug).await?;
        let read = tools
            .iter()
            .filter(|t| {
                t.retired_at.is_none()
                    && !t.first_author.starts_with("agent:")
                    && !t.authored_by.starts_with("agent:")
                    && t.method.eq_ignore_ascii_case("GET")
                    && t.read_only_hint
                    && !t.path_template.contains('{')
                    && !serde_json::from_str::<crate::domain::tool::Binding>(&t.binding)
                        .is_ok_and(|b| b.public)
                    && serde_json::from_str::<serde_json::Value>(&t.input_schema)
                        .ok()
                        .and_then(|s| s.get("required").cloned())
                        .and_then(|r| r.as_array().map(Vec::len))
                        .unwrap_or(0)
                        == 0
            })
            .min_by_key(|t| (t.path_template.len(), t.name.clone()));
        let Some(tool) = read else {
            let test = ConnectionTest {
                ok: false,
                tool: None,
                status: None,
                message: format!(
                    "{} has no tool that reads without input and needs a credential: nothing was sent (call one of its tools to try the connection)",
                    v.slug
                ),
            };
            self.keep_test(id, &test);
            return Ok(test);
        };
        let qualified = format!("{}__{}", tool.vendor, tool.name);
        let binding: crate::domain::tool::Binding =
            serde_json::from_str(&tool.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let credential = self.credential_of(&c)?;
        let op = crate::proxy::request::Operation {
            method: &tool.method,
            path_template: &tool.path_template,
            binding: &binding,
        };
        let planned =
            crate::proxy::request::build(&v.base_url, op, &Default::default(), &credential)
                .map_err(ServiceError::Invalid)?;
        let (ok, status, message) = match self.inner.proxy.send(&planned, v.internal).await {
            Ok(r) if (200..300).contains(&r.status) => {
                (true, Some(r.status), format!("{} answered HTTP {} to {qualified}: the credential works", v.slug, r.status))
            }
            Ok(r) if matches!(r.status, 401 | 403) => (
                false,
                Some(r.status),
                format!("{} refused the credential: HTTP {} to {qualified}", v.slug, r.status),
            ),
            Ok(r) => (
                false,
                Some(r.status),
                format!("{} answered HTTP {} to {qualified}: the request did not succeed (the credential may still be right)", v.slug, r.status),
            ),
            Err(e) => (false, None, format!("{} could not be reached: {e}", v.slug)),
        };
        let secrets = credential.secrets();
        let test = ConnectionTest {
            ok,
            tool: Some(qualified),
            status,
            message: crate::proxy::redact::redact(&message, &secrets),
        };
        self.keep_test(id, &test);
        if !ok {
            // the team's webhook hears of it (issue 28.3)
            self.connection_failed(&v.slug, id, &test.message).await;
        }
        Ok(test)
    }

    /// An MCP vendor's connection tested: its server's tools/list, reached with this
    /// connection alone, in a server of its own stopped after.
    async fn test_mcp_connection(
        &self,
        v: &db::VendorRow,
        c: &db::ConnectionRow,
    ) -> ServiceResult<ConnectionTest> {
        let spec = match self.upstream_spec_with(&v.slug, Some(c.id)).await? {
            Ok(spec) => spec,
            Err(answer) => {
                let message = match answer {
                    super::RunAnswer::Err { message, .. } => message,
                    _ => "its server cannot be reached".into(),
                };
                return Ok(ConnectionTest {
                    ok: false,
                    tool: None,
                    status: None,
                    message,
                });
            }
        };
        let listed = self.inner.upstreams.list_tools(&spec).await;
        self.inner.upstreams.stop(spec.vendor_id).await;
        let message = match &listed {
            Ok(tools) => format!(
                "its server answered tools/list with {} tool{}, reached with this connection alone (a server that lists its tools to anyone passes too: call one of its tools to be sure)",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            ),
            Err(e) => format!("its server's tools/list could not be read with this connection alone: {e}"),
        };
        Ok(ConnectionTest {
            ok: listed.is_ok(),
            tool: None,
            status: None,
            message: crate::proxy::redact::redact(&message, &spec.secrets()),
        })
    }

    /// Keeps the last test of each connection (in this process) for its page.
    fn keep_test(&self, id: i64, test: &ConnectionTest) {
        let mut tests = self.inner.connection_tests.lock().expect("tests lock");
        if tests.len() > 1024 {
            tests.clear();
        }
        tests.insert(id, (self.now(), test.ok, test.message.clone()));
    }

    /// The last test of connection `id` in this process: `(when (ms), ok, what happened)`.
    pub fn last_connection_test(&self, id: i64) -> Option<(i64, bool, String)> {
        self.inner
            .connection_tests
            .lock()
            .expect("tests lock")
            .get(&id)
            .cloned()
    }
}
