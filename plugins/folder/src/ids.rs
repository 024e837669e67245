//! Stable document ids and versions.

use quarry_sdk::fs::Stat;

/// The id of the file at relative path `rel`: `f_` and 128 bits of its SHA-256, URL-safe. The
/// same path always gives the same id; a renamed file is a new document.
pub fn doc_id(rel: &str) -> String {
    quarry_sdk::stable_id("f_", rel)
}

/// A version that changes whenever the file is written: size and modification time in
/// nanoseconds.
pub fn version(stat: &Stat) -> String {
    format!("{}-{}", stat.size, stat.modified_ns.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_url_safe() {
        let id = doc_id("reports/2026/Quarterly report.pdf");
        assert_eq!(id, doc_id("reports/2026/Quarterly report.pdf"));
        assert_ne!(id, doc_id("reports/2026/quarterly report.pdf"));
        assert_eq!(id.len(), 24);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
    }
}
