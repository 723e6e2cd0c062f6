//! JSON Schemas as Graft serves them (SPEC §3.4): every `$ref` inlined (cycles cut at a
//! fixed depth), no `x-*` keys, and OpenAPI-only keywords turned into JSON Schema
//! 2020-12 (`nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`, `example`,
//! `discriminator`, `xml`, `externalDocs`), so that strict MCP clients keep the tool.

mod fit;
mod inline;
mod input;

pub use fit::fit;
pub use inline::{
    has_ref_or_extension, inline, inlines_within_budget, resolve_pointer, MAX_COPY_BYTES,
    MAX_NODES, MAX_REF_DEPTH,
};
pub use input::{
    admits_undeclared, drop_read_only, for_request, integral_floats_to_integers, is_plain_object,
    linear_validator, merge_all_of, undeclared, validator, BACKTRACK_LIMIT,
};
