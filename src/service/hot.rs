//! What a tool call reads, kept in memory (issue 15): the agent a token belongs to, the
//! tool a name resolves to, each agent's working set, a tool's credential and vendor
//! URL. Every one of them is read on every call and changes rarely, so the call path
//! reads the database only when something changed.
//!
//! Invalidation is by epoch: any change that can alter what is cached (a promotion, a
//! demotion, the sweep, an import or a new version, an agent's settings or token, a
//! connection, a vendor) bumps the epoch, here and, through `change_events`, in every
//! other process on the database within a second; an entry of an older epoch is never
//! served. (The MCP adapter keys its tool definitions by the same epoch.)

use crate::db::{AgentRow, ToolRow};
use crate::proxy::request::Credential;
use crate::service::RunAnswer;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Most entries of each other map (a map is cleared when it would grow past this).
const ENTRIES: usize = 16_384;

/// A tool's call-time setting: its credential (or the answer that refuses the call) and
/// its vendor's base URL.
#[derive(Clone)]
pub(crate) struct CallSetting {
    /// The credential, or `connection_revoked` / `connection_ambiguous`.
    pub credential: Result<Credential, RunAnswer>,
    /// The connection it comes from (its last use is noted).
    pub connection_id: Option<i64>,
    /// The vendor's base URL.
    pub base_url: String,
    /// The vendor is marked internal (security review 32.7).
    pub internal: bool,
}

impl std::fmt::Debug for CallSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never the credential
        f.debug_struct("CallSetting")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

type Tagged<T> = (u64, T);

/// A map whose entries are tagged with the cache epoch they were read at.
type EpochMap<K, V> = RwLock<HashMap<K, Tagged<V>>>;

/// The caches (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct HotCache {
    epoch: AtomicU64,
    agents: EpochMap<String, Option<AgentRow>>,
    /// When this process last wrote an agent's `last_seen_at` (ms).
    seen: Mutex<HashMap<i64, i64>>,
    tools: EpochMap<(String, String), Arc<ToolRow>>,
    sets: EpochMap<i64, Arc<HashSet<i64>>>,
    settings: EpochMap<i64, Arc<CallSetting>>,
}

fn get<K: std::hash::Hash + Eq, V: Clone>(map: &EpochMap<K, V>, key: &K, epoch: u64) -> Option<V> {
    map.read()
        .expect("cache lock")
        .get(key)
        .filter(|(e, _)| *e == epoch)
        .map(|(_, v)| v.clone())
}

fn put<K: std::hash::Hash + Eq, V>(map: &EpochMap<K, V>, key: K, epoch: u64, v: V) {
    let mut m = map.write().expect("cache lock");
    if m.len() >= ENTRIES {
        m.clear();
    }
    m.insert(key, (epoch, v));
}

impl HotCache {
    /// The current epoch (read it before reading the database, and tag what was read
    /// with it: a change during the read then makes the entry stale at once).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Something changed: every cached entry is stale.
    pub fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// The agent of a token hash (`Some(None)`: known not to exist).
    pub fn agent(&self, token_hash: &str, epoch: u64) -> Option<Option<AgentRow>> {
        get(&self.agents, &token_hash.to_string(), epoch)
    }

    /// Remembers the agent of a token hash.
    pub fn put_agent(&self, token_hash: String, epoch: u64, agent: Option<AgentRow>) {
        put(&self.agents, token_hash, epoch, agent);
    }

    /// Whether `last_seen_at` is due for this agent (`resolution` ms since this process
    /// last wrote it, or since the stored value); records `now` when it is.
    pub fn seen_due(&self, agent: &AgentRow, now: i64, resolution: i64) -> bool {
        let mut seen = self.seen.lock().expect("cache lock");
        let last = seen
            .get(&agent.id)
            .copied()
            .max(agent.last_seen_at)
            .unwrap_or(i64::MIN);
        if now.saturating_sub(last) >= resolution {
            if seen.len() >= ENTRIES {
                seen.clear();
            }
            seen.insert(agent.id, now);
            true
        } else {
            false
        }
    }

    /// A tool by `(vendor, name)`.
    pub fn tool(&self, vendor: &str, name: &str, epoch: u64) -> Option<Arc<ToolRow>> {
        get(&self.tools, &(vendor.to_string(), name.to_string()), epoch)
    }

    /// Remembers a tool.
    pub fn put_tool(&self, epoch: u64, tool: Arc<ToolRow>) {
        put(
            &self.tools,
            (tool.vendor.clone(), tool.name.clone()),
            epoch,
            tool,
        );
    }

    /// An agent's working set (tool ids).
    pub fn set(&self, agent_id: i64, epoch: u64) -> Option<Arc<HashSet<i64>>> {
        get(&self.sets, &agent_id, epoch)
    }

    /// Remembers an agent's working set.
    pub fn put_set(&self, agent_id: i64, epoch: u64, set: Arc<HashSet<i64>>) {
        put(&self.sets, agent_id, epoch, set);
    }

    /// A tool's call setting.
    pub fn setting(&self, tool_id: i64, epoch: u64) -> Option<Arc<CallSetting>> {
        get(&self.settings, &tool_id, epoch)
    }

    /// Remembers a tool's call setting.
    pub fn put_setting(&self, tool_id: i64, epoch: u64, s: Arc<CallSetting>) {
        put(&self.settings, tool_id, epoch, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: i64) -> AgentRow {
        AgentRow {
            id,
            name: format!("a{id}"),
            harness: None,
            cap: 20,
            idle_window_days: 21,
            created_at: 0,
            last_seen_at: None,
            disabled_at: None,
            starter_template_id: None,
            removed_at: None,
            token_budget: None,
        }
    }

    #[test]
    fn an_entry_of_an_older_epoch_is_never_served() {
        let c = HotCache::default();
        let e = c.epoch();
        c.put_agent("h".into(), e, Some(agent(1)));
        assert_eq!(c.agent("h", e), Some(Some(agent(1))));
        c.bump();
        assert_eq!(c.agent("h", c.epoch()), None);
        // read before a change, stored after it: stale at once
        let before = c.epoch();
        c.bump();
        c.put_set(1, before, Arc::new(HashSet::from([3])));
        assert!(c.set(1, c.epoch()).is_none());
    }

    #[test]
    fn last_seen_is_written_once_per_resolution() {
        let c = HotCache::default();
        let a = agent(1);
        assert!(c.seen_due(&a, 1_000, 60_000));
        assert!(!c.seen_due(&a, 30_000, 60_000));
        assert!(c.seen_due(&a, 61_000, 60_000));
    }
}
