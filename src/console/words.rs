//! The one place where causes, states, harnesses and counts become words (SPEC §1's
//! glossary), shared by the console's pages, the CLI and MCP answers.

/// `text` with every character that could hide or reorder what a person reads made
/// visible ([`crate::domain::markup::visible`]; security review 32.16).
#[cfg(feature = "ssr")]
pub fn mark_bidi(text: &str) -> String {
    crate::domain::markup::visible(text)
}

/// What a tool's call does, in words a person reads (issue 14.2): `deletes` when its
/// destructiveHint is set; `writes` by Graft's write rule (SPEC §4.4: a method other
/// than GET, HEAD or OPTIONS, or readOnlyHint false); else `reads`. Without the method
/// (a search hit) the hints alone decide.
pub fn does_in_words(method: Option<&str>, read_only: bool, destructive: bool) -> &'static str {
    let safe_method = method
        .is_none_or(|m| matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS"));
    if destructive {
        "deletes"
    } else if read_only && safe_method {
        "reads"
    } else {
        "writes"
    }
}

/// The harnesses a New agent form offers, `(value, label)` (CLIENTS.md).
pub const HARNESSES: &[(&str, &str)] = &[
    ("claude-code", "Claude Code"),
    ("cursor", "Cursor"),
    ("vscode", "VS Code"),
    ("codex", "Codex CLI"),
    ("hermes", "Hermes"),
    ("openclaw", "OpenClaw"),
    ("other", "Other"),
];

/// A harness value in words (its label when it is one the form offers).
pub fn harness_in_words(h: &str) -> String {
    HARNESSES
        .iter()
        .find(|(v, _)| *v == h)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| h.to_string())
}

/// History causes in the words of SPEC §6.
pub fn cause_in_words(cause: &str) -> &'static str {
    match cause {
        "agent" => "the agent asked",
        "publish" => "published by the agent",
        "console" => "a person in the console",
        "idle" => "unused past the idle window",
        "cap" => "over the working-set cap",
        "connection_revoked" => "its connection was revoked",
        "retired" => "its operation left the vendor's document",
        "vendor_disabled" => "its vendor was disabled",
        "vendor_removed" => "its vendor was removed",
        // SPEC §1: Graft itself promoting the starter set a person gave the agent
        "rule" => "the starter set",
        _ => "unknown",
    }
}

/// `promoted_by` in the words of the seed page's Promoted by column.
pub fn promoted_by_in_words(by: &str) -> &'static str {
    match by {
        "agent" => "the agent",
        "publish" => "a publish",
        "console" => "a person",
        "rule" => "the rule",
        _ => "unknown",
    }
}

/// Percent-encodes one path segment of a console link (UTF-8; agent names, vendor slugs
/// and tool names are `[A-Za-z0-9._-]` and stay as they are).
pub fn segment(s: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.');
    percent_encoding::utf8_percent_encode(s, KEEP).to_string()
}

/// `n` and a noun, plural unless `n` is 1 ("1 tool", "3 tools", "2 entries").
pub fn count(n: i64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{n} {stem}ies")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_segments_are_percent_encoded_utf8() {
        assert_eq!(segment("hermes-1.a_b"), "hermes-1.a_b");
        assert_eq!(segment("a b/c?"), "a%20b%2Fc%3F");
        assert_eq!(segment("é"), "%C3%A9");
    }

    #[test]
    fn causes_read_as_the_spec_words_them() {
        assert_eq!(cause_in_words("agent"), "the agent asked");
        assert_eq!(cause_in_words("publish"), "published by the agent");
        assert_eq!(cause_in_words("console"), "a person in the console");
        assert_eq!(cause_in_words("idle"), "unused past the idle window");
        assert_eq!(cause_in_words("rule"), "the starter set");
        assert_eq!(promoted_by_in_words("rule"), "the rule");
        assert_eq!(cause_in_words("cap"), "over the working-set cap");
        assert_eq!(
            cause_in_words("connection_revoked"),
            "its connection was revoked"
        );
    }
}
