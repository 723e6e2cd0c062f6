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
}
