//! Pieces the console pages share: the page frame with its navigation, times shown
//! relative with the exact UTC time on hover, errors at a field, and the working-set
//! chart (a server-rendered SVG).

use super::server_fns::{nav, ConsoleError, Logout, NavData};
pub use super::words::count;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// The frame of a signed-in page: navigation (with the count of pending approvals),
/// sign-out, the banner asking to change a first-start password, then the page.
/// `refresh`: a signal that changes when the page did something that may change those
/// (an approval decided, a password changed), so the hydrated frame loads them again.
#[component]
pub fn Frame(
    #[prop(into)] title: String,
    #[prop(optional, into)] refresh: Option<Signal<usize>>,
    children: Children,
) -> impl IntoView {
    let logout = ServerAction::<Logout>::new();
    // the section this page belongs to, marked in the nav (aria-current)
    let path = leptos_router::hooks::use_location().pathname;
    let here = move |section: &'static str| {
        let p = path.get();
        (p == section || p.starts_with(&format!("{section}/"))).then_some("page")
    };
    // the badge follows approvals as they are asked and decided (issue 28.3)
    let approvals_heard = super::live::heard("approvals");
    let nav_data = Resource::new(
        move || (refresh.map(|s| s.get()), approvals_heard.get()),
        |_| nav(),
    );
    // once in the browser, this tab follows changes
    Effect::new(|_| super::live::follow());
    // the count and the banner, once loaded (nothing while loading or on an error: the
    // page itself says what went wrong)
    let nav_view = move |show: fn(NavData) -> AnyView| {
        view! {
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    nav_data.await.ok().map(show)
                })}
            </Suspense>
        }
    };
    view! {
        <Title text=format!("{title} · Graft")/>
        <header class="top">
            <nav aria-label="Console">
                <a href="/" class="brand">"Graft"</a>
                <a href="/agents" aria-current=move || here("/agents")>"Agents"</a>
                <a href="/tools" aria-current=move || here("/tools")>"Toolbox"</a>
                <a href="/vendors" aria-current=move || here("/vendors")>"Vendors"</a>
                <a href="/starters" aria-current=move || here("/starters")>"Starter templates"</a>
                <a href="/approvals" aria-current=move || here("/approvals")>"Approvals"{nav_view(|d| {
                    (d.pending > 0)
                        .then(|| view! { " "<span class="count" title="waiting for a decision">{d.pending}</span> })
                        .into_any()
                })}</a>
                <a href="/activity" aria-current=move || here("/activity")>"Activity"</a>
                <a href="/calls" aria-current=move || here("/calls")>"Calls"</a>
                <a href="/audit" aria-current=move || here("/audit")>"Audit"</a>
                <span class="spacer"></span>
                <a href="/settings" aria-current=move || here("/settings")>"Settings"</a>
                <a href="/account" aria-current=move || here("/account")>"Account"</a>
                <ActionForm action=logout attr:class="inline">
                    <button type="submit" class="link">"Sign out"</button>
                </ActionForm>
            </nav>
        </header>
        {nav_view(|d| {
            d.password_generated
                .then(|| view! {
                    <p class="warning banner" role="note">
                        "You sign in with the password Graft generated at first start. "
                        <a href="/account">"Change it on the Account page."</a>
                    </p>
                })
                .into_any()
        })}
        <main>{children()}</main>
    }
}

/// `ms` since the epoch as `2026-11-30 12:01:02 UTC`.
pub fn utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

/// How long ago `at` was from `now` (both ms), in words: "just now", "5 minutes ago",
/// "3 days ago", or "in 4 minutes" for a time ahead.
pub fn relative(now: i64, at: i64) -> String {
    let secs = (now - at) / 1000;
    let (n, ahead) = if secs < 0 {
        (-secs, true)
    } else {
        (secs, false)
    };
    if n < 45 {
        return "just now".into();
    }
    let (value, unit) = match n {
        n if n < 3_600 => ((n + 30) / 60, "minute"),
        n if n < 86_400 => ((n + 1_800) / 3_600, "hour"),
        n if n < 30 * 86_400 => ((n + 43_200) / 86_400, "day"),
        n if n < 365 * 86_400 => (n / (30 * 86_400), "month"),
        n => (n / (365 * 86_400), "year"),
    };
    let amount = count(value.max(1), unit);
    if ahead {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// A time shown relative to the server's `now`, with the exact UTC time on hover.
#[component]
pub fn When(at: i64, now: i64) -> impl IntoView {
    let iso = chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.to_rfc3339())
        .unwrap_or_default();
    view! { <time datetime=iso title=utc(at)>{relative(now, at)}</time> }
}

/// The error of `field`, shown next to its input.
#[component]
pub fn FieldError(
    #[prop(into)] err: Signal<Option<ConsoleError>>,
    field: &'static str,
) -> impl IntoView {
    move || {
        err.get()
            .and_then(|e| e.at(field))
            .map(|m| view! { <span class="field-error" role="alert" data-field=field>{m}</span> })
    }
}

/// A labelled text input of a form and, below it, the error of the field of that name
/// (see [`FieldError`]): `<label>LABEL<input name=NAME placeholder=…/></label>`.
#[component]
pub fn TextField(
    #[prop(into)] err: Signal<Option<ConsoleError>>,
    label: &'static str,
    name: &'static str,
    placeholder: &'static str,
) -> impl IntoView {
    view! {
        <label>{label}<input name=name placeholder=placeholder/></label>
        <FieldError err field=name/>
    }
}

/// An error that is not about one field, above the form.
#[component]
pub fn FormError(#[prop(into)] err: Signal<Option<ConsoleError>>) -> impl IntoView {
    move || {
        match err.get() {
        Some(ConsoleError::Field { .. }) => Some(
            view! { <p class="error" role="alert">"Nothing was saved: fix the field marked below."</p> }
                .into_any(),
        ),
        Some(e) => Some(view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any()),
        None => None,
    }
    }
}

/// A destructive action behind a second step that works without JavaScript (issue 14.5):
/// a `<details>` whose summary, styled as destructive, names the action (`label` and an
/// ellipsis); opening it shows `children` — what the action does and the form whose
/// button does it, which sends `confirm=yes` (the server refuses the action without it).
#[component]
pub fn Confirm(label: String, children: Children) -> impl IntoView {
    view! {
        <details class="confirm">
            <summary>{label}"…"</summary>
            <div class="confirm-body">{children()}</div>
        </details>
    }
}

/// A page-level error (a failed load), with a way back to sign-in when signed out.
#[component]
pub fn LoadError(err: ConsoleError) -> impl IntoView {
    let signed_out = err == ConsoleError::SignedOut;
    // a page about something that is not there answers 404 (when rendered on the server)
    #[cfg(feature = "ssr")]
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(match &err {
            ConsoleError::Refused(_) => http::StatusCode::NOT_FOUND,
            other => other.status(),
        });
    }
    view! {
        <p class="error" role="alert">{err.to_string()}</p>
        {signed_out.then(|| view! { <p><a href="/login">"Sign in"</a></p> })}
    }
}

/// A part of a page that waits for `data`: `waiting` until it is there, then `show` of its
/// value, or the error ([`LoadError`]: 404 for something not there, a way to sign in).
/// When `data` loads again (a live change, issue 28.3), what is shown stays until the new
/// value is there (a `Transition`), so a page never blinks to `waiting`.
pub fn loaded<T, V>(
    data: Resource<Result<T, ConsoleError>>,
    waiting: &'static str,
    show: impl Fn(T) -> V + Clone + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    V: IntoView + 'static,
{
    view! {
        <Transition fallback=move || view! { <p>{waiting}</p> }>
            {move || {
                let show = show.clone();
                Suspend::new(async move {
                    match data.await {
                        Ok(value) => show(value).into_any(),
                        Err(e) => view! { <LoadError err=e/> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// A working-set measure over time as a step chart (SVG, 600 × 140), from `(ms, value)`
/// points, up to `now`, with the limit (the cap; the token budget, issue 29.1) as a
/// dashed line when it is set and in range. `what` names the measure ("Working-set
/// size", the default), `limit_label` the limit ("cap").
#[component]
pub fn SizeChart(
    sizes: Vec<(i64, i64)>,
    now: i64,
    #[prop(into)] cap: Option<i64>,
    #[prop(default = "Working-set size")] what: &'static str,
    #[prop(default = "cap")] limit_label: &'static str,
) -> impl IntoView {
    let cap = cap.unwrap_or(i64::MAX);
    if sizes.is_empty() {
        return view! { <p class="muted">"No promotions or demotions yet."</p> }.into_any();
    }
    let (w, h, left, top, bottom) = (600.0_f64, 140.0_f64, 36.0_f64, 10.0_f64, 22.0_f64);
    let t0 = sizes[0].0;
    let t1 = now.max(sizes[sizes.len() - 1].0 + 1);
    let top_value = sizes.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    let ymax = if cap <= top_value * 2 {
        top_value.max(cap)
    } else {
        top_value
    } as f64;
    let x = |t: i64| left + (t - t0) as f64 / (t1 - t0).max(1) as f64 * (w - left - 8.0);
    let y = |s: i64| top + (1.0 - s as f64 / ymax) * (h - top - bottom);
    let mut d = format!("M{:.1},{:.1}", x(t0), y(0));
    let mut prev = 0;
    for &(t, s) in &sizes {
        d.push_str(&format!(
            " L{:.1},{:.1} L{:.1},{:.1}",
            x(t),
            y(prev),
            x(t),
            y(s)
        ));
        prev = s;
    }
    d.push_str(&format!(" L{:.1},{:.1}", x(t1), y(prev)));
    let cap_line = (cap as f64 <= ymax).then(|| {
        let cy = y(cap);
        view! {
            <line x1=left x2=w - 8.0 y1=cy y2=cy class="cap"/>
            <text x=w - 10.0 y=cy - 3.0 text-anchor="end" class="label">{format!("{limit_label} {}", crate::console::words::grouped(cap))}</text>
        }
    });
    let summary = format!(
        "{what} over time: now {}, highest {}, from {} to {}",
        crate::console::words::grouped(prev),
        crate::console::words::grouped(top_value),
        utc(t0),
        utc(t1)
    );
    view! {
        <svg class="chart" viewBox=format!("0 0 {w} {h}") role="img" aria-label=summary.clone()>
            <title>{summary.clone()}</title>
            <line x1=left x2=left y1=top y2=h - bottom class="axis"/>
            <line x1=left x2=w - 8.0 y1=h - bottom y2=h - bottom class="axis"/>
            <text x=left - 4.0 y=y(ymax as i64) + 4.0 text-anchor="end" class="label">{short_number(ymax as i64)}</text>
            <text x=left - 4.0 y=h - bottom + 4.0 text-anchor="end" class="label">"0"</text>
            <text x=left y=h - 6.0 class="label">{utc(t0)[..10].to_string()}</text>
            <text x=w - 8.0 y=h - 6.0 text-anchor="end" class="label">"now"</text>
            {cap_line}
            <path d=d class="size"/>
        </svg>
    }
    .into_any()
}

/// Counts per time bucket as stacked bars (SVG, 600 × 160): `buckets[i][k]` is series
/// `k`'s count in bucket `i`, which starts at `from + i × bucket_ms`; `series` names each
/// series in words (its colour is class `s{k}`). Heights are counts divided by `per`
/// (15 for a rate per minute of 15-minute buckets), `unit` names what the axis counts.
/// Each bar's `<title>` gives its time and counts; the legend lists each series' total.
#[component]
pub fn StackedBars(
    buckets: Vec<Vec<i64>>,
    series: Vec<String>,
    from: i64,
    bucket_ms: i64,
    #[prop(default = 1)] per: i64,
    unit: &'static str,
    what: &'static str,
) -> impl IntoView {
    // a chart of one series named as what it counts reads "1 call", "9 calls"
    let single = series.len() == 1 && series[0] == what;
    let amount = {
        let series = series.clone();
        move |c: i64, k: usize| {
            if single {
                crate::console::words::count(c, what.strip_suffix('s').unwrap_or(what))
            } else {
                format!(
                    "{} {}",
                    crate::console::words::grouped(c),
                    series.get(k).cloned().unwrap_or_default()
                )
            }
        }
    };
    let totals: Vec<i64> = (0..series.len())
        .map(|k| buckets.iter().map(|b| b.get(k).copied().unwrap_or(0)).sum())
        .collect();
    if totals.iter().all(|t| *t == 0) {
        return view! { <p class="muted">{format!("No {what} in this time.")}</p> }.into_any();
    }
    let (w, h, left, top, bottom) = (600.0_f64, 160.0_f64, 40.0_f64, 10.0_f64, 22.0_f64);
    let per = per.max(1) as f64;
    let top_value = buckets
        .iter()
        .map(|b| b.iter().sum::<i64>())
        .max()
        .unwrap_or(0) as f64
        / per;
    let ymax = if top_value > 0.0 { top_value } else { 1.0 };
    let n = buckets.len().max(1) as f64;
    let slot = (w - left - 8.0) / n;
    let y = |v: f64| top + (1.0 - v / ymax) * (h - top - bottom);
    let label = |v: f64| {
        if v >= 10.0 || v.fract() == 0.0 {
            short_number(v.round() as i64)
        } else {
            format!("{v:.1}")
        }
    };
    let day = bucket_ms >= 24 * 3_600_000;
    let when = move |t: i64| {
        let s = utc(t);
        if day {
            s[..10].to_string()
        } else {
            s[..16].to_string() + " UTC"
        }
    };
    let bars = buckets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = left + i as f64 * slot;
            let mut base = 0.0;
            let mut words = Vec::new();
            let rects = b
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(k, c)| {
                    let v = *c as f64 / per;
                    let (y0, y1) = (y(base), y(base + v));
                    base += v;
                    words.push(amount(*c, k));
                    view! { <rect x=format!("{:.1}", x + 0.5) y=format!("{y1:.1}") width=format!("{:.1}", (slot - 1.0).max(1.0)) height=format!("{:.1}", (y0 - y1).max(0.5)) class=format!("s{k}")/> }
                })
                .collect_view();
            let title = if words.is_empty() {
                format!("{}: none", when(from + i as i64 * bucket_ms))
            } else {
                format!("{}: {}", when(from + i as i64 * bucket_ms), words.join(", "))
            };
            view! { <g><title>{title}</title>{rects}</g> }
        })
        .collect_view();
    // counts, not the axis' rate: the unit is not in the summary
    let summary = format!(
        "{what} from {} to now: {}",
        when(from),
        totals
            .iter()
            .enumerate()
            .filter(|(_, t)| **t > 0)
            .map(|(k, t)| amount(*t, k))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // the numbers again as a table, for screen readers, keyboards and touch screens
    // (a bar's <title> is reached by a mouse only)
    let rows = buckets
        .iter()
        .enumerate()
        .filter(|(_, b)| b.iter().any(|c| *c > 0))
        .map(|(i, b)| {
            let cells = (0..series.len())
                .map(|k| view! { <td class="num">{crate::console::words::grouped(b.get(k).copied().unwrap_or(0))}</td> })
                .collect_view();
            view! { <tr><th scope="row">{when(from + i as i64 * bucket_ms)}</th>{cells}</tr> }
        })
        .collect_view();
    let heads = series
        .iter()
        .map(|s| view! { <th scope="col">{s.clone()}</th> })
        .collect_view();
    let legend = series
        .iter()
        .zip(&totals)
        .enumerate()
        .filter(|(_, (_, t))| **t > 0)
        .map(|(k, (s, t))| view! {
            <li><span class=format!("swatch s{k}") aria-hidden="true"></span>{s.clone()}": "{crate::console::words::grouped(*t)}</li>
        })
        .collect_view();
    view! {
        <div class="chart-scroll"><svg class="chart" viewBox=format!("0 0 {w} {h}") role="img" aria-label=summary.clone()>
            <title>{summary.clone()}</title>
            <line x1=left x2=left y1=top y2=h - bottom class="axis"/>
            <line x1=left x2=w - 8.0 y1=h - bottom y2=h - bottom class="axis"/>
            <text x=left - 4.0 y=top + 4.0 text-anchor="end" class="label">{label(ymax)}</text>
            <text x=left - 4.0 y=h - bottom + 4.0 text-anchor="end" class="label">"0"</text>
            <text x=left y=h - 6.0 class="label">{when(from)}</text>
            <text x=w - 8.0 y=h - 6.0 text-anchor="end" class="label">"now"</text>
            {bars}
        </svg></div>
        <p class="muted chart-unit">{unit}</p>
        <ul class="legend">{legend}</ul>
        <details class="chart-table">
            <summary>{format!("The {what} as a table")}</summary>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">{if day { "Day (UTC)" } else { "From (UTC)" }}</th>{heads}</tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        </details>
    }
    .into_any()
}

/// An axis label: "950", "12k", "1.2M".
fn short_number(n: i64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 10_000 => format!("{}k", n / 1000),
        n if n >= 1_000 => format!("{:.1}k", n as f64 / 1e3),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_stay_short() {
        assert_eq!(short_number(950), "950");
        assert_eq!(short_number(1_250), "1.2k");
        assert_eq!(short_number(48_000), "48k");
        assert_eq!(short_number(2_500_000), "2.5M");
    }

    #[test]
    fn relative_times_read_as_people_say_them() {
        let now = 1_800_000_000_000;
        assert_eq!(relative(now, now - 10_000), "just now");
        assert_eq!(relative(now, now - 60_000), "1 minute ago");
        assert_eq!(relative(now, now - 5 * 60_000), "5 minutes ago");
        assert_eq!(relative(now, now - 3 * 86_400_000), "3 days ago");
        assert_eq!(relative(now, now - 400 * 86_400_000), "1 year ago");
        assert_eq!(relative(now, now + 4 * 60_000), "in 4 minutes");
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    }
}

/// A page's error signal from an action's last value.
pub(crate) fn error_of<S>(action: ServerAction<S>) -> Signal<Option<ConsoleError>>
where
    S: leptos::server_fn::ServerFn<Error = ConsoleError> + Clone + Send + Sync + 'static,
    S::Output: Clone + Send + Sync + 'static,
{
    Signal::derive(move || action.value().get().and_then(|r| r.err()))
}

/// A server function that answers nothing on success: what [`saved`], [`clear_on_save`]
/// and [`saves`] watch.
pub(crate) trait SavingFn:
    leptos::server_fn::ServerFn<Output = (), Error = ConsoleError> + Clone + Send + Sync + 'static
{
}

impl<S> SavingFn for S where
    S: leptos::server_fn::ServerFn<Output = (), Error = ConsoleError>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Whether `action` saved: its last value is Ok (hydrated), or the page was reached after
/// a plain form post that saved `what` (`?saved=what`).
pub(crate) fn saved<S>(action: ServerAction<S>, what: &'static str) -> Signal<bool>
where
    S: SavingFn,
{
    let query = use_query_map();
    let posted = Memo::new(move |_| query.read().get("saved").as_deref() == Some(what));
    Signal::derive(move || matches!(action.value().get(), Some(Ok(()))) || posted.get())
}

/// A form that empties itself once `action` saved (issue 14.5), so a password or a
/// secret typed in it is not left in the page: the returned `NodeRef` goes on the
/// `ActionForm`. Hydrated, the form is reset to its defaults; without JavaScript the page
/// after the post renders it afresh, empty.
pub(crate) fn clear_on_save<S>(action: ServerAction<S>) -> NodeRef<leptos::html::Form>
where
    S: SavingFn,
{
    let form = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(()))) {
            if let Some(f) = form.get_untracked() {
                f.reset();
            }
        }
    });
    form
}

/// How many times `action` saved (hydrated): a page's data reloads on this rather than
/// on every submission, so a refused form keeps what the person typed.
pub(crate) fn saves<S>(action: ServerAction<S>) -> ReadSignal<usize>
where
    S: SavingFn,
{
    let (n, set_n) = signal(0usize);
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(()))) {
            set_n.update(|n| *n += 1);
        }
    });
    n
}

/// A data table in its scrolling wrapper (`div.table-wrap`; on a phone the stylesheet
/// stacks each row's cells under their `data-label`): `head` is the header row's cells
/// (`<th>`s), `children` the body's rows (`<tr>`s), `class` the table's own class.
#[component]
pub(crate) fn DataTable(
    #[prop(optional)] class: Option<&'static str>,
    head: AnyView,
    children: Children,
) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class=class>
                <thead><tr>{head}</tr></thead>
                <tbody>{children()}</tbody>
            </table>
        </div>
    }
}

/// Links to the other pages of a search's hits (issue 28.12), shown when there are
/// more than one: `href(n)` is page `n`'s address (plain links: no JavaScript needed).
pub(crate) fn hits_pager(page: i64, pages: i64, href: impl Fn(i64) -> String) -> impl IntoView {
    (pages > 1).then(|| {
        view! {
            <nav class="pager" aria-label="Search result pages">
                {(page > 1).then(|| view! { <a href=href(page - 1) rel="prev">"Previous"</a> })}
                <span>{format!("Page {page} of {pages}")}</span>
                {(page < pages).then(|| view! { <a href=href(page + 1) rel="next">"Next"</a> })}
            </nav>
        }
    })
}

/// "Matches 51–100 of 230, best first": which hits of a search a page shows.
pub(crate) fn hits_span(page: i64, shown: usize, total: usize) -> String {
    let first = (page.max(1) - 1) * crate::console::server_fns::SEARCH_PER_PAGE + 1;
    let last = first + shown as i64 - 1;
    if first == 1 && shown == total {
        let noun = if total == 1 { "match" } else { "matches" };
        format!("{total} {noun}, best first")
    } else {
        format!("Matches {first}–{last} of {total}, best first")
    }
}

/// One client's configuration (issue 28.6): where it goes, the shell line that sets its
/// token variable (first: Claude Code's command reads it) as a block of its own, then
/// the configuration; each block with its
/// own Copy button when `copy` (hydrated pages only).
pub(crate) fn snippet_view(s: crate::console::snippets::Snippet, copy: bool) -> AnyView {
    let block = move |text: String, what: &'static str, attr: Option<String>| {
        let is_shell = attr.is_none();
        view! {
            <div class="copyable">
                <pre data-client=attr data-shell=is_shell.then_some("")><code>{text.clone()}</code></pre>
                {copy.then(|| view! { <CopyButton text what/> })}
            </div>
        }
    };
    view! {
        <h3>{s.client.clone()}</h3>
        <p class="muted">{s.place.clone()}</p>
        {s.shell.clone().map(|line| view! {
            <p class="muted">"The token, in the shell that starts the client (or its profile):"</p>
            {block(line, "the shell line", None)}
        })}
        {block(s.config.clone(), "the configuration", Some(s.client.clone()))}
    }
    .into_any()
}

/// A button that copies `text` to the clipboard (the Clipboard API), shown once the page
/// is hydrated; without JavaScript the text beside it is selectable as a whole.
#[component]
pub(crate) fn CopyButton(text: String, what: &'static str) -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let (copied, set_copied) = signal(false);
    let text = StoredValue::new(text);
    move || {
        hydrated.get().then(|| {
            view! {
                <button type="button" class="copy" aria-label=format!("Copy {what}")
                    on:click=move |_| {
                        copy_to_clipboard(&text.get_value());
                        set_copied.set(true);
                    }>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            }
        })
    }
}

#[cfg(feature = "hydrate")]
pub(crate) fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        // the promise settles on its own; a refusal leaves the selectable text
        let _ = w.navigator().clipboard().write_text(text);
    }
}

#[cfg(not(feature = "hydrate"))]
pub(crate) fn copy_to_clipboard(_: &str) {}

/// What a call does (`reads`, `writes`, `deletes`) as a badge.
pub(crate) fn does_badge(does: &str) -> impl IntoView {
    view! { <span class=format!("badge {does}")>{does.to_string()}</span> }
}

/// A filtered page's chosen filters (the Calls and Audit pages): the non-empty query
/// values of `keys`, as `(key, value)`, which its paging links carry on.
pub(crate) fn chosen_filters(get: impl Fn(&str) -> String, keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| (k.to_string(), get(k)))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// The value `filters` ([`chosen_filters`]) holds for `key`, else empty.
pub(crate) fn filter_value(filters: &[(String, String)], key: &str) -> String {
    filters
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}
