//! The console's server side (SPEC §6): the state its server functions read, sign-in
//! sessions (`tower-sessions` with its sqlx store in Graft's database; cookies
//! HttpOnly, SameSite=Lax, Secure when the public URL is https), the gate that sends
//! signed-out people to `/login`, the OpenAPI upload (multipart, a plain form that works
//! without JavaScript), the Graft skill at `/skill/SKILL.md`, and one-time values (a new
//! token, an import summary) handed from a POST to the page it redirects to.

mod audit;
mod gate;
mod live;
mod mcp_oauth;
mod oauth;
mod session;
mod throttle;
mod try_it;
mod upload;

pub use audit::*;
pub use gate::*;
pub use live::*;
pub use mcp_oauth::*;
pub use oauth::*;
pub use session::*;
pub use throttle::*;
pub use try_it::*;
pub use upload::*;

use crate::service::Graft;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
