//! Vendors (SPEC §2): adding, changing, removing, moving between origins.

use super::{demote_in, unique_or};
use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, VendorRow};
use crate::domain::audit::AuditAction;
use crate::domain::names::VendorSlug;
use crate::domain::Cause;

impl Graft {
    /// Brings removed vendor `slug` back as it was when removed (issue 28.11, the
    /// console's Restore): enabled, with its base URL, stored document and tools (those
    /// its document retired stay retired), as `actor` (audited). Its connections stay
    /// revoked and agents promote its tools again. Errors: `VendorNotFound`, `Invalid`
    /// (not removed; an MCP server, which is added again with its URL or command).
    pub async fn restore_vendor(&self, actor: &Actor, slug: &str) -> ServiceResult<VendorRow> {
        let v = self.vendor(slug).await?;
        if v.removed_at.is_none() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is not removed: nothing to restore (to change its tools, import a newer document: the Vendors page, or graft vendor import)"
            )));
        }
        if v.kind == "mcp" {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is an MCP server: add it again with its URL or command"
            )));
        }
        let mut tx = self.write_tx().await?;
        db::update_vendor_removed(&mut tx, v.id, None).await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), "removed vendor restored");
        self.audit(
            actor,
            AuditAction::VendorEdit,
            slug,
            Some("restored after its removal"),
        )
        .await?;
        self.state_changed().await;
        self.toolbox_changed().await;
        self.vendor(slug).await
    }

    /// Creates a vendor; the slug of a removed vendor brings that vendor back (enabled,
    /// with this name and base URL, its tools callable again and no document until one
    /// is imported: the one stored was of the API it had; [`Graft::restore_vendor`]
    /// brings a vendor back as it was). Errors: invalid slug or base URL, or the slug is taken.
    pub async fn add_vendor(
        &self,
        slug: &str,
        display_name: Option<&str>,
        base_url: &str,
    ) -> ServiceResult<VendorRow> {
        let slug = VendorSlug::parse(slug).map_err(ServiceError::Invalid)?;
        let base_url = check_base_url(base_url)?;
        let name = display_name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(slug.as_str());
        check_vendor_name(name).map_err(ServiceError::Invalid)?;
        // a removed vendor's slug brings that vendor back, with the URL (and the name)
        // given
        if let Some(old) = db::select_vendor_by_slug(&self.inner.pool, slug.as_str()).await? {
            if old.removed_at.is_some() {
                let keep = display_name.map(str::trim).is_none_or(str::is_empty);
                let name = if keep {
                    old.display_name.as_str()
                } else {
                    name
                };
                let mut tx = self.write_tx().await?;
                db::update_vendor_removed(&mut tx, old.id, None).await?;
                db::clear_vendor_document(&mut tx, old.id).await?;
                if old.kind == "mcp" {
                    db::update_vendor_openapi_kind(&mut tx, old.id).await?;
                    db::update_vendor_tools_retired(&mut tx, old.id, self.now()).await?;
                }
                db::update_vendor(&mut tx, old.id, Some(name), Some(&base_url)).await?;
                // approvals given at the old origin do not follow it to a new one
                let (was, is) = (origin_of(&old.base_url), origin_of(&base_url));
                let mut moved = None;
                if was != is {
                    moved = Some(
                        move_origin_in(
                            &mut tx,
                            old.id,
                            slug.as_str(),
                            &was,
                            &is,
                            &Actor::Rule,
                            self.now(),
                        )
                        .await?,
                    );
                }
                tx.commit().await?;
                let repended = moved.map_or(0, OriginMove::logged);
                tracing::info!(vendor = slug.as_str(), "removed vendor brought back");
                let why = format!("its base URL moved from {was} to {is}");
                self.approvals_asked_again(slug.as_str(), repended, &why)
                    .await;
                self.state_changed().await;
                self.toolbox_changed().await;
                return self.vendor(slug.as_str()).await;
            }
        }
        let mut conn = self.inner.pool.acquire().await?;
        db::insert_vendor(&mut conn, slug.as_str(), name, &base_url, self.now())
            .await
            .map_err(|e| {
                unique_or(e, ServiceError::Conflict, || {
                    format!("a vendor {:?} exists already", slug.as_str())
                })
            })?;
        self.vendor(slug.as_str()).await
    }

    /// Changes a vendor (issue 14.3): its display name and/or base URL (checked as for a
    /// new vendor), and whether it is `enabled`. A base URL on another origin (scheme,
    /// host or port) suspends the vendor's connections until a person confirms them
    /// ([`Graft::confirm_connections`]) and sets its granted approvals back to pending,
    /// both saying from where to where (security review 32.5; see
    /// [`Graft::origin_move`] to ask first). Disabling takes its tools out of search
    /// and refuses their calls and promotions, and demotes them from every working set
    /// (cause `vendor_disabled`; each agent affected gets list_changed); enabling brings
    /// the tools back to search (agents promote them again). Returns the vendor and the
    /// entries demoted. Errors: `VendorNotFound`, `Invalid` (removed, nothing to change, a
    /// bad URL or an empty name).
    pub async fn set_vendor(
        &self,
        actor: &Actor,
        slug: &str,
        display_name: Option<&str>,
        base_url: Option<&str>,
        enabled: Option<bool>,
    ) -> ServiceResult<(VendorRow, usize)> {
        let v = self.live_vendor(slug).await?;
        if display_name.is_none() && base_url.is_none() && enabled.is_none() {
            return Err(ServiceError::Invalid(
                "nothing to change: give a name, a base URL, or enable or disable".into(),
            ));
        }
        let name = match display_name.map(str::trim) {
            Some("") => return Err(ServiceError::Invalid("the name is empty".into())),
            Some(n) => {
                check_vendor_name(n).map_err(ServiceError::Invalid)?;
                Some(n)
            }
            other => other,
        };
        if base_url.is_some() && v.kind == "mcp" {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} is an MCP server: remove it and add it again to reach another server"
            )));
        }
        let url = base_url.map(check_base_url).transpose()?;
        let moved = url
            .as_deref()
            .map(|u| (origin_of(&v.base_url), origin_of(u)))
            .filter(|(old, new)| old != new);
        let now = self.now();
        let mut tx = self.write_tx().await?;
        db::update_vendor(&mut tx, v.id, name, url.as_deref()).await?;
        let mut origin_move = None;
        if let Some((old, new)) = &moved {
            origin_move = Some(move_origin_in(&mut tx, v.id, slug, old, new, actor, now).await?);
        }
        let mut demoted: Vec<(i64, i64)> = Vec::new();
        match (enabled, v.disabled_at) {
            (Some(false), None) => {
                db::update_vendor_disabled(&mut tx, v.id, Some(now)).await?;
                demoted = db::select_vendor_entries(&mut tx, v.id).await?;
                demote_in(&mut tx, &demoted, Cause::VendorDisabled, actor, now).await?;
            }
            (Some(true), Some(_)) => db::update_vendor_disabled(&mut tx, v.id, None).await?,
            _ => {}
        }
        tx.commit().await?;
        let repended = origin_move.map_or(0, OriginMove::logged);
        if enabled == Some(false) {
            // an MCP vendor's server stops with it (issue 27.4)
            self.stop_mcp_server(v.id).await;
        }
        tracing::info!(vendor = slug, by = %actor.label(), name = ?name, base_url = ?url, enabled = ?enabled, demoted = demoted.len(), "vendor changed");
        // the base URL is read by calls, the name and the state by search
        self.state_changed().await;
        self.toolbox_changed().await;
        if let Some((old, new)) = &moved {
            let why = format!("its base URL moved from {old} to {new}");
            self.approvals_asked_again(slug, repended, &why).await;
        }
        self.changed_entries(&demoted).await;
        let mut said = Vec::new();
        if let Some(n) = name {
            said.push(format!("name {n:?}"));
        }
        if let Some(u) = &url {
            said.push(format!("base URL {u}"));
        }
        match enabled {
            Some(true) => said.push("enabled".into()),
            Some(false) => said.push(format!("disabled ({} tools demoted)", demoted.len())),
            None => {}
        }
        self.audit(actor, AuditAction::VendorEdit, slug, Some(&said.join(", ")))
            .await?;
        Ok((self.vendor(slug).await?, demoted.len()))
    }

    /// Removes a vendor (issue 14.3): it is disabled (its tools leave search and refuse
    /// calls, acquire and promotion), its tools are demoted from every working set
    /// (cause `vendor_removed`; each agent affected gets list_changed), its connections
    /// are revoked with their secrets dropped (and its tools' default connections
    /// cleared), and it leaves the vendor lists. Its tools, versions, history, calls,
    /// import history and stored document stay for the record; restoring it
    /// ([`Graft::restore_vendor`], from that document), importing its document again or
    /// adding a vendor with its slug brings it back. Returns `(entries demoted, connections revoked)`.
    /// Errors: `VendorNotFound`, `Invalid` (removed already).
    pub async fn remove_vendor(&self, actor: &Actor, slug: &str) -> ServiceResult<(usize, i64)> {
        let v = self.vendor(slug).await?;
        if v.removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} was removed already"
            )));
        }
        let now = self.now();
        let mut tx = self.write_tx().await?;
        db::update_vendor_removed(&mut tx, v.id, Some(now)).await?;
        let demoted = db::select_vendor_entries(&mut tx, v.id).await?;
        demote_in(&mut tx, &demoted, Cause::VendorRemoved, actor, now).await?;
        let revoked = db::revoke_vendor_connections(&mut tx, v.id, now).await?;
        // its tools' default connections are revoked: a tool brought back uses the
        // vendor's new connection, not a pin to a dead one
        db::clear_vendor_tool_connections(&mut tx, v.id).await?;
        tx.commit().await?;
        self.stop_mcp_server(v.id).await;
        self.checkpoint().await;
        tracing::info!(vendor = slug, by = %actor.label(), demoted = demoted.len(), connections = revoked, "vendor removed");
        self.state_changed().await;
        self.toolbox_changed().await;
        self.changed_entries(&demoted).await;
        let plural = |n: usize, noun: &str| match n {
            1 => format!("1 {noun}"),
            n => format!("{n} {noun}s"),
        };
        let detail = format!(
            "{} demoted, {} revoked",
            plural(demoted.len(), "tool"),
            plural(revoked as usize, "connection")
        );
        self.audit(actor, AuditAction::VendorRemove, slug, Some(&detail))
            .await?;
        Ok((demoted.len(), revoked))
    }

    /// Whether giving vendor `slug` the base URL `new` moves it to another origin:
    /// `(old origin, new origin)` when it does (then its connections are suspended and
    /// its approvals go back to pending). Errors: `VendorNotFound`, `Invalid` (a bad URL).
    pub async fn origin_move(
        &self,
        slug: &str,
        new: &str,
    ) -> ServiceResult<Option<(String, String)>> {
        let v = self.live_vendor(slug).await?;
        let new = check_base_url(new)?;
        let (old, new) = (origin_of(&v.base_url), origin_of(&new));
        Ok((old != new).then_some((old, new)))
    }

    /// A person confirms a vendor's connections at its current base URL (after a move to
    /// another origin); returns how many were suspended. Errors: `VendorNotFound`,
    /// `Invalid` (removed, or nothing suspended).
    pub async fn confirm_connections(&self, actor: &Actor, slug: &str) -> ServiceResult<u64> {
        let v = self.live_vendor(slug).await?;
        let mut tx = self.write_tx().await?;
        let n = db::confirm_vendor_connections(&mut tx, v.id).await?;
        tx.commit().await?;
        if n == 0 {
            return Err(ServiceError::Invalid(format!(
                "no connection of {slug} waits for a confirmation"
            )));
        }
        tracing::info!(vendor = slug, by = %actor.label(), connections = n, origin = %origin_of(&v.base_url), "connections confirmed at the vendor's new origin");
        self.state_changed().await;
        let detail = format!("{n} connections confirmed at {}", origin_of(&v.base_url));
        self.audit(actor, AuditAction::VendorEdit, slug, Some(&detail))
            .await?;
        Ok(n)
    }

    /// Marks a vendor internal or not (security review 32.7): an internal vendor's calls
    /// may go to private and link-local addresses; loopback needs
    /// `GRAFT_VENDOR_LOOPBACK=allow` whatever the mark. Errors: `VendorNotFound`,
    /// `Invalid` (removed).
    pub async fn set_vendor_internal(
        &self,
        actor: &Actor,
        slug: &str,
        internal: bool,
    ) -> ServiceResult<VendorRow> {
        let v = self.live_vendor(slug).await?;
        let mut tx = self.write_tx().await?;
        db::update_vendor_internal(&mut tx, v.id, internal).await?;
        tx.commit().await?;
        tracing::info!(vendor = slug, by = %actor.label(), internal, "vendor marked");
        self.state_changed().await;
        self.vendor(slug).await
    }

    /// A vendor's tools (retired ones not counted) and the working-set entries of them.
    pub async fn vendor_counts(&self, vendor_id: i64) -> ServiceResult<(i64, i64)> {
        Ok(db::select_vendor_counts(&self.inner.pool, vendor_id).await?)
    }

    /// When `slug` is a removed vendor's, how many tools it has: adding a vendor with
    /// that slug brings them back (the console and CLI say so).
    pub async fn removed_vendor_tools(&self, slug: &str) -> ServiceResult<Option<i64>> {
        match db::select_vendor_by_slug(&self.inner.pool, slug).await? {
            Some(v) if v.removed_at.is_some() => Ok(Some(self.vendor_counts(v.id).await?.0)),
            _ => Ok(None),
        }
    }

    /// The slugs of removed vendors (importing a document under one brings it back).
    pub async fn removed_vendors(&self) -> ServiceResult<Vec<String>> {
        Ok(db::select_vendors(&self.inner.pool)
            .await?
            .into_iter()
            .filter(|v| v.removed_at.is_some())
            .map(|v| v.slug)
            .collect())
    }
}

/// Longest vendor display name, in characters (a longer document title is cut).
pub const MAX_VENDOR_NAME: usize = 100;

/// Refuses a vendor display name over [`MAX_VENDOR_NAME`] characters. Errors: the rule,
/// as a sentence.
pub fn check_vendor_name(name: &str) -> Result<(), String> {
    if name.chars().count() > MAX_VENDOR_NAME {
        return Err(format!(
            "a vendor name has at most {MAX_VENDOR_NAME} characters"
        ));
    }
    Ok(())
}

/// A vendor's base URL moved from origin `old` to `new`: stored secrets and approved
/// writes were given for the old origin, so none of them goes to the new one until a
/// person says so (security review 32.5): its live connections are suspended and its
/// granted approvals go back to pending, both saying from where to where. Returns what
/// moved; [`OriginMove::logged`] after the commit logs it and gives the approvals for
/// [`Graft::approvals_asked_again`] (a preview's rolled-back move is not logged).
pub(crate) async fn move_origin_in(
    tx: &mut db::Conn,
    vendor_id: i64,
    slug: &str,
    old: &str,
    new: &str,
    actor: &Actor,
    now: i64,
) -> ServiceResult<OriginMove> {
    let why = format!("the vendor's base URL moved from {old} to {new}");
    let suspended = db::suspend_vendor_connections(tx, vendor_id, &why, now).await?;
    let repended = db::reset_vendor_approvals(tx, vendor_id, &why, now).await?;
    Ok(OriginMove {
        line: format!(
            "vendor {slug} moved by {} from {old} to {new}: {suspended} connections suspended, {} approvals pending again",
            actor.label(),
            repended.len()
        ),
        approvals: repended.len(),
    })
}

/// What [`move_origin_in`] did, to log once it is committed.
#[must_use]
pub(crate) struct OriginMove {
    line: String,
    /// Granted approvals put back to pending.
    pub(crate) approvals: usize,
}

impl OriginMove {
    /// Logs the committed move (a warning: secrets and approvals stopped following the
    /// vendor); returns the approvals put back to pending.
    pub(crate) fn logged(self) -> usize {
        tracing::warn!("{}", self.line);
        self.approvals
    }
}

/// The parameter names a person said carry `vendor`'s credential (issue 25.2).
pub(crate) fn credential_names(vendor: Option<&VendorRow>) -> Vec<String> {
    vendor
        .and_then(|v| v.credential_params.as_deref())
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The origin of a URL (RFC 6454: `scheme://host[:port]`, the port only when not the
/// scheme's default), or the URL itself when it does not parse.
pub fn origin_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| url.to_string())
}

/// Checks a vendor base URL: absolute `http`/`https` with a host, no query or fragment;
/// returned without a trailing `/`. Errors: `Invalid` with the reason.
pub fn check_base_url(url: &str) -> ServiceResult<String> {
    let u = url.trim();
    // the URL is quoted in errors without what precedes an '@' (it may hold a password)
    let shown = match u.split_once('@') {
        Some((_, host)) => format!("…@{host}"),
        None => u.to_string(),
    };
    let shown = shown.as_str();
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .ok_or_else(|| {
            ServiceError::Invalid(format!(
                "base URL {shown:?} must start with http:// or https://"
            ))
        })?;
    let host = rest.split('/').next().unwrap_or("");
    let Some(parsed) = url::Url::parse(u).ok().filter(|p| p.host_str().is_some()) else {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?} is not a valid URL"
        )));
    };
    // an address no call may ever reach (a cloud metadata endpoint, broadcast…) is
    // refused now, not on each call (security review 32.7); loopback and private
    // addresses depend on settings a person may still change, so calls judge them
    use crate::proxy::destination::{check, literal_ip, Reach};
    let anywhere = Reach {
        internal: true,
        loopback: true,
    };
    if let Some(Err(refused)) = literal_ip(&parsed).map(|ip| check(ip, anywhere)) {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?}: {}",
            refused.to_string().split(';').next().unwrap_or_default()
        )));
    }
    // an OpenAPI server variable with no default (`https://{region}.example.com`)
    if u.contains('{') || u.contains('}') {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?} has a server variable left in braces: give the URL with its value"
        )));
    }
    if host.is_empty()
        || host.contains('@')
        || u.contains('?')
        || u.contains('#')
        || u.chars().any(char::is_whitespace)
    {
        return Err(ServiceError::Invalid(format!(
            "base URL {shown:?} must be scheme://host[:port][/path] without user info, query or fragment"
        )));
    }
    Ok(u.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::check_base_url;

    #[test]
    fn base_urls_are_absolute_http_without_query_user_info_or_variables() {
        assert_eq!(
            check_base_url(" https://api.example.com/v1/ ").unwrap(),
            "https://api.example.com/v1"
        );
        // loopback and private addresses are judged per call (settings may allow them)
        assert!(check_base_url("http://127.0.0.1:8080").is_ok());
        assert!(check_base_url("http://10.0.0.7/api").is_ok());
        for bad in [
            "ftp://api.example.com",
            "api.example.com",
            "https://",
            "https://user:pw@api.example.com",
            "https://api.example.com/?key=1",
            "https://api.example.com/#top",
            "https://{region}.api.example.com",
            "https://api.example.com/{version}",
            "http://169.254.169.254/latest",
            "http://[fd00:ec2::254]",
            "http://0.0.0.0:8080",
        ] {
            let e = check_base_url(bad).unwrap_err().to_string();
            assert!(!e.contains("pw@"), "no password quoted: {e}");
            if bad.contains('{') {
                assert!(e.contains("server variable"), "{bad}: {e}");
            }
            if bad.contains("169.254") {
                assert!(e.contains("is a cloud metadata"), "{bad}: {e}");
            }
        }
    }
}
