//! Ready-to-paste MCP client configuration for a new agent token (SPEC §6 New agent),
//! one per client in CLIENTS.md: Claude Code, Cursor, VS Code, Codex CLI, Hermes and
//! OpenClaw. Built on the server; the token appears only in this answer.

/// `(client, where it goes, text)` for every client, connecting `agent` to `url` (the
/// `/mcp` endpoint) with `token`.
pub fn all(agent: &str, url: &str, token: &str) -> Vec<(String, String, String)> {
    let bearer = format!("Bearer {token}");
    let header = serde_json::json!({ "Authorization": bearer });
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    vec![
        (
            "Claude Code".into(),
            "a shell (or .mcp.json with the same url and headers)".into(),
            format!("claude mcp add --transport http graft {url} --header \"Authorization: {bearer}\""),
        ),
        (
            "Cursor".into(),
            "~/.cursor/mcp.json".into(),
            pretty(serde_json::json!({"mcpServers": {"graft": {"url": url, "headers": header}}})),
        ),
        (
            "VS Code".into(),
            ".vscode/mcp.json (asks for the token once)".into(),
            pretty(serde_json::json!({
                "servers": {"graft": {"type": "http", "url": url,
                    "headers": {"Authorization": "Bearer ${input:graft-token}"}}},
                "inputs": [{"type": "promptString", "id": "graft-token",
                    "description": format!("Graft token of agent {agent}"), "password": true}]
            })),
        ),
        (
            "Codex CLI".into(),
            "~/.codex/config.toml, then export GRAFT_TOKEN".into(),
            format!(
                "[mcp_servers.graft]\nurl = \"{url}\"\nbearer_token_env_var = \"GRAFT_TOKEN\"\n\n# in your shell:\nexport GRAFT_TOKEN={token}"
            ),
        ),
        (
            "Hermes".into(),
            "~/.hermes/config.yaml, then export GRAFT_AGENT_TOKEN".into(),
            format!(
                "mcp_servers:\n  graft:\n    url: {url}\n    headers:\n      Authorization: \"Bearer ${{GRAFT_AGENT_TOKEN}}\"\n\n# in your shell:\nexport GRAFT_AGENT_TOKEN={token}"
            ),
        ),
        (
            "OpenClaw".into(),
            "~/.openclaw/openclaw.json".into(),
            pretty(serde_json::json!({"mcp": {"servers": {"graft": {
                "url": url, "transport": "streamable-http", "headers": header}}}})),
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
