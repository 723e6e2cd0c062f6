//! What the console's open pages follow (issue 28.3): a process-wide bus of coarse
//! topics ("the approvals changed", "a call was logged"), fed by the same places that
//! tell agents their working sets changed (SPEC §3.5) and by other processes' change
//! events. A topic carries no data: a page that hears it loads its own data again
//! through its server function, so nothing a person may not see travels on the bus.

use tokio::sync::broadcast;

/// A set of console topics, one bit each (see the constants).
pub type Topics = u8;

/// Approvals requested or decided (the nav badge, Approvals, home).
pub const APPROVALS: Topics = 1;
/// An agent's working set, settings or token (the agent pages, home).
pub const AGENTS: Topics = 2;
/// A tool call logged (Calls, the agent page, home).
pub const CALLS: Topics = 4;
/// The toolbox: an import, a new version (Toolbox, home).
pub const TOOLBOX: Topics = 8;
/// A vendor or a connection (Vendors, home).
pub const VENDORS: Topics = 16;
/// Every topic (a subscriber that lagged behind hears all of them).
pub const ALL: Topics = APPROVALS | AGENTS | CALLS | TOOLBOX | VENDORS;

/// Each topic with its name on the wire (`text/event-stream` data of the console's
/// `GET /console/events`, names joined by `,`).
pub const NAMES: [(Topics, &str); 5] = [
    (APPROVALS, "approvals"),
    (AGENTS, "agents"),
    (CALLS, "calls"),
    (TOOLBOX, "toolbox"),
    (VENDORS, "vendors"),
];

/// The names of `topics`, joined by `,` (`"approvals,calls"`).
pub fn names(topics: Topics) -> String {
    NAMES
        .iter()
        .filter(|(t, _)| topics & t != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

/// Topics sent at once; a subscriber further behind gets [`ALL`] once.
const CAPACITY: usize = 64;

/// The bus: one sender, a receiver per open console stream, and the process's
/// shutdown (every stream ends then, so none holds up a graceful stop).
#[derive(Debug)]
pub struct LiveBus {
    tx: broadcast::Sender<Topics>,
    closed: tokio_util::sync::CancellationToken,
}

impl Default for LiveBus {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(CAPACITY).0,
            closed: tokio_util::sync::CancellationToken::new(),
        }
    }
}

impl LiveBus {
    /// Tells every open stream that `topics` changed (no one listening: nothing).
    pub fn send(&self, topics: Topics) {
        if topics != 0 {
            let _ = self.tx.send(topics);
        }
    }

    /// A receiver of what changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Topics> {
        self.tx.subscribe()
    }

    /// How many streams follow the bus now.
    pub fn streams(&self) -> usize {
        self.tx.receiver_count()
    }

    /// The process is stopping: every stream ends now and no new one opens.
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// Cancelled when the bus is closed ([`LiveBus::close`]).
    pub fn closing(&self) -> tokio_util::sync::CancellationToken {
        self.closed.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_on_the_wire() {
        assert_eq!(names(APPROVALS | CALLS), "approvals,calls");
        assert_eq!(names(0), "");
        assert_eq!(names(ALL), "approvals,agents,calls,toolbox,vendors");
    }

    #[tokio::test]
    async fn every_subscriber_hears_a_change_and_a_lagging_one_is_told() {
        let bus = LiveBus::default();
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        bus.send(APPROVALS);
        bus.send(0);
        assert_eq!(a.recv().await.unwrap(), APPROVALS);
        assert_eq!(b.recv().await.unwrap(), APPROVALS);
        for _ in 0..CAPACITY + 1 {
            bus.send(CALLS);
        }
        assert!(matches!(
            a.recv().await,
            Err(broadcast::error::RecvError::Lagged(_))
        ));
        assert_eq!(bus.streams(), 2);
    }
}
