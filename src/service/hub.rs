//! The agent-keyed change hub (SPEC §3.5): one place that says "this agent's working set
//! changed". Every open channel of that agent subscribes here — the GET stream of each
//! 2025-era session and each 2026-era `subscriptions/listen` stream — and no channel of
//! another agent ever sees the notice.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// Capacity of each agent's channel; a slow channel that lags still gets one notice.
const CAPACITY: usize = 16;

/// Open change channels one agent may hold (README "Limits"): its 2025-era sessions'
/// GET-stream notifiers (at most `MAX_SESSIONS_PER_AGENT` of them) and its 2026-era
/// listen streams together. A listen stream past it is refused.
pub const MAX_CHANNELS_PER_AGENT: usize = 64;

/// Fans working-set changes out to the channels of one agent.
#[derive(Debug, Default)]
pub struct ChangeHub {
    agents: Mutex<HashMap<i64, broadcast::Sender<()>>>,
}

impl ChangeHub {
    /// A receiver of the changes of `agent_id`'s working set.
    pub fn subscribe(&self, agent_id: i64) -> broadcast::Receiver<()> {
        let mut agents = self.agents.lock().expect("hub lock");
        agents
            .entry(agent_id)
            .or_insert_with(|| broadcast::channel(CAPACITY).0)
            .subscribe()
    }

    /// A receiver of `agent_id`'s changes unless that agent already holds
    /// [`MAX_CHANNELS_PER_AGENT`] channels.
    pub fn try_subscribe(&self, agent_id: i64) -> Option<broadcast::Receiver<()>> {
        let mut agents = self.agents.lock().expect("hub lock");
        let tx = agents
            .entry(agent_id)
            .or_insert_with(|| broadcast::channel(CAPACITY).0);
        (tx.receiver_count() < MAX_CHANNELS_PER_AGENT).then(|| tx.subscribe())
    }

    /// How many channels are subscribed now (open GET-stream notifiers of 2025-era
    /// sessions and 2026-era listen streams), for `/healthz`. Forgets agents whose
    /// channels all closed.
    pub fn channels(&self) -> usize {
        let mut agents = self.agents.lock().expect("hub lock");
        agents.retain(|_, tx| tx.receiver_count() > 0);
        agents.values().map(broadcast::Sender::receiver_count).sum()
    }

    /// Ends every channel of `agent_id` (its token was rotated: SPEC §3.1, security
    /// review 32.9): each receiver sees the channel closed, so listen streams end and
    /// 2025-era notifiers close their sessions. Returns how many channels there were.
    pub fn disconnect(&self, agent_id: i64) -> usize {
        self.agents
            .lock()
            .expect("hub lock")
            .remove(&agent_id)
            .map_or(0, |tx| tx.receiver_count())
    }

    /// Tells every channel of `agent_id` that its working set changed (one notice per
    /// call: callers call once per change batch). Returns how many channels were told.
    pub fn notify(&self, agent_id: i64) -> usize {
        let mut agents = self.agents.lock().expect("hub lock");
        let Some(tx) = agents.get(&agent_id) else {
            return 0;
        };
        let told = tx.send(()).unwrap_or(0);
        if told == 0 {
            agents.remove(&agent_id);
        }
        told
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notices_reach_only_that_agent() {
        let hub = ChangeHub::default();
        let mut a1 = hub.subscribe(1);
        let mut a2 = hub.subscribe(1);
        let mut b = hub.subscribe(2);
        assert_eq!(hub.notify(1), 2);
        assert!(a1.try_recv().is_ok());
        assert!(a2.try_recv().is_ok());
        assert!(b.try_recv().is_err());
        assert_eq!(hub.notify(3), 0);
        assert_eq!(hub.channels(), 3);
        drop((a1, a2));
        assert_eq!(hub.channels(), 1);
        drop(b);
        assert_eq!(hub.channels(), 0);
    }

    #[tokio::test]
    async fn disconnecting_an_agent_closes_only_its_channels() {
        let hub = ChangeHub::default();
        let mut a = hub.subscribe(1);
        let mut b = hub.subscribe(2);
        assert_eq!(hub.disconnect(1), 1);
        assert!(matches!(
            a.recv().await,
            Err(broadcast::error::RecvError::Closed)
        ));
        assert_eq!(hub.notify(2), 1);
        assert!(b.recv().await.is_ok());
        // a new channel of the agent works again
        let mut a2 = hub.subscribe(1);
        assert_eq!(hub.notify(1), 1);
        assert!(a2.recv().await.is_ok());
    }

    #[test]
    fn each_agent_has_a_channel_cap() {
        let hub = ChangeHub::default();
        let mine: Vec<_> = (0..MAX_CHANNELS_PER_AGENT)
            .map(|_| hub.try_subscribe(1).expect("within the cap"))
            .collect();
        assert!(hub.try_subscribe(1).is_none());
        assert!(
            hub.try_subscribe(2).is_some(),
            "another agent is not affected"
        );
        drop(mine);
        assert!(hub.try_subscribe(1).is_some());
    }
}
