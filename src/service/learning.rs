//! find_tool learns from what agents pick (issue 24.3): an agent's find_tool is kept for
//! ten minutes ([`LEARN_WINDOW_MS`]); a promote of any tool, or a call of a tool it
//! answered, that follows is evidence that the request's task words mean that tool. The
//! evidence becomes the tools' learned field ([`Learned`]), which every later search reads,
//! whichever agent asks. Only task words are kept ([`search::task_phrase`]): never a
//! payload. A tool's author adds no evidence for its own tool. A person can read and
//! clear a tool's learned phrases.

use super::{Actor, Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::search::{self, Learned, LearnedPhrase, SearchIndex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long after a find_tool a pick counts as its answer (ms): ten minutes.
pub const LEARN_WINDOW_MS: i64 = 10 * 60 * 1000;

/// How long this process reuses the learned field before reading the evidence again, so
/// that what other instances learned arrives (evidence learned here resets it at once).
const LEARNED_TTL: Duration = Duration::from_secs(30);

/// What the agent did with a tool after a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Promoted it: evidence whatever the search answered.
    Promote,
    /// Called it (first-class or through run_tool): evidence only when the search
    /// answered it, since agents call their promoted tools all the time.
    Call,
}

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

impl Graft {
    /// Keeps `agent_id`'s find_tool for [`LEARN_WINDOW_MS`]: its task words and the tools
    /// it answered (`hit_keys`, tool ids). A request with no task words is not kept.
    pub(super) async fn remember_search(
        &self,
        agent_id: i64,
        query: &str,
        hit_keys: &[i64],
    ) -> ServiceResult<()> {
        let Some(phrase) = search::task_phrase(query) else {
            return Ok(());
        };
        let hits = hit_keys
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        db::upsert_recent_search(self.pool(), agent_id, &phrase, &hits, self.now()).await?;
        Ok(())
    }

    /// Records evidence when `agent_id` picks `tool` within [`LEARN_WINDOW_MS`] of its
    /// last find_tool (see [`Pick`]); the tool's author never adds evidence for it.
    /// Never fails the pick: a fault is logged and the pick goes on.
    pub(crate) async fn learn_from_pick(&self, agent_id: i64, tool: &db::ToolRow, pick: Pick) {
        if let Err(e) = self.try_learn(agent_id, tool, pick).await {
            tracing::warn!(agent_id, tool = tool.id, error = %e, "could not learn from a pick");
        }
    }

    async fn try_learn(&self, agent_id: i64, tool: &db::ToolRow, pick: Pick) -> ServiceResult<()> {
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
        let answered = hits.split(',').any(|h| h == tool.id.to_string());
        if pick == Pick::Call && !answered {
            return Ok(());
        }
        db::upsert_evidence(self.pool(), tool.id, agent_id, &phrase, now).await?;
        self.forget_learned();
        Ok(())
    }

    /// Drops this process's learned field so the next search reads the evidence again.
    pub(super) fn forget_learned(&self) {
        *self.inner.learned.write().expect("learned lock") = None;
    }

    /// The learned field of `index`'s documents: cached for [`LEARNED_TTL`] (or until
    /// this process learns or forgets something, or the index is rebuilt).
    pub(super) async fn learned_for(
        &self,
        index: &Arc<SearchIndex>,
    ) -> ServiceResult<Arc<Learned>> {
        if let Some(c) = self.inner.learned.read().expect("learned lock").as_ref() {
            if Arc::ptr_eq(&c.index, index) && c.built.elapsed() < LEARNED_TTL {
                return Ok(c.learned.clone());
            }
        }
        let now = self.now();
        let mut by_phrase: BTreeMap<(i64, String), f32> = BTreeMap::new();
        for e in db::select_evidence(self.pool()).await? {
            *by_phrase.entry((e.tool_id, e.phrase)).or_default() += search::decayed(now - e.at);
        }
        let phrases: Vec<LearnedPhrase> = by_phrase
            .into_iter()
            .map(|((key, phrase), evidence)| LearnedPhrase {
                key,
                phrase,
                evidence,
            })
            .collect();
        let embeddings = match (
            &self.inner.model,
            index.has_embeddings(),
            phrases.is_empty(),
        ) {
            (Some(model), true, false) => {
                let model = model.clone();
                let texts: Vec<String> = phrases
                    .iter()
                    .map(|p| search::embedding_query(&p.phrase))
                    .collect();
                Some(
                    tokio::task::spawn_blocking(move || model.embed(&texts))
                        .await
                        .map_err(|e| ServiceError::Internal(e.into()))?
                        .map_err(ServiceError::Internal)?,
                )
            }
            _ => None,
        };
        let learned = Arc::new(Learned::build(index, &phrases, embeddings));
        *self.inner.learned.write().expect("learned lock") = Some(LearnedCache {
            index: index.clone(),
            built: Instant::now(),
            learned: learned.clone(),
        });
        Ok(learned)
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
