//! The credential a connection holds (SPEC §2 `auth_kind`), never printed: its `Debug`
//! hides the secret, and its redacted form stands in for it in previews and logs.

/// Text shown instead of every credential in previews.
pub const REDACTED: &str = "<redacted>";

/// Credentials from a connection, decrypted (SPEC §2 `auth_kind`).
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// No credential.
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// A named header holding the secret (`X-Api-Key: …`).
    Header {
        /// Header name.
        name: String,
        /// Secret.
        value: String,
    },
    /// A named query parameter holding the secret.
    Query {
        /// Parameter name.
        name: String,
        /// Secret.
        value: String,
    },
    /// `Authorization: Basic base64(user:password)`.
    Basic {
        /// User (or account id, as Twilio's AccountSid).
        user: String,
        /// Password.
        password: String,
    },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Self::None => "None",
            Self::Bearer(_) => "Bearer",
            Self::Header { .. } => "Header",
            Self::Query { .. } => "Query",
            Self::Basic { .. } => "Basic",
        };
        write!(f, "Credential::{kind}(<redacted>)")
    }
}

impl Credential {
    /// The same credential with every secret replaced by [`REDACTED`].
    pub fn redacted(&self) -> Self {
        let r = || REDACTED.to_string();
        match self {
            Self::None => Self::None,
            Self::Bearer(_) => Self::Bearer(r()),
            Self::Header { name, .. } => Self::Header {
                name: name.clone(),
                value: r(),
            },
            Self::Query { name, .. } => Self::Query {
                name: name.clone(),
                value: r(),
            },
            Self::Basic { .. } => Self::Basic {
                user: r(),
                password: r(),
            },
        }
    }

    /// The plain secret a declared credential parameter takes (Slack's `token`).
    pub(super) fn param_value(&self) -> Option<&str> {
        match self {
            Self::Bearer(v) | Self::Header { value: v, .. } | Self::Query { value: v, .. } => {
                Some(v)
            }
            _ => None,
        }
    }

    /// Every secret string, for redacting text (logs, error bodies).
    pub fn secrets(&self) -> Vec<String> {
        match self {
            Self::None => vec![],
            Self::Bearer(v) | Self::Header { value: v, .. } | Self::Query { value: v, .. } => {
                vec![v.clone()]
            }
            Self::Basic { user, password } => {
                use base64::Engine;
                vec![
                    password.clone(),
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")),
                ]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::tool::Binding;
    use crate::proxy::request::build;
    use crate::proxy::request::tests::{input, op};
    use serde_json::json;

    #[test]
    fn previews_redact_every_credential() {
        let b = Binding::default();
        let op = op("POST", "/x", &b);
        for c in [
            Credential::Bearer("s3cret".into()),
            Credential::Query {
                name: "key".into(),
                value: "s3cret".into(),
            },
            Credential::Header {
                name: "X-Api-Key".into(),
                value: "s3cret".into(),
            },
            Credential::Basic {
                user: "u".into(),
                password: "s3cret".into(),
            },
        ] {
            let p = build(
                "https://api.test",
                op,
                &input(json!({"a": 1})),
                &c.redacted(),
            )
            .unwrap()
            .preview();
            let text = p.to_string();
            assert!(!text.contains("s3cret"), "{text}");
            assert!(text.contains(REDACTED), "{text}");
        }
    }
}
