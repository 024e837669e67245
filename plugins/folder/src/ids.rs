//! Stable document ids and versions.

use std::fs::Metadata;
use std::time::UNIX_EPOCH;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The id of the file at relative path `rel`: `f_` and 128 bits of its SHA-256, URL-safe. The
/// same path always gives the same id; a renamed file is a new document.
pub fn doc_id(rel: &str) -> String {
    let digest = Sha256::digest(rel.as_bytes());
    format!("f_{}", URL_SAFE_NO_PAD.encode(&digest[..16]))
}

/// Modification time in milliseconds since the Unix epoch (0 when the platform has none).
pub fn modified_ms(meta: &Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A version that changes whenever the file is written: size and modification time in
/// nanoseconds.
pub fn version(meta: &Metadata) -> String {
    let nanos = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", meta.len())
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
