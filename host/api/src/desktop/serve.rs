//! The desktop's search served by `quarry serve` on the session bus.

use std::sync::Arc;

use zbus::fdo::{RequestNameFlags, RequestNameReply};

use super::found::Finder;
use super::gnome::Provider;
use super::krunner::Runner;
use super::names::{BUS_NAME, DesktopConfig, DesktopError, GNOME_PATH, KRUNNER_PATH};
use crate::state::AppState;

/// The desktop's search being served: it ends when this is dropped.
pub struct DesktopSearch {
    _connection: zbus::Connection,
}

/// Serves the desktop's search on the session bus for as long as what it returns lives, taking
/// the name from a `quarry desktop-search` that holds it.
pub async fn serve_on_session_bus(
    state: Arc<AppState>,
    config: DesktopConfig,
) -> Result<DesktopSearch, DesktopError> {
    let finder = Arc::new(Finder::new(state, config));
    let connection = zbus::connection::Builder::session()?
        .serve_at(GNOME_PATH, Provider::new(finder.clone()))?
        .serve_at(KRUNNER_PATH, Runner::new(finder))?
        .build()
        .await?;
    let reply = connection
        .request_name_with_flags(
            BUS_NAME,
            RequestNameFlags::ReplaceExisting | RequestNameFlags::DoNotQueue,
        )
        .await;
    match reply {
        Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => Ok(DesktopSearch {
            _connection: connection,
        }),
        Ok(_) | Err(zbus::Error::NameTaken) => Err(DesktopError::NameTaken),
        Err(e) => Err(e.into()),
    }
}
