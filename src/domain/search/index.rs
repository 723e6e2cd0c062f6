//! The token index (SPEC §3.4, issue 10): per term, the documents and fields that hold
//! it, and the BM25F lexical score (Robertson & Zaragoza 2009, §3.5) normalised to 0–1.

use super::action::{doc_action, Action};
use super::text::{self, words, Analyzer};
use super::types::{Analyzed, Field, SearchDoc, SearchParams, FIELDS};
use std::collections::{BTreeMap, HashMap};

/// A vendor's display name without the words that do not name it ("GitHub v3 REST
/// API" → "GitHub"); the display name itself when nothing would be left.
pub fn vendor_label(display: &str) -> String {
    let kept: Vec<&str> = display
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .filter(|w| !GENERIC_VENDOR_WORDS.contains(&w.to_lowercase().as_str()))
        .collect();
    if kept.is_empty() {
        display.to_string()
    } else {
        kept.join(" ")
    }
}

/// Words of a vendor's display name that do not name the vendor.
const GENERIC_VENDOR_WORDS: &[&str] = &[
    "api",
    "apis",
    "rest",
    "restful",
    "openapi",
    "swagger",
    "service",
    "services",
    "the",
    "web",
    "http",
    "v1",
    "v2",
    "v3",
    "v4",
    "v5",
    "platform",
    "public",
    "reference",
    "spec",
];

/// Per document and field, a term count (saturates at 255).
type FieldCounts = [u8; FIELDS];

/// An immutable index over a snapshot of documents (and, optionally, their embeddings).
#[derive(Debug, Default)]
pub struct SearchIndex {
    pub(super) docs: Vec<SearchDoc>,
    pub(super) analyzer: Analyzer,
    /// Term → id.
    pub(super) terms: HashMap<String, u32>,
    /// Terms in order, for prefix lookups.
    pub(super) sorted_terms: BTreeMap<String, u32>,
    /// Per term: the documents that have it, with per-field counts.
    pub(super) postings: Vec<Vec<(u32, FieldCounts)>>,
    /// Per document: field lengths in terms.
    lengths: Vec<[u16; FIELDS]>,
    /// Average field lengths (≥ 1).
    average: [f32; FIELDS],
    /// Vendor slug → the word sequences that name it in a query.
    pub(super) vendor_names: Vec<(String, Vec<Vec<String>>)>,
    /// Per document: the distinct terms of its name and summary (for coverage).
    heads: Vec<Vec<u32>>,
    /// Per document: the distinct terms of its name (for coverage).
    name_heads: Vec<Vec<u32>>,
    /// Row-major `docs.len() × dim` unit vectors (a zero row: no embedding).
    pub(super) embeddings: Vec<f32>,
    pub(super) dim: usize,
    /// Per document: its vendor's position in `vendor_names`.
    pub(super) vendor_of: Vec<u32>,
    /// Per document: whether it reads (true) or changes something (false).
    pub(super) reads: Vec<bool>,
    /// Row-major `vendor_names.len() × dim` unit centroids (empty without embeddings).
    pub(super) centroids: Vec<f32>,
}

impl SearchIndex {
    /// Builds the index. `embeddings`, when given, is `(dim, rows)` with one row of `dim`
    /// values per document, in `docs` order, each a unit vector or all zeros (no
    /// embedding). Documents keep their order (it is the last tie-break).
    /// Panics: never; a row count that does not match drops the embeddings.
    pub fn build(docs: Vec<SearchDoc>, embeddings: Option<(usize, Vec<f32>)>) -> Self {
        let analyzer = Analyzer::default();
        let mut idx = Self {
            analyzer,
            ..Self::default()
        };
        let mut totals = [0f64; FIELDS];
        let mut vendors: BTreeMap<String, String> = BTreeMap::new();
        let compounds = Compounds::of(&docs);
        for (d, doc) in docs.iter().enumerate() {
            vendors
                .entry(doc.vendor.clone())
                .or_insert_with(|| doc.vendor_name.clone());
            let t = &doc.text;
            let fields = [
                &t.name,
                &t.summary,
                &t.tags,
                &t.path,
                &t.verbs,
                &t.params,
                &t.description,
            ];
            let mut counts: HashMap<u32, FieldCounts> = HashMap::new();
            let mut lengths = [0u16; FIELDS];
            let mut head: Vec<u32> = Vec::new();
            let mut name_head: Vec<u32> = Vec::new();
            for (f, text) in fields.iter().enumerate() {
                let terms = idx.analyzer.terms(&compounds.split(text));
                lengths[f] = terms.len().min(u16::MAX as usize) as u16;
                totals[f] += terms.len() as f64;
                for term in terms {
                    let id = idx.term_id(term);
                    let c = counts.entry(id).or_insert([0; FIELDS]);
                    c[f] = c[f].saturating_add(1);
                    if (f == Field::Name as usize || f == Field::Summary as usize)
                        && !head.contains(&id)
                    {
                        head.push(id);
                    }
                    if f == Field::Name as usize && !name_head.contains(&id) {
                        name_head.push(id);
                    }
                }
            }
            for (id, c) in counts {
                idx.postings[id as usize].push((d as u32, c));
            }
            idx.lengths.push(lengths);
            idx.heads.push(head);
            idx.name_heads.push(name_head);
        }
        let n = docs.len().max(1) as f64;
        for (average, total) in idx.average.iter_mut().zip(totals) {
            *average = ((total / n) as f32).max(1.0);
        }
        for list in &mut idx.postings {
            list.sort_unstable_by_key(|p| p.0);
        }
        idx.vendor_names = vendors
            .into_iter()
            .map(|(slug, display)| {
                let mut names = vec![slug.split('-').map(str::to_string).collect::<Vec<_>>()];
                let display: Vec<String> = words(&display)
                    .into_iter()
                    .filter(|w| !GENERIC_VENDOR_WORDS.contains(&w.as_str()))
                    .collect();
                if !display.is_empty() && !names.contains(&display) {
                    names.push(display);
                }
                let joined = slug.replace('-', "");
                if slug.contains('-') && joined.len() >= 4 {
                    names.push(vec![joined]);
                }
                (slug, names)
            })
            .collect();
        idx.reads = docs
            .iter()
            .map(|d| doc_action(&d.text) == Action::Read)
            .collect();
        idx.vendor_of = docs
            .iter()
            .map(|d| {
                idx.vendor_names
                    .binary_search_by(|(slug, _)| slug.as_str().cmp(&d.vendor))
                    .unwrap_or(0) as u32
            })
            .collect();
        if let Some((dim, rows)) = embeddings {
            if dim > 0 && rows.len() == dim * docs.len() {
                idx.centroids = vec![0f32; dim * idx.vendor_names.len()];
                for (row, &v) in rows.chunks_exact(dim).zip(&idx.vendor_of) {
                    let c = &mut idx.centroids[v as usize * dim..(v as usize + 1) * dim];
                    c.iter_mut().zip(row).for_each(|(c, x)| *c += x);
                }
                for c in idx.centroids.chunks_exact_mut(dim) {
                    let norm = c.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if norm > 0.0 {
                        c.iter_mut().for_each(|x| *x /= norm);
                    }
                }
                idx.embeddings = rows;
                idx.dim = dim;
            }
        }
        idx.docs = docs;
        idx
    }

    /// Which fields of document `doc` the query's words reached, with the index terms
    /// (stemmed) that matched in each, in [`Field::ALL`] order; a word that reached a term
    /// through a synonym, an abbreviation, a prefix or the lexicon names the term it
    /// reached. `query` is read whole: pass its first part ([`super::read_part`]). For
    /// `graft tool search --explain`.
    pub fn matched_fields(
        &self,
        query: &str,
        doc: usize,
        params: &SearchParams,
    ) -> Vec<(Field, Vec<String>)> {
        let q = self.analyze(query, params);
        let name_of: HashMap<u32, &str> =
            self.terms.iter().map(|(t, &id)| (id, t.as_str())).collect();
        let mut out: Vec<(Field, Vec<String>)> = Vec::new();
        for field in Field::ALL {
            let mut terms: Vec<String> = Vec::new();
            for (_, alternatives) in &q.terms {
                for &(term, _) in alternatives {
                    let postings = &self.postings[term as usize];
                    if let Ok(i) = postings.binary_search_by_key(&(doc as u32), |p| p.0) {
                        let t = name_of.get(&term).copied().unwrap_or_default().to_string();
                        if postings[i].1[field as usize] > 0 && !terms.contains(&t) {
                            terms.push(t);
                        }
                    }
                }
            }
            if !terms.is_empty() {
                out.push((field, terms));
            }
        }
        out
    }

    fn term_id(&mut self, term: String) -> u32 {
        if let Some(&id) = self.terms.get(&term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.postings.push(Vec::new());
        self.sorted_terms.insert(term.clone(), id);
        self.terms.insert(term, id);
        id
    }

    /// The indexed documents, in the order given to [`SearchIndex::build`].
    pub fn docs(&self) -> &[SearchDoc] {
        &self.docs
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Whether the index holds embeddings (the semantic ranker can run).
    pub fn has_embeddings(&self) -> bool {
        self.dim > 0
    }

    /// Dimension of the embeddings (0 without).
    pub fn dim(&self) -> usize {
        self.dim
    }

    pub(super) fn idf(&self, df: usize) -> f32 {
        let n = self.docs.len() as f32;
        (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
    }
}

/// Query terms a lexical score is normalized over: a longer query's weight is scaled to
/// this many terms of its average weight ([`SearchIndex::lexical_scores`]).
const NORMALIZED_TERMS: f32 = 12.0;

impl SearchIndex {
    /// Lexical scores (0–1) of every document for an analysed query.
    pub(super) fn lexical_scores(&self, q: &Analyzed, params: &SearchParams) -> Vec<f32> {
        let n = self.docs.len();
        let mut scores = vec![0f32; n];
        // a score is the share of the request's task words a tool matches: payload
        // (ids, numbers, quoted text) can add to it but is not owed, and a long request
        // (an agent's own words, issue 24.1) is read as if it had NORMALIZED_TERMS task
        // terms of its average weight, since no tool names every word of a paragraph
        let (mass, count) = match q.task {
            (m, n) if m > 0.0 => (m, n),
            _ => (q.terms.iter().map(|t| t.0).sum(), q.terms.len()),
        };
        if mass <= 0.0 {
            return scores;
        }
        let total_idf = mass * (NORMALIZED_TERMS / count as f32).min(1.0);
        let mut best = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for (idf, alternatives) in &q.terms {
            for &(term, credit) in alternatives {
                for &(d, counts) in &self.postings[term as usize] {
                    let lengths = &self.lengths[d as usize];
                    let mut tf = 0f32;
                    for f in 0..FIELDS {
                        if counts[f] > 0 {
                            let norm =
                                1.0 - params.b + params.b * lengths[f] as f32 / self.average[f];
                            tf += params.field_weights[f] * counts[f] as f32 / norm;
                        }
                    }
                    let saturated = credit * tf / (params.k1 + tf);
                    let slot = &mut best[d as usize];
                    if *slot == 0.0 {
                        touched.push(d);
                    }
                    if saturated > *slot {
                        *slot = saturated;
                    }
                }
            }
            for &d in &touched {
                scores[d as usize] += idf * best[d as usize];
                best[d as usize] = 0.0;
            }
            touched.clear();
        }
        let w = params.coverage_weight.clamp(0.0, 1.0);
        for (d, s) in scores.iter_mut().enumerate() {
            if *s == 0.0 {
                continue;
            }
            let share = |head: &[u32]| {
                if head.is_empty() {
                    0.0
                } else {
                    head.iter()
                        .filter(|t| q.reached.binary_search(t).is_ok())
                        .count() as f32
                        / head.len() as f32
                }
            };
            let mut covered = share(&self.heads[d]);
            if params.name_coverage > 0.0 {
                covered = covered.max(params.name_coverage.min(1.0) * share(&self.name_heads[d]));
            }
            *s = (*s / total_idf * (1.0 - w + w * covered)).min(1.0);
        }
        scores
    }
}

/// Splits compound words of API names and text ("worklog", "freebusy", "username")
/// into their parts when both parts occur as words of their own in the documents, so a
/// query's "work log" meets them; the compound itself stays too.
struct Compounds {
    words: std::collections::HashSet<String>,
}

impl Compounds {
    /// The words of every document (lower case, identifiers split).
    fn of(docs: &[SearchDoc]) -> Self {
        let mut words = std::collections::HashSet::new();
        for d in docs {
            let t = &d.text;
            for text in [
                &t.name,
                &t.summary,
                &t.tags,
                &t.path,
                &t.params,
                &t.description,
            ] {
                for w in text::words(text) {
                    if w.len() >= 3 && w.chars().all(|c| c.is_ascii_lowercase()) {
                        words.insert(w);
                    }
                }
            }
        }
        Self { words }
    }

    /// `text` with each compound word followed by its parts.
    fn split(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 16);
        for w in text::words(text) {
            out.push_str(&w);
            out.push(' ');
            if w.len() >= 7 && w.chars().all(|c| c.is_ascii_lowercase()) {
                if let Some((a, b)) = (3..=w.len() - 3)
                    .map(|i| w.split_at(i))
                    .find(|(a, b)| self.words.contains(*a) && self.words.contains(*b))
                {
                    out.push_str(a);
                    out.push(' ');
                    out.push_str(b);
                    out.push(' ');
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search::embedding_query;
    use crate::domain::search::tests::{doc, names, toolbox};
    use crate::domain::search::Mode;
    use crate::domain::search::SearchText;

    #[test]
    fn plurals_verb_forms_and_case_meet() {
        let idx = SearchIndex::build(toolbox(), None);
        assert_eq!(
            names(&idx, "PETS STATUS")[0],
            "petstore__find_pets_by_status"
        );
        assert_eq!(names(&idx, "deleting pets")[0], "petstore__delete_pet");
        assert_eq!(names(&idx, "remove a pet")[0], "petstore__delete_pet");
    }

    #[test]
    fn not_every_word_must_occur() {
        let idx = SearchIndex::build(toolbox(), None);
        assert_eq!(
            names(&idx, "issue a refund to a customer for an order")[0],
            "stripe__post_refunds"
        );
    }

    #[test]
    fn abbreviations_synonyms_and_prefixes_reach_the_documents_words() {
        let idx = SearchIndex::build(toolbox(), None);
        assert_eq!(names(&idx, "rename a repo")[0], "github__repos_update");
        assert_eq!(
            names(&idx, "create a git reference")[0],
            "github__git_create_ref"
        );
        assert_eq!(names(&idx, "send an e-mail")[0], "sendgrid__mail_send");
    }

    #[test]
    fn field_weights_put_a_name_match_above_a_description_match() {
        let mut docs = toolbox();
        docs.push(SearchDoc {
            text: SearchText {
                description: "Also mentions a refund somewhere in passing among many other words"
                    .into(),
                ..docs[7].text.clone()
            },
            key: 10,
            name: "pet_misc".into(),
            ..docs[7].clone()
        });
        let idx = SearchIndex::build(docs, None);
        let all = SearchParams {
            lexical_threshold: 0.0,
            ..SearchParams::default()
        };
        let hits = idx.search("refund", None, Mode::Lexical, &all, 50).hits;
        assert_eq!(idx.docs()[hits[0].doc].name, "post_refunds");
        assert_eq!(idx.docs()[hits[1].doc].name, "pet_misc");
        assert!(hits[0].score > 2.0 * hits[1].score, "{hits:?}");
    }

    #[test]
    fn payload_words_weigh_less_than_the_task() {
        // "refund" names the operation; the clause after "once" is about the order
        let idx = SearchIndex::build(toolbox(), None);
        let q = "create a refund once the pet order is delivered";
        let with = idx.search(q, None, Mode::Lexical, &SearchParams::default(), 5);
        assert_eq!(idx.docs()[with.hits[0].doc].name, "post_refunds");
        let flat = SearchParams {
            payload_weight: 1.0,
            ..SearchParams::default()
        };
        let without = idx.search(q, None, Mode::Lexical, &flat, 5);
        // counted in full, the payload's words take a share of the score away
        assert!(
            with.hits[0].score > without.hits[0].score,
            "{with:?} {without:?}"
        );
    }

    #[test]
    fn the_lexicon_leads_an_agents_words_to_the_apis() {
        let mut docs = toolbox();
        docs.push(doc(
            10,
            "openai",
            "create_speech",
            "POST",
            "/audio/speech",
            "Create speech",
        ));
        let idx = SearchIndex::build(docs, None);
        let off = SearchParams {
            concept_weight: 0.0,
            ..SearchParams::default()
        };
        let hits = |p: &SearchParams| {
            idx.search("say it aloud", None, Mode::Lexical, p, 50)
                .hits
                .iter()
                .map(|h| idx.docs()[h.doc].name.clone())
                .collect::<Vec<_>>()
        };
        assert!(hits(&off).is_empty(), "no document has 'aloud'");
        assert_eq!(hits(&SearchParams::default()), ["create_speech"]);
        // the query's embedding text carries the API's words too, without repeats
        assert_eq!(
            embedding_query("text the driver"),
            "text the driver (sms message)"
        );
        assert_eq!(embedding_query("zorblax quindle"), "zorblax quindle");
    }

    #[test]
    fn a_customer_is_not_a_custom_field() {
        let docs = vec![
            doc(
                1,
                "jira",
                "create_custom_field",
                "POST",
                "/field",
                "Create custom field",
            ),
            doc(
                2,
                "stripe",
                "post_customers",
                "POST",
                "/v1/customers",
                "Create a customer",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        assert_eq!(names(&idx, "customer"), ["stripe__post_customers"]);
        assert_eq!(
            names(&idx, "new custom field")[0],
            "jira__create_custom_field"
        );
    }

    #[test]
    fn a_name_the_query_covers_counts_when_the_summary_is_a_note() {
        let docs = vec![
            doc(
                1,
                "netlify",
                "create_site",
                "POST",
                "/sites",
                "Note: environment variable keys and values will soon move to a new endpoint",
            ),
            doc(
                2,
                "netlify",
                "create_site_build",
                "POST",
                "/sites/{site_id}/builds",
                "",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        assert_eq!(names(&idx, "create site")[0], "netlify__create_site");
    }
}
