//! The rows use cases look up by name or id: an agent, a vendor (any, or live), the
//! vendors there are. Every use-case file may call these; they call nothing but the
//! database (so the calls between service files point one way: see ARCHITECTURE.md).

use super::{Graft, ServiceError, ServiceResult};
use crate::db::{self, AgentRow, VendorRow};

impl Graft {
    /// The agent with an id. Errors: `AgentNotFound`.
    pub async fn agent(&self, id: i64) -> ServiceResult<AgentRow> {
        db::select_agent(&self.inner.pool, id)
            .await?
            .ok_or_else(|| ServiceError::AgentNotFound(format!("no agent with id {id}")))
    }

    /// The agent with a name. Errors: `AgentNotFound`.
    pub async fn agent_by_name(&self, name: &str) -> ServiceResult<AgentRow> {
        db::select_agent_by_name(&self.inner.pool, name)
            .await?
            .ok_or_else(|| ServiceError::AgentNotFound(format!("no agent named {name:?}")))
    }

    /// The vendor with a slug. Errors: `VendorNotFound` naming the vendors there are.
    pub async fn vendor(&self, slug: &str) -> ServiceResult<VendorRow> {
        match db::select_vendor_by_slug(&self.inner.pool, slug).await? {
            Some(v) => Ok(v),
            None => {
                let all = self.vendor_slugs().await?;
                let list = if all.is_empty() {
                    "there are no vendors yet".to_string()
                } else {
                    format!("vendors: {}", all.join(", "))
                };
                Err(ServiceError::VendorNotFound(format!(
                    "no vendor {slug:?} ({list})"
                )))
            }
        }
    }

    /// The vendor with a slug, unless it was removed. Errors: `VendorNotFound`,
    /// `Invalid` (removed: importing its document again brings it back).
    pub async fn live_vendor(&self, slug: &str) -> ServiceResult<VendorRow> {
        let v = self.vendor(slug).await?;
        if v.removed_at.is_some() {
            return Err(ServiceError::Invalid(format!(
                "vendor {slug} was removed: import its OpenAPI document again (or add a vendor {slug}) to bring it back"
            )));
        }
        Ok(v)
    }

    /// Every vendor that is not removed, by slug.
    pub async fn vendors(&self) -> ServiceResult<Vec<VendorRow>> {
        Ok(db::select_vendors(&self.inner.pool)
            .await?
            .into_iter()
            .filter(|v| v.removed_at.is_none())
            .collect())
    }

    /// Every vendor slug (the nothing-found answer and `vendor_not_found` list them).
    pub async fn vendor_slugs(&self) -> ServiceResult<Vec<String>> {
        Ok(self
            .vendors()
            .await?
            .into_iter()
            .filter(|v| v.disabled_at.is_none())
            .map(|v| v.slug)
            .collect())
    }
}
