//! Which addresses code is downloaded from: `https://`, and plain `http://` only on this
//! computer.

use std::net::IpAddr;

use crate::error::PackageError;

/// Refuses an address Quarry will not download code from: anything but `https://`, except
/// `http://` to this computer (where nothing crosses a network).
pub fn check_web_url(url: &reqwest::Url) -> Result<(), PackageError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(PackageError::Refused(format!(
            "{url}: plain http:// is accepted only from this computer; anyone on the way could change the plugin. Use https://"
        ))),
        other => Err(PackageError::Refused(format!(
            "{url}: {other}:// is not a way to download a plugin; use https://"
        ))),
    }
}

/// Whether `url` names this computer: `localhost` or a loopback address.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}
