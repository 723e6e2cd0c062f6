//! Checking a call's input against its tool's schema (SPEC §4.2): on the blocking pool,
//! a bounded number at once, within a time budget, so no input can hold the server.

use super::tools::usable;
use super::{Graft, RunAnswer, ServiceError, ServiceResult};
use crate::db;
use crate::domain::schema;
use crate::domain::tool::Binding;
use serde_json::Map;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long checking one input against a tool's schema may take before the call is
/// refused as invalid input (the work runs on the blocking pool, never on an async
/// worker).
pub const VALIDATION_BUDGET: Duration = Duration::from_secs(2);

/// Validations running at once in the process (each on a blocking thread): the CPU count,
/// at least 2. Each agent has one of them at most.
pub fn validation_slots() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
}

/// A tool version's input schema, parsed and compiled once (versions are immutable).
pub(crate) struct InputCheck {
    validator: jsonschema::Validator,
    schema: Value,
}

impl Graft {
    /// Checks `input` against a tool version's input schema (JSON Schema 2020-12 /
    /// draft-07 by `$schema`, patterns bounded as [`schema::validator`] says) and
    /// returns it as it will be sent: numbers with no fractional part where the schema
    /// wants an integer become integers first ([`schema::integral_floats_to_integers`],
    /// issue 25.10). Violations, as `{pointer, message}`: each top-level input the
    /// schema does not declare (issue 25.3: it would otherwise travel in the query
    /// string), then the first violation of the schema.
    ///
    /// Bounded in every way an agent could push it: compiling and validating run on
    /// tokio's blocking pool, so no slow schema or input holds an async worker (other
    /// agents' calls, `/healthz`, the console); an agent has one validation running at a
    /// time and the process [`validation_slots`] at most, so validations that outlive
    /// their answer cannot pile up; the check stops at the first violation (collecting
    /// every error of a big input against a wide `anyOf` took gigabytes); and past
    /// [`VALIDATION_BUDGET`] (waiting for a slot included) the input is refused with one
    /// violation saying so.
    pub(crate) async fn check_input(
        &self,
        agent_id: i64,
        tool_id: i64,
        version: i64,
        schema_text: &str,
        input: Value,
        exploded: Vec<String>,
    ) -> ServiceResult<(Vec<Value>, Value)> {
        let too_slow = || {
            vec![json!({"pointer": "/", "message": format!(
                "the input took longer than {} s to validate against this tool's schema; send a smaller input",
                VALIDATION_BUDGET.as_secs()
            )})]
        };
        let deadline = tokio::time::Instant::now() + VALIDATION_BUDGET;
        let mine = self
            .inner
            .agent_validations
            .lock()
            .expect("validation slots")
            .entry(agent_id)
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(1)))
            .clone();
        let slots = async {
            let mine = mine.acquire_owned().await.ok()?;
            let any = self
                .inner
                .validation_slots
                .clone()
                .acquire_owned()
                .await
                .ok()?;
            Some((mine, any))
        };
        let Ok(Some(permits)) = tokio::time::timeout_at(deadline, slots).await else {
            return Ok((too_slow(), input));
        };
        let key = (tool_id, version);
        let cached = self
            .inner
            .validators
            .lock()
            .expect("validator cache")
            .get(&key)
            .cloned();
        let schema_text = schema_text.to_owned();
        let kept = input.clone();
        let work = tokio::task::spawn_blocking(move || {
            // the slots are held until the work ends, even when its answer was given up
            let _permits = permits;
            let check = match cached {
                Some(v) => v,
                None => {
                    let schema: Value = serde_json::from_str(&schema_text)
                        .map_err(|e| ServiceError::Internal(e.into()))?;
                    let validator = schema::validator(&schema).map_err(|e| {
                        ServiceError::Internal(anyhow::anyhow!(
                            "stored schema of tool {tool_id} v{version} is invalid: {e}"
                        ))
                    })?;
                    Arc::new(InputCheck { validator, schema })
                }
            };
            let mut input = input;
            schema::integral_floats_to_integers(&check.schema, &mut input);
            let mut found: Vec<Value> = match &input {
                Value::Object(m) => schema::undeclared(&check.schema, m)
                    .into_iter()
                    .map(|k| {
                        let pointer = format!("/{}", k.replace('~', "~0").replace('/', "~1"));
                        let owned = {
                            let h = crate::domain::tool::header_key(&k);
                            h.starts_with("proxy-")
                                || h.starts_with("x-forwarded-")
                                || h.starts_with("x-original-")
                                || h.starts_with("x-envoy-")
                                || crate::domain::tool::OWNED_HEADERS.contains(&h.as_str())
                        };
                        let message = if owned {
                            format!("{k:?} is set by Graft or the vendor connection, not by the tool's input: leave it out")
                        } else {
                            format!("{k:?} is not an input of this tool (it is not in its inputSchema's properties): leave it out or use one of the declared properties")
                        };
                        json!({"pointer": pointer, "message": message})
                    })
                    .collect(),
                _ => Vec::new(),
            };
            // an object parameter sent as form + explode puts each of its properties in
            // the query as a parameter of its own: an undeclared one would be a new
            // parameter (or a second value of a declared one), so it is refused too
            for prop in &exploded {
                let (Some(Value::Object(value)), Some(sub)) = (
                    input.get(prop),
                    check.schema.pointer(&format!(
                        "/properties/{}",
                        prop.replace('~', "~0").replace('/', "~1")
                    )),
                ) else {
                    continue;
                };
                if sub.get("properties").is_none() {
                    continue;
                }
                for k in schema::undeclared(sub, value) {
                    found.push(json!({
                        "pointer": format!("/{prop}/{k}"),
                        "message": format!("{k:?} is not a property of {prop:?}: it would be sent as a query parameter of its own; leave it out"),
                    }));
                }
            }
            if let Err(e) = check.validator.validate(&input) {
                let pointer = e.instance_path().to_string();
                found.push(json!({"pointer": if pointer.is_empty() { "/".to_string() } else { pointer }, "message": e.to_string()}));
            }
            Ok::<_, ServiceError>((check, found, input))
        });
        let (check, found, input) = match tokio::time::timeout_at(deadline, work).await {
            Ok(done) => done.map_err(|e| ServiceError::Internal(e.into()))??,
            Err(_) => return Ok((too_slow(), kept)),
        };
        let mut cache = self.inner.validators.lock().expect("validator cache");
        if cache.len() > 1024 {
            cache.clear();
        }
        cache.insert(key, check);
        Ok((found, input))
    }
}

impl Graft {
    /// Steps 0 and 1 of a run (SPEC §4.1), for every kind of tool: a retired tool, or one
    /// of a disabled or removed vendor, runs nothing; the input is checked against the
    /// current version's input schema. `Ok(Err(answer))` is the tool error to give.
    pub(crate) async fn checked_input(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        qualified: &str,
        input: Value,
    ) -> ServiceResult<Result<(Map<String, Value>, Binding), RunAnswer>> {
        // 0. a retired tool, or one of a disabled vendor, runs nothing
        if let Err(e) = usable(tool) {
            let code = if tool.vendor_removed_at.is_some() {
                "vendor_removed"
            } else if tool.vendor_disabled_at.is_some() {
                "vendor_disabled"
            } else {
                "tool_retired"
            };
            let message = match e {
                ServiceError::ToolNotFound(m) => m,
                other => other.to_string(),
            };
            return Ok(Err(RunAnswer::err(
                code,
                message,
                json!({"tool": qualified}),
            )));
        }
        // 1. validate
        let input = match input {
            Value::Null => Value::Object(Map::new()),
            v => v,
        };
        let binding: Binding =
            serde_json::from_str(&tool.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let exploded: Vec<String> = binding
            .styles
            .iter()
            .filter(|(p, st)| {
                st.explode
                    && st.style == crate::domain::tool::Style::Form
                    && (binding.query.contains_key(*p) || binding.cookies.contains_key(*p))
            })
            .map(|(p, _)| p.clone())
            .collect();
        let (violations, input) = tracing::Instrument::instrument(
            self.check_input(
                agent_id,
                tool.id,
                tool.version,
                &tool.input_schema,
                input,
                exploded,
            ),
            crate::trace_span!("validate"),
        )
        .await?;
        if !violations.is_empty() {
            let list = violations
                .iter()
                .map(|v| {
                    format!(
                        "{}: {}",
                        v["pointer"].as_str().unwrap_or(""),
                        v["message"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            return Ok(Err(RunAnswer::err(
                "invalid_input",
                format!("the input does not match {qualified}'s input schema: {list}"),
                json!({"violations": violations}),
            )));
        }
        let Value::Object(input) = input else {
            return Ok(Err(RunAnswer::err(
                "invalid_input",
                "input must be a JSON object",
                json!({"violations": [{"pointer": "/", "message": "not an object"}]}),
            )));
        };
        Ok(Ok((input, binding)))
    }
}
