//! `graft`: parse the command line, set up logging, run.

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
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
