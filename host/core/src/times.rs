//! Times as Quarry writes and reads them: RFC 3339 in UTC with a `Z`; `YYYY-MM-DD` on input is
//! midnight UTC.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time};

/// `ms` since the Unix epoch as RFC 3339 UTC: seconds, and milliseconds when there are any.
pub fn rfc3339(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let date = t.date();
    let (h, m, s, milli) = t.time().as_hms_milli();
    let base = format!(
        "{:04}-{:02}-{:02}T{h:02}:{m:02}:{s:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    );
    if milli == 0 {
        format!("{base}Z")
    } else {
        format!("{base}.{milli:03}Z")
    }
}

/// Parses an RFC 3339 date-time (any offset) or a `YYYY-MM-DD` date (midnight UTC) into ms
/// since the Unix epoch.
pub fn parse_instant(s: &str) -> Option<i64> {
    let t = if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        t
    } else {
        let date = Date::parse(s, format_description!("[year]-[month]-[day]")).ok()?;
        PrimitiveDateTime::new(date, Time::MIDNIGHT).assume_utc()
    };
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_utc_instants() {
        assert_eq!(rfc3339(1_795_359_600_000), "2026-11-22T15:00:00Z");
        assert_eq!(rfc3339(1_795_359_600_123), "2026-11-22T15:00:00.123Z");
        assert_eq!(
            parse_instant("2026-11-22T15:00:00Z"),
            Some(1_795_359_600_000)
        );
        assert_eq!(
            parse_instant("2026-11-22T16:00:00+01:00"),
            Some(1_795_359_600_000)
        );
        assert_eq!(parse_instant("2026-11-22"), Some(1_795_305_600_000));
        for bad in [
            "2026-13-01",
            "22/11/2026",
            "2026-11-22T15:00:00",
            "",
            "yesterday",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
    }
}
