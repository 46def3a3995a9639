//! PostgreSQL's temporal values in their text forms (ISO DateStyle, the `postgres`
//! IntervalStyle) as one number each, in the order PostgreSQL gives them, and the keys of
//! `timetz` and `interval` from their parts.

use super::calendar::{MICROS_PER_DAY, MICROS_PER_SECOND, days_from_civil, hms_micros, ymd};
use super::order::SortKey;

/// PostgreSQL's `timetz_cmp`: the instant (time plus the zone, seconds west of UTC), then
/// the zone.
pub(super) fn timetz_key(micros: i64, zone: i32) -> Option<SortKey<'static>> {
    let zone = i128::from(zone);
    Some(SortKey::Pair(
        i128::from(micros) + zone * MICROS_PER_SECOND,
        zone,
    ))
}

/// PostgreSQL's `interval_cmp_value`: a month is 30 days, a day 24 hours.
pub(super) fn interval_span(micros: i128, days: i128, months: i128) -> i128 {
    micros + (days + months * 30) * MICROS_PER_DAY
}

/// A `+HH[:MM[:SS]]` or `-HH…` UTC offset in seconds east of UTC.
pub(super) fn offset_seconds(text: &str) -> Option<i32> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let mut seconds = 0;
    for (part, scale) in rest.split(':').zip([3600, 60, 1]) {
        seconds += part.parse::<i32>().ok()? * scale;
    }
    Some(sign * seconds)
}

/// Splits off PostgreSQL's ` BC` suffix: (the rest, whether it was there).
fn era(text: &str) -> (&str, bool) {
    match text.strip_suffix(" BC") {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// Astronomical year numbering: 1 BC is year 0.
fn astronomical(year: i64, bc: bool) -> i64 {
    if bc { 1 - year } else { year }
}

/// PostgreSQL's `infinity` and `-infinity` (dates and timestamps) as the ends of the order.
fn pg_infinity(text: &str) -> Option<i128> {
    match text {
        "infinity" => Some(i128::MAX),
        "-infinity" => Some(i128::MIN),
        _ => None,
    }
}

/// A `date` in the ISO DateStyle (the shard connections' own), as days.
pub(super) fn pg_date_text(text: &str) -> Option<i128> {
    if let Some(end) = pg_infinity(text) {
        return Some(end);
    }
    let (date, bc) = era(text);
    let (year, month, day) = ymd(date)?;
    days_from_civil(astronomical(year, bc), month, day)
}

/// A `time` (no zone) as microseconds.
pub(super) fn pg_time_of_day(text: &str) -> Option<i128> {
    hms_micros(text)
}

/// A `timestamp` or `timestamptz` in the ISO DateStyle as microseconds since 1970 in UTC.
pub(super) fn pg_timestamp_text(text: &str) -> Option<i128> {
    if let Some(end) = pg_infinity(text) {
        return Some(end);
    }
    let (text, bc) = era(text);
    let (date, time) = text.split_once(' ')?;
    let (time, offset) = match time.find(['+', '-']) {
        Some(at) => (&time[..at], offset_seconds(&time[at..])?),
        None => (time, 0),
    };
    let (year, month, day) = ymd(date)?;
    let days = days_from_civil(astronomical(year, bc), month, day)?;
    Some(days * MICROS_PER_DAY + hms_micros(time)? - i128::from(offset) * MICROS_PER_SECOND)
}

/// An `interval` in the `postgres` IntervalStyle (the default): `1 year 2 mons -3 days
/// +04:05:06.5`.
pub(super) fn pg_interval_text(text: &str) -> Option<i128> {
    let (mut micros, mut days, mut months) = (0i128, 0i128, 0i128);
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word.contains(':') {
            let (sign, clock) = match word.as_bytes().first()? {
                b'-' => (-1, &word[1..]),
                b'+' => (1, &word[1..]),
                _ => (1, word),
            };
            micros += sign * hms_micros(clock)?;
            continue;
        }
        let count: i128 = word.parse().ok()?;
        match words.next()? {
            "year" | "years" => months += count * 12,
            "mon" | "mons" => months += count,
            "day" | "days" => days += count,
            _ => return None,
        }
    }
    Some(interval_span(micros, days, months))
}
