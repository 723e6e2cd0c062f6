//! The approval rule of SPEC §4.4 (issue 12.15): which calls wait for a person. Pure:
//! the service applies it to the tool version a call would run.

use serde::{Deserialize, Serialize};

/// An approval's state (SPEC §4.4): asked and waiting, allowed, or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Asked, waiting for a person.
    Pending,
    /// A person allowed the agent to run the tool.
    Granted,
    /// A person refused.
    Denied,
}

super::str_enum!(ApprovalState { Pending => "pending", Granted => "granted", Denied => "denied" });

/// The longest reason a person may give with a denial (issue 28.6), in characters.
pub const REASON_MAX_CHARS: usize = 500;

/// A denial's reason as it is kept and relayed to the agent (issue 28.6): trimmed, each
/// run of whitespace, control and hiding characters ([`super::markup::hides`]) one space (an agent reads it on one line);
/// `None` when nothing is left. Errors: a message when it is longer than
/// [`REASON_MAX_CHARS`] characters.
pub fn clean_reason(reason: &str) -> Result<Option<String>, String> {
    let words: Vec<&str> = reason
        .split(|c: char| c.is_whitespace() || c.is_control() || super::markup::hides(c))
        .filter(|w| !w.is_empty())
        .collect();
    let clean = words.join(" ");
    match clean.chars().count() {
        0 => Ok(None),
        n if n > REASON_MAX_CHARS => Err(format!(
            "the reason is {n} characters long: at most {REASON_MAX_CHARS}"
        )),
        _ => Ok(Some(clean)),
    }
}

/// Whether a tool writes (SPEC §4.4): its method is not GET/HEAD/OPTIONS, or its
/// readOnlyHint is false. An MCP vendor's tool (method
/// [`super::mcp_vendor::MCP_METHOD`]) is read as a GET: a write unless its readOnlyHint
/// is true (SPEC §10.2). The method is compared without regard to case.
pub fn writes(method: &str, read_only_hint: bool) -> bool {
    !matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS" | "MCP"
    ) || !read_only_hint
}

/// Who wrote a tool version, as the approval rule reads it. Authors are stored as
/// `agent:<name>` or `person:<name>` (SPEC §2 tool_versions.authored_by).
#[derive(Debug, Clone, Copy)]
pub struct Authorship<'a> {
    /// The author of version 1.
    pub first_author: &'a str,
    /// The author of this version.
    pub authored_by: &'a str,
    /// This version's number (1 is the first).
    pub version: i64,
    /// Whether the tool is an operation of the vendor's document (it has an operationId).
    pub from_document: bool,
    /// Who last set readOnlyHint by hand, if anyone.
    pub read_only_by: Option<&'a str>,
}

/// Whether a call needs a person's approval first (SPEC §4.4, issue 12.15): a write
/// (by method and readOnlyHint); and, whatever the method, a definition an agent wrote
/// (a tool an agent described with `acquire`, or a version an agent published; not
/// version 1 of an operation taken as the vendor's document describes it) until a
/// person marks it read-only (`graft tool hints … --read-only true`) after the last
/// version an agent wrote.
pub fn needs_approval(method: &str, read_only_hint: bool, who: &Authorship<'_>) -> bool {
    let by_agent = |who: &str| who.starts_with("agent:");
    let agent_tool = by_agent(who.first_author) && !who.from_document;
    let agent_version = by_agent(who.authored_by) && !(who.version == 1 && who.from_document);
    let person_vouched = who.read_only_by.is_some() && read_only_hint && !by_agent(who.authored_by);
    writes(method, read_only_hint) || ((agent_tool || agent_version) && !person_vouched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_one_line_and_bounded() {
        assert_eq!(clean_reason("  \n\t ").unwrap(), None);
        assert_eq!(
            clean_reason(" use the\r\nsandbox\u{7}account ")
                .unwrap()
                .as_deref(),
            Some("use the sandbox account")
        );
        assert_eq!(
            clean_reason("fine\u{202E}ti\u{200B}me").unwrap().as_deref(),
            Some("fine ti me"),
            "a hiding character never reaches the agent or a person"
        );
        assert!(clean_reason(&"x".repeat(REASON_MAX_CHARS)).is_ok());
        let e = clean_reason(&"é".repeat(REASON_MAX_CHARS + 1)).unwrap_err();
        assert!(e.contains("501 characters"), "{e}");
    }

    #[test]
    fn the_write_rule() {
        assert!(!writes("GET", true));
        assert!(writes("GET", false));
        assert!(writes("POST", true));
        assert!(writes("DELETE", true));
        assert!(!writes("options", true));
        assert!(!writes("MCP", true));
        assert!(writes("MCP", false));
    }

    #[test]
    fn what_an_agent_wrote_waits_until_a_person_vouches() {
        let doc = Authorship {
            first_author: "person:ops",
            authored_by: "person:ops",
            version: 1,
            from_document: true,
            read_only_by: None,
        };
        assert!(!needs_approval("GET", true, &doc));
        let acquired = Authorship {
            first_author: "agent:a",
            authored_by: "agent:a",
            from_document: false,
            ..doc
        };
        assert!(needs_approval("GET", true, &acquired));
        let published = Authorship {
            authored_by: "agent:a",
            version: 2,
            ..doc
        };
        assert!(needs_approval("GET", true, &published));
        // a person's read-only mark after an agent's version does not vouch for it
        let marked = Authorship {
            read_only_by: Some("person:ops"),
            ..published
        };
        assert!(needs_approval("GET", true, &marked));
        let vouched = Authorship {
            authored_by: "person:ops",
            read_only_by: Some("person:ops"),
            ..acquired
        };
        assert!(!needs_approval("GET", true, &vouched));
        assert!(needs_approval("POST", true, &vouched));
    }
}
