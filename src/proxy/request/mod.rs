//! Building the vendor HTTP request from a tool's binding and the agent's input (SPEC
//! §4.2). Pure: no I/O. The result can be sent, or shown redacted as a dry-run preview.
//!
//! - `{param}` placeholders are filled from input properties, percent-encoded; a value
//!   that could leave its path segment (`/`, `\`, `?`, `#`, `.`/`..`, or their
//!   percent-encoded forms) is refused.
//! - Query parameters follow OpenAPI's defaults: `form` + explode (arrays repeat the
//!   name), objects as `name[key]=value` (deepObject, as Stripe uses).
//! - Bodies: JSON, or `application/x-www-form-urlencoded` with `a[b]=c` / `a[0]=c`
//!   nesting (Stripe, Twilio, Slack). GET, HEAD and DELETE never carry a body: their
//!   remaining inputs go to the query string.
//! - The credential comes from the connection (and fills any parameter the document
//!   declared for it, as Slack's `token`); no header of the agent's reaches the vendor.
//! - The URL stays on the vendor's scheme, host and port.

mod build;
mod credential;
mod origin;
mod params;
mod planned;
mod query;

pub use build::{build, Operation};
pub use credential::{Credential, REDACTED};
pub use origin::{same_origin, under_base_path};
pub use planned::{Part, PlannedRequest};

/// A binding, an operation and an input, shared by the tests of this module's files.
#[cfg(test)]
mod tests {
    use super::Operation;
    use crate::domain::tool::{Binding, BodyEncoding};
    use serde_json::{Map, Value};
    use std::collections::BTreeMap;

    pub(super) fn binding() -> Binding {
        Binding {
            path: BTreeMap::from([("id".to_string(), "id".to_string())]),
            query: BTreeMap::from([("limit".to_string(), "limit".to_string())]),
            headers: BTreeMap::from([("X-Trace".to_string(), "X-Trace".to_string())]),
            body: Some(BodyEncoding::Form),
            ..Default::default()
        }
    }

    /// The operation `method path_template` bound by `binding`.
    pub(super) fn op<'a>(
        method: &'a str,
        path_template: &'a str,
        binding: &'a Binding,
    ) -> Operation<'a> {
        Operation {
            method,
            path_template,
            binding,
        }
    }

    pub(super) fn input(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }
}
