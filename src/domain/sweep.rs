//! The rule (SPEC §5 and the seed page's "The rule"): the sweep's pure planning.
//!
//! For each agent, in this order, against `now`:
//! 1. Idle: an entry whose idle clock `max(promoted_at, last_used_at)` is older than
//!    `now - idle window` is demoted with cause `idle` (a tool never called since its
//!    promotion counts from the promotion).
//! 2. Cap: when more entries remain than the cap, the excess is demoted from the entries
//!    not called since their promotion (`last_used_at` none or before `promoted_at`),
//!    oldest promotion first, cause `cap`. Entries called since their promotion are never
//!    demoted by the cap, so a set may stay above its cap.
//! 3. Budget (issue 29.2): when the entries left cost more tokens than the agent's token
//!    budget, more are demoted from the same candidates in the same order, cause
//!    `budget`, until the set fits; a set of called entries may stay above its budget.
//!
//! Times are milliseconds since the Unix epoch.

use super::Cause;

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// One working-set entry with its usage, as the sweep reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepEntry {
    pub tool_id: i64,
    /// When it was promoted (ms).
    pub promoted_at: i64,
    /// When the agent last called it (ms), if ever.
    pub last_used_at: Option<i64>,
    /// What its served definition costs, in tokens (0 while not counted).
    pub tokens: i64,
}

impl SweepEntry {
    /// The idle clock: `max(promoted_at, last_used_at)`.
    pub fn idle_clock(&self) -> i64 {
        self.last_used_at
            .map_or(self.promoted_at, |u| u.max(self.promoted_at))
    }

    /// Whether the agent called the tool since its promotion.
    pub fn called_since_promotion(&self) -> bool {
        self.last_used_at.is_some_and(|u| u >= self.promoted_at)
    }
}

/// An agent's settings the rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentRule {
    /// Most entries the set should hold (1..=500).
    pub cap: i64,
    /// Days an entry may go unused (1..=3650).
    pub idle_window_days: i64,
    /// Most tokens the set's definitions should cost (1,000..=500,000), if any.
    pub token_budget: Option<i64>,
}

/// One planned demotion, with the row values it was planned on (so the write can
/// refuse to act on stale data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedDemotion {
    /// The entry as planned on.
    pub entry: SweepEntry,
    /// `idle`, `cap` or `budget`.
    pub cause: Cause,
}

/// Plans one agent's sweep: idle demotions first, then cap demotions, then budget
/// demotions, in that order.
pub fn plan_agent(rule: AgentRule, entries: &[SweepEntry], now: i64) -> Vec<PlannedDemotion> {
    let horizon = now - rule.idle_window_days * DAY_MS;
    let mut out = Vec::new();
    let mut remaining: Vec<&SweepEntry> = Vec::with_capacity(entries.len());
    for e in entries {
        if e.idle_clock() < horizon {
            out.push(PlannedDemotion {
                entry: *e,
                cause: Cause::Idle,
            });
        } else {
            remaining.push(e);
        }
    }
    // the candidates of the cap and the budget: never called since their promotion,
    // oldest promotion first
    let mut candidates: Vec<&SweepEntry> = remaining
        .iter()
        .copied()
        .filter(|e| !e.called_since_promotion())
        .collect();
    candidates.sort_by_key(|e| (e.promoted_at, e.tool_id));
    let mut candidates = candidates.into_iter();
    let excess = remaining.len() as i64 - rule.cap;
    for e in candidates.by_ref().take(excess.max(0) as usize) {
        out.push(PlannedDemotion {
            entry: *e,
            cause: Cause::Cap,
        });
    }
    if let Some(budget) = rule.token_budget {
        let mut tokens: i64 = remaining.iter().map(|e| e.tokens).sum::<i64>()
            - out
                .iter()
                .filter(|d| d.cause == Cause::Cap)
                .map(|d| d.entry.tokens)
                .sum::<i64>();
        for e in candidates {
            if tokens <= budget {
                break;
            }
            tokens -= e.tokens;
            out.push(PlannedDemotion {
                entry: *e,
                cause: Cause::Budget,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000 * DAY_MS;

    fn e(tool_id: i64, promoted_days_ago: i64, used_days_ago: Option<i64>) -> SweepEntry {
        SweepEntry {
            tool_id,
            promoted_at: NOW - promoted_days_ago * DAY_MS,
            last_used_at: used_days_ago.map(|d| NOW - d * DAY_MS),
            tokens: 100 + tool_id,
        }
    }

    fn rule(cap: i64, window: i64) -> AgentRule {
        AgentRule {
            cap,
            idle_window_days: window,
            token_budget: None,
        }
    }

    #[test]
    fn the_budget_trims_never_called_entries_oldest_first_and_spares_used_ones() {
        // six entries of 1,000 tokens each (tokens = 100 + id, ids 900..905), budget
        // 3,500: cap 20 demotes nothing; 1 and 3 were called since their promotion
        let entries = [
            e(900, 10, Some(1)),
            e(901, 9, None),
            e(902, 8, None),
            e(903, 7, Some(2)),
            e(904, 6, None),
            e(905, 5, None),
        ];
        let mut r = rule(20, 21);
        r.token_budget = Some(3_500);
        // total 6,015; demote 901 (5,014 left), 902 (4,012), 904 (3,008): fits
        assert_eq!(
            demoted(&plan_agent(r, &entries, NOW)),
            vec![
                (901, Cause::Budget),
                (902, Cause::Budget),
                (904, Cause::Budget)
            ]
        );
        // a budget only called entries could meet is left exceeded
        r.token_budget = Some(1_000);
        let plan = plan_agent(r, &entries, NOW);
        assert_eq!(plan.len(), 4);
        assert!(plan.iter().all(|d| !d.entry.called_since_promotion()));
        // the cap's demotions count toward the budget
        let mut r = rule(4, 21);
        r.token_budget = Some(3_500);
        assert_eq!(
            demoted(&plan_agent(r, &entries, NOW)),
            vec![(901, Cause::Cap), (902, Cause::Cap), (904, Cause::Budget)]
        );
        // without a budget, tokens change nothing
        assert!(plan_agent(rule(20, 21), &entries, NOW).is_empty());
    }

    fn demoted(plan: &[PlannedDemotion]) -> Vec<(i64, Cause)> {
        plan.iter().map(|d| (d.entry.tool_id, d.cause)).collect()
    }

    #[test]
    fn idle_window_of_21_days() {
        let entries = [
            e(1, 30, Some(20)),
            e(2, 30, Some(22)),
            e(3, 22, None),
            e(4, 10, Some(25)),
            e(5, 21, None),
        ];
        // 1 used 20 days ago stays; 2 used 22 days ago goes; 3 promoted 22 days ago and never
        // called goes; 4 was used before an earlier promotion and counts from its promotion;
        // 5 is exactly at the window's edge: not older, stays
        assert_eq!(
            demoted(&plan_agent(rule(20, 21), &entries, NOW)),
            vec![(2, Cause::Idle), (3, Cause::Idle)]
        );
    }

    #[test]
    fn cap_demotes_only_never_called_entries_oldest_promotion_first() {
        // cap 20; 25 promoted; 22 called inside the window; 3 never called
        let mut entries: Vec<SweepEntry> = (0..22).map(|i| e(i, 10, Some(1))).collect();
        entries.push(e(100, 5, None));
        entries.push(e(101, 9, None));
        entries.push(e(102, 7, None));
        let plan = plan_agent(rule(20, 21), &entries, NOW);
        assert_eq!(
            demoted(&plan),
            vec![(101, Cause::Cap), (102, Cause::Cap), (100, Cause::Cap)]
        );
        assert_eq!(
            entries.len() - plan.len(),
            22,
            "the set stays above its cap"
        );
    }

    #[test]
    fn cap_candidates_include_entries_used_only_before_their_promotion() {
        let entries = [e(1, 5, Some(8)), e(2, 6, Some(1)), e(3, 4, None)];
        assert_eq!(
            demoted(&plan_agent(rule(1, 21), &entries, NOW)),
            vec![(1, Cause::Cap), (3, Cause::Cap)]
        );
    }

    #[test]
    fn idle_runs_before_cap() {
        // cap 2 over 3 entries. Idle first removes the stale called one (1) and leaves 2
        // entries: the cap demotes nothing. Cap first would have demoted 3 (never called,
        // oldest promotion among candidates) and then idle 1 as well.
        let entries = [e(1, 40, Some(30)), e(2, 3, Some(1)), e(3, 2, None)];
        assert_eq!(
            demoted(&plan_agent(rule(2, 21), &entries, NOW)),
            vec![(1, Cause::Idle)]
        );
    }

    #[test]
    fn a_second_plan_over_the_result_changes_nothing() {
        let entries = [e(1, 40, None), e(2, 3, None), e(3, 2, None), e(4, 1, None)];
        let plan = plan_agent(rule(2, 21), &entries, NOW);
        let kept: Vec<SweepEntry> = entries
            .iter()
            .filter(|x| !plan.iter().any(|d| d.entry == **x))
            .copied()
            .collect();
        assert_eq!(kept.len(), 2);
        assert!(plan_agent(rule(2, 21), &kept, NOW).is_empty());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// For any set, rule and time (issue 13.2): the sweep never demotes for idleness
            /// an entry whose idle clock is inside the window, never demotes by the cap an
            /// entry called since its promotion, demotes each entry at most once, and leaves
            /// no more than the cap unless every entry left was called since its promotion.
            #[test]
            fn the_plan_keeps_what_is_used_and_meets_the_cap(
                cap in 1i64..=20,
                window in 1i64..=30,
                budget in proptest::option::of(1_000i64..5_000),
                raw in proptest::collection::vec((0i64..60, proptest::option::of(0i64..60)), 0..40),
            ) {
                let entries: Vec<SweepEntry> = raw
                    .iter()
                    .enumerate()
                    .map(|(i, (p, u))| e(i as i64, *p, *u))
                    .collect();
                let mut r = rule(cap, window);
                r.token_budget = budget;
                let plan = plan_agent(r, &entries, NOW);
                let horizon = NOW - window * DAY_MS;
                let mut demoted = std::collections::HashSet::new();
                for d in &plan {
                    prop_assert!(demoted.insert(d.entry.tool_id), "demoted twice: {d:?}");
                    match d.cause {
                        Cause::Idle => prop_assert!(d.entry.idle_clock() < horizon, "{d:?}"),
                        Cause::Cap | Cause::Budget => prop_assert!(!d.entry.called_since_promotion(), "{d:?}"),
                        other => prop_assert!(false, "unexpected cause {other:?}"),
                    }
                }
                let left: Vec<&SweepEntry> = entries.iter().filter(|x| !demoted.contains(&x.tool_id)).collect();
                prop_assert!(
                    left.len() as i64 <= cap || left.iter().all(|x| x.called_since_promotion()),
                    "{} left over a cap of {cap}", left.len()
                );
                if let Some(b) = budget {
                    let tokens: i64 = left.iter().map(|x| x.tokens).sum();
                    prop_assert!(
                        tokens <= b || left.iter().all(|x| x.called_since_promotion()),
                        "{tokens} tokens left over a budget of {b}"
                    );
                }
            }
        }
    }
}
