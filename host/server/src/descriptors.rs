//! File descriptors: the server raises its own limit as far as the system lets it, and caps
//! its connections below that limit, keeping room for the index, the database, syncs and
//! downloads, so that a flood of connections never leaves a sync without a file to open.

/// The most the soft limit is raised to.
const RAISE_TO: u64 = 65_536;
/// Descriptors kept for everything but connections, at least, besides those in use when the
/// server starts: the database's pool (a few files per connection), the index's new segments,
/// plugin sessions of syncs and downloads with their folders and files, the watcher.
const ROOM: u64 = 128;

/// Raises the soft limit on open files to the hard limit (at most [`RAISE_TO`]); returns the
/// soft limit now in force.
pub fn raise_limit() -> u64 {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let (Some(current), hard) = (limit.current, limit.maximum) else {
        return RAISE_TO; // unlimited
    };
    let wanted = hard.unwrap_or(RAISE_TO).min(RAISE_TO);
    if wanted > current {
        let raised = rustix::process::Rlimit {
            current: Some(wanted),
            maximum: hard,
        };
        if rustix::process::setrlimit(rustix::process::Resource::Nofile, raised).is_ok() {
            return wanted;
        }
    }
    current
}

/// Connections the server may hold at once with `limit` descriptors: at most `configured`,
/// leaving the descriptors in use now and room for syncs (a quarter of the limit, at least
/// [`ROOM`]); at least 16.
pub fn connection_cap(configured: usize, limit: u64) -> usize {
    let in_use = std::fs::read_dir("/proc/self/fd").map_or(ROOM, |fds| fds.count() as u64);
    let room = (limit / 4).max(ROOM);
    let free = limit.saturating_sub(in_use).saturating_sub(room);
    usize::try_from(free)
        .unwrap_or(usize::MAX)
        .min(configured)
        .max(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_leave_room_for_the_rest_of_the_server() {
        assert_eq!(connection_cap(1024, 65_536), 1024, "the configured cap");
        let small = connection_cap(1024, 256);
        assert!(small <= 256 - ROOM as usize, "{small}");
        assert!(small >= 16);
        assert_eq!(connection_cap(1024, 10), 16, "never below 16");
    }
}
