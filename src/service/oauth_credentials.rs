//! An MCP vendor's OAuth tokens at rest (issue 27.1): rmcp's `CredentialStore` over the
//! vendor's row, sealed with the secret key like every secret (SPEC §8). Both the
//! authorization (mcp_oauth) and each call to the server (upstream) open it.

use super::Graft;
use crate::db;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use std::sync::Arc;

/// A vendor's OAuth credentials in the database, sealed with the secret key (rmcp's
/// `CredentialStore`): what rmcp saves after the code exchange and each refresh.
#[derive(Clone)]
pub(crate) struct SealedCredentials {
    graft: Graft,
    vendor_id: i64,
}

#[async_trait::async_trait]
impl CredentialStore for SealedCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let sealed = db::select_vendor_oauth(self.graft.pool(), self.vendor_id)
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let text = self
            .graft
            .inner
            .key
            .open(&sealed)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_string(&credentials)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        let sealed = self.graft.inner.key.seal(&text);
        self.write(Some(&sealed)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.write(None).await
    }
}

impl SealedCredentials {
    async fn write(&self, sealed: Option<&str>) -> Result<(), AuthError> {
        let written = async {
            let mut tx = self.graft.write_tx().await?;
            db::update_vendor_oauth(&mut tx, self.vendor_id, sealed).await?;
            tx.commit().await
        };
        written
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

impl Graft {
    /// The credential store of vendor `vendor_id`'s OAuth tokens (sealed in the database).
    pub(crate) fn oauth_store(&self, vendor_id: i64) -> Arc<dyn CredentialStore> {
        Arc::new(SealedCredentials {
            graft: self.clone(),
            vendor_id,
        })
    }
}
