//! The calls log in the console (issue 28.9): every agent's calls with the CLI's filters,
//! and one call's detail (what was sent and what the vendor answered, redacted).

#[cfg(feature = "ssr")]
use crate::console::server_fns::{call_item, signed_in, split_tool, with_status, ConsoleError};
use crate::console::server_fns::{CallItem, ConsoleResult};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Calls on one page of the Calls page.
pub const CALLS_PAGE: i64 = 50;

/// The Calls page's data: a page of calls, newest first, and what the filters offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallsData {
    pub calls: Vec<CallItem>,
    /// The id to pass as `before` for the next (older) page, when there is one.
    pub older: Option<i64>,
    /// Every agent's name (removed ones included: their calls stay).
    pub agents: Vec<String>,
    /// The server's clock (ms).
    pub now: i64,
}

/// One call in full (issue 28.9): its row, and what was sent and answered when the log
/// kept it (JSON texts, redacted; `None` when the call never reached the vendor — refused
/// by Graft, a dry run of a write, a tool of an MCP server — or its detail was pruned,
/// `GRAFT_CALL_DETAILS_KEPT`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallData {
    pub call: CallItem,
    /// `{method, url, headers, body}` as sent, pretty-printed when it parses.
    pub request: Option<String>,
    /// `{status, headers, body}` as answered, pretty-printed when it parses.
    pub response: Option<String>,
    /// The error told to the agent in full (redacted; the list shows its first sentence).
    pub message: Option<String>,
    /// Whether the call was a dry run.
    pub dry_run: bool,
    /// The server's clock (ms).
    pub now: i64,
}

/// The calls log, newest first, [`CALLS_PAGE`] at a time, narrowed as `graft calls` is:
/// `agent` (a name), `tool` (`vendor__name`), `outcome` (`ok`, `failed`, `approval`,
/// `dry-run`); `before` pages to older calls. Errors: `Refused` (an unknown agent, tool
/// or outcome, a `before` that is not a number); `SignedOut`.
#[server(prefix = "/api", endpoint = "calls_log")]
pub async fn calls_log(
    agent: Option<String>,
    tool: Option<String>,
    outcome: Option<String>,
    before: Option<String>,
) -> ConsoleResult<CallsData> {
    with_status(async move {
        let (st, _) = signed_in().await?;
        let g = &st.graft;
        let set = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let agent_id = match set(agent) {
            Some(a) => Some(
                g.agent_by_name(&a)
                    .await
                    .map_err(|_| ConsoleError::Refused(format!("no agent named {a:?}")))?
                    .id,
            ),
            None => None,
        };
        let tool_id = match set(tool) {
            Some(t) => {
                let (vendor, name) = split_tool(&t)?;
                Some(
                    g.tool(vendor, name)
                        .await
                        .map_err(|_| ConsoleError::Refused(format!("no tool {t} in the toolbox")))?
                        .id,
                )
            }
            None => None,
        };
        let outcome = match set(outcome) {
            Some(o) => Some(crate::service::CallOutcome::parse(&o).ok_or_else(|| {
                ConsoleError::Refused(format!(
                    "{o:?} is not an outcome: ok, failed, approval or dry-run"
                ))
            })?),
            None => None,
        };
        let before = match set(before) {
            Some(b) => Some(
                b.parse::<i64>()
                    .map_err(|_| ConsoleError::Refused("before must be a call id".into()))?,
            ),
            None => None,
        };
        let filter = crate::service::CallFilter {
            agent_id,
            tool_id,
            outcome,
            before,
        };
        let mut calls = g.calls(&filter, CALLS_PAGE + 1).await?;
        let older = (calls.len() as i64 > CALLS_PAGE).then(|| calls[CALLS_PAGE as usize - 1].id);
        calls.truncate(CALLS_PAGE as usize);
        let mut agents: Vec<String> = g.list_agents().await?.into_iter().map(|a| a.name).collect();
        agents.sort();
        Ok(CallsData {
            calls: calls.into_iter().map(call_item).collect(),
            older,
            agents,
            now: g.clock_now(),
        })
    })
    .await
}

/// Call `id` in full ([`CallData`]). Errors: `Refused` (no such call); `SignedOut`.
#[server(prefix = "/api", endpoint = "call_detail")]
pub async fn call_detail(id: i64) -> ConsoleResult<CallData> {
    with_status(async move {
        let (st, _) = signed_in().await?;
        if id < 1 {
            return Err(ConsoleError::Refused(
                "a call is named by its number, as in /calls/42 (its time on the Calls page links there)".into(),
            ));
        }
        let Some((row, detail)) = st.graft.call(id).await? else {
            return Err(ConsoleError::Refused(format!(
                "no call {id} in the log (GRAFT_CALLS_RETENTION_DAYS may have deleted it)"
            )));
        };
        // pretty JSON, with what could hide or reorder text made visible (security
        // review 32.16)
        let pretty = |t: Option<String>| {
            t.map(|t| match serde_json::from_str::<serde_json::Value>(&t) {
                Ok(v) => serde_json::to_string_pretty(&v).unwrap_or(t),
                // JSON the log cut at its bound (ending in "…") is laid out all the same
                Err(_) if t.starts_with(['{', '[']) => indented(&t),
                Err(_) => t,
            })
            .map(|t| crate::console::words::mark_bidi(&t))
        };
        let (request, response) = match detail {
            Some(d) => (pretty(d.request), pretty(d.response)),
            None => (None, None),
        };
        let message = row.message.as_deref().map(crate::console::words::mark_bidi);
        let dry_run = row.dry_run;
        Ok(CallData {
            call: call_item(row),
            request,
            response,
            message,
            dry_run,
            now: st.graft.clock_now(),
        })
    })
    .await
}

/// JSON text that may be cut short (the calls log's 4 KB bound), laid out as
/// `serde_json::to_string_pretty` would: a line per member and item, two spaces a level,
/// `": "` after a name; strings (with their escapes) copied as they are.
#[cfg(feature = "ssr")]
fn indented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                // an empty object or array stays on its line
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.push(chars.next().unwrap_or(']'));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::indented;

    #[test]
    fn cut_json_is_laid_out_like_whole_json() {
        let whole = r#"{"a":[1,{"b":"x, y: \"z\" {"}],"c":{},"d":"e"}"#;
        let v: serde_json::Value = serde_json::from_str(whole).unwrap();
        assert_eq!(indented(whole), serde_json::to_string_pretty(&v).unwrap());
        assert_eq!(
            indented(r#"{"body":{"items":["one","tw…"#),
            "{\n  \"body\": {\n    \"items\": [\n      \"one\",\n      \"tw…"
        );
    }
}
