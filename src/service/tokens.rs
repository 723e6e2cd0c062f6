//! What tools cost a model's context (issue 29.1): each current tool version's served
//! definition counted once in tokens and stored, and the working set's total.

use super::{Graft, ServiceResult};
use crate::db;
use crate::domain::served::{self, Served};

/// Versions counted per round (one read, one transaction).
const PER_ROUND: i64 = 500;

/// The served definition of a row that carries a tool version's fields (`vendor`,
/// `name`, `title`, `description`, `input_schema`, `output_schema`, the four hints and `binding`):
/// one literal for [`db::ToolRow`] and [`db::UncountedVersion`].
macro_rules! served_of {
    ($t:expr) => {{
        let t = $t;
        Served {
            vendor: &t.vendor,
            name: &t.name,
            title: t.title.as_deref(),
            description: &t.description,
            input_schema: &t.input_schema,
            output_schema: t.output_schema.as_deref(),
            hints: [
                t.read_only_hint,
                t.destructive_hint,
                t.idempotent_hint,
                t.open_world_hint,
            ],
            binding: &t.binding,
        }
    }};
}

/// The served fields of a tool's current version.
pub fn served(t: &db::ToolRow) -> Served<'_> {
    served_of!(t)
}

fn served_uncounted(v: &db::UncountedVersion) -> Served<'_> {
    served_of!(v)
}

impl Graft {
    /// Counts the tokens of every current tool version not counted yet and stores them,
    /// with this process's basis (the tokenizer and the schema budget,
    /// [`served::basis`]); with `recount`, also those counted on another basis (a
    /// server's start: a changed GRAFT_SCHEMA_BUDGET, or an older served format). A CLI
    /// command or another instance never recounts what a server counted. Returns how
    /// many it counted; the tokenizer runs off the async threads. Errors: database
    /// faults.
    pub async fn count_tokens(&self, recount: bool) -> ServiceResult<usize> {
        let budget = self.limits().schema_budget;
        let basis = served::basis(budget);
        let mut counted = 0;
        loop {
            let rows =
                db::select_uncounted_versions(self.pool(), &basis, recount, PER_ROUND).await?;
            if rows.is_empty() {
                return Ok(counted);
            }
            let n = rows.len();
            let tokens: Vec<(i64, i64)> = tokio::task::spawn_blocking(move || {
                rows.iter()
                    .map(|v| {
                        let d = served::definition(&served_uncounted(v), budget);
                        (v.version_id, served::tokens(&d))
                    })
                    .collect()
            })
            .await
            .map_err(|e| super::ServiceError::Internal(anyhow::anyhow!("token count: {e}")))?;
            let mut tx = self.write_tx().await?;
            db::update_version_tokens(&mut tx, &tokens, &basis).await?;
            tx.commit().await?;
            counted += n;
            if (n as i64) < PER_ROUND {
                return Ok(counted);
            }
        }
    }

    /// [`Graft::count_tokens`] where a fault must not fail the change that asked: it is
    /// logged, and the next change or start counts again.
    pub async fn count_tokens_logged(&self, recount: bool) {
        match self.count_tokens(recount).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(versions = n, "counted tool tokens"),
            Err(e) => tracing::warn!(error = ?e, "cannot count tool tokens now"),
        }
    }

    /// Tokens of each tool's current version, by tool id (`None` while not counted).
    pub async fn tool_tokens(
        &self,
        ids: &[i64],
    ) -> ServiceResult<std::collections::HashMap<i64, Option<i64>>> {
        Ok(db::select_current_tokens(self.pool(), ids)
            .await?
            .into_iter()
            .collect())
    }

    /// An agent's working-set tokens after each promotion and demotion, `(at ms,
    /// tokens)`, oldest first, from history, each tool counted at its current version.
    pub async fn tokens_over_time(&self, agent_id: i64) -> ServiceResult<Vec<(i64, i64)>> {
        let steps = db::select_history_token_steps(self.pool(), agent_id).await?;
        let mut total = 0i64;
        Ok(steps
            .into_iter()
            .map(|(at, d, tokens)| {
                total = (total + d * tokens).max(0);
                (at, total)
            })
            .collect())
    }
}
