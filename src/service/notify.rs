//! The team's webhook (issue 28.3): set in the console or the CLI, one per
//! installation; notices on an approval requested, on a vendor's failed calls above
//! the threshold, and on a connection the vendor refused or whose test failed. Each
//! notice is posted in the background, signed (Standard Webhooks, see
//! [`crate::domain::notify`]) and retried with backoff; nothing waits for it.
//!
//! Counting is per process: with several instances, each counts the calls it served.
//!
//! Where notices may go follows the rules of vendor calls (security review 32.7,
//! [`crate::proxy::destination`]): a receiver's address is public (loopback too with
//! `GRAFT_VENDOR_LOOPBACK=allow`, private and link-local ones with
//! `GRAFT_WEBHOOK_INTERNAL=allow`); metadata addresses never. Refused addresses are
//! refused when the URL is set and again on each connection, so the console's Test
//! button cannot probe the internal network.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db::{self, WebhookRow};
use crate::domain::audit::AuditAction;
use crate::domain::notify::{self, Format, Notice};
use crate::proxy::destination::{self, CheckedResolver, Lookup, Reach, Refused};
use rand::RngCore;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// The window over which a vendor's failed calls are counted (minutes).
pub const ERROR_WINDOW_MINUTES: u32 = 5;

/// Least time between two notices of the same vendor's errors or the same connection's
/// failure (ms).
const QUIET_MS: i64 = 30 * 60_000;

/// How long a process trusts what it read of the settings (ms): another instance's
/// change reaches it within this time.
const SETTINGS_TTL_MS: i64 = 30_000;

/// Deliveries running at once; a notice past them waits.
const DELIVERIES: usize = 4;

/// Notices waiting or being delivered (with their retries) at most; one past them is
/// dropped and logged, so a receiver that hangs cannot make them pile up in memory.
const QUEUED: usize = 256;

/// The webhook as the console and the CLI show it: never the secret, nor the part of
/// the URL that can hold a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookView {
    /// Where notices are posted, as [`notify::shown_url`] shows it.
    pub url: String,
    /// The body format.
    pub format: Format,
    /// Failed calls of one vendor within [`ERROR_WINDOW_MINUTES`] that make a notice.
    pub error_threshold: i64,
    /// When it was set (ms) and by whom.
    pub changed_at: i64,
    pub changed_by: String,
    /// This process's last delivery since the webhook was last changed: when (ms), and
    /// what happened in words.
    pub last_delivery: Option<(i64, String)>,
}

/// How a person sets the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretChoice {
    /// Keep the one set (a new one when none is).
    Keep,
    /// Make a new one.
    New,
    /// This one (`whsec_` and base64, as Standard Webhooks writes them).
    Given(String),
}

/// A vendor's failed calls in the window (ms), and its last notice (ms).
type VendorFailures = (VecDeque<i64>, Option<i64>);

/// What the notifier keeps in memory.
pub(crate) struct Notifier {
    client: reqwest::Client,
    /// The settings read, and when (ms).
    settings: Mutex<Option<(i64, Option<WebhookRow>)>>,
    /// Each vendor's recent failed calls (ms) and its last notice (ms).
    vendor_errors: Mutex<HashMap<String, VendorFailures>>,
    /// Each connection's last failure notice (ms).
    connection_notices: Mutex<HashMap<i64, i64>>,
    /// The last delivery: when (ms), and what happened.
    last: Mutex<Option<(i64, String)>>,
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    /// Notices waiting or being delivered ([`QUEUED`] at most).
    queued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The first retry's wait (ms); each next one waits 4 times longer.
    backoff_ms: u64,
    /// What a receiver's address may be: public, loopback when allowed.
    reach: Reach,
    /// How a receiver's name is resolved (the client's resolver checks each answer).
    lookup: std::sync::Arc<dyn Lookup>,
}

impl Notifier {
    /// A notifier whose first retry waits `backoff_ms`, resolving receivers' names with
    /// `lookup`, posting where `reach` allows (`internal`: `GRAFT_WEBHOOK_INTERNAL=allow`,
    /// `loopback`: `GRAFT_VENDOR_LOOPBACK=allow`). Errors: the HTTP client cannot be
    /// built.
    pub(crate) fn new(
        backoff_ms: u64,
        lookup: std::sync::Arc<dyn Lookup>,
        reach: Reach,
    ) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(CheckedResolver {
                lookup: lookup.clone(),
                reach,
            })
            .user_agent(concat!("Graft/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            settings: Mutex::new(None),
            vendor_errors: Mutex::new(HashMap::new()),
            connection_notices: Mutex::new(HashMap::new()),
            last: Mutex::new(None),
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(DELIVERIES)),
            queued: Default::default(),
            backoff_ms,
            reach,
            lookup,
        })
    }

    /// Checks where `url` (checked by [`checked_url`]) would post: the address it spells,
    /// or each address its name resolves to now (a name that does not resolve passes:
    /// each delivery checks again). Errors: `Invalid` naming the refused address.
    async fn check_receiver(&self, url: &str) -> ServiceResult<()> {
        let parsed = url::Url::parse(url)
            .map_err(|_| ServiceError::Invalid(format!("{url:?} is not a URL")))?;
        let ips = match (destination::literal_ip(&parsed), parsed.host_str()) {
            (Some(ip), _) => vec![ip],
            (None, Some(name)) => self
                .lookup
                .lookup(name.to_string())
                .await
                .unwrap_or_default(),
            (None, None) => Vec::new(),
        };
        let refused: Vec<Refused> = ips
            .iter()
            .filter_map(|ip| destination::check(*ip, self.reach).err())
            .collect();
        match refused.first() {
            Some(r) if refused.len() == ips.len() => {
                Err(ServiceError::Invalid(receiver_refused(r)))
            }
            _ => Ok(()),
        }
    }
}

/// Words for a receiver's address the rules refuse.
fn receiver_refused(r: &Refused) -> String {
    let remedy = if r.what.contains("loopback") || r.what.contains("this machine") {
        "; set GRAFT_VENDOR_LOOPBACK=allow to post to a receiver on this machine (development and tests)"
    } else if r.what.contains("private") {
        "; set GRAFT_WEBHOOK_INTERNAL=allow to post to a receiver on the internal network"
    } else {
        ""
    };
    format!(
        "the webhook receiver's address {} is {}: notices go to public addresses only{remedy}",
        r.address, r.what
    )
}

/// Checks a webhook URL a person typed: absolute http(s) with a host. Errors in words.
fn checked_url(url: &str) -> ServiceResult<String> {
    let url = url.trim();
    let parsed = url::Url::parse(url).map_err(|_| {
        ServiceError::Invalid(format!(
            "{url:?} is not a URL (e.g. https://hooks.slack.com/services/…)"
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(ServiceError::Invalid(
            "a webhook URL starts with https:// (or http://) and names a host".into(),
        ));
    }
    Ok(url.to_string())
}

impl Graft {
    /// The webhook, if one is set, with this process's last delivery. Errors: the
    /// database failed.
    pub async fn webhook(&self) -> ServiceResult<Option<WebhookView>> {
        let last = self
            .inner
            .notifier
            .last
            .lock()
            .expect("notifier lock")
            .clone();
        Ok(self.load_webhook().await?.map(|w| WebhookView {
            url: notify::shown_url(&w.url),
            format: w.format,
            error_threshold: w.error_threshold,
            changed_at: w.changed_at,
            changed_by: w.changed_by,
            // a delivery to the URL or format before the last change says nothing of now
            last_delivery: last.filter(|(at, _)| *at >= w.changed_at),
        }))
    }

    /// Sets the webhook (issue 28.3): `url` (http or https; empty keeps the one set),
    /// `format`, the vendor error threshold (1–1000 failed calls within
    /// [`ERROR_WINDOW_MINUTES`]) and the secret. The URL is stored sealed, as the secret
    /// is (a Slack URL's path is a token), beside its [`notify::shown_url`]. Returns the
    /// secret when Graft made it (shown once). Audited as `setting.change`, naming the
    /// host only. Errors: `Invalid` (a bad URL, secret or threshold, no URL when none is
    /// set, an agent as the actor), `Internal` when the key cannot open the URL kept;
    /// the database failed.
    pub async fn set_webhook(
        &self,
        actor: &Actor,
        url: &str,
        format: Format,
        error_threshold: i64,
        secret: SecretChoice,
    ) -> ServiceResult<Option<String>> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Invalid(
                "only a person can set the webhook".into(),
            ));
        };
        let before = self.load_webhook().await?;
        // a URL kept was checked when it was set (each delivery checks it again), so a
        // CLI without the server's GRAFT_VENDOR_LOOPBACK can still change the rest
        let url = match (url.trim(), &before) {
            ("", Some(b)) => self.receiver_url(b).map_err(ServiceError::Internal)?,
            ("", None) => {
                return Err(ServiceError::Invalid(
                    "no webhook is set: give the URL notices go to".into(),
                ))
            }
            (typed, _) => {
                let url = checked_url(typed)?;
                self.inner.notifier.check_receiver(&url).await?;
                url
            }
        };
        if !(1..=1000).contains(&error_threshold) {
            return Err(ServiceError::Invalid(
                "the vendor error threshold is a number of failed calls from 1 to 1000".into(),
            ));
        }
        let (sealed, made) = match (secret, &before) {
            (SecretChoice::Keep, Some(b)) => (b.secret_ciphertext.clone(), None),
            (SecretChoice::Given(s), _) => {
                notify::secret_key(&s).map_err(ServiceError::Invalid)?;
                (self.inner.key.seal(s.trim()), None)
            }
            (SecretChoice::Keep | SecretChoice::New, _) => {
                let mut random = [0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut random);
                let s = notify::new_secret(random);
                (self.inner.key.seal(&s), Some(s))
            }
        };
        let row = WebhookRow {
            url: notify::shown_url(&url),
            url_ciphertext: self.inner.key.seal(&url),
            secret_ciphertext: sealed,
            format,
            error_threshold,
            changed_at: self.now(),
            changed_by: person.clone(),
        };
        db::upsert_webhook(self.pool(), &row).await?;
        *self.inner.notifier.settings.lock().expect("notifier lock") = None;
        let host = url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let secret_words = if made.is_some() { ", a new secret" } else { "" };
        self.audit(
            actor,
            AuditAction::SettingChange,
            "webhook",
            Some(&format!(
                "to {host} ({} format, {error_threshold} failed calls){secret_words}",
                format.as_str()
            )),
        )
        .await?;
        Ok(made)
    }

    /// The webhook's signing secret, for a person to copy to the receiver; `None` when
    /// no webhook is set. Errors: the database failed; `Internal` when the key cannot
    /// open it.
    pub async fn webhook_secret(&self) -> ServiceResult<Option<String>> {
        let Some(w) = self.load_webhook().await? else {
            return Ok(None);
        };
        self.inner
            .key
            .open(&w.secret_ciphertext)
            .map(Some)
            .map_err(|e| {
                ServiceError::Internal(anyhow::anyhow!("the webhook secret cannot be opened: {e}"))
            })
    }

    /// The webhook's whole URL (with any token in it), for a person who asked to see
    /// it; `None` when no webhook is set. Errors: the database failed; `Internal` when
    /// the key cannot open it.
    pub async fn webhook_url(&self) -> ServiceResult<Option<String>> {
        match self.load_webhook().await? {
            Some(w) => self
                .receiver_url(&w)
                .map(Some)
                .map_err(ServiceError::Internal),
            None => Ok(None),
        }
    }

    /// The webhook row, its URL sealed first when it was set before URLs were sealed
    /// (migration sqlite/0029). Errors: the database failed.
    async fn load_webhook(&self) -> ServiceResult<Option<WebhookRow>> {
        let Some(mut w) = db::select_webhook(self.pool()).await? else {
            return Ok(None);
        };
        if w.url_ciphertext.is_empty() {
            let sealed = self.inner.key.seal(&w.url);
            let shown = notify::shown_url(&w.url);
            if db::seal_webhook_url(self.pool(), &shown, &sealed).await? {
                w.url = shown;
                w.url_ciphertext = sealed;
            } else if let Some(now) = db::select_webhook(self.pool()).await? {
                w = now;
            }
        }
        Ok(Some(w))
    }

    /// The whole URL of `w`: its sealed URL opened, or the URL of a row set before URLs
    /// were sealed. Errors: the key cannot open it.
    fn receiver_url(&self, w: &WebhookRow) -> Result<String, anyhow::Error> {
        if w.url_ciphertext.is_empty() {
            return Ok(w.url.clone());
        }
        self.inner
            .key
            .open(&w.url_ciphertext)
            .map_err(|e| anyhow::anyhow!("the webhook URL cannot be opened: {e}"))
    }

    /// Removes the webhook; whether one was set. Audited. Errors: `Invalid` (an agent
    /// as the actor), the database failed.
    pub async fn clear_webhook(&self, actor: &Actor) -> ServiceResult<bool> {
        if !matches!(actor, Actor::Person(_)) {
            return Err(ServiceError::Invalid(
                "only a person can remove the webhook".into(),
            ));
        }
        let removed = db::delete_webhook(self.pool()).await?;
        *self.inner.notifier.settings.lock().expect("notifier lock") = None;
        if removed {
            self.audit(
                actor,
                AuditAction::SettingChange,
                "webhook",
                Some("removed"),
            )
            .await?;
        }
        Ok(removed)
    }

    /// Sends a test notice now, once, and says what the receiver answered ("200 OK"),
    /// or why nothing was sent. Errors: `Invalid` when no webhook is set; the database
    /// failed.
    pub async fn test_webhook(&self, actor: &Actor) -> ServiceResult<Result<String, String>> {
        let Actor::Person(person) = actor else {
            return Err(ServiceError::Invalid(
                "only a person can test the webhook".into(),
            ));
        };
        let Some(w) = self.load_webhook().await? else {
            return Err(ServiceError::Invalid("no webhook is set".into()));
        };
        let notice = Notice::Test {
            person: person.clone(),
        };
        Ok(self
            .deliver_once(&w, &notice, &notify_id())
            .await
            .map_err(|(e, _)| e))
    }

    /// The settings as this process last read them (at most [`SETTINGS_TTL_MS`] old);
    /// `None` when no webhook is set or the database failed.
    async fn webhook_settings(&self) -> Option<WebhookRow> {
        let now = self.now();
        if let Some((at, w)) = self
            .inner
            .notifier
            .settings
            .lock()
            .expect("notifier lock")
            .as_ref()
        {
            if now - at < SETTINGS_TTL_MS && now >= *at {
                return w.clone();
            }
        }
        match self.load_webhook().await {
            Ok(w) => {
                *self.inner.notifier.settings.lock().expect("notifier lock") =
                    Some((now, w.clone()));
                w
            }
            Err(e) => {
                tracing::warn!(error = ?e, "cannot read the webhook settings");
                None
            }
        }
    }

    /// Posts `notice` to the webhook in the background (nothing when none is set),
    /// retried with backoff ([`notify::backoff_ms`]) on a network error, 408, 429 or 5xx.
    pub(crate) async fn notify(&self, notice: Notice) {
        let Some(w) = self.webhook_settings().await else {
            return;
        };
        let queued = self.inner.notifier.queued.clone();
        if queued.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= QUEUED {
            queued.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            tracing::warn!(
                kind = notice.kind(),
                "a webhook notice was dropped: {QUEUED} are waiting for the receiver"
            );
            return;
        }
        let graft = self.clone();
        tokio::spawn(async move {
            // counted until this task ends, however it ends
            struct Done(std::sync::Arc<std::sync::atomic::AtomicUsize>);
            impl Drop for Done {
                fn drop(&mut self) {
                    self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
            let _done = Done(queued);
            let Ok(_slot) = graft.inner.notifier.slots.clone().acquire_owned().await else {
                return;
            };
            let id = notify_id();
            let mut attempt = 1;
            loop {
                match graft.deliver_once(&w, &notice, &id).await {
                    Ok(_) => return,
                    Err((why, retry)) => {
                        let wait = notify::backoff_ms(attempt, graft.inner.notifier.backoff_ms)
                            .filter(|_| retry);
                        tracing::warn!(kind = notice.kind(), attempt, why = %why,
                            retry_in_ms = wait, "a webhook delivery failed");
                        let Some(wait) = wait else { return };
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        attempt += 1;
                    }
                }
            }
        });
    }

    /// One delivery of `notice` as message `id` (the same across retries, so a receiver
    /// can drop a repeat). `Ok`: the receiver's 2xx status in words; `Err`: why, and
    /// whether another attempt may help.
    async fn deliver_once(
        &self,
        w: &WebhookRow,
        notice: &Notice,
        id: &str,
    ) -> Result<String, (String, bool)> {
        let secret = self.inner.key.open(&w.secret_ciphertext).map_err(|_| {
            (
                "the webhook secret cannot be opened with this key".to_string(),
                false,
            )
        })?;
        let key = notify::secret_key(&secret).map_err(|e| (e, false))?;
        let url = self.receiver_url(w).map_err(|_| {
            (
                "the webhook URL cannot be opened with this key".to_string(),
                false,
            )
        })?;
        // an address the URL spells is checked here, a name's by the client's resolver
        let literal = url::Url::parse(&url)
            .ok()
            .and_then(|u| destination::literal_ip(&u));
        if let Some(ip) = literal {
            destination::check(ip, self.inner.notifier.reach)
                .map_err(|r| (receiver_refused(&r), false))?;
        }
        let now = self.now();
        let body = notify::body(notice, w.format, now);
        let timestamp = now.div_euclid(1000);
        let sent = self
            .inner
            .notifier
            .client
            .post(&url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                notify::signature(&key, id, timestamp, &body),
            )
            .body(body)
            .send()
            .await;
        let result = match sent {
            Ok(r) if r.status().is_success() => Ok(r.status().to_string()),
            Ok(r) => Err((
                format!("the receiver answered {}", r.status()),
                notify::retry_status(r.status().as_u16()),
            )),
            Err(e) if e.is_timeout() => {
                Err(("the receiver did not answer within 10 s".to_string(), true))
            }
            Err(e) => Err(match destination::refused_in(&e) {
                Some(r) => (receiver_refused(r), false),
                None => (
                    format!("the receiver could not be reached: {}", root_cause(&e)),
                    true,
                ),
            }),
        };
        let said = match &result {
            Ok(s) => format!("{} delivered: {s}", notice.kind()),
            Err((e, _)) => format!("{} not delivered: {e}", notice.kind()),
        };
        *self.inner.notifier.last.lock().expect("notifier lock") = Some((now, said));
        result
    }

    /// Waits until no notice is waiting or being delivered (retries included), at most
    /// `limit`; whether none is left. A command of the CLI calls it before it exits, so
    /// what it caused is not dropped with the process.
    pub async fn flush_notices(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self
                .inner
                .notifier
                .queued
                .load(std::sync::atomic::Ordering::SeqCst)
                == 0
            {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `approvals` approvals of `scope` (a tool `vendor__name` or a vendor's slug) went
    /// back to pending because of `why` (a new version changed what calls do, the vendor
    /// moved): the console's pages hear it and the team gets an `approval.reset` notice.
    /// Nothing when `approvals` is 0. Call it after the change is committed.
    pub(crate) async fn approvals_asked_again(&self, scope: &str, approvals: usize, why: &str) {
        if approvals == 0 {
            return;
        }
        self.console_changed(super::live::APPROVALS).await;
        self.notify(Notice::ApprovalsAskedAgain {
            scope: scope.to_string(),
            approvals,
            why: why.to_string(),
            url: format!("{}/approvals", self.inner.public_url),
        })
        .await;
    }

    /// A call of `vendor` failed (an error status, a timeout, unreachable): a notice
    /// when its failures within [`ERROR_WINDOW_MINUTES`] reach the threshold, at most
    /// one per vendor per 30 minutes.
    pub(crate) async fn vendor_failed(&self, vendor: &str) {
        let Some(w) = self.webhook_settings().await else {
            return;
        };
        let now = self.now();
        let window = i64::from(ERROR_WINDOW_MINUTES) * 60_000;
        let errors = {
            let mut all = self
                .inner
                .notifier
                .vendor_errors
                .lock()
                .expect("notifier lock");
            if all.len() > 10_000 && !all.contains_key(vendor) {
                all.clear();
            }
            let (times, last_notice) = all
                .entry(vendor.to_string())
                .or_insert((VecDeque::new(), None));
            times.push_back(now);
            while times.front().is_some_and(|t| *t <= now - window) {
                times.pop_front();
            }
            while times.len() > 1000 {
                times.pop_front();
            }
            if (times.len() as i64) < w.error_threshold
                || last_notice.is_some_and(|at| now.saturating_sub(at) < QUIET_MS)
            {
                return;
            }
            *last_notice = Some(now);
            times.len() as u32
        };
        self.notify(Notice::VendorErrors {
            vendor: vendor.to_string(),
            errors,
            minutes: ERROR_WINDOW_MINUTES,
            url: format!("{}/calls?outcome=failed", self.inner.public_url),
        })
        .await;
    }

    /// Connection `connection_id` failed (`why`, never the secret): a notice, at most one
    /// per connection per 30 minutes.
    pub(crate) async fn connection_failed(&self, vendor: &str, connection_id: i64, why: &str) {
        if self.webhook_settings().await.is_none() {
            return;
        }
        let now = self.now();
        {
            let mut all = self
                .inner
                .notifier
                .connection_notices
                .lock()
                .expect("notifier lock");
            if all
                .get(&connection_id)
                .is_some_and(|t| now.saturating_sub(*t) < QUIET_MS)
            {
                return;
            }
            if all.len() > 10_000 {
                all.clear();
            }
            all.insert(connection_id, now);
        }
        let label = match db::select_connection(self.pool(), connection_id).await {
            Ok(Some(c)) => c.label,
            _ => format!("#{connection_id}"),
        };
        self.notify(Notice::ConnectionFailed {
            vendor: vendor.to_string(),
            connection: label,
            why: why.to_string(),
            url: format!("{}/vendors/{vendor}", self.inner.public_url),
        })
        .await;
    }
}

/// A new message id (`msg_` and 24 hex digits).
fn notify_id() -> String {
    format!("msg_{}", super::random_hex(12))
}

/// The innermost cause of an error ("Connection refused (os error 111)"), for a person:
/// the outer layers repeat the URL and the client's wording.
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        last = c.to_string();
        source = c.source();
    }
    last
}
