//! Toolbox search (SPEC §3.4, issue 10): one ranking for `find_tool`, `graft tool search`,
//! the console's Toolbox and the acquirable operations of stored documents.
//!
//! A document is a tool version's (or an operation's) [`SearchText`], computed once by
//! [`enrich`]. Two rankers score it against a query:
//! - **lexical**: BM25F (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
//!   BM25 and Beyond", 2009, §3.5) over stemmed terms, with a weight per field (name and
//!   summary above tags and path, above the description); a query word also looks, at a
//!   lower credit, for a few abbreviations and synonyms ("repo", "rename"), for the API
//!   words the agent-to-API lexicon gives it ([`lexicon`]: "text" → sms, message;
//!   "aloud" → speech) and, when it is not in the toolbox, for words sharing its prefix.
//!   Its score is normalised to 0–1 as the share of the query's information (idf) that
//!   the document matches, saturated per term, so it means the same for every query and
//!   toolbox size;
//! - **semantic**: the cosine between sentence embeddings of the query (its task words
//!   and their lexicon words, [`embedding_query`]) and of the document (computed
//!   elsewhere, by the service's model), mapped to 0–1.
//!
//! Three rules then order the hits by what the request asks, not only by its words
//! (each a knob of [`SearchParams`], tuned on the development set and checked on a
//! held-out set, `benches/search_heldout.json`):
//! - the action: a request to read ("what's on…", "list…") ranks operations that change
//!   something lower, and one to change ("add…", "cancel…") ranks reads lower
//!   ([`query_action`], [`doc_action`]);
//! - the vendor as a whole: the query's closeness to each vendor's centroid embedding
//!   scales its hits (a bank-account question prefers the banking API);
//! - variety: without a named vendor, a vendor's hits beyond its first two decay, so
//!   the first five show the vendors that fit rather than five tools of one.
//!
//! The fused score is a weighted sum of the two ([`SearchParams`]; weights tuned on the
//! development set in `benches/search_devset.json`: reciprocal-rank fusion of a weak and
//! a strong ranker scored below the strong one alone). A vendor named in the query (its
//! slug or display name) ranks that vendor's tools first. When no document's fused score
//! clears [`SearchParams::threshold`], nothing matches; otherwise the hits are the
//! documents above a lower floor ([`SearchParams::floor_share`] of the threshold), so a
//! right answer ranked below a strong first hit is not cut.
//! Ties go to the higher lexical score, then the shorter name, then the order of the
//! documents as given: never to a vendor's alphabetical place.

pub mod enrich;
pub mod lexicon;
pub mod text;

pub use enrich::{enrich, EnrichInput, SearchText};
use std::collections::{BTreeMap, HashMap};
use text::{words, Analyzer};

/// Number of BM25F fields.
pub const FIELDS: usize = 7;

/// The fields of a document, in [`SearchParams::field_weights`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Tool name and operationId words.
    Name = 0,
    /// Summary.
    Summary,
    /// Tags.
    Tags,
    /// Path words.
    Path,
    /// Verbs implied by the method.
    Verbs,
    /// Parameter names.
    Params,
    /// Description.
    Description,
}

/// One searchable entry: a tool's current version, or an operation of a stored document.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchDoc {
    /// The caller's key (a tool id, or a position in a list of operations).
    pub key: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Vendor display name (`GitHub`), for recognising the vendor in a query.
    pub vendor_name: String,
    /// Tool name, or the operation key of a stored operation.
    pub name: String,
    /// The enriched text.
    pub text: SearchText,
    /// readOnlyHint.
    pub read_only_hint: bool,
    /// destructiveHint.
    pub destructive_hint: bool,
}

/// Ranking knobs. [`SearchParams::default`] holds the values tuned on the development
/// set (issue 10); the quality bench overrides them to compare rankers.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchParams {
    /// BM25 term-frequency saturation `k1`.
    pub k1: f32,
    /// BM25 length normalisation `b` (same for every field).
    pub b: f32,
    /// Weight of each [`Field`].
    pub field_weights: [f32; FIELDS],
    /// Credit (0–1) for a match through a synonym, abbreviation or shared prefix.
    pub expansion_weight: f32,
    /// How much the lexical score rewards a document whose name and summary the query
    /// covers (0: not at all; the score is multiplied by `1 - w + w × covered share`),
    /// so "list pull requests" prefers "List pull requests" over "List commits on a
    /// pull request".
    pub coverage_weight: f32,
    /// Share of the lexical score in the fused score (the rest is semantic).
    pub lexical_weight: f32,
    /// Cosine at or below which the semantic score is 0.
    pub cosine_floor: f32,
    /// Cosine at or above which the semantic score is 1.
    pub cosine_ceiling: f32,
    /// Added to the ranking key of a named vendor's tools.
    pub vendor_boost: f32,
    /// Least fused score of the best hit (with a query embedding): when no document
    /// reaches it, nothing matches.
    pub threshold: f32,
    /// Least lexical score of the best hit when there is no query embedding.
    pub lexical_threshold: f32,
    /// Once the best hit clears its threshold, the least score of the other hits, as a
    /// share of that threshold (a hit far below it is noise, not a lower-ranked answer).
    pub floor_share: f32,
    /// Share of its information that a payload word of the query keeps (see
    /// [`text::query_parts`]: times, numbers, names of channels, a clause about the
    /// circumstances); 1 treats payload like any other word.
    pub payload_weight: f32,
    /// How much the query's closeness to a vendor as a whole counts (0: not at all).
    /// Each vendor's centroid (the mean of its tools' embeddings) is compared with the
    /// query's embedding, the cosines rescaled to 0–1 between the farthest and the
    /// nearest vendor, and a hit's ranking key is multiplied by `1 - w + w × that`: a
    /// query about a bank account prefers the banking API's "balance" to a music API's
    /// "check saved albums". Needs embeddings; ignored when the query names a vendor.
    pub vendor_prior: f32,
    /// When the query names no vendor, the ranking key of a vendor's n-th hit beyond
    /// the first [`SearchParams::vendor_keep`] is multiplied by `vendor_decay^n`, so the
    /// first hits show the vendors that fit rather than many tools of one (1: off).
    pub vendor_decay: f32,
    /// Hits per vendor kept at full key before [`SearchParams::vendor_decay`] applies.
    pub vendor_keep: usize,
    /// When the query's action is known ([`query_action`]: "what's on…", "list…" read;
    /// "add…", "cancel…" change) and a document's is the other ([`Action`] of its name's
    /// verbs, else of its method), its ranking key is multiplied by `1 - w`.
    pub action_weight: f32,
    /// Credit (0–1) for a match through the agent-to-API lexicon
    /// ([`lexicon::CONCEPTS`]: "text" → sms, message).
    pub concept_weight: f32,
    /// Whether a query word that reaches API words through the lexicon carries the
    /// information (idf) of the rarest of them when that is more than its own (1) or
    /// only its own (0): "aloud" is rare in documents, "text" common, and neither says
    /// how telling "speech" or "sms" would be.
    pub concept_idf: f32,
    /// Coverage also counts the name alone (0–1: the name's covered share times this,
    /// when more than that of name and summary together), so a tool whose summary is
    /// missing or a long note still counts as covered by "create site".
    pub name_coverage: f32,
}

impl Default for SearchParams {
    fn default() -> Self {
        // tuned on benches/search_devset.json (147 queries, 10,764 tools) with the
        // static model: see the closing note of issue 10 for the grid
        Self {
            k1: 0.8,
            b: 0.5,
            //            name summary tags path verbs params description
            field_weights: [3.0, 2.5, 1.0, 1.5, 1.0, 0.4, 0.8],
            expansion_weight: 0.6,
            coverage_weight: 0.4,
            lexical_weight: 0.7,
            cosine_floor: 0.2,
            cosine_ceiling: 0.8,
            vendor_boost: 0.5,
            threshold: 0.25,
            lexical_threshold: 0.15,
            floor_share: 0.4,
            payload_weight: 0.3,
            vendor_prior: 0.2,
            vendor_decay: 0.8,
            vendor_keep: 2,
            action_weight: 0.3,
            concept_weight: 0.7,
            concept_idf: 0.0,
            name_coverage: 1.0,
        }
    }
}

/// Which rankers a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// BM25F only (also what happens without a query embedding).
    Lexical,
    /// Embeddings only.
    Semantic,
    /// Both, fused.
    Fused,
}

/// A search's answer: the best hits, best first, and how many cleared the floor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranked {
    /// At most the `limit` asked for.
    pub hits: Vec<Hit>,
    /// Every document that cleared the floor (0 when nothing matches).
    pub total: usize,
}

/// A ranked hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index into [`SearchIndex::docs`].
    pub doc: usize,
    /// The score shown to agents, 0–1.
    pub score: f32,
    /// Lexical score, 0–1.
    pub lexical: f32,
    /// Semantic score, 0–1 (0 without embeddings).
    pub semantic: f32,
    /// Whether the query named this document's vendor.
    pub vendor_named: bool,
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

/// Query words of conversation, not of the task ("let the team know", "what did people
/// say"): dropped from queries (documents keep theirs).
const QUERY_FILLER: &[&str] = &[
    "actually",
    "anybody",
    "anyone",
    "basically",
    "everybody",
    "everyone",
    "hey",
    "kind",
    "know",
    "let",
    "lets",
    "like",
    "maybe",
    "ok",
    "okay",
    "people",
    "really",
    "right",
    "said",
    "say",
    "somebody",
    "someone",
    "sort",
    "stuff",
    "thanks",
    "thing",
    "things",
    "whether",
    "whose",
    "yet",
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
    let core = text::query_parts(query).core;
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
    docs: Vec<SearchDoc>,
    analyzer: Analyzer,
    /// Term → id.
    terms: HashMap<String, u32>,
    /// Terms in order, for prefix lookups.
    sorted_terms: BTreeMap<String, u32>,
    /// Per term: the documents that have it, with per-field counts.
    postings: Vec<Vec<(u32, FieldCounts)>>,
    /// Per document: field lengths in terms.
    lengths: Vec<[u16; FIELDS]>,
    /// Average field lengths (≥ 1).
    average: [f32; FIELDS],
    /// Vendor slug → the word sequences that name it in a query.
    vendor_names: Vec<(String, Vec<Vec<String>>)>,
    /// Per document: the distinct terms of its name and summary (for coverage).
    heads: Vec<Vec<u32>>,
    /// Per document: the distinct terms of its name (for coverage).
    name_heads: Vec<Vec<u32>>,
    /// Row-major `docs.len() × dim` unit vectors (a zero row: no embedding).
    embeddings: Vec<f32>,
    dim: usize,
    /// Per document: its vendor's position in `vendor_names`.
    vendor_of: Vec<u32>,
    /// Per document: whether it reads (true) or changes something (false).
    reads: Vec<bool>,
    /// Row-major `vendor_names.len() × dim` unit centroids (empty without embeddings).
    centroids: Vec<f32>,
}

/// A query after analysis.
struct Analyzed {
    /// Per query term: its idf and its (term id, credit) alternatives.
    terms: Vec<(f32, Vec<(u32, f32)>)>,
    /// Every term id a query term reaches (sorted), for coverage.
    reached: Vec<u32>,
    /// Vendors named.
    vendors: Vec<String>,
    /// The action the query asks for ([`query_action`]); `None` also when
    /// [`SearchParams::action_weight`] is 0.
    action: Option<Action>,
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

    fn idf(&self, df: usize) -> f32 {
        let n = self.docs.len() as f32;
        (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
    }

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

    fn analyze(&self, query: &str, params: &SearchParams) -> Analyzed {
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

    /// Lexical scores (0–1) of every document for an analysed query.
    fn lexical_scores(&self, q: &Analyzed, params: &SearchParams) -> Vec<f32> {
        let n = self.docs.len();
        let mut scores = vec![0f32; n];
        let total_idf: f32 = q.terms.iter().map(|t| t.0).sum();
        if total_idf <= 0.0 {
            return scores;
        }
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
            *s = *s / total_idf * (1.0 - w + w * covered);
        }
        scores
    }

    /// Ranks the documents for `query`. `embedding` is the query's unit vector from the
    /// same model as the documents' (ignored when the index has none or its length
    /// differs). Returns nothing when no document clears the threshold; else the best
    /// `limit` hits above the floor, best first, and how many cleared it in all.
    pub fn search(
        &self,
        query: &str,
        embedding: Option<&[f32]>,
        mode: Mode,
        params: &SearchParams,
        limit: usize,
    ) -> Ranked {
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
        let mut hits: Vec<Hit> = (0..self.docs.len())
            .filter_map(|d| {
                let l = lexical[d];
                let s = semantic.get(d).copied().unwrap_or(0.0);
                let score = weight * l + (1.0 - weight) * s;
                (score >= floor && score > 0.0).then(|| Hit {
                    doc: d,
                    score,
                    lexical: l,
                    semantic: s,
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
        // "nothing matches" is decided on the best hit alone
        if !hits.iter().any(|h| h.score >= threshold) {
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

/// What an operation or a request does, in two kinds: reading, or changing something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reads (GET; `get`, `list`, `search` in an RPC-style name).
    Read,
    /// Creates, changes, sends or deletes.
    Change,
}

/// Words of an operation's name that say it reads.
const READ_NAME_WORDS: &[&str] = &[
    "count", "describe", "fetch", "find", "get", "list", "lookup", "query", "read", "retrieve",
    "search", "show", "watch",
];

/// Words of an operation's name that say it changes something. Not "post", "put" (the
/// method, as in `searchForIssuesUsingJqlPost`) or "set" (a replica set).
const CHANGE_NAME_WORDS: &[&str] = &[
    "add", "cancel", "create", "delete", "insert", "mark", "modify", "patch", "remove", "replace",
    "send", "update", "upload",
];

/// An operation's action: GET and HEAD read; PUT, PATCH and DELETE change; POST (and
/// an unknown method) changes unless the name's verbs say only that it reads (RPC-style
/// APIs read with POST: Plaid's `/accounts/balance/get`, Jira's search by POST).
pub fn doc_action(text: &SearchText) -> Action {
    // the method, from its verbs (enrich::method_verbs)
    let verbs: Vec<&str> = text.verbs.split(' ').collect();
    if verbs.contains(&"get") || verbs.contains(&"check") {
        return Action::Read;
    }
    if verbs.contains(&"update") || verbs.contains(&"delete") {
        return Action::Change;
    }
    let name = words(&text.name);
    let reads = name.iter().any(|w| READ_NAME_WORDS.contains(&w.as_str()));
    let changes = name.iter().any(|w| CHANGE_NAME_WORDS.contains(&w.as_str()));
    if reads && !changes {
        Action::Read
    } else {
        Action::Change
    }
}

/// Question words and verbs that open a request to read ("what's on my calendar",
/// "list pull requests", "who starred my repo"). Not "how", "when" or "get": "how do I
/// create…", "when it fails, rerun…", "get rid of…".
const READ_OPENERS: &[&str] = &[
    "browse", "fetch", "find", "list", "look", "lookup", "search", "see", "show", "view", "what",
    "whats", "where", "which", "who", "whose",
];

/// Verbs that open a request to change something ("add a task", "cancel the meeting").
/// Not the words that open a request as often as a noun ("email addresses of…", "text
/// search", "charges made this month", "post", "store").
const CHANGE_OPENERS: &[&str] = &[
    "add",
    "append",
    "archive",
    "assign",
    "ban",
    "buy",
    "cancel",
    "change",
    "close",
    "create",
    "cut",
    "delete",
    "disable",
    "edit",
    "enable",
    "invite",
    "kick",
    "make",
    "mark",
    "merge",
    "move",
    "publish",
    "purge",
    "remind",
    "remove",
    "rename",
    "reopen",
    "reschedule",
    "resize",
    "restart",
    "rerun",
    "revoke",
    "scale",
    "schedule",
    "send",
    "set",
    "share",
    "start",
    "stop",
    "submit",
    "suspend",
    "transcribe",
    "turn",
    "update",
    "upload",
    "void",
];

/// Words that may come before a request's verb and say nothing of the action ("I'd like
/// to", "go ahead and", "we need to"); with apostrophes dropped ("id", "im"), as
/// [`query_action`] reads words.
const LEAD_IN: &[&str] = &[
    "ahead", "go", "id", "im", "ive", "kindly", "like", "need", "wanna", "want", "wed", "youd",
];

/// Reads idioms whose words mean together what none does alone. Takes and returns a
/// query's lower-case words (as [`words`] splits them).
///
/// - "let the team know" asks to tell them, though "let" and "know" are
///   [`QUERY_FILLER`] alone: the "know" of a "let" up to eight words before it becomes
///   "tell". "Let me know" and "let us know" ask for an answer, not a message, and stay
///   filler.
/// - "issue" opening a request before a determiner is the verb ("issue a refund",
///   "I'd like to issue an invoice"), not the tracker's noun ("issue comments") nor its
///   object ("which issue the bot opened"), and becomes "create". (Kept beside
///   "create", "issue" let Stripe's test helpers for Issuing outrank its refunds.)
fn idioms(mut words: Vec<String>) -> Vec<String> {
    const DETERMINERS: &[&str] = &[
        "a", "an", "another", "her", "his", "my", "new", "our", "some", "that", "the", "their",
        "this", "your",
    ];
    for l in 0..words.len() {
        let asks_me = matches!(words.get(l + 1).map(String::as_str), Some("me" | "us"));
        if (words[l] == "let" || words[l] == "lets") && !asks_me {
            if let Some(k) = words[l + 1..].iter().take(8).position(|w| w == "know") {
                words[l + 1 + k] = "tell".to_string();
            }
        }
    }
    let opener = words
        .iter()
        .position(|w| !(w.len() == 1 || says_no_action(w)));
    if let Some(f) = opener {
        let next = words.get(f + 1).map(String::as_str).unwrap_or("");
        let asked_about = f > 0 && READ_OPENERS.contains(&words[f - 1].as_str());
        if (words[f] == "issue" || words[f] == "issuing")
            && DETERMINERS.contains(&next)
            && !asked_about
        {
            words[f] = "create".to_string();
        }
    }
    words
}

/// Whether a word of a request says nothing of its action: a stop word, [`QUERY_FILLER`]
/// or a [`LEAD_IN`] ("please", "I'd like to").
fn says_no_action(w: &str) -> bool {
    text::is_stop_word(w) || QUERY_FILLER.contains(&w) || LEAD_IN.contains(&w)
}

/// The action a query asks for, from its first word that is not a stop word or filler
/// ("please add…", "can you list…"); `None` when that word says neither (or names the
/// object first: "customer refund").
pub fn query_action(query: &str) -> Option<Action> {
    core_action(&text::query_parts(query).core)
}

/// [`query_action`] of a query's core (its words without the payload,
/// [`text::QueryParts::core`]).
fn core_action(core: &str) -> Option<Action> {
    // question words are stop words elsewhere; here they open a request
    let opens = |w: &String| READ_OPENERS.contains(&w.as_str()) || !says_no_action(w);
    let all = idioms(words(&core.replace('\'', "")));
    let at = all.iter().position(opens)?;
    let first = &all[at];
    if READ_OPENERS.contains(&first.as_str()) {
        // a question about how to change something is not a request to read
        let changes_later = all[at + 1..]
            .iter()
            .any(|w| CHANGE_OPENERS.contains(&w.as_str()));
        (!changes_later).then_some(Action::Read)
    } else if CHANGE_OPENERS.contains(&first.as_str()) {
        Some(Action::Change)
    } else {
        None
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
    use serde_json::json;

    fn doc(
        key: i64,
        vendor: &str,
        name: &str,
        method: &str,
        path: &str,
        summary: &str,
    ) -> SearchDoc {
        let schema = json!({"type": "object", "properties": {}});
        SearchDoc {
            key,
            vendor: vendor.into(),
            vendor_name: vendor.into(),
            name: name.into(),
            text: enrich(&EnrichInput {
                name,
                operation_id: None,
                method,
                path,
                summary: Some(summary),
                description: "",
                tags: &[],
                input_schema: Some(&schema),
            }),
            read_only_hint: method == "GET",
            destructive_hint: method == "DELETE",
        }
    }

    fn toolbox() -> Vec<SearchDoc> {
        vec![
            doc(
                1,
                "asana",
                "create_webhook",
                "POST",
                "/webhooks",
                "Establish a webhook",
            ),
            doc(
                2,
                "vercel",
                "create_webhook",
                "POST",
                "/v1/webhooks",
                "Creates a webhook",
            ),
            doc(
                3,
                "github",
                "repos_create_webhook",
                "POST",
                "/repos/{owner}/{repo}/hooks",
                "Create a repository webhook",
            ),
            doc(
                4,
                "github",
                "repos_update",
                "PATCH",
                "/repos/{owner}/{repo}",
                "Update a repository",
            ),
            doc(
                5,
                "github",
                "git_create_ref",
                "POST",
                "/repos/{owner}/{repo}/git/refs",
                "Create a reference",
            ),
            doc(
                6,
                "sendgrid",
                "mail_send",
                "POST",
                "/v3/mail/send",
                "Send an email",
            ),
            doc(
                7,
                "stripe",
                "post_refunds",
                "POST",
                "/v1/refunds",
                "Create a refund",
            ),
            doc(
                8,
                "petstore",
                "delete_pet",
                "DELETE",
                "/pet/{petId}",
                "Deletes a pet",
            ),
            doc(
                9,
                "petstore",
                "find_pets_by_status",
                "GET",
                "/pet/findByStatus",
                "Finds Pets by status",
            ),
        ]
    }

    fn names(idx: &SearchIndex, q: &str) -> Vec<String> {
        idx.search(q, None, Mode::Lexical, &SearchParams::default(), 50)
            .hits
            .iter()
            .map(|h| format!("{}__{}", idx.docs()[h.doc].vendor, idx.docs()[h.doc].name))
            .collect()
    }

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
    fn let_someone_know_asks_to_tell_them() {
        // "let" and "know" are filler alone; together they ask for a message, and the
        // team and channel words alone would rank the tools about teams and channels
        let docs = vec![
            doc(
                1,
                "slack",
                "chat_post_message",
                "POST",
                "/chat.postMessage",
                "Sends a message to a channel.",
            ),
            doc(
                2,
                "slack",
                "admin_conversations_get_teams",
                "GET",
                "/admin.conversations.getTeams",
                "Get all the workspaces a given public or private channel is connected to.",
            ),
            doc(
                3,
                "slack",
                "conversations_list",
                "GET",
                "/conversations.list",
                "Lists all channels in a Slack team.",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        let got = names(
            &idx,
            "let the team know in the channel that the deploy finished",
        );
        assert_eq!(got[0], "slack__chat_post_message", "{got:?}");
        // "let" alone, or a "know" far from it, stays filler
        let w = |q: &str| idioms(words(q));
        assert!(!w("let me see the channels").contains(&"tell".to_string()));
        assert!(!w("let the bot in so the whole team gets to know").contains(&"tell".to_string()));
        assert!(w("lets let everyone in the channel know").contains(&"tell".to_string()));
        // "let me know" asks for an answer; "know" may come well after "let"
        assert!(!w("let me know my stripe balance").contains(&"tell".to_string()));
        assert!(!w("let us know which invoices are overdue").contains(&"tell".to_string()));
        assert!(w("let my whole engineering team over in slack know").contains(&"tell".to_string()));
        // "issue" opening a request is the verb; elsewhere it is the noun
        let creates = |q: &str| w(q).contains(&"create".to_string());
        for q in [
            "please issue a refund",
            "issue an invoice to acme",
            "I'd like to issue a refund to a customer for an order",
            "go ahead and issue a refund",
            "issuing a refund to a customer",
        ] {
            assert!(creates(q), "{q}");
        }
        for q in [
            "issue comments on the repo",
            "close the issue the bot opened",
            "which issue the customer filed is open",
        ] {
            assert!(!creates(q), "{q}");
        }
    }

    #[test]
    fn issue_opening_a_request_is_the_verb() {
        let docs = vec![
            doc(
                1,
                "stripe",
                "post_refunds",
                "POST",
                "/v1/refunds",
                "Create a refund.",
            ),
            doc(
                2,
                "stripe",
                "post_test_helpers_issuing_transactions_transaction_refund",
                "POST",
                "/v1/test_helpers/issuing/transactions/{transaction}/refund",
                "Refund a test-mode Transaction.",
            ),
            doc(
                3,
                "stripe",
                "get_issuing_cards",
                "GET",
                "/v1/issuing/cards",
                "Returns a list of Issuing Card objects.",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        let got = names(&idx, "issue a refund to a customer for an order");
        assert_eq!(got[0], "stripe__post_refunds", "{got:?}");
        let got = names(&idx, "list issuing cards");
        assert_eq!(got[0], "stripe__get_issuing_cards", "{got:?}");
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

    #[test]
    fn the_action_of_a_query_and_of_an_operation() {
        assert_eq!(
            query_action("what's on my calendar tomorrow"),
            Some(Action::Read)
        );
        assert_eq!(
            query_action("please list pull requests"),
            Some(Action::Read)
        );
        assert_eq!(query_action("can you add a task"), Some(Action::Change));
        // lead-ins say nothing; an opening "issue" is the verb
        assert_eq!(
            query_action("I'd like to issue a refund to a customer"),
            Some(Action::Change)
        );
        assert_eq!(
            query_action("go ahead and list the open invoices"),
            Some(Action::Read)
        );
        assert_eq!(
            query_action("cancel tomorrow's standup"),
            Some(Action::Change)
        );
        assert_eq!(query_action("customer refund"), None);
        assert_eq!(query_action("read this paragraph aloud"), None);
        let text = |name: &str, method: &str, path: &str| {
            enrich(&EnrichInput {
                name,
                operation_id: None,
                method,
                path,
                summary: None,
                description: "",
                tags: &[],
                input_schema: None,
            })
        };
        // POST: by the name's verbs (RPC-style APIs read with POST)
        assert_eq!(
            doc_action(&text(
                "accounts_balance_get",
                "POST",
                "/accounts/balance/get"
            )),
            Action::Read
        );
        assert_eq!(
            doc_action(&text("chat_post_message", "POST", "/chat.postMessage")),
            Action::Change
        );
        // other methods say it
        assert_eq!(doc_action(&text("pets", "GET", "/pets")), Action::Read);
        assert_eq!(
            doc_action(&text("pets", "DELETE", "/pets/{id}")),
            Action::Change
        );
        assert_eq!(
            doc_action(&text("search_issues_post", "POST", "/search")),
            Action::Read
        );
        let cases = [
            (
                "mark_message_as_read",
                "PUT",
                "/messages/{id}/read",
                Action::Change,
            ),
            (
                "watch_apps_v1_daemon_set",
                "GET",
                "/watch/daemonsets",
                Action::Read,
            ),
            (
                "list_user_unfollow",
                "DELETE",
                "/users/{id}/following/{t}",
                Action::Change,
            ),
        ];
        for (name, method, path, want) in cases {
            assert_eq!(doc_action(&text(name, method, path)), want, "{name}");
        }
        // a question about how to change is not a read; words that are often nouns
        // open nothing
        assert_eq!(
            query_action("how do I create a webhook"),
            Some(Action::Change)
        );
        assert_eq!(query_action("what is the way to delete a repo"), None);
        assert_eq!(query_action("get rid of the old webhook"), None);
        assert_eq!(query_action("email addresses of everyone"), None);
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
