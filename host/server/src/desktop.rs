//! The desktop's own search as `serve` offers it, and `quarry open` (docs/desktop.md).

use std::sync::Arc;

use quarry_api::AppState;
use quarry_api::desktop::{
    DesktopConfig, DesktopError, DesktopSearch, OPENER, open_page, search_page,
    serve_on_session_bus,
};
use quarry_store::Store;

use crate::admin::server_url;
use crate::setup::Paths;

fn config(paths: &Paths) -> DesktopConfig {
    DesktopConfig {
        private_dir: paths.data_dir.clone(),
        opener: OPENER.to_owned(),
    }
}

/// Answers GNOME Shell's and KRunner's searches on the session bus, unless `enabled` is false
/// or there is no bus; says which in the log.
pub async fn start(paths: &Paths, enabled: bool, state: Arc<AppState>) -> Option<DesktopSearch> {
    if !enabled {
        tracing::info!("the desktop's search is off (--desktop-search false)");
        return None;
    }
    match serve_on_session_bus(state, config(paths)).await {
        Ok(served) => {
            tracing::info!(
                bus_name = quarry_api::desktop::BUS_NAME,
                "answering the desktop's search (GNOME Shell, KRunner)"
            );
            Some(served)
        }
        Err(e @ DesktopError::NameTaken) => {
            tracing::warn!("the desktop's search is not answered by this server: {e}");
            None
        }
        Err(e) => {
            tracing::info!("the desktop's search is off: no session bus to answer on ({e})");
            None
        }
    }
}

/// `quarry open [QUERY]`: the search page in the browser, signed in with a one-time link.
pub async fn open(paths: &Paths, store: &Store, query: &str) -> anyhow::Result<()> {
    let url = server_url(paths);
    open_page(store, &url, &config(paths), &search_page(query.trim()))
        .await
        .map_err(|e| anyhow::anyhow!("{e} (is a desktop with {OPENER} here?)"))?;
    println!("Opened {url}/search in the browser.");
    Ok(())
}
