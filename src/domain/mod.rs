//! Pure rules of Graft: names, tool definitions, OpenAPI import planning, schema
//! inlining and toolbox search. No I/O here: no sqlx, axum, leptos or tokio.

pub mod approval;
pub mod audit;
pub mod authoring;
pub mod calls;
pub mod exact_json;
pub mod markup;
pub mod mcp_vendor;
pub mod names;
pub mod notify;
pub mod oauth;
pub mod openapi;
pub mod rendered;
pub mod schema;
pub mod search;
pub mod served;
pub mod sweep;
pub mod tool;
pub mod try_form;

use serde::{Deserialize, Serialize};

/// Default working-set cap (SPEC §1).
pub const DEFAULT_CAP: i64 = 20;
/// Default idle window in days (SPEC §1).
pub const DEFAULT_IDLE_WINDOW_DAYS: i64 = 21;

/// Who put an entry in a working set (SPEC §1 "promoted by").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromotedBy {
    /// The agent itself, with `promote`.
    Agent,
    /// A publish by the agent (`acquire` / `publish`).
    Publish,
    /// A person in the console.
    Console,
    /// Graft itself (a starter set).
    Rule,
}

/// Why a history event happened (SPEC §1 "cause").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The agent asked.
    Agent,
    /// Published by the agent.
    Publish,
    /// A person in the console.
    Console,
    /// Graft's starter set.
    Rule,
    /// Unused past the idle window.
    Idle,
    /// Over the working-set cap.
    Cap,
    /// Over the agent's token budget (issue 29.2).
    Budget,
    /// Its connection was revoked.
    ConnectionRevoked,
    /// The vendor's re-imported document no longer has its operation (issue 14.3).
    Retired,
    /// Its vendor was disabled.
    VendorDisabled,
    /// Its vendor was removed.
    VendorRemoved,
    /// A person removed the agent (issue 28.1).
    AgentRemoved,
    /// Its MCP vendor's server no longer lists it (issue 27.2).
    UpstreamRemoved,
}

/// What a history event did to a working set (SPEC §2 history.action).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryAction {
    /// The tool entered the working set.
    Promote,
    /// The tool left the working set.
    Demote,
}

/// Text-backed enums: `as_str`, `parse` and `TryFrom<String>` for row decoding.
macro_rules! str_enum {
    ($t:ty { $($v:ident => $s:literal),* $(,)? }) => {
        impl $t {
            /// The stored text form.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
            /// Parses the stored text form.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some(Self::$v),)* _ => None }
            }
        }
        impl TryFrom<String> for $t {
            type Error = String;
            /// Decodes a stored column (`#[sqlx(try_from = "String")]` on row fields).
            fn try_from(s: String) -> Result<Self, String> {
                Self::parse(&s).ok_or_else(|| format!("unknown {} {s:?}", stringify!($t)))
            }
        }
    };
}
pub(crate) use str_enum;

str_enum!(PromotedBy { Agent => "agent", Publish => "publish", Console => "console", Rule => "rule" });
str_enum!(HistoryAction { Promote => "promote", Demote => "demote" });
str_enum!(Cause {
    Agent => "agent", Publish => "publish", Console => "console", Rule => "rule",
    Idle => "idle", Cap => "cap", Budget => "budget", ConnectionRevoked => "connection_revoked",
    Retired => "retired", VendorDisabled => "vendor_disabled", VendorRemoved => "vendor_removed",
    AgentRemoved => "agent_removed", UpstreamRemoved => "upstream_removed",
});

/// The largest working-set cap (SPEC §1).
pub const MAX_CAP: i64 = 500;

/// Checks a cap (1..=[`MAX_CAP`], SPEC §1). Errors: a sentence for the field.
pub fn check_cap(cap: i64) -> Result<i64, String> {
    if (1..=MAX_CAP).contains(&cap) {
        Ok(cap)
    } else {
        Err(format!("cap must be between 1 and 500 tools (got {cap})"))
    }
}

/// The token budget's bounds (issue 29.2), in tokens of the working set's served
/// definitions.
pub const TOKEN_BUDGET_RANGE: std::ops::RangeInclusive<i64> = 1_000..=500_000;

/// Checks a token budget (1,000..=500,000 tokens, issue 29.2). Errors: a sentence for
/// the field.
pub fn check_token_budget(tokens: i64) -> Result<i64, String> {
    if TOKEN_BUDGET_RANGE.contains(&tokens) {
        Ok(tokens)
    } else {
        Err(format!(
            "token budget must be between 1,000 and 500,000 tokens, or none (got {tokens})"
        ))
    }
}

/// Checks an idle window (1..=3650 days, SPEC §1). Errors: a sentence for the field.
pub fn check_idle_window(days: i64) -> Result<i64, String> {
    if (1..=3650).contains(&days) {
        Ok(days)
    } else {
        Err(format!(
            "idle window must be between 1 and 3650 days (got {days})"
        ))
    }
}

/// Checks an agent name: 1..=64 characters of letters, digits, `-`, `_`, `.`.
pub fn check_agent_name(name: &str) -> Result<String, String> {
    // "." and ".." would be path segments of the console's addresses, and a leading
    // '-' would read as a flag on the command line
    let ok = !name.is_empty()
        && !name.chars().all(|c| c == '.')
        && !name.starts_with('-')
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(name.to_string())
    } else {
        Err(format!(
            "agent name {name:?} is invalid: use 1 to 64 letters, digits, '-', '_' or '.' (not only dots, not '-' first)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip() {
        for c in [
            Cause::Agent,
            Cause::Publish,
            Cause::Console,
            Cause::Rule,
            Cause::Idle,
            Cause::Cap,
            Cause::Budget,
            Cause::ConnectionRevoked,
            Cause::AgentRemoved,
            Cause::UpstreamRemoved,
        ] {
            assert_eq!(Cause::parse(c.as_str()), Some(c));
        }
        assert_eq!(PromotedBy::parse("publish"), Some(PromotedBy::Publish));
        assert_eq!(PromotedBy::parse("nope"), None);
    }

    #[test]
    fn limits() {
        assert!(check_cap(0).is_err());
        assert!(check_cap(501).is_err());
        assert_eq!(check_cap(30), Ok(30));
        assert!(check_idle_window(3651).is_err());
        assert!(check_agent_name("hermes-laptop").is_ok());
        assert!(check_agent_name("a b").is_err());
        // "." and ".." would be path segments of console addresses
        assert!(check_agent_name(".").is_err());
        assert!(check_agent_name("..").is_err());
        assert!(check_agent_name("v1.2").is_ok());
        assert!(check_agent_name("-lead").is_err());
    }
}
