//! People (SPEC §2 `users`, §6): accounts, sign-in with argon2id password hashes
//! (RustCrypto `argon2`, the PHC string format), the first `admin`, the console's
//! sessions of a person, and password changes and resets.

use super::{new_token, Graft, ServiceError, ServiceResult};
use crate::db;
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;

/// Shortest password accepted for a person.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// A person signed in to the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: i64,
    /// Sign-in name.
    pub name: String,
    /// The session epoch signed in at (a password change moves to the next one).
    pub epoch: i64,
}

impl From<db::UserRow> for Person {
    fn from(u: db::UserRow) -> Self {
        Self {
            id: u.id,
            name: u.name,
            epoch: u.session_epoch,
        }
    }
}

/// Checks a person's name: 1..=64 letters, digits, `-`, `_`, `.`, `@`.
/// Errors: `Invalid` with the rule.
pub fn check_user_name(name: &str) -> ServiceResult<String> {
    let name = name.trim();
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c));
    if ok {
        Ok(name.to_string())
    } else {
        Err(ServiceError::Invalid(
            "a user name is 1 to 64 letters, digits, '-', '_', '.' or '@'".into(),
        ))
    }
}

/// Checks a new password: at least [`MIN_PASSWORD_CHARS`] characters, at most 1024.
/// Errors: `Invalid` with the rule.
pub fn check_password(password: &str) -> ServiceResult<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(ServiceError::Invalid(format!(
            "a password needs at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    if n > 1024 {
        return Err(ServiceError::Invalid(
            "a password has at most 1024 characters".into(),
        ));
    }
    Ok(())
}

/// Password checks that run at once in the process (argon2id with the crate's default
/// parameters takes 19 MiB each).
pub const PASSWORD_CHECKS: usize = 2;

/// How long a sign-in waits for a free password check before it is answered "busy".
pub const PASSWORD_CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs a password check on one of [`PASSWORD_CHECKS`] threads kept for them: each
/// argon2 check takes ~19 MiB, and the allocator keeps an arena per thread that ran one,
/// so checks on tokio's many blocking threads left hundreds of MiB behind after a flood
/// (security review 32.1, second look). Answers `false` if the thread is gone.
async fn check_on_password_threads(check: impl FnOnce() -> bool + Send + 'static) -> bool {
    type Job = Box<dyn FnOnce() + Send>;
    static QUEUE: std::sync::OnceLock<std::sync::mpsc::SyncSender<Job>> =
        std::sync::OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(PASSWORD_CHECKS * 4);
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for i in 0..PASSWORD_CHECKS {
            let rx = rx.clone();
            let _ = std::thread::Builder::new()
                .name(format!("graft-password-{i}"))
                .spawn(move || loop {
                    let job = match rx.lock().map(|r| r.recv()) {
                        Ok(Ok(job)) => job,
                        _ => return,
                    };
                    job();
                });
        }
        tx
    });
    let (done, answer) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = done.send(check());
    });
    // the callers hold one of PASSWORD_CHECKS permits, so the queue never fills
    if queue.try_send(job).is_err() {
        return false;
    }
    answer.await.unwrap_or(false)
}

/// The argon2id PHC string of a password (random salt, the crate's default parameters).
fn hash_password(password: &str) -> ServiceResult<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ServiceError::Internal(anyhow::anyhow!("hashing a password: {e}")))
}

/// Whether `password` matches a stored PHC string (false for an unreadable one).
fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A PHC string of a password nobody has, verified against when the name is unknown so
/// that a wrong name costs as long as a wrong password.
fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_password(&new_token()).unwrap_or_default())
}

impl Graft {
    /// Adds a person who can sign in to the console. Errors: `Invalid` (name or password
    /// rules), `Conflict` (name taken).
    pub async fn add_user(&self, name: &str, password: &str) -> ServiceResult<Person> {
        self.insert_person(name, password, false).await
    }

    /// Adds a person; `generated`: the password is one Graft made (the console asks to
    /// change it).
    async fn insert_person(
        &self,
        name: &str,
        password: &str,
        generated: bool,
    ) -> ServiceResult<Person> {
        let name = check_user_name(name)?;
        check_password(password)?;
        let hash = hash_password(password)?;
        let id = db::insert_user(self.pool(), &name, &hash, generated, self.now())
            .await
            .map_err(|e| {
                super::error::unique_or(e, ServiceError::Conflict, || {
                    format!("a user named {name:?} exists already")
                })
            })?;
        Ok(Person { id, name, epoch: 0 })
    }

    /// On a database with no person yet, creates `admin` with a random password and
    /// returns that password (to be shown once); otherwise `None`.
    pub async fn ensure_admin(&self) -> ServiceResult<Option<String>> {
        if db::count_users(self.pool()).await? > 0 {
            return Ok(None);
        }
        let password = super::random_hex(12);
        match self.insert_person("admin", &password, true).await {
            Ok(_) => Ok(Some(password)),
            // another process created the first person meanwhile
            Err(ServiceError::Conflict(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether a person still signs in with the password Graft generated at first start
    /// ([`Graft::ensure_admin`]); a change of password clears it.
    pub async fn password_is_generated(&self, person_id: i64) -> ServiceResult<bool> {
        Ok(db::select_password_generated(self.pool(), person_id).await?)
    }

    /// The person a name and password belong to, or `None` (same answer, and about the
    /// same time, for an unknown name and a wrong password). At most [`PASSWORD_CHECKS`]
    /// run at once; errors: `Busy` when none came free within [`PASSWORD_CHECK_WAIT`].
    pub async fn sign_in(&self, name: &str, password: &str) -> ServiceResult<Option<Person>> {
        // no name holds a NUL (PostgreSQL could not even look one up): nobody, as for any
        // unknown name, after the same password work
        let user = if name.contains('\0') {
            None
        } else {
            db::select_user_by_name(self.pool(), name.trim()).await?
        };
        let phc = user
            .as_ref()
            .map(|u| u.password_hash.clone())
            .unwrap_or_else(|| decoy_hash().to_string());
        // a bounded number of checks at once: each takes ~19 MiB and a core for tens of
        // milliseconds, and a flood of sign-ins must not take the process's memory or
        // the blocking threads agents' validations share (security review 32.1)
        let Ok(_permit) =
            tokio::time::timeout(PASSWORD_CHECK_WAIT, self.inner.password_checks.acquire()).await
        else {
            return Err(ServiceError::Busy {
                message: "Graft is checking many sign-ins at once; try again in a few seconds."
                    .into(),
                retry_after: PASSWORD_CHECK_WAIT,
            });
        };
        let password = password.to_string();
        let ok = check_on_password_threads(move || verify_password(&password, &phc)).await;
        Ok(match user {
            Some(u) if ok => Some(u.into()),
            _ => None,
        })
    }

    /// The person a session names, by id, if the session's epoch is still theirs (a
    /// password change or a removal ends every session); else `None`.
    pub async fn session_person(&self, id: i64, epoch: i64) -> ServiceResult<Option<Person>> {
        Ok(db::select_user(self.pool(), id)
            .await?
            .filter(|u| u.session_epoch == epoch)
            .map(Person::from))
    }

    /// Removes a person; their sessions end. Errors: `Invalid` (no such person).
    pub async fn remove_user(&self, name: &str) -> ServiceResult<()> {
        if !db::delete_user(self.pool(), name).await? {
            return Err(ServiceError::Invalid(format!("no user named {name:?}")));
        }
        Ok(())
    }

    /// Changes a person's password after checking the current one; every session of
    /// theirs ends. Returns the person at their new session epoch (to keep the session
    /// that made the change). Errors: `Invalid` (wrong current password, or the new one
    /// breaks the rules).
    pub async fn change_password(
        &self,
        name: &str,
        current: &str,
        new: &str,
    ) -> ServiceResult<Person> {
        if self.sign_in(name, current).await?.is_none() {
            return Err(ServiceError::Invalid(
                "the current password is wrong".into(),
            ));
        }
        check_password(new)?;
        let hash = hash_password(new)?;
        db::update_user_password(self.pool(), name, &hash).await?;
        db::select_user_by_name(self.pool(), name)
            .await?
            .map(Person::from)
            .ok_or_else(|| ServiceError::Invalid(format!("no user named {name:?}")))
    }

    /// Sets a person's password without the current one (`graft user add` of an existing
    /// name is refused; this serves `graft user password`). Errors: `Invalid`, `NotFound`.
    pub async fn reset_password(&self, name: &str, new: &str) -> ServiceResult<()> {
        check_password(new)?;
        let hash = hash_password(new)?;
        if !db::update_user_password(self.pool(), name, &hash).await? {
            return Err(ServiceError::Invalid(format!("no user named {name:?}")));
        }
        Ok(())
    }
}
