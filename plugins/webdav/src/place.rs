//! Where the folder is: its URL split into origin and path, and what the server's `href`s mean
//! relative to it (the path users see, the document's id and URL).

use quarry_sdk::Error;
use quarry_sdk::dav::{href_path, percent_decode};
use quarry_sdk::http::origin_of;

/// The folder the `url` setting names.
#[derive(Debug, Clone)]
pub struct Place {
    /// `https://host:port`, as written.
    origin: String,
    /// The folder's path as written, ending with `/` (percent-encoded or not).
    path: String,
    /// The same path decoded, for comparing with the server's `href`s.
    decoded: String,
}

impl Place {
    /// The folder of setting `url`. `http://` is accepted only for a server on this machine:
    /// anywhere else the password and the files would cross the network readable.
    pub fn parse(url: &str) -> Result<Place, Error> {
        let url = url.trim();
        let invalid = |why: &str| Error::InvalidConfig(format!("`url` {url:?}: {why}"));
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(invalid("not a URL; give https://host/path/to/folder/"));
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() {
            return Err(invalid("names no host"));
        }
        match scheme.to_ascii_lowercase().as_str() {
            "https" => {}
            "http" if is_loopback(authority) => {}
            "http" => {
                return Err(invalid(
                    "http:// would send the password and the files readable across the network; use https:// (with `ca_file` for a server with its own certificate authority)",
                ));
            }
            _ => return Err(invalid("use an https:// URL")),
        }
        let mut path = href_path(url).to_owned();
        if !path.ends_with('/') {
            path.push('/');
        }
        let origin = format!("{scheme}://{authority}");
        Ok(Place {
            decoded: percent_decode(&path),
            origin,
            path,
        })
    }

    /// The folder's URL.
    pub fn root_url(&self) -> String {
        format!("{}{}", self.origin, self.path)
    }

    /// The folder's own `href` (its path, as written in the setting).
    pub fn root_href(&self) -> &str {
        &self.path
    }

    /// The URL of `href` (a path on the server, or a URL of the same origin; a URL of another
    /// origin is refused).
    pub fn url_of(&self, href: &str) -> Result<String, Error> {
        if href.contains("://") && origin_of(href) != origin_of(&self.origin) {
            return Err(Error::NotFound(format!(
                "{href:?} is not on the server of `url`"
            )));
        }
        Ok(format!("{}{}", self.origin, href_path(href)))
    }

    /// The path of `href` inside the folder, decoded (`Reports/q3.pdf`), without a final `/`:
    /// empty for the folder itself, none for a resource outside it.
    pub fn relative(&self, href: &str) -> Option<String> {
        let decoded = percent_decode(href_path(href));
        let decoded = if decoded.ends_with('/') {
            decoded
        } else {
            format!("{decoded}/")
        };
        let rest = decoded.strip_prefix(&self.decoded)?;
        let rest = rest.trim_end_matches('/');
        if rest.split('/').any(|name| name == ".." || name == ".") {
            return None;
        }
        Some(rest.to_owned())
    }
}

/// Whether `authority` (`host:port`) names this machine.
fn is_loopback(authority: &str) -> bool {
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_read_relative_to_the_folder() {
        let place = Place::parse("http://127.0.0.1:8080/dav/My%20Files").expect("loopback");
        assert_eq!(place.root_url(), "http://127.0.0.1:8080/dav/My%20Files/");
        assert_eq!(place.relative("/dav/My%20Files/").as_deref(), Some(""));
        assert_eq!(place.relative("/dav/My Files").as_deref(), Some(""));
        assert_eq!(
            place.relative("/dav/My%20Files/a/b%C3%A9.pdf").as_deref(),
            Some("a/bé.pdf")
        );
        assert_eq!(
            place
                .relative("http://127.0.0.1:8080/dav/My%20Files/sub/")
                .as_deref(),
            Some("sub")
        );
        assert_eq!(place.relative("/dav/Other/x.txt"), None);
        assert_eq!(place.relative("/dav/My%20Files/../../etc/passwd"), None);
        assert_eq!(
            place.url_of("/dav/My%20Files/a.txt").ok().as_deref(),
            Some("http://127.0.0.1:8080/dav/My%20Files/a.txt")
        );
        assert!(place.url_of("https://evil.example/dav/a.txt").is_err());
    }

    #[test]
    fn a_password_never_crosses_a_network_in_clear() {
        for ok in [
            "https://cloud.example.com/remote.php/dav/files/alice/",
            "http://localhost:8080/dav/",
            "http://[::1]:8080/",
            "http://127.0.0.1/",
        ] {
            assert!(Place::parse(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            ("http://nas.local/dav/", "https://"),
            ("http://192.168.1.5:8080/", "https://"),
            ("ftp://nas/", "https://"),
            ("nas/dav", "not a URL"),
            ("https:///dav", "no host"),
        ] {
            match Place::parse(bad) {
                Err(Error::InvalidConfig(message)) => {
                    assert!(
                        message.contains(says) && message.contains("`url`"),
                        "{message}"
                    );
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
