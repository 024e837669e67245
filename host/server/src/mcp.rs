//! `quarry mcp`: MCP over stdio for agents that launch a command. With a server running on the
//! data folder (it holds the index's writer lock), messages are relayed to its `/mcp`, so its
//! index, model, limits and audit log serve them; without one, this process serves them itself
//! on the data folder, reading the index without writing it. Either way every tool call passes
//! the same checks with the key from `QUARRY_API_KEY`.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::Context;
use quarry_api::{AdminConfig, ApiConfig, ApiLimits, AppState};
use quarry_index::{IndexError, SearchIndex};
use quarry_runtime::PluginSet;

use crate::admin::server_url;
use crate::cli::McpArgs;
use crate::setup::{
    Paths, load_embedder, open_index, open_store, plugin_runtime, recheck_for_credentials,
};

/// Runs `quarry mcp` until the client closes stdin.
pub async fn run(paths: &Paths, args: &McpArgs) -> anyhow::Result<()> {
    let key = args.api_key.trim();
    if key.is_empty() {
        anyhow::bail!("QUARRY_API_KEY is empty: set it to the integration's API key");
    }
    // The data folder's own writer lock says whether its server runs (on a team database
    // too, where `open_index` answers `Busy` to every command that would write).
    match SearchIndex::open(&paths.index(), true) {
        Err(IndexError::Busy) => {
            let url = server_url(paths);
            tracing::info!("relaying MCP to the running server at {url}");
            quarry_api::mcp::bridge_stdio(&url, key).await?;
            Ok(())
        }
        Err(e) => {
            Err(e).context("cannot open the index; has `quarry serve` run on this data folder?")
        }
        Ok(writable) => {
            // Nobody serves the folder: an index of older rules is checked for credentials
            // first, then the writer lock is let go (a server may start meanwhile) to read.
            // On a team database only the team's hosts write the index.
            let store = open_store(paths).await?;
            let writable = Arc::new(writable);
            if paths.database.is_none()
                && let Some(held) = recheck_for_credentials(&store, &writable).await?
            {
                tracing::warn!("{held}");
            }
            drop(writable);
            store.close().await;
            serve_here(paths, key).await
        }
    }
}

/// The command an MCP client launches for stdio on these folders: this binary, the data folder,
/// the model when one is set up, then `mcp`.
pub fn stdio_command(paths: &Paths) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "quarry".to_owned());
    let mut command = vec![
        exe,
        "--data-dir".to_owned(),
        paths.data_dir.display().to_string(),
    ];
    match &paths.model {
        Some(model) => command.extend([
            "--model-dir".to_owned(),
            model.model_dir.display().to_string(),
            "--ort-lib".to_owned(),
            model.runtime_library.display().to_string(),
        ]),
        None => command.extend(["--model-dir".to_owned(), "none".to_owned()]),
    }
    command.push("mcp".to_owned());
    command
}

/// Serves MCP from this process over the data folder.
async fn serve_here(paths: &Paths, key: &str) -> anyhow::Result<()> {
    let store = open_store(paths).await?;
    let index = Arc::new(open_index(paths, false)?);
    // No HTTP here: the address and admin settings are never used, and no plugin is called
    // (original files are served by a running server only).
    let unused = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let admin = AdminConfig {
        plugins_dir: paths.installed_plugins(),
        staging_dir: paths.plugin_staging(),
        lock_path: paths.plugins_lock(),
        runtime: Arc::new(plugin_runtime(paths)?),
    };
    let state = AppState::new(
        store,
        index,
        PluginSet::default(),
        ApiConfig::new(unused, None),
        load_embedder(paths),
        admin,
        ApiLimits::default(),
    );
    let served = quarry_api::mcp::serve_stdio(state.clone(), key).await;
    state.flush().await;
    Ok(served?)
}
