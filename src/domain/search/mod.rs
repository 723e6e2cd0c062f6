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

mod action;
pub mod enrich;
mod index;
mod learned;
pub mod lexicon;
mod query;
mod rank;
pub mod text;
mod types;

pub use action::{doc_action, query_action, Action};
pub use enrich::{enrich, EnrichInput, SearchText};
pub use index::{vendor_label, SearchIndex};
pub use learned::{decayed, task_phrase, Learned, LearnedPhrase, HALF_LIFE_MS};
pub use query::{
    embedding_query, embedding_query_with, read_part, Cut, MAX_QUERY_CHARS, MAX_QUERY_RUNS,
    MAX_QUERY_WORDS,
};
pub use types::{Field, Hit, Mode, Ranked, SearchDoc, SearchParams, FIELDS};

/// Documents and helpers shared by the tests of this module's files.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn doc(
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

    pub(super) fn toolbox() -> Vec<SearchDoc> {
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

    pub(super) fn names(idx: &SearchIndex, q: &str) -> Vec<String> {
        idx.search(q, None, Mode::Lexical, &SearchParams::default(), 50)
            .hits
            .iter()
            .map(|h| format!("{}__{}", idx.docs()[h.doc].vendor, idx.docs()[h.doc].name))
            .collect()
    }
}
