//! Toolbox search (SPEC §3.4, shared by `find_tool`, `graft tool search` and the console).
//!
//! A tool matches when every word of the query occurs, case-insensitively, in its
//! vendor, name or description; `_`, `-`, `/` and `.` separate words in names. Hits are
//! ranked exact name (0) > every word in the vendor or name (1) > a word only in the
//! description (2); ties by vendor, then name.
//!
//! Speed: the index keeps one lower-cased haystack of all tools, one line per tool, and
//! finds each query word with a SIMD substring search over it (`memchr::memmem`), so a
//! query costs a few passes over a few megabytes instead of one search per tool.

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
    /// 0 exact name, 1 all words in vendor/name, 2 description.
    pub tier: u8,
}

/// An immutable search index over a toolbox snapshot.
#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: Vec<SearchDoc>,
    /// Lower-cased `vendor vendor__name name name-words \x1f description\n` per doc, concatenated.
    haystack: Vec<u8>,
    /// Start offset of each doc's line in `haystack`.
    starts: Vec<usize>,
    /// Offset where each doc's description begins (after the `\x1f`).
    desc_starts: Vec<usize>,
}

/// Splits a query into lower-cased words (whitespace separated; empty words dropped).
pub fn query_words(query: &str) -> Vec<String> {
    query.split_whitespace().map(|w| w.to_lowercase()).collect()
}

fn flatten(s: &str) -> String {
    // newlines and the field separator never occur inside a line of the haystack
    s.to_lowercase().replace(['\n', '\r', '\x1f'], " ")
}

impl SearchIndex {
    /// Builds the index; documents are sorted by (vendor, name) so ties are resolved by
    /// position.
    pub fn build(mut docs: Vec<SearchDoc>) -> Self {
        docs.sort_by(|a, b| (&a.vendor, &a.name).cmp(&(&b.vendor, &b.name)));
        let mut haystack = Vec::new();
        let mut starts = Vec::with_capacity(docs.len());
        let mut desc_starts = Vec::with_capacity(docs.len());
        for d in &docs {
            starts.push(haystack.len());
            haystack.extend_from_slice(flatten(&d.vendor).as_bytes());
            haystack.push(b' ');
            // the qualified MCP name, for a query like "stripe__get_customers"
            haystack.extend_from_slice(flatten(&format!("{}__{}", d.vendor, d.name)).as_bytes());
            haystack.push(b' ');
            // names: both the raw name (for "get_customer") and its words ("get customer")
            haystack.extend_from_slice(flatten(&d.name).as_bytes());
            haystack.push(b' ');
            let words = d.name.replace(['_', '-', '/', '.'], " ");
            haystack.extend_from_slice(flatten(&words).as_bytes());
            haystack.push(0x1f);
            desc_starts.push(haystack.len());
            haystack.extend_from_slice(flatten(&d.description).as_bytes());
            haystack.push(b'\n');
        }
        Self {
            docs,
            haystack,
            starts,
            desc_starts,
        }
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

    fn doc_at(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// For one word: per matching doc, whether it matched in the vendor/name part.
    /// Fills `out` indexed by doc: 0 no match, 1 description only, 2 vendor/name.
    /// The first match in a doc decides (the name part comes first in its line), so
    /// the search jumps to the next doc after each match.
    fn match_word(&self, word: &str, out: &mut [u8]) {
        let finder = memmem::Finder::new(word.as_bytes());
        let mut at = 0;
        while let Some(found) = finder.find(&self.haystack[at..]) {
            let pos = at + found;
            let doc = self.doc_at(pos);
            out[doc] = if pos + word.len() <= self.desc_starts[doc] {
                2
            } else {
                1
            };
            at = self
                .starts
                .get(doc + 1)
                .copied()
                .unwrap_or(self.haystack.len());
        }
    }

    /// Searches; returns every hit ranked (tier, vendor, name). An empty query gives
    /// no hits.
    pub fn search(&self, query: &str) -> Vec<Hit> {
        let words = query_words(query);
        if words.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        // all_in_name[d]: every word so far matched in vendor/name; alive[d]: every word matched
        let n = self.docs.len();
        let mut alive = vec![true; n];
        let mut all_in_name = vec![true; n];
        let mut scratch = vec![0u8; n];
        for w in &words {
            scratch.iter_mut().for_each(|x| *x = 0);
            self.match_word(w, &mut scratch);
            for d in 0..n {
                match scratch[d] {
                    0 => alive[d] = false,
                    1 => all_in_name[d] = false,
                    _ => {}
                }
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
            .filter(|&d| alive[d])
            .map(|d| {
                let doc = &self.docs[d];
                let exact = doc.name == exact_joined || is_qualified(doc);
                let tier = if exact {
                    0
                } else if all_in_name[d] {
                    1
                } else {
                    2
                };
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
                ("slack__chat_post_message".into(), 2),
            ]
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
    fn a_word_spanning_two_fields_does_not_match() {
        let idx = SearchIndex::build(vec![doc(1, "ab", "cd", "ef")]);
        assert!(idx.search("cdef").is_empty());
        assert!(idx.search("b c").len() == 1);
    }
}
