//! What a tool run answers (SPEC §4), in MCP terms: the adapter turns it into a
//! `CallToolResult`.

use serde_json::Value;

/// The answer of a run, in MCP terms (the adapter turns it into a `CallToolResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum RunAnswer {
    /// Success: text content and, for a JSON object, `structuredContent`.
    Ok {
        /// Text for the model.
        text: String,
        /// Structured content.
        structured: Option<Value>,
        /// An image or a blob, when the vendor answered binary content.
        media: Option<super::answer::Media>,
    },
    /// An MCP vendor's server's own `CallToolResult` (JSON), passed to the agent whole
    /// (issue 27.3): its content blocks (text, image, audio, embedded resources, resource
    /// links), `structuredContent` and `isError`; its secrets redacted.
    Passed {
        /// The result as the server gave it.
        result: Value,
        /// Its `isError`.
        is_error: bool,
    },
    /// A tool error (`isError`) with `structuredContent.error = {code, message, ..details}`.
    Err {
        /// `invalid_input`, `approval_required`, `approval_denied`, `vendor_error`,
        /// `vendor_unreachable`, `connection_revoked`, `connection_suspended`,
        /// `connection_ambiguous`, `cancelled`, `rate_limited`,
        /// `tool_retired`, `vendor_disabled`, `vendor_removed`.
        code: &'static str,
        /// A sentence for the model.
        message: String,
        /// More fields (violations, status and body, approval URL, …).
        details: Value,
    },
}

impl RunAnswer {
    pub(crate) fn err(code: &'static str, message: impl Into<String>, details: Value) -> Self {
        Self::Err {
            code,
            message: message.into(),
            details,
        }
    }

    /// The error code, when an error: an MCP server's own error result is `tool_error`.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::Ok { .. }
            | Self::Passed {
                is_error: false, ..
            } => None,
            Self::Passed { is_error: true, .. } => Some("tool_error"),
            Self::Err { code, .. } => Some(code),
        }
    }

    /// Whether the tool did what it was asked (no error of any kind).
    pub fn is_ok(&self) -> bool {
        self.code().is_none()
    }
}
