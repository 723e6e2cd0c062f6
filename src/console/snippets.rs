//! Ready-to-paste MCP client configuration for a new agent token (SPEC §6 New agent),
//! one per client in CLIENTS.md: Claude Code (a command, or a project's `.mcp.json`),
//! Cursor, VS Code, Codex CLI, Hermes and OpenClaw. Built on the server; the token
//! appears only in this answer (the agent page shows them with a placeholder).

/// One client's configuration (issue 28.6): what goes in its file or on its command
/// line, and, apart from it, the shell line that gives it the token when the
/// configuration names an environment variable (so that copying the configuration never
/// copies a shell line into a TOML or YAML file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snippet {
    /// The client's name (CLIENTS.md), e.g. `Codex CLI`.
    pub client: String,
    /// Where `config` goes, e.g. `~/.codex/config.toml`.
    pub place: String,
    /// The configuration (or command) itself.
    pub config: String,
    /// The shell line that sets the token's environment variable, when `config` reads
    /// one.
    pub shell: Option<String>,
}

/// Every client's [`Snippet`], connecting `agent` to `url` (the `/mcp` endpoint) with
/// `token`. No configuration holds the token (issue 28.5): each reads it from an
/// environment variable its client expands (Claude Code's command through the shell,
/// Claude Code's `.mcp.json` `${GRAFT_TOKEN}`, Cursor `${env:GRAFT_TOKEN}`, Codex
/// `bearer_token_env_var`, Hermes and OpenClaw `${NAME}`), and the token appears only in
/// the `shell` line that sets it; VS Code asks for it once and keeps it in its secret
/// storage.
pub fn all(agent: &str, url: &str, token: &str) -> Vec<Snippet> {
    let export = |var: &str| Some(format!("export {var}={token}"));
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    let snippet = |client: &str, place: &str, config: String, shell: Option<String>| Snippet {
        client: client.into(),
        place: place.into(),
        config,
        shell,
    };
    vec![
        snippet(
            "Claude Code",
            "run once in a shell: Claude Code stores the header, token included, in its configuration (add --scope user for every project; after a rotation, claude mcp remove graft first)",
            format!("claude mcp add --transport http graft {url} --header \"Authorization: Bearer $GRAFT_TOKEN\""),
            export("GRAFT_TOKEN"),
        ),
        snippet(
            "Claude Code (.mcp.json)",
            ".mcp.json in a project (safe to commit: the token comes from GRAFT_TOKEN)",
            pretty(serde_json::json!({"mcpServers": {"graft": {"type": "http", "url": url,
                "headers": {"Authorization": "Bearer ${GRAFT_TOKEN}"}}}})),
            export("GRAFT_TOKEN"),
        ),
        snippet(
            "Cursor",
            "~/.cursor/mcp.json (the token comes from GRAFT_TOKEN in the environment Cursor starts in)",
            pretty(serde_json::json!({"mcpServers": {"graft": {"url": url,
                "headers": {"Authorization": "Bearer ${env:GRAFT_TOKEN}"}}}})),
            export("GRAFT_TOKEN"),
        ),
        snippet(
            "VS Code",
            ".vscode/mcp.json (asks for the token once)",
            pretty(serde_json::json!({
                "servers": {"graft": {"type": "http", "url": url,
                    "headers": {"Authorization": "Bearer ${input:graft-token}"}}},
                "inputs": [{"type": "promptString", "id": "graft-token",
                    "description": format!("Graft token of agent {agent}"), "password": true}]
            })),
            None,
        ),
        snippet(
            "Codex CLI",
            "~/.codex/config.toml (the token comes from GRAFT_TOKEN)",
            format!("[mcp_servers.graft]\nurl = \"{url}\"\nbearer_token_env_var = \"GRAFT_TOKEN\""),
            export("GRAFT_TOKEN"),
        ),
        snippet(
            "Hermes",
            "~/.hermes/config.yaml (the token comes from GRAFT_AGENT_TOKEN)",
            format!("mcp_servers:\n  graft:\n    url: {url}\n    headers:\n      Authorization: \"Bearer ${{GRAFT_AGENT_TOKEN}}\""),
            export("GRAFT_AGENT_TOKEN"),
        ),
        snippet(
            "OpenClaw",
            "~/.openclaw/openclaw.json (the token comes from GRAFT_TOKEN, set in the environment or in ~/.openclaw/.env)",
            pretty(serde_json::json!({"mcp": {"servers": {"graft": {
                "url": url, "transport": "streamable-http",
                "headers": {"Authorization": "Bearer ${GRAFT_TOKEN}"}}}}})),
            export("GRAFT_TOKEN"),
        ),
    ]
}

/// The Graft skill (agentskills.io format) served at `/skill/SKILL.md`: front-matter
/// `name` and `description`, then the working-set calls and "find_tool before acquire".
pub const SKILL_MD: &str = r#"---
name: graft
description: Find, promote, demote, run and author vendor API tools through Graft's MCP server, keeping your tool list small.
---

# Graft: your working set of tools

Graft serves you a small list of promoted tools (your working set) over a shared toolbox
of vendor API tools. Tools you stop using leave the list on their own; nothing is lost.

## The calls
- `find_tool {query}` searches the whole toolbox, demoted tools included, ranked by what
  you mean. Say the action and the object, and the vendor if you know it ("create a
  GitHub issue", "refund a payment"). Each hit gives `vendor`, `name`, a one-sentence
  description, whether it is promoted, its readOnlyHint / destructiveHint and a score.
- `promote {vendor, name}` puts a tool in your list (your harness re-reads the list);
  `demote {vendor, name}` takes it out. Neither asks anyone.
- `run_tool {vendor, name, input}` runs a tool without promoting it, exactly as calling it
  would. Use it when your harness has not re-read its list yet, or for a one-off call.
  `dryRun: true` previews a write without sending it.
- `acquire` authors a new tool from a vendor's stored OpenAPI operation, and `publish`
  a new version of one; both promote it for you.

## Rules of thumb
1. **Call `find_tool` before `acquire`.** A tool that aged out of your list is one
   `promote` away; it needs no authoring.
2. Promote what you will use more than once; use `run_tool` for a single call.
3. Demote what you are done with. Unused tools are demoted after your idle window anyway.
4. A tool that writes asks a person once, on its first call: if the answer says
   `approval_required`, tell your user and retry after they approve.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_parse_as_their_files_and_shell_lines_stay_apart() {
        let all = all("bot", "https://graft.example/mcp", "gft_abc");
        for s in &all {
            assert!(!s.config.contains("export "), "{}: {}", s.client, s.config);
            if s.place.contains(".json") {
                let v: serde_json::Value = serde_json::from_str(&s.config).unwrap();
                assert!(v.is_object(), "{}", s.client);
            }
        }
        for s in &all {
            assert!(
                !s.config.contains("gft_abc"),
                "{}: no token in {}",
                s.client,
                s.config
            );
        }
        let by = |c: &str| all.iter().find(|s| s.client == c).unwrap();
        let cursor: serde_json::Value = serde_json::from_str(&by("Cursor").config).unwrap();
        assert_eq!(
            cursor["mcpServers"]["graft"]["headers"]["Authorization"],
            "Bearer ${env:GRAFT_TOKEN}"
        );
        let openclaw: serde_json::Value = serde_json::from_str(&by("OpenClaw").config).unwrap();
        assert_eq!(
            openclaw["mcp"]["servers"]["graft"]["headers"]["Authorization"],
            "Bearer ${GRAFT_TOKEN}"
        );
        assert!(by("Claude Code")
            .config
            .ends_with(r#""Authorization: Bearer $GRAFT_TOKEN""#));
        assert_eq!(
            by("VS Code").shell,
            None,
            "VS Code asks for the token itself"
        );
        let committed = by("Claude Code (.mcp.json)");
        assert!(committed.config.contains(r#""type": "http""#));
        assert_eq!(
            committed.shell.as_deref(),
            Some("export GRAFT_TOKEN=gft_abc")
        );
        // each copied block parses as its client reads it
        let codex = by("Codex CLI");
        let toml: toml::Table = toml::from_str(&codex.config).expect("Codex's TOML parses");
        assert_eq!(
            toml["mcp_servers"]["graft"]["url"].as_str(),
            Some("https://graft.example/mcp")
        );
        assert_eq!(
            toml["mcp_servers"]["graft"]["bearer_token_env_var"].as_str(),
            Some("GRAFT_TOKEN")
        );
        assert_eq!(codex.shell.as_deref(), Some("export GRAFT_TOKEN=gft_abc"));
        let hermes = by("Hermes");
        let yaml: serde_json::Value =
            serde_norway::from_str(&hermes.config).expect("Hermes's YAML parses");
        assert_eq!(
            yaml["mcp_servers"]["graft"]["headers"]["Authorization"],
            "Bearer ${GRAFT_AGENT_TOKEN}"
        );
        assert_eq!(
            yaml["mcp_servers"]["graft"]["url"],
            "https://graft.example/mcp"
        );
    }
}
