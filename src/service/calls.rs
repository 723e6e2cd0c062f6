//! The calls log (SPEC §2 `tool_calls`, issue 14.4): the calls agents made, filtered,
//! newest first, and one call with what it sent and what the vendor answered (issue
//! 28.9). Calls are written by the run (`run.rs`, [`db::record_call`]).

use super::{Graft, ServiceResult};
use crate::db;

impl Graft {
    /// The calls log (issue 14.4), newest first: at most `limit` (clamped to 1–500) calls
    /// that `filter` admits, each with its agent's and tool's names, outcome and redacted
    /// input. Every call of an agent is there, first-class or through `run_tool`, dry
    /// runs and refused ones included.
    pub async fn calls(
        &self,
        filter: &db::CallFilter,
        limit: i64,
    ) -> ServiceResult<Vec<db::CallLogRow>> {
        Ok(db::select_call_log(&self.inner.pool, filter, limit.clamp(1, 500)).await?)
    }

    /// Call `id` of the log and, when kept, what it sent and what the vendor answered
    /// (issue 28.9; redacted JSON texts). `None` when no such call is logged.
    /// Errors: `Db`.
    pub async fn call(
        &self,
        id: i64,
    ) -> ServiceResult<Option<(db::CallLogRow, Option<db::CallDetailRow>)>> {
        Ok(db::select_call(&self.inner.pool, id).await?)
    }
}
