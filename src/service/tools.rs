//! The toolbox's tools (SPEC §2 `tools`): a tool by name or id, with its current
//! version, from memory on the call path; whether it can be called or promoted; browsing
//! and counting the toolbox.

use super::{Graft, ServiceError, ServiceResult};
use crate::db;
use std::sync::Arc;

/// Refuses a tool that cannot be called or promoted: retired (its operation left the
/// vendor's document, issue 14.3). Errors: `ToolNotFound` saying so.
pub(crate) fn usable(t: &db::ToolRow) -> ServiceResult<()> {
    if t.vendor_removed_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{}: its vendor {} was removed; a person brings it back (Restore on its console page or graft vendor restore; an MCP server is added again)",
            t.vendor, t.name, t.vendor
        )));
    }
    if t.vendor_disabled_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{}: its vendor {} is disabled; a person can enable it again",
            t.vendor, t.name, t.vendor
        )));
    }
    if t.retired_at.is_some() {
        return Err(ServiceError::ToolNotFound(format!(
            "{}__{} was retired: the vendor's OpenAPI document no longer has its operation",
            t.vendor, t.name
        )));
    }
    Ok(())
}

impl Graft {
    /// A tool by vendor and name, with its current version. Errors: `ToolNotFound`.
    pub async fn tool(&self, vendor: &str, name: &str) -> ServiceResult<db::ToolRow> {
        db::select_tool(&self.inner.pool, vendor, name)
            .await?
            .ok_or_else(|| {
                ServiceError::ToolNotFound(format!(
                    "no tool {vendor}__{name} in the toolbox; call find_tool to search it"
                ))
            })
    }

    /// A tool by vendor and name for a call: from memory while nothing changed.
    /// Errors: `ToolNotFound`.
    pub async fn tool_for_call(&self, vendor: &str, name: &str) -> ServiceResult<Arc<db::ToolRow>> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        if let Some(t) = hot.tool(vendor, name, epoch) {
            return Ok(t);
        }
        // a retired tool or one of a disabled vendor resolves too: its call is refused,
        // and recorded in the calls log, by run_tool_row
        let t = Arc::new(self.tool(vendor, name).await?);
        hot.put_tool(epoch, t.clone());
        Ok(t)
    }

    /// Tools with their current version, by id (any order; unknown ids are left out).
    pub async fn tools_by_ids(&self, ids: &[i64]) -> ServiceResult<Vec<db::ToolRow>> {
        Ok(db::select_tools_by_ids(&self.inner.pool, ids).await?)
    }

    /// One page of the toolbox for browsing without a query (issue 14.2): `limit`
    /// (clamped to 1–200) tools from `offset` of `vendor` (a slug; none: every vendor) in
    /// `order`, and how many there are in all. Errors: `VendorNotFound` for an unknown
    /// slug, `Invalid` for a removed or disabled vendor.
    pub async fn browse_tools(
        &self,
        vendor: Option<&str>,
        order: db::BrowseOrder,
        limit: i64,
        offset: i64,
    ) -> ServiceResult<(Vec<db::BrowseRow>, i64)> {
        if let Some(v) = vendor {
            if self.live_vendor(v).await?.disabled_at.is_some() {
                return Err(ServiceError::Invalid(format!(
                    "vendor {v} is disabled: its tools are out of the Toolbox until a person enables it"
                )));
            }
        }
        Ok(db::select_toolbox_page(
            &self.inner.pool,
            vendor,
            order,
            limit.clamp(1, 200),
            offset.max(0),
        )
        .await?)
    }

    /// Every vendor with its number of tools: `(slug, display name, tools)`, by slug.
    pub async fn vendor_tool_counts(&self) -> ServiceResult<Vec<(String, String, i64)>> {
        Ok(db::select_vendor_tool_counts(&self.inner.pool).await?)
    }

    /// Number of tools in the toolbox.
    pub async fn toolbox_size(&self) -> ServiceResult<i64> {
        Ok(db::count_tools(&self.inner.pool).await?)
    }
}
