//! Connections (vendor credentials, SPEC §2, §8) and approvals of write tools (SPEC §4.4).

use super::error::unique_or;
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, ApprovalRow, ConnectionRow};
use serde::Serialize;

/// Shortest secret accepted: answers are redacted of every secret, which needs secrets
/// that cannot occur by chance.
pub const MIN_SECRET_CHARS: usize = 8;

/// The kinds of credentials a connection holds (SPEC §2 `auth_kind`).
pub const AUTH_KINDS: &[&str] = &["none", "bearer", "header", "query", "basic"];

/// Checks a new connection's fields (SPEC §2, §8) before anything is stored; `name` and
/// `secret` come trimmed, empty ones as `None`. Errors: `(field, message)`, the field
/// being `label`, `kind`, `name` or `secret`, so a form shows the message at its field.
/// Rules: a label of 1 to 64 characters; a kind of [`AUTH_KINDS`]; `header` and `query`
/// need a name (an HTTP token, RFC 9110 §5.1, that is not `Host`, `Content-Length`,
/// `Content-Type` or `Cookie`; a query name of letters, digits and `-_.[]`); every kind
/// but `none` needs a secret of at least [`MIN_SECRET_CHARS`] characters without control
/// characters; a `basic` secret is `user:password`.
pub fn check_connection(
    label: &str,
    kind: &str,
    name: Option<&str>,
    secret: Option<&str>,
) -> Result<(), (&'static str, String)> {
    if label.is_empty() || label.chars().count() > 64 {
        return Err(("label", "a connection label has 1 to 64 characters".into()));
    }
    // control characters, and the invisible ones that reorder or hide text (a label read
    // as another one)
    if label.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
    }) {
        return Err((
            "label",
            "a connection label may not contain control or invisible characters".into(),
        ));
    }
    if !AUTH_KINDS.contains(&kind) {
        return Err((
            "kind",
            format!(
                "unknown kind {kind:?}: use one of {}",
                AUTH_KINDS.join(", ")
            ),
        ));
    }
    if matches!(kind, "header" | "query") {
        let Some(n) = name else {
            return Err((
                "name",
                format!(
                    "a {kind} connection needs a name: the {} that carries the secret",
                    if kind == "header" {
                        "header"
                    } else {
                        "query parameter"
                    }
                ),
            ));
        };
        let valid = match kind {
            // an HTTP token (RFC 9110 §5.1)
            "header" => http::HeaderName::from_bytes(n.as_bytes()).is_ok(),
            _ => n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.[]".contains(c)),
        };
        if !valid {
            return Err(("name", format!("{n:?} is not a valid {kind} name")));
        }
        if kind == "header"
            && ["host", "content-length", "content-type", "cookie"]
                .contains(&n.to_ascii_lowercase().as_str())
        {
            return Err(("name", format!("{n:?} cannot carry a credential")));
        }
    }
    if kind == "none" {
        return Ok(());
    }
    let Some(s) = secret else {
        return Err(("secret", format!("a {kind} connection needs a secret")));
    };
    if s.chars().count() < MIN_SECRET_CHARS {
        return Err((
            "secret",
            format!("the secret is shorter than {MIN_SECRET_CHARS} characters: that is no credential (and could not be told apart in answers to redact it)"),
        ));
    }
    if kind == "basic" && !s.contains(':') {
        return Err(("secret", "a basic secret is user:password".into()));
    }
    if s.chars().any(|c| c.is_control()) {
        return Err((
            "secret",
            "the secret may not contain control characters".into(),
        ));
    }
    Ok(())
}

/// A connection as shown to people: never its secret.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// Id.
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Label.
    pub label: String,
    /// Auth kind.
    pub auth_kind: String,
    /// Header or parameter name.
    pub name: Option<String>,
    /// Creation time (ms).
    pub created_at: i64,
    /// Revocation time (ms).
    pub revoked_at: Option<i64>,
    /// Why it is suspended, when it is (its vendor moved to another origin; security
    /// review 32.5).
    pub suspended: Option<String>,
}

impl From<ConnectionRow> for ConnectionInfo {
    fn from(c: ConnectionRow) -> Self {
        Self {
            id: c.id,
            vendor: c.vendor,
            label: c.label,
            auth_kind: c.auth_kind,
            name: c.header_or_param_name,
            created_at: c.created_at,
            revoked_at: c.revoked_at,
            suspended: c.suspended_at.and(c.suspended_reason),
        }
    }
}

impl Graft {
    /// Adds a connection to a vendor; the secret is sealed before it is stored and never
    /// shown again. `name` is required for `header` and `query`; a `basic` secret is
    /// `user:password`. Errors: `VendorNotFound`, `Invalid`, `Conflict` (label taken).
    pub async fn add_connection(
        &self,
        vendor: &str,
        label: &str,
        kind: &str,
        name: Option<&str>,
        secret: Option<&str>,
    ) -> ServiceResult<ConnectionInfo> {
        let v = self.live_vendor(vendor).await?;
        let label = label.trim();
        // only a header or query connection has a name
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty() && matches!(kind, "header" | "query"));
        let secret = secret
            .map(|s| s.trim_end_matches(['\r', '\n']))
            .filter(|s| !s.is_empty());
        check_connection(label, kind, name, secret).map_err(|(_, m)| ServiceError::Invalid(m))?;
        let sealed = match (kind, secret) {
            ("none", _) | (_, None) => None,
            (_, Some(s)) => Some(self.inner.key.seal(s)),
        };
        let id = db::insert_connection(
            self.pool(),
            v.id,
            label,
            kind,
            name,
            sealed.as_deref(),
            self.now(),
        )
        .await
        .map_err(|e| {
            unique_or(e, ServiceError::Conflict, || {
                format!("vendor {vendor} has a connection labelled {label:?} already")
            })
        })?;
        let row = db::select_connection(self.pool(), id)
            .await?
            .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("connection vanished")))?;
        self.state_changed().await;
        Ok(row.into())
    }

    /// Every connection, without secrets.
    pub async fn connections(&self) -> ServiceResult<Vec<ConnectionInfo>> {
        Ok(db::select_connections(self.pool())
            .await?
            .into_iter()
            .map(Into::into)
            .collect())
    }

    /// Sets a tool's default connection (`None` clears it). Errors: `ToolNotFound`,
    /// `Invalid` (unknown connection, or one of another vendor).
    pub async fn set_tool_connection(
        &self,
        vendor: &str,
        name: &str,
        connection: Option<i64>,
    ) -> ServiceResult<()> {
        let tool = self.tool(vendor, name).await?;
        if let Some(id) = connection {
            let c = db::select_connection(self.pool(), id)
                .await?
                .ok_or_else(|| ServiceError::Invalid(format!("no connection with id {id}")))?;
            if c.vendor != vendor {
                return Err(ServiceError::Invalid(format!(
                    "connection {id} belongs to {}, not {vendor}",
                    c.vendor
                )));
            }
        }
        db::update_tool_connection(self.pool(), tool.id, connection).await?;
        self.state_changed().await;
        Ok(())
    }

    /// Every approval, pending first.
    pub async fn approvals(&self) -> ServiceResult<Vec<ApprovalRow>> {
        Ok(db::select_approvals(self.pool()).await?)
    }

    /// A person's decision on one agent's use of one write tool (SPEC §4.4): `granted`
    /// or `denied`. Only people decide; an agent's own client never can.
    /// Errors: `AgentNotFound`, `ToolNotFound`, `Invalid` (an agent as the actor).
    pub async fn decide_approval(
        &self,
        actor: &Actor,
        agent: &str,
        vendor: &str,
        name: &str,
        grant: bool,
    ) -> ServiceResult<ApprovalRow> {
        self.decide_approval_seen(actor, agent, vendor, name, grant, None)
            .await
    }

    /// [`Graft::decide_approval`] on the tool version the person was shown (`seen`, the
    /// version the console's row named): refused with `Conflict` when a newer version
    /// exists, so nobody approves a definition they did not see (issue 12.15).
    pub async fn decide_approval_seen(
        &self,
        actor: &Actor,
        agent: &str,
        vendor: &str,
        name: &str,
        grant: bool,
        seen: Option<i64>,
    ) -> ServiceResult<ApprovalRow> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Invalid(
                "only a person can decide an approval".into(),
            ));
        };
        let a = self.agent_by_name(agent).await?;
        let t = self.tool(vendor, name).await?;
        if t.vendor_removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {vendor} was removed: its tools' approvals cannot be decided until it is brought back (import its document again)"
            )));
        }
        if let Some(v) = seen.filter(|v| *v != t.version && grant) {
            return Err(ServiceError::Conflict(format!(
                "{vendor}__{name} is at version {} now, not version {v} that you were shown: look at it again before approving",
                t.version
            )));
        }
        let state = if grant { "granted" } else { "denied" };
        db::upsert_approval_decision(
            self.pool(),
            a.id,
            t.id,
            t.version,
            state,
            &format!("person:{person}"),
            self.now(),
        )
        .await?;
        Ok(db::select_approval(self.pool(), a.id, t.id)
            .await?
            .expect("decided row exists"))
    }
}
