//! Result values passed on in the shard's own wire form ([`Wire`]): which column types travel
//! so, and the one thing Keyshard computes with them, their order across shards. Each temporal
//! type is read from either format into one number per value (microseconds, days, months), in
//! the order the database itself gives its values.

use std::borrow::Cow;

use crate::{Wire, WireKind};

/// How a PostgreSQL result column of type `oid` travels: `None` for the types Keyshard reads
/// into values (numbers, booleans, text, bytes, arrays of those), else as a [`Wire`] of this
/// kind.
pub fn pg_wire_kind(oid: u32) -> Option<WireKind> {
    Some(match oid {
        // bool, bytea, name, int8, int2, int4, text, oid, unknown, bpchar, varchar, numeric.
        16 | 17 | 19 | 20 | 21 | 23 | 25 | 26 | 705 | 1042 | 1043 | 1700 => {
            return None;
        }
        // float4, float8: read back and printed again, the text would be Keyshard's, not the
        // shard's (`0.1` read as a double prints `0.10000000149011612`).
        700 | 701 => WireKind::PgFloat,
        oid if crate::pg_array::element_oid_of(oid)
            .is_some_and(crate::pg_array::element_supported) =>
        {
            return None;
        }
        1082 => WireKind::PgDate,
        1083 => WireKind::PgTime,
        1266 => WireKind::PgTimeTz,
        1114 | 1184 => WireKind::PgTimestamp,
        1186 => WireKind::PgInterval,
        790 => WireKind::PgMoney,
        869 | 650 => WireKind::PgInet,
        // uuid (`uuid_cmp` is memcmp), bit and varbit of one length.
        2950 => WireKind::Bytewise,
        _ => WireKind::Opaque,
    })
}

/// The built-in types whose values travel as [`Wire`], by the name a cast to them is written
/// with, and their OIDs.
const BUILTIN_TYPES: [(&str, u32); 43] = [
    ("date", 1082),
    ("time", 1083),
    ("timetz", 1266),
    ("timestamp", 1114),
    ("timestamptz", 1184),
    ("interval", 1186),
    ("uuid", 2950),
    ("json", 114),
    ("jsonb", 3802),
    ("jsonpath", 4072),
    ("xml", 142),
    ("inet", 869),
    ("cidr", 650),
    ("macaddr", 829),
    ("macaddr8", 774),
    ("money", 790),
    ("bit", 1560),
    ("varbit", 1562),
    ("\"char\"", 18),
    ("regclass", 2205),
    ("regtype", 2206),
    ("regproc", 24),
    ("regprocedure", 2202),
    ("regoper", 2203),
    ("regoperator", 2204),
    ("regnamespace", 4089),
    ("regrole", 4096),
    ("regconfig", 3734),
    ("tsvector", 3614),
    ("tsquery", 3615),
    ("point", 600),
    ("lseg", 601),
    ("path", 602),
    ("box", 603),
    ("polygon", 604),
    ("line", 628),
    ("circle", 718),
    ("int4range", 3904),
    ("int8range", 3926),
    ("numrange", 3906),
    ("tsrange", 3908),
    ("tstzrange", 3910),
    ("daterange", 3912),
];

/// PostgreSQL's name and OID of the built-in type `type_name` names (as a cast writes it:
/// `timestamp with time zone`, `TIMESTAMPTZ`, `interval(6)`), for the types whose values travel
/// as [`Wire`]; `None` for any other. The name is the one PostgreSQL gives a cast's column.
pub fn pg_builtin_type(type_name: &str) -> Option<(&'static str, u32)> {
    // Without its modifiers: `timestamp(3) with time zone` is `timestamp with time zone`.
    let mut words = String::with_capacity(type_name.len());
    let mut depth = 0usize;
    for c in type_name.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => words.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let base = match words.as_str() {
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "bit varying" => "varbit",
        other => other,
    };
    BUILTIN_TYPES
        .iter()
        .find(|(name, _)| *name == base)
        .map(|(name, oid)| (name.trim_matches('"'), *oid))
}

/// How a cast to built-in type `oid` (one whose values travel as [`Wire`], or an array of
/// one) is written: `timestamptz`, `"char"`, `date[]`; `None` for the types Keyshard reads
/// and for types it does not know.
pub fn pg_cast_name(oid: u32) -> Option<Cow<'static, str>> {
    let name = |oid: u32| match oid {
        // `bit` alone is bit(1), to which a longer string is cut: bit varying, which any
        // bit(n) column takes and compares with, keeps it whole.
        1560 => Some("varbit"),
        700 => Some("float4"),
        701 => Some("float8"),
        _ => BUILTIN_TYPES
            .iter()
            .find(|(_, known)| *known == oid)
            .map(|(name, _)| *name),
    };
    match crate::pg_array::element_oid_of(oid) {
        Some(element) => name(element).map(|name| Cow::Owned(format!("{name}[]"))),
        None => name(oid).map(Cow::Borrowed),
    }
}

/// How a MySQL result column whose type sqlx names `type_name` travels: `None` for the types
/// Keyshard reads into values, else as a [`Wire`] of this kind.
pub fn mysql_wire_kind(type_name: &str) -> Option<WireKind> {
    Some(match type_name {
        "DATE" | "DATETIME" | "TIMESTAMP" => WireKind::MySqlDateTime,
        "TIME" => WireKind::MySqlTime,
        "YEAR" => WireKind::MySqlYear,
        // Their text is the shard's: `-3.40282e38`, and `1.500` for a FLOAT(10,3).
        "FLOAT" | "DOUBLE" => WireKind::MySqlFloat,
        // BIT(n) is its n bits in whole bytes, big-endian, in both protocols.
        "BIT" => WireKind::Bytewise,
        "JSON" | "GEOMETRY" => WireKind::Opaque,
        _ => return None,
    })
}

/// A wire value's place in its type's order.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SortKey<'a> {
    /// One number: microseconds, days or a year.
    Number(i128),
    /// `timetz`: the instant in UTC, then the zone.
    Pair(i128, i128),
    /// Bytes compared as they are.
    Bytes(&'a [u8]),
    /// A float, in PostgreSQL's order: -0 equals 0, NaN equals NaN and sorts above every
    /// number.
    Float(Float),
    /// An `inet` or `cidr` in `network_cmp`'s order: the family, the network (the address
    /// under its own mask), the mask length, then the whole address.
    Network {
        /// 2 for IPv4, 3 for IPv6, as `inet_send` numbers them.
        family: u8,
        /// The address under its own mask.
        network: [u8; 16],
        /// The mask length.
        bits: u8,
        /// The whole address.
        address: [u8; 16],
    },
}

/// An `inet`'s or `cidr`'s place in `network_cmp`'s order, from `inet_send`'s form (family 2
/// or 3, mask length, cidr flag, address length, address) or the text (`10.0.0.1/8`, `::1`).
/// Comparing the network under each value's own mask orders as `network_cmp`'s comparison
/// of the bits both masks cover, then the mask lengths: the shorter mask's network has zeros
/// where the longer one may not.
fn network_key(bytes: &[u8], binary: bool) -> Option<SortKey<'static>> {
    let mut address = [0u8; 16];
    let (family, bits) = if binary {
        let [family, bits, _, len, rest @ ..] = bytes else {
            return None;
        };
        let len = usize::from(*len);
        address.get_mut(..len)?.copy_from_slice(rest.get(..len)?);
        (*family, *bits)
    } else {
        let text = std::str::from_utf8(bytes).ok()?;
        let (host, mask) = match text.split_once('/') {
            Some((host, mask)) => (host, Some(mask.parse::<u8>().ok()?)),
            None => (text, None),
        };
        match host.parse::<std::net::IpAddr>().ok()? {
            std::net::IpAddr::V4(v4) => {
                address[..4].copy_from_slice(&v4.octets());
                (2, mask.unwrap_or(32))
            }
            std::net::IpAddr::V6(v6) => {
                address = v6.octets();
                (3, mask.unwrap_or(128))
            }
        }
    };
    let mut network = address;
    for (i, byte) in network.iter_mut().enumerate() {
        let kept = usize::from(bits).saturating_sub(i * 8).min(8);
        *byte &= !(0xffu8.checked_shr(kept as u32).unwrap_or(0));
    }
    Some(SortKey::Network {
        family,
        network,
        bits,
        address,
    })
}

/// A float ordered and compared as PostgreSQL's `float8_cmp` does (MySQL stores neither NaN
/// nor -0).
#[derive(Debug, Clone, Copy)]
pub struct Float(pub f64);

impl Float {
    fn canonical(self) -> f64 {
        if self.0.is_nan() {
            f64::NAN
        } else if self.0 == 0.0 {
            0.0
        } else {
            self.0
        }
    }
}

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Float {}

impl PartialOrd for Float {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Float {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.canonical().total_cmp(&other.canonical())
    }
}

/// Where `wire` sorts among values of its column; `None` for a type whose order Keyshard
/// does not know, or bytes that are not a value of the type.
pub fn sort_key(wire: &Wire) -> Option<SortKey<'_>> {
    let bytes = &wire.bytes[..];
    let text = || std::str::from_utf8(bytes).ok();
    let number = SortKey::Number;
    match (wire.kind, wire.binary) {
        (WireKind::Bytewise, _) => Some(SortKey::Bytes(bytes)),
        (
            WireKind::Opaque | WireKind::PgEnum | WireKind::PgEnumArray | WireKind::PgCatalogRef,
            _,
        ) => None,
        (WireKind::PgMoney, _) => wire.money().map(number),
        (WireKind::PgInet, binary) => network_key(bytes, binary),
        (WireKind::PgFloat | WireKind::MySqlFloat, _) => {
            wire.float().map(|v| SortKey::Float(Float(v)))
        }
        (WireKind::PgDate, true) => Some(number(be_i32(bytes)?.into())),
        (WireKind::PgDate, false) => pg_date_text(text()?).map(number),
        (WireKind::PgTime | WireKind::PgTimestamp, true) => Some(number(be_i64(bytes)?.into())),
        (WireKind::PgTime, false) => pg_time_of_day(text()?).map(number),
        (WireKind::PgTimestamp, false) => pg_timestamp_text(text()?).map(number),
        (WireKind::PgTimeTz, true) => {
            let zone = be_i32(bytes.get(8..)?)?;
            timetz_key(be_i64(bytes)?, zone)
        }
        (WireKind::PgTimeTz, false) => {
            let text = text()?;
            let at = text.rfind(['+', '-'])?;
            let zone = -offset_seconds(&text[at..])?;
            timetz_key(pg_time_of_day(&text[..at])?.try_into().ok()?, zone)
        }
        (WireKind::PgInterval, true) => {
            let micros = be_i64(bytes)?;
            let days = be_i32(bytes.get(8..)?)?;
            let months = be_i32(bytes.get(12..)?)?;
            Some(number(interval_span(
                micros.into(),
                days.into(),
                months.into(),
            )))
        }
        (WireKind::PgInterval, false) => pg_interval_text(text()?).map(number),
        (WireKind::MySqlDateTime, true) => mysql_datetime_binary(bytes).map(number),
        (WireKind::MySqlDateTime, false) => mysql_datetime_text(text()?).map(number),
        (WireKind::MySqlTime, true) => mysql_time_binary(bytes).map(number),
        (WireKind::MySqlTime, false) => mysql_time_text(text()?).map(number),
        (WireKind::MySqlYear, true) => Some(number(
            u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?).into(),
        )),
        (WireKind::MySqlYear, false) => text()?.parse::<i128>().ok().map(number),
    }
}

const MICROS_PER_SECOND: i128 = 1_000_000;
const MICROS_PER_DAY: i128 = 86_400 * MICROS_PER_SECOND;

fn be_i32(bytes: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}

fn be_i64(bytes: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

fn le_u32(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?))
}

/// PostgreSQL's `timetz_cmp`: the instant (time plus the zone, seconds west of UTC), then
/// the zone.
fn timetz_key(micros: i64, zone: i32) -> Option<SortKey<'static>> {
    let zone = i128::from(zone);
    Some(SortKey::Pair(
        i128::from(micros) + zone * MICROS_PER_SECOND,
        zone,
    ))
}

/// PostgreSQL's `interval_cmp_value`: a month is 30 days, a day 24 hours.
fn interval_span(micros: i128, days: i128, months: i128) -> i128 {
    micros + (days + months * 30) * MICROS_PER_DAY
}

/// Days since 1970-01-01 of a proleptic Gregorian date, year 0 being 1 BC (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i128> {
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
fn ymd(text: &str) -> Option<(i64, u32, u32)> {
    let mut parts = text.splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month = parts.next()?.parse().ok()?;
    let day = parts.next()?.parse().ok()?;
    Some((year, month, day))
}

/// `HH:MM:SS[.ffffff]` (hours any number of digits) as microseconds.
fn hms_micros(text: &str) -> Option<i128> {
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

/// A `+HH[:MM[:SS]]` or `-HH…` UTC offset in seconds east of UTC.
fn offset_seconds(text: &str) -> Option<i32> {
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
fn pg_date_text(text: &str) -> Option<i128> {
    if let Some(end) = pg_infinity(text) {
        return Some(end);
    }
    let (date, bc) = era(text);
    let (year, month, day) = ymd(date)?;
    days_from_civil(astronomical(year, bc), month, day)
}

/// A `time` (no zone) as microseconds.
fn pg_time_of_day(text: &str) -> Option<i128> {
    hms_micros(text)
}

/// A `timestamp` or `timestamptz` in the ISO DateStyle as microseconds since 1970 in UTC.
fn pg_timestamp_text(text: &str) -> Option<i128> {
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
fn pg_interval_text(text: &str) -> Option<i128> {
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

/// A MySQL date and time as one number that orders as the values do (zero dates first).
fn mysql_datetime_key(fields: [u32; 6], micros: u32) -> i128 {
    let [year, month, day, hour, minute, second] = fields.map(i128::from);
    let seconds = ((((year * 13 + month) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second;
    seconds * MICROS_PER_SECOND + i128::from(micros)
}

/// The binary protocol's DATE/DATETIME/TIMESTAMP: a length byte (0, 4, 7 or 11), then the
/// year (2 bytes), month, day, hour, minute, second and microseconds (4 bytes), little-endian.
fn mysql_datetime_binary(bytes: &[u8]) -> Option<i128> {
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
fn mysql_datetime_text(text: &str) -> Option<i128> {
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
fn mysql_time_binary(bytes: &[u8]) -> Option<i128> {
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
fn mysql_time_text(text: &str) -> Option<i128> {
    match text.strip_prefix('-') {
        Some(rest) => hms_micros(rest).map(|m| -m),
        None => hms_micros(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_types_are_named_as_casts_write_them() {
        assert_eq!(
            pg_builtin_type("timestamp(3) with time zone"),
            Some(("timestamptz", 1184))
        );
        assert_eq!(pg_builtin_type("BIT VARYING(8)"), Some(("varbit", 1562)));
        assert_eq!(pg_builtin_type("\"char\""), Some(("char", 18)));
        // Unquoted, `char` is `character`, which Keyshard reads.
        assert_eq!(pg_builtin_type("char"), None);
        assert_eq!(pg_cast_name(18).as_deref(), Some("\"char\""));
        assert_eq!(pg_cast_name(3802).as_deref(), Some("jsonb"));
        assert_eq!(pg_cast_name(1560).as_deref(), Some("varbit"));
        assert_eq!(pg_cast_name(1182).as_deref(), Some("date[]"));
        assert_eq!(pg_cast_name(25), None);
        assert_eq!(pg_cast_name(1009), None);
        for (name, oid) in BUILTIN_TYPES {
            assert!(pg_wire_kind(oid).is_some(), "{name}");
        }
    }

    fn key(kind: WireKind, binary: bool, bytes: &[u8]) -> Option<i128> {
        match sort_key(&Wire::new(kind, binary, bytes))? {
            SortKey::Number(n) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn floats_order_as_postgres_orders_them() {
        let key = |kind: WireKind, binary: bool, bytes: &[u8]| {
            Wire::new(kind, binary, bytes)
                .float()
                .map(|v| SortKey::Float(Float(v)))
        };
        let pg = |binary: bool, bytes: &[u8]| key(WireKind::PgFloat, binary, bytes);
        let nan = pg(false, b"NaN").unwrap();
        assert!(pg(false, b"Infinity").unwrap() < nan);
        assert_eq!(pg(true, &f64::NAN.to_be_bytes()).unwrap(), nan);
        assert_eq!(pg(false, b"-0").unwrap(), pg(false, b"0").unwrap());
        assert!(pg(false, b"-Infinity").unwrap() < pg(false, b"-1e300").unwrap());
        assert_eq!(
            pg(true, &0.5f32.to_be_bytes()).unwrap(),
            pg(false, b"0.5").unwrap()
        );
        let mysql = |bytes: &[u8]| key(WireKind::MySqlFloat, true, bytes);
        assert!(mysql(&(-1.5f64).to_le_bytes()).unwrap() < mysql(&0.25f32.to_le_bytes()).unwrap());
        assert!(mysql(b"abc").is_none());
        // money orders by its amount, whatever the locale writes around the digits.
        let money = |binary: bool, bytes: &[u8]| {
            Wire::new(WireKind::PgMoney, binary, bytes)
                .money()
                .map(SortKey::Number)
        };
        assert_eq!(money(false, b"-$1,234.56"), Some(SortKey::Number(-123_456)));
        assert_eq!(money(false, b"($0.05)"), Some(SortKey::Number(-5)));
        assert_eq!(
            money(false, "1.234,56 €".as_bytes()),
            Some(SortKey::Number(123_456))
        );
        assert_eq!(
            money(true, &(-7i64).to_be_bytes()),
            Some(SortKey::Number(-7))
        );
        assert_eq!(money(false, b"$"), None);
        // What sort_key gives is that same key.
        assert_eq!(
            sort_key(&Wire::new(WireKind::PgFloat, false, b"2.5")),
            pg(false, b"2.5")
        );
    }

    #[test]
    fn networks_order_as_postgres_orders_them() {
        let inet = |text: &str| network_key(text.as_bytes(), false);
        // network_cmp: IPv4 before IPv6; the common network bits, then the mask, then the
        // whole address.
        let ordered = [
            "10.0.0.0/8",
            "10.2.0.0/8",
            "10.1.0.0/16",
            "10.1.0.5/16",
            "10.1.0.0",
            "192.168.1.1",
            "::1",
            "2001:db8::/32",
        ];
        for pair in ordered.windows(2) {
            assert!(inet(pair[0]).unwrap() < inet(pair[1]).unwrap(), "{pair:?}");
        }
        // Binary: family 2, 24 bits, inet, 4 bytes.
        let binary = [2, 24, 0, 4, 192, 168, 1, 7];
        assert_eq!(network_key(&binary, true), inet("192.168.1.7/24"));
        let wire = Wire::new(WireKind::PgInet, true, &binary);
        assert!(sort_key(&wire).is_some());
        assert!(inet("not an address").is_none());
    }

    #[test]
    fn text_and_binary_forms_agree() {
        // 2000-01-01 is PostgreSQL's binary epoch: 10,957 days after 1970.
        let epoch = key(WireKind::PgDate, false, b"2000-01-01").unwrap();
        assert_eq!(epoch, 10_957);
        assert_eq!(
            key(WireKind::PgDate, false, b"2000-01-02").unwrap() - epoch,
            i128::from(be_i32(&1i32.to_be_bytes()).unwrap())
        );
        let bc = key(WireKind::PgDate, false, b"0001-12-31 BC").unwrap();
        let ad = key(WireKind::PgDate, false, b"0001-01-01").unwrap();
        assert_eq!(ad - bc, 1);
        assert!(key(WireKind::PgDate, false, b"-infinity").unwrap() < bc);

        let mysql_text = key(WireKind::MySqlDateTime, false, b"2024-02-29 10:11:12.5").unwrap();
        let binary = [11, 0xe8, 0x07, 2, 29, 10, 11, 12, 0x20, 0xa1, 0x07, 0];
        assert_eq!(
            key(WireKind::MySqlDateTime, true, &binary).unwrap(),
            mysql_text
        );
        assert!(key(WireKind::MySqlDateTime, false, b"0000-00-00").unwrap() < mysql_text);

        let minus = [8, 1, 1, 0, 0, 0, 2, 0, 0];
        assert_eq!(
            key(WireKind::MySqlTime, true, &minus).unwrap(),
            key(WireKind::MySqlTime, false, b"-26:00:00").unwrap()
        );
    }

    #[test]
    fn zones_and_intervals_order_as_postgres_does() {
        let ts = |t: &[u8]| key(WireKind::PgTimestamp, false, t).unwrap();
        assert_eq!(ts(b"2024-01-01 10:00:00+02"), ts(b"2024-01-01 08:00:00+00"));
        assert!(ts(b"2024-01-01 08:00:00.5+00") > ts(b"2024-01-01 08:00:00+00"));
        assert!(ts(b"0044-03-15 12:00:00 BC") < ts(b"0001-01-01 00:00:00"));
        assert!(ts(b"294276-12-31 23:59:59.999999") < ts(b"infinity"));
        let iv = |t: &[u8]| key(WireKind::PgInterval, false, t).unwrap();
        assert_eq!(iv(b"1 mon"), iv(b"30 days"));
        assert!(iv(b"-1 days +23:00:00") < iv(b"00:00:00"));
        assert_eq!(
            iv(b"1 year 2 mons 3 days 04:05:06.5"),
            (14 * 30 + 3) * MICROS_PER_DAY + hms_micros("04:05:06.5").unwrap()
        );
        let tz = |t: &[u8]| match sort_key(&Wire::new(WireKind::PgTimeTz, false, t)) {
            Some(SortKey::Pair(instant, zone)) => (instant, zone),
            other => panic!("{other:?}"),
        };
        assert!(tz(b"10:00:00+02") < tz(b"09:00:00+00"));
        assert!(sort_key(&Wire::new(WireKind::Opaque, false, b"{}")).is_none());
        assert!(sort_key(&Wire::new(WireKind::PgDate, false, b"soon")).is_none());
    }
}
