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

/// Tries of tools one person keeps at once (issue 28.10: a dry run's values and
/// request, or a send's values and the vendor's answer): a new one drops their oldest.
pub(crate) const TRIES_PER_PERSON: usize = 20;

/// Bytes of tries (as JSON) one person keeps at once: a new one drops their oldest
/// until it fits (a vendor's answer is up to the proxy's response cap, 1 MiB unless
/// `GRAFT_RESPONSE_CAP` says otherwise; one larger try is kept alone).
pub(crate) const TRY_BYTES_PER_PERSON: usize = 8 << 20;

/// Bytes of tries all people keep at once: a new one drops the oldest of anyone's
/// until it fits, so that many people trying at once stay within this much memory.
pub(crate) const TRY_BYTES_TOTAL: usize = 64 << 20;

/// A value shown once on the page a POST redirects to.
#[derive(Debug, Clone)]
pub enum Flash {
    /// `(agent name, token)` of a new agent or a rotated token.
    Token(String, String),
    /// The summary of an OpenAPI upload.
    Import(Box<ImportSummary>),
    /// A previewed upload (issue 28.11): what applying it would do, and what applies it.
    Preview(Box<PendingImport>),
    /// A person's try of a tool from its page (issue 28.10): `{"tool": "v__n",
    /// "version": n, "values": {field: text}, "result": TryResult}` (this store sits
    /// below the server functions, so the result is kept as JSON). The values typed
    /// stay here, out of the page's address.
    Tried(serde_json::Value),
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

/// One kept value: whose, since when, its size as counted against the try caps (0 for
/// other kinds), and the value.
struct Kept {
    person: String,
    at: Instant,
    bytes: usize,
    value: Flash,
}

/// One-time values by random id, each for the person who caused it, for 10 minutes.
/// In memory: a restart forgets them, which only means a token must be rotated again.
#[derive(Default)]
pub struct FlashStore {
    items: Mutex<HashMap<String, Kept>>,
}

impl FlashStore {
    /// Keeps `value` for `person`; returns its id (128 random bits, hex). A preview
    /// past [`PREVIEWS_PER_PERSON`], or a try past [`TRIES_PER_PERSON`] or
    /// [`TRY_BYTES_PER_PERSON`], drops the person's oldest of that kind first; then a try
    /// past [`TRY_BYTES_TOTAL`] drops the oldest tries of anyone: what is kept is bounded
    /// (a single try larger than a budget is kept alone).
    pub fn put(&self, person: &str, value: Flash) -> String {
        let id = crate::service::random_hex(16);
        let bytes = match &value {
            Flash::Tried(v) => v.to_string().len(),
            _ => 0,
        };
        let mut items = self.items.lock().expect("flash lock");
        items.retain(|_, k| k.at.elapsed() < FLASH_TTL);
        let kind = std::mem::discriminant(&value);
        // the same kind's, oldest first: (at, id, bytes, whose)
        let mut kept: Vec<(Instant, String, usize, bool)> = items
            .iter()
            .filter(|(_, k)| std::mem::discriminant(&k.value) == kind)
            .map(|(id, k)| (k.at, id.clone(), k.bytes, k.person == person))
            .collect();
        kept.sort();
        let (count, budget) = match value {
            Flash::Preview(_) => (PREVIEWS_PER_PERSON, usize::MAX),
            Flash::Tried(_) => (TRIES_PER_PERSON, TRY_BYTES_PER_PERSON),
            _ => (usize::MAX, usize::MAX),
        };
        let (mut theirs, mut their_bytes) = kept
            .iter()
            .filter(|k| k.3)
            .fold((0, 0), |(n, b), k| (n + 1, b + k.2));
        let mut total: usize = kept.iter().map(|k| k.2).sum();
        let total_budget = if bytes > 0 {
            TRY_BYTES_TOTAL
        } else {
            usize::MAX
        };
        // first the person's own oldest, while theirs are over their count or bytes;
        // then anyone's oldest, while all are over the total
        let mut others = Vec::new();
        for (_, old, size, mine) in kept {
            if mine && (theirs + 1 > count || their_bytes.saturating_add(bytes) > budget) {
                items.remove(&old);
                total -= size;
                theirs -= 1;
                their_bytes -= size;
            } else {
                others.push((old, size));
            }
        }
        for (old, size) in others {
            if total.saturating_add(bytes) <= total_budget {
                break;
            }
            items.remove(&old);
            total -= size;
        }
        // strictly after every kept value, so that "oldest" is never a tie
        let now = Instant::now();
        let at = match items.values().map(|k| k.at).max() {
            Some(last) if last >= now => last + Duration::from_nanos(1),
            _ => now,
        };
        let person = person.to_string();
        items.insert(
            id.clone(),
            Kept {
                person,
                at,
                bytes,
                value,
            },
        );
        id
    }

    /// The preview `id` kept for `person`, left in place (the page shows it until the
    /// person applies or leaves it).
    pub fn peek_preview(&self, person: &str, id: &str) -> Option<ImportSummary> {
        self.peek(person, id, |v| match v {
            Flash::Preview(pending) => Some(pending.summary.clone()),
            _ => None,
        })
    }

    /// The try `id` of a tool kept for `person`, left in place (a reload shows it, and
    /// a send after a dry run reads its values).
    pub fn peek_tried(&self, person: &str, id: &str) -> Option<serde_json::Value> {
        self.peek(person, id, |v| match v {
            Flash::Tried(r) => Some(r.clone()),
            _ => None,
        })
    }

    /// What `read` takes from the value `id` kept for `person`, left in place.
    fn peek<T>(&self, person: &str, id: &str, read: impl FnOnce(&Flash) -> Option<T>) -> Option<T> {
        let items = self.items.lock().expect("flash lock");
        items
            .get(id)
            .filter(|k| k.person == person && k.at.elapsed() < FLASH_TTL)
            .and_then(|k| read(&k.value))
    }

    /// Takes the value `id` kept for `person` (a second take finds nothing).
    pub fn take(&self, person: &str, id: &str) -> Option<Flash> {
        let mut items = self.items.lock().expect("flash lock");
        match items.get(id) {
            Some(k) if k.person == person && k.at.elapsed() < FLASH_TTL => {
                items.remove(id).map(|k| k.value)
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
    fn one_person_keeps_a_bounded_number_of_tries_and_others_keep_theirs() {
        let store = FlashStore::default();
        let other = store.put("kim", Flash::Tried(serde_json::json!({"n": "kim"})));
        let ids: Vec<String> = (0..TRIES_PER_PERSON + 5)
            .map(|n| store.put("rui", Flash::Tried(serde_json::json!({ "n": n }))))
            .collect();
        let kept = ids
            .iter()
            .filter(|id| store.peek_tried("rui", id).is_some())
            .count();
        assert_eq!(kept, TRIES_PER_PERSON);
        // the oldest went, the newest stayed
        assert!(store.peek_tried("rui", &ids[4]).is_none());
        assert!(store.peek_tried("rui", &ids[5]).is_some());
        assert!(
            store.peek_tried("kim", &other).is_some(),
            "another person's try stays"
        );
        assert!(store.peek_tried("kim", &ids[5]).is_none(), "not theirs");
        // a token is not counted with the tries
        let token = store.put("rui", Flash::Token("a".into(), "t".into()));
        assert!(store.take("rui", &token).is_some());
    }

    /// A try of `mib` MiB (a vendor's answer as the page keeps it).
    fn answer(mib: usize) -> Flash {
        Flash::Tried(serde_json::json!({ "result": "x".repeat(mib << 20) }))
    }

    #[test]
    fn tries_are_bounded_in_bytes_per_person_and_across_people() {
        let store = FlashStore::default();
        // per person: 8 MiB; a third 3 MiB answer drops the first
        let rui: Vec<String> = (0..3).map(|_| store.put("rui", answer(3))).collect();
        assert!(store.peek_tried("rui", &rui[0]).is_none(), "over 8 MiB");
        assert!(store.peek_tried("rui", &rui[1]).is_some());
        assert!(store.peek_tried("rui", &rui[2]).is_some());
        // one answer larger than a person's budget is kept alone
        let big = store.put("rui", answer(9));
        assert!(store.peek_tried("rui", &big).is_some());
        assert!(store.peek_tried("rui", &rui[2]).is_none());
        // across people: 64 MiB in all, the oldest of anyone's goes first
        let first = store.put("kim", answer(7));
        let people: Vec<(String, String)> = (0..9)
            .map(|n| {
                let who = format!("p{n}");
                let id = store.put(&who, answer(7));
                (who, id)
            })
            .collect();
        assert!(store.peek_tried("rui", &big).is_none(), "the oldest went");
        assert!(store.peek_tried("kim", &first).is_none());
        for (who, id) in &people {
            assert!(store.peek_tried(who, id).is_some(), "{who}'s stays");
        }
        let kept: usize = store.items.lock().unwrap().values().map(|k| k.bytes).sum();
        assert!(kept <= TRY_BYTES_TOTAL, "{kept}");
        // a person over their own budget drops their own oldest, not another's
        let store = FlashStore::default();
        let ids: Vec<(String, String)> = (0..8)
            .flat_map(|n| [format!("q{n}"), format!("q{n}")])
            .map(|who| {
                let almost = serde_json::json!({ "result": "x".repeat((4 << 20) - 1024) });
                let id = store.put(&who, Flash::Tried(almost));
                (who, id)
            })
            .collect();
        let extra = store.put("q7", answer(1));
        let gone: Vec<&String> = ids
            .iter()
            .filter(|(who, id)| store.peek_tried(who, id).is_none())
            .map(|(_, id)| id)
            .collect();
        assert_eq!(gone, [&ids[14].1], "q7's oldest only");
        assert!(store.peek_tried("q7", &extra).is_some());
        // previews and tokens do not count against the tries
        let token = store.put("kim", Flash::Token("a".into(), "t".into()));
        assert!(store.take("kim", &token).is_some());
    }
}
