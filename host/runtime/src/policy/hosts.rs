//! Which hosts a grant lets a plugin reach over HTTP.
//!
//! A grant entry is `host` (ports 80 and 443, the defaults of http and https) or `host:port`
//! (that port only). Hosts compare without regard to case. `url` settings grant exactly their
//! URL's host and port.

/// A granted host, parsed: `host` or `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    host: String,
    port: Option<u16>,
}

/// Parses a grant entry (`example.com`, `127.0.0.1:8080`, `[::1]:8080`). The error completes
/// "the host ... ".
pub(crate) fn check_host_entry(entry: &str) -> Result<(), String> {
    parse_entry(entry).map(|_| ())
}

fn parse_entry(entry: &str) -> Result<Allowed, String> {
    let bad = || {
        format!(
            "{entry:?} is not a host name: write it as `example.com` or `example.com:8080` (no scheme, no path)"
        )
    };
    let authority: http::uri::Authority = entry.parse().map_err(|_| bad())?;
    if authority.as_str() != entry || entry.contains('@') || authority.host().is_empty() {
        return Err(bad());
    }
    Ok(Allowed {
        host: authority.host().to_ascii_lowercase(),
        port: authority.port_u16(),
    })
}

/// The grant entry that allows exactly `url`'s host and port (`host` for a default port,
/// `host:port` otherwise). The error completes "`field` ...".
pub(crate) fn entry_for_url(url: &str) -> Result<String, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("must be a URL like https://example.com/feed.xml, got {url:?}"))?;
    let scheme = uri.scheme_str().unwrap_or_default();
    if scheme != "http" && scheme != "https" {
        return Err(format!("must start with http:// or https://, got {url:?}"));
    }
    let authority = uri
        .authority()
        .filter(|a| !a.host().is_empty() && !a.as_str().contains('@'))
        .ok_or_else(|| format!("must name a host (https://example.com/...), got {url:?}"))?;
    let host = authority.host().to_ascii_lowercase();
    Ok(match authority.port_u16() {
        Some(port) if !(scheme == "http" && port == 80 || scheme == "https" && port == 443) => {
            format!("{host}:{port}")
        }
        _ => host,
    })
}

/// The set of hosts one sandbox may reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostGrant {
    allowed: Vec<Allowed>,
}

impl HostGrant {
    /// The grant of these entries; entries that do not parse allow nothing.
    pub(crate) fn new(entries: &[String]) -> HostGrant {
        HostGrant {
            allowed: entries.iter().filter_map(|e| parse_entry(e).ok()).collect(),
        }
    }

    /// Whether a request to `host` on `port` is allowed.
    pub(crate) fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed.iter().any(|a| {
            a.host == host
                && match a.port {
                    Some(p) => p == port,
                    None => port == 80 || port == 443,
                }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_urls() {
        assert_eq!(
            entry_for_url("http://127.0.0.1:8080/feed.xml"),
            Ok("127.0.0.1:8080".to_owned())
        );
        assert_eq!(
            entry_for_url("https://Example.com/feed"),
            Ok("example.com".to_owned())
        );
        assert_eq!(
            entry_for_url("https://example.com:443/"),
            Ok("example.com".to_owned())
        );
        for bad in [
            "ftp://example.com/",
            "example.com/feed",
            "https://u:p@example.com/",
            "",
        ] {
            assert!(entry_for_url(bad).is_err(), "{bad} should be refused");
        }
        for good in ["example.com", "127.0.0.1:8080", "[::1]:9000"] {
            assert!(check_host_entry(good).is_ok(), "{good} should be accepted");
        }
        for bad in ["https://example.com", "example.com/x", "", "a@b.com"] {
            assert!(check_host_entry(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn ports_must_match_the_grant() {
        let grant = HostGrant::new(&["example.com".to_owned(), "127.0.0.1:8080".to_owned()]);
        assert!(grant.allows("EXAMPLE.com", 443));
        assert!(grant.allows("example.com", 80));
        assert!(!grant.allows("example.com", 8443));
        assert!(grant.allows("127.0.0.1", 8080));
        assert!(!grant.allows("127.0.0.1", 8081));
        assert!(!grant.allows("other.example.com", 443));
        assert!(!HostGrant::default().allows("example.com", 443));
    }
}
