//! Prometheus metrics of one Graft server (issue 30.1): what `GET /metrics` exposes, in
//! the OpenMetrics text format (prometheus-client's encoder).
//!
//! Each [`crate::service::Graft`] owns one [`Metrics`], so several servers in one process
//! (the tests) never mix their counts, and on PostgreSQL with several instances each
//! instance reports its own. Labels never name an agent or a tool: their number is
//! unbounded (10,000 agents × 10,000 tools would be 10⁸ series); those go to the calls
//! log. Vendors are few and are a label.
//!
//! Names follow the OpenTelemetry semantic conventions for MCP where they name a metric
//! (`mcp.server.operation.duration` with `mcp.method.name`, `error.type`,
//! `mcp.protocol.version`, exported to Prometheus with dots as underscores and the unit
//! as suffix); the others are Graft's own, prefixed `graft_`.

use crate::domain::{Cause, HistoryAction};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Bucket bounds (seconds) of the MCP operation and vendor request histograms: the ones
/// the OpenTelemetry MCP conventions advise for `mcp.server.operation.duration`.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Bucket bounds (seconds) of find_tool and the sweep, which take milliseconds.
pub const FAST_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 30.0,
];

/// The `Content-Type` of [`Metrics::encode`]'s text (OpenMetrics 1.0, which Prometheus
/// scrapes natively).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// MCP methods counted under their own name (both revisions of MCP-PROTOCOL.md); any
/// other method is counted as `other`, so that a client cannot grow the label's values.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// Protocol versions counted under their own name (rmcp's `KNOWN_VERSIONS`); another
/// value is `other`.
const PROTOCOL_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    mcp_method_name: &'static str,
    /// Empty when the operation succeeded.
    error_type: String,
    mcp_protocol_version: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolCallLabels {
    vendor: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VendorLabels {
    vendor: String,
    status_class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CauseLabels {
    cause: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModeLabels {
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

fn fast_histogram() -> Histogram {
    Histogram::new(FAST_BUCKETS)
}

/// How a run of a vendor tool ended, as `graft_tool_calls_total` counts it (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The vendor answered and the answer went to the agent (any HTTP status the
    /// operation declares as success).
    Ok,
    /// The agent's call could not run as asked: invalid input, or cancelled by the agent.
    ToolError,
    /// The vendor answered an error status or could not be reached.
    VendorError,
    /// The call waits for a person's approval (SPEC §4.4).
    ApprovalRequired,
    /// Graft refused to run it: approval denied, over the agent's rate limits, a
    /// retired tool, a disabled or removed vendor, a revoked, suspended or ambiguous
    /// connection.
    Refused,
    /// A dry run that succeeded: a write built and shown, nothing sent; a read's dry
    /// run reaches the vendor (and is a `VendorError` when the vendor failed).
    DryRun,
}

impl CallOutcome {
    /// Every outcome, in the order the console's charts stack them.
    pub const ALL: [CallOutcome; 6] = [
        Self::Ok,
        Self::DryRun,
        Self::ApprovalRequired,
        Self::ToolError,
        Self::Refused,
        Self::VendorError,
    ];

    /// The outcome of a run that answered `code` (`None`: success), from
    /// [`crate::service::run::RunAnswer::code`]'s codes.
    pub fn of(dry_run: bool, code: Option<&str>) -> Self {
        use crate::domain::calls::{error_kind, ErrorKind};
        match code.map(error_kind) {
            None if dry_run => Self::DryRun,
            None => Self::Ok,
            Some(ErrorKind::ApprovalRequired) => Self::ApprovalRequired,
            Some(ErrorKind::VendorError) => Self::VendorError,
            Some(ErrorKind::Refused) => Self::Refused,
            Some(ErrorKind::ToolError) => Self::ToolError,
        }
    }

    /// The label value: `ok`, `tool_error`, `vendor_error`, `approval_required`,
    /// `refused`, `dry_run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::VendorError => "vendor_error",
            Self::ApprovalRequired => "approval_required",
            Self::Refused => "refused",
            Self::DryRun => "dry_run",
        }
    }
}

/// Every [`change_cause`] label, in the order the console's charts stack them.
pub const CHANGE_CAUSES: [&str; 11] = [
    "promote",
    "published",
    "rule",
    "demote",
    "idle",
    "cap",
    "budget",
    "revoked",
    "retired",
    "disabled",
    "removed",
];

/// The `cause` label of a working-set change: `promote` and `demote` (the agent or a
/// person asked), `published` (an authored tool's publish), `rule` (the starter set),
/// `idle`, `cap`, `budget` (the sweep), `revoked` (its connection), `retired` (gone from
/// the vendor's document), `disabled` (its vendor), `removed` (its vendor or its agent).
pub fn change_cause(action: HistoryAction, cause: Cause) -> &'static str {
    match cause {
        Cause::Agent | Cause::Console => match action {
            HistoryAction::Promote => "promote",
            HistoryAction::Demote => "demote",
        },
        Cause::Publish => "published",
        Cause::Rule => "rule",
        Cause::Idle => "idle",
        Cause::Cap => "cap",
        Cause::Budget => "budget",
        Cause::ConnectionRevoked => "revoked",
        Cause::Retired => "retired",
        Cause::VendorDisabled => "disabled",
        Cause::VendorRemoved | Cause::AgentRemoved => "removed",
        Cause::UpstreamRemoved => "retired",
    }
}

/// The HTTP status class of a vendor's answer (`2xx` … `5xx`), or `error` when none came
/// (unreachable, timed out, refused before sending).
pub fn status_class(status: Option<u16>) -> &'static str {
    match status {
        Some(100..=199) => "1xx",
        Some(200..=299) => "2xx",
        Some(300..=399) => "3xx",
        Some(400..=499) => "4xx",
        Some(500..=599) => "5xx",
        _ => "error",
    }
}

/// The gauges read when `/metrics` is scraped (counts at that moment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// MCP sessions of this instance (2025-era, `Mcp-Session-Id`).
    pub sessions: i64,
    /// Open change channels of this instance: one per 2025-era session that initialized
    /// (whether or not it opened its GET stream) and one per 2026-era
    /// `subscriptions/listen` stream.
    pub streams: i64,
    /// Approvals waiting for a person, in the whole database.
    pub pending_approvals: i64,
    /// Tools in the toolbox, in the whole database.
    pub tools: i64,
    /// Agents not removed, in the whole database.
    pub agents: i64,
}

/// One server's metrics: the registry and handles to each family (clones share their
/// values). Recording is a few atomic operations; [`Metrics::set_enabled`]`(false)`
/// (GRAFT_METRICS=off) makes every record a no-op.
pub struct Metrics {
    registry: Registry,
    enabled: AtomicBool,
    operations: Histograms<OperationLabels>,
    tool_calls: Family<ToolCallLabels, Counter>,
    vendor_requests: Histograms<VendorLabels>,
    changes: Family<CauseLabels, Counter>,
    sweeps: Histogram,
    find_tool: Histograms<ModeLabels>,
    sessions: Gauge,
    streams: Gauge,
    pending_approvals: Gauge,
    tools: Gauge,
    agents: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("enabled", &self.enabled())
            .finish_non_exhaustive()
    }
}

impl Metrics {
    /// Every family registered, all counts zero, recording on.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let operations: Histograms<OperationLabels> =
            Family::new_with_constructor(duration_histogram);
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "MCP requests this instance answered (POSTs to /mcp after authentication), from the request's arrival until its answer was sent whole (a listen stream: until it opened): by method, protocol version and error type (empty: success; tool_error: a tools/call result with isError; cancelled: by the client's notifications/cancelled; disconnected: the client left before its answer; a JSON-RPC error code; or an HTTP status)",
            Unit::Seconds,
            operations.clone(),
        );
        let tool_calls = Family::<ToolCallLabels, Counter>::default();
        registry.register(
            "graft_tool_calls",
            "Runs of vendor tools (first-class tools/call and run_tool) by vendor and outcome: ok, tool_error, vendor_error, approval_required, refused, dry_run",
            tool_calls.clone(),
        );
        let vendor_requests: Histograms<VendorLabels> =
            Family::new_with_constructor(duration_histogram);
        registry.register_with_unit(
            "graft_vendor_request_duration",
            "Requests sent to vendors, from sending to the answer's whole body, by vendor and status class (2xx..5xx, or error when no answer came)",
            Unit::Seconds,
            vendor_requests.clone(),
        );
        let changes = Family::<CauseLabels, Counter>::default();
        registry.register(
            "graft_working_set_changes",
            "Tools entering or leaving working sets, by cause: promote, demote, published, rule, idle, cap, budget, revoked, retired, disabled, removed",
            changes.clone(),
        );
        let sweeps = fast_histogram();
        registry.register_with_unit(
            "graft_sweep_duration",
            "Sweeps this server ran on its timer, whole (a graft sweep command counts in its own process, not here)",
            Unit::Seconds,
            sweeps.clone(),
        );
        let find_tool: Histograms<ModeLabels> = Family::new_with_constructor(fast_histogram);
        registry.register_with_unit(
            "graft_find_tool_duration",
            "find_tool searches, by mode: semantic (with the embedding model) or lexical",
            Unit::Seconds,
            find_tool.clone(),
        );
        let gauge = |registry: &mut Registry, name: &str, help: &str| {
            let g = Gauge::default();
            registry.register(name, help, g.clone());
            g
        };
        let sessions = gauge(
            &mut registry,
            "graft_mcp_sessions",
            "Open MCP sessions (2025-era Mcp-Session-Id) of this instance",
        );
        let streams = gauge(
            &mut registry,
            "graft_change_streams",
            "Open change channels of this instance: one per 2025-era session that initialized (its GET stream's notifier, opened or not) and one per 2026-era subscriptions/listen stream",
        );
        let pending_approvals = gauge(
            &mut registry,
            "graft_pending_approvals",
            "Approvals waiting for a person; global: every instance on one database reports the same value",
        );
        let tools = gauge(
            &mut registry,
            "graft_toolbox_tools",
            "Tools in the toolbox; global: every instance on one database reports the same value",
        );
        let agents = gauge(
            &mut registry,
            "graft_agents",
            "Agents (not removed); global: every instance on one database reports the same value",
        );
        registry.register(
            "graft_build",
            "The running Graft's version",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            }),
        );
        Self {
            registry,
            enabled: AtomicBool::new(true),
            operations,
            tool_calls,
            vendor_requests,
            changes,
            sweeps,
            find_tool,
            sessions,
            streams,
            pending_approvals,
            tools,
            agents,
        }
    }

    /// Turns recording on or off (GRAFT_METRICS; off: the benchmark's baseline).
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// Whether records count.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Counts one MCP request of `method` under `protocol_version` that took `seconds`;
    /// `error`: its error type (`None`: it succeeded). Unknown methods and versions are
    /// counted as `other`.
    pub fn operation(
        &self,
        method: &str,
        protocol_version: &str,
        error: Option<&str>,
        seconds: f64,
    ) {
        if !self.enabled() {
            return;
        }
        let labels = OperationLabels {
            mcp_method_name: known(MCP_METHODS, method),
            error_type: error.unwrap_or_default().to_string(),
            mcp_protocol_version: known(PROTOCOL_VERSIONS, protocol_version),
        };
        self.operations.get_or_create(&labels).observe(seconds);
    }

    /// Counts one run of a tool of `vendor` (its slug) that ended in `outcome`.
    pub fn tool_call(&self, vendor: &str, outcome: CallOutcome) {
        if !self.enabled() {
            return;
        }
        let labels = ToolCallLabels {
            vendor: vendor.to_string(),
            outcome: outcome.as_str(),
        };
        self.tool_calls.get_or_create(&labels).inc();
    }

    /// Counts one request to `vendor` that took `seconds` and answered `status` (`None`:
    /// no answer).
    pub fn vendor_request(&self, vendor: &str, status: Option<u16>, seconds: f64) {
        if !self.enabled() {
            return;
        }
        let labels = VendorLabels {
            vendor: vendor.to_string(),
            status_class: status_class(status),
        };
        self.vendor_requests.get_or_create(&labels).observe(seconds);
    }

    /// Counts `n` working-set changes (committed) of `action` for `cause`.
    pub fn working_set_changes(&self, action: HistoryAction, cause: Cause, n: u64) {
        if !self.enabled() || n == 0 {
            return;
        }
        let labels = CauseLabels {
            cause: change_cause(action, cause),
        };
        self.changes.get_or_create(&labels).inc_by(n);
    }

    /// Counts one sweep that took `seconds`.
    pub fn sweep(&self, seconds: f64) {
        if self.enabled() {
            self.sweeps.observe(seconds);
        }
    }

    /// Counts one find_tool search in `mode` (`semantic` or `lexical`) that took `seconds`.
    pub fn find_tool(&self, mode: &'static str, seconds: f64) {
        if self.enabled() {
            self.find_tool
                .get_or_create(&ModeLabels { mode })
                .observe(seconds);
        }
    }

    /// The exposition text ([`CONTENT_TYPE`]) with the gauges set to `gauges`.
    pub fn encode(&self, gauges: Gauges) -> String {
        self.sessions.set(gauges.sessions);
        self.streams.set(gauges.streams);
        self.pending_approvals.set(gauges.pending_approvals);
        self.tools.set(gauges.tools);
        self.agents.set(gauges.agents);
        let mut out = String::new();
        // writing to a String cannot fail
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The MCP method `method` as the metrics and traces name it: one of the methods MCP
/// defines, else `other` (an agent cannot grow the label set or a span's name).
pub fn known_method(method: &str) -> &'static str {
    known(MCP_METHODS, method)
}

/// The protocol version `v` as the metrics and traces name it: a published revision,
/// else `other`.
pub fn known_version(v: &str) -> &'static str {
    known(PROTOCOL_VERSIONS, v)
}

/// `value` when it is one of `known`, else `other`.
fn known(known: &[&'static str], value: &str) -> &'static str {
    known
        .iter()
        .find(|k| **k == value)
        .copied()
        .unwrap_or("other")
}

/// What the MCP handler learned about a request's outcome that its HTTP answer does not
/// show (a tools/call result with `isError` is a JSON-RPC success): the `/mcp` edge
/// puts one in each request's extensions and reads it when the answer leaves.
#[derive(Debug, Clone, Default)]
pub struct OperationNote(Arc<OnceLock<String>>);

impl OperationNote {
    /// Records the operation's error type (the first one recorded stays).
    pub fn set_error(&self, error_type: &str) {
        let _ = self.0.set(error_type.to_string());
    }

    /// The error type recorded, if any.
    pub fn error(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_of_every_run_code() {
        for (dry_run, code, outcome) in [
            (false, None, CallOutcome::Ok),
            (true, None, CallOutcome::DryRun),
            (
                false,
                Some("approval_required"),
                CallOutcome::ApprovalRequired,
            ),
            (false, Some("vendor_unreachable"), CallOutcome::VendorError),
            (false, Some("rate_limited"), CallOutcome::Refused),
            (true, Some("invalid_input"), CallOutcome::ToolError),
        ] {
            assert_eq!(
                CallOutcome::of(dry_run, code),
                outcome,
                "{dry_run} {code:?}"
            );
        }
    }

    #[test]
    fn unknown_methods_and_versions_do_not_grow_labels() {
        let m = Metrics::new();
        m.operation("tools/call", "2025-11-25", None, 0.003);
        m.operation("x/evil-1", "1999-01-01", Some("-32601"), 0.001);
        m.operation("x/evil-2", "2000-01-01", Some("-32601"), 0.001);
        let text = m.encode(Gauges::default());
        assert!(text.contains(
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="",mcp_protocol_version="2025-11-25"} 1"#
        ), "{text}");
        assert!(text.contains(
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="other",error_type="-32601",mcp_protocol_version="other"} 2"#
        ), "{text}");
        assert!(!text.contains("evil"));
    }

    #[test]
    fn off_records_nothing_and_gauges_show_the_scrape() {
        let m = Metrics::new();
        m.set_enabled(false);
        m.tool_call("acme", CallOutcome::Ok);
        m.set_enabled(true);
        m.tool_call("acme", CallOutcome::DryRun);
        m.working_set_changes(HistoryAction::Demote, Cause::AgentRemoved, 3);
        let text = m.encode(Gauges {
            pending_approvals: 2,
            ..Gauges::default()
        });
        assert!(!text.contains(r#"graft_tool_calls_total{vendor="acme",outcome="ok"}"#));
        assert!(text.contains(r#"graft_tool_calls_total{vendor="acme",outcome="dry_run"} 1"#));
        assert!(text.contains(r#"graft_working_set_changes_total{cause="removed"} 3"#));
        assert!(text.contains("graft_pending_approvals 2"));
        assert!(text.contains(r#"graft_build_info{version=""#));
        assert!(text.ends_with("# EOF\n"));
    }
}
