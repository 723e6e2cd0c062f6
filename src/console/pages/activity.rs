//! The Activity page (issue 30.4): what the agents did today or this month, at a glance.

use crate::console::components::{loaded, Frame, StackedBars, When};
use crate::console::server_fns::{activity, ActivityData};
use crate::console::words::{change_label_in_words, count, grouped, outcome_label_in_words};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The vendors the latency table lists, most calls first.
const MAX_VENDORS: usize = 20;

/// How often the hydrated page loads its charts again (ms).
const REFRESH_MS: u64 = 30_000;

/// `/activity?range=24h|30d`: calls by outcome, latency by vendor, approvals waiting and
/// working-set changes by cause. Server-rendered SVG (readable without JavaScript); the
/// hydrated page loads them again every 30 s.
#[component]
pub fn ActivityPage() -> impl IntoView {
    let query = use_query_map();
    let range = move || {
        query
            .read()
            .get("range")
            .map(|r| r.trim().to_string())
            .unwrap_or_else(|| "24h".to_string())
    };
    let tick = RwSignal::new(0usize);
    // in the browser only: Effects do not run on the server
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || tick.update(|t| *t += 1),
            std::time::Duration::from_millis(REFRESH_MS),
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    let data = Resource::new(move || (range(), tick.get()), |(r, _)| activity(r));
    view! {
        <Frame title="Activity">
            <h1>"Activity"</h1>
            <nav class="tabs" aria-label="Time range">
                <a href="/activity?range=24h" aria-current=move || (range() != "30d").then_some("page")>"Last 24 hours"</a>
                <a href="/activity?range=30d" aria-current=move || (range() == "30d").then_some("page")>"Last 30 days"</a>
            </nav>
            {loaded(data, "Loading…", activity_view)}
        </Frame>
    }
}

fn activity_view(d: ActivityData) -> impl IntoView {
    let day = d.range != "30d";
    let outcomes: Vec<String> = d
        .outcomes
        .iter()
        .map(|o| outcome_label_in_words(o).to_string())
        .collect();
    let causes: Vec<String> = d
        .causes
        .iter()
        .map(|c| change_label_in_words(c).to_string())
        .collect();
    let (per, unit) = if day {
        (
            d.bucket_ms / 60_000,
            "calls per minute, averaged over 15 minutes",
        )
    } else {
        (1, "calls per day")
    };
    let total_calls: i64 = d.calls.iter().flatten().sum();
    let slowest = d.vendors.iter().map(|v| v.p95_ms).fold(1.0_f64, f64::max);
    let now = d.now;
    view! {
        <section class="card" id="calls-chart">
            <h2>"Calls by outcome"</h2>
            <p class="muted">{format!("{} in the {}.", count(total_calls, "call"), if day { "last 24 hours" } else { "last 30 days" })}</p>
            <StackedBars buckets=d.calls.clone() series=outcomes from=d.from bucket_ms=d.bucket_ms per unit what="calls"/>
        </section>
        <section class="card" id="latency">
            <h2>"Latency by vendor"</h2>
            {if d.vendors.is_empty() {
                view! { <p class="muted">"No call reached a vendor in this time."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap"><table>
                        <thead><tr><th>"Vendor"</th><th>"Calls"</th><th>"Errors"</th><th>"p50"</th><th>"p95"</th><th>"Longest"</th><th>"p50 and p95"</th></tr></thead>
                        <tbody>{d.vendors.iter().take(MAX_VENDORS).map(|v| {
                            let (w50, w95) = (v.p50_ms / slowest * 200.0, v.p95_ms / slowest * 200.0);
                            view! {
                                <tr data-vendor=v.vendor.clone()>
                                    <td><a href=format!("/vendors/{}", crate::console::words::segment(&v.vendor))>{v.vendor.clone()}</a></td>
                                    <td class="num" data-label="Calls">{grouped(v.calls)}</td>
                                    <td class="num" data-label="Errors">{grouped(v.errors)}</td>
                                    <td class="num" data-label="p50">{ms(v.p50_ms)}</td>
                                    <td class="num" data-label="p95">{ms(v.p95_ms)}</td>
                                    <td class="num" data-label="Longest">{ms(v.max_ms as f64)}</td>
                                    <td data-label="p50 and p95">
                                        <svg class="bar" viewBox="0 0 204 14" role="img" aria-label=format!("p50 {}, p95 {}", ms(v.p50_ms), ms(v.p95_ms))>
                                            <rect x="0" y="2" width=format!("{w95:.1}") height="10" class="p95"/>
                                            <rect x="0" y="2" width=format!("{w50:.1}") height="10" class="p50"/>
                                        </svg>
                                    </td>
                                </tr>
                            }
                        }).collect_view()}</tbody>
                    </table></div>
                    {(d.vendors.len() > MAX_VENDORS).then(|| view! {
                        <p class="muted">{format!("And {} more, with fewer calls.", count((d.vendors.len() - MAX_VENDORS) as i64, "vendor"))}</p>
                    })}
                    <p class="muted">"Durations of calls sent to the vendor, Graft's own work included; errors are error answers and calls that timed out or could not connect. Percentiles are estimated from duration buckets (1-2-5 steps from 1 ms to 2 minutes), never above the longest."</p>
                }.into_any()
            }}
        </section>
        <section class="card" id="approvals-waiting">
            <h2>"Approvals waiting"</h2>
            {match d.oldest_pending_at {
                Some(at) if d.pending > 0 => view! {
                    <p><a href="/approvals">{if d.pending == 1 { "1 approval waits".to_string() } else { format!("{} approvals wait", grouped(d.pending)) }}</a>"; the oldest was asked for "<When at now/>"."</p>
                }.into_any(),
                _ => view! { <p class="muted">"No approval waits for a decision."</p> }.into_any(),
            }}
        </section>
        <section class="card" id="changes-chart">
            <h2>"Working-set changes by cause"</h2>
            <StackedBars buckets=d.changes.clone() series=causes from=d.from bucket_ms=d.bucket_ms unit=if day { "changes per 15 minutes" } else { "changes per day" } what="working-set changes"/>
        </section>
    }
}

/// A duration for people: "850 ms", "1.2 s", "14 s".
fn ms(v: f64) -> String {
    if v < 1_000.0 {
        format!("{} ms", v.round() as i64)
    } else if v < 10_000.0 {
        format!("{:.1} s", v / 1_000.0)
    } else {
        format!("{} s", (v / 1_000.0).round() as i64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_read_in_the_unit_people_expect() {
        assert_eq!(super::ms(3.4), "3 ms");
        assert_eq!(super::ms(999.0), "999 ms");
        assert_eq!(super::ms(1_250.0), "1.2 s");
        assert_eq!(super::ms(14_400.0), "14 s");
    }
}
