//! Ranking (SPEC §3.4, issue 10): the lexical and semantic scores fused, then ordered by
//! what the request asks (the vendor it names, the vendor prior, the action, variety),
//! the threshold of "nothing matches", the floor, and the tie-breaks.

use super::action::Action;
use super::index::SearchIndex;
use super::learned::Learned;
use super::query::read_part;
use super::text::words;
use super::types::{Hit, Mode, Ranked, SearchParams};
use std::collections::HashMap;

impl SearchIndex {
    /// Per vendor (in `vendor_names` order): the query's closeness to the vendor's
    /// centroid, rescaled to 0–1 between the farthest and the nearest vendor.
    fn vendor_closeness(&self, embedding: &[f32]) -> Vec<f32> {
        let cos: Vec<f32> = self
            .centroids
            .chunks_exact(self.dim)
            .map(|c| c.iter().zip(embedding).map(|(a, b)| a * b).sum())
            .collect();
        let (lo, hi) = cos
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        let span = hi - lo;
        cos.iter()
            .map(|&x| if span > 1e-6 { (x - lo) / span } else { 1.0 })
            .collect()
    }

    /// Ranks the documents for `query`. `embedding` is the query's unit vector from the
    /// same model as the documents' (ignored when the index has none or its length
    /// differs). Returns nothing when no document clears the threshold; else the best
    /// `limit` hits above the floor, best first, and how many cleared it in all. Reads
    /// the query's first 64 words ([`super::query::read_part`]).
    pub fn search(
        &self,
        query: &str,
        embedding: Option<&[f32]>,
        mode: Mode,
        params: &SearchParams,
        limit: usize,
    ) -> Ranked {
        self.search_learned(query, embedding, mode, params, limit, None)
    }

    /// [`SearchIndex::search`] that also reads the documents' learned field (issue 24.3,
    /// [`Learned`]): a document's score `s` becomes `s + w × l × (1 − s)`, with `l` its
    /// learned match (0–1) and `w` [`SearchParams::learned_weight`], so a tool agents
    /// picked for such requests rises without ever scoring above 1. Which tools the
    /// request reaches (the floor) and whether anything matches at all (the threshold)
    /// count only phrases two agents or more taught: one agent's picks reorder what the
    /// request reaches, but never add a tool it does not reach nor turn "nothing
    /// matches" into an answer.
    pub fn search_learned(
        &self,
        query: &str,
        embedding: Option<&[f32]>,
        mode: Mode,
        params: &SearchParams,
        limit: usize,
        learned: Option<&Learned>,
    ) -> Ranked {
        let query = read_part(query).0;
        if self.docs.is_empty() || words(query).is_empty() || limit == 0 {
            return Ranked::default();
        }
        let q = self.analyze(query, params);
        let embedding = embedding.filter(|e| self.dim > 0 && e.len() == self.dim);
        let mode = match (mode, embedding) {
            (_, None) => Mode::Lexical,
            (m, Some(_)) => m,
        };
        let lexical = if mode == Mode::Semantic {
            vec![0f32; self.docs.len()]
        } else {
            self.lexical_scores(&q, params)
        };
        let semantic: Vec<f32> = match embedding {
            Some(e) if mode != Mode::Lexical => {
                let span = (params.cosine_ceiling - params.cosine_floor).max(1e-3);
                self.embeddings
                    .chunks_exact(self.dim)
                    .map(|row| {
                        let cos: f32 = row.iter().zip(e).map(|(a, b)| a * b).sum();
                        ((cos - params.cosine_floor) / span).clamp(0.0, 1.0)
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let (weight, threshold) = match mode {
            Mode::Lexical => (1.0, params.lexical_threshold),
            Mode::Semantic => (0.0, params.threshold),
            Mode::Fused => (params.lexical_weight, params.threshold),
        };
        let floor = threshold * params.floor_share.clamp(0.0, 1.0);
        let mut taught = vec![0f32; self.docs.len()];
        // the part of it two agents or more taught: only that may bring in a tool or
        // turn "nothing matches" into an answer (one agent alone only reorders)
        let mut confirmed = vec![0f32; self.docs.len()];
        if let Some(learned) = learned.filter(|l| !l.is_empty()) {
            let semantic_leg = embedding.filter(|_| mode != Mode::Lexical);
            for (d, l, c) in learned.scores(
                query,
                semantic_leg,
                (
                    params.learned_cosine_floor,
                    params.learned_cosine_ceiling,
                    params.learned_evidence_half,
                ),
            ) {
                taught[d] = l;
                confirmed[d] = c;
            }
        }
        let w_learned = params.learned_weight.clamp(0.0, 1.0);
        let mut deciding = vec![0f32; self.docs.len()];
        let mut hits: Vec<Hit> = (0..self.docs.len())
            .filter_map(|d| {
                let l = lexical[d];
                let s = semantic.get(d).copied().unwrap_or(0.0);
                let base = weight * l + (1.0 - weight) * s;
                let score = base + w_learned * taught[d] * (1.0 - base);
                // what the request reaches without one agent's picks alone
                deciding[d] = base + w_learned * confirmed[d] * (1.0 - base);
                (deciding[d] >= floor && deciding[d] > 0.0).then(|| Hit {
                    doc: d,
                    score,
                    lexical: l,
                    semantic: s,
                    learned: taught[d],
                    vendor_named: q.vendors.contains(&self.docs[d].vendor),
                })
            })
            .collect();
        let named = !q.vendors.is_empty();
        // the vendor prior scales each hit's ranking key (see SearchParams::vendor_prior)
        let prior: Vec<f32> = match embedding {
            Some(e) if !named && params.vendor_prior > 0.0 && !self.centroids.is_empty() => {
                let w = params.vendor_prior.clamp(0.0, 1.0);
                self.vendor_closeness(e)
                    .into_iter()
                    .map(|c| 1.0 - w + w * c)
                    .collect()
            }
            _ => Vec::new(),
        };
        let action = q.action;
        let mut keys: Vec<f32> = vec![0.0; self.docs.len()];
        for h in &hits {
            let p = prior
                .get(self.vendor_of[h.doc] as usize)
                .copied()
                .unwrap_or(1.0);
            let a = match action {
                Some(a) if (a == Action::Read) != self.reads[h.doc] => {
                    1.0 - params.action_weight.clamp(0.0, 1.0)
                }
                _ => 1.0,
            };
            keys[h.doc] = h.score * p * a
                + if h.vendor_named {
                    params.vendor_boost
                } else {
                    0.0
                };
        }
        // the n-th hit of a vendor beyond the first few decays (SearchParams::vendor_decay)
        // the order before variety (and its tie-breaks: the higher lexical score, the
        // shorter name, the order of the documents as given)
        let before = |a: &Hit, b: &Hit, keys: &[f32]| {
            keys[b.doc]
                .total_cmp(&keys[a.doc])
                .then(b.lexical.total_cmp(&a.lexical))
                .then(
                    self.docs[a.doc]
                        .name
                        .len()
                        .cmp(&self.docs[b.doc].name.len()),
                )
                .then(a.doc.cmp(&b.doc))
        };
        // every hit's place among its vendor's decides its decay (not only the first
        // few), so `limit` only cuts the list and never changes its order; the decay
        // stops after four steps, so a vendor's hits keep their order among themselves
        if !named && params.vendor_decay < 1.0 && hits.len() > 1 {
            let decay = params.vendor_decay.clamp(0.0, 1.0);
            hits.sort_by(|a, b| before(a, b, &keys));
            let mut seen: HashMap<u32, usize> = HashMap::new();
            for h in &hits {
                let n = seen.entry(self.vendor_of[h.doc]).or_insert(0);
                if *n >= params.vendor_keep {
                    keys[h.doc] *= decay.powi((*n + 1 - params.vendor_keep).min(4) as i32);
                }
                *n += 1;
            }
        }
        let key = |h: &Hit| keys[h.doc];
        let order = |a: &Hit, b: &Hit| before(a, b, &keys);
        // "nothing matches" is decided on the best hit alone, counting only what two
        // agents or more taught
        if !hits.iter().any(|h| deciding[h.doc] >= threshold) {
            return Ranked::default();
        }
        let total = hits.len();
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        // the score shown follows the order: when the query names a vendor, its boost is
        // part of the score, rescaled into 0–1 (a hit of another vendor with more words
        // in common ranks lower and must not show a higher score; found by the
        // search_query fuzz target)
        for h in &mut hits {
            // the key also holds the action, vendor prior and variety factors (each
            // at most 1), so it is the score the order follows
            let shown = if named {
                key(h) / (1.0 + params.vendor_boost.max(0.0))
            } else {
                key(h)
            };
            h.score = shown.clamp(0.0, 1.0);
        }
        Ranked { hits, total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search::tests::{doc, names, toolbox};
    use crate::domain::search::SearchDoc;

    #[test]
    fn a_named_vendor_ranks_first_and_ties_never_go_by_vendor_name() {
        let idx = SearchIndex::build(toolbox(), None);
        let hits = names(&idx, "create a github webhook");
        assert_eq!(hits[0], "github__repos_create_webhook");
        // without the vendor, the closer name and summary win, not the alphabet
        let hits = names(&idx, "create webhook");
        assert!(hits[..3].iter().all(|h| h.ends_with("webhook")), "{hits:?}");
        assert!(hits[..2].contains(&"vercel__create_webhook".to_string()));
        assert_ne!(hits[0], "asana__create_webhook", "{hits:?}");
    }

    #[test]
    fn shown_scores_never_rise_down_the_list() {
        let idx = SearchIndex::build(toolbox(), None);
        // a named vendor ranks its tools first, above others with more words in common
        for q in [
            "create a github webhook",
            "github delete",
            "webhook asana github",
            "create webhook",
        ] {
            let hits = idx
                .search(q, None, Mode::Lexical, &SearchParams::default(), 50)
                .hits;
            let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{q}: {scores:?}");
            assert!(
                scores.iter().all(|s| (0.0..=1.0).contains(s)),
                "{q}: {scores:?}"
            );
        }
    }

    #[test]
    fn nonsense_clears_no_threshold_and_scores_stay_in_0_1() {
        let idx = SearchIndex::build(toolbox(), None);
        assert!(names(&idx, "xqzv flombert").is_empty());
        assert!(names(&idx, "bake sourdough bread").is_empty());
        assert!(names(&idx, "the of and").is_empty());
        for h in idx
            .search(
                "create webhook",
                None,
                Mode::Lexical,
                &SearchParams::default(),
                50,
            )
            .hits
        {
            assert!((0.0..=1.0).contains(&h.score));
        }
    }

    #[test]
    fn nothing_matches_is_decided_on_the_best_hit() {
        let idx = SearchIndex::build(toolbox(), None);
        let p = SearchParams::default();
        let all = idx
            .search("create webhook", None, Mode::Lexical, &p, 50)
            .hits;
        // the best hit clears the threshold; hits below it but above the floor stay
        assert!(all[0].score >= p.lexical_threshold);
        let below: Vec<&Hit> = all
            .iter()
            .filter(|h| h.score < p.lexical_threshold)
            .collect();
        assert!(!below.is_empty(), "{all:?}");
        for h in &all {
            assert!(h.score >= p.lexical_threshold * p.floor_share);
        }
        // a threshold above the best hit: nothing at all
        let strict = SearchParams {
            lexical_threshold: all[0].score + 0.01,
            ..p.clone()
        };
        assert!(idx
            .search("create webhook", None, Mode::Lexical, &strict, 50)
            .hits
            .is_empty());
    }

    #[test]
    fn the_order_is_deterministic() {
        let a = SearchIndex::build(toolbox(), None);
        let b = SearchIndex::build(toolbox(), None);
        assert_eq!(names(&a, "create"), names(&b, "create"));
    }

    #[test]
    fn embeddings_rank_by_cosine_and_fuse_with_words() {
        // three documents on two axes: the query points at doc 2 semantically
        let docs = toolbox()[..3].to_vec();
        let rows = vec![1.0, 0.0, 0.8, 0.6, 0.6, 0.8];
        let idx = SearchIndex::build(docs, Some((2, rows)));
        assert!(idx.has_embeddings());
        let p = SearchParams {
            lexical_weight: 0.5,
            ..SearchParams::default()
        };
        let q = [0.0, 1.0];
        let sem = idx
            .search("unrelated words", Some(&q), Mode::Semantic, &p, 50)
            .hits;
        assert_eq!(sem.iter().map(|h| h.doc).collect::<Vec<_>>(), [2, 1]);
        assert!(sem.iter().all(|h| h.lexical == 0.0));
        let lex = idx
            .search("create webhook", Some(&q), Mode::Lexical, &p, 50)
            .hits;
        let fused = idx
            .search("create webhook", Some(&q), Mode::Fused, &p, 50)
            .hits;
        assert_ne!(lex[0].doc, 2, "words alone prefer a shorter document");
        assert_eq!(fused[0].doc, 2, "meaning tips the balance: {fused:?}");
        // a query embedding of another length is ignored: lexical ranking
        let lex = idx
            .search("create webhook", Some(&[1.0]), Mode::Fused, &p, 50)
            .hits;
        assert!(lex.iter().all(|h| h.semantic == 0.0));
    }

    #[test]
    fn without_a_named_vendor_the_first_hits_show_several_vendors() {
        // four equally good tools of one vendor, then one of another
        let mut docs: Vec<SearchDoc> = (1..=4)
            .map(|i| {
                doc(
                    i,
                    "filescom",
                    &format!("message_reactions_{i}"),
                    "POST",
                    "/message_reactions",
                    "Create message reaction",
                )
            })
            .collect();
        // the same words, a longer name: it loses the tie
        docs.push(doc(
            5,
            "slack",
            "message_reactions_10",
            "POST",
            "/message_reactions",
            "Create message reaction",
        ));
        let idx = SearchIndex::build(docs, None);
        let rank_of_slack = |p: &SearchParams| {
            idx.search("create a message reaction", None, Mode::Lexical, p, 5)
                .hits
                .iter()
                .position(|h| idx.docs()[h.doc].vendor == "slack")
        };
        let off = SearchParams {
            vendor_decay: 1.0,
            ..SearchParams::default()
        };
        assert_eq!(rank_of_slack(&off), Some(4));
        let p = SearchParams::default();
        assert!(
            rank_of_slack(&p).unwrap() <= p.vendor_keep,
            "{:?}",
            rank_of_slack(&p)
        );
        // a named vendor keeps all its hits first
        let named = idx
            .search("filescom message reaction", None, Mode::Lexical, &p, 5)
            .hits;
        assert!(named[..4]
            .iter()
            .all(|h| idx.docs()[h.doc].vendor == "filescom"));
        // shown scores still never rise down the list
        let hits = idx
            .search("create a message reaction", None, Mode::Lexical, &p, 5)
            .hits;
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "{hits:?}"
        );
        // the limit only cuts the list: many tools of one vendor, a few of others
        let mut docs: Vec<SearchDoc> = (1..=60usize)
            .map(|i| {
                let summary = format!("Create message reaction {}", "variant ".repeat(i % 7));
                doc(
                    i as i64,
                    "filescom",
                    &format!("reaction_{i}"),
                    "POST",
                    "/reactions",
                    &summary,
                )
            })
            .collect();
        for (i, v) in ["slack", "discord", "zoom"].iter().enumerate() {
            docs.push(doc(
                100 + i as i64,
                v,
                "add_reaction",
                "POST",
                "/reactions",
                "Add a reaction",
            ));
        }
        let idx = SearchIndex::build(docs, None);
        let list = |limit: usize| {
            idx.search("create a message reaction", None, Mode::Lexical, &p, limit)
                .hits
                .iter()
                .map(|h| h.doc)
                .collect::<Vec<_>>()
        };
        let all = list(50);
        for limit in [1, 5, 10, 20] {
            assert_eq!(list(limit), all[..limit], "limit {limit}");
        }
    }

    #[test]
    fn the_vendor_closest_to_the_query_as_a_whole_is_preferred() {
        // two tools with the same words; the query's embedding is close to the second
        // vendor's other tools
        let docs = vec![
            doc(
                1,
                "spotify",
                "check_saved",
                "GET",
                "/me/saved",
                "Check saved items",
            ),
            doc(
                2,
                "spotify",
                "play",
                "PUT",
                "/me/player/play",
                "Start playback",
            ),
            doc(
                3,
                "plaid",
                "check_saved",
                "GET",
                "/me/saved",
                "Check saved items",
            ),
            doc(4, "plaid", "accounts", "GET", "/accounts", "Get accounts"),
        ];
        let rows = vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0];
        let idx = SearchIndex::build(docs, Some((2, rows)));
        let q = [0.6, 0.8];
        let first = |p: &SearchParams| {
            let hits = idx.search("check saved", Some(&q), Mode::Fused, p, 5).hits;
            idx.docs()[hits[0].doc].vendor.clone()
        };
        let p = SearchParams {
            lexical_weight: 1.0,
            ..SearchParams::default()
        };
        assert_eq!(first(&p), "plaid");
        let off = SearchParams {
            vendor_prior: 0.0,
            ..p.clone()
        };
        assert_eq!(
            first(&off),
            "spotify",
            "without the prior, ties keep their order"
        );
    }

    #[test]
    fn a_request_to_change_prefers_operations_that_change() {
        let docs = vec![
            doc(
                1,
                "box",
                "get_collaborations",
                "GET",
                "/collaborations",
                "Collaborations",
            ),
            doc(
                2,
                "box",
                "post_collaborations",
                "POST",
                "/collaborations",
                "Collaborations",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        let first = |q: &str, p: &SearchParams| {
            let hits = idx.search(q, None, Mode::Lexical, p, 5).hits;
            idx.docs()[hits[0].doc].name.clone()
        };
        let p = SearchParams::default();
        let off = SearchParams {
            action_weight: 0.0,
            ..p.clone()
        };
        assert_eq!(first("share collaborations", &off), "get_collaborations");
        assert_eq!(first("share collaborations", &p), "post_collaborations");
        assert_eq!(first("show collaborations", &p), "get_collaborations");
        // the shown score follows the order the action made
        let hits = idx
            .search("share collaborations", None, Mode::Lexical, &p, 5)
            .hits;
        assert!(hits[0].score > hits[1].score, "{hits:?}");
    }
}
