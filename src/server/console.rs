//! The console's server side (SPEC §6): the state its server functions read, sign-in
//! sessions (`tower-sessions` with its sqlx store in Graft's database; cookies
//! HttpOnly, SameSite=Lax, Secure when the public URL is https), the gate that sends
//! signed-out people to `/login`, the OpenAPI upload (multipart, a plain form that works
//! without JavaScript), the Graft skill at `/skill/SKILL.md`, and one-time values (a new
//! token, an import summary) handed from a POST to the page it redirects to.

use crate::console::api::{ImportSummary, MAX_UPLOAD_BYTES};
use crate::service::people::Person;
use crate::service::Graft;
use axum::extract::{Multipart, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use http::{header, StatusCode};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower_sessions::cookie::SameSite;
use tower_sessions::session_store::ExpiredDeletion;
use tower_sessions::{Expiry, Session, SessionManagerLayer};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// The session key holding the signed-in person's name.
const PERSON_KEY: &str = "person";
/// Signed-in sessions end after this long without a request, over HTTPS.
const SESSION_IDLE_DAYS: i64 = 7;
/// The same over plain HTTP, where the cookie can be read on the way.
pub const PLAIN_HTTP_IDLE_HOURS: i64 = 8;
/// How long a one-time value waits to be shown.
const FLASH_TTL: Duration = Duration::from_secs(600);
/// The header the hydrated upload form sends to get the summary's address as text.
pub const UPLOAD_HEADER: &str = "x-graft-upload";
/// Largest request to `/vendors/import`: twice the largest document, so a document a
/// little too big is read whole and answered with a summary rather than a reset.
pub const MAX_UPLOAD_REQUEST: usize = 2 * MAX_UPLOAD_BYTES;

/// What the console's server functions read: the service, one-time values, the public
/// URL agents connect to, and when the next sweep runs.
#[derive(Clone)]
pub struct ConsoleState {
    /// The service (the same one the MCP adapter calls).
    pub graft: Graft,
    /// One-time values.
    pub flash: Arc<FlashStore>,
    /// The public base URL (e.g. `http://127.0.0.1:3000`).
    pub public_url: String,
    /// When the sweeper runs next (ms since the epoch, the service's clock).
    pub next_sweep: Arc<AtomicI64>,
    /// Failed sign-ins by name and address, to slow down password guessing.
    pub sign_ins: Arc<SignInThrottle>,
    /// `Host` values the console answers (loopback, `GRAFT_ALLOWED_HOSTS`, the public
    /// URL's host), as `/mcp` does (security review 32.13).
    pub allowed_hosts: Arc<Vec<String>>,
    /// Errors of plain form posts, kept for the session whose post failed.
    pub form_errors: Arc<FormErrors>,
    /// `GRAFT_TRUSTED_PROXIES`: proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Arc<Vec<std::net::IpAddr>>,
}

/// The errors of plain (no-JavaScript) form posts. Leptos carries such an error to the
/// page in the redirect's query (`__err`, the error serialized); a link could carry any
/// error the same way. So the gate swaps the value for a random token before the
/// redirect leaves, keeps the value here for the session that posted, and swaps it back
/// only for that session: a page shows only errors the server set in the viewer's own
/// session (security review 32.14).
#[derive(Default)]
pub struct FormErrors {
    items: Mutex<HashMap<String, (String, Instant, String)>>,
}

/// The session key of the random value form errors are bound to.
const FORM_ERRORS_KEY: &str = "form_errors";

impl FormErrors {
    /// Keeps `value` for the session holding `owner`; returns its token (128 bits, hex).
    fn put(&self, owner: &str, value: String) -> String {
        let token = crate::service::random_hex(16);
        let mut items = self.items.lock().expect("form errors lock");
        items.retain(|_, (_, at, _)| at.elapsed() < FLASH_TTL);
        if items.len() >= 10_000 {
            items.clear();
        }
        items.insert(token.clone(), (owner.to_string(), Instant::now(), value));
        token
    }

    /// The value kept under `token` for `owner`, if any (it may be shown again: a page
    /// reload shows the same error).
    fn get(&self, owner: &str, token: &str) -> Option<String> {
        let items = self.items.lock().expect("form errors lock");
        items
            .get(token)
            .filter(|(o, at, _)| o == owner && at.elapsed() < FLASH_TTL)
            .map(|(_, _, v)| v.clone())
    }
}

/// Whether a `Host` header value is one of `allowed` (each `host` or `host:port`, as
/// rmcp's `allowed_hosts` reads them): host names compared without case and IPv6
/// brackets, the port only when the entry names one.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let split = |a: &str| -> Option<(String, Option<u16>)> {
        let a = a.trim();
        if a.is_empty() {
            return None;
        }
        match http::uri::Authority::try_from(a) {
            Ok(auth) => Some((
                auth.host().trim_matches(['[', ']']).to_ascii_lowercase(),
                auth.port_u16(),
            )),
            Err(_) => Some((a.trim_matches(['[', ']']).to_ascii_lowercase(), None)),
        }
    };
    let Some((h, p)) = split(host) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| split(a))
        .any(|(ah, ap)| ah == h && ap.is_none_or(|ap| Some(ap) == p))
}

/// Whether a request path holds a dot segment in any spelling (`..`, `.`, `%2e%2e`, …),
/// which no page or file of the console has: such a path is refused before the gate
/// reads it (`/pkg/../agents` passed as a file path, security review 32.15).
fn has_dot_segment(path: &str) -> bool {
    let decoded: String = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    [path, decoded.as_str()].iter().any(|p| {
        p.split(['/', '\\'])
            .any(|seg| matches!(seg.split(';').next().unwrap_or(""), "." | ".."))
    })
}

/// Failed sign-ins for one name from one address before that address is refused that
/// name for the rest of [`THROTTLE_WINDOW`].
const MAX_FAILURES: u32 = 5;
/// Failed sign-ins from one address (any names) before it is refused for the rest of
/// [`THROTTLE_WINDOW`].
const MAX_ADDRESS_FAILURES: u32 = 30;
/// Failed sign-ins for one name (from anywhere) past which every attempt for it is slowed
/// by [`SLOW_DOWN`]; the right password still signs in.
const SLOW_AFTER: u32 = 10;
/// The wait put before each password check of a name that is being guessed.
pub const SLOW_DOWN: Duration = Duration::from_secs(2);
/// How long failures are remembered, and how long a refusal lasts.
const THROTTLE_WINDOW: Duration = Duration::from_secs(60);
/// Entries past which those older than the window are dropped.
const THROTTLE_PRUNE_AT: usize = 1_024;
/// Entries kept at most.
const THROTTLE_ENTRIES: usize = 10_000;
/// Characters of a name the throttle keeps (user names have at most 64): a longer name
/// is no one's, and a flood of huge names must not fill memory.
const THROTTLE_NAME_CHARS: usize = 65;

/// A sign-in name as the throttle keys it: trimmed, lower case, at most
/// [`THROTTLE_NAME_CHARS`] characters.
fn throttle_key(name: &str) -> String {
    name.trim()
        .chars()
        .take(THROTTLE_NAME_CHARS)
        .collect::<String>()
        .to_lowercase()
}

/// What [`SignInThrottle::attempt`] decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Check the password now.
    Go,
    /// Check it after this wait (the name is being guessed from many places).
    After(Duration),
}

/// A refused sign-in: why, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// A sentence for the person.
    pub message: String,
    /// How long until an attempt is counted again.
    pub wait: Duration,
}

/// Failed sign-ins, in memory, counted three ways (security review 32.1 and 32.12), so
/// that guessing costs time and no one can lock a person out:
/// - per (name, client address): after [`MAX_FAILURES`] within a minute, that address
///   is refused that name for the rest of the minute; the same name from another
///   address (the person's own) is not;
/// - per client address: after [`MAX_ADDRESS_FAILURES`] (any names), that address is
///   refused;
/// - per name, from anywhere: past [`SLOW_AFTER`], each attempt waits [`SLOW_DOWN`]
///   before its check, and is still let through.
///
/// Attempts are counted before the password is checked, so concurrent guesses cannot all
/// slip in before the first failure counts; a success clears its (name, address) and
/// name counts.
#[derive(Default)]
pub struct SignInThrottle {
    by_name_address: Mutex<HashMap<(String, std::net::IpAddr), (u32, Instant)>>,
    by_address: Mutex<HashMap<std::net::IpAddr, (u32, Instant)>>,
    by_name: Mutex<HashMap<String, (u32, Instant)>>,
}

/// Counts one attempt in `map` under `key`; `Err(wait)` when the key already had `max`
/// within the window.
fn count<K: std::hash::Hash + Eq>(
    map: &Mutex<HashMap<K, (u32, Instant)>>,
    key: K,
    max: u32,
) -> Result<u32, Duration> {
    let mut m = map.lock().expect("throttle lock");
    // what is older than the window counts for nothing: forgotten once the map grows
    if m.len() > THROTTLE_PRUNE_AT {
        m.retain(|_, (_, last)| last.elapsed() < THROTTLE_WINDOW);
    }
    if m.len() > THROTTLE_ENTRIES {
        // still full within one window: a flood from many addresses; start over
        m.clear();
    }
    let entry = m.entry(key).or_insert((0, Instant::now()));
    let since = entry.1.elapsed();
    if since >= THROTTLE_WINDOW {
        entry.0 = 0;
    }
    if entry.0 >= max {
        return Err(THROTTLE_WINDOW.saturating_sub(since));
    }
    entry.0 += 1;
    entry.1 = Instant::now();
    Ok(entry.0)
}

impl SignInThrottle {
    /// Counts a sign-in attempt for `name` from `address` *before* its password is
    /// checked (see the type's doc). Errors: a refusal saying for how long.
    pub fn attempt(&self, name: &str, address: std::net::IpAddr) -> Result<Attempt, Refusal> {
        let name = throttle_key(name);
        let refuse = |message: &str, wait: Duration| Refusal {
            message: format!("{message}; try again in {} s.", wait.as_secs().max(1)),
            wait,
        };
        count(&self.by_address, address, MAX_ADDRESS_FAILURES)
            .map_err(|w| refuse("Too many failed sign-ins from this address", w))?;
        count(&self.by_name_address, (name.clone(), address), MAX_FAILURES).map_err(|w| {
            refuse(
                "Too many failed sign-ins for this name from this address",
                w,
            )
        })?;
        let n = count(&self.by_name, name, u32::MAX).unwrap_or(u32::MAX);
        Ok(if n > SLOW_AFTER {
            Attempt::After(SLOW_DOWN)
        } else {
            Attempt::Go
        })
    }

    /// Clears what a sign-in of `name` from `address` counted against the name.
    pub fn succeeded(&self, name: &str, address: std::net::IpAddr) {
        let name = throttle_key(name);
        self.by_name_address
            .lock()
            .expect("throttle lock")
            .remove(&(name.clone(), address));
        self.by_name.lock().expect("throttle lock").remove(&name);
        if let Some(e) = self
            .by_address
            .lock()
            .expect("throttle lock")
            .get_mut(&address)
        {
            e.0 = e.0.saturating_sub(1);
        }
    }

    /// Takes back an attempt that was never checked (every password check was busy): it
    /// was not a failure.
    pub fn refund(&self, name: &str, address: std::net::IpAddr) {
        let name = throttle_key(name);
        let back = |e: Option<&mut (u32, Instant)>| {
            if let Some(e) = e {
                e.0 = e.0.saturating_sub(1);
            }
        };
        back(
            self.by_name_address
                .lock()
                .expect("throttle lock")
                .get_mut(&(name.clone(), address)),
        );
        back(self.by_name.lock().expect("throttle lock").get_mut(&name));
        back(
            self.by_address
                .lock()
                .expect("throttle lock")
                .get_mut(&address),
        );
    }
}

/// The client's address for throttling: the peer's, or, when the peer is one of
/// `trusted` proxies (`GRAFT_TRUSTED_PROXIES`), the right-most address of
/// `X-Forwarded-For` that is not one of them (each proxy appends the address it heard
/// from; only trusted proxies' entries are believed).
pub fn client_address(
    peer: std::net::IpAddr,
    headers: &http::HeaderMap,
    trusted: &[std::net::IpAddr],
) -> std::net::IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let forwarded: Vec<std::net::IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    forwarded
        .into_iter()
        .rev()
        .find(|a| !trusted.contains(a))
        .unwrap_or(peer)
}

impl ConsoleState {
    /// When the next sweep runs (ms).
    pub fn next_sweep_at(&self) -> i64 {
        self.next_sweep.load(Ordering::Relaxed)
    }

    /// Whole minutes from `now` (ms) until the next sweep, rounded up, never negative.
    pub fn minutes_to_next_sweep(&self, now: i64) -> i64 {
        ((self.next_sweep_at() - now).max(0) + 59_999) / 60_000
    }
}

/// A value shown once on the page a POST redirects to.
#[derive(Debug, Clone)]
pub enum Flash {
    /// `(agent name, token)` of a new agent or a rotated token.
    Token(String, String),
    /// The summary of an OpenAPI upload.
    Import(Box<ImportSummary>),
}

/// One-time values by random id, each for the person who caused it, for 10 minutes.
/// In memory: a restart forgets them, which only means a token must be rotated again.
#[derive(Default)]
pub struct FlashStore {
    items: Mutex<HashMap<String, (String, Instant, Flash)>>,
}

impl FlashStore {
    /// Keeps `value` for `person`; returns its id (128 random bits, hex).
    pub fn put(&self, person: &str, value: Flash) -> String {
        let id = crate::service::random_hex(16);
        let mut items = self.items.lock().expect("flash lock");
        items.retain(|_, (_, at, _)| at.elapsed() < FLASH_TTL);
        items.insert(id.clone(), (person.to_string(), Instant::now(), value));
        id
    }

    /// Takes the value `id` kept for `person` (a second take finds nothing).
    pub fn take(&self, person: &str, id: &str) -> Option<Flash> {
        let mut items = self.items.lock().expect("flash lock");
        match items.get(id) {
            Some((p, at, _)) if p == person && at.elapsed() < FLASH_TTL => {
                items.remove(id).map(|(_, _, v)| v)
            }
            _ => None,
        }
    }
}

/// The session layer over Graft's database (table `tower_sessions`: SQLite migration
/// 0005, PostgreSQL migration 0002, in the schema Graft's tables are in).
/// Errors: PostgreSQL could not say its current schema.
pub async fn session_layer(
    graft: &Graft,
    secure: bool,
) -> Result<(SessionManagerLayer<HashedStore>, SessionDb), sqlx::Error> {
    let store = match graft.pool() {
        crate::db::Pool::Sqlite(p) => SessionDb::Sqlite(SqliteStore::new(p.clone())),
        crate::db::Pool::Postgres(p) => {
            let schema: String = sqlx::query_scalar("SELECT current_schema()")
                .fetch_one(p)
                .await?;
            let store = PostgresStore::new(p.clone())
                .with_schema_name(&schema)
                .and_then(|s| s.with_table_name("tower_sessions"))
                .map_err(|e| sqlx::Error::Configuration(e.into()))?;
            SessionDb::Postgres(store)
        }
    };
    // over HTTPS a `__Host-` cookie: Secure, host-only, path `/`, so no other site of
    // the domain can set or read it (RFC 6265bis §4.1.3.2); over plain HTTP a cookie
    // travels to every port of the host and in the clear, so its sessions are short
    // (security review 32.3; `graft serve` warns unless it listens on loopback only)
    let (name, idle) = if secure {
        (
            "__Host-graft_session",
            tower_sessions::cookie::time::Duration::days(SESSION_IDLE_DAYS),
        )
    } else {
        (
            "graft_session",
            tower_sessions::cookie::time::Duration::hours(PLAIN_HTTP_IDLE_HOURS),
        )
    };
    let layer = SessionManagerLayer::new(HashedStore(store.clone()))
        .with_name(name)
        .with_path("/")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure)
        .with_expiry(Expiry::OnInactivity(idle));
    Ok((layer, store))
}

/// tower-sessions' sqlx store on Graft's backend.
#[derive(Debug, Clone)]
pub enum SessionDb {
    /// On SQLite.
    Sqlite(SqliteStore),
    /// On PostgreSQL.
    Postgres(PostgresStore),
}

#[async_trait::async_trait]
impl tower_sessions::session_store::SessionStore for SessionDb {
    async fn create(
        &self,
        record: &mut tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.create(record).await,
            SessionDb::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(
        &self,
        record: &tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.save(record).await,
            SessionDb::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<Option<tower_sessions::session::Record>> {
        match self {
            SessionDb::Sqlite(s) => s.load(id).await,
            SessionDb::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.delete(id).await,
            SessionDb::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for SessionDb {
    async fn delete_expired(&self) -> tower_sessions::session_store::Result<()> {
        match self {
            SessionDb::Sqlite(s) => s.delete_expired().await,
            SessionDb::Postgres(s) => s.delete_expired().await,
        }
    }
}

/// The sqlx session store keyed by a SHA-256 of each session id rather than the id
/// itself, so that a copy of the database (a backup, a stolen file) holds no cookie
/// value that would sign its reader in; the cookie still carries the 128-bit random id
/// (tower-sessions' `Id`), as it would with the plain store.
#[derive(Debug, Clone)]
pub struct HashedStore(SessionDb);

/// The id a session is stored under: the first 128 bits of SHA-256 over the id's bytes.
fn stored_id(id: &tower_sessions::session::Id) -> tower_sessions::session::Id {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(id.0.to_le_bytes());
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    tower_sessions::session::Id(i128::from_le_bytes(first))
}

#[async_trait::async_trait]
impl tower_sessions::session_store::SessionStore for HashedStore {
    async fn create(
        &self,
        record: &mut tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        loop {
            let mut stored = record.clone();
            stored.id = stored_id(&record.id);
            let asked = stored.id;
            self.0.create(&mut stored).await?;
            if stored.id == asked {
                return Ok(());
            }
            // the hash was taken (the inner store then picked an id of its own, whose
            // preimage nobody knows): drop that row and draw a new id
            self.0.delete(&stored.id).await?;
            record.id = tower_sessions::session::Id::default();
        }
    }

    async fn save(
        &self,
        record: &tower_sessions::session::Record,
    ) -> tower_sessions::session_store::Result<()> {
        let mut stored = record.clone();
        stored.id = stored_id(&record.id);
        self.0.save(&stored).await
    }

    async fn load(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<Option<tower_sessions::session::Record>> {
        Ok(self.0.load(&stored_id(id)).await?.map(|mut r| {
            r.id = *id;
            r
        }))
    }

    async fn delete(
        &self,
        id: &tower_sessions::session::Id,
    ) -> tower_sessions::session_store::Result<()> {
        self.0.delete(&stored_id(id)).await
    }
}

/// What a session keeps: the person's id and the session epoch signed in at.
#[derive(serde::Serialize, serde::Deserialize)]
struct SignedIn {
    id: i64,
    epoch: i64,
}

/// The person a session is signed in as, who must still exist at the same session epoch
/// (a password change or removal ends their sessions), or `None`.
pub async fn person_of(graft: &Graft, session: &Session) -> Option<Person> {
    let s: SignedIn = session.get(PERSON_KEY).await.ok().flatten()?;
    graft.session_person(s.id, s.epoch).await.ok().flatten()
}

/// Starts a signed-in session: a new id (against fixation), then the person.
/// Errors: the session store failed.
pub async fn start_session(
    session: &Session,
    person: &Person,
) -> Result<(), tower_sessions::session::Error> {
    session.cycle_id().await?;
    session
        .insert(
            PERSON_KEY,
            SignedIn {
                id: person.id,
                epoch: person.epoch,
            },
        )
        .await
}

/// Paths anyone may fetch: the sign-in page and call, static files, the skill.
fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/login" | "/api/login" | "/api/logout" | "/favicon.ico" | "/skill/SKILL.md"
    ) || path.starts_with("/pkg/")
}

/// Whether a state-changing request comes from the console's own pages: a browser says
/// so in `Sec-Fetch-Site` (`same-origin`), or in `Origin` (this host, or the public URL's
/// origin). `SameSite=Lax` alone lets a page on another port of the same host post with
/// the cookie. Requests with neither header (scripts, curl) carry no ambient cookie risk.
fn from_own_pages(req: &Request, public_origin: &str) -> bool {
    let headers = req.headers();
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    origin == public_origin
        || origin == format!("http://{host}")
        || origin == format!("https://{host}")
}

/// Whether `next` is a path on this server that is safe to redirect to. The path is plain
/// (`/`, letters, digits, `_`, `-`, `.`; no empty, `.` or `..` segment, so nothing a
/// browser or router could turn into `//host`; browsers also drop tabs and newlines, which
/// made `/<TAB>/evil.example` one), and the query is visible ASCII without `\` and
/// without Leptos's error parameters (`__err`, `__path`, in any encoding), so a link
/// cannot carry a message through the sign-in.
pub fn is_local_path(next: &str) -> bool {
    if next.len() > 2048 {
        return false;
    }
    let (path, query) = next.split_once('?').unwrap_or((next, ""));
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let last = segments.len() - 1;
    let path_ok = rest
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"/_-.".contains(&c))
        && segments
            .iter()
            .enumerate()
            .all(|(i, s)| !matches!(*s, "." | "..") && (!s.is_empty() || i == last));
    let query_ok =
        query.bytes().all(|c| c.is_ascii_graphic() && c != b'\\') && !carries_form_error(query);
    path_ok && query_ok
}

/// Leptos's no-JavaScript error parameters in a page's query.
const FORM_ERROR_KEYS: [&str; 2] = ["__err", "__path"];

/// Whether a query carries Leptos's error parameters, read decoded as Leptos reads them
/// (`%5F%5Ferr` is `__err`).
fn carries_form_error(query: &str) -> bool {
    url::form_urlencoded::parse(query.as_bytes())
        .any(|(k, _)| FORM_ERROR_KEYS.contains(&k.as_ref()))
}

/// A query's pairs, decoded, without the keys in `drop`.
pub fn query_without(query: &str, drop: &[&str]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| !drop.contains(&k.as_ref()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Whether a request asks for HTML: a browser's navigation or plain form post (a script
/// of the hydrated console asks for JSON).
pub fn accepts_html(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// The gate in front of every console page and server function (SPEC §8: console pages
/// require login; state changes need the session): a POST from another origin gets 403;
/// signed out, a page goes to `/login?next=…`, a plain form post to `/login`, and a
/// server-function call from the browser gets 401. An error carried in a page's URL
/// (`__err`, the no-JavaScript form channel) is dropped unless the page was reached from
/// this console, so a link cannot plant a message on a page.
pub async fn gate(
    State(state): State<ConsoleState>,
    session: Session,
    req: Request,
    next: Next,
) -> Response {
    let mut res = gate_inner(state, session, req, next).await;
    // no page of the console may be framed by another page: a framed Approve button
    // was one click from a grant (security review 32.4)
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        http::HeaderValue::from_static("frame-ancestors 'none'"),
    );
    h.insert(
        header::X_FRAME_OPTIONS,
        http::HeaderValue::from_static("DENY"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    res
}

async fn gate_inner(
    state: ConsoleState,
    session: Session,
    mut req: Request,
    next: Next,
) -> Response {
    let graft = &state.graft;
    // the console answers only the names it is served under (DNS rebinding against a
    // loopback install, security review 32.13)
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("");
    if !host_allowed(host, &state.allowed_hosts) {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: this Host is not one Graft is served under (GRAFT_ALLOWED_HOSTS, GRAFT_PUBLIC_URL)",
        )
            .into_response();
    }
    if has_dot_segment(req.uri().path()) {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    }
    let method = req.method().clone();
    let is_form_post = method == http::Method::POST;
    if method != http::Method::GET && method != http::Method::HEAD {
        let public_origin = state.public_url.trim_end_matches('/');
        if !from_own_pages(&req, public_origin) {
            return (StatusCode::FORBIDDEN, "cross-origin request refused").into_response();
        }
    } else if let Some(query) = req.uri().query().filter(|q| carries_form_error(q)) {
        // an error shows only when this session's own post set it (see FormErrors)
        let owner: Option<String> = session.get(FORM_ERRORS_KEY).await.ok().flatten();
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let restored: Option<Vec<(String, String)>> = pairs
            .iter()
            .map(|(k, v)| {
                if k == "__err" {
                    let value = owner.as_deref().and_then(|o| state.form_errors.get(o, v))?;
                    Some((k.clone(), value))
                } else {
                    Some((k.clone(), v.clone()))
                }
            })
            .collect();
        match restored {
            Some(pairs) => {
                let q = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs)
                    .finish();
                if let Ok(uri) = format!("{}?{q}", req.uri().path()).parse() {
                    *req.uri_mut() = uri;
                }
            }
            None => {
                let kept = query_without(query, &FORM_ERROR_KEYS);
                let mut target = req.uri().path().to_string();
                if !kept.is_empty() {
                    target.push('?');
                    target.push_str(
                        &url::form_urlencoded::Serializer::new(String::new())
                            .extend_pairs(kept)
                            .finish(),
                    );
                }
                return Redirect::to(&target).into_response();
            }
        }
    }
    if is_public(req.uri().path()) || person_of(graft, &session).await.is_some() {
        let is_asset = req.uri().path().starts_with("/pkg/");
        let mut res = next.run(req).await;
        if is_form_post {
            keep_form_error(&state, &session, &mut res).await;
        }
        // pages show tokens and history: keep them out of caches
        if !is_asset {
            res.headers_mut().insert(
                header::CACHE_CONTROL,
                http::HeaderValue::from_static("no-store"),
            );
        }
        return res;
    }
    let path = req.uri().path();
    if req.method() == http::Method::GET {
        let target = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let next: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
        return Redirect::to(&format!("/login?next={next}")).into_response();
    }
    // a plain form post (no JavaScript) goes to the sign-in page; a script gets 401
    if accepts_html(req.headers()) || !path.starts_with("/api/") {
        return Redirect::to("/login").into_response();
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        "\"SignedOut\"",
    )
        .into_response()
}

/// A form post's redirect that carries a Leptos form error (`__err`) gets a token in its
/// place, the value kept for this session (see [`FormErrors`]).
async fn keep_form_error(state: &ConsoleState, session: &Session, res: &mut Response) {
    let Some(location) = res
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return;
    };
    let (path, query) = location.split_once('?').unwrap_or((&location, ""));
    if !carries_form_error(query) {
        return;
    }
    let owner: String = match session.get::<String>(FORM_ERRORS_KEY).await.ok().flatten() {
        Some(o) => o,
        None => {
            let o = crate::service::random_hex(16);
            if session.insert(FORM_ERRORS_KEY, o.clone()).await.is_err() {
                return;
            }
            o
        }
    };
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| {
            if k == "__err" {
                (
                    k.into_owned(),
                    state.form_errors.put(&owner, v.into_owned()),
                )
            } else {
                (k.into_owned(), v.into_owned())
            }
        })
        .collect();
    let q = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    if let Ok(v) = http::HeaderValue::from_str(&format!("{path}?{q}")) {
        res.headers_mut().insert(header::LOCATION, v);
    }
}

/// A server function's arguments that do not decode (a missing field, a number that is
/// not one, a body that is not the encoding it claims) are the client's error: leptos
/// answers them 500 with `{"Transport": "error deserializing server function arguments:
/// …"}`, which this layer turns into 400 with the same body (found by the http_endpoint
/// fuzz target). Other answers pass unchanged.
pub async fn argument_errors(req: Request, next: Next) -> Response {
    let is_server_fn = req.uri().path().starts_with("/api/");
    let resp = next.run(req).await;
    if !is_server_fn || resp.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal").into_response();
    };
    let transport = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .is_some_and(|v| v.get("Transport").is_some());
    if transport {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// `GET /skill/SKILL.md`: the Graft skill (agentskills.io format).
pub async fn skill() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
        crate::console::snippets::SKILL_MD,
    )
}

/// `POST /vendors/import` (multipart: `vendor`, optional `base_url`, `document`): imports
/// every operation of an uploaded OpenAPI document as tools (one transaction: all or
/// nothing), then shows the summary on `/vendors?import=…`.
pub async fn import_upload(
    State(state): State<ConsoleState>,
    session: Session,
    headers: http::HeaderMap,
    form: Multipart,
) -> Response {
    // the hydrated page sends the form itself (to show the bytes sent) and asks for the
    // summary's address as text, since a request from a script follows redirects itself
    let as_text = headers.contains_key(UPLOAD_HEADER);
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let mut vendor = String::new();
    let result = read_and_import(&state.graft, &person, form, &mut vendor).await;
    summary_page(&state, &person, &vendor, as_text, result)
}

/// Reads the upload form (`vendor` into `vendor`, `base_url`, `document`) and imports the
/// document. Errors: why nothing was imported, in words for the summary.
async fn read_and_import(
    graft: &Graft,
    person: &Person,
    mut form: Multipart,
    vendor: &mut String,
) -> Result<crate::service::ImportReport, String> {
    let (mut base_url, mut document) = (String::new(), None);
    while let Some(field) = form.next_field().await.map_err(|e| e.body_text())? {
        let name = field.name().unwrap_or_default().to_string();
        let bytes = field.bytes().await.map_err(|e| e.body_text())?;
        match name.as_str() {
            "vendor" => *vendor = String::from_utf8_lossy(&bytes).trim().to_string(),
            "base_url" => base_url = String::from_utf8_lossy(&bytes).trim().to_string(),
            "document" => document = Some(bytes),
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
        Some(Ok(t)) if !t.trim().is_empty() => t,
        Some(Ok(_)) | None => return Err("choose an OpenAPI document to upload".into()),
        Some(Err(_)) => return Err("the document is not UTF-8 text (JSON or YAML)".into()),
    };
    let base = Some(base_url.as_str()).filter(|b| !b.is_empty());
    match graft
        .import_openapi_by(
            &crate::service::Actor::Person(person.name.clone()),
            vendor,
            text,
            base,
            &mut |_, _| {},
        )
        .await
    {
        Ok(r) => {
            tracing::info!(vendor = %r.vendor, imported = r.imported, by = %person.name, "OpenAPI import in the console");
            // the new tools' embeddings, without holding the page (a search meanwhile
            // computes what it needs itself)
            let g = graft.clone();
            tokio::spawn(async move {
                if let Err(e) = g.embed_toolbox(&mut |_, _| {}).await {
                    tracing::warn!(error = ?e, "embedding the imported tools failed");
                }
            });
            Ok(r)
        }
        Err(crate::service::ServiceError::Internal(e)) => {
            tracing::error!(error = ?e, "import failed");
            Err("internal error; see the server log".into())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn summary_page(
    state: &ConsoleState,
    person: &Person,
    vendor: &str,
    as_text: bool,
    result: Result<crate::service::ImportReport, String>,
) -> Response {
    let summary = match result {
        Ok(r) => ImportSummary::from(r),
        Err(e) => ImportSummary {
            vendor: vendor.to_string(),
            operations: 0,
            imported: 0,
            renamed: vec![],
            skipped: vec![],
            withheld: vec![],
            updated: vec![],
            unchanged: 0,
            restored: vec![],
            retired: vec![],
            kept: vec![],
            demoted: 0,
            brought_back: false,
            moved: vec![],
            adopted_base_url: None,
            origin_moved: None,
            error: Some(e),
        },
    };
    let id = state
        .flash
        .put(&person.name, Flash::Import(Box::new(summary)));
    let target = format!("/vendors?import={id}");
    if as_text {
        ([(header::CONTENT_TYPE, "text/plain")], target).into_response()
    } else {
        Redirect::to(&target).into_response()
    }
}

/// Revalidation for the console's bundle and stylesheet under `/pkg/` (RFC 9111 §5.2.2.4
/// `no-cache`, RFC 9110 §8.8.3 ETag and §13.1.2 `If-None-Match`): every answer for a file
/// there carries `Cache-Control: no-cache` and a weak ETag made of the file's length and
/// modification time (as nginx makes them), and a GET whose `If-None-Match` names the
/// current ETag gets 304 Not Modified without a body. A rebuilt bundle reaches the
/// browser on its next load (never a stale bundle next to new pages, which would not
/// hydrate); an unchanged one costs a round trip, not megabytes. Paths outside
/// `site_root/pkg` or missing files pass through to the file handler (404).
pub async fn pkg_revalidate(
    State(site_root): State<Arc<std::path::PathBuf>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(rel) = req.uri().path().strip_prefix("/pkg/") else {
        return next.run(req).await;
    };
    let safe = !rel.is_empty()
        && std::path::Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let etag = safe
        .then(|| std::fs::metadata(site_root.join("pkg").join(rel)).ok())
        .flatten()
        .filter(|m| m.is_file())
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("W/\"{:x}-{:x}\"", m.len(), mtime)
        });
    let Some(etag) = etag else {
        return next.run(req).await;
    };
    let matches = req
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == etag.trim_start_matches("W/")
        });
    let mut res = if matches && matches!(*req.method(), http::Method::GET | http::Method::HEAD) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        next.run(req).await
    };
    if res.status().is_success() || res.status() == StatusCode::NOT_MODIFIED {
        let h = res.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-cache"),
        );
        if let Ok(v) = http::HeaderValue::from_str(&etag) {
            h.insert(header::ETAG, v);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_behind_a_trusted_proxy_is_the_forwarded_one() {
        let proxy: std::net::IpAddr = "10.0.0.2".parse().unwrap();
        let mut h = http::HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            "198.51.100.1, 203.0.113.5".parse().unwrap(),
        );
        assert_eq!(
            client_address(proxy, &h, &[proxy]),
            "203.0.113.5".parse::<std::net::IpAddr>().unwrap()
        );
        // an untrusted peer's header is not believed
        let peer: std::net::IpAddr = "192.0.2.9".parse().unwrap();
        assert_eq!(client_address(peer, &h, &[proxy]), peer);
        // a huge name counts as its first 65 characters
        let t = SignInThrottle::default();
        let long = "n".repeat(1 << 20);
        for _ in 0..MAX_FAILURES {
            t.attempt(&long, peer).unwrap();
        }
        assert!(t.attempt(&"n".repeat(70), peer).is_err());
        assert!(t
            .by_name
            .lock()
            .unwrap()
            .keys()
            .all(|k| k.len() <= THROTTLE_NAME_CHARS));
    }

    #[test]
    fn hosts_and_dot_segments() {
        let allowed: Vec<String> = ["localhost", "127.0.0.1", "::1", "graft.example:8443"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for ok in [
            "localhost:3000",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:3000",
            "graft.example:8443",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "localhost.evil.example",
            "graft.example",
            "graft.example:443",
            "127.0.0.2",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
        for bad in [
            "/pkg/../agents",
            "/pkg/%2e%2e/agents",
            "/pkg/%2E./x",
            "/./agents",
            "/pkg/..;/x",
            "/a/..",
        ] {
            assert!(has_dot_segment(bad), "{bad}");
        }
        for ok in ["/", "/agents/a.b", "/pkg/graft.js", "/tools/x/y...z"] {
            assert!(!has_dot_segment(ok), "{ok}");
        }
    }

    #[test]
    fn guessing_one_name_never_locks_out_its_owner() {
        let t = SignInThrottle::default();
        let attacker: std::net::IpAddr = "203.0.113.9".parse().unwrap();
        let owner: std::net::IpAddr = "198.51.100.7".parse().unwrap();
        for _ in 0..MAX_FAILURES {
            assert!(t.attempt("Admin", attacker).is_ok());
        }
        // the guesser's address is refused that name, case and spaces aside
        let r = t.attempt(" admin ", attacker).unwrap_err();
        assert!(
            r.message.contains("from this address") && r.wait <= THROTTLE_WINDOW,
            "{r:?}"
        );
        // the owner, elsewhere, gets in (counted, not refused)
        assert_eq!(t.attempt("admin", owner), Ok(Attempt::Go));
        t.succeeded("admin", owner);
        // guesses from many addresses slow the name down and never refuse it
        for i in 0..(SLOW_AFTER + 5) {
            let ip = std::net::IpAddr::from([10, 0, (i / 200) as u8, (i % 200) as u8]);
            let _ = t.attempt("admin", ip);
        }
        assert_eq!(t.attempt("admin", owner), Ok(Attempt::After(SLOW_DOWN)));
        // one address spraying many names is refused altogether
        let sprayer: std::net::IpAddr = "192.0.2.1".parse().unwrap();
        for i in 0..MAX_ADDRESS_FAILURES {
            assert!(t.attempt(&format!("user{i}"), sprayer).is_ok());
        }
        let r = t.attempt("someone-else", sprayer).unwrap_err();
        assert!(r.message.contains("from this address"), "{r:?}");
    }

    #[test]
    fn only_plain_local_paths_are_followed_after_sign_in() {
        for ok in [
            "/",
            "/agents",
            "/agents/",
            "/agents/alpha.1?page=2",
            "/tools?q=list%20users",
            "/tools/petstore/add_pet",
        ] {
            assert!(is_local_path(ok), "{ok}");
        }
        for bad in [
            "",
            "agents",
            "//evil.example/",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/x",
            "/ /x",
            "https://evil.example/",
            "/é",
            "/.//example.com",
            "/..//example.com",
            "/%2e//example.com",
            "/a//b",
            "/agents/x?__err=abc",
            "/agents/x?a=1&%5F%5Ferr=abc",
            "/agents/x?__er%72=abc",
            "/agents/x?__path=%2Fapi",
        ] {
            assert!(!is_local_path(bad), "{bad:?}");
        }
    }
}
