//! Change notification (SPEC §3.5): recording which agents' sets changed and telling
//! the hub, on this instance and from others.

use super::live::{self, Topics};
use super::{Graft, ServiceResult};
use crate::db::{self, ChangeListener};
use std::sync::atomic::Ordering;

/// Least time between two announcements to other processes that calls were logged
/// (ms): a busy instance adds at most one change event per this interval.
const CALLS_ANNOUNCE_MS: i64 = 2_000;

/// What [`Graft::forward_foreign_changes`] did: the new cursor, and whether another
/// process changed a vendor, a connection or the toolbox, so that this process's MCP
/// servers must be checked ([`Graft::check_mcp_servers`]) by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forwarded {
    /// The last change event read (the next call's `after`).
    pub cursor: i64,
    /// Another process changed what a running MCP server was started from.
    pub servers_to_check: bool,
}

impl Graft {
    /// Tells every channel of these agents that their working sets changed: this
    /// process's through the hub, other processes' (the CLI, another server) through
    /// `change_events`, which servers poll (SPEC §3.5). One call per change batch.
    pub(crate) async fn changed(&self, agents: &[i64]) {
        self.inner.hot.bump();
        self.inner.live.send(live::AGENTS);
        for a in agents {
            self.inner.hub.notify(*a);
        }
        if let Err(e) =
            db::insert_change_events(&self.inner.pool, agents, &self.inner.origin, self.now()).await
        {
            tracing::warn!(error = ?e, "cannot record a change event for other processes");
        }
    }

    /// On PostgreSQL, a connection listening for other instances' change announcements
    /// (`LISTEN graft_changes`); `None` on SQLite, where servers poll instead.
    /// Errors: the database failed.
    pub async fn listen_changes(&self) -> ServiceResult<Option<ChangeListener>> {
        Ok(ChangeListener::connect(&self.inner.pool).await?)
    }

    /// Whether an announcement heard by [`Graft::listen_changes`] came from another
    /// process (this one's own changes reached its channels already).
    pub fn announced_elsewhere(&self, payload: &str) -> bool {
        db::payload_origin(payload) != self.inner.origin
    }

    /// The newest change event: where a server starts forwarding other processes'
    /// changes.
    pub async fn change_cursor(&self) -> ServiceResult<i64> {
        Ok(db::select_last_change_event(&self.inner.pool).await?)
    }

    /// Forwards changes recorded by other processes after `after` to this process's
    /// channels (one notice per agent per poll); returns the new cursor. Events older
    /// than an hour are forgotten.
    pub async fn forward_foreign_changes(&self, after: i64) -> ServiceResult<Forwarded> {
        let events = db::select_change_events(&self.inner.pool, after, &self.inner.origin).await?;
        // a console-only change (an approval, a logged call) changes nothing calls read:
        // the caches stay (another instance announces calls every 2 s)
        if events.iter().any(|e| e.1 != CONSOLE_CHANGE) {
            self.inner.hot.bump();
        }
        self.inner.live.send(
            events
                .iter()
                .map(|e| foreign_topics(e.1))
                .fold(0, |all, t| all | t),
        );
        if events.iter().any(|e| e.1 == TOOLBOX_CHANGE) {
            self.invalidate_search();
        }
        // a vendor disabled or removed, or a connection added or revoked, by another
        // process (the CLI, another instance): this process's MCP servers follow
        let servers_to_check = events
            .iter()
            .any(|e| e.1 == STATE_CHANGE || e.1 == TOOLBOX_CHANGE);
        for rotated in events.iter().map(|e| e.1).filter(|a| *a < TOKEN_ROTATED) {
            self.inner.hub.disconnect(TOKEN_ROTATED - rotated);
        }
        let mut agents: Vec<i64> = events.iter().map(|e| e.1).filter(|a| *a > 0).collect();
        agents.sort_unstable();
        agents.dedup();
        for a in agents {
            self.inner.hub.notify(a);
        }
        let cursor = events.last().map_or(after, |e| e.0);
        if cursor % 256 == 0 || events.len() > 256 {
            db::delete_change_events_before(&self.inner.pool, self.now() - 3_600_000).await?;
        }
        Ok(Forwarded {
            cursor,
            servers_to_check,
        })
    }

    /// Tells the agents of `(agent, tool)` entries taken out of working sets that their
    /// lists changed, each agent once.
    pub(crate) async fn changed_entries(&self, entries: &[(i64, i64)]) {
        let mut agents: Vec<i64> = entries.iter().map(|(a, _)| *a).collect();
        agents.sort_unstable();
        agents.dedup();
        self.changed(&agents).await;
    }

    /// The toolbox changed (an import, a new version, a stored document): this
    /// process's indexes are rebuilt at the next search, and other processes hear of it
    /// through `change_events` (agent [`TOOLBOX_CHANGE`]).
    pub(crate) async fn toolbox_changed(&self) {
        // new versions are counted before anyone is told (issue 29.1)
        self.count_tokens_logged(false).await;
        self.inner.hot.bump();
        self.inner.live.send(live::TOOLBOX | live::APPROVALS);
        self.invalidate_search();
        self.announce(TOOLBOX_CHANGE, "a toolbox change").await;
    }

    /// Something that tool calls read changed (an agent's settings or token, a
    /// connection, a vendor): this process's caches are dropped, and other processes
    /// drop theirs through `change_events` (agent [`STATE_CHANGE`]).
    pub(crate) async fn state_changed(&self) {
        self.inner.hot.bump();
        self.inner.live.send(live::AGENTS | live::VENDORS);
        self.announce(STATE_CHANGE, "a change").await;
    }
}

impl Graft {
    /// Something only the console shows changed (an approval requested or decided):
    /// this process's open pages hear `topics`, other processes' pages hear of it
    /// through `change_events` (agent [`CONSOLE_CHANGE`]; issue 28.3).
    pub(crate) async fn console_changed(&self, topics: Topics) {
        self.inner.live.send(topics);
        self.announce(CONSOLE_CHANGE, "a console change").await;
    }

    /// Records change event `marker` for other processes; a failure is logged as "cannot
    /// record `what`" and otherwise ignored (this process already acted on it).
    async fn announce(&self, marker: i64, what: &str) {
        if let Err(e) =
            db::insert_change_events(&self.inner.pool, &[marker], &self.inner.origin, self.now())
                .await
        {
            tracing::warn!(error = ?e, "cannot record {what} for other processes");
        }
    }

    /// A call was logged: this process's open pages hear it at once; on PostgreSQL,
    /// where other instances may show the console, they hear of it at most once per
    /// [`CALLS_ANNOUNCE_MS`] (a change event is a write; calls are many).
    pub(crate) async fn call_logged(&self) {
        self.inner.live.send(live::CALLS);
        if matches!(self.inner.pool, db::Pool::Sqlite(_)) {
            return;
        }
        let now = self.now();
        let last = self.inner.calls_announced.load(Ordering::Relaxed);
        if now - last >= CALLS_ANNOUNCE_MS
            && self
                .inner
                .calls_announced
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            // off the call's path: the agent's answer does not wait for this write
            let graft = self.clone();
            tokio::spawn(async move { graft.announce(CONSOLE_CHANGE, "a logged call").await });
        }
    }
}

/// What the console's pages hear of another process's change event `agent_id`.
fn foreign_topics(agent_id: i64) -> Topics {
    match agent_id {
        TOOLBOX_CHANGE => live::TOOLBOX | live::APPROVALS,
        STATE_CHANGE => live::AGENTS | live::VENDORS,
        CONSOLE_CHANGE => live::APPROVALS | live::CALLS | live::AGENTS,
        a if a > 0 => live::AGENTS,
        // a rotated token
        _ => live::AGENTS,
    }
}

/// The `change_events.agent_id` of a toolbox change (agent ids start at 1).
pub const TOOLBOX_CHANGE: i64 = 0;

/// The `change_events.agent_id` of another change other processes must hear of (an
/// agent's settings or token, a connection, a vendor): they drop what they cached.
pub const STATE_CHANGE: i64 = -1;

/// `change_events.agent_id` values below this mark an agent whose token was rotated:
/// agent `TOKEN_ROTATED - value` (agent ids start at 1); other processes end its
/// channels too.
pub const TOKEN_ROTATED: i64 = -2;

/// The `change_events.agent_id` of a change only the console shows (an approval, a
/// logged call): other processes' open console pages load again (issue 28.3). It is
/// [`TOKEN_ROTATED`] itself, which names no agent (an older process that reads it as
/// a rotation ends the channels of agent 0, which does not exist).
pub const CONSOLE_CHANGE: i64 = TOKEN_ROTATED;
