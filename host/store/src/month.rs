//! The quota period: the UTC calendar month.

use time::{Date, Month, OffsetDateTime, Time};

/// The UTC calendar month a moment falls in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageMonth {
    /// `YYYY-MM`.
    pub key: String,
    /// The first millisecond of the next month, when usage starts again from zero.
    pub reset_ms: i64,
}

impl UsageMonth {
    /// The month of `now_ms` (milliseconds since the Unix epoch).
    pub fn at(now_ms: i64) -> UsageMonth {
        let now = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let (year, month) = (now.year(), now.month());
        let (next_year, next_month) = match month {
            Month::December => (year + 1, Month::January),
            m => (year, m.next()),
        };
        let reset = Date::from_calendar_date(next_year, next_month, 1)
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc())
            .unwrap_or(now);
        UsageMonth {
            key: format!("{year:04}-{:02}", u8::from(month)),
            reset_ms: i64::try_from(reset.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_and_resets_in_utc() {
        // 2026-11-22T15:00:00Z
        let m = UsageMonth::at(1_795_359_600_000);
        assert_eq!(m.key, "2026-11");
        assert_eq!(m.reset_ms, 1_796_083_200_000); // 2026-12-01T00:00:00Z
        // 2026-12-31T23:59:59.999Z rolls into January of the next year.
        let m = UsageMonth::at(1_798_761_599_999);
        assert_eq!(m.key, "2026-12");
        assert_eq!(m.reset_ms, 1_798_761_600_000);
    }
}
