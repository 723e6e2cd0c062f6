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

/// What a person asked of a send from a tool's page ([`Graft::try_send`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrySend {
    /// The version the person dry-ran: a tool changed since is not sent.
    pub version: Option<i64>,
    /// Whether the person confirmed a tool that asks agents for approval (a write, or
    /// one an agent wrote): without it such a tool is not sent.
    pub confirmed: bool,
}

/// What of an input a page shows as `<redacted>`: the top-level properties its schema
/// marks secret (`format: password`, `writeOnly`), and the values (as text) of those and
/// of every field whose name looks secret ([`crate::proxy::redact::secret_values`]).
struct InputSecrets {
    keys: Vec<String>,
    values: Vec<String>,
}

impl InputSecrets {
    /// The secrets of `input` (a JSON object) under `input_schema` (JSON text).
    fn of(input_schema: &str, input: &Value) -> Self {
        let schema: Value = serde_json::from_str(input_schema).unwrap_or_default();
        let keys = crate::domain::try_form::secret_properties(&schema);
        let mut values = Vec::new();
        crate::proxy::redact::secret_values(input, false, &mut values);
        for key in &keys {
            match input.get(key) {
                Some(Value::String(v)) => values.push(v.clone()),
                Some(Value::Null) | None => {}
                Some(v) => crate::proxy::redact::secret_values(v, true, &mut values),
            }
        }
        values.retain(|v| !v.is_empty());
        Self { keys, values }
    }

    /// `text` with the secret values redacted.
    fn redact(&self, text: &str) -> String {
        crate::proxy::redact::redact(text, &self.values)
    }

    /// Redacts a request preview in place: the value of every key that looks secret
    /// or is a secret property, whatever its type (a number, an object), and the secret
    /// values wherever a string holds them (a query string, a path).
    fn redact_preview(&self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.redact(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_preview(i)),
            Value::Object(m) => {
                for (k, v) in m.iter_mut() {
                    let secret = crate::proxy::redact::secret_field(k) || self.keys.contains(k);
                    match v {
                        Value::Null => {}
                        _ if secret => *v = Value::String("<redacted>".into()),
                        _ => self.redact_preview(v),
                    }
                }
            }
            _ => {}
        }
    }
}

/// The validation slot the console's tries share (agents' ids start at 1).
const CONSOLE_SLOT: i64 = 0;

/// The form's fields of `input_schema` (JSON text): a field whose name looks secret
/// ([`crate::proxy::redact`]'s secret words) counts as one, as the schema's marks do.
pub fn form_fields_of(input_schema: &str) -> Vec<crate::domain::try_form::FormField> {
    let schema: serde_json::Value = serde_json::from_str(input_schema).unwrap_or_default();
    let mut fields = crate::domain::try_form::form_fields(&schema);
    for f in &mut fields {
        f.secret |= crate::proxy::redact::secret_field(&f.name);
    }
    fields
}

/// The values of a try the page may show again: those of the form's fields only, none
/// of a secret field, and no JSON (a field of JSON, or the whole input) whose schema
/// may hold a secret below it or whose text quotes a key that looks secret (parsed or
/// not: a half-typed object is shown back no more than a whole one).
pub fn shown_values(
    input_schema: &str,
    mut values: std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, String> {
    use crate::domain::try_form::{may_hold_secret, FieldKind};
    use crate::proxy::redact::secret_field;
    let schema: serde_json::Value = serde_json::from_str(input_schema).unwrap_or_default();
    let fields = form_fields_of(input_schema);
    // every quoted text, as a key would be (escapes aside: a guess that errs to hiding)
    let quotes_secret = |text: &str| text.split('"').skip(1).step_by(2).any(secret_field);
    values.retain(|name, value| {
        if name.is_empty() {
            return !may_hold_secret(&schema, &secret_field) && !quotes_secret(value);
        }
        match fields.iter().find(|f| &f.name == name) {
            None => false,
            Some(f) if f.secret => false,
            Some(f) if f.kind == FieldKind::Json => {
                !may_hold_secret(&schema["properties"][name.as_str()], &secret_field)
                    && !quotes_secret(value)
            }
            Some(_) => true,
        }
    });
    values
}

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
        // a refusal may quote the input (a schema's violations): its secrets redacted
        let secrets = InputSecrets::of(&tool.input_schema, &input);
        let refused = |answer: super::RunAnswer| match answer {
            super::RunAnswer::Err { code, message, .. } => TryOutcome::Refused {
                code,
                message: secrets.redact(&message),
            },
            other => TryOutcome::Refused {
                code: "invalid_input",
                message: secrets.redact(&format!("{other:?}")),
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
            Ok(planned) => {
                let mut preview = planned.preview();
                secrets.redact_preview(&mut preview);
                Ok(TryOutcome::Request(preview))
            }
            Err(message) => Ok(TryOutcome::Refused {
                code: "invalid_input",
                message: secrets.redact(&message),
            }),
        }
    }

    /// Sends `vendor__name` with `input` for a person trying it from its page (issue
    /// 28.10): the checks of an agent's call, the connection's credential, then the
    /// vendor's answer as an agent would get it, redacted. The person decides for
    /// themselves (no approval is asked): a tool that asks agents for approval goes
    /// only when `send.confirmed`, and a tool no longer at `send.version` (the version
    /// dry-run) is not sent. Audited as `tool.try`, a refused send too (the status or
    /// why it was not sent, never the input); not in the calls log, which holds agents'
    /// calls. Errors: `ToolNotFound`; `Invalid` for an agent as the actor or an MCP
    /// server's tool; `Conflict` when the tool changed since the dry run or a write is
    /// not confirmed.
    pub async fn try_send(
        &self,
        actor: &super::Actor,
        vendor: &str,
        name: &str,
        send: TrySend,
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
        let qualified = format!("{vendor}__{name}");
        // the version as stored: another process's publish reaches this one's cache
        // within a second, and a send must not beat it
        let current = match send.version {
            Some(_) => self.tool(vendor, name).await?.version,
            None => tool.version,
        };
        let changed = send
            .version
            .filter(|v| *v != current || tool.version != current);
        // (what the audit says, what the person is told)
        let refusal = match changed {
            Some(seen) => Some((
                format!("changed since the dry run of version {seen}"),
                format!(
                    "{qualified} changed since your dry run (version {seen}, now {current}): dry-run it again"
                ),
            )),
            // what asks an agent for approval asks the person to confirm
            None if !send.confirmed && super::approvals::gated(&tool) => Some((
                "a write not confirmed".to_string(),
                format!(
                    "{qualified} asks agents for approval (it writes, or an agent wrote it): tick \"Send this write\" to send it to {vendor}"
                ),
            )),
            None => None,
        };
        if let Some((why, refusal)) = refusal {
            self.audit(
                actor,
                crate::domain::audit::AuditAction::ToolTry,
                &qualified,
                Some(&format!("version {current}: not sent: {why}")),
            )
            .await?;
            return Err(ServiceError::Conflict(refusal));
        }
        let mut detail = super::call_detail::SentDetail {
            hidden: InputSecrets::of(&tool.input_schema, &input).values,
            ..Default::default()
        };
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
        let said = match (status, &answer) {
            (Some(s), _) => format!("HTTP {s}"),
            _ if unanswered => "sent, no answer".to_string(),
            // refused before sending: the tool error's code says why
            (None, super::RunAnswer::Err { code, .. }) => format!("not sent: {code}"),
            (None, _) => "not sent".to_string(),
        };
        self.audit(
            actor,
            crate::domain::audit::AuditAction::ToolTry,
            &qualified,
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
