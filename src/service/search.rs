//! Toolbox search as a use case (SPEC §3.4, issue 10): the index over the current
//! toolbox and the one over stored documents' operations, their embeddings (computed
//! once per text and model, kept in the `embeddings` table), and the ranked answers that
//! `find_tool`, `graft tool search` and the console share.

use super::{Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::openapi;
use crate::domain::search::{self, Mode, SearchDoc, SearchIndex, SearchParams, SearchText};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Longest text a model reads for one tool (characters; the model cuts at its own
/// token limit too).
pub const EMBEDDING_TEXT_CHARS: usize = 600;
/// Longest description a hit carries (SPEC §3.4: its first sentence), in characters:
/// short enough that a 10-hit answer, text and structuredContent together, stays under
/// 1,000 tokens (issue 29.5, measured in `api/tokens.rs` on Stripe, Twilio and Slack).
pub const HIT_DESCRIPTION_CHARS: usize = 120;

/// One search hit (SPEC §3.4 `find_tool`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHit {
    /// Vendor slug.
    pub vendor: String,
    /// Tool name.
    pub name: String,
    /// The first sentence of its summary or description, plain text, at most
    /// [`HIT_DESCRIPTION_CHARS`] characters.
    pub description: String,
    /// Whether it is in the asking agent's working set.
    pub promoted: bool,
    /// The current version's readOnlyHint.
    pub read_only_hint: bool,
    /// The current version's destructiveHint.
    pub destructive_hint: bool,
    /// Relevance, 0–1, rounded to 3 decimals (an `f64`, so that it is written as
    /// `0.429`, not as the `f32`'s `0.42899999022483826`).
    pub score: f64,
    /// What its served definition costs a model's context, in tokens (issue 29.1);
    /// absent while not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i64>,
}

/// Why a hit ranked where it did ([`Graft::explain_search`]): each leg's score (0–1)
/// and the fields the request's words matched, with the terms that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct HitExplain {
    pub lexical: f32,
    pub semantic: f32,
    /// What agents' picks taught (issue 24.3).
    pub learned: f32,
    /// `(field, matched terms)`, in the index's field order.
    pub fields: Vec<(&'static str, Vec<String>)>,
}

/// A search's answer: the first `limit` hits and how many cleared the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    /// Ranked hits, best first.
    pub hits: Vec<ToolHit>,
    /// Every hit that cleared the threshold.
    pub total: usize,
    /// What was cut from an over-long query before ranking ([`search::read_part`]).
    #[serde(skip)]
    pub cut: Option<search::Cut>,
}

/// An operation of a stored document that is one `acquire` away.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Acquirable {
    /// Vendor slug.
    pub vendor: String,
    /// Operation key (`operationId`, or `METHOD /path`).
    pub operation_id: String,
    /// Summary (first sentence, plain text).
    pub summary: String,
}

/// Which rankers ran, for `/healthz`, the log and the console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchStatus {
    /// `"semantic"` (lexical and semantic, fused) or `"lexical"`.
    pub mode: &'static str,
    /// The embedding model's id, when loaded.
    pub model: Option<String>,
}

/// The searchable operations of stored documents, with the index over them.
pub(super) struct StoredIndex {
    index: SearchIndex,
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// A text's key in the `embeddings` table: SHA-256, first 16 bytes as hex.
fn text_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
}

fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The search text of a version read from the database, or computed when it has none.
fn text_of(row: &db::SearchDocRow) -> SearchText {
    row.search_text
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| SearchText {
            name: search::text::words(&row.name).join(" "),
            ..SearchText::default()
        })
}

impl Graft {
    /// Which rankers searches use.
    pub fn search_status(&self) -> SearchStatus {
        match &self.inner.model {
            Some(m) => SearchStatus {
                mode: "semantic",
                model: Some(m.id().to_string()),
            },
            None => SearchStatus {
                mode: "lexical",
                model: None,
            },
        }
    }

    /// Fills in the search text of versions made before it existed (one transaction).
    pub(super) async fn backfill_search_text(&self) -> ServiceResult<usize> {
        let rows = db::select_versions_without_search_text(self.pool()).await?;
        if rows.is_empty() {
            return Ok(0);
        }
        let mut tx = self.write_tx().await?;
        for (id, name, operation_id, title, description, method, path, schema) in &rows {
            let schema: Option<serde_json::Value> = serde_json::from_str(schema).ok();
            let text = search::enrich::enrich_version(
                name,
                operation_id.as_deref(),
                title.as_deref(),
                description,
                method,
                path,
                &[],
                schema.as_ref(),
            );
            let json =
                serde_json::to_string(&text).map_err(|e| ServiceError::Internal(e.into()))?;
            db::update_version_search_text(&mut tx, *id, &json).await?;
        }
        tx.commit().await?;
        Ok(rows.len())
    }

    /// Embeddings of `texts` under the loaded model: read from the database, the missing
    /// ones computed (in batches, off the async workers; `progress(done, total)` after
    /// each batch) and stored. `None` without a model.
    async fn embeddings_for(
        &self,
        texts: &[String],
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<Option<(usize, Vec<f32>)>> {
        let Some(model) = self.inner.model.clone() else {
            return Ok(None);
        };
        let dim = model.dim();
        let mut known: HashMap<String, Vec<f32>> = db::select_embeddings(self.pool(), model.id())
            .await?
            .into_iter()
            .map(|(h, b)| (h, bytes_vector(&b)))
            .filter(|(_, v)| v.len() == dim)
            .collect();
        let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();
        let mut missing: Vec<(String, String)> = Vec::new();
        let mut queued: HashSet<&str> = HashSet::new();
        for (t, h) in texts.iter().zip(&hashes) {
            if !known.contains_key(h) && queued.insert(h) {
                missing.push((h.clone(), t.clone()));
            }
        }
        if !missing.is_empty() {
            let total = missing.len();
            let mut done = 0;
            for batch in missing.chunks(64) {
                let m = model.clone();
                let inputs: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
                let vectors = tokio::task::spawn_blocking(move || m.embed(&inputs))
                    .await
                    .map_err(|e| ServiceError::Internal(e.into()))?
                    .map_err(ServiceError::Internal)?;
                let rows: Vec<(String, Vec<u8>)> = batch
                    .iter()
                    .zip(&vectors)
                    .map(|((h, _), v)| (h.clone(), vector_bytes(v)))
                    .collect();
                let mut conn = self.pool().acquire().await?;
                db::insert_embeddings(&mut conn, model.id(), &rows).await?;
                for ((h, _), v) in batch.iter().zip(vectors) {
                    known.insert(h.clone(), v);
                }
                done += batch.len();
                progress(done, total);
            }
        }
        let mut rows = Vec::with_capacity(texts.len() * dim);
        for h in &hashes {
            match known.get(h) {
                Some(v) => rows.extend_from_slice(v),
                None => rows.extend(std::iter::repeat_n(0.0, dim)),
            }
        }
        Ok(Some((dim, rows)))
    }

    /// Computes and stores the embeddings the toolbox and the stored documents lack
    /// (after an import, a new model, or a version made by another process), reporting
    /// `progress(done, missing)`. Returns how many texts the model read (0 without a
    /// model or when nothing was missing).
    pub async fn embed_toolbox(
        &self,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> ServiceResult<usize> {
        if self.inner.model.is_none() {
            return Ok(0);
        }
        let docs = self.tool_docs().await?;
        let mut texts: Vec<String> = docs.iter().map(embedding_text).collect();
        texts.extend(self.stored_docs().await?.iter().map(embedding_text));
        let mut computed = 0;
        self.embeddings_for(&texts, &mut |done, total| {
            computed = total;
            progress(done, total)
        })
        .await?;
        Ok(computed)
    }

    async fn tool_docs(&self) -> ServiceResult<Vec<SearchDoc>> {
        Ok(db::select_search_docs(self.pool())
            .await?
            .into_iter()
            .map(|row| SearchDoc {
                key: row.id,
                text: text_of(&row),
                vendor: row.vendor,
                vendor_name: row.vendor_name,
                name: row.name,
                read_only_hint: row.read_only_hint,
                destructive_hint: row.destructive_hint,
            })
            .collect())
    }

    /// Operations of every stored document that are not tools yet, as search documents
    /// (`key` is the position in the list).
    async fn stored_docs(&self) -> ServiceResult<Vec<SearchDoc>> {
        let mut out = Vec::new();
        for v in db::select_vendors(self.pool()).await? {
            if !v.has_document || v.disabled_at.is_some() {
                continue;
            }
            let Some(text) = db::select_vendor_document(self.pool(), v.id).await? else {
                continue;
            };
            let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let imported: HashSet<String> = db::select_tool_names(self.pool(), v.id)
                .await?
                .into_iter()
                .filter_map(|(_, o)| o)
                .collect();
            for (op, text) in openapi::search_operations(&doc) {
                if !imported.contains(&op.operation_id) {
                    out.push(SearchDoc {
                        key: out.len() as i64,
                        vendor: v.slug.clone(),
                        vendor_name: v.display_name.clone(),
                        name: op.operation_id,
                        text,
                        read_only_hint: false,
                        destructive_hint: false,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The search index over the current toolbox (built on first use after a change).
    pub async fn search_index(&self) -> ServiceResult<Arc<SearchIndex>> {
        if let Some(idx) = self.inner.search.read().expect("search lock").clone() {
            return Ok(idx);
        }
        let _building = self.inner.index_build.lock().await;
        if let Some(idx) = self.inner.search.read().expect("search lock").clone() {
            return Ok(idx);
        }
        let generation = self.search_generation();
        let idx = Arc::new(self.build_index(self.tool_docs().await?).await?);
        let mut slot = self.inner.search.write().expect("search lock");
        // the toolbox changed while this was read: the next search builds afresh
        if self.search_generation() == generation {
            *slot = Some(idx.clone());
        }
        Ok(idx)
    }

    /// An index over `docs` with their embeddings (the missing ones computed and
    /// stored), built off the async workers.
    async fn build_index(&self, docs: Vec<SearchDoc>) -> ServiceResult<SearchIndex> {
        let texts: Vec<String> = docs.iter().map(embedding_text).collect();
        let embeddings = self.embeddings_for(&texts, &mut |_, _| {}).await?;
        tokio::task::spawn_blocking(move || SearchIndex::build(docs, embeddings))
            .await
            .map_err(|e| ServiceError::Internal(e.into()))
    }

    fn search_generation(&self) -> u64 {
        self.inner
            .search_gen
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether the search index over the current toolbox is built (a server keeps it
    /// built in the background, issue 28.12, so no search waits for it).
    pub fn search_ready(&self) -> bool {
        self.inner.search.read().expect("search lock").is_some()
    }

    /// Waits until the search index was dropped by a toolbox change (one waiter: the
    /// server's background builder).
    pub async fn search_dropped(&self) {
        self.inner.search_dropped.notified().await
    }

    async fn stored_index(&self) -> ServiceResult<Arc<StoredIndex>> {
        if let Some(idx) = self.inner.stored_ops.read().expect("cache lock").clone() {
            return Ok(idx);
        }
        let _building = self.inner.index_build.lock().await;
        if let Some(idx) = self.inner.stored_ops.read().expect("cache lock").clone() {
            return Ok(idx);
        }
        let index = self.build_index(self.stored_docs().await?).await?;
        let idx = Arc::new(StoredIndex { index });
        *self.inner.stored_ops.write().expect("cache lock") = Some(idx.clone());
        Ok(idx)
    }

    /// The query's embedding (off the async workers), when a model is loaded.
    async fn query_embedding(
        &self,
        query: &str,
        params: &SearchParams,
    ) -> ServiceResult<Option<Vec<f32>>> {
        let Some(model) = self.inner.model.clone() else {
            return Ok(None);
        };
        let q = vec![search::embedding_query_with(query, params.query_concepts)];
        let mut v = tokio::task::spawn_blocking(move || model.embed(&q))
            .await
            .map_err(|e| ServiceError::Internal(e.into()))?
            .map_err(ServiceError::Internal)?;
        Ok(v.pop())
    }

    /// Searches the toolbox (SPEC §3.4): promoted and demoted tools alike, ranked;
    /// `promoted` is relative to `agent_id` when given. `limit` 1..=50.
    /// Errors: `Invalid` for an empty query or a limit out of range.
    pub async fn search_tools(
        &self,
        agent_id: Option<i64>,
        query: &str,
        limit: usize,
    ) -> ServiceResult<SearchResult> {
        self.search_tools_with(agent_id, query, limit, Mode::Fused, &self.search_params())
            .await
    }

    /// Page `page` (from 1; past the last match, the last) of a toolbox search and the
    /// page it is, `per_page` hits a page (1..=50), for the console (issue 28.12); `total`
    /// is every match, with `vendor` (a slug) its hits among the [`SEARCH_DEPTH`] best.
    /// Errors: `Invalid` (an empty query, `per_page` out of range, a page past the depth).
    pub async fn search_tools_page(
        &self,
        agent_id: Option<i64>,
        query: &str,
        vendor: Option<&str>,
        page: usize,
        per_page: usize,
    ) -> ServiceResult<(SearchResult, usize)> {
        check_limit(per_page)?;
        let page = page.max(1);
        let end = page.saturating_mul(per_page);
        if end > SEARCH_DEPTH {
            return Err(ServiceError::Invalid(format!(
                "page {page} is past the {SEARCH_DEPTH} best matches; narrow the search instead"
            )));
        }
        let depth = if vendor.is_some() { SEARCH_DEPTH } else { end };
        let (mut result, _, _) = self
            .ranked(agent_id, query, depth, Mode::Fused, &self.search_params())
            .await?;
        if let Some(v) = vendor {
            result.hits.retain(|h| h.vendor == v);
            result.total = result.hits.len();
        }
        // ranked `end` deep at least, so the hits hold every page up to this one
        let last = result.hits.len().div_ceil(per_page).max(1);
        let page = page.min(last);
        result.hits.drain(..(page - 1) * per_page);
        result.hits.truncate(per_page);
        Ok((result, page))
    }

    /// find_tool (SPEC §3.4) for an agent: [`Graft::search_tools`], and the request is
    /// kept for ten minutes so that the tool the agent then promotes or calls teaches
    /// the next search (issue 24.3, [`super::learning`]).
    pub async fn find_tool(
        &self,
        agent_id: i64,
        query: &str,
        limit: usize,
    ) -> ServiceResult<SearchResult> {
        check_limit(limit)?;
        let started = std::time::Instant::now();
        let (result, keys, idx) = self
            .ranked(
                Some(agent_id),
                query,
                limit,
                Mode::Fused,
                &self.search_params(),
            )
            .await?;
        let keys: Vec<i64> = keys.into_iter().map(|(k, _)| k).collect();
        if let Err(e) = self.remember_search(&idx, agent_id, query, &keys).await {
            tracing::warn!(agent_id, error = %e, "could not keep a search to learn from");
        }
        self.inner
            .metrics
            .find_tool(self.search_status().mode, started.elapsed().as_secs_f64());
        Ok(result)
    }

    /// [`Graft::search_tools`] with the rankers and knobs given (the quality bench
    /// compares them). Without a model every mode is lexical.
    pub async fn search_tools_with(
        &self,
        agent_id: Option<i64>,
        query: &str,
        limit: usize,
        mode: Mode,
        params: &SearchParams,
    ) -> ServiceResult<SearchResult> {
        check_limit(limit)?;
        Ok(self.ranked(agent_id, query, limit, mode, params).await?.0)
    }

    /// Why each hit ranked where it did (`graft tool search --explain`): the search's
    /// answer and, per hit, its scores by leg and the fields its words matched.
    /// Errors: as [`Graft::search_tools`].
    pub async fn explain_search(
        &self,
        query: &str,
        limit: usize,
    ) -> ServiceResult<(SearchResult, Vec<HitExplain>)> {
        check_limit(limit)?;
        let params = self.search_params();
        // the fields are read from the very index that ranked the hits
        let (result, ranked, idx) = self
            .ranked(None, query, limit, Mode::Fused, &params)
            .await?;
        let read = search::read_part(query).0;
        let explains = ranked
            .into_iter()
            .map(|(_, h)| HitExplain {
                lexical: round3(h.lexical),
                semantic: round3(h.semantic),
                learned: round3(h.learned),
                fields: idx
                    .matched_fields(read, h.doc, &params)
                    .into_iter()
                    .map(|(f, terms)| (f.as_str(), terms))
                    .collect(),
            })
            .collect();
        Ok((result, explains))
    }

    /// A search's answer, the tool id and scores of each hit in order, and the index
    /// that ranked them (whose `docs` the hits' `doc` positions refer to).
    async fn ranked(
        &self,
        agent_id: Option<i64>,
        query: &str,
        limit: usize,
        mode: Mode,
        params: &SearchParams,
    ) -> ServiceResult<(SearchResult, Vec<(i64, search::Hit)>, Arc<SearchIndex>)> {
        // never refused for its length (issue 24.1): the ranking reads its first part
        let (query, cut) = search::read_part(query);
        if query.is_empty() {
            return Err(ServiceError::Invalid(
                "query is empty: give one or more words to look for".into(),
            ));
        }
        if !(1..=SEARCH_DEPTH).contains(&limit) {
            return Err(ServiceError::Invalid(format!(
                "limit must be between 1 and {SEARCH_DEPTH} (got {limit})"
            )));
        }
        let idx = self.search_index().await?;
        let embedding = if mode == Mode::Lexical || !idx.has_embeddings() {
            None
        } else {
            self.query_embedding(query, params).await?
        };
        let learned = self.learned_for(&idx).await?;
        let ranked = idx.search_learned(
            query,
            embedding.as_deref(),
            mode,
            params,
            limit,
            Some(&learned),
        );
        let promoted: HashSet<i64> = match agent_id {
            Some(a) => db::select_working_set_ids(self.pool(), a)
                .await?
                .into_iter()
                .collect(),
            None => HashSet::new(),
        };
        let total = ranked.total;
        let ids: Vec<i64> = ranked.hits.iter().map(|h| idx.docs()[h.doc].key).collect();
        let tokens = self.tool_tokens(&ids).await?;
        let keys = ranked
            .hits
            .iter()
            .map(|h| (idx.docs()[h.doc].key, *h))
            .collect();
        let hits = ranked
            .hits
            .into_iter()
            .map(|h| {
                let d = &idx.docs()[h.doc];
                ToolHit {
                    vendor: d.vendor.clone(),
                    name: d.name.clone(),
                    description: d.text.short(HIT_DESCRIPTION_CHARS),
                    promoted: promoted.contains(&d.key),
                    read_only_hint: d.read_only_hint,
                    destructive_hint: d.destructive_hint,
                    score: (f64::from(h.score) * 1000.0).round() / 1000.0,
                    tokens: tokens.get(&d.key).copied().flatten(),
                }
            })
            .collect();
        Ok((SearchResult { hits, total, cut }, keys, idx))
    }

    /// Up to `limit` operations of stored documents that are not tools yet, ranked for
    /// `query` as tools are (SPEC §3.4, find_tool's nothing-matches answer).
    pub async fn acquirable(&self, query: &str, limit: usize) -> ServiceResult<Vec<Acquirable>> {
        if search::text::words(query).is_empty() {
            return Ok(Vec::new());
        }
        let stored = self.stored_index().await?;
        let embedding = if stored.index.has_embeddings() {
            self.query_embedding(query, &self.search_params()).await?
        } else {
            None
        };
        Ok(stored
            .index
            .search(
                query,
                embedding.as_deref(),
                Mode::Fused,
                &self.search_params(),
                limit,
            )
            .hits
            .into_iter()
            .map(|h| {
                let d = &stored.index.docs()[h.doc];
                Acquirable {
                    vendor: d.vendor.clone(),
                    operation_id: d.name.clone(),
                    summary: d.text.short(HIT_DESCRIPTION_CHARS),
                }
            })
            .collect())
    }
}

/// How deep a search ranks at most: the console pages through this many hits
/// ([`Graft::search_tools_page`]); find_tool and the CLI ask for 50 at most.
pub const SEARCH_DEPTH: usize = 500;

/// A search's `limit` for find_tool, the CLI and the bench: 1..=50.
fn check_limit(limit: usize) -> ServiceResult<()> {
    if (1..=50).contains(&limit) {
        Ok(())
    } else {
        Err(ServiceError::Invalid(format!(
            "limit must be between 1 and 50 (got {limit})"
        )))
    }
}

/// The text the model reads for a document.
fn embedding_text(d: &SearchDoc) -> String {
    d.text
        .embedding_text(&search::vendor_label(&d.vendor_name), EMBEDDING_TEXT_CHARS)
}

impl Graft {
    pub(crate) fn invalidate_search(&self) {
        let mut slot = self.inner.search.write().expect("search lock");
        self.inner
            .search_gen
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        *slot = None;
        drop(slot);
        self.inner.search_dropped.notify_one();
        *self.inner.stored_ops.write().expect("cache lock") = None;
    }
}
