//! Admin access to the settings page from the terminal: the admin token (Quarry keeps only its
//! hash, so it is shown once, when made) and one-time sign-in links.

use quarry_api::LOGIN_LINK_MS;
use quarry_store::{Store, now_ms};

use crate::cli::AdminCommand;
use crate::setup::Paths;

/// The file where a running server notes the URL it serves, for `quarry admin link`.
const SERVER_URL_FILE: &str = "server-url";

/// The admin token made at the first start, to show once; `None` when one exists. A token an
/// older Quarry kept in clear in the data folder is deleted, not carried over: a copy of that
/// file (a backup, a folder a plugin reached) must sign nobody in.
pub async fn first_admin_token(paths: &Paths, store: &Store) -> anyhow::Result<Option<String>> {
    let legacy = paths.legacy_admin_token();
    if legacy.symlink_metadata().is_ok() {
        std::fs::remove_file(&legacy)
            .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", legacy.display()))?;
        tracing::warn!(
            "the admin token is no longer kept in the data folder: the old one no longer signs in \
             (`quarry admin link` prints a sign-in link, `quarry admin token` a new token)"
        );
    }
    if store.has_admin_token().await? {
        return Ok(None);
    }
    Ok(Some(store.new_admin_token(now_ms()).await?))
}

/// Notes the URL a server serves (for `quarry admin link`).
pub fn note_server_url(paths: &Paths, url: &str) {
    let _ = std::fs::write(paths.data_dir.join(SERVER_URL_FILE), format!("{url}\n"));
}

/// The URL of the server on this data folder (noted when it started), else the default.
pub fn server_url(paths: &Paths) -> String {
    std::fs::read_to_string(paths.data_dir.join(SERVER_URL_FILE))
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "http://127.0.0.1:4747".to_owned())
}

/// A new one-time login link to the settings page of the server at `base_url`.
pub async fn login_link(store: &Store, base_url: &str) -> anyhow::Result<String> {
    let code = store.create_login_link(now_ms(), LOGIN_LINK_MS).await?;
    Ok(format!(
        "{}/settings/login?code={code}",
        base_url.trim_end_matches('/')
    ))
}

/// Runs `quarry admin ...`.
pub async fn run(paths: &Paths, store: &Store, command: AdminCommand) -> anyhow::Result<()> {
    match command {
        AdminCommand::Link { url } => {
            let url = url.unwrap_or_else(|| server_url(paths));
            let link = login_link(store, &url).await?;
            println!(
                "Open this link to sign in to Quarry's settings (it works once, for 15 minutes):"
            );
            println!("  {link}");
        }
        AdminCommand::Token => {
            let token = store.new_admin_token(now_ms()).await?;
            eprintln!(
                "A new admin token; the old one no longer signs in. Quarry keeps only its hash: \
                 this is the only time it is shown."
            );
            println!("{token}");
        }
    }
    Ok(())
}
