//! Admin access to the settings page from the terminal: the admin token (created at the first
//! `quarry serve`, kept in the data folder with mode 0600) and one-time login links.

use anyhow::Context;
use quarry_api::LOGIN_LINK_MS;
use quarry_core::trust::create_private_once;
use quarry_store::{Store, now_ms};

use crate::cli::AdminCommand;
use crate::setup::Paths;

/// The file where a running server notes the URL it serves, for `quarry admin link`.
const SERVER_URL_FILE: &str = "server-url";

/// The admin token, and whether it was created (256 random bits, hex) just now. Of two
/// processes making it at once, one wins and both return its token.
pub fn admin_token(paths: &Paths) -> anyhow::Result<(String, bool)> {
    let path = paths.admin_token();
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    let created = create_private_once(&path, format!("{}\n", hex::encode(random)).as_bytes())
        .with_context(|| format!("cannot create {}", path.display()))?;
    let token = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .trim()
        .to_owned();
    if token.is_empty() {
        anyhow::bail!(
            "{} is empty; delete it and start Quarry again for a new admin token",
            path.display()
        );
    }
    Ok((token, created))
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
            println!("{}", admin_token(paths)?.0);
        }
    }
    Ok(())
}
