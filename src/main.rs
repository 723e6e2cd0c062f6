//! `graft`: parse the command line, set up logging, run.

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // rmcp logs each request and response whole at debug level, tool inputs included,
    // which Graft redacts in its own logs: nothing of rmcp's below info is written,
    // whatever RUST_LOG asks for (security review 32.19)
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let cli = graft::cli::Cli::parse();
    // the server (the default command) logs what it does; a one-shot command prints its own answer on stdout
    // and logs only warnings and errors, unless RUST_LOG asks for more
    let quiet = !matches!(cli.command, None | Some(graft::cli::Command::Serve { .. }));
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(if quiet { "warn" } else { "info" }));
    let no_rmcp_detail = tracing_subscriber::filter::filter_fn(|meta| {
        !(meta.target().starts_with("rmcp") && *meta.level() > tracing::Level::INFO)
    });
    // GRAFT_LOG_FORMAT=json: one JSON object per line (timestamp, level, target, the
    // event's fields flattened, the current span) for log shippers (issue 30.3)
    let format = std::env::var("GRAFT_LOG_FORMAT").unwrap_or_default();
    let json = match format.trim().to_ascii_lowercase().as_str() {
        "" | "text" => false,
        "json" => true,
        other => {
            eprintln!("error: GRAFT_LOG_FORMAT must be text or json (got {other:?})");
            return std::process::ExitCode::FAILURE;
        }
    };
    let layer = if json {
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .boxed()
    } else {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .boxed()
    };
    // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT asks for them (issue 30.2)
    let (otel, tracing_handle) = match graft::telemetry::layer() {
        Ok(Some((layer, handle))) => (Some(layer), Some(handle)),
        Ok(None) => (None, None),
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing_subscriber::registry()
        .with(layer.with_filter(filter).with_filter(no_rmcp_detail))
        .with(otel)
        .init();
    let outcome = graft::cli::run(cli).await;
    if let Some(handle) = tracing_handle {
        // the spans still queued leave before the process does (off the async threads:
        // the exporter's client blocks)
        let _ = tokio::task::spawn_blocking(move || handle.shutdown()).await;
    }
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // each cause once: sqlx's errors repeat their source in their own text
            let mut line = e.to_string();
            for cause in e.chain().skip(1) {
                let cause = cause.to_string();
                if !line.ends_with(&cause) {
                    line = format!("{line}: {cause}");
                }
            }
            if json {
                // a log shipper reads every line as JSON, the last one too
                tracing::error!("{line}");
            } else {
                eprintln!("error: {line}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}
