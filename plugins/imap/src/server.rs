//! The `server` setting: `imaps://host[:port]` (TLS from the start, port 993 by default) or
//! `imap://host[:port]` (STARTTLS, port 143 by default: the host refuses to go on in clear),
//! which the `allow_plaintext` setting turns into a connection in clear.

use std::fmt;

use quarry_sdk::Error;

/// How the connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// `imaps://`: TLS from the first byte.
    Tls,
    /// `imap://`: STARTTLS, done by the host.
    StartTls,
    /// `imap://` with the user's consent to a connection in clear (`allow_plaintext`): no
    /// encryption at all.
    Clear,
}

/// Where the mail is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Host name or address, as written (without brackets for IPv6).
    pub host: String,
    /// Port.
    pub port: u16,
    /// How it is protected.
    pub protection: Protection,
}

impl Server {
    /// Parses the `server` setting; the error names the setting and the form it takes.
    pub fn parse(value: &str) -> Result<Server, Error> {
        let bad = || {
            Error::InvalidConfig(format!(
                "`server` must be imaps://host[:port] or imap://host[:port] (STARTTLS), got {value:?}"
            ))
        };
        let value = value.trim();
        let (protection, rest, default_port) = if let Some(rest) = strip_scheme(value, "imaps://") {
            (Protection::Tls, rest, 993)
        } else if let Some(rest) = strip_scheme(value, "imap://") {
            (Protection::StartTls, rest, 143)
        } else {
            return Err(bad());
        };
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return Err(bad());
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(bad)?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse().map_err(|_| bad())?,
                None if after.is_empty() => default_port,
                None => return Err(bad()),
            };
            (host.to_owned(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host.to_owned(), port.parse().map_err(|_| bad())?),
                None => (authority.to_owned(), default_port),
            }
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Server {
            host,
            port,
            protection,
        })
    }

    /// The server as the user allows it: an `imap://` server in clear when `allow_plaintext`
    /// (an `imaps://` one stays TLS: consent is no reason to weaken it).
    pub fn allowing_plaintext(self, allow_plaintext: bool) -> Server {
        match self.protection {
            Protection::StartTls if allow_plaintext => Server {
                protection: Protection::Clear,
                ..self
            },
            _ => self,
        }
    }

    /// The host as a URL writes it (IPv6 in brackets).
    pub fn url_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

fn strip_scheme<'a>(value: &'a str, scheme: &str) -> Option<&'a str> {
    let head = value.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| &value[scheme.len()..])
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.protection {
            Protection::Tls => "imaps",
            Protection::StartTls | Protection::Clear => "imap",
        };
        write!(f, "{scheme}://{}:{}", self.url_host(), self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_parse_with_their_default_ports() -> Result<(), Error> {
        assert_eq!(
            Server::parse("imaps://mail.example.com")?,
            Server {
                host: "mail.example.com".into(),
                port: 993,
                protection: Protection::Tls
            }
        );
        assert_eq!(
            Server::parse("IMAP://127.0.0.1:1143/")?,
            Server {
                host: "127.0.0.1".into(),
                port: 1143,
                protection: Protection::StartTls
            }
        );
        assert_eq!(Server::parse("imaps://[::1]:9993")?.url_host(), "[::1]");
        let clear = Server::parse("imap://h")?.allowing_plaintext(true);
        assert_eq!(clear.protection, Protection::Clear);
        let tls = Server::parse("imaps://h")?.allowing_plaintext(true);
        assert_eq!(tls.protection, Protection::Tls);
        let starttls = Server::parse("imap://h")?.allowing_plaintext(false);
        assert_eq!(starttls.protection, Protection::StartTls);
        for bad in [
            "https://x",
            "imaps://",
            "imaps://u@h",
            "imaps://h:x",
            "mail.example.com",
        ] {
            assert!(Server::parse(bad).is_err(), "{bad}");
        }
        Ok(())
    }
}
