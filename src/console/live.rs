//! Pages that follow changes (issue 28.3), in the browser only: the app holds one
//! `EventSource` on `GET /console/events` per tab, opened by the first signed-in page
//! and kept across client-side navigation; each event bumps a counter per topic. A page
//! puts [`changes`] of its topics in its resource's source, so it loads its data again
//! when one of them changes. On the server, and without JavaScript, the counters never
//! move: a reload shows the same.
//!
//! A page's own counters wait while a person edits one of its forms (a field focused or
//! changed from what the page rendered), so a reload never takes away what they typed;
//! the nav's badge follows at once.
//!
//! A hidden tab closes its stream (a browser opens at most six HTTP/1.1 connections to
//! one host, and each open stream holds one) and opens it again when shown. Each
//! `ready` after the first (the stream came back: shown again, the server's five
//! minutes ended, the network returned) bumps every topic, since changes may have been
//! missed meanwhile. A stream the server refused (signed out, at its cap) is tried
//! again after 15 s while the tab is shown.

use leptos::prelude::*;

/// Topic names as the server sends them ([`crate::service::live::NAMES`] on the
/// server); a topic's index here is its counter's.
pub const TOPICS: [&str; 5] = ["approvals", "agents", "calls", "toolbox", "vendors"];

/// The counters of one tab: `heard` moves when the server says so, `shown` follows it
/// once no form of the page is being edited.
#[derive(Clone, Copy)]
pub struct Live {
    heard: RwSignal<[u32; 5]>,
    shown: RwSignal<[u32; 5]>,
}

/// Provides the tab's counters (the app root calls it once).
pub fn provide_live() {
    provide_context(Live {
        heard: RwSignal::new([0; 5]),
        shown: RwSignal::new([0; 5]),
    });
}

/// The index of topic `name`.
fn index(name: &str) -> Option<usize> {
    TOPICS.iter().position(|t| *t == name)
}

/// A signal that moves when one of `topics` changed and the page may reload (no form
/// of it is being edited); 0 on the server. For a resource's source.
pub fn changes(topics: &'static [&'static str]) -> Signal<u32> {
    let live = use_context::<Live>();
    Signal::derive(move || {
        let Some(live) = live else { return 0 };
        let shown = live.shown.get();
        topics
            .iter()
            .filter_map(|t| index(t))
            .map(|i| shown[i])
            .fold(0u32, u32::wrapping_add)
    })
}

/// The same for the nav (it has no form): moves as soon as the server says so.
pub fn heard(topic: &'static str) -> Signal<u32> {
    let live = use_context::<Live>();
    Signal::derive(move || match (live, index(topic)) {
        (Some(live), Some(i)) => live.heard.get()[i],
        _ => 0,
    })
}

/// Opens the tab's stream if it is not open (a signed-in page calls it once mounted);
/// nothing on the server.
pub fn follow() {
    #[cfg(feature = "hydrate")]
    if let Some(live) = use_context::<Live>() {
        browser::follow(live);
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use super::{index, Live};
    use leptos::prelude::*;
    use std::cell::RefCell;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;

    thread_local! {
        /// The tab's stream, kept for the life of the tab.
        static SOURCE: RefCell<Option<web_sys::EventSource>> = const { RefCell::new(None) };
        /// A check of the page's forms is scheduled.
        static WAITING: RefCell<bool> = const { RefCell::new(false) };
        /// Changes may have been missed (a stream was ready before, or none could be
        /// opened when the page asked): the next `ready` reloads every topic.
        static MISSED: RefCell<bool> = const { RefCell::new(false) };
        /// The tab's visibility is watched.
        static WATCHING: RefCell<bool> = const { RefCell::new(false) };
    }

    /// Closes the stream when the tab is hidden and opens it again when it is shown.
    fn watch_visibility(live: Live) {
        if WATCHING.with(|w| std::mem::replace(&mut *w.borrow_mut(), true)) {
            return;
        }
        let on_change = Closure::<dyn FnMut()>::new(move || {
            if document().hidden() {
                if let Some(es) = SOURCE.with(|s| s.borrow_mut().take()) {
                    es.close();
                }
            } else {
                follow(live);
            }
        });
        let _ = document().add_event_listener_with_callback(
            "visibilitychange",
            on_change.as_ref().unchecked_ref(),
        );
        on_change.forget();
    }

    /// Opens the stream unless one is open or connecting (`CLOSED` is 2: the server
    /// refused it, e.g. signed out, and a later page opens a new one).
    pub fn follow(live: Live) {
        watch_visibility(live);
        let open = SOURCE.with(|s| s.borrow().as_ref().is_some_and(|es| es.ready_state() != 2));
        if open {
            return;
        }
        if document().hidden() {
            MISSED.with(|m| *m.borrow_mut() = true);
            return;
        }
        let Ok(es) = web_sys::EventSource::new("/console/events") else {
            return;
        };
        // a stream back after a gap: what changed meanwhile was not heard, so every
        // page reloads its data once
        let on_ready = Closure::<dyn FnMut()>::new(move || {
            // the page says it follows changes now (`body[data-live=ready]`; tests wait
            // for it)
            if let Some(body) = document().body() {
                let _ = body.set_attribute("data-live", "ready");
            }
            if MISSED.with(|m| std::mem::replace(&mut *m.borrow_mut(), true)) {
                live.heard
                    .update(|h| h.iter_mut().for_each(|c| *c = c.wrapping_add(1)));
                settle(live);
            }
        });
        let _ = es.add_event_listener_with_callback("ready", on_ready.as_ref().unchecked_ref());
        on_ready.forget();
        // refused (2: CLOSED; the browser gives up): try again in a while
        let on_error = Closure::<dyn FnMut()>::new(move || {
            let closed =
                SOURCE.with(|s| s.borrow().as_ref().is_some_and(|es| es.ready_state() == 2));
            if closed {
                MISSED.with(|m| *m.borrow_mut() = true);
                set_timeout(move || follow(live), std::time::Duration::from_secs(15));
            }
        });
        es.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        let on_message =
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                let Some(data) = e.data().as_string() else {
                    return;
                };
                let mut changed = false;
                live.heard.update(|h| {
                    for i in data.split(',').filter_map(index) {
                        h[i] = h[i].wrapping_add(1);
                        changed = true;
                    }
                });
                if changed {
                    settle(live);
                }
            });
        es.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        SOURCE.with(|s| *s.borrow_mut() = Some(es));
    }

    /// Shows what was heard unless a form of the page is being edited; then looks again
    /// in a second.
    fn settle(live: Live) {
        if editing() {
            let scheduled = WAITING.with(|w| std::mem::replace(&mut *w.borrow_mut(), true));
            if !scheduled {
                set_timeout(
                    move || {
                        WAITING.with(|w| *w.borrow_mut() = false);
                        settle(live);
                    },
                    std::time::Duration::from_secs(1),
                );
            }
            return;
        }
        let heard = live.heard.get_untracked();
        if live.shown.get_untracked() != heard {
            live.shown.set(heard);
        }
    }

    /// Whether a field in the page's `<main>` has the focus or differs from what the
    /// page rendered (a value typed, a box ticked, an option chosen).
    fn editing() -> bool {
        let doc = document();
        if let Some(active) = doc.active_element() {
            let tag = active.tag_name();
            if matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT")
                && active.closest("main").ok().flatten().is_some()
            {
                return true;
            }
        }
        let Ok(fields) = doc.query_selector_all("main input, main textarea, main select") else {
            return false;
        };
        (0..fields.length())
            .filter_map(|i| fields.item(i))
            .any(|node| {
                if let Some(i) = node.dyn_ref::<web_sys::HtmlInputElement>() {
                    return match i.type_().as_str() {
                        "hidden" | "submit" | "button" => false,
                        "checkbox" | "radio" => i.checked() != i.default_checked(),
                        _ => i.value() != i.default_value(),
                    };
                }
                if let Some(t) = node.dyn_ref::<web_sys::HtmlTextAreaElement>() {
                    return t.default_value().is_ok_and(|d| d != t.value());
                }
                if let Some(s) = node.dyn_ref::<web_sys::HtmlSelectElement>() {
                    // what the page rendered: the option marked selected, else the first
                    // (a select without a `selected` option shows its first)
                    let options = s.options();
                    let all: Vec<web_sys::HtmlOptionElement> = (0..options.length())
                        .filter_map(|i| options.item(i))
                        .filter_map(|o| o.dyn_into::<web_sys::HtmlOptionElement>().ok())
                        .collect();
                    let rendered = all
                        .iter()
                        .find(|o| o.default_selected())
                        .or(all.first())
                        .map(|o| o.value())
                        .unwrap_or_default();
                    return s.value() != rendered;
                }
                false
            })
    }
}
