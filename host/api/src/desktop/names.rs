//! Where the desktop's search answers, and what it needs.

use std::path::PathBuf;

/// The bus name both interfaces are served under (the `.ini`, the runner's `.desktop` file and
/// the D-Bus service file name it).
pub const BUS_NAME: &str = "dev.quarry.Quarry.SearchProvider";
/// GNOME Shell's object.
pub const GNOME_PATH: &str = "/dev/quarry/Quarry/SearchProvider";
/// KRunner's object.
pub const KRUNNER_PATH: &str = "/dev/quarry/Quarry/KRunner";
/// The program that opens a file or an address with the desktop's handler.
pub const OPENER: &str = "xdg-open";

/// What the desktop search needs besides the service's state.
#[derive(Debug, Clone)]
pub struct DesktopConfig {
    /// A private folder (the data folder) for the pages that sign a browser in.
    pub private_dir: PathBuf,
    /// The program that opens a file or an address with the desktop's handler.
    pub opener: String,
}

/// Why the desktop search is not served.
#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// No session bus, or it refused us.
    #[error("the session bus: {0}")]
    Bus(#[from] zbus::Error),
    /// Another process keeps the name.
    #[error("another process answers the desktop's search ({BUS_NAME})")]
    NameTaken,
}
