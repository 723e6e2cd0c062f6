//! The console's error (SPEC §6): what a server function answers when it fails, with
//! the field a form shows it beside; internal causes stay in the server's log.

#[cfg(feature = "ssr")]
use crate::service::ServiceError;
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// The longest value, in characters, a field error keeps of what was typed
/// ([`ConsoleError::typed`]): a URL or a number, not a document.
pub const MAX_TYPED_CHARS: usize = 2000;

/// What a console call can answer instead of its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConsoleError {
    /// No signed-in person: sign in first.
    SignedOut,
    /// A form field's value breaks a rule; nothing was saved.
    Field {
        /// The input's name (`cap`, `window`, `name`, ...).
        field: String,
        /// The rule, as a sentence.
        message: String,
        /// What the form held, by input name, for a page reached after a plain form post
        /// (no JavaScript) to show again rather than empty: never a secret. It travels
        /// in the error, which the gate keeps out of the address ([`crate::console::server::FormErrors`]).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        typed: std::collections::BTreeMap<String, String>,
    },
    /// The request was refused (unknown agent or tool, a name taken, a rule): the reason.
    Refused(String),
    /// Too many requests of this kind for now (HTTP 429 with `Retry-After`): the reason.
    TooMany {
        /// The reason, as a sentence.
        message: String,
        /// Seconds until a new attempt is counted.
        retry_after: u64,
    },
    /// A fault on the server (details in its log, not here).
    Internal,
    /// The request did not reach the function (network, encoding).
    Transport(String),
}

impl std::fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SignedOut => write!(f, "You are signed out; sign in again."),
            Self::Field { message, .. } => write!(f, "{message}"),
            Self::Refused(m) => write!(f, "{m}"),
            Self::TooMany { message, .. } => write!(f, "{message}"),
            Self::Internal => write!(f, "Something went wrong on the server; see its log."),
            Self::Transport(m) => write!(f, "The request failed: {m}"),
        }
    }
}

impl FromServerFnError for ConsoleError {
    type Encoder = JsonEncoding;
    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        Self::Transport(value.to_string())
    }
}

impl ConsoleError {
    /// The message for `field`, if this error is about that field.
    pub fn at(&self, field: &str) -> Option<String> {
        match self {
            Self::Field {
                field: f, message, ..
            } if f == field => Some(message.clone()),
            _ => None,
        }
    }

    /// The HTTP status this error is answered with.
    #[cfg(feature = "ssr")]
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode;
        match self {
            Self::SignedOut => StatusCode::UNAUTHORIZED,
            Self::Field { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Refused(_) | Self::Transport(_) => StatusCode::BAD_REQUEST,
            Self::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A field error.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::Field {
            field: field.into(),
            message: message.into(),
            typed: Default::default(),
        }
    }

    /// This error with the form's `values` (input name, value) to show again, when it is
    /// a field error, each cut at [`MAX_TYPED_CHARS`] (the error is kept in memory for
    /// the page that follows); other errors are returned unchanged.
    pub fn typed(mut self, values: &[(&str, &str)]) -> Self {
        if let Self::Field { typed, .. } = &mut self {
            typed.extend(
                values
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.chars().take(MAX_TYPED_CHARS).collect())),
            );
        }
        self
    }

    /// What the form held at input `name` when this error was answered, if kept.
    pub fn typed_at(&self, name: &str) -> Option<String> {
        match self {
            Self::Field { typed, .. } => typed.get(name).cloned(),
            _ => None,
        }
    }
}

#[cfg(feature = "ssr")]
impl From<ServiceError> for ConsoleError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Internal(inner) => {
                tracing::error!(error = ?inner, "console call failed");
                Self::Internal
            }
            ServiceError::Busy {
                message,
                retry_after,
            } => Self::TooMany {
                message,
                retry_after: retry_after.as_secs().max(1),
            },
            other => Self::Refused(other.to_string()),
        }
    }
}

/// Result of a console call.
pub type ConsoleResult<T> = Result<T, ConsoleError>;
