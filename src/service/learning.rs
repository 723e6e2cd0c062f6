//! find_tool learns from what agents pick (issue 24.3): an agent's find_tool is kept for
//! ten minutes ([`LEARN_WINDOW_MS`]); the first promote, or call (not a dry run) answered
//! without error, of a tool among its first [`ANSWERED_HITS`] hits is evidence that the request's task words mean that tool, and
//! uses the search up (one search teaches one tool). The evidence becomes the tools'
//! learned field ([`Learned`]), which every later search reads, whichever agent asks.
//! Only the toolbox's own words of the task are kept
//! ([`SearchIndex::learnable_phrase`]): never a payload. A tool's author adds no evidence
//! for its own tool; an agent that demotes a tool takes its evidence for it back; a
//! disabled agent's evidence does not count; each agent keeps at most
//! [`EVIDENCE_PER_AGENT`] rows. A person can read and clear a tool's learned phrases.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::search::{self, Learned, LearnedPhrase, SearchIndex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long after a find_tool a pick counts as its answer (ms): ten minutes.
pub const LEARN_WINDOW_MS: i64 = 10 * 60 * 1000;

/// How many of a search's first hits a pick may teach (find_tool's default limit).
pub const ANSWERED_HITS: usize = 10;

/// Most evidence rows one agent keeps (its oldest go first), so that no agent can grow
/// the table, or the work of reading it, without limit.
pub const EVIDENCE_PER_AGENT: i64 = 500;

/// How long this process reuses the learned field before reading the evidence again, so
/// that what other instances learned arrives (evidence learned here resets it at once).
const LEARNED_TTL: Duration = Duration::from_secs(30);

/// One learned phrase of a tool, as the console and the CLI show it.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedView {
    /// The request's task words.
    pub phrase: String,
    /// How many agents picked the tool after asking for it.
    pub agents: usize,
    /// The newest pick (ms).
    pub last_at: i64,
    /// The evidence after decay: each agent's pick weighs 1 when new, half after 90 days.
    pub weight: f32,
}

/// The cached learned field: built for one index, at one moment.
pub(super) struct LearnedCache {
    index: Arc<SearchIndex>,
    built: Instant,
    learned: Arc<Learned>,
}

/// What rebuilding the learned field needs besides the database: one build at a time,
/// a count of the changes that make a build stale, and the phrases' embeddings so far
/// (each phrase is embedded once per process).
#[derive(Default)]
pub(super) struct LearnedBuild {
    pub(super) generation: std::sync::atomic::AtomicU64,
    pub(super) embedded: tokio::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
}

impl Graft {
    /// Keeps `agent_id`'s find_tool for [`LEARN_WINDOW_MS`]: its task words in the
    /// toolbox's words (`index`) and the tools it answered (`hit_keys`, tool ids). A
    /// request with no such words is not kept; expired searches of every agent go.
    pub(super) async fn remember_search(
        &self,
        index: &SearchIndex,
        agent_id: i64,
        query: &str,
        hit_keys: &[i64],
    ) -> ServiceResult<()> {
        db::delete_recent_searches_before(self.pool(), self.now() - LEARN_WINDOW_MS).await?;
        let Some(phrase) = index.learnable_phrase(query) else {
            db::delete_recent_search(self.pool(), agent_id).await?;
            return Ok(());
        };
        // only the first ANSWERED_HITS count: with a large limit nearly any tool is a hit
        let hits = hit_keys
            .iter()
            .take(ANSWERED_HITS)
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        db::upsert_recent_search(self.pool(), agent_id, &phrase, &hits, self.now()).await?;
        Ok(())
    }

    /// Records evidence when `agent_id` picks `tool` (promotes it, or calls it without
    /// error) within [`LEARN_WINDOW_MS`] of its last find_tool and that search answered
    /// it; the search is then used up. The tool's author never adds evidence for it.
    /// Never fails the pick: a fault is logged and the pick goes on.
    pub(crate) async fn learn_from_pick(&self, agent_id: i64, tool: &db::ToolRow) {
        if let Err(e) = self.try_learn(agent_id, tool).await {
            tracing::warn!(agent_id, tool = tool.id, error = %e, "could not learn from a pick");
        }
    }

    /// An agent demoted `tool`: what its picks taught about the tool is taken back (it
    /// was the wrong tool, or the agent is done with it). Never fails the demote.
    pub(crate) async fn unlearn_pick(&self, agent_id: i64, tool_id: i64) {
        match db::delete_agent_tool_evidence(self.pool(), agent_id, tool_id).await {
            Ok(0) => {}
            Ok(_) => self.forget_learned(),
            Err(e) => {
                tracing::warn!(agent_id, tool = tool_id, error = %e, "could not unlearn a pick")
            }
        }
    }

    async fn try_learn(&self, agent_id: i64, tool: &db::ToolRow) -> ServiceResult<()> {
        let me = Actor::Agent(agent_id).label();
        if tool.first_author == me || tool.authored_by == me {
            return Ok(());
        }
        let Some((phrase, hits, at)) = db::select_recent_search(self.pool(), agent_id).await?
        else {
            return Ok(());
        };
        let now = self.now();
        if now - at > LEARN_WINDOW_MS || now < at {
            return Ok(());
        }
        if !hits.split(',').any(|h| h == tool.id.to_string()) {
            return Ok(());
        }
        // one search teaches one tool
        if db::delete_recent_search(self.pool(), agent_id).await? == 0 {
            return Ok(()); // another pick used it up at the same moment
        }
        db::upsert_evidence(self.pool(), tool.id, agent_id, &phrase, now).await?;
        db::trim_agent_evidence(self.pool(), agent_id, EVIDENCE_PER_AGENT).await?;
        self.forget_learned();
        Ok(())
    }

    /// Drops this process's learned field so the next search reads the evidence again
    /// (and a build that read it before now is not kept).
    pub(super) fn forget_learned(&self) {
        self.inner
            .learned_build
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        *self.inner.learned.write().expect("learned lock") = None;
    }

    /// The learned field of `index`'s documents: cached for [`LEARNED_TTL`] (or until
    /// this process learns or forgets something, or the index is rebuilt). One build at a
    /// time; a build that a change overtook is done again, so a cleared phrase never
    /// comes back from a build that read it before.
    pub(super) async fn learned_for(
        &self,
        index: &Arc<SearchIndex>,
    ) -> ServiceResult<Arc<Learned>> {
        let fresh = |this: &Self| {
            this.inner
                .learned
                .read()
                .expect("learned lock")
                .as_ref()
                .filter(|c| Arc::ptr_eq(&c.index, index) && c.built.elapsed() < LEARNED_TTL)
                .map(|c| c.learned.clone())
        };
        if let Some(l) = fresh(self) {
            return Ok(l);
        }
        let build = &self.inner.learned_build;
        let mut embedded = build.embedded.lock().await;
        if let Some(l) = fresh(self) {
            return Ok(l);
        }
        loop {
            let generation = build.generation.load(std::sync::atomic::Ordering::SeqCst);
            let learned = Arc::new(self.build_learned(index, &mut embedded).await?);
            if build.generation.load(std::sync::atomic::Ordering::SeqCst) == generation {
                *self.inner.learned.write().expect("learned lock") = Some(LearnedCache {
                    index: index.clone(),
                    built: Instant::now(),
                    learned: learned.clone(),
                });
                return Ok(learned);
            }
        }
    }

    async fn build_learned(
        &self,
        index: &SearchIndex,
        embedded: &mut std::collections::HashMap<String, Vec<f32>>,
    ) -> ServiceResult<Learned> {
        let now = self.now();
        // one row per tool, agent and phrase: the rows of a phrase are its agents
        let mut by_phrase: BTreeMap<(i64, String), (f32, u32)> = BTreeMap::new();
        for e in db::select_evidence(self.pool()).await? {
            let (evidence, agents) = by_phrase.entry((e.tool_id, e.phrase)).or_default();
            *evidence += search::decayed(now - e.at);
            *agents += 1;
        }
        let phrases: Vec<LearnedPhrase> = by_phrase
            .into_iter()
            .map(|((key, phrase), (evidence, agents))| LearnedPhrase {
                key,
                phrase,
                evidence,
                agents,
            })
            .collect();
        let embeddings = match (&self.inner.model, index.has_embeddings()) {
            (Some(model), true) if !phrases.is_empty() => {
                let missing: Vec<String> = phrases
                    .iter()
                    .map(|p| p.phrase.clone())
                    .filter(|p| !embedded.contains_key(p))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if !missing.is_empty() {
                    let model = model.clone();
                    let params = self.search_params();
                    let texts: Vec<String> = missing
                        .iter()
                        .map(|p| search::embedding_query_with(p, params.query_concepts))
                        .collect();
                    let vectors = tokio::task::spawn_blocking(move || model.embed(&texts))
                        .await
                        .map_err(|e| ServiceError::Internal(e.into()))?
                        .map_err(ServiceError::Internal)?;
                    embedded.extend(missing.into_iter().zip(vectors));
                }
                Some(
                    phrases
                        .iter()
                        .map(|p| embedded.get(&p.phrase).cloned().unwrap_or_default())
                        .collect(),
                )
            }
            _ => None,
        };
        Ok(Learned::build(index, &phrases, embeddings))
    }

    /// A tool's learned phrases (issue 24.3), strongest first.
    /// Errors: `ToolNotFound`.
    pub async fn learned_phrases(
        &self,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<Vec<LearnedView>> {
        let tool = self.tool(vendor, name).await?;
        let now = self.now();
        let mut by_phrase: BTreeMap<String, LearnedView> = BTreeMap::new();
        for e in db::select_tool_evidence(self.pool(), tool.id).await? {
            let v = by_phrase.entry(e.phrase.clone()).or_insert(LearnedView {
                phrase: e.phrase,
                agents: 0,
                last_at: 0,
                weight: 0.0,
            });
            v.agents += 1;
            v.last_at = v.last_at.max(e.at);
            v.weight += search::decayed(now - e.at);
        }
        let mut out: Vec<LearnedView> = by_phrase.into_values().collect();
        out.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.phrase.cmp(&b.phrase)));
        Ok(out)
    }

    /// Forgets what find_tool learned for a tool: its phrases stop counting at once on
    /// this instance, and within 30 seconds on others. Only people may; answers how many
    /// pieces of evidence went. Errors: `ToolNotFound`, `Invalid` for an agent.
    pub async fn clear_learned(
        &self,
        actor: &Actor,
        vendor: &str,
        name: &str,
    ) -> ServiceResult<u64> {
        if matches!(actor, Actor::Agent(_)) {
            return Err(ServiceError::Invalid(
                "only a person can clear what find_tool learned".into(),
            ));
        }
        let tool = self.tool(vendor, name).await?;
        let gone = db::delete_tool_evidence(self.pool(), tool.id).await?;
        self.forget_learned();
        Ok(gone)
    }
}
