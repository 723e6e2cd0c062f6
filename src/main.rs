//! `graft`: parse the command line, set up logging, run.

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // rmcp logs each request and response whole at debug level, tool inputs included,
    // which Graft redacts in its own logs: rmcp stays at info at every level asked for
    // (security review 32.19)
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        .add_directive("rmcp=info".parse().expect("a valid directive"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = graft::cli::Cli::parse();
    match graft::cli::run(cli).await {
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
            eprintln!("error: {line}");
            std::process::ExitCode::FAILURE
        }
    }
}
