//! Toolbox search (SPEC §3.4, shared by `find_tool`, `graft tool search` and the console).
//!
//! A tool matches when every word of the query occurs, case-insensitively, in its
//! vendor, name or description; `_`, `-`, `/` and `.` separate words in names. Hits are
//! ranked exact name (0) > every word in the name (1) > every word in the vendor or the
//! name, some only in the vendor (2) > a word only in the description (3); ties by vendor,
//! then name. (A vendor word counts below a name word, so "pet" finds `get_pet_by_id`
//! before every other petstore tool.)
//!
//! Speed: a query word has no whitespace, so it can only occur inside one
//! whitespace-separated token of a tool's text. The index keeps the distinct lower-cased
//! tokens once, in one buffer, with a posting list per token (which tools have it, and
//! whether in the vendor/name part); a word is found with one SIMD substring search
//! (`memchr::memmem`) over the token buffer, a fraction of the text's size.

use memchr::memmem;

/// One toolbox entry as the index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDoc {
    /// Database id of the tool.
    pub tool_id: i64,
    /// Vendor slug.
    pub vendor: String,
    /// Tool name within the vendor.
    pub name: String,
    /// The current version's description.
    pub description: String,
    /// The current version's readOnlyHint.
    pub read_only_hint: bool,
    /// The current version's destructiveHint.
    pub destructive_hint: bool,
}

/// A ranked hit: the document's position in [`SearchIndex::docs`] and its rank tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Index into [`SearchIndex::docs`].
    pub doc: usize,
    /// 0 exact name, 1 every word in the name, 2 every word in the vendor or name, 3 a
    /// word only in the description.
    pub tier: u8,
}

/// An immutable search index over a toolbox snapshot.
#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: Vec<SearchDoc>,
    /// Distinct lower-cased tokens, each followed by `\n`.
    vocab: Vec<u8>,
    /// Start offset of each token in `vocab`.
    vocab_starts: Vec<usize>,
    /// Per token: `(doc, level)`, one entry per doc with its highest level: 3 the name,
    /// 2 the vendor, 1 the description.
    postings: Vec<Vec<(u32, u8)>>,
}

/// Splits a query into lower-cased words (whitespace separated; empty words dropped).
/// `-` and `/` separate words too, as in names ("find-pets" finds `find_pets_by_status`).
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| c.is_whitespace() || c == '-' || c == '/')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

impl SearchIndex {
    /// Builds the index; documents are sorted by (vendor, name) so ties are resolved by
    /// position.
    pub fn build(mut docs: Vec<SearchDoc>) -> Self {
        docs.sort_by(|a, b| (&a.vendor, &a.name).cmp(&(&b.vendor, &b.name)));
        let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut idx = Self::default();
        for (d, doc) in docs.iter().enumerate() {
            // levels: 3 the name (raw, and its words: `_`, `-`, `/`, `.` separate words in
            // names), 2 the vendor (and the qualified MCP name), 1 the description
            let name_part = format!(
                "{} {}",
                doc.name,
                doc.name.replace(['_', '-', '/', '.'], " ")
            )
            .to_lowercase();
            let vendor_part = format!("{} {}__{}", doc.vendor, doc.vendor, doc.name).to_lowercase();
            let description = doc.description.to_lowercase();
            for (text, level) in [
                (name_part.as_str(), 3u8),
                (vendor_part.as_str(), 2),
                (description.as_str(), 1),
            ] {
                for token in text.split_whitespace() {
                    let id = *ids.entry(token.to_string()).or_insert_with(|| {
                        idx.vocab_starts.push(idx.vocab.len());
                        idx.vocab.extend_from_slice(token.as_bytes());
                        idx.vocab.push(b'\n');
                        idx.postings.push(Vec::new());
                        idx.postings.len() - 1
                    });
                    let list = &mut idx.postings[id];
                    match list.last_mut() {
                        // the higher levels come first
                        Some(last) if last.0 == d as u32 => {}
                        _ => list.push((d as u32, level)),
                    }
                }
            }
        }
        idx.docs = docs;
        idx
    }

    /// The indexed documents, sorted by (vendor, name).
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

    /// For one word: per doc, 0 no match, 1 description only, 2 vendor/name.
    fn match_word(&self, word: &str, out: &mut [u8]) {
        let finder = memmem::Finder::new(word.as_bytes());
        let mut at = 0;
        while let Some(found) = finder.find(&self.vocab[at..]) {
            let pos = at + found;
            let token = match self.vocab_starts.binary_search(&pos) {
                Ok(i) => i,
                Err(i) => i - 1,
            };
            for &(doc, level) in &self.postings[token] {
                let slot = &mut out[doc as usize];
                if *slot < level {
                    *slot = level;
                }
            }
            at = self
                .vocab_starts
                .get(token + 1)
                .copied()
                .unwrap_or(self.vocab.len());
        }
    }

    /// Searches; returns every hit ranked (tier, vendor, name). An empty query gives
    /// no hits.
    pub fn search(&self, query: &str) -> Vec<Hit> {
        let words = query_words(query);
        if words.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        // weakest[d]: the lowest level at which some word matched (0: a word did not)
        let n = self.docs.len();
        let mut weakest = vec![3u8; n];
        let mut scratch = vec![0u8; n];
        for w in &words {
            scratch.iter_mut().for_each(|x| *x = 0);
            self.match_word(w, &mut scratch);
            for d in 0..n {
                weakest[d] = weakest[d].min(scratch[d]);
            }
        }
        let exact_joined = words.join("_");
        let is_qualified = |doc: &SearchDoc| {
            exact_joined.len() == doc.vendor.len() + 2 + doc.name.len()
                && exact_joined.starts_with(doc.vendor.as_str())
                && exact_joined[doc.vendor.len()..].starts_with("__")
                && exact_joined.ends_with(doc.name.as_str())
        };
        let mut hits: Vec<Hit> = (0..n)
            .filter(|&d| weakest[d] > 0)
            .map(|d| {
                let doc = &self.docs[d];
                let exact = doc.name == exact_joined || is_qualified(doc);
                // 0 exact name, 1 every word in the name, 2 every word in the vendor or
                // name, 3 a word only in the description
                let tier = if exact { 0 } else { 4 - weakest[d] };
                Hit { doc: d, tier }
            })
            .collect();
        // docs are sorted by (vendor, name): a stable sort by tier keeps that order within a tier
        hits.sort_by_key(|h| h.tier);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: i64, vendor: &str, name: &str, description: &str) -> SearchDoc {
        SearchDoc {
            tool_id: id,
            vendor: vendor.into(),
            name: name.into(),
            description: description.into(),
            read_only_hint: false,
            destructive_hint: false,
        }
    }

    fn index() -> SearchIndex {
        SearchIndex::build(vec![
            doc(1, "stripe", "get_customers", "List all customers"),
            doc(2, "stripe", "post_customers", "Create a customer"),
            doc(
                3,
                "petstore",
                "find_pets_by_status",
                "Finds Pets by status. Multiple status values",
            ),
            doc(4, "github", "customers", "Exact name"),
            doc(
                5,
                "slack",
                "chat_post_message",
                "Sends a message to a channel about customers",
            ),
        ])
    }

    fn names(idx: &SearchIndex, q: &str) -> Vec<(String, u8)> {
        idx.search(q)
            .iter()
            .map(|h| {
                (
                    format!("{}__{}", idx.docs()[h.doc].vendor, idx.docs()[h.doc].name),
                    h.tier,
                )
            })
            .collect()
    }

    #[test]
    fn every_word_must_occur_case_insensitively() {
        let idx = index();
        assert_eq!(
            names(&idx, "PETS STATUS"),
            vec![("petstore__find_pets_by_status".into(), 1)]
        );
        assert!(names(&idx, "pets customer").is_empty());
        assert!(idx.search("   ").is_empty());
    }

    #[test]
    fn ranking_exact_then_name_then_description_ties_by_vendor_name() {
        let idx = index();
        assert_eq!(
            names(&idx, "customers"),
            vec![
                ("github__customers".into(), 0),
                ("stripe__get_customers".into(), 1),
                ("stripe__post_customers".into(), 1),
                ("slack__chat_post_message".into(), 3),
            ]
        );
    }

    #[test]
    fn a_word_in_the_name_ranks_above_one_only_in_the_vendor() {
        let idx = SearchIndex::build(vec![
            doc(1, "petstore", "create_user", "Create a user"),
            doc(2, "petstore", "get_pet_by_id", "Find a pet"),
            doc(3, "petstore", "get_inventory", "Inventories by status"),
        ]);
        assert_eq!(
            names(&idx, "pet"),
            vec![
                ("petstore__get_pet_by_id".into(), 1),
                ("petstore__create_user".into(), 2),
                ("petstore__get_inventory".into(), 2),
            ]
        );
        assert_eq!(
            names(&idx, "get pet")[0],
            ("petstore__get_pet_by_id".into(), 1)
        );
        assert_eq!(
            names(&idx, "get pet")[1],
            ("petstore__get_inventory".into(), 2)
        );
    }

    #[test]
    fn vendor_and_separated_name_words_match() {
        let idx = index();
        assert_eq!(names(&idx, "slack post message").len(), 1);
        assert_eq!(
            names(&idx, "stripe__get_customers"),
            vec![("stripe__get_customers".into(), 0)]
        );
        assert_eq!(
            names(&idx, "get customers")[0],
            ("stripe__get_customers".into(), 0)
        );
    }

    #[test]
    fn dashes_and_slashes_separate_query_words() {
        let idx = index();
        assert_eq!(
            names(&idx, "find-pets")[0].0,
            "petstore__find_pets_by_status"
        );
        assert_eq!(
            names(&idx, "pets/status")[0].0,
            "petstore__find_pets_by_status"
        );
    }

    #[test]
    fn a_word_spanning_two_fields_does_not_match() {
        let idx = SearchIndex::build(vec![doc(1, "ab", "cd", "ef")]);
        assert!(idx.search("cdef").is_empty());
        assert!(idx.search("b c").len() == 1);
    }
}
