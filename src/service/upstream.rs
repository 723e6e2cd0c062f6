//! Running an MCP vendor's tool (SPEC §4 for MCP vendors, issue 27.3): the same checks,
//! approval rule and call log as an HTTP tool, with the server's `tools/call` in place of
//! the vendor request; and the spec its server is reached with.

use super::call_detail::SentDetail;
use super::{Graft, RunAnswer, ServiceError, ServiceResult};
use crate::db;
use crate::domain::approval::writes;
use crate::domain::mcp_vendor::MCP_METHOD;
/// How an agent hears an MCP vendor's progress during a call (MCP 2025-11-25
/// utilities/progress): the adapter runs the call inside `PROGRESS.scope(report, …)`.
pub use crate::proxy::mcp::{ProgressFn, PROGRESS};
use crate::proxy::mcp::{Spec, Target, UpstreamError};
use crate::proxy::redact::{logged_input, redact};
use crate::telemetry::{span_failed, vendor_span};
use serde_json::{json, Value};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

impl Graft {
    /// Runs MCP vendor tool `tool` for an agent: the input checked against its schema, a
    /// dry run of a write answered with a preview of the arguments (secrets redacted),
    /// the approval rule of writes (SPEC §4.4: a tool is a read only when its
    /// readOnlyHint is true), then the server's `tools/call` with the input as its
    /// arguments, unchanged. The server's result passes through whole
    /// ([`RunAnswer::Passed`]), its `structuredContent` checked against the tool's output
    /// schema; an agent's `notifications/cancelled` cancels the server's call; its
    /// progress reaches the agent ([`crate::proxy::mcp::PROGRESS`]). Returns the answer
    /// and whether the server was reached (a use of the tool); `detail` gets the
    /// tools/call as sent and the server's result, redacted, for the calls log (issue
    /// 28.9). Errors: internal faults.
    pub(super) async fn run_upstream(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
        detail: &mut SentDetail,
    ) -> ServiceResult<(RunAnswer, bool)> {
        let qualified = format!("{}__{}", tool.vendor, tool.name);
        let (arguments, _) = match self
            .checked_input(agent_id, tool, &qualified, input)
            .await?
        {
            Ok(checked) => checked,
            Err(answer) => return Ok((answer, false)),
        };
        let spec = match self.upstream_spec(&tool.vendor).await? {
            Ok(spec) => spec,
            Err(answer) => return Ok((answer, false)),
        };
        let secrets = spec.secrets();
        let write = writes(MCP_METHOD, tool.read_only_hint);
        let server = match &spec.target {
            Target::Http { url, .. } => url.clone(),
            Target::Stdio { argv, .. } => {
                crate::domain::mcp_vendor::join_command(&argv[..1.min(argv.len())])
            }
        };
        // what the calls log's detail keeps (issue 28.9): the tools/call as sent, and
        // the server's result, as the calls log keeps an input
        let mut hidden = detail.hidden.clone();
        hidden.extend(secrets.iter().cloned());
        let logged = logged_input(&Value::Object(arguments.clone()), &hidden);
        let logged = serde_json::from_str::<Value>(&logged).unwrap_or(Value::String(logged));
        let request = json!({"server": server, "method": "tools/call", "tool": tool.path_template, "arguments": logged});
        detail.request = Some(redact(&request.to_string(), &hidden));
        if dry_run && write {
            let text = format!(
                "Dry run of {qualified}: nothing was sent. The call would be:\n{}",
                serde_json::to_string_pretty(&request).unwrap_or_default()
            );
            return Ok((
                RunAnswer::Ok {
                    text,
                    structured: Some(json!({"dryRun": true, "request": request})),
                    media: None,
                },
                false,
            ));
        }
        if let Some(answer) = self
            .approval_check(agent_id, tool, &qualified, MCP_METHOD)
            .await?
        {
            return Ok((answer, false));
        }
        let sent = Instant::now();
        let vendor_span = vendor_span(format_args!("tools/call {}", tool.vendor));
        crate::telemetry::set(&vendor_span, "graft.vendor", tool.vendor.clone());
        crate::telemetry::set(&vendor_span, "mcp.method.name", "tools/call");
        crate::telemetry::set(&vendor_span, "gen_ai.tool.name", tool.path_template.clone());
        let call = self.inner.upstreams.call(
            &spec,
            &tool.path_template,
            arguments,
            crate::proxy::mcp::current_progress(),
            cancel,
        );
        let answered = tracing::Instrument::instrument(call, vendor_span.clone()).await;
        let seconds = sent.elapsed().as_secs_f64();
        let result = match answered {
            Ok(result) => {
                self.inner
                    .metrics
                    .vendor_request(&tool.vendor, Some(200), seconds);
                // the server took them: their "last used" (issue 28.2)
                for id in &spec.connections {
                    self.note_connection_used(*id).await;
                }
                result
            }
            Err(e) => {
                let code = match &e {
                    UpstreamError::Timeout(_) => "vendor_timeout",
                    UpstreamError::Busy(..) => "vendor_busy",
                    UpstreamError::Protocol(_) => "vendor_error",
                    UpstreamError::Cancelled => "cancelled",
                    UpstreamError::Unreachable(_) | UpstreamError::AuthRequired(_) => {
                        "vendor_unreachable"
                    }
                };
                span_failed(&vendor_span, code);
                let reached = matches!(e, UpstreamError::Protocol(_));
                if !matches!(e, UpstreamError::Cancelled | UpstreamError::Busy(..)) {
                    let status = reached.then_some(200);
                    self.inner
                        .metrics
                        .vendor_request(&tool.vendor, status, seconds);
                }
                let message = match (&e, write) {
                    (UpstreamError::Cancelled, true) => format!(
                        "cancelled by the agent before {} answered; the server may have acted: check before repeating this call",
                        tool.vendor
                    ),
                    (UpstreamError::Cancelled, false) => {
                        format!("cancelled by the agent before {} answered", tool.vendor)
                    }
                    (UpstreamError::AuthRequired(_), _) => format!(
                        "{}'s MCP server asks for authorization: a person connects it on the vendor's page in Graft's console ({e})",
                        tool.vendor
                    ),
                    _ => format!("{}'s MCP server: {e}", tool.vendor),
                };
                return Ok((
                    RunAnswer::err(code, redact(&message, &secrets), json!({"tool": qualified})),
                    reached,
                ));
            }
        };
        detail.response = Some(logged_input(&result, &hidden));
        Ok((self.passed(tool, result, &secrets), true))
    }

    /// A server's result as the agent gets it: its connection's secrets redacted
    /// wherever they appear; `structuredContent` of a success checked against the tool's
    /// output schema (a result that does not follow it becomes a `vendor_error`, since
    /// SDK clients raise on it).
    fn passed(&self, tool: &db::ToolRow, result: Value, secrets: &[String]) -> RunAnswer {
        let result = if secrets.is_empty() {
            result
        } else {
            let text = result.to_string();
            let clean = redact(&text, secrets);
            if clean == text {
                result
            } else {
                serde_json::from_str(&clean).unwrap_or(result)
            }
        };
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        if !is_error {
            if let Some(schema) = tool
                .output_schema
                .as_deref()
                .and_then(|s| serde_json::from_str::<Value>(s).ok())
            {
                let problem = match result.get("structuredContent") {
                    None | Some(Value::Null) => Some(vec![
                        "the result has no structuredContent, which its output schema asks for"
                            .to_string(),
                    ]),
                    Some(structured) => match crate::domain::schema::validator(&schema) {
                        Ok(v) => {
                            let errors: Vec<String> = v
                                .iter_errors(structured)
                                .take(10)
                                .map(|e| format!("{}: {e}", e.instance_path()))
                                .collect();
                            (!errors.is_empty()).then_some(errors)
                        }
                        Err(_) => None,
                    },
                };
                if let Some(violations) = problem {
                    return RunAnswer::err(
                        "vendor_error",
                        format!(
                            "{}'s MCP server answered a result that does not follow the tool's output schema: {}",
                            tool.vendor,
                            violations.join("; ")
                        ),
                        json!({"violations": violations}),
                    );
                }
            }
        }
        RunAnswer::Passed { result, is_error }
    }

    /// The secrets an MCP vendor's calls carry (its connections' header values and
    /// variables), for the calls log's redaction; none when they cannot be read.
    pub(crate) async fn upstream_secrets(&self, tool: &db::ToolRow) -> Vec<String> {
        match self.upstream_spec(&tool.vendor).await {
            Ok(Ok(spec)) => spec.secrets(),
            _ => Vec::new(),
        }
    }

    /// How MCP vendor `slug`'s server is reached (SPEC §10.2), with its connections: a
    /// remote server gets each live connection's header (`bearer`: `Authorization:
    /// Bearer …`; `header`: its own name; `basic`: `Authorization: Basic …`), a local one
    /// each live `env` connection as a variable; of two for the same header or variable,
    /// the newer wins (a key is rotated by adding the new one, then revoking the old).
    /// `Ok(Err(answer))`: a call cannot go (a suspended connection, a URL whose address
    /// is not allowed). Errors: `VendorNotFound`, a secret that does not open.
    pub(crate) async fn upstream_spec(&self, slug: &str) -> ServiceResult<Result<Spec, RunAnswer>> {
        self.upstream_spec_with(slug, None).await
    }

    /// [`Graft::upstream_spec`], or with `only` a connection's id: the server reached
    /// with that connection alone and no OAuth tokens, as a server of its own (its
    /// `vendor_id` is minus the connection's id: it never takes the vendor's place), to
    /// test the connection (issue 28.2).
    pub(crate) async fn upstream_spec_with(
        &self,
        slug: &str,
        only: Option<i64>,
    ) -> ServiceResult<Result<Spec, RunAnswer>> {
        let v = self.vendor(slug).await?;
        let conns = db::select_vendor_connections(self.pool(), v.id).await?;
        let mut live: Vec<&db::ConnectionRow> = conns
            .iter()
            .filter(|c| c.revoked_at.is_none() && only.is_none_or(|id| id == c.id))
            .collect();
        if let Some(c) = live.iter().find(|c| c.suspended_at.is_some()) {
            return Ok(Err(RunAnswer::err(
                "connection_suspended",
                format!(
                    "{}: its connection {:?} sends nothing until a person confirms it (the vendor's page in the console, or graft connection confirm {slug})",
                    c.suspended_reason.clone().unwrap_or_default(),
                    c.label
                ),
                json!({"connection": c.label}),
            )));
        }
        live.sort_by_key(|c| (c.created_at, c.id));
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut used: Vec<(String, i64)> = Vec::new();
        for c in live {
            let Some(secret) = self.open_secret(c)? else {
                continue;
            };
            let name = c.header_or_param_name.clone().unwrap_or_default();
            let pair = match (c.auth_kind.as_str(), v.mcp_url.is_some()) {
                ("bearer", true) => ("Authorization".to_string(), format!("Bearer {secret}")),
                ("basic", true) => {
                    use base64::Engine;
                    let encoded = base64::engine::general_purpose::STANDARD.encode(secret);
                    ("Authorization".to_string(), format!("Basic {encoded}"))
                }
                ("header", true) => (name, secret),
                ("env", false) => (name, secret),
                _ => continue,
            };
            // the newer of two for one name wins
            pairs.retain(|(n, _)| !n.eq_ignore_ascii_case(&pair.0));
            used.retain(|(n, _)| !n.eq_ignore_ascii_case(&pair.0));
            used.push((pair.0.clone(), c.id));
            pairs.push(pair);
        }
        let target = match (&v.mcp_url, &v.mcp_command) {
            (Some(url), _) => {
                if let Err(why) = self.check_upstream_address(url, v.internal) {
                    return Ok(Err(RunAnswer::err(
                        "vendor_unreachable",
                        format!("{slug}'s MCP server at {url} is not called: {why}"),
                        json!({}),
                    )));
                }
                Target::Http {
                    url: url.clone(),
                    headers: pairs,
                    internal: v.internal,
                    // a new authorization stops the server itself (finish_mcp_oauth)
                    oauth: (v.has_oauth && only.is_none())
                        .then(|| (self.oauth_store(v.id), "oauth".to_string())),
                }
            }
            (None, Some(command)) => Target::Stdio {
                argv: serde_json::from_str(command)
                    .map_err(|e| ServiceError::Internal(anyhow::anyhow!("stored command: {e}")))?,
                cwd: v.mcp_cwd.clone(),
                env: pairs,
            },
            (None, None) => {
                return Err(ServiceError::Invalid(format!(
                    "vendor {slug} is not an MCP vendor"
                )))
            }
        };
        Ok(Ok(Spec {
            vendor_id: only.map_or(v.id, |id| -id),
            slug: v.slug,
            target,
            connections: used.into_iter().map(|(_, id)| id).collect(),
        }))
    }

    /// Refuses a remote server's URL whose host is an IP address vendors may not be
    /// called at (names are checked when they resolve, as for every vendor call).
    fn check_upstream_address(&self, url: &str, internal: bool) -> Result<(), String> {
        let reach = crate::proxy::destination::Reach {
            internal,
            loopback: self.limits().vendor_loopback,
        };
        let literal = url::Url::parse(url)
            .ok()
            .and_then(|u| crate::proxy::destination::literal_ip(&u));
        match literal {
            Some(ip) => crate::proxy::destination::check(ip, reach).map_err(|r| r.to_string()),
            None => Ok(()),
        }
    }
}
