//! What Graft knows of the MCP clients agents run in (CLIENTS.md; issue 29.3): the one
//! table of their tool-list limits, and the harness a client names itself as. Used by
//! every layer and the browser alike (no dependencies).

/// What a client does with a long tool list (CLIENTS.md; issue 29.3): the one table of
/// client limits, read by promote's answer, the agent page and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimit {
    /// The harness value (an agent's `harness`, `console::words::HARNESSES`).
    pub harness: &'static str,
    /// The most tools it sends its model per request, if it has such a limit.
    pub most: Option<i64>,
    /// Past how many tools its answers degrade, if known.
    pub degrades_past: Option<i64>,
    /// The limit in words.
    pub what: &'static str,
}

/// Known client limits (CLIENTS.md).
pub const CLIENT_LIMITS: &[ClientLimit] = &[
    ClientLimit {
        harness: "vscode",
        most: Some(128),
        degrades_past: None,
        what: "VS Code (Copilot) sends at most 128 tools per request and refuses or drops the rest",
    },
    ClientLimit {
        harness: "codex",
        most: Some(128),
        degrades_past: None,
        what: "Codex with OpenAI models takes at most 128 tools per request and refuses the rest",
    },
    ClientLimit {
        harness: "cursor",
        most: None,
        degrades_past: Some(40),
        what: "Cursor's tool choice degrades past about 40 tools",
    },
];

/// The harness a client names itself as in `initialize`'s `clientInfo.name`
/// ("Visual Studio Code", "cursor-vscode", "codex-mcp-client", "claude-code"), or
/// `None` for a client Graft does not know.
pub fn harness_of_client(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    if n.contains("cursor") {
        Some("cursor")
    } else if n.contains("codex") {
        Some("codex")
    } else if n.contains("visual studio code") || n == "vscode" || n.starts_with("vscode") {
        Some("vscode")
    } else if n.contains("claude-code") || n.contains("claude code") {
        Some("claude-code")
    } else {
        None
    }
}

/// Graft's own tools in every agent's tool list (the meta-tools MCP offers,
/// `mcp::meta::OFFERED`; a test there keeps the two equal).
pub const OWN_TOOLS: i64 = 6;

/// What Graft's own tools cost a model's context, in o200k_base tokens of their
/// definitions as tools/list serves them (a test in `mcp` counts them and keeps this
/// equal). Every agent pays it besides its working set; the token budget counts only
/// the working set, which is what the sweep can trim.
pub const OWN_TOOLS_TOKENS: i64 = 1938;

/// How many tools before a client's hard limit the warning starts.
pub const CLIENT_LIMIT_MARGIN: i64 = 8;

/// Who a client-limit warning speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The agent itself (promote's answer): "Your tool list", demote what you do not need.
    Agent,
    /// A person (the console, the CLI): "Its tool list", demote tools or lower the cap.
    Person,
}

/// A warning when an agent's tool list (Graft's [`OWN_TOOLS`] and the `promoted` tools of
/// its working set) nears or passes what its harness's client takes ([`CLIENT_LIMITS`]),
/// worded for `reader`, or `None`.
pub fn client_limit_warning(
    harness: Option<&str>,
    promoted: i64,
    reader: Reader,
) -> Option<String> {
    let listed = OWN_TOOLS + promoted;
    let l = CLIENT_LIMITS.iter().find(|l| Some(l.harness) == harness)?;
    let (whose, act) = match reader {
        Reader::Agent => ("Your", "Demote tools you do not need"),
        Reader::Person => ("Its", "Demote tools it does not need, or lower the cap,"),
    };
    if let Some(most) = l.most {
        if listed > most {
            return Some(format!(
                "{whose} tool list holds {listed} tools, {} over the limit: {}. {act} to stay within {most}.",
                listed - most,
                l.what
            ));
        }
        if listed == most {
            return Some(format!(
                "{whose} tool list holds {listed} tools, the limit: {}.",
                l.what
            ));
        }
        if listed > most - CLIENT_LIMIT_MARGIN {
            return Some(format!(
                "{whose} tool list holds {listed} tools, {} from the limit: {}.",
                most - listed,
                l.what
            ));
        }
    }
    if l.degrades_past.is_some_and(|p| listed > p) {
        return Some(format!(
            "{whose} tool list holds {listed} tools: {}. {act} to stay under it.",
            l.what
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_limits_warn_before_and_past_them() {
        // promoted tools and Graft's own 6
        assert_eq!(
            client_limit_warning(Some("claude-code"), 500, Reader::Person),
            None
        );
        assert_eq!(client_limit_warning(None, 500, Reader::Person), None);
        assert_eq!(
            client_limit_warning(Some("vscode"), 114, Reader::Person),
            None
        );
        let near = client_limit_warning(Some("vscode"), 115, Reader::Person).unwrap();
        assert!(
            near.starts_with("Its tool list holds 121 tools, 7 from the limit"),
            "{near}"
        );
        let over = client_limit_warning(Some("codex"), 130, Reader::Agent).unwrap();
        assert!(
            over.starts_with("Your tool list holds 136 tools, 8 over the limit"),
            "{over}"
        );
        assert!(
            over.ends_with("Demote tools you do not need to stay within 128."),
            "{over}"
        );
        assert_eq!(
            client_limit_warning(Some("vscode"), 122, Reader::Person).unwrap(),
            "Its tool list holds 128 tools, the limit: VS Code (Copilot) sends at most 128 tools per request and refuses or drops the rest."
        );
        assert_eq!(
            client_limit_warning(Some("cursor"), 34, Reader::Person),
            None
        );
        assert!(client_limit_warning(Some("cursor"), 35, Reader::Person)
            .unwrap()
            .contains("past about 40 tools. Demote tools it does not need, or lower the cap, to stay under it."));
    }

    #[test]
    fn clients_are_known_by_the_names_they_give() {
        assert_eq!(harness_of_client("Visual Studio Code"), Some("vscode"));
        assert_eq!(harness_of_client("codex-mcp-client"), Some("codex"));
        assert_eq!(harness_of_client("cursor-vscode"), Some("cursor"));
        assert_eq!(harness_of_client("claude-code"), Some("claude-code"));
        assert_eq!(harness_of_client("graft-tests"), None);
    }
}
