//! OpenTelemetry traces (issue 30.2): one server span per MCP request, child spans for a
//! tool call's steps, and the W3C trace context carried to the vendor.
//!
//! On when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `_TRACES_ENDPOINT`) is set, off
//! otherwise; off means no span is created at all ([`enabled`] is one atomic load). The
//! exporter speaks OTLP over HTTP with protobuf bodies (OTLP 1.x, `/v1/traces`) and reads
//! the other standard variables itself: `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`,
//! `OTEL_SERVICE_NAME` (default `graft`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`.
//! Spans follow the OpenTelemetry semantic conventions for MCP (`mcp.method.name`,
//! `gen_ai.tool.name`, …); arguments and results are recorded only with
//! `GRAFT_TRACE_PAYLOADS=1`, and then redacted as the calls log redacts them.

use opentelemetry::trace::TracerProvider as _;
use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);
static PAYLOADS: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported: spans are only made when they are.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Whether spans record (redacted) arguments and results: `GRAFT_TRACE_PAYLOADS=1`.
pub fn payloads() -> bool {
    PAYLOADS.load(Ordering::Relaxed)
}

/// Most characters of an argument or result recorded on a span.
pub const PAYLOAD_CHARS: usize = 4096;

/// A span of Graft's own for a step of a request (target `graft::trace`, level info), or
/// `Span::none()` when traces are off: `trace_span!("vendor request", otel.kind = "client")`.
#[macro_export]
macro_rules! trace_span {
    ($name:literal $(, $($field:tt)*)?) => {
        if $crate::telemetry::enabled() {
            tracing::info_span!(target: "graft::trace", $name $(, $($field)*)?)
        } else {
            tracing::Span::none()
        }
    };
}

/// The server span of one MCP request, put in the request's extensions by the `/mcp`
/// edge for the handler: rmcp runs a 2025 session's handler in the session's own task,
/// so the span is handed over rather than inherited.
#[derive(Clone)]
pub struct RequestSpan(pub tracing::Span);

/// The exporter's handle: dropping it (or [`Tracing::shutdown`]) flushes the spans that
/// are still queued.
pub struct Tracing {
    provider: opentelemetry_sdk::trace::SdkTracerProvider,
}

impl Tracing {
    /// Flushes queued spans and stops the export thread (at most the exporter's timeout).
    pub fn shutdown(self) {
        let _ = self.provider.shutdown();
    }
}

/// What the environment asks for: `Ok(false)` when no OTLP endpoint is set,
/// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Errors: an exporter or a
/// protocol this build does not have (only `otlp` over `http/protobuf`).
pub fn wanted() -> Result<bool, String> {
    wanted_in(&|k| std::env::var(k).ok())
}

/// [`wanted`] of the variables `env` gives.
fn wanted_in(env: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let var = |k: &str| {
        env(k)
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty())
    };
    if var("OTEL_SDK_DISABLED").as_deref() == Some("true") {
        return Ok(false);
    }
    match var("OTEL_TRACES_EXPORTER").as_deref() {
        None | Some("otlp") => {}
        Some("none") => return Ok(false),
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER={other} is not supported: Graft exports otlp (or none)"
            ))
        }
    }
    if var("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
        && var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
    {
        return Ok(false);
    }
    for k in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(p) = var(k) {
            if p != "http/protobuf" {
                return Err(format!(
                    "{k}={p} is not supported: Graft exports OTLP over http/protobuf (a collector's port 4318)"
                ));
            }
            break;
        }
    }
    Ok(true)
}

/// The `tracing` layer that turns Graft's spans into OpenTelemetry spans and exports
/// them, when [`wanted`]; also installs the W3C trace-context propagator and turns
/// [`enabled`] on. Only spans of Graft's own targets (`graft…`) are exported. Errors: a
/// configuration the exporter refuses (a malformed endpoint URL, say).
pub fn layer<S>() -> Result<Option<(impl tracing_subscriber::Layer<S>, Tracing)>, String>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a> + Send + Sync,
{
    use tracing_subscriber::Layer;
    if !wanted()? {
        return Ok(None);
    }
    // the exporter's HTTP client is rustls without a built-in provider (as the proxy's)
    let _ = rustls::crypto::ring::default_provider().install_default();
    use opentelemetry_otlp::WithExportConfig;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .build()
        .map_err(|e| format!("the OTLP exporter cannot start: {e}"))?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| {
            a.split(',')
                .any(|kv| kv.trim_start().starts_with("service.name="))
        });
    if !named {
        resource = resource.with_service_name("graft");
    }
    let resource = resource
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    let mut provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource);
    // Graft watches agents: an agent's unsampled traceparent (flags 00) does not hide its
    // calls; OTEL_TRACES_SAMPLER, when set, decides instead (the SDK reads it)
    if std::env::var_os("OTEL_TRACES_SAMPLER").is_none() {
        provider = provider.with_sampler(opentelemetry_sdk::trace::Sampler::AlwaysOn);
    }
    let provider = provider.build();
    let tracer = provider.tracer("graft");
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    ON.store(true, Ordering::Relaxed);
    PAYLOADS.store(
        std::env::var("GRAFT_TRACE_PAYLOADS").is_ok_and(|v| v.trim() == "1"),
        Ordering::Relaxed,
    );
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span() && meta.target().starts_with("graft")
        }));
    Ok(Some((layer, Tracing { provider })))
}

/// Where spans go, for the line `graft serve` logs at start: the traces endpoint as the
/// exporter resolves it (the variable's value, or the general one with `/v1/traces`).
pub fn endpoint() -> String {
    match std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        Ok(e) if !e.trim().is_empty() => e.trim().to_string(),
        _ => format!(
            "{}/v1/traces",
            std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
                .unwrap_or_default()
                .trim()
                .trim_end_matches('/')
        ),
    }
}

/// The W3C trace context (`traceparent`, `tracestate`) read from `get`, a carrier such
/// as a request's `params._meta` or its HTTP headers; `None` when it holds no valid
/// `traceparent` (W3C Trace Context §3.2).
pub fn extract(get: &dyn Fn(&str) -> Option<String>) -> Option<opentelemetry::Context> {
    use opentelemetry::trace::TraceContextExt;
    struct Carrier([Option<String>; 2]);
    impl opentelemetry::propagation::Extractor for Carrier {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.0[0].as_deref(),
                "tracestate" => self.0[1].as_deref(),
                _ => None,
            }
        }
        fn keys(&self) -> Vec<&str> {
            vec!["traceparent", "tracestate"]
        }
    }
    if !enabled() {
        return None;
    }
    // W3C Trace Context §3.2, §3.3: printable ASCII only (a control character would be
    // refused later as a header to the vendor and fail the call); a traceparent is 55
    // characters in version 00, a tracestate at most 32 entries (512 characters is what
    // every vendor must pass on): a bad tracestate is dropped, the traceparent kept
    let visible = |v: &String| v.bytes().all(|b| (0x20..0x7f).contains(&b));
    let parent = get("traceparent").filter(|v| v.len() <= 256 && visible(v));
    let state = get("tracestate").filter(|v| v.len() <= 512 && visible(v) && !v.trim().is_empty());
    let carrier = Carrier([parent, state]);
    carrier.0[0].as_ref()?;
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&carrier));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The W3C trace-context headers (`traceparent`, and `tracestate` when there is one) of
/// `span`, to send with a request it makes; empty when traces are off or `span` is none.
pub fn headers_of(span: &tracing::Span) -> Vec<(String, String)> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if !enabled() || span.is_none() {
        return Vec::new();
    }
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return Vec::new();
    }
    let mut out = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut out));
    let mut out: Vec<(String, String)> = out.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    out.sort();
    out
}

/// The trace and span ids (lower-case hex, W3C form) of the current span, for log lines;
/// `None` when traces are off.
pub fn current_ids() -> Option<(String, String)> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if !enabled() {
        return None;
    }
    let cx = tracing::Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid()
        .then(|| (sc.trace_id().to_string(), sc.span_id().to_string()))
}

/// `text` as a span may hold it: control characters (line breaks, escapes) as `?`, and
/// at most `max` characters.
pub fn printable(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Sets an OpenTelemetry attribute on `span` (nothing when traces are off).
pub fn set(span: &tracing::Span, key: &'static str, value: impl Into<opentelemetry::Value>) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if enabled() && !span.is_none() {
        span.set_attribute(key, value);
    }
}

/// The client span of one vendor request, named `name` (an HTTP tool's `{method}
/// {vendor}`, an MCP server's `tools/call {vendor}`; none when traces are off, issue
/// 30.2).
pub fn vendor_span(name: std::fmt::Arguments<'_>) -> tracing::Span {
    crate::trace_span!(
        "vendor request",
        otel.name = %name,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
    )
}

/// Marks vendor request `span` failed, its `error.type` `error_type`.
pub fn span_failed(span: &tracing::Span, error_type: impl Into<opentelemetry::Value>) {
    span.record("otel.status_code", "ERROR");
    crate::telemetry::set(span, "error.type", error_type);
}

/// Sets the parent of a span not yet entered (a distributed parent, W3C trace context),
/// and adds `link` as a link (both optional).
pub fn adopt(
    span: &tracing::Span,
    parent: Option<opentelemetry::Context>,
    link: Option<opentelemetry::Context>,
) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if let Some(cx) = parent {
        let _ = span.set_parent(cx);
    }
    if let Some(cx) = link {
        span.add_link(cx.span().span_context().clone());
    }
}

/// Records `text` (already redacted by the caller) as attribute `key` on the current
/// span, cut at [`PAYLOAD_CHARS`], when `GRAFT_TRACE_PAYLOADS=1`.
pub fn record_payload(key: &'static str, text: &str) {
    if enabled() && payloads() {
        let cut = crate::domain::openapi::truncate_chars(text, PAYLOAD_CHARS);
        set(&tracing::Span::current(), key, cut.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::wanted_in;

    fn with(vars: &[(&str, &str)]) -> Result<bool, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        wanted_in(&move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn traces_are_on_only_when_an_endpoint_asks_and_nothing_turns_them_off() {
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        assert_eq!(with(&[]), Ok(false));
        assert_eq!(with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), Ok(false));
        assert_eq!(with(&[ep]), Ok(true));
        assert_eq!(
            with(&[(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://c:4318/v1/traces"
            )]),
            Ok(true)
        );
        assert_eq!(with(&[ep, ("OTEL_SDK_DISABLED", "TRUE")]), Ok(false));
        assert_eq!(with(&[ep, ("OTEL_SDK_DISABLED", "false")]), Ok(true));
        assert_eq!(with(&[ep, ("OTEL_TRACES_EXPORTER", "none")]), Ok(false));
        assert_eq!(with(&[ep, ("OTEL_TRACES_EXPORTER", "otlp")]), Ok(true));
        assert!(with(&[ep, ("OTEL_TRACES_EXPORTER", "zipkin")]).is_err());
        assert_eq!(
            with(&[ep, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]),
            Ok(true)
        );
        let grpc = with(&[ep, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(grpc.contains("http/protobuf"), "{grpc}");
        // the signal's own variable wins over the general one
        assert_eq!(
            with(&[
                ep,
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
            ]),
            Ok(true)
        );
    }
}
