//! Telling the service manager (systemd, under `Type=notify`) how the service is: ready once it
//! listens, alive at the watchdog's pace while it answers, stopping when told to. The protocol
//! is a datagram to the socket `$NOTIFY_SOCKET` names; without one nothing is sent.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

/// The service manager's socket, when the service runs under one.
pub struct ServiceManager {
    socket: Option<(UnixDatagram, SocketAddr)>,
    watchdog: Option<Duration>,
}

impl ServiceManager {
    /// The manager named by `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket) and
    /// its watchdog interval (`$WATCHDOG_USEC`, when `$WATCHDOG_PID` is unset or this process).
    pub fn from_env() -> ServiceManager {
        let socket = std::env::var_os("NOTIFY_SOCKET").and_then(|name| {
            let address = address(name.as_encoded_bytes())?;
            let socket = UnixDatagram::unbound().ok()?;
            Some((socket, address))
        });
        let for_me = std::env::var("WATCHDOG_PID")
            .ok()
            .is_none_or(|pid| pid.trim() == std::process::id().to_string());
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|usec| usec.trim().parse::<u64>().ok())
            .filter(|usec| for_me && *usec > 0)
            .map(Duration::from_micros);
        ServiceManager { socket, watchdog }
    }

    /// Sends `state` (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=...`, lines joined by
    /// `\n`). A manager that does not take it is not an error the service can act on.
    pub fn notify(&self, state: &str) {
        if let Some((socket, address)) = &self.socket
            && let Err(e) = socket.send_to_addr(state.as_bytes(), address)
        {
            tracing::debug!("the service manager did not take {state:?}: {e}");
        }
    }

    /// How often the manager wants to hear that the service is alive: half its watchdog
    /// timeout, so that one late beat is not a restart.
    pub fn watchdog_beat(&self) -> Option<Duration> {
        self.socket.as_ref()?;
        self.watchdog.map(|timeout| timeout / 2)
    }
}

/// The socket address `name` gives: a path, or `@name` for Linux's abstract namespace.
fn address(name: &[u8]) -> Option<SocketAddr> {
    match name.split_first() {
        Some((b'@', abstract_name)) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(abstract_name).ok()
        }
        Some((b'/', _)) => {
            SocketAddr::from_pathname(std::path::Path::new(std::ffi::OsStr::from_bytes(name))).ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_reach_the_socket_the_manager_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).expect("bind");
        let manager = ServiceManager {
            socket: Some((
                UnixDatagram::unbound().expect("socket"),
                address(path.as_os_str().as_encoded_bytes()).expect("address"),
            )),
            watchdog: Some(Duration::from_secs(60)),
        };
        manager.notify("READY=1\nSTATUS=serving");
        let mut buf = [0u8; 64];
        let n = listener.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=serving");
        assert_eq!(manager.watchdog_beat(), Some(Duration::from_secs(30)));
        assert!(address(b"relative").is_none());
        assert!(address(b"@abstract").is_some());
    }
}
