//! A person tries a tool from its page (issue 28.10): the input is checked as an agent's
//! call checks it (SPEC §4.1 steps 0–2) and the request built with the connection's
//! credential redacted, as a dry run shows it. Nothing is sent, logged or approved, and
//! no agent is involved: it works before any agent holds the tool.

use super::{Graft, ServiceError, ServiceResult};
use crate::proxy::request::{self, Credential, Operation};
use serde_json::Value;

/// What trying a tool found ([`Graft::try_tool`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TryOutcome {
    /// The request an agent's call would send (`{method, url, headers, body}`, the
    /// credential shown as `<redacted>`).
    Request(Value),
    /// What the vendor answered a request a person sent ([`Graft::try_send`]): the
    /// text an agent would get (redacted), the HTTP status when the vendor was reached,
    /// and whether the call succeeded.
    Answer {
        /// Whether it succeeded (a 2xx, or a 3xx Graft did not follow).
        ok: bool,
        /// The vendor's status.
        status: Option<u16>,
        /// The answer as an agent gets it (an error's code and sentence when it failed).
        text: String,
        /// No status, but the request went out (a timeout, a dropped connection): the
        /// vendor may have acted on it.
        unanswered: bool,
    },
    /// Why an agent's call would be refused before sending: its tool error's code and
    /// sentence (`invalid_input` with the violations, `connection_revoked`, …).
    Refused {
        /// The tool error's code.
        code: &'static str,
        /// Its sentence.
        message: String,
    },
}

/// The validation slot the console's tries share (agents' ids start at 1).
const CONSOLE_SLOT: i64 = 0;

impl Graft {
    /// Builds the request `vendor__name` would send for `input` (a JSON object), as a
    /// dry run of it shows it, without an agent: a retired tool or a disabled vendor, an
    /// input its schema refuses, and a missing or revoked connection come back as
    /// [`TryOutcome::Refused`]. An MCP server's tool is refused (`Invalid`): its server
    /// builds its own request. Errors: `ToolNotFound`, `Invalid`.
    pub async fn try_tool(
        &self,
        vendor: &str,
        name: &str,
        input: Value,
    ) -> ServiceResult<TryOutcome> {
        let tool = self.tool_for_call(vendor, name).await?;
        if tool.method == crate::domain::mcp_vendor::MCP_METHOD {
            return Err(ServiceError::Invalid(format!(
                "{vendor}__{name} is a tool of an MCP server: its server builds the request, so there is none to show before an agent calls it"
            )));
        }
        let refused = |answer: super::RunAnswer| match answer {
            super::RunAnswer::Err { code, message, .. } => TryOutcome::Refused { code, message },
            other => TryOutcome::Refused {
                code: "invalid_input",
                message: format!("{other:?}"),
            },
        };
        let qualified = format!("{vendor}__{name}");
        let (input, binding) = match self
            .checked_input(CONSOLE_SLOT, &tool, &qualified, input)
            .await?
        {
            Ok(checked) => checked,
            Err(answer) => return Ok(refused(answer)),
        };
        let setting = self.call_setting(&tool).await?;
        let credential = match &setting.credential {
            _ if binding.public => Credential::None,
            Ok(c) => c.redacted(),
            Err(answer) => return Ok(refused(answer.clone())),
        };
        let op = Operation {
            method: &tool.method,
            path_template: &tool.path_template,
            binding: &binding,
        };
        match request::build(&setting.base_url, op, &input, &credential) {
            Ok(planned) => Ok(TryOutcome::Request(planned.preview())),
            Err(message) => Ok(TryOutcome::Refused {
                code: "invalid_input",
                message,
            }),
        }
    }

    /// Sends `vendor__name` with `input` for a person trying it from its page (issue
    /// 28.10): the checks of an agent's call, the connection's credential, then the
    /// vendor's answer as an agent would get it, redacted. The person decides for
    /// themselves (no approval is asked; the page confirms a write first). Audited as
    /// `tool.try` (the status, never the input); not in the calls log, which holds
    /// agents' calls. `version`, when given, is the version the person dry-ran: a tool
    /// changed since is not sent. Errors: `ToolNotFound`; `Invalid` for an agent as the
    /// actor or an MCP server's tool; `Conflict` when the tool is no longer at `version`.
    pub async fn try_send(
        &self,
        actor: &super::Actor,
        vendor: &str,
        name: &str,
        version: Option<i64>,
        input: Value,
    ) -> ServiceResult<TryOutcome> {
        if !matches!(actor, super::Actor::Person(_)) {
            return Err(ServiceError::Invalid(
                "only a person sends a tool from its page".into(),
            ));
        }
        let tool = self.tool_for_call(vendor, name).await?;
        if tool.method == crate::domain::mcp_vendor::MCP_METHOD {
            return Err(ServiceError::Invalid(format!(
                "{vendor}__{name} is a tool of an MCP server: an agent calls it through Graft"
            )));
        }
        // what the person dry-ran and confirmed is what is sent
        if let Some(seen) = version.filter(|v| *v != tool.version) {
            return Err(ServiceError::Conflict(format!(
                "{vendor}__{name} changed since your dry run (version {seen}, now {}): dry-run it again",
                tool.version
            )));
        }
        let mut detail = super::call_detail::SentDetail::default();
        crate::proxy::redact::secret_values(&input, false, &mut detail.hidden);
        let (answer, status) = self
            .run_steps(
                CONSOLE_SLOT,
                &tool,
                input,
                super::call_detail::Sending::Person,
                &tokio_util::sync::CancellationToken::new(),
                &mut detail,
            )
            .await?;
        // a request built goes out: without a status it may still have reached the vendor
        let unanswered = status.is_none() && detail.request.is_some();
        let said = match status {
            Some(s) => format!("HTTP {s}"),
            None if unanswered => "sent, no answer".to_string(),
            None => "not sent".to_string(),
        };
        self.audit(
            actor,
            crate::domain::audit::AuditAction::ToolTry,
            &format!("{vendor}__{name}"),
            Some(&format!("version {}: {said}", tool.version)),
        )
        .await?;
        let hidden = detail.hidden;
        Ok(match answer {
            super::RunAnswer::Err { code, message, .. } => TryOutcome::Answer {
                ok: false,
                status,
                text: crate::proxy::redact::redact(&format!("{code}: {message}"), &hidden),
                unanswered,
            },
            super::RunAnswer::Ok { text, .. } => TryOutcome::Answer {
                ok: true,
                status,
                text: crate::proxy::redact::redact(&text, &hidden),
                unanswered: false,
            },
            super::RunAnswer::Passed { result, .. } => TryOutcome::Answer {
                ok: true,
                status,
                text: result.to_string(),
                unanswered: false,
            },
        })
    }
}
