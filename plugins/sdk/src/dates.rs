//! Dates as sources write them, to milliseconds since the Unix epoch: RFC 3339 (Atom,
//! `dc:date`, JSON APIs) and RFC 822/1123 (RSS `pubDate`, HTTP and WebDAV's
//! `getlastmodified`).

/// Milliseconds since the epoch of a date in either format, if it parses.
pub fn parse_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    rfc3339(text).or_else(|| rfc822(text))
}

/// `2026-11-20T10:00:00Z`, `2026-11-20T10:00:00.5+01:00`, or a bare date.
fn rfc3339(s: &str) -> Option<i64> {
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if s.get(4..5)? != "-" || s.get(7..8)? != "-" {
        return None;
    }
    if s.len() == 10 {
        return Some(epoch_ms(year, month, day, 0, 0, 0, 0));
    }
    if !matches!(s.get(10..11)?, "T" | "t" | " ") {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = s.get(19..)?;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = zone(rest)?;
    Some(epoch_ms(year, month, day, hour, minute, second, offset))
}

/// `Fri, 20 Nov 2026 10:00:00 GMT` (the weekday and the seconds are optional).
fn rfc822(s: &str) -> Option<i64> {
    let s = s.split_once(',').map_or(s, |(_, rest)| rest);
    let mut parts = s.split_whitespace();
    let day: i64 = parts.next()?.parse().ok()?;
    let month = parts.next()?.get(..3)?.to_ascii_lowercase();
    let month = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .iter()
    .position(|m| *m == month)? as i64
        + 1;
    let mut year: i64 = parts.next()?.parse().ok()?;
    if year < 100 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let mut clock = parts.next()?.split(':');
    let hour: i64 = clock.next()?.parse().ok()?;
    let minute: i64 = clock.next()?.parse().ok()?;
    let second: i64 = clock.next().map_or(Some(0), |s| s.parse().ok())?;
    let offset = parts.next().map_or(Some(0), zone)?;
    Some(epoch_ms(year, month, day, hour, minute, second, offset))
}

/// A zone (`Z`, `+01:00`, `+0100`, `GMT`, `EST`...) as seconds east of UTC.
fn zone(z: &str) -> Option<i64> {
    let z = z.trim();
    match z.to_ascii_uppercase().as_str() {
        "" | "Z" | "GMT" | "UT" | "UTC" => return Some(0),
        "EST" => return Some(-5 * 3600),
        "EDT" => return Some(-4 * 3600),
        "CST" => return Some(-6 * 3600),
        "CDT" => return Some(-5 * 3600),
        "MST" => return Some(-7 * 3600),
        "MDT" => return Some(-6 * 3600),
        "PST" => return Some(-8 * 3600),
        "PDT" => return Some(-7 * 3600),
        _ => {}
    }
    let sign = match z.get(..1)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(char::is_ascii_digit).collect();
    if digits.len() != 4 {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits[2..].parse().ok()?;
    Some(sign * (hours * 3600 + minutes * 60))
}

/// Milliseconds since the epoch of a date and time of day `offset_s` seconds east of UTC
/// (proleptic Gregorian calendar; months and days counted from 1).
pub fn epoch_ms(y: i64, m: i64, d: i64, hh: i64, mm: i64, ss: i64, offset_s: i64) -> i64 {
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days * 86_400 + hh * 3600 + mm * 60 + ss - offset_s) * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_agree() {
        let utc = 1_795_600_800_000; // 2026-11-25T10:00:00Z
        assert_eq!(parse_ms("2026-11-25T10:00:00Z"), Some(utc));
        assert_eq!(parse_ms("2026-11-25T11:00:00.250+01:00"), Some(utc));
        assert_eq!(parse_ms("Wed, 25 Nov 2026 10:00:00 GMT"), Some(utc));
        assert_eq!(parse_ms("25 Nov 2026 05:00:00 -0500"), Some(utc));
        assert_eq!(parse_ms("Wed, 25 Nov 2026 02:00:00 PST"), Some(utc));
        assert_eq!(parse_ms("1970-01-01"), Some(0));
        assert_eq!(parse_ms("yesterday"), None);
        assert_eq!(parse_ms("Wed, 25 Foo 2026 10:00:00 GMT"), None);
    }
}
