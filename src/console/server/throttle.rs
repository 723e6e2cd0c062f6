//! The sign-in throttle (security review 32.1): per name, per address and per pair, and
//! the client's address behind trusted proxies.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed sign-ins for one name from one address before that address is refused that
/// name for the rest of [`THROTTLE_WINDOW`].
pub(crate) const MAX_FAILURES: u32 = 5;

/// Failed sign-ins from one address (any names) before it is refused for the rest of
/// [`THROTTLE_WINDOW`].
pub(crate) const MAX_ADDRESS_FAILURES: u32 = 30;

/// Failed sign-ins for one name (from anywhere) past which every attempt for it is slowed
/// by [`SLOW_DOWN`]; the right password still signs in.
pub(crate) const SLOW_AFTER: u32 = 10;

/// The wait put before each password check of a name that is being guessed.
pub const SLOW_DOWN: Duration = Duration::from_secs(2);

/// How long failures are remembered, and how long a refusal lasts.
pub(crate) const THROTTLE_WINDOW: Duration = Duration::from_secs(60);

/// Entries past which those older than the window are dropped.
pub(crate) const THROTTLE_PRUNE_AT: usize = 1_024;

/// Entries kept at most.
pub(crate) const THROTTLE_ENTRIES: usize = 10_000;

/// Characters of a name the throttle keeps (user names have at most 64): a longer name
/// is no one's, and a flood of huge names must not fill memory.
pub(crate) const THROTTLE_NAME_CHARS: usize = 65;

/// A sign-in name as the throttle keys it: trimmed, lower case, at most
/// [`THROTTLE_NAME_CHARS`] characters.
pub(crate) fn throttle_key(name: &str) -> String {
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
pub(crate) fn count<K: std::hash::Hash + Eq>(
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
}
