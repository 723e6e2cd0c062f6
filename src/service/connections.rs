//! Connections (vendor credentials, SPEC §2, §4.3, §8): adding, choosing per tool,
//! sealing and resealing secrets, and the credential a call sends.

use super::error::unique_or;
use super::RunAnswer;
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, ConnectionRow};
use crate::domain::audit::AuditAction;
use crate::domain::Cause;
use crate::proxy::request::Credential;
use serde::Serialize;
use serde_json::json;

/// Shortest secret accepted: answers are redacted of every secret, which needs secrets
/// that cannot occur by chance.
pub const MIN_SECRET_CHARS: usize = 8;

/// The kinds of credentials a connection holds (SPEC §2 `auth_kind`).
/// `env` is one environment variable of an MCP vendor's local server (issue 27.1).
pub const AUTH_KINDS: &[&str] = &["none", "bearer", "header", "query", "basic", "env"];

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
    if kind == "env" {
        let Some(n) = name else {
            return Err((
                "name",
                "an env connection needs a name: the environment variable that carries the secret"
                    .into(),
            ));
        };
        crate::domain::mcp_vendor::check_env_name(n).map_err(|m| ("name", m))?;
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
    pub id: i64,
    /// Vendor slug.
    pub vendor: String,
    pub label: String,
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
    /// When a call last used it (ms; noted at most once a minute).
    pub last_used_at: Option<i64>,
    /// When its secret was last replaced in place (ms).
    pub secret_replaced_at: Option<i64>,
    /// Whether it is its vendor's default connection (issue 28.2).
    pub vendor_default: bool,
    /// Whether it can be its vendor's default: an HTTP vendor's (an MCP vendor's
    /// connections all apply at once).
    pub can_be_default: bool,
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
            last_used_at: c.last_used_at,
            secret_replaced_at: c.secret_replaced_at,
            vendor_default: c.vendor_default,
            can_be_default: c.vendor_kind != "mcp",
        }
    }
}

/// A new connection, checked and with its secret sealed, not stored yet.
pub(super) struct NewConnection {
    label: String,
    kind: String,
    name: Option<String>,
    sealed: Option<String>,
}

/// How often a connection's last use is written, per process (ms).
const USED_EVERY_MS: i64 = 60_000;

impl Graft {
    /// Notes that a call used connection `id` (its "last used"), at most once a minute
    /// per process. A failure is only logged.
    pub(crate) async fn note_connection_used(&self, id: i64) {
        let now = self.now();
        {
            let mut used = self.inner.connections_used.lock().expect("used lock");
            match used.get(&id) {
                Some(at) if now - at < USED_EVERY_MS => return,
                _ => {
                    used.insert(id, now);
                }
            }
        }
        if let Err(e) = db::update_connection_used(self.pool(), id, now).await {
            tracing::warn!(error = ?e, connection = id, "cannot note a connection's last use");
        }
    }

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
        let new = self.new_connection(&v, label, kind, name, secret)?;
        let mut tx = self.write_tx().await?;
        let id = self.insert_new_connection(&mut tx, &v, &new).await?;
        tx.commit().await?;
        self.connection_added(&v, id).await
    }

    /// Checks and seals a new connection of vendor `v` (see [`Graft::add_connection`]).
    pub(super) fn new_connection(
        &self,
        v: &db::VendorRow,
        label: &str,
        kind: &str,
        name: Option<&str>,
        secret: Option<&str>,
    ) -> ServiceResult<NewConnection> {
        let vendor = &v.slug;
        let label = label.trim();
        // only a header, query or env connection has a name
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty() && matches!(kind, "header" | "query" | "env"));
        // what each kind of vendor can send (SPEC §10.2, issue 27.1)
        let fits = match (v.kind.as_str(), v.mcp_url.is_some()) {
            ("mcp", true) => matches!(kind, "bearer" | "header" | "basic"),
            ("mcp", false) => kind == "env",
            _ => kind != "env",
        };
        if !fits {
            return Err(ServiceError::Invalid(match (v.kind.as_str(), v.mcp_url.is_some()) {
                ("mcp", true) => format!("{vendor} is a remote MCP server: its connections are headers (bearer, header or basic), not {kind}"),
                ("mcp", false) => format!("{vendor} is a local MCP server: its connections are environment variables (kind env, with --name VARIABLE), not {kind}"),
                _ => format!("{vendor} is an HTTP vendor: env connections are for local MCP servers"),
            }));
        }
        let secret = secret
            .map(|s| s.trim_end_matches(['\r', '\n']))
            .filter(|s| !s.is_empty());
        check_connection(label, kind, name, secret).map_err(|(_, m)| ServiceError::Invalid(m))?;
        let sealed = match (kind, secret) {
            ("none", _) | (_, None) => None,
            (_, Some(s)) => Some(self.inner.key.seal(s)),
        };
        Ok(NewConnection {
            label: label.to_string(),
            kind: kind.to_string(),
            name: name.map(str::to_string),
            sealed,
        })
    }

    /// Inserts a checked new connection in write transaction `tx`; returns its id.
    /// Errors: `Conflict` (label taken).
    pub(super) async fn insert_new_connection(
        &self,
        tx: &mut db::Conn,
        v: &db::VendorRow,
        new: &NewConnection,
    ) -> ServiceResult<i64> {
        db::insert_connection(
            tx,
            v.id,
            &new.label,
            &new.kind,
            new.name.as_deref(),
            new.sealed.as_deref(),
            self.now(),
        )
        .await
        .map_err(|e| {
            unique_or(e, ServiceError::Conflict, || {
                format!(
                    "vendor {} has a connection labelled {:?} already",
                    v.slug, new.label
                )
            })
        })
    }

    /// After a new connection of `v` committed: others hear of it, an MCP vendor's
    /// server starts again with it at the next need; the new row.
    pub(super) async fn connection_added(
        &self,
        v: &db::VendorRow,
        id: i64,
    ) -> ServiceResult<ConnectionInfo> {
        let row = db::select_connection(self.pool(), id)
            .await?
            .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("connection vanished")))?;
        self.state_changed().await;
        if v.kind == "mcp" {
            self.stop_mcp_server(v.id).await;
        }
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

    /// Sets a tool's default connection (`None` clears it: the vendor's default, or its
    /// only connection, serves it), recorded in the audit log as `actor`'s (issue 28.8).
    /// Errors: `ToolNotFound`, `Invalid` (unknown connection, one of another vendor, or a
    /// revoked one).
    pub async fn set_tool_connection(
        &self,
        actor: &Actor,
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
            if c.revoked_at.is_some() {
                return Err(ServiceError::Invalid(format!(
                    "connection {id} ({}) is revoked: choose a live one",
                    c.label
                )));
            }
        }
        let detail = match connection {
            Some(id) => format!("{vendor}__{name} uses connection {id}"),
            None => format!("{vendor}__{name} uses the vendor's default"),
        };
        let mut tx = self.write_tx().await?;
        db::update_tool_connection(&mut tx, tool.id, connection).await?;
        self.audit_in(
            &mut tx,
            actor,
            AuditAction::ConnectionDefault,
            vendor,
            Some(&detail),
        )
        .await?;
        tx.commit().await?;
        self.state_changed().await;
        Ok(())
    }

    /// The connection a tool's calls use, for people: `(label, why)`.
    pub(super) async fn connection_in_words(
        &self,
        tool_id: i64,
    ) -> ServiceResult<Option<(String, String)>> {
        let (vendor_id, default, vendor_default) =
            db::select_tool_connection(self.pool(), tool_id).await?;
        let conns = db::select_vendor_connections(self.pool(), vendor_id).await?;
        Ok(match choose_connection(default, vendor_default, &conns) {
            Choice::None => None,
            Choice::Ambiguous(active) => Some((
                format!("{} active connections", active.len()),
                "ambiguous: choose the vendor's default connection (its page, or graft connection default)".into(),
            )),
            Choice::Chosen(c, why) => {
                let why = match (c.revoked_at, why) {
                    (Some(_), super::connections::Why::NoneActive) => {
                        "revoked: calls fail until a person adds a connection".to_string()
                    }
                    (Some(_), super::connections::Why::ToolDefault) => "the tool's default, revoked: calls fail until a person chooses another connection for it (its page, or graft tool connection)".to_string(),
                    (Some(_), w) => format!("{}, revoked: calls fail until a person adds a connection", w.words()),
                    (None, w) => w.words().to_string(),
                };
                Some((c.label.clone(), why))
            }
        })
    }

    /// Re-seals every stored connection secret under `new` (security review 32.6, `graft
    /// key rotate`), in one write transaction: each secret is opened with the key this
    /// service holds and sealed with `new`, so after the commit only `new` opens them.
    /// Returns how many were re-sealed. Errors: `Invalid` when a secret does not open
    /// with the current key (nothing is changed).
    pub async fn reseal_secrets(&self, new: &super::secrets::SecretKey) -> ServiceResult<usize> {
        let mut tx = self.write_tx().await?;
        let conns = db::select_connections(self.pool()).await?;
        let mut n = 0;
        for c in conns {
            let Some(sealed) = c.secret_ciphertext.as_deref() else {
                continue;
            };
            let plain = self.inner.key.open(sealed).map_err(|_| {
                ServiceError::Invalid(format!(
                    "the secret of connection {} ({}) does not open with the current key: nothing was changed",
                    c.id, c.label
                ))
            })?;
            db::update_connection_secret(&mut tx, c.id, &new.seal(&plain)).await?;
            n += 1;
        }
        tx.commit().await?;
        self.checkpoint().await;
        self.state_changed().await;
        Ok(n)
    }

    /// Checks that the secret key opens the stored secrets (a wrong `GRAFT_SECRET_KEY`
    /// is caught at start, not at the first call). Errors: `Invalid` with the remedy.
    pub async fn check_secret_key(&self) -> ServiceResult<()> {
        if let Some(c) = db::select_connections(self.pool())
            .await?
            .into_iter()
            .find(|c| c.secret_ciphertext.is_some())
        {
            self.inner.key.open(c.secret_ciphertext.as_deref().unwrap_or_default()).map_err(|_| {
                ServiceError::Invalid(format!(
                    "the secret key does not open the stored connection secrets (connection {} \"{}\" of {}): give Graft the key they were sealed with (GRAFT_SECRET_KEY, GRAFT_SECRET_KEY_FILE, else the data directory's secret.key; a key file that was missing was just created with a new key). After an interrupted `graft key rotate`, the new key is in secret.key.new beside the key file; after a rotation while a server ran, a connection that server added is sealed with the old key: revoke it and add it again",
                    c.id, c.label, c.vendor
                ))
            })?;
        }
        Ok(())
    }

    /// Why calls of `tool` would go without a usable credential, in a sentence for a
    /// person (issue 28.12: a tool promoted with no connection says so): its connection
    /// is revoked, suspended or ambiguous, or its vendor has none while its document
    /// declares a security scheme. `None` when it has one, when its operation declares
    /// none is needed (`security: []`), for an MCP server's tool, and for a vendor whose
    /// document declares no scheme. Errors: the database failed.
    pub async fn connection_warning(&self, tool: &db::ToolRow) -> ServiceResult<Option<String>> {
        if tool.method == crate::domain::mcp_vendor::MCP_METHOD {
            return Ok(None);
        }
        let public = serde_json::from_str::<crate::domain::tool::Binding>(&tool.binding)
            .is_ok_and(|b| b.public);
        if public {
            return Ok(None);
        }
        Ok(match self.credential_for(tool.id).await? {
            // no connection at all (a connection of kind `none` is a choice, not a gap)
            Ok((Credential::None, None)) => {
                let vendor = self.vendor(&tool.vendor).await?;
                vendor.auth_kind.is_some().then(|| {
                    format!(
                        "{} has no connection: its calls go without a credential, and the vendor will likely refuse them. Add one on the vendor's page.",
                        tool.vendor
                    )
                })
            }
            Ok(_) => None,
            Err(RunAnswer::Err { message, .. }) => Some(message),
            Err(_) => None,
        })
    }

    /// A tool's credential and vendor URL for a call, from memory while nothing changed.
    pub(crate) async fn call_setting(
        &self,
        tool: &db::ToolRow,
    ) -> ServiceResult<std::sync::Arc<super::hot::CallSetting>> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        if let Some(s) = hot.setting(tool.id, epoch) {
            return Ok(s);
        }
        let chosen = self.credential_for(tool.id).await?;
        let vendor = self.vendor(&tool.vendor).await?;
        let s = std::sync::Arc::new(super::hot::CallSetting {
            connection_id: chosen.as_ref().ok().and_then(|(_, id)| *id),
            credential: chosen.map(|(c, _)| c),
            base_url: vendor.base_url,
            internal: vendor.internal,
        });
        hot.put_setting(tool.id, epoch, s.clone());
        Ok(s)
    }

    /// The credential a tool's calls use (SPEC §4.5, issue 28.2: [`choose_connection`])
    /// and the connection it comes from. `Err(answer)` for a revoked, suspended or
    /// ambiguous one.
    pub(crate) async fn credential_for(
        &self,
        tool_id: i64,
    ) -> ServiceResult<Result<(Credential, Option<i64>), RunAnswer>> {
        let (vendor_id, default, vendor_default) =
            db::select_tool_connection(self.pool(), tool_id).await?;
        let conns = db::select_vendor_connections(self.pool(), vendor_id).await?;
        let c = match choose_connection(default, vendor_default, &conns) {
            Choice::None => return Ok(Ok((Credential::None, None))),
            Choice::Ambiguous(active) => {
                return Ok(Err(RunAnswer::err(
                    "connection_ambiguous",
                    "the vendor has several active connections, no default, and this tool has no default of its own: ask a person to choose the vendor's default connection",
                    json!({"connections": active.iter().map(|c| c.label.clone()).collect::<Vec<_>>()}),
                )))
            }
            Choice::Chosen(c, _) => c,
        };
        if c.revoked_at.is_some() {
            return Ok(Err(RunAnswer::err(
                "connection_revoked",
                format!(
                    "the connection {:?} this tool uses was revoked: ask a person for a new one",
                    c.label
                ),
                json!({"connection": c.label}),
            )));
        }
        if let Some(why) = c.suspended_at.and(c.suspended_reason.as_ref()) {
            return Ok(Err(RunAnswer::err(
                "connection_suspended",
                format!(
                    "{why}: its connection {:?} sends nothing until a person confirms it there (the vendor's page in the console, or graft connection confirm {})",
                    c.label, c.vendor
                ),
                json!({"connection": c.label}),
            )));
        }
        Ok(Ok((self.credential_of(c)?, Some(c.id))))
    }

    /// The secret of connection `c`, opened (`None`: it has none). Errors: `Internal`
    /// (it does not open with the key).
    pub(crate) fn open_secret(&self, c: &ConnectionRow) -> ServiceResult<Option<String>> {
        c.secret_ciphertext
            .as_ref()
            .map(|s| {
                self.inner
                    .key
                    .open(s)
                    .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e)))
            })
            .transpose()
    }

    /// The credential connection `c` sends (its secret opened).
    pub(crate) fn credential_of(&self, c: &ConnectionRow) -> ServiceResult<Credential> {
        let secret = self.open_secret(c)?.unwrap_or_default();
        let name = c.header_or_param_name.clone().unwrap_or_default();
        Ok(match c.auth_kind.as_str() {
            "bearer" => Credential::Bearer(secret),
            "header" => Credential::Header {
                name,
                value: secret,
            },
            "query" => Credential::Query {
                name,
                value: secret,
            },
            "basic" => {
                let (user, password) = secret.split_once(':').unwrap_or((secret.as_str(), ""));
                Credential::Basic {
                    user: user.into(),
                    password: password.into(),
                }
            }
            _ => Credential::None,
        })
    }

    /// Revokes a connection and, in the same transaction, demotes in every working set
    /// each tool whose calls would use it (cause `connection_revoked`, SPEC §5); each
    /// agent affected gets one list_changed. Returns the connection and how many entries
    /// were demoted. Errors: `Invalid` for an unknown or already revoked connection.
    pub async fn revoke_connection(
        &self,
        actor: &Actor,
        id: i64,
    ) -> ServiceResult<(super::connections::ConnectionInfo, usize)> {
        let now = self.now();
        let mut tx = self.write_tx().await?;
        let tools = db::select_tools_using_connection(&mut tx, id).await?;
        if !db::revoke_connection(&mut tx, id, now).await? {
            drop(tx);
            return Err(match db::select_connection(self.pool(), id).await? {
                Some(_) => ServiceError::Invalid(format!("connection {id} is revoked already")),
                None => ServiceError::Invalid(format!("no connection with id {id}")),
            });
        }
        let entries = db::sweep::select_entries_of_tools(&mut tx, &tools).await?;
        super::demote_in(&mut tx, &entries, Cause::ConnectionRevoked, actor, now).await?;
        tx.commit().await?;
        // the dropped secret leaves the write-ahead log too (security review 32.6)
        self.checkpoint().await;
        self.changed_entries(&entries).await;
        self.state_changed().await;
        let row = db::select_connection(self.pool(), id)
            .await?
            .expect("revoked row exists");
        // an MCP vendor's server holds the secret (a variable, a header): it stops now
        if let Ok(v) = self.vendor(&row.vendor).await {
            if v.kind == "mcp" {
                self.stop_mcp_server(v.id).await;
            }
        }
        let info: super::connections::ConnectionInfo = row.into();
        let detail = format!(
            "{} demoted",
            crate::numbers::count(entries.len() as i64, "tool")
        );
        self.audit(
            actor,
            AuditAction::ConnectionRevoke,
            &connection_target(&info),
            Some(&detail),
        )
        .await?;
        Ok((info, entries.len()))
    }
}

/// Why a connection is the one a tool's calls use (SPEC §4.5, issue 28.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The tool's own default.
    ToolDefault,
    /// The vendor's default connection.
    VendorDefault,
    /// The vendor's only active connection.
    OnlyOne,
    /// No active connection is left: the newest one, revoked (its calls are refused).
    NoneActive,
}

impl Why {
    /// In words, for people.
    pub fn words(self) -> &'static str {
        match self {
            Why::ToolDefault => "the tool's default",
            Why::VendorDefault => "the vendor's default",
            Why::OnlyOne => "the vendor's only active connection",
            Why::NoneActive => "the vendor's newest connection",
        }
    }
}

/// Which connection a tool's calls use.
#[derive(Debug)]
pub enum Choice<'a> {
    /// No connection at all: calls carry no credential.
    None,
    /// Several active connections and no default: the call is refused.
    Ambiguous(Vec<&'a ConnectionRow>),
    /// This one (maybe revoked or suspended: the call is refused then).
    Chosen(&'a ConnectionRow, Why),
}

/// The rule of SPEC §4.5 with issue 28.2's vendor default: the tool's default connection;
/// else the vendor's default when it is live; else the vendor's only active connection;
/// else, with none active, the newest (revoked: refused); several active and no default
/// are ambiguous. A tool's own default is kept even when revoked (a person chose that
/// credential for it: another is never put in its place silently).
/// A default that names no connection of `conns` counts as none.
pub fn choose_connection(
    tool_default: Option<i64>,
    vendor_default: Option<i64>,
    conns: &[ConnectionRow],
) -> Choice<'_> {
    let find = |id: Option<i64>| id.and_then(|id| conns.iter().find(|c| c.id == id));
    if let Some(c) = find(tool_default) {
        return Choice::Chosen(c, Why::ToolDefault);
    }
    // a revoked vendor default (of before revoking cleared it) gives way to live ones
    if let Some(c) = find(vendor_default).filter(|c| c.revoked_at.is_none()) {
        return Choice::Chosen(c, Why::VendorDefault);
    }
    let active: Vec<&ConnectionRow> = conns.iter().filter(|c| c.revoked_at.is_none()).collect();
    match (active.len(), conns.last()) {
        (1, _) => Choice::Chosen(active[0], Why::OnlyOne),
        (0, None) => Choice::None,
        (0, Some(last)) => Choice::Chosen(last, Why::NoneActive),
        _ => Choice::Ambiguous(active),
    }
}

/// How the audit log names a connection: `acme: ops key (#3)` (issue 28.8).
pub(crate) fn connection_target(c: &ConnectionInfo) -> String {
    format!("{}: {} (#{})", c.vendor, c.label, c.id)
}
