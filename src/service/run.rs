//! Running a tool (SPEC §4): one code path for first-class `tools/call` and `run_tool`.
//! Validate → connection → build → dry run → approval → send → answer → record.

use super::{Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::approval::writes;
use crate::proxy::redact::{logged_input, redact, secret_values, LOGGED_MESSAGE_CHARS};
use crate::proxy::request::{self, Credential, Operation};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::call_detail::{response_detail, Sending, SentDetail};
pub use super::run_answer::RunAnswer;
use crate::telemetry::{span_failed, vendor_span};

/// The answer to a call past one of the agent's limits: `rate_limited`, when to retry
/// (`retryAfterSeconds`), nothing sent or logged.
fn rate_limited(what: String, wait: Duration) -> RunAnswer {
    let secs = wait.as_secs().max(1);
    RunAnswer::err(
        "rate_limited",
        format!("{what}: nothing was sent; try again in {secs} s"),
        json!({"retryAfterSeconds": secs}),
    )
}

/// Vendor answers larger than this (bytes) are rendered on the blocking pool.
const RENDER_INLINE_BYTES: usize = 64 << 10;

impl Graft {
    /// Runs a tool for an agent (SPEC §4), whether or not it is promoted: the caller
    /// decides who may (first-class calls need promotion; `run_tool` does not).
    /// Every call is recorded in `tool_calls`; calls that reach the vendor update
    /// `tool_usage`. Errors: `ToolNotFound`, and internal faults; everything the model can
    /// act on is a [`RunAnswer::Err`].
    pub async fn run_tool(
        &self,
        agent_id: i64,
        vendor: &str,
        name: &str,
        input: Value,
        dry_run: bool,
    ) -> ServiceResult<RunAnswer> {
        self.run_tool_cancellable(
            agent_id,
            vendor,
            name,
            input,
            dry_run,
            &CancellationToken::new(),
        )
        .await
    }

    /// [`Graft::run_tool`] that `cancel` stops (see [`Graft::run_tool_row`]).
    pub async fn run_tool_cancellable(
        &self,
        agent_id: i64,
        vendor: &str,
        name: &str,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<RunAnswer> {
        let tool = self.tool_for_call(vendor, name).await?;
        self.run_and_learn(agent_id, &tool, input, dry_run, cancel)
            .await
    }

    /// [`Graft::run_tool_row`], then a call that ran of a tool the agent's last
    /// find_tool answered teaches search (issue 24.3); a dry run sends nothing and
    /// teaches nothing.
    async fn run_and_learn(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<RunAnswer> {
        let answer = self
            .run_tool_row(agent_id, tool, input, dry_run, cancel)
            .await?;
        if !dry_run && answer.is_ok() {
            self.learn_from_pick(agent_id, tool).await;
        }
        Ok(answer)
    }

    /// [`Graft::run_tool`] for a tool already resolved (with [`Graft::tool_for_call`]).
    /// `cancel`: the agent's `notifications/cancelled` for this call (MCP 2025-11-25
    /// utilities/cancellation); when it fires while the vendor has not answered, the
    /// vendor request is dropped, the call answers `cancelled` and is logged so (a write
    /// "may have acted").
    pub async fn run_tool_row(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<RunAnswer> {
        // the agent's call budget (security review 32.8): a call past it is answered and
        // not logged, so that the log cannot be flooded
        let quotas = &self.inner.quotas;
        if let Err(wait) = self
            .inner
            .meter
            .spend(quotas, agent_id, super::quota::Spend::Call)
        {
            self.finish_call(agent_id, tool, dry_run, Some("rate_limited"), None, 0);
            return Ok(rate_limited(
                format!(
                    "this agent made more than {} tool calls in the last minute (GRAFT_AGENT_CALLS_PER_MINUTE)",
                    quotas.calls_per_minute
                ),
                wait,
            ));
        }
        let Some(_running) = self.inner.meter.running(quotas, agent_id) else {
            self.finish_call(agent_id, tool, dry_run, Some("rate_limited"), None, 0);
            return Ok(rate_limited(
                format!(
                    "this agent has {} tool calls running already (GRAFT_AGENT_CONCURRENT_CALLS)",
                    quotas.concurrent_calls
                ),
                Duration::from_secs(1),
            ));
        };
        let started = Instant::now();
        // what the log keeps of the input: redacted before the input is used up
        let upstream = tool.method == crate::domain::mcp_vendor::MCP_METHOD;
        let secrets = if upstream {
            self.upstream_secrets(tool).await
        } else {
            match self.call_setting(tool).await {
                Ok(s) => s
                    .credential
                    .as_ref()
                    .map(|c| c.secrets())
                    .unwrap_or_default(),
                Err(_) => Vec::new(),
            }
        };
        let logged = logged_input(&input, &secrets);
        crate::telemetry::record_payload("gen_ai.tool.call.arguments", &logged);
        // an error message may quote the input (a violation, a refused path value):
        // what sits under a secret-looking field is redacted there too
        let mut hidden = secrets;
        secret_values(&input, false, &mut hidden);
        // an MCP vendor's tool goes to its server's tools/call (issue 27.3); whether the
        // vendor was reached says whether the call counts as a use
        let mut detail = SentDetail {
            hidden: hidden.clone(),
            ..SentDetail::default()
        };
        let (answer, http_status, reached) = if upstream {
            let (answer, reached) = self
                .run_upstream(agent_id, tool, input, dry_run, cancel, &mut detail)
                .await?;
            (answer, None, reached)
        } else {
            let sending = Sending::agent(dry_run);
            let (answer, status) = self
                .run_steps(agent_id, tool, input, sending, cancel, &mut detail)
                .await?;
            (answer, status, status.is_some())
        };
        if crate::telemetry::payloads() {
            // the answer as the calls log would keep an input: secret-looking fields of a
            // JSON answer (a created API key) and the connection's secrets redacted; a
            // text answer with the secrets redacted; an error's code and details, never
            // its sentence (which can quote a vendor's body)
            let said = match &answer {
                RunAnswer::Ok {
                    structured: Some(v),
                    ..
                } => logged_input(v, &hidden),
                RunAnswer::Ok { text, .. } => redact(text, &hidden),
                RunAnswer::Passed { result, .. } => logged_input(result, &hidden),
                RunAnswer::Err { code, details, .. } => {
                    logged_input(&json!({"code": code, "details": details}), &hidden)
                }
            };
            crate::telemetry::record_payload("gen_ai.tool.call.result", &said);
        }
        let message = match &answer {
            RunAnswer::Ok { .. } | RunAnswer::Passed { .. } => None,
            RunAnswer::Err { message, .. } => Some(crate::domain::openapi::truncate_chars(
                &redact(message, &hidden),
                LOGGED_MESSAGE_CHARS,
            )),
        };
        // the input's own secret values are redacted from the detail too
        let request = detail.request.map(|r| redact(&r, &hidden));
        let response = detail.response.map(|r| redact(&r, &hidden));
        let call = db::NewCall {
            agent_id,
            tool_id: tool.id,
            version: tool.version,
            dry_run,
            status: if answer.code().is_none() {
                "ok"
            } else {
                "error"
            },
            http_status: http_status.map(i64::from),
            duration_ms: started.elapsed().as_millis() as i64,
            error_code: answer.code(),
            input: Some(&logged),
            message: message.as_deref(),
            request: request.as_deref(),
            response: response.as_deref(),
        };
        // the call log and, when the vendor was reached, the tool's usage: one transaction.
        // The call has happened by now: when the log cannot be written (the database went
        // away, or stayed busy), the agent still gets the vendor's answer, so that it never
        // repeats a write it believes failed.
        let recorded = tracing::Instrument::instrument(
            async {
                let mut tx = self.write_tx().await?;
                db::record_call(&mut tx, &call, reached, self.now()).await?;
                tx.commit().await
            },
            crate::trace_span!("database write", db.operation.name = "record call"),
        )
        .await;
        if let Err(e) = recorded {
            tracing::error!(error = ?e, agent = agent_id, tool = %format!("{}__{}", tool.vendor, tool.name), http_status = ?call.http_status, "a tool call ran but could not be written to the calls log");
        }
        let outcome = self.finish_call(
            agent_id,
            tool,
            dry_run,
            answer.code(),
            call.http_status,
            call.duration_ms,
        );
        self.call_logged().await;
        // the team's webhook hears of failing vendors and refused credentials (28.3)
        // the vendor failing (5xx, 429, a timeout, unreachable), not an agent's bad input
        if outcome == crate::metrics::CallOutcome::VendorError
            && call.http_status.is_none_or(|s| s >= 500 || s == 429)
        {
            self.vendor_failed(&tool.vendor).await;
        }
        if call.http_status == Some(401) && !upstream {
            if let Some(id) = self
                .call_setting(tool)
                .await
                .ok()
                .and_then(|s| s.connection_id)
            {
                self.connection_failed(
                    &tool.vendor,
                    id,
                    &format!("the vendor answered 401 Unauthorized to a call of {}__{}: its credential was refused", tool.vendor, tool.name),
                )
                .await;
            }
        }
        Ok(answer)
    }

    /// Counts a run in `graft_tool_calls_total` (issue 30.1) and logs its one line
    /// (issue 30.3): `tool call` with agent (id), tool, version, dry_run, outcome, code,
    /// http_status and ms, and trace_id and span_id when traces are on; never the input,
    /// the answer or the error's sentence (which may quote either). At info, and at warn when the vendor failed. Returns the outcome.
    fn finish_call(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        dry_run: bool,
        code: Option<&str>,
        http_status: Option<i64>,
        ms: i64,
    ) -> crate::metrics::CallOutcome {
        use crate::metrics::CallOutcome;
        let outcome = CallOutcome::of(dry_run, code);
        self.inner.metrics.tool_call(&tool.vendor, outcome);
        let qualified = format!("{}__{}", tool.vendor, tool.name);
        // with traces on, the line names its trace and span (issue 30.3)
        let ids = crate::telemetry::current_ids();
        let (trace_id, span_id) = match &ids {
            Some((t, s)) => (Some(t.as_str()), Some(s.as_str())),
            None => (None, None),
        };
        macro_rules! line {
            ($level:ident) => {
                tracing::$level!(
                    agent = agent_id,
                    trace_id,
                    span_id,
                    tool = %qualified,
                    version = tool.version,
                    dry_run,
                    outcome = outcome.as_str(),
                    code = code.unwrap_or(""),
                    http_status,
                    ms,
                    "tool call"
                )
            };
        }
        if outcome == CallOutcome::VendorError {
            line!(warn);
        } else {
            line!(info);
        }
        outcome
    }

    /// SPEC §4.1's steps for an HTTP tool, sent as `sending` says: the answer and the
    /// vendor's status (`None` when nothing was sent).
    pub(super) async fn run_steps(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        sending: Sending,
        cancel: &CancellationToken,
        detail: &mut SentDetail,
    ) -> ServiceResult<(RunAnswer, Option<u16>)> {
        let qualified = format!("{}__{}", tool.vendor, tool.name);
        let (input, binding) = match self
            .checked_input(agent_id, tool, &qualified, input)
            .await?
        {
            Ok(checked) => checked,
            Err(answer) => return Ok((answer, None)),
        };
        // 2. connection and request
        let setting = self.call_setting(tool).await?;
        // an operation that declares `security: []` gets no credential, and needs no
        // connection (issue 25.1)
        let credential = match &setting.credential {
            _ if binding.public => &Credential::None,
            Ok(c) => c,
            Err(answer) => return Ok((answer.clone(), None)),
        };
        let base_url = &setting.base_url;
        let op = Operation {
            method: &tool.method,
            path_template: &tool.path_template,
            binding: &binding,
        };
        let planned = match request::build(base_url, op, &input, credential) {
            Ok(p) => p,
            Err(msg) => return Ok((RunAnswer::err("invalid_input", msg, json!({})), None)),
        };
        // 3. dry run: reads go on, everything else stops here with a redacted preview
        let method = tool.method.to_ascii_uppercase();
        if sending == Sending::DryRun && !matches!(method.as_str(), "GET" | "HEAD") {
            let preview = request::build(base_url, op, &input, &credential.redacted())
                .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e)))?
                .preview();
            let structured = json!({"dryRun": true, "request": preview});
            let text = format!(
                "Dry run of {qualified}: nothing was sent. The request would be:\n{}",
                serde_json::to_string_pretty(&structured["request"]).unwrap_or_default()
            );
            return Ok((
                RunAnswer::Ok {
                    text,
                    structured: Some(structured),
                    media: None,
                },
                None,
            ));
        }
        // 4. approval of writes, and of every tool or version an agent authored, for
        // every call of an agent that reaches the vendor: a dry run of a GET or HEAD goes
        // on as a real read, so a GET that writes (readOnlyHint false) or an agent's own
        // tool asks as a call would (SPEC §4.4). Not asked of a person who sends a tool
        // from its page: they decide themselves
        if sending != Sending::Person {
            let check = self.approval_check(agent_id, tool, &qualified, &method);
            if let Some(answer) = check.await? {
                return Ok((answer, None));
            }
        }
        // 5. send; an agent's notifications/cancelled stops the vendor request (issue
        // 25.11): reqwest drops the connection, and the log says what may have happened
        let secrets = credential.secrets();
        // what the calls log's detail keeps of the request (issue 28.9): the preview a dry
        // run shows, with the credential and secret-looking fields redacted
        let mut hidden = detail.hidden.clone();
        hidden.extend(secrets.iter().cloned());
        if let Ok(p) = request::build(base_url, op, &input, &credential.redacted()) {
            // secrets redacted before the preview is cut (a cut secret is not found)
            let preview = redact(&p.preview().to_string(), &hidden);
            let preview = serde_json::from_str(&preview).unwrap_or(Value::Null);
            detail.request = Some(logged_input(&preview, &hidden));
        }
        let sent = Instant::now();
        // a client span (OpenTelemetry HTTP conventions); the proxy sends its context to
        // the vendor as `traceparent` (issue 30.2)
        let vendor_span = vendor_span(format_args!("{method} {}", tool.vendor));
        if crate::telemetry::enabled() {
            use crate::telemetry::set;
            set(&vendor_span, "http.request.method", method.clone());
            set(
                &vendor_span,
                "server.address",
                planned.url.host_str().unwrap_or("").to_string(),
            );
            if let Some(port) = planned.url.port_or_known_default() {
                set(&vendor_span, "server.port", i64::from(port));
            }
            set(&vendor_span, "url.template", tool.path_template.clone());
            set(&vendor_span, "graft.vendor", tool.vendor.clone());
        }
        let send = tracing::Instrument::instrument(
            self.inner.proxy.send(&planned, setting.internal),
            vendor_span.clone(),
        );
        let mut response = tokio::select! {
            r = send => match r {
                Ok(r) => {
                    self.inner.metrics.vendor_request(&tool.vendor, Some(r.status), sent.elapsed().as_secs_f64());
                    crate::telemetry::set(&vendor_span, "http.response.status_code", i64::from(r.status));
                    if r.status >= 400 {
                        span_failed(&vendor_span, r.status.to_string());
                    }
                    drop(vendor_span);
                    r
                }
                Err(msg) => {
                    span_failed(&vendor_span, "vendor_unreachable");
                    self.inner.metrics.vendor_request(&tool.vendor, None, sent.elapsed().as_secs_f64());
                    return Ok((RunAnswer::err("vendor_unreachable", msg, json!({})), None));
                }
            },
            _ = cancel.cancelled() => {
                span_failed(&vendor_span, "cancelled");
                let message = if writes(&method, tool.read_only_hint) {
                    format!("cancelled by the agent before {} answered; the vendor may have acted: check before repeating this write", tool.vendor)
                } else {
                    format!("cancelled by the agent before {} answered", tool.vendor)
                };
                return Ok((RunAnswer::err("cancelled", message, json!({})), None));
            }
        };
        // the connection's "last used" (issue 28.2; written at most once a minute), unless
        // the vendor refused it
        let refused = matches!(response.status, 401 | 403);
        if let (Some(id), false, false) = (setting.connection_id, binding.public, refused) {
            self.note_connection_used(id).await;
        }
        let limits = self.inner.proxy.limits();
        let mut uri = planned.url.clone();
        uri.set_query(None);
        // a large answer is rendered (decoded, redacted, counted in tokens) off the
        // async threads, so that it does not hold up other agents' calls
        let body = std::mem::take(&mut response.body);
        let large = body.len() > RENDER_INLINE_BYTES;
        let (content_type, truncated) = (response.content_type.clone(), response.truncated);
        let render_secrets = secrets.clone();
        let render = move || {
            super::answer::render(
                &body,
                content_type.as_deref(),
                truncated,
                &limits,
                &|t| redact(t, &render_secrets),
                &render_secrets,
                uri.as_str(),
            )
        };
        let rendered = if large {
            tokio::task::spawn_blocking(render)
                .await
                .map_err(|e| ServiceError::Internal(anyhow::anyhow!("rendering an answer: {e}")))?
        } else {
            render()
        };
        let super::answer::Rendered {
            mut text,
            structured: value,
            media,
            cut,
        } = rendered;
        if cut {
            // how to ask for the rest (issue 29.4): the inputs of this tool that page
            if let Some(hint) = super::answer::paging_hint(&tool.input_schema) {
                text.push_str(&hint);
            }
        }
        let status = response.status;
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let status_line = format!("HTTP {status} {reason}").trim_end().to_string();
        // what the vendor said beside the body (issue 25.5), redacted like the body
        let mut headers = super::answer::kept_headers(&response.headers, &|t| redact(t, &secrets));
        let mut hidden = detail.hidden.clone();
        hidden.extend(secrets.iter().cloned());
        let redacted_value = value
            .as_ref()
            .and_then(|v| serde_json::from_str::<Value>(&redact(&v.to_string(), &hidden)).ok());
        detail.response = Some(response_detail(
            status,
            &headers,
            redacted_value.as_ref(),
            &redact(&text, &hidden),
            &hidden,
        ));
        if let Some(next) = &response.redirect {
            // a redirect Graft did not follow (another origin, out of the base path, too
            // many hops): where the answer is, never fetched with the credential (issue
            // 25.6)
            let location = redact(next.as_str(), &secrets);
            headers.remove("location");
            let header_lines = super::answer::header_lines(&headers);
            let text = format!(
                "{} answered {status_line}: the answer is at {location}. Graft follows redirects only on the vendor's own origin and base path, so it did not fetch this one and sent no credential there; fetch that URL yourself if you can, or give it to your user.{header_lines}",
                tool.vendor
            );
            let structured = json!({"status": status, "location": location, "headers": headers});
            return Ok((
                RunAnswer::Ok {
                    text,
                    structured: Some(structured),
                    media: None,
                },
                Some(status),
            ));
        }
        let header_lines = super::answer::header_lines(&headers);
        if (200..300).contains(&status) {
            let mut structured = value.filter(Value::is_object);
            if text.is_empty() {
                // 204/205 or an empty 2xx body: a success the agent can read
                text = if matches!(status, 204 | 205) {
                    status_line
                } else {
                    format!("{status_line} (empty body)")
                };
            }
            if !headers.is_empty() {
                text.push_str(&header_lines);
                if let Some(Value::Object(m)) = &mut structured {
                    m.entry(super::answer::HEADERS_KEY)
                        .or_insert_with(|| Value::Object(headers.clone()));
                }
            }
            Ok((
                RunAnswer::Ok {
                    text,
                    structured,
                    media,
                },
                Some(status),
            ))
        } else {
            // the body as JSON when it is JSON and within the budget, else its text; and
            // in the message too: most clients give the model only the text of an error
            // (issue 25.4)
            let body = value.unwrap_or(Value::String(text.clone()));
            let retry = super::answer::retry_after(&headers, self.inner.clock.now());
            let when = match (retry, status) {
                (Some(secs), _) => {
                    format!(" Retry after {secs} s (the vendor's Retry-After or rate-limit reset).")
                }
                (None, 429 | 503) => {
                    " The vendor did not say when to retry: wait a little before trying again."
                        .to_string()
                }
                _ => String::new(),
            };
            let said = if text.trim().is_empty() {
                "The body was empty.".to_string()
            } else {
                format!("It said:\n{text}")
            };
            let mut details = json!({"status": status, "body": body});
            if !headers.is_empty() {
                details["headers"] = Value::Object(headers);
            }
            if let Some(secs) = retry {
                details["retryAfterSeconds"] = json!(secs);
            }
            Ok((
                RunAnswer::err(
                    "vendor_error",
                    format!(
                        "{} answered {status_line}.{when} {said}{header_lines}",
                        tool.vendor
                    ),
                    details,
                ),
                Some(status),
            ))
        }
    }
}

/// What a call of a first-class tool (`vendor__name`, SPEC §3.6) came to.
#[derive(Debug)]
pub enum ToolCall {
    /// The tool ran (or was refused in words: approval, input, vendor): its answer.
    Ran(super::RunAnswer),
    /// The tool is usable but not in the agent's working set: the agent must promote it
    /// first (SPEC §3.6). Nothing was sent or logged.
    NotPromoted,
}

impl Graft {
    /// Calls `vendor__name` as a first-class tool of the agent's list (SPEC §3.6): only a
    /// tool in the agent's working set runs. A retired tool, or one of a disabled or
    /// removed vendor, is not answered `NotPromoted` but refused in words (and logged) by
    /// the run, as `run_tool` refuses it. Errors: `ToolNotFound` when no such tool exists.
    pub async fn call_promoted_tool(
        &self,
        agent_id: i64,
        vendor: &str,
        name: &str,
        input: serde_json::Value,
        cancel: &CancellationToken,
    ) -> ServiceResult<ToolCall> {
        let row = self.tool_for_call(vendor, name).await?;
        if !self.is_promoted(agent_id, row.id).await? && super::tools::usable(&row).is_ok() {
            return Ok(ToolCall::NotPromoted);
        }
        let answer = self
            .run_and_learn(agent_id, &row, input, false, cancel)
            .await?;
        Ok(ToolCall::Ran(answer))
    }
}
