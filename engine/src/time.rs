//! RFC 3339 timestamps (UTC or with an offset) to and from Unix milliseconds, without a date
//! crate.

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian; H. Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count from 1970-01-01 (the inverse of `days_from_civil`).
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds).
pub fn format_rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Formats Unix milliseconds as `YYYY-MM-DD HH:MM` (UTC), as contexts date a turn.
pub fn format_minute(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", s / 3600, s / 60 % 60)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` into milliseconds since the Unix epoch.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Impossible dates (February 30th, the 29th of a common year), hours past 23 and a
    // 60th second are refused, not rolled over into the next day or minute.
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 {
        return None;
    }
    if sec > 59 {
        return None;
    }
    let mut rest = &s[19..];
    let mut ms = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let f = &frac[..digits];
        ms = format!("{f:0<3}")[..3].parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (oh, om) = (rest.get(1..3)?, rest.get(4..6)?);
            if !oh.bytes().chain(om.bytes()).all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (oh, om) = (oh.parse::<i64>().ok()?, om.parse::<i64>().ok()?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 60 + om)
        }
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + ms)
}

/// Days in month `mo` (1–12) of year `y` in the proleptic Gregorian calendar.
fn days_in_month(y: i64, mo: i64) -> i64 {
    match mo {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::{format_rfc3339, parse_rfc3339};

    #[test]
    fn formats_back_what_it_parses() {
        for t in [
            "1970-01-01T00:00:00Z",
            "2026-11-22T10:00:00Z",
            "2000-02-29T23:59:59Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(format_rfc3339(parse_rfc3339(t).unwrap()), t);
        }
    }

    #[test]
    fn parses_utc_offsets_and_fractions() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-11-22T10:00:00Z"),
            Some(1_795_341_600_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T12:00:00+02:00"),
            Some(1_795_341_600_000)
        );
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00.5Z"),
            Some(951_782_400_500)
        );
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-11-22",
            "yesterday",
            "2026-11-22T10:00:00",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn impossible_dates_and_offsets_are_refused() {
        for t in [
            "2024-02-30T00:00:00Z",
            "2024-02-31T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01T00:00:00+99:99",
            "2024-01-01T00:00:00+24:00",
            "2024-01-01T00:00:00+05:60",
            "2024-01-01T00:00:00+-1:00",
        ] {
            assert_eq!(parse_rfc3339(t), None, "{t}");
        }
        assert!(parse_rfc3339("2024-02-29T00:00:00Z").is_some());
        assert!(parse_rfc3339("2000-02-29T00:00:00Z").is_some());
        assert_eq!(parse_rfc3339("1900-02-29T00:00:00Z"), None);
        assert!(parse_rfc3339("2024-01-01T00:00:00+23:59").is_some());
    }
}
