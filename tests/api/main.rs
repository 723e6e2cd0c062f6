//! Integration tests: real HTTP on port 0, a fresh database per test (SQLite, or
//! PostgreSQL with `GRAFT_TEST_BACKEND=postgres`), rmcp's client.

mod activity;
mod approvals;
mod audit;
mod authoring;
mod calls_log;
mod cli_care;
mod connections;
mod console;
mod documents;
mod fidelity;
mod helpers;
mod hints;
mod import;
mod import_preview;
mod instances;
mod isolation;
mod latency;
mod lifecycle;
mod mcp_vendors;
mod metrics;
mod notify;
mod oauth;
mod protocol;
mod run;
mod search;
mod security;
mod starters;
mod sweep;
mod team_care;
mod tokens;
mod tool_page;
mod traces;
mod upstream;
mod vendor;
