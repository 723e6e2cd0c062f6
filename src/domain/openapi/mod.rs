//! OpenAPI import (issue 2 item 4): Swagger 2.0 and OpenAPI 3.0 / 3.1 documents, JSON or
//! YAML, become tool drafts, one per operation.
//!
//! Documents are read by serde_json and serde_norway into a `serde_json::Value`, and the
//! OpenAPI structure (paths, operations, parameters, requestBody, security schemes) is
//! walked here. No Rust OpenAPI crate reads all three versions of the documents Graft
//! must import: measured on ../shared/specs, `oas3` 0.22 refuses both Swagger 2.0
//! documents and `openapiv3`/`openapiv3-extended` refuse 3.1 and 2.0; and schemas must stay
//! raw JSON anyway to be inlined and served as JSON Schema.
//!
//! Rules: names per SPEC §2 via [`names::tool_name_for`]; one root object input schema
//! holding path, query, header and body inputs; fixed `Accept`/`Content-Type` and
//! credential parameters left out; GET/HEAD/DELETE never get a body (its properties go
//! to the query string); hints from the method.
//!
//! [`names::tool_name_for`]: crate::domain::names::tool_name_for

mod body;
mod document;
mod input;
mod plan;
mod security;

pub use document::{
    base_url, list_operations, operation_key, parse_document, path_placeholders, search_operations,
    spec_version, OperationSummary, SpecVersion,
};
pub use input::{truncate_chars, MAX_DESCRIPTION};
pub use plan::{draft_operation, plan_import, plan_import_with, ImportPlan, Skipped};
pub use security::{connection_hint, is_public};

/// A plan for a document, shared by the tests of this module's files.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::names::VendorSlug;
    use serde_json::Value;
    use std::collections::HashMap;

    pub(super) fn plan(doc: Value) -> ImportPlan {
        let v = VendorSlug::parse("acme").unwrap();
        plan_import(&doc, &v, &|_| false, &HashMap::new(), &mut |_, _| {}).unwrap()
    }
}
