//! Which hosts a grant lets a plugin reach, over HTTP and over streams.
//!
//! A grant entry is `host` (ports 80 and 443, the defaults of http and https) or `host:port`
//! (that port only). Hosts compare without regard to case. `url` settings grant exactly their
//! URL's host and port: `https://` and `http://` by default, or the schemes their manifest
//! field names (`imaps://host` grants `host:993`).

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

/// Schemes a `url` setting takes unless its manifest field names others.
pub(crate) const WEB_SCHEMES: [&str; 2] = ["http", "https"];

/// Schemes a `url` setting may name besides the web's, with their default ports: protocols a
/// connector speaks over a stream (`network.open-stream`).
const STREAM_SCHEMES: [(&str, u16); 10] = [
    ("imaps", 993),
    ("imap", 143),
    ("smtps", 465),
    ("submission", 587),
    ("smtp", 25),
    ("pop3s", 995),
    ("pop3", 110),
    ("ldaps", 636),
    ("ldap", 389),
    ("tls", 0),
];

/// The default port of `scheme`, when it has one (`tls` has none: its URLs name the port).
pub(crate) fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => STREAM_SCHEMES
            .iter()
            .find(|(name, _)| *name == scheme)
            .map(|(_, port)| *port)
            .filter(|port| *port != 0),
    }
}

/// Stream schemes that start in clear and turn to TLS by STARTTLS: the only ones whose servers a
/// user may consent to reach in clear (`imaps://` and the other TLS forms never).
const CLEAR_FORMS: [&str; 5] = ["imap", "smtp", "submission", "pop3", "ldap"];

/// Whether `url`'s scheme has a form in clear ([`CLEAR_FORMS`]).
pub(crate) fn has_clear_form(url: &str) -> bool {
    let scheme = url.split("://").next().unwrap_or_default();
    CLEAR_FORMS.iter().any(|s| scheme.eq_ignore_ascii_case(s))
}

/// Whether `scheme` is one a `url` field may allow.
pub(crate) fn is_known_scheme(scheme: &str) -> bool {
    WEB_SCHEMES.contains(&scheme) || STREAM_SCHEMES.iter().any(|(name, _)| *name == scheme)
}

/// The grant entry that allows exactly `url`'s host and port (`host` for the web's default
/// ports, `host:port` otherwise), `url` being one of `schemes`. The error completes "`field` ...".
pub(crate) fn entry_for_url(url: &str, schemes: &[String]) -> Result<String, String> {
    let example = match schemes.first().map(String::as_str) {
        None | Some("http" | "https") => "https://example.com/feed.xml".to_owned(),
        Some(scheme) => format!("{scheme}://mail.example.com"),
    };
    let written = || {
        schemes
            .iter()
            .map(|s| format!("{s}://"))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("must be a URL like {example}, got {url:?}"))?;
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    if !schemes.contains(&scheme) {
        return Err(format!("must start with {}, got {url:?}", written()));
    }
    let authority = uri
        .authority()
        .filter(|a| !a.host().is_empty() && !a.as_str().contains('@'))
        .ok_or_else(|| format!("must name a host ({example}), got {url:?}"))?;
    let host = authority.host().to_ascii_lowercase();
    let web = WEB_SCHEMES.contains(&scheme.as_str());
    let port = match (authority.port_u16(), default_port(&scheme)) {
        (Some(port), _) => port,
        (None, Some(port)) => port,
        (None, None) => {
            return Err(format!(
                "must name its port ({scheme}://host:port), got {url:?}"
            ));
        }
    };
    Ok(if web && Some(port) == default_port(&scheme) {
        host
    } else {
        format!("{host}:{port}")
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

    fn web() -> Vec<String> {
        WEB_SCHEMES.map(str::to_owned).to_vec()
    }

    fn entry_for_url(url: &str) -> Result<String, String> {
        super::entry_for_url(url, &web())
    }

    #[test]
    fn stream_schemes_grant_their_port() {
        let mail = ["imaps".to_owned(), "imap".to_owned()];
        assert_eq!(
            super::entry_for_url("imaps://Mail.example.com", &mail),
            Ok("mail.example.com:993".to_owned())
        );
        assert_eq!(
            super::entry_for_url("imap://127.0.0.1:1143", &mail),
            Ok("127.0.0.1:1143".to_owned())
        );
        assert_eq!(
            super::entry_for_url("imap://mail.example.com/", &mail),
            Ok("mail.example.com:143".to_owned())
        );
        let refused = super::entry_for_url("https://mail.example.com", &mail);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("imaps:// or imap://")),
            "{refused:?}"
        );
        let tls = ["tls".to_owned()];
        assert!(super::entry_for_url("tls://h.example.com", &tls).is_err());
        assert_eq!(
            super::entry_for_url("tls://h.example.com:7000", &tls),
            Ok("h.example.com:7000".to_owned())
        );
    }

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
