//! Query analysis (SPEC §3.4, issue 10): the vendors a query names, and for each of its
//! task words the index terms it reaches (itself, synonyms and abbreviations, the
//! agent-to-API lexicon, shared prefixes) with their credit and information; and the
//! text of a query that a sentence-embedding model reads.

use super::action::{core_action, idioms, QUERY_FILLER};
use super::index::SearchIndex;
use super::lexicon;
use super::text::{self, words, Analyzer};
use super::types::{Analyzed, SearchParams};

/// Longest query read, in characters (issue 24.1): a longer one is cut here, never
/// refused, so an agent may describe its task in its own words.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Words of a query the ranking reads: the first 64 (whitespace-separated) of its first
/// [`MAX_QUERY_CHARS`] characters.
pub const MAX_QUERY_WORDS: usize = 64;
/// Runs of letters and digits the ranking reads at most (`a,b,c` is one word of three):
/// with [`MAX_QUERY_CHARS`], the bound on each query's work whatever its phrasing.
pub const MAX_QUERY_RUNS: usize = 256;

/// What [`read_part`] cut from a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Words past the 64th (or past [`MAX_QUERY_RUNS`] runs of letters and digits).
    Words,
    /// Characters past the 2,000th.
    Characters,
}

impl Cut {
    /// The sentence that tells the agent what was read.
    pub fn note(self) -> String {
        match self {
            Cut::Words => {
                format!("Only the first {MAX_QUERY_WORDS} words of your request were read.")
            }
            Cut::Characters => {
                format!("Only the first {MAX_QUERY_CHARS} characters of your request were read.")
            }
        }
    }
}

/// The part of `query` the ranking reads, without leading whitespace: at most
/// [`MAX_QUERY_CHARS`] characters (ending at a word's end when the cut would split one),
/// then at most [`MAX_QUERY_WORDS`] words and [`MAX_QUERY_RUNS`] runs of letters and
/// digits; and what was cut, if anything but whitespace was. Reads at most the first
/// 2,000 characters after the leading whitespace, so its cost does not grow with what
/// was sent.
pub fn read_part(query: &str) -> (&str, Option<Cut>) {
    let query = query.trim_start();
    let mut end = query
        .char_indices()
        .nth(MAX_QUERY_CHARS)
        .map_or(query.len(), |(i, _)| i);
    let mut by = Cut::Characters;
    // a word split by the character limit is left out whole (when it is not the only one)
    if query[end..].starts_with(|c: char| !c.is_whitespace()) {
        if let Some(space) = query[..end].rfind(char::is_whitespace) {
            end = space;
        }
    }
    let (mut words, mut runs) = (0, 0);
    let (mut in_word, mut in_run) = (false, false);
    for (i, c) in query[..end].char_indices() {
        let starts_word = !c.is_whitespace() && !in_word;
        let starts_run = c.is_alphanumeric() && !in_run;
        in_word = !c.is_whitespace();
        in_run = c.is_alphanumeric();
        words += usize::from(starts_word);
        runs += usize::from(starts_run);
        if words > MAX_QUERY_WORDS || runs > MAX_QUERY_RUNS {
            end = i;
            by = Cut::Words;
            break;
        }
    }
    let read = query[..end].trim_end();
    let cut = query[end..]
        .chars()
        .any(|c| !c.is_whitespace())
        .then_some(by);
    (read, cut)
}

/// Groups of words agents use for the same thing in API requests (abbreviations and
/// near-synonyms); a query word in a group also looks for the others, at
/// [`SearchParams::expansion_weight`].
const SYNONYMS: &[&[&str]] = &[
    &["repo", "repository"],
    &["ref", "reference"],
    &["org", "organization", "organisation"],
    &["msg", "message"],
    &["config", "configuration", "settings"],
    &["auth", "authentication", "authorization"],
    &["env", "environment"],
    &["app", "application"],
    &["info", "information", "details"],
    &["stats", "statistics", "metrics"],
    &["doc", "document"],
    &["img", "image", "picture", "photo"],
    &["mail", "email"],
    &["dm", "direct"],
    &["pr", "pull"],
    &["sms", "text"],
    &["rename", "update"],
    &["modify", "update"],
    &["alter", "update"],
    &["erase", "delete"],
    &["destroy", "delete"],
    &["retrieve", "get"],
    &["lookup", "get"],
    &["view", "get"],
    &["browse", "list"],
    &["enumerate", "list"],
    &["subscribe", "subscription"],
    &["unsubscribe", "subscription"],
    &["charge", "payment"],
    &["pay", "payment"],
    &["bill", "invoice"],
    &["signup", "register"],
    &["login", "signin"],
    &["logout", "signout"],
    &["upload", "file"],
    &["download", "file"],
    // what agents say for the API's verbs (a query word looks for the others)
    &["notify", "message", "send", "post"],
    &["tell", "message", "send"],
    &["ping", "message"],
    &["invite", "add", "member"],
    &["kick", "remove", "member"],
    &["ban", "remove", "member"],
    &["close", "update", "state"],
    &["complete", "update", "status"],
    &["finish", "update", "status"],
    &["resolve", "update", "status"],
    &["reopen", "update", "state"],
    &["schedule", "create", "event"],
    &["reschedule", "update", "event"],
    &["book", "create", "booking"],
    &["provision", "create", "instance"],
    &["spin", "create", "instance"],
    &["boot", "start", "instance"],
    &["vm", "instance", "machine"],
    &["server", "instance"],
    &["turn", "update"],
    &["enable", "update"],
    &["disable", "update"],
    &["ticket", "issue"],
    &["bug", "issue"],
    &["reimburse", "refund"],
    &["meeting", "event"],
    &["standup", "meeting", "event"],
    &["appointment", "event", "booking"],
    &["calendar", "event"],
    &["share", "permission", "collaboration"],
    &["grant", "permission", "access"],
    &["forum", "topic", "post"],
    &["presence", "status"],
    &["transcribe", "transcription"],
    &["translate", "translation"],
    &["tweet", "post"],
    &["dm", "message"],
    &["chat", "message"],
    // workflow and status changes in trackers and inboxes
    &["move", "transition"],
    &["mark", "update", "modify"],
    &["announce", "post", "publish", "tweet"],
    &["react", "reaction"],
    &["money", "balance", "funds"],
];

/// The text of a query that a sentence-embedding model reads: the query without its
/// payload ([`text::query_parts`]), so that what the call would carry does not pull the
/// query's vector towards other tools.
/// The query's API words from the agent-to-API lexicon ([`lexicon::concepts`]) are
/// appended in parentheses ("text the customer (sms message)"): a static model averages
/// its tokens, and the API's words move the query's vector towards the documents that
/// use them (development set: semantic recall@5 0.58 → 0.68, fused 0.82 → 0.85; a
/// held-out set 0.57 → 0.60).
pub fn embedding_query(query: &str) -> String {
    embedding_query_with(query, true)
}

/// [`embedding_query`], with the lexicon's words appended only when `concepts` is set
/// ([`super::SearchParams::query_concepts`]).
pub fn embedding_query_with(query: &str, concepts: bool) -> String {
    let core = text::query_parts(read_part(query).0).core;
    if !concepts {
        return core;
    }
    let analyzer = Analyzer::default();
    let mut extra: Vec<&str> = Vec::new();
    for word in idioms(words(&core)) {
        for t in lexicon::concepts(&analyzer.stem(&word)) {
            if !extra.contains(t) && *t != word.as_str() {
                extra.push(t);
            }
        }
    }
    if extra.is_empty() {
        core
    } else {
        format!("{core} ({})", extra.join(" "))
    }
}

impl SearchIndex {
    /// The vendors a query names, and the query's words without them (when other words
    /// remain).
    fn vendors_in(&self, query_words: &[String]) -> (Vec<String>, Vec<String>) {
        let mut named = Vec::new();
        let mut keep = vec![true; query_words.len()];
        for (slug, names) in &self.vendor_names {
            for name in names {
                if name.is_empty() || name.len() > query_words.len() {
                    continue;
                }
                for start in 0..=query_words.len() - name.len() {
                    if query_words[start..start + name.len()] == name[..] {
                        if !named.contains(slug) {
                            named.push(slug.clone());
                        }
                        keep[start..start + name.len()]
                            .iter_mut()
                            .for_each(|k| *k = false);
                    }
                }
            }
        }
        let rest: Vec<String> = query_words
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(w, _)| w.clone())
            .collect();
        let content = rest.iter().any(|w| !text::is_stop_word(w));
        if content {
            (named, rest)
        } else {
            (named, query_words.to_vec())
        }
    }

    pub(super) fn analyze(&self, query: &str, params: &SearchParams) -> Analyzed {
        let all = words(query);
        let (vendors, rest) = self.vendors_in(&all);
        let rest = idioms(rest);
        let parts = text::query_parts(query);
        let action = (params.action_weight > 0.0)
            .then(|| core_action(&parts.core))
            .flatten();
        let payload = parts.payload;
        let max_idf = self.idf(1);
        let mut seen: Vec<String> = Vec::new();
        let mut terms = Vec::new();
        let mut task = (0f32, 0usize);
        for word in rest
            .iter()
            .filter(|w| !text::is_stop_word(w) && !QUERY_FILLER.contains(&w.as_str()))
        {
            let stem = self.analyzer.stem(word);
            if seen.contains(&stem) {
                continue;
            }
            seen.push(stem.clone());
            let mut alternatives: Vec<(u32, f32)> = Vec::new();
            let exact = self.terms.get(&stem).copied();
            if let Some(id) = exact {
                alternatives.push((id, 1.0));
            }
            for group in SYNONYMS.iter().filter(|g| g.contains(&word.as_str())) {
                for other in group.iter().filter(|o| **o != word.as_str()) {
                    if let Some(&id) = self.terms.get(&self.analyzer.stem(other)) {
                        if !alternatives.iter().any(|a| a.0 == id) {
                            alternatives.push((id, params.expansion_weight));
                        }
                    }
                }
            }
            let mut concept_idf = 0f32;
            if params.concept_weight > 0.0 {
                for target in lexicon::concepts(&stem) {
                    let Some(&id) = self.terms.get(&self.analyzer.stem(target)) else {
                        continue;
                    };
                    concept_idf = concept_idf.max(self.idf(self.postings[id as usize].len()));
                    match alternatives.iter_mut().find(|a| a.0 == id) {
                        Some(a) => a.1 = a.1.max(params.concept_weight),
                        None => alternatives.push((id, params.concept_weight)),
                    }
                }
            }
            if exact.is_none() {
                for id in self.prefix_relatives(&stem) {
                    if !alternatives.iter().any(|a| a.0 == id) {
                        alternatives.push((id, params.expansion_weight * 0.8));
                    }
                }
            }
            // the query term's information: its own idf, else its best stand-in's, else
            // that of the rarest term (an unknown word is not free to miss)
            let idf = match exact {
                Some(id) => self.idf(self.postings[id as usize].len()),
                None => alternatives
                    .iter()
                    .map(|(id, _)| self.idf(self.postings[*id as usize].len()))
                    .fold(None, |m: Option<f32>, x| Some(m.map_or(x, |m| m.max(x))))
                    .unwrap_or(max_idf),
            };
            let idf = if params.concept_idf > 0.0 {
                idf.max(concept_idf * params.concept_idf.min(1.0))
            } else {
                idf
            };
            let share = if payload.contains(word) {
                params.payload_weight.clamp(0.0, 1.0)
            } else {
                1.0
            };
            if share == 1.0 {
                task = (task.0 + idf, task.1 + 1);
            }
            terms.push((idf * share, alternatives));
        }
        let mut reached: Vec<u32> = terms
            .iter()
            .flat_map(|(_, alts)| alts.iter().map(|a| a.0))
            .collect();
        reached.sort_unstable();
        reached.dedup();
        Analyzed {
            terms,
            task,
            reached,
            vendors,
            action,
        }
    }

    /// Vocabulary terms related to an unknown stem by a shared prefix: terms that start
    /// with it (stem ≥ 4 characters), and terms of ≥ 3 characters it starts with that
    /// cover at least half of it ("refer" → "ref").
    fn prefix_relatives(&self, stem: &str) -> Vec<u32> {
        let mut out = Vec::new();
        if stem.len() >= 4 {
            for (term, &id) in self.sorted_terms.range(stem.to_string()..) {
                if !term.starts_with(stem) || out.len() >= 8 {
                    break;
                }
                out.push(id);
            }
        }
        for cut in (3..stem.len()).rev() {
            if !stem.is_char_boundary(cut) || cut * 2 < stem.len() {
                continue;
            }
            if let Some(&id) = self.terms.get(&stem[..cut]) {
                out.push(id);
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_query_is_cut_to_its_first_64_words() {
        let q = (1..=100)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" \n ");
        let (read, cut) = read_part(&q);
        assert_eq!(cut, Some(Cut::Words));
        assert_eq!(read.split_whitespace().count(), MAX_QUERY_WORDS);
        assert!(read.ends_with("w64"), "{read}");
        let short = "store NPM_TOKEN as an encrypted Actions secret on the acme/web repo";
        assert_eq!(read_part(short), (short, None));
        // leading and trailing whitespace is not the request: never counted, never a cut
        assert_eq!(
            read_part(&format!("{}refund a charge \n", " ".repeat(3000))),
            ("refund a charge", None)
        );
        // punctuation-joined words count as the runs the ranking reads
        let commas = "a,".repeat(400);
        let (read, cut) = read_part(&commas);
        assert_eq!(cut, Some(Cut::Words));
        assert_eq!(
            read.chars().filter(|c| c.is_alphanumeric()).count(),
            MAX_QUERY_RUNS
        );
    }

    #[test]
    fn a_wide_query_is_cut_at_2000_characters_at_a_word_end() {
        let q = "é".repeat(3000);
        let (read, cut) = read_part(&q);
        assert_eq!(cut, Some(Cut::Characters));
        assert_eq!(read.chars().count(), MAX_QUERY_CHARS);
        let exact = "x".repeat(MAX_QUERY_CHARS);
        assert_eq!(read_part(&exact), (exact.as_str(), None));
        assert_eq!(read_part(&format!("{exact} \n")), (exact.as_str(), None));
        assert_eq!(read_part(""), ("", None));
        // a word the limit would split is left out whole
        let word = "é".repeat(1995);
        let q = format!("{word} refund");
        assert_eq!(read_part(&q), (word.as_str(), Some(Cut::Characters)));
    }
}
