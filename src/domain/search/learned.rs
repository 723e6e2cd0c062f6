//! What find_tool learns from agents' picks (issue 24.3): a tool's **learned field**, the
//! task words of requests after which agents promoted or called it. Both legs read it:
//! the lexical leg by the share of the request's terms a phrase shares (stemmed, as the
//! index reads documents), the semantic leg by the cosine between the request's and the
//! phrase's embeddings. Evidence decays with a half-life of 90 days, and one agent counts
//! once per tool and phrase (the database keeps one row per tool, agent and phrase).

use super::index::SearchIndex;
use super::text::{self, words, Analyzer};
use std::collections::{HashMap, HashSet};

/// Evidence loses half its weight in this many milliseconds (90 days).
pub const HALF_LIFE_MS: i64 = 90 * 24 * 3600 * 1000;

/// Most task words a learned phrase keeps.
pub const PHRASE_WORDS: usize = 16;

/// The words of a request that name its task, as find_tool learns them: the query's
/// first part ([`super::read_part`]) without its payload ([`text::query_parts`]: ids,
/// numbers, times, double-quoted text, a clause about the circumstances), without text in
/// single quotes or backticks, without any token that is not a plain word (URLs, paths,
/// `key=value`, e-mail-like text), without stop words and words that hold a digit, lower
/// case, at most [`PHRASE_WORDS`]. `None` when nothing is left: such a request teaches
/// nothing. [`SearchIndex::learnable_phrase`] also keeps only the toolbox's own words.
pub fn task_phrase(query: &str) -> Option<String> {
    let read = super::read_part(query).0;
    let parts = text::query_parts(read);
    if parts.only_payload {
        return None;
    }
    let payload: HashSet<&str> = parts.payload.iter().map(String::as_str).collect();
    // beyond query_parts: text in single quotes or backticks, and every token that is not
    // a plain word (URLs, paths, key=value, dotted names, e-mail-like text)
    let mut plain: Vec<&str> = Vec::new();
    let mut quoted: Option<char> = None;
    for token in parts.core.split_whitespace() {
        if let Some(q) = quoted {
            if token
                .trim_end_matches(['.', ',', '!', '?', ';', ':', ')'])
                .ends_with(q)
            {
                quoted = None;
            }
            continue;
        }
        // a quote that opens anywhere in the token (`'x`, `text:'x`, `(‘x`), not an
        // apostrophe between letters (don't, o'clock)
        let chars: Vec<char> = token.chars().collect();
        let opener = chars.iter().enumerate().find(|&(i, &c)| {
            matches!(c, '\'' | '`' | '‘')
                && !(i > 0
                    && chars[i - 1].is_alphabetic()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphabetic()))
        });
        if let Some((i, &q)) = opener {
            let close = if q == '‘' { '’' } else { q };
            let rest: String = chars[i + 1..].iter().collect();
            if !rest
                .trim_end_matches(['.', ',', '!', '?', ';', ':', ')'])
                .ends_with(close)
            {
                quoted = Some(close);
            }
            continue;
        }
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
        if !bare.is_empty()
            && bare
                .chars()
                .all(|c| c.is_alphabetic() || c == '\'' || c == '’' || c == '-')
        {
            plain.push(bare);
        }
    }
    let kept: Vec<String> = words(&plain.join(" "))
        .into_iter()
        .filter(|w| {
            !payload.contains(w.as_str())
                && !text::is_stop_word(w)
                && !w.chars().any(|c| c.is_ascii_digit())
                && w.len() > 1
        })
        .take(PHRASE_WORDS)
        .collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

impl SearchIndex {
    /// [`task_phrase`] with only the words the toolbox's own documents use (a stemmed
    /// term of the index) or that the agent-to-API lexicon knows: a person's name, a
    /// message's text or a secret that slipped past the payload rules is not an API word,
    /// so it is never stored.
    pub fn learnable_phrase(&self, query: &str) -> Option<String> {
        let phrase = task_phrase(query)?;
        let kept: Vec<&str> = phrase
            .split(' ')
            .filter(|w| {
                let stem = self.analyzer.stem(w);
                self.terms.contains_key(&stem) || !super::lexicon::concepts(&stem).is_empty()
            })
            .collect();
        (!kept.is_empty()).then(|| kept.join(" "))
    }
}

/// The weight of one piece of evidence `age_ms` old: 1 when new, halving every
/// [`HALF_LIFE_MS`] (a pick from the future counts as new).
pub fn decayed(age_ms: i64) -> f32 {
    0.5f64.powf(age_ms.max(0) as f64 / HALF_LIFE_MS as f64) as f32
}

/// A phrase learned for one document: the document's key ([`super::SearchDoc::key`]),
/// the phrase, its evidence (the sum of [`decayed`] weights of the agents that picked the
/// tool after asking for it) and how many agents those are (each counts once). Agents
/// count together only for the same phrase: the same task words in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedPhrase {
    pub key: i64,
    pub phrase: String,
    pub evidence: f32,
    pub agents: u32,
}

#[derive(Debug, Clone)]
struct Phrase {
    terms: Vec<String>,
    /// Unit vector from the index's model, or empty.
    embedding: Vec<f32>,
    /// The summed [`decayed`] weights of the agents that picked the tool after asking for
    /// it (at least 0).
    evidence: f32,
    /// How many agents taught it.
    agents: u32,
}

/// The learned field of an index's documents, built beside the index (evidence changes
/// far more often than the toolbox, and rebuilding this costs microseconds per phrase).
#[derive(Debug, Clone, Default)]
pub struct Learned {
    by_doc: HashMap<usize, Vec<Phrase>>,
}

impl Learned {
    /// Builds the learned field of `index`'s documents from `phrases`; `embeddings`, when
    /// given, holds one unit vector per phrase in order (from the model of the index's
    /// own embeddings). Phrases of keys the index does not hold are left out.
    pub fn build(
        index: &SearchIndex,
        phrases: &[LearnedPhrase],
        embeddings: Option<Vec<Vec<f32>>>,
    ) -> Self {
        let analyzer = Analyzer::default();
        let doc_of: HashMap<i64, usize> = index
            .docs()
            .iter()
            .enumerate()
            .map(|(i, d)| (d.key, i))
            .collect();
        let mut by_doc: HashMap<usize, Vec<Phrase>> = HashMap::new();
        for (i, p) in phrases.iter().enumerate() {
            let Some(&doc) = doc_of.get(&p.key) else {
                continue;
            };
            let embedding = embeddings
                .as_ref()
                .and_then(|e| e.get(i))
                .filter(|e| e.len() == index.dim())
                .cloned()
                .unwrap_or_default();
            by_doc.entry(doc).or_default().push(Phrase {
                terms: dedup(analyzer.terms(&p.phrase)),
                embedding,
                evidence: p.evidence.max(0.0),
                agents: p.agents,
            });
        }
        Self { by_doc }
    }

    /// Whether nothing was learned.
    pub fn is_empty(&self) -> bool {
        self.by_doc.is_empty()
    }

    /// Per document with learned phrases: `(doc, match, confirmed)`, how well they match
    /// the request, 0–1, over all its phrases and over those two agents or more taught
    /// (0 when none). A match is the best phrase's
    /// strength (`evidence / (evidence + half)`: with `half` 2, one agent's fresh pick
    /// weighs 1/3, two agents' 1/2, and more agents approach 1) times the larger of its
    /// lexical match (shared terms over the larger term count) and its semantic match
    /// (cosine rescaled between `floor` and `ceiling`; 0 without embeddings).
    pub(super) fn scores(
        &self,
        query: &str,
        embedding: Option<&[f32]>,
        (floor, ceiling, half): (f32, f32, f32),
    ) -> Vec<(usize, f32, f32)> {
        let half = half.max(1e-3);
        let analyzer = Analyzer::default();
        let terms = dedup(analyzer.terms(&task_phrase(query).unwrap_or_default()));
        let span = (ceiling - floor).max(1e-3);
        let mut out: Vec<(usize, f32, f32)> = self
            .by_doc
            .iter()
            .map(|(&doc, phrases)| {
                let matches = phrases.iter().map(|p| {
                    let shared = p.terms.iter().filter(|t| terms.contains(t)).count();
                    let lexical = shared as f32 / p.terms.len().max(terms.len()).max(1) as f32;
                    let semantic = match embedding {
                        Some(e) if p.embedding.len() == e.len() => {
                            let cos: f32 = p.embedding.iter().zip(e).map(|(a, b)| a * b).sum();
                            ((cos - floor) / span).clamp(0.0, 1.0)
                        }
                        _ => 0.0,
                    };
                    (
                        p.evidence / (p.evidence + half) * lexical.max(semantic),
                        p.agents >= 2,
                    )
                });
                let (best, confirmed) = matches.fold((0.0f32, 0.0f32), |(b, c), (m, more)| {
                    (b.max(m), if more { c.max(m) } else { c })
                });
                (doc, best, confirmed)
            })
            .filter(|(_, s, _)| *s > 0.0)
            .collect();
        out.sort_by_key(|(d, _, _)| *d);
        out
    }
}

fn dedup(mut terms: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phrase_keeps_the_task_and_never_the_payload() {
        assert_eq!(
            task_phrase("did the SMS we sent to +447700900123 an hour ago get delivered?")
                .as_deref(),
            Some("sms sent hour ago get delivered")
        );
        let p = task_phrase("store NPM_TOKEN as an encrypted Actions secret on acme/web").unwrap();
        assert!(!p.contains("npm") && !p.contains("acme"), "{p}");
        assert!(p.contains("secret"), "{p}");
        let p = task_phrase("refund charge ch_3NfYh2KZ saying \"sorry about that\"").unwrap();
        assert_eq!(p, "refund charge");
        assert_eq!(
            task_phrase("post 'our Q3 layoffs start Monday' to the `ops` channel").as_deref(),
            Some("post channel")
        );
        assert_eq!(
            task_phrase("fetch https://internal.example.com/reset?token=abc and post it")
                .as_deref(),
            Some("fetch post")
        );
        assert_eq!(
            task_phrase("post message text:'password reset for admin' in the channel").as_deref(),
            Some("post message channel")
        );
        assert_eq!(
            task_phrase("post a message (‘secret project falcon’) to the channel").as_deref(),
            Some("post message channel")
        );
        // an apostrophe between letters opens no quote
        assert!(task_phrase("don't page ops").unwrap().ends_with("page ops"));
        assert_eq!(task_phrase("4711 ZX-9"), None);
    }

    /// A request that reaches no tool gets "nothing matches" however well one agent's
    /// learned phrase matches it, in every mode (the fused and semantic legs give every
    /// tool some cosine here); the same phrase from two agents answers it.
    #[test]
    fn one_agents_pick_alone_never_turns_nothing_matches_into_an_answer() {
        use crate::domain::search::tests::toolbox;
        use crate::domain::search::{Mode, SearchParams};
        let docs = toolbox();
        let dim = 4;
        // every tool somewhat close to the request's embedding: cosine 0.75 for each
        let mut rows = Vec::new();
        for _ in &docs {
            rows.extend([0.75f32, (1.0f32 - 0.75 * 0.75).sqrt(), 0.0, 0.0]);
        }
        let idx = SearchIndex::build(docs, Some((dim, rows)));
        let key = idx.docs()[0].key;
        let request = "quibble frobnicate zorblax";
        let query = [1.0f32, 0.0, 0.0, 0.0];
        // a cosine scale under which every tool has some semantic score (0.17) but none
        // clears the threshold by itself
        let params = SearchParams {
            cosine_floor: 0.7,
            cosine_ceiling: 1.0,
            ..SearchParams::default()
        };
        for (mode, embedding) in [
            (Mode::Lexical, None),
            (Mode::Fused, Some(&query[..])),
            (Mode::Semantic, Some(&query[..])),
        ] {
            let search = |agents: u32, evidence: f32| {
                let phrase = LearnedPhrase {
                    key,
                    phrase: request.into(),
                    evidence,
                    agents,
                };
                let learned = Learned::build(&idx, &[phrase], None);
                idx.search_learned(request, embedding, mode, &params, 10, Some(&learned))
                    .hits
                    .iter()
                    .map(|h| idx.docs()[h.doc].key)
                    .collect::<Vec<_>>()
            };
            let nothing = idx.search_learned(request, embedding, mode, &params, 10, None);
            assert!(
                nothing.hits.is_empty(),
                "{mode:?}: the request reaches nothing"
            );
            // agents count, not summed evidence
            for evidence in [1.0, 1.5] {
                assert!(
                    search(1, evidence).is_empty(),
                    "{mode:?}: one agent's pick (evidence {evidence}) answered"
                );
            }
            // two agents, fresh or with picks 90 days old (evidence 2 × 0.5)
            for evidence in [2.0, 1.0] {
                assert_eq!(
                    search(2, evidence).first(),
                    Some(&key),
                    "{mode:?}: two agents' picks (evidence {evidence}) did not answer"
                );
            }
        }
    }

    /// A request that reaches some tools: one agent's phrase on a tool it does not reach
    /// leaves the answer as it was, and on a tool it reaches lifts that tool without
    /// changing which tools are answered; two agents' phrase brings the unreached tool
    /// in.
    #[test]
    fn one_agents_pick_alone_never_adds_a_tool_the_request_does_not_reach() {
        use crate::domain::search::tests::toolbox;
        use crate::domain::search::{Mode, SearchParams};
        let idx = SearchIndex::build(toolbox(), None);
        let request = "establish a webhook";
        let unreached = idx
            .docs()
            .iter()
            .find(|d| d.name == "delete_pet")
            .map(|d| d.key)
            .unwrap();
        let search = |taught: Option<(i64, u32)>| -> Vec<i64> {
            let phrases: Vec<LearnedPhrase> = taught
                .map(|(key, agents)| LearnedPhrase {
                    key,
                    phrase: "establish webhook".into(),
                    evidence: agents as f32,
                    agents,
                })
                .into_iter()
                .collect();
            let learned = Learned::build(&idx, &phrases, None);
            let p = SearchParams::default();
            idx.search_learned(request, None, Mode::Lexical, &p, 50, Some(&learned))
                .hits
                .iter()
                .map(|h| idx.docs()[h.doc].key)
                .collect()
        };
        let before = search(None);
        assert!(
            before.len() > 1 && !before.contains(&unreached),
            "{before:?}"
        );
        let one = search(Some((unreached, 1)));
        assert_eq!(one, before, "one agent changed what the request reaches");
        let two = search(Some((unreached, 2)));
        assert!(two.contains(&unreached), "{two:?}");
        // one agent's phrase on the last tool the request reaches lifts it
        let last = *before.last().unwrap();
        let lifted = search(Some((last, 1)));
        let sorted = |mut v: Vec<i64>| {
            v.sort();
            v
        };
        assert_eq!(sorted(lifted.clone()), sorted(before.clone()));
        let place = |v: &[i64]| v.iter().position(|k| *k == last);
        assert!(place(&lifted) < place(&before), "{before:?} -> {lifted:?}");
    }

    #[test]
    fn evidence_halves_every_ninety_days() {
        assert!((decayed(0) - 1.0).abs() < 1e-6);
        assert!((decayed(HALF_LIFE_MS) - 0.5).abs() < 1e-4);
        assert!((decayed(2 * HALF_LIFE_MS) - 0.25).abs() < 1e-4);
        assert!((decayed(-5) - 1.0).abs() < 1e-6);
    }
}
