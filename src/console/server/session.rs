//! Console sign-in sessions (SPEC §6): the cookie, the session store (ids kept hashed),
//! who is signed in, and one-time flash messages.

use crate::console::words::ImportSummary;
use crate::service::users::Person;
use crate::service::{Graft, ServiceResult, SessionDb};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, Session, SessionManagerLayer};

/// The session key holding the signed-in person's name.
pub(crate) const PERSON_KEY: &str = "person";

/// Signed-in sessions end after this long without a request, over HTTPS.
pub(crate) const SESSION_IDLE_DAYS: i64 = 7;

use crate::config::PLAIN_HTTP_IDLE_HOURS;

/// How long a one-time value waits to be shown.
pub(crate) const FLASH_TTL: Duration = Duration::from_secs(600);

/// Previews one person keeps at once (each holds its document, up to 32 MiB): a new one
/// drops their oldest.
pub(crate) const PREVIEWS_PER_PERSON: usize = 2;

/// Answers of sent tools one person keeps at once (each holds a vendor's answer, up to
/// the proxy's response cap): a new one drops their oldest.
pub(crate) const SENT_PER_PERSON: usize = 20;

/// A value shown once on the page a POST redirects to.
#[derive(Debug, Clone)]
pub enum Flash {
    /// `(agent name, token)` of a new agent or a rotated token.
    Token(String, String),
    /// The summary of an OpenAPI upload.
    Import(Box<ImportSummary>),
    /// A previewed upload (issue 28.11): what applying it would do, and what applies it.
    Preview(Box<PendingImport>),
    /// What a vendor answered a tool a person sent from its page (issue 28.10): the
    /// server function's `TryResult` as JSON (this store sits below the server functions).
    Sent(serde_json::Value),
    /// Why something a person started elsewhere did not finish (an MCP vendor's
    /// authorization, issue 27.1), shown on the Vendors page.
    Failed(String),
}

/// An upload previewed and not applied yet: the document as uploaded, and its preview.
#[derive(Debug, Clone)]
pub struct PendingImport {
    /// The vendor slug given.
    pub vendor: String,
    /// The base URL given, if any.
    pub base_url: Option<String>,
    /// The document's text.
    pub text: String,
    /// What applying it would do (as of the preview).
    pub summary: ImportSummary,
}

/// One-time values by random id, each for the person who caused it, for 10 minutes.
/// In memory: a restart forgets them, which only means a token must be rotated again.
#[derive(Default)]
pub struct FlashStore {
    items: Mutex<HashMap<String, (String, Instant, Flash)>>,
}

impl FlashStore {
    /// Keeps `value` for `person`; returns its id (128 random bits, hex). A preview
    /// past [`PREVIEWS_PER_PERSON`], or a sent tool's answer past [`SENT_PER_PERSON`],
    /// drops the person's oldest of that kind: what one person keeps is bounded.
    pub fn put(&self, person: &str, value: Flash) -> String {
        let id = crate::service::random_hex(16);
        let mut items = self.items.lock().expect("flash lock");
        items.retain(|_, (_, at, _)| at.elapsed() < FLASH_TTL);
        let limit = match value {
            Flash::Preview(_) => Some(PREVIEWS_PER_PERSON),
            Flash::Sent(_) => Some(SENT_PER_PERSON),
            _ => None,
        };
        if let Some(limit) = limit {
            let kind = std::mem::discriminant(&value);
            let mut theirs: Vec<(Instant, String)> = items
                .iter()
                .filter(|(_, (p, _, v))| p == person && std::mem::discriminant(v) == kind)
                .map(|(id, (_, at, _))| (*at, id.clone()))
                .collect();
            theirs.sort();
            let over = (theirs.len() + 1).saturating_sub(limit);
            for (_, old) in theirs.into_iter().take(over) {
                items.remove(&old);
            }
        }
        // strictly after every kept value, so that "oldest" is never a tie
        let now = Instant::now();
        let at = match items.values().map(|(_, at, _)| *at).max() {
            Some(last) if last >= now => last + Duration::from_nanos(1),
            _ => now,
        };
        items.insert(id.clone(), (person.to_string(), at, value));
        id
    }

    /// The preview `id` kept for `person`, left in place (the page shows it until the
    /// person applies or leaves it).
    pub fn peek_preview(&self, person: &str, id: &str) -> Option<ImportSummary> {
        let items = self.items.lock().expect("flash lock");
        match items.get(id) {
            Some((p, at, Flash::Preview(pending))) if p == person && at.elapsed() < FLASH_TTL => {
                Some(pending.summary.clone())
            }
            _ => None,
        }
    }

    /// The answer `id` of a tool sent for `person`, left in place (a reload shows it).
    pub fn peek_sent(&self, person: &str, id: &str) -> Option<serde_json::Value> {
        let items = self.items.lock().expect("flash lock");
        match items.get(id) {
            Some((p, at, Flash::Sent(r))) if p == person && at.elapsed() < FLASH_TTL => {
                Some(r.clone())
            }
            _ => None,
        }
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
) -> ServiceResult<(SessionManagerLayer<HashedStore>, SessionDb)> {
    let store = graft.session_store().await?;
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

/// The sqlx session store keyed by a SHA-256 of each session id rather than the id
/// itself, so that a copy of the database (a backup, a stolen file) holds no cookie
/// value that would sign its reader in; the cookie still carries the 128-bit random id
/// (tower-sessions' `Id`), as it would with the plain store.
#[derive(Debug, Clone)]
pub struct HashedStore(SessionDb);

/// The id a session is stored under: the first 128 bits of SHA-256 over the id's bytes.
pub(crate) fn stored_id(id: &tower_sessions::session::Id) -> tower_sessions::session::Id {
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
pub(crate) struct SignedIn {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn preview() -> Flash {
        Flash::Preview(Box::new(PendingImport {
            vendor: "shop".into(),
            base_url: None,
            text: "x".repeat(1000),
            summary: ImportSummary::default(),
        }))
    }

    #[test]
    fn a_person_keeps_two_previews_at_most() {
        let store = FlashStore::default();
        let first = store.put("ops", preview());
        let other = store.put("rui", preview());
        let second = store.put("ops", preview());
        let third = store.put("ops", preview());
        assert!(
            store.peek_preview("ops", &first).is_none(),
            "the oldest went"
        );
        assert!(store.peek_preview("ops", &second).is_some());
        assert!(store.peek_preview("ops", &third).is_some());
        assert!(
            store.peek_preview("rui", &other).is_some(),
            "another's stays"
        );
        assert!(store.peek_preview("rui", &third).is_none(), "not theirs");
    }

    #[test]
    fn one_person_keeps_a_bounded_number_of_sent_answers_and_others_keep_theirs() {
        let store = FlashStore::default();
        let other = store.put("kim", Flash::Sent(serde_json::json!({"n": "kim"})));
        let ids: Vec<String> = (0..SENT_PER_PERSON + 5)
            .map(|n| store.put("rui", Flash::Sent(serde_json::json!({ "n": n }))))
            .collect();
        let kept = ids
            .iter()
            .filter(|id| store.peek_sent("rui", id).is_some())
            .count();
        assert_eq!(kept, SENT_PER_PERSON);
        // the oldest went, the newest stayed
        assert!(store.peek_sent("rui", &ids[4]).is_none());
        assert!(store.peek_sent("rui", &ids[5]).is_some());
        assert!(
            store.peek_sent("kim", &other).is_some(),
            "another person's answer stays"
        );
        // a token is not counted with the answers
        let token = store.put("rui", Flash::Token("a".into(), "t".into()));
        assert!(store.take("rui", &token).is_some());
    }
}
