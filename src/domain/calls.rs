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
    // an MCP vendor's server answered its own error result (isError, issue 27.3)
    (
        "tool_error",
        ErrorKind::ToolError,
        "the tool answered an error",
    ),
    ("vendor_timeout", ErrorKind::VendorError, "vendor timed out"),
    ("vendor_busy", ErrorKind::VendorError, "vendor busy"),
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

/// The `q` quantile (0 < q < 1) of durations counted in buckets: `counts[i]` durations
/// fell in `[bounds[i-1], bounds[i])` (ms; from 0 for the first, and `[last bound, 2 ×
/// last bound)` for the one past the end), estimated by linear interpolation inside the
/// bucket where the rank falls, as Prometheus's `histogram_quantile` does. `None` when
/// nothing was counted. `counts` has `bounds.len() + 1` entries (fewer count as zero).
pub fn quantile(counts: &[i64], bounds: &[i64], q: f64) -> Option<f64> {
    let total: i64 = counts.iter().sum();
    if total <= 0 {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total as f64;
    let mut below = 0i64;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 && (below + n) as f64 >= rank {
            let lo = if i == 0 { 0 } else { bounds[i - 1] } as f64;
            let hi = match bounds.get(i) {
                Some(&b) => b as f64,
                None => 2.0 * lo,
            };
            return Some(lo + (hi - lo) * ((rank - below as f64) / n as f64).clamp(0.0, 1.0));
        }
        below += n;
    }
    None
}

#[cfg(test)]
mod quantile_tests {
    use super::quantile;

    #[test]
    fn quantiles_interpolate_inside_the_bucket_where_the_rank_falls() {
        let bounds = [10, 100, 1000];
        // 100 durations under 10 ms, 100 in [10, 100)
        let counts = [100, 100, 0, 0];
        assert_eq!(quantile(&counts, &bounds, 0.5), Some(10.0));
        assert_eq!(quantile(&counts, &bounds, 0.25), Some(5.0));
        assert_eq!(quantile(&counts, &bounds, 0.95), Some(10.0 + 90.0 * 0.9));
        // all past the last bound: between it and twice it
        assert_eq!(quantile(&[0, 0, 0, 4], &bounds, 0.5), Some(1500.0));
        assert_eq!(quantile(&[0, 0, 0, 0], &bounds, 0.5), None);
        assert_eq!(quantile(&[], &bounds, 0.5), None);
        // one call: p50 and p95 fall in its bucket
        let one = [0, 0, 1, 0];
        assert!(quantile(&one, &bounds, 0.95).unwrap() <= 1000.0);
        assert!(quantile(&one, &bounds, 0.5).unwrap() >= 100.0);
    }
}
