//! `quarry`: Quarry's command line. Serves the API, and manages integrations and connectors
//! whether or not a server is running (they share the data folder).

mod activity;
mod admin;
mod cli;
mod connector;
mod descriptors;
mod integration;
mod mcp;
mod plugin;
mod plugin_check;
mod private;
mod progress;
mod scaffold;
mod search;
mod serve;
mod setup;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::setup::{Paths, open_store};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // The MCP library's own warnings repeat what a client sent (a request id of any length):
    // only its errors are logged unless QUARRY_LOG asks for more.
    let default_level = match cli.command {
        Command::Serve(_) => "info,rmcp=error",
        _ => "warn,rmcp=error",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("QUARRY_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(cli));
    // Threads still blocked (a plugin call past its grace, a client's connection) are not
    // waited for: the process ends.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let paths = Paths::new(&cli)?;
    // What Quarry writes is its user's alone; a new connector's project folder is the author's.
    if !matches!(cli.command, Command::Plugin(cli::PluginCommand::New { .. })) {
        private::restrict_new_files();
    }
    match cli.command {
        Command::Serve(args) => serve::run(&paths, &args).await,
        Command::Integration(command) => {
            let store = open_store(&paths).await?;
            integration::run(&paths, &store, command).await
        }
        Command::Connector(command) => {
            let store = open_store(&paths).await?;
            connector::run(&paths, &store, command).await
        }
        Command::Search(args) => {
            let store = open_store(&paths).await?;
            search::run(&paths, &store, &args).await
        }
        Command::Activity(args) => {
            let store = open_store(&paths).await?;
            activity::run(&store, &args).await
        }
        Command::Plugin(command) => plugin::run(&paths, command).await,
        Command::Admin(command) => {
            let store = open_store(&paths).await?;
            admin::run(&paths, &store, command).await
        }
        Command::Mcp(args) => mcp::run(&paths, &args).await,
    }
}
