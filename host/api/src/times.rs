//! HTTP dates (`Last-Modified`).

use std::time::{Duration, UNIX_EPOCH};

/// `ms` since the Unix epoch as an HTTP date (`Last-Modified`).
pub(crate) fn http_date(ms: i64) -> String {
    let secs = u64::try_from(ms.max(0) / 1000).unwrap_or(0);
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_http_dates() {
        assert_eq!(
            super::http_date(1_795_359_600_000),
            "Sun, 22 Nov 2026 15:00:00 GMT"
        );
    }
}
