//! The desktop's own search (docs/desktop.md): GNOME Shell's search provider
//! (`org.gnome.Shell.SearchProvider2`) and a KRunner runner (`org.kde.krunner1`) on the session
//! bus, answered by the running service from its index as the user (every connector, keyword
//! search: no wait for the model). No key is on the bus: callers of another user are refused,
//! and opening a result in the browser signs in through a one-time link kept in a private file.
//!
//! Without the service, the bus starts `quarry desktop-search` (the D-Bus service file), which
//! answers with one result saying so and gives the name up to the service when it starts.

mod found;
mod gnome;
mod krunner;
mod names;
mod not_running;
mod open;
mod serve;

pub use names::{BUS_NAME, DesktopConfig, DesktopError, GNOME_PATH, KRUNNER_PATH, OPENER};
pub use not_running::serve_not_running;
pub use open::{open_page, search_page};
pub use serve::{DesktopSearch, serve_on_session_bus};
