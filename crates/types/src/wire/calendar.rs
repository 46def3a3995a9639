//! The calendar and clock arithmetic both databases' temporal values are ordered by:
//! proleptic Gregorian days, and times of day as microseconds.

pub(super) const MICROS_PER_SECOND: i128 = 1_000_000;
pub(super) const MICROS_PER_DAY: i128 = 86_400 * MICROS_PER_SECOND;

/// Days since 1970-01-01 of a proleptic Gregorian date, year 0 being 1 BC (Howard Hinnant's
/// `days_from_civil`).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i128> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let y = i128::from(year) - i128::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i128::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i128::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// `YYYY-MM-DD` (the year any number of digits) as (year, month, day).
pub(super) fn ymd(text: &str) -> Option<(i64, u32, u32)> {
    let mut parts = text.splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month = parts.next()?.parse().ok()?;
    let day = parts.next()?.parse().ok()?;
    Some((year, month, day))
}

/// `HH:MM:SS[.ffffff]` (hours any number of digits) as microseconds.
pub(super) fn hms_micros(text: &str) -> Option<i128> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let mut parts = whole.splitn(3, ':');
    let hours: i128 = parts.next()?.parse().ok()?;
    let minutes: i128 = parts.next()?.parse().ok()?;
    let seconds: i128 = parts.next().unwrap_or("0").parse().ok()?;
    if fraction.len() > 6 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros: i128 = format!("{fraction:0<6}").parse().ok()?;
    Some(((hours * 60 + minutes) * 60 + seconds) * MICROS_PER_SECOND + micros)
}
