//! The service layer's error: a client-safe code and sentence for each failure the
//! adapters show (MCP tool errors, CLI lines, console fields), and `Internal` for the
//! rest, whose cause goes to `tracing` and never to the wire.

use thiserror::Error;

/// A failed use case.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// The tool `<vendor>__<name>` is not in the toolbox (`tool_not_found`).
    #[error("{0}")]
    ToolNotFound(String),
    /// Demoting a tool that is not in the working set (`not_promoted`).
    #[error("{0}")]
    NotPromoted(String),
    /// The vendor does not exist (`vendor_not_found`).
    #[error("{0}")]
    VendorNotFound(String),
    /// The agent does not exist (`agent_not_found`).
    #[error("{0}")]
    AgentNotFound(String),
    /// The input breaks a rule (`invalid_input`).
    #[error("{0}")]
    Invalid(String),
    /// Authoring a tool that exists (`tool_exists`).
    #[error("{0}")]
    ToolExists(String),
    /// A unique name is taken (`conflict`).
    #[error("{0}")]
    Conflict(String),
    /// The actor may not do this (`not_permitted`): an agent publishing a tool it did
    /// not author (issue 12.15).
    #[error("{0}")]
    Forbidden(String),
    /// Too much at once (`rate_limited`): sign-ins while the password checks are all
    /// busy (security review 32.1), an agent past its call or authoring rate (32.8).
    /// Nothing was done; the same request works after `retry_after`.
    #[error("{message}")]
    Busy {
        /// A sentence saying what limit was met.
        message: String,
        /// When to try again.
        retry_after: std::time::Duration,
    },
    /// The database cannot be reached (connection refused or lost, pool exhausted, the
    /// server shutting down): `database_unavailable`. Nothing was changed; the same call
    /// works again once the database is back (issue 11.7).
    #[error("the database is unavailable or busy; nothing was changed, try again shortly")]
    Unavailable(#[source] crate::db::DbError),
    /// A fault of Graft's own (database, I/O). Shown as "internal error".
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ServiceError {
    /// The stable error code used in MCP `structuredContent.error.code` (SPEC §3.4).
    pub fn code(&self) -> &'static str {
        match self {
            Self::ToolNotFound(_) => "tool_not_found",
            Self::NotPromoted(_) => "not_promoted",
            Self::VendorNotFound(_) => "vendor_not_found",
            Self::AgentNotFound(_) => "agent_not_found",
            Self::Invalid(_) => "invalid_input",
            Self::ToolExists(_) => "tool_exists",
            Self::Conflict(_) => "conflict",
            Self::Forbidden(_) => "not_permitted",
            Self::Busy { .. } => "rate_limited",
            Self::Unavailable(_) => "database_unavailable",
            Self::Internal(_) => "internal_error",
        }
    }
}

impl From<crate::db::DbError> for ServiceError {
    fn from(e: crate::db::DbError) -> Self {
        if crate::db::is_unavailable(&e) {
            Self::Unavailable(e)
        } else if let Some(why) = crate::db::refused_value(&e) {
            Self::Invalid(why.to_string())
        } else {
            Self::Internal(e.into())
        }
    }
}

/// A unique-constraint violation becomes `kind(message())` (a taken name); any other
/// database error is `Internal`.
pub fn unique_or(
    e: crate::db::DbError,
    kind: impl FnOnce(String) -> ServiceError,
    message: impl FnOnce() -> String,
) -> ServiceError {
    if crate::db::is_unique_violation(&e) {
        kind(message())
    } else {
        e.into()
    }
}

/// Result of a use case.
pub type ServiceResult<T> = Result<T, ServiceError>;
