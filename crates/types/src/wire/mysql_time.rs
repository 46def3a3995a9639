//! MySQL's DATE, DATETIME, TIMESTAMP and TIME values, in either protocol's form, as one
//! number each that orders as the values do.

use super::calendar::{MICROS_PER_SECOND, hms_micros, ymd};

fn le_u32(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?))
}

/// A MySQL date and time as one number that orders as the values do (zero dates first).
fn mysql_datetime_key(fields: [u32; 6], micros: u32) -> i128 {
    let [year, month, day, hour, minute, second] = fields.map(i128::from);
    let seconds = ((((year * 13 + month) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second;
    seconds * MICROS_PER_SECOND + i128::from(micros)
}

/// The binary protocol's DATE/DATETIME/TIMESTAMP: a length byte (0, 4, 7 or 11), then the
/// year (2 bytes), month, day, hour, minute, second and microseconds (4 bytes), little-endian.
pub(super) fn mysql_datetime_binary(bytes: &[u8]) -> Option<i128> {
    let (&len, rest) = bytes.split_first()?;
    let rest = rest.get(..usize::from(len))?;
    let mut fields = [0u32; 6];
    if len >= 4 {
        fields[0] = u16::from_le_bytes([rest[0], rest[1]]).into();
        fields[1] = rest[2].into();
        fields[2] = rest[3].into();
    }
    if len >= 7 {
        fields[3] = rest[4].into();
        fields[4] = rest[5].into();
        fields[5] = rest[6].into();
    }
    let micros = if len >= 11 { le_u32(&rest[7..])? } else { 0 };
    Some(mysql_datetime_key(fields, micros))
}

/// `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`, zero dates included.
pub(super) fn mysql_datetime_text(text: &str) -> Option<i128> {
    let (date, time) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    let (year, month, day) = ymd(date)?;
    let micros = hms_micros(time)?;
    let seconds = u32::try_from(micros / MICROS_PER_SECOND).ok()?;
    let fields = [
        u32::try_from(year).ok()?,
        month,
        day,
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
    ];
    Some(mysql_datetime_key(
        fields,
        u32::try_from(micros % MICROS_PER_SECOND).ok()?,
    ))
}

/// The binary protocol's TIME: a length byte (0, 8 or 12), the sign, days (4 bytes), hours,
/// minutes, seconds and microseconds (4 bytes).
pub(super) fn mysql_time_binary(bytes: &[u8]) -> Option<i128> {
    let (&len, rest) = bytes.split_first()?;
    if len == 0 {
        return Some(0);
    }
    let rest = rest.get(..usize::from(len))?;
    let negative = *rest.first()? == 1;
    let days = i128::from(le_u32(rest.get(1..)?)?);
    let [hours, minutes, seconds] = [rest[5], rest[6], rest[7]].map(i128::from);
    let micros = if len >= 12 {
        i128::from(le_u32(&rest[8..])?)
    } else {
        0
    };
    let magnitude =
        (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * MICROS_PER_SECOND + micros;
    Some(if negative { -magnitude } else { magnitude })
}

/// `[-]HHH:MM:SS[.ffffff]`.
pub(super) fn mysql_time_text(text: &str) -> Option<i128> {
    match text.strip_prefix('-') {
        Some(rest) => hms_micros(rest).map(|m| -m),
        None => hms_micros(text),
    }
}
