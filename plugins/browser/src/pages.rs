//! A page of the history or the bookmarks, and its document: one per address, with what the
//! history says of it (title, visits, last visit) and where it is bookmarked.

use quarry_sdk::{Content, DocMeta, stable_id};

/// Addresses longer than this are left out (a locator holds at most 4096 bytes).
const MAX_URL: usize = 4000;

/// A page the profile knows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// Its address.
    pub url: String,
    /// Its title, as the browser last saw it.
    pub title: String,
    /// Visits recorded.
    pub visits: i64,
    /// Its last visit, milliseconds since the epoch (0 for never).
    pub last_visit_ms: i64,
    /// The bookmark folders it is in (`Bookmarks bar/Recipes`), and when it was bookmarked.
    pub folders: Vec<String>,
    /// When it was first bookmarked, milliseconds since the epoch (0 for not bookmarked).
    pub bookmarked_ms: i64,
}

impl Page {
    /// Whether its address is one worth a document: the web's and files', not the browser's
    /// own pages, scripts or data.
    pub fn is_indexed(url: &str) -> bool {
        let lower = url.get(..12).unwrap_or(url).to_ascii_lowercase();
        (lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("file://"))
            && url.len() <= MAX_URL
    }

    /// The host of its address.
    fn host(&self) -> &str {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        rest.split(['/', '?', '#']).next().unwrap_or(rest)
    }

    /// Its document.
    pub fn doc_meta(&self) -> DocMeta {
        let title = if self.title.trim().is_empty() {
            self.url.clone()
        } else {
            self.title.clone()
        };
        let path = match self.folders.first() {
            Some(folder) => folder.clone(),
            None => format!("History/{}", self.host()),
        };
        DocMeta {
            id: stable_id("bh", &self.url),
            locator: self.url.clone(),
            title,
            path: Some(path),
            url: Some(self.url.clone()),
            mime_type: "text/uri-list".to_owned(),
            size_bytes: 0,
            update_time_ms: self.last_visit_ms.max(self.bookmarked_ms),
            version: format!(
                "{}:{}:{}:{}",
                self.visits,
                self.last_visit_ms,
                stable_id("", &self.title),
                stable_id("", &self.folders.join("\n"))
            ),
            has_text: true,
        }
    }

    /// Its text and facts.
    pub fn content(&self, browser: &str) -> Content {
        let mut lines = vec![self.title.clone(), self.url.clone()];
        let mut metadata = vec![
            ("browser".to_owned(), browser.to_owned()),
            ("host".to_owned(), self.host().to_owned()),
        ];
        if !self.folders.is_empty() {
            lines.push(format!("Bookmarked in: {}", self.folders.join("; ")));
            metadata.push(("bookmark_folders".to_owned(), self.folders.join("; ")));
        }
        if self.visits > 0 || self.last_visit_ms > 0 {
            lines.push(format!("Visited {} times", self.visits));
            metadata.push(("visit_count".to_owned(), self.visits.to_string()));
        }
        if self.last_visit_ms > 0 {
            metadata.push(("last_visit".to_owned(), rfc3339(self.last_visit_ms)));
        }
        metadata.push((
            "kind".to_owned(),
            if self.folders.is_empty() {
                "history"
            } else {
                "bookmark"
            }
            .to_owned(),
        ));
        Content {
            text: lines
                .into_iter()
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            page_starts: Vec::new(),
            metadata,
        }
    }
}

/// `ms` (since the epoch, UTC) as RFC 3339.
pub fn rfc3339(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000) / 1000;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_addresses_read_as_people_expect() {
        assert_eq!(rfc3339(1_795_600_800_000), "2026-11-25T10:00:00Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert!(Page::is_indexed("https://example.org/a"));
        assert!(!Page::is_indexed("chrome://settings/"));
        assert!(!Page::is_indexed("javascript:alert(1)"));
        assert!(!Page::is_indexed(&format!(
            "https://e.org/{}",
            "a".repeat(5000)
        )));
    }
}
