//! What the error codes of a tool run mean (SPEC §3.6, §4): one table read by the
//! metrics (`graft_tool_calls_total`'s outcome, issue 30.1) and by the words people read
//! in the calls log (console and `graft calls`), so the two never disagree.

/// How a run that ended with an error code is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The agent's call could not run as asked (invalid input, cancelled by the agent).
    ToolError,
    /// The vendor answered an error status or could not be reached.
    VendorError,
    /// The call waits for a person's approval (SPEC §4.4).
    ApprovalRequired,
    /// Graft refused to run it (a denial, a limit, a retired tool, a vendor or a
    /// connection that cannot serve).
    Refused,
}

/// `(code, kind, words)`: every code a run answers with ([`crate::service`]'s
/// `RunAnswer::err`), its kind and its words in the calls log.
const CODES: &[(&str, ErrorKind, &str)] = &[
    ("invalid_input", ErrorKind::ToolError, "invalid input"),
    ("cancelled", ErrorKind::ToolError, "cancelled"),
    (
        "approval_required",
        ErrorKind::ApprovalRequired,
        "waits for approval",
    ),
    ("approval_denied", ErrorKind::Refused, "approval denied"),
    ("vendor_error", ErrorKind::VendorError, "vendor error"),
    (
        "vendor_unreachable",
        ErrorKind::VendorError,
        "vendor unreachable",
    ),
    ("rate_limited", ErrorKind::Refused, "rate limited"),
    ("tool_retired", ErrorKind::Refused, "tool retired"),
    ("vendor_disabled", ErrorKind::Refused, "vendor disabled"),
    ("vendor_removed", ErrorKind::Refused, "vendor removed"),
    (
        "connection_revoked",
        ErrorKind::Refused,
        "connection revoked",
    ),
    (
        "connection_suspended",
        ErrorKind::Refused,
        "connection suspended",
    ),
    (
        "connection_ambiguous",
        ErrorKind::Refused,
        "no default connection",
    ),
];

/// The kind of `code`; a code not in the table is a [`ErrorKind::ToolError`].
pub fn error_kind(code: &str) -> ErrorKind {
    CODES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(ErrorKind::ToolError, |(_, k, _)| *k)
}

/// The words of `code` in the calls log; `failed` for a code not in the table.
pub fn error_words(code: &str) -> &'static str {
    CODES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or("failed", |(_, _, w)| *w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_kind_and_its_own_words() {
        let mut words: Vec<&str> = CODES.iter().map(|(_, _, w)| *w).collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), CODES.len(), "two codes read the same");
        assert_eq!(error_kind("vendor_unreachable"), ErrorKind::VendorError);
        assert_eq!(error_kind("connection_suspended"), ErrorKind::Refused);
        assert_eq!(error_kind("something_new"), ErrorKind::ToolError);
        assert_eq!(error_words("connection_ambiguous"), "no default connection");
        assert_eq!(error_words("something_new"), "failed");
    }
}
