//! `quarry`: Quarry's command line. Serves the API, and manages integrations and connectors
//! whether or not a server is running (they share the data folder).

mod activity;
mod admin;
mod ask;
mod background;
mod bundle;
mod cli;
mod config;
mod connector;
mod descriptors;
mod desktop;
mod effective;
mod generate;
mod integration;
mod logging;
mod mcp;
mod migrate;
mod plugin;
mod plugin_check;
mod private;
mod progress;
mod scaffold;
mod search;
mod serve;
mod service_manager;
mod setup;
mod team_index;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
use crate::setup::{Paths, open_store};

fn main() -> std::process::ExitCode {
    quarry_core::memory::one_heap_per_core();
    // The settings file's values stand as the options' defaults: the environment and flags
    // override them.
    let settings = match config::Settings::load(&Cli::command()) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: the settings file: {e:#}");
            return std::process::ExitCode::from(2);
        }
    };
    let command = settings.apply(Cli::command());
    let matches = command.clone().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if !matches!(cli.command, Command::Serve(_) | Command::Mcp(_)) {
        end_quietly_on_a_closed_pipe();
    }
    // The MCP library's own warnings repeat what a client sent (a request id of any length):
    // only its errors are logged unless QUARRY_LOG asks for more.
    let default_level = match cli.command {
        Command::Serve(_) => "info,rmcp=error",
        _ => "warn,rmcp=error",
    };
    logging::init(default_level);
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
    let parsed = config::Parsed {
        command,
        matches,
        settings,
    };
    let outcome = runtime.block_on(run(cli, parsed));
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

/// A command whose output goes into a pipe that closes (`quarry activity | head`) ends there
/// quietly, as other command-line tools do, instead of panicking in `println!`. Not for `serve`
/// and `mcp`: a client that goes away must not end them.
#[allow(unsafe_code)]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restores the default disposition of SIGPIPE before any thread of ours starts (the
    // runtime is built after this); no handler of ours is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

async fn run(cli: Cli, parsed: config::Parsed) -> anyhow::Result<()> {
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
        Command::Open { query } => {
            let store = open_store(&paths).await?;
            desktop::open(&paths, &store, &query.join(" ")).await
        }
        Command::DesktopSearch => Ok(quarry_api::desktop::serve_not_running().await?),
        Command::Migrate { to } => migrate::run(&paths, &to).await,
        Command::Config { json } => effective::run(&paths, &parsed, json),
        Command::Generate { what } => generate::run(parsed.command, &what),
    }
}
