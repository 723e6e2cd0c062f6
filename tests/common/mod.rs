//! What the fault tests (`crash.rs` on SQLite, `pg_faults.rs` on PostgreSQL) share: the
//! shared specs, a seeded random source, a free port, a stateless MCP call, and the check
//! that every working set is what its history says (SPEC §2 history, §5).
#![allow(dead_code)] // each test crate uses its own part

use rand::SeedableRng;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The shared OpenAPI documents (`GRAFT_SPECS_DIR`, else `../shared/specs`).
pub fn specs_dir() -> PathBuf {
    std::env::var_os("GRAFT_SPECS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs"))
}

/// A random source seeded by `GRAFT_CRASH_SEED`, else by the clock; the seed is printed
/// with `what` so that a failing run can be repeated.
pub fn seeded(what: &str) -> rand::rngs::StdRng {
    let seed = std::env::var("GRAFT_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{what}: GRAFT_CRASH_SEED={seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// A TCP port free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A 2026-07-28 stateless `tools/call` to `mcp_url` (the protocol fields in `_meta`);
/// the status and body, or `None` when the request failed (the server died under it).
pub async fn call(
    http: &reqwest::Client,
    mcp_url: &str,
    token: &str,
    tool: &str,
    args: Value,
    timeout: Duration,
) -> Option<(u16, String)> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let r = http
        .post(mcp_url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .timeout(timeout)
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.text().await.ok()?))
}

/// Asserts that history rows `(agent, tool, action)` in id order alternate promote and
/// demote per pair, and that the working set `set` holds exactly the pairs whose last
/// row is a promote. `what` names the scenario in failures.
pub fn assert_history_explains(
    rows: Vec<(i64, i64, String)>,
    set: HashSet<(i64, i64)>,
    what: &str,
) {
    let mut last: HashMap<(i64, i64), String> = HashMap::new();
    for (agent, tool, action) in rows {
        let before = last.get(&(agent, tool)).map(String::as_str);
        let fits = matches!(
            (before, action.as_str()),
            (None | Some("demote"), "promote") | (Some("promote"), "demote")
        );
        assert!(
            fits,
            "{what}: agent {agent} tool {tool}: {action} after {before:?}"
        );
        last.insert((agent, tool), action);
    }
    let promoted: HashSet<(i64, i64)> = last
        .iter()
        .filter(|(_, a)| a.as_str() == "promote")
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(
        set, promoted,
        "{what}: the working set is what its history says"
    );
}
