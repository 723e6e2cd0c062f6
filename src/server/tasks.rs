//! The server's background work: other processes' changes forwarded to this one's MCP
//! channels (SPEC §3.5, §9), the periodic sweep (SPEC §5), and the shutdown signal.

use crate::service::{Backend, Graft, Heard};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Keeps the search index built (issue 28.12): at start, at once after a change to the
/// toolbox in this process, and within about a second of one in another process,
/// so that no find_tool or console search waits 2–4 s for a lazy build. A failed build
/// is logged and tried again at the next tick.
pub(crate) async fn keep_search_warm(graft: Graft, shutdown: CancellationToken) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            // a change here wakes it at once; one from another process is heard by the
            // change forwarding, which drops the index too
            _ = graft.search_dropped() => {}
            _ = ticks.tick() => {}
        }
        if graft.search_ready() {
            continue;
        }
        let started = std::time::Instant::now();
        match graft.search_index().await {
            Ok(idx) => tracing::info!(
                tools = idx.len(),
                ms = started.elapsed().as_millis() as u64,
                "search index built in the background"
            ),
            Err(e) => tracing::warn!(error = ?e, "building the search index failed; trying again"),
        }
    }
}

/// Forwards working-set changes made by other processes (the CLI, another server) to
/// this server's MCP channels (SPEC §3.5): on PostgreSQL when they are announced
/// ([`forward_notified_changes`]), on SQLite by polling `change_events` every second.
pub(crate) async fn forward_changes(graft: Graft, shutdown: CancellationToken) {
    if graft.pool().backend() == Backend::Postgres {
        return forward_notified_changes(graft, shutdown).await;
    }
    // None until the cursor could be read (a database briefly unavailable at start must
    // not stop this process from hearing the others for good)
    let mut cursor: Option<i64> = None;
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = ticks.tick() => {
                catch_up(&graft, &mut cursor).await;
            }
        }
    }
}

/// One step of forwarding other processes' changes: with no cursor yet, reads the newest
/// event (where forwarding starts); else forwards the events after the cursor and moves
/// it, and stops this process's MCP servers that another process changed the vendor or
/// connections of ([`Graft::check_mcp_servers`]; they start again at the next need).
/// Says whether the database answered; a failure is logged and leaves the cursor.
pub(crate) async fn catch_up(graft: &Graft, cursor: &mut Option<i64>) -> bool {
    let step = match *cursor {
        None => graft.change_cursor().await,
        Some(c) => match graft.forward_foreign_changes(c).await {
            Ok(f) => {
                if f.servers_to_check {
                    graft.check_mcp_servers().await;
                }
                Ok(f.cursor)
            }
            Err(e) => Err(e),
        },
    };
    match step {
        Ok(c) => {
            *cursor = Some(c);
            true
        }
        Err(e) => {
            tracing::warn!(error = ?e, "reading change events failed; retrying");
            false
        }
    }
}

/// Forwards other instances' changes on PostgreSQL: `LISTEN graft_changes`
/// ([`Graft::listen_changes`]); each announcement from another origin reads
/// `change_events` after this server's cursor, so a change reaches the agent's streams as
/// soon as it commits, once. When the listening connection drops, the listener
/// connects and listens again, and this reads whatever was recorded meanwhile: no change
/// is lost. The cursor is read after LISTEN, so nothing falls between the two.
pub(crate) async fn forward_notified_changes(graft: Graft, shutdown: CancellationToken) {
    let pause = std::time::Duration::from_secs(1);
    let mut listener = loop {
        match graft.listen_changes().await {
            Ok(Some(l)) => break l,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = ?e, "cannot listen for other instances' changes yet; retrying")
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
    };
    let mut cursor: Option<i64> = None;
    // catch up first (cursor None: start at the newest event)
    let mut behind = true;
    loop {
        if behind {
            behind = !catch_up(&graft, &mut cursor).await;
            if behind {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
                continue;
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            n = listener.next() => match n {
                Ok(Heard::Payload(p)) => {
                    behind = graft.announced_elsewhere(&p);
                }
                // the connection dropped and was made again: read what was missed
                Ok(Heard::Reconnected) => {
                    tracing::info!("listening for other instances' changes again");
                    behind = true;
                }
                Err(e) => {
                    tracing::warn!(error = ?e, "lost the change listener; reconnecting");
                    behind = true;
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(pause) => {}
                    }
                }
            }
        }
    }
}

/// The periodic sweep (SPEC §5): every `interval`, first one `interval` after start.
pub(crate) async fn sweeper(
    graft: Graft,
    interval: std::time::Duration,
    next: Arc<std::sync::atomic::AtomicI64>,
    shutdown: CancellationToken,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = ticks.tick() => {
                next.store(
                    graft.clock_now() + interval.as_millis() as i64,
                    std::sync::atomic::Ordering::Relaxed,
                );
                match graft.sweep_scheduled(graft.clock_now()).await {
                    Ok(None) => tracing::debug!("sweep: another instance is sweeping"),
                    Ok(Some(r)) if r.demotions() > 0 => tracing::info!(demoted = r.demotions(), agents = r.agents.len(), "sweep"),
                    Ok(Some(r)) => tracing::debug!(entries = r.entries, "sweep: nothing to demote"),
                    Err(e) => tracing::error!(error = ?e, "sweep failed"),
                }
            }
        }
    }
}

/// MCP vendors (issue 27.2): a vendor's tools/list is read again when its server says it
/// changed, and every live MCP vendor's when it was last read longer ago than
/// GRAFT_MCP_REFRESH (checked each minute, and at start). Ends with `shutdown`.
pub(crate) async fn mcp_vendors(graft: Graft, shutdown: CancellationToken) {
    use std::collections::HashMap;
    use tokio::time::Instant;
    let mut changes = graft.mcp_changes();
    let every = std::time::Duration::from_secs(60);
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut waiting = tokio::time::interval(std::time::Duration::from_secs(2));
    // a server that says its list changed is read at most once per `relist` (30 s): what
    // it says meanwhile is read when that time is up (one read for many notices, and at
    // most one version of each tool)
    let relist = graft.mcp_limits().relist;
    let mut last: HashMap<i64, Instant> = HashMap::new();
    let mut due: HashMap<i64, Instant> = HashMap::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            changed = changes.recv() => match changed {
                Ok(vendor) => {
                    let at = last.get(&vendor).map_or_else(Instant::now, |t| *t + relist);
                    due.entry(vendor).or_insert(at);
                }
                // fell behind: the next tick reads what is due
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
            _ = waiting.tick() => {
                let now = Instant::now();
                let ready: Vec<i64> = due.iter().filter(|(_, at)| **at <= now).map(|(v, _)| *v).collect();
                for vendor in ready {
                    due.remove(&vendor);
                    last.insert(vendor, Instant::now());
                    graft.mcp_list_changed(vendor).await;
                }
            }
            _ = ticks.tick() => {
                if let Err(e) = graft.refresh_mcp_vendors_due().await {
                    tracing::warn!(error = ?e, "MCP vendors could not be read");
                }
            }
        }
    }
}

pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
