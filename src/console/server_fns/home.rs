//! The home page's data and the navigation's (pending approvals) (SPEC §6).

#[cfg(feature = "ssr")]
use crate::console::server_fns::{agent_item, call_item, signed_in, with_status};
use crate::console::server_fns::{AgentItem, CallItem, ConsoleResult};
#[cfg(feature = "ssr")]
use crate::console::words::cause_in_words;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The home page (`/`, issue 14): what is set up yet, and an overview of the agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HomeData {
    /// The server's clock (ms).
    pub now: i64,
    /// Vendors in the toolbox.
    pub vendors: usize,
    /// Tools in the toolbox.
    pub tools: i64,
    /// Connections in use (revoked ones not counted).
    pub connections: usize,
    /// Every agent by name, with its working set's size.
    pub agents: Vec<AgentItem>,
    /// Approvals waiting for a person.
    pub pending: i64,
    /// When the newest sweep that demoted anything ran (ms).
    pub last_sweep_at: Option<i64>,
    /// What it demoted: `(agent, vendor__name, cause in words)`.
    pub last_sweep: Vec<(String, String, String)>,
    /// Minutes until the next sweep.
    pub next_sweep_minutes: i64,
    /// The newest calls of every agent (8 at most), newest first.
    pub calls: Vec<CallItem>,
    /// The newest failed calls of every agent (5 at most), newest first.
    pub failures: Vec<CallItem>,
}

/// What every page's frame shows beside the nav (issue 14.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NavData {
    /// Approvals waiting for a decision.
    pub pending: i64,
    /// Whether the signed-in person still uses the password generated at first start.
    pub password_generated: bool,
}

/// The frame's data: pending approvals, and whether the signed-in person should change
/// the password Graft generated at first start.
#[server(prefix = "/api", endpoint = "nav")]
pub async fn nav() -> ConsoleResult<NavData> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        Ok(NavData {
            pending: state.graft.pending_approvals().await?,
            password_generated: state.graft.password_is_generated(person.id).await?,
        })
    })
    .await
}

/// The home page: the three first steps (a vendor imported, a connection added, an
/// agent created) and an overview (agents and their sets, pending approvals).
#[server(prefix = "/api", endpoint = "home")]
pub async fn home() -> ConsoleResult<HomeData> {
    with_status(async move {
        let (state, _) = signed_in().await?;
        let g = &state.graft;
        let now = g.clock_now();
        let swept = g.last_sweep().await?;
        let last_sweep_at = swept.first().map(|r| r.at);
        let last_sweep = swept
            .into_iter()
            .map(|r| {
                let cause = cause_in_words(r.cause).to_string();
                (r.agent, format!("{}__{}", r.vendor, r.name), cause)
            })
            .collect();
        let failed = crate::service::CallFilter {
            outcome: Some(crate::service::CallOutcome::Failed),
            ..Default::default()
        };
        Ok(HomeData {
            now,
            last_sweep_at,
            last_sweep,
            next_sweep_minutes: state.minutes_to_next_sweep(now),
            calls: g
                .calls(&Default::default(), 8)
                .await?
                .into_iter()
                .map(call_item)
                .collect(),
            failures: g
                .calls(&failed, 5)
                .await?
                .into_iter()
                .map(call_item)
                .collect(),
            vendors: g.vendors().await?.len(),
            tools: g.toolbox_size().await?,
            connections: g
                .connections()
                .await?
                .iter()
                .filter(|c| c.revoked_at.is_none())
                .count(),
            // removed agents keep their pages, not a place on the overview
            agents: g
                .list_agents()
                .await?
                .into_iter()
                .filter(|a| a.removed_at.is_none())
                .map(agent_item)
                .collect(),
            pending: g.pending_approvals().await?,
        })
    })
    .await
}
