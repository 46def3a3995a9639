//! A shard's binary-format value written in PostgreSQL's text format, for a client that asks
//! for text where the shard answered in binary (sqlx reads every prepared statement's results
//! in binary). Each type is written as PostgreSQL's output function writes it with the shard
//! connections' settings (DateStyle ISO, IntervalStyle postgres, TimeZone UTC,
//! extra_float_digits above 0, lc_monetary C; the frontend refuses the conversion to a session
//! that changed them); a type not here has no such conversion, and is refused rather than
//! guessed.

use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

use keyshard_types::array::{plain_element_text, write_text};
use keyshard_types::pg_array::{element_oid_of, parse_binary};
use keyshard_types::{Array, Value, float_text};

const CHAR: u32 = 18;
const JSON: u32 = 114;
const XML: u32 = 142;
const CIDR: u32 = 650;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const MACADDR8: u32 = 774;
const MACADDR: u32 = 829;
const MONEY: u32 = 790;
const INET: u32 = 869;
const DATE: u32 = 1082;
const TIME: u32 = 1083;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const INTERVAL: u32 = 1186;
const TIMETZ: u32 = 1266;
const BIT: u32 = 1560;
const VARBIT: u32 = 1562;
const UUID: u32 = 2950;
const JSONB: u32 = 3802;

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;
/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const POSTGRES_EPOCH_DAYS: i64 = 10_957;

/// The text form of a binary wire value of type `oid`: a catalog reference's as the shard
/// looked it up, else [`binary_to_text`]'s.
pub(crate) fn text_of_binary(wire: &keyshard_types::Wire, oid: u32) -> Option<String> {
    match wire.catalog_ref() {
        Some((_, text)) => Some(text.to_owned()),
        None => binary_to_text(oid, &wire.bytes),
    }
}

/// The text form of a binary value of type `oid`; `None` for a type this does not convert, or
/// bytes that are not a value of the type.
pub(crate) fn binary_to_text(oid: u32, bytes: &[u8]) -> Option<String> {
    match oid {
        JSON | XML => String::from_utf8(bytes.to_vec()).ok(),
        JSONB => match bytes.split_first()? {
            (1, text) => String::from_utf8(text.to_vec()).ok(),
            _ => None,
        },
        UUID => uuid(bytes),
        FLOAT4 => Some(float_text::postgres(
            f32::from_be_bytes(bytes.try_into().ok()?).into(),
            true,
            1,
        )),
        FLOAT8 => Some(float_text::postgres(
            f64::from_be_bytes(bytes.try_into().ok()?),
            false,
            1,
        )),
        DATE => date(be_i32(bytes)?),
        TIME => Some(time_of_day(be_i64(bytes)?)),
        TIMETZ => {
            let mut out = time_of_day(be_i64(bytes)?);
            // The zone is stored in seconds west of UTC.
            push_offset(&mut out, -be_i32(bytes.get(8..)?)?);
            Some(out)
        }
        TIMESTAMP => timestamp(be_i64(bytes)?, false),
        TIMESTAMPTZ => timestamp(be_i64(bytes)?, true),
        INTERVAL => Some(interval(
            be_i64(bytes)?,
            be_i32(bytes.get(8..)?)?,
            be_i32(bytes.get(12..)?)?,
        )),
        INET | CIDR => inet(bytes, oid == CIDR),
        MACADDR if bytes.len() == 6 => Some(mac(bytes)),
        MACADDR8 if bytes.len() == 8 => Some(mac(bytes)),
        BIT | VARBIT => bits(bytes),
        MONEY => Some(money(be_i64(bytes)?)),
        oid if let Some(element) = element_oid_of(oid) => array(element, bytes),
        oid if let Some(subtype) = range_subtype(oid) => range(subtype, bytes),
        CHAR => Some(match bytes {
            [] | [0] => String::new(),
            [b] if b.is_ascii() => char::from(*b).to_string(),
            // A byte with the high bit set prints as an octal escape (PostgreSQL 15+).
            [b] => format!("\\{b:03o}"),
            _ => return None,
        }),
        _ => None,
    }
}

/// An array of elements of type `element` (`date[]`, `uuid[]` …): each element written as its
/// type writes it, quoted where the array's text form needs it, bounds other than 1 written.
fn array(element: u32, bytes: &[u8]) -> Option<String> {
    array_text(bytes, Some(element), |bytes| binary_to_text(element, bytes))
}

/// An array of labels (an enum's), whose binary elements are their text, as `array_out`
/// writes it.
pub(crate) fn label_array(bytes: &[u8]) -> Option<String> {
    array_text(bytes, None, |bytes| String::from_utf8(bytes.to_vec()).ok())
}

/// A binary array of elements of type `element` (any, where `None`) as `array_out` writes
/// it, each element's text given by `element_text`.
fn array_text(
    bytes: &[u8],
    element: Option<u32>,
    element_text: impl Fn(&[u8]) -> Option<String>,
) -> Option<String> {
    let parsed = parse_binary(bytes).ok()?;
    if element.is_some_and(|element| element != parsed.element) {
        return None;
    }
    let elements = parsed
        .elements
        .iter()
        .map(|value| match value {
            None => Some(Value::Null),
            Some(bytes) => element_text(bytes).map(Value::Text),
        })
        .collect::<Option<Vec<_>>>()?;
    let array = Array {
        element: parsed.element,
        dims: parsed.dims,
        elements,
    };
    Some(write_text(&array, plain_element_text))
}

/// A money amount in cents as `cash_out` writes it in the C locale: `$1,234.56`, `-$0.01`.
fn money(cents: i64) -> String {
    let magnitude = cents.unsigned_abs();
    let units = (magnitude / 100).to_string();
    let mut out = String::with_capacity(units.len() + units.len() / 3 + 5);
    if cents < 0 {
        out.push('-');
    }
    out.push('$');
    for (i, digit) in units.chars().enumerate() {
        if i > 0 && (units.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    let _ = write!(out, ".{:02}", magnitude % 100);
    out
}

/// The element type of a built-in range type: int4range, int8range, numrange, tsrange,
/// tstzrange, daterange.
fn range_subtype(oid: u32) -> Option<u32> {
    Some(match oid {
        3904 => 23,
        3926 => 20,
        3906 => 1700,
        3908 => TIMESTAMP,
        3910 => TIMESTAMPTZ,
        3912 => DATE,
        _ => return None,
    })
}

/// A range (`range_send`'s flags byte, then each finite bound as a length and its element's
/// bytes) as `range_out` writes it: `[1,5)`, `(,10]`, `empty`, a bound quoted where it holds a
/// space, a comma, a bracket or a quote.
fn range(subtype: u32, bytes: &[u8]) -> Option<String> {
    const EMPTY: u8 = 0x01;
    const LOWER_INCLUSIVE: u8 = 0x02;
    const UPPER_INCLUSIVE: u8 = 0x04;
    const LOWER_INFINITE: u8 = 0x08;
    const UPPER_INFINITE: u8 = 0x10;
    let (&flags, mut rest) = bytes.split_first()?;
    if flags & EMPTY != 0 {
        return Some("empty".to_owned());
    }
    let mut bound = |infinite: bool| -> Option<String> {
        if infinite {
            return Some(String::new());
        }
        let len = usize::try_from(be_i32(rest)?).ok()?;
        let value = rest.get(4..4 + len)?;
        rest = &rest[4 + len..];
        let text = match subtype {
            23 => be_i32(value)?.to_string(),
            20 => be_i64(value)?.to_string(),
            1700 => keyshard_types::numeric::binary_to_text(value)?,
            _ => binary_to_text(subtype, value)?,
        };
        Some(range_bound(text))
    };
    let lower = bound(flags & LOWER_INFINITE != 0)?;
    let upper = bound(flags & UPPER_INFINITE != 0)?;
    let open = if flags & LOWER_INCLUSIVE != 0 {
        '['
    } else {
        '('
    };
    let close = if flags & UPPER_INCLUSIVE != 0 {
        ']'
    } else {
        ')'
    };
    Some(format!("{open}{lower},{upper}{close}"))
}

/// `range_bound_escape`: quoted, with quotes and backslashes doubled, when the reader needs it.
fn range_bound(text: String) -> String {
    let needs_quotes = text.is_empty()
        || text
            .chars()
            .any(|c| matches!(c, '"' | '\\' | '(' | ')' | '[' | ']' | ',') || c.is_whitespace());
    if !needs_quotes {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn be_i32(bytes: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}

fn be_i64(bytes: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

fn uuid(bytes: &[u8]) -> Option<String> {
    if bytes.len() != 16 {
        return None;
    }
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{b:02x}");
    }
    Some(out)
}

/// (year, month, day) of days since 1970-01-01, year 0 being 1 BC (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` of days since 2000-01-01, and whether the year is BC.
fn push_date(out: &mut String, days: i64) -> bool {
    let (year, month, day) = civil_from_days(days + POSTGRES_EPOCH_DAYS);
    let (year, bc) = if year <= 0 {
        (1 - year, true)
    } else {
        (year, false)
    };
    let _ = write!(out, "{year:04}-{month:02}-{day:02}");
    bc
}

fn date(days: i32) -> Option<String> {
    Some(match days {
        i32::MAX => "infinity".to_owned(),
        i32::MIN => "-infinity".to_owned(),
        days => {
            let mut out = String::with_capacity(13);
            if push_date(&mut out, days.into()) {
                out.push_str(" BC");
            }
            out
        }
    })
}

/// `HH:MM:SS[.ffffff]` with the fraction's trailing zeros dropped, as PostgreSQL prints it.
fn push_clock(out: &mut String, micros: i64) {
    let seconds = micros / MICROS_PER_SECOND;
    let fraction = micros % MICROS_PER_SECOND;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

fn time_of_day(micros: i64) -> String {
    let mut out = String::with_capacity(15);
    push_clock(&mut out, micros);
    out
}

/// `+HH[:MM[:SS]]` for an offset in seconds east of UTC.
fn push_offset(out: &mut String, east: i32) {
    out.push(if east < 0 { '-' } else { '+' });
    let east = east.unsigned_abs();
    let _ = write!(out, "{:02}", east / 3600);
    if !east.is_multiple_of(3600) {
        let _ = write!(out, ":{:02}", east / 60 % 60);
        if !east.is_multiple_of(60) {
            let _ = write!(out, ":{:02}", east % 60);
        }
    }
}

/// A `timestamp` (or, `zoned`, a `timestamptz` in UTC) of microseconds since 2000-01-01.
fn timestamp(micros: i64, zoned: bool) -> Option<String> {
    Some(match micros {
        i64::MAX => "infinity".to_owned(),
        i64::MIN => "-infinity".to_owned(),
        micros => {
            let mut out = String::with_capacity(32);
            let bc = push_date(&mut out, micros.div_euclid(MICROS_PER_DAY));
            out.push(' ');
            push_clock(&mut out, micros.rem_euclid(MICROS_PER_DAY));
            if zoned {
                out.push_str("+00");
            }
            if bc {
                out.push_str(" BC");
            }
            out
        }
    })
}

/// An `interval` in the `postgres` IntervalStyle (PostgreSQL's `EncodeInterval`): the year,
/// month and day parts that are not zero, then the time when it is not zero or nothing else
/// was written; after a negative part, a positive one gets a `+`.
fn interval(micros: i64, days: i32, months: i32) -> String {
    let mut out = String::new();
    let mut negative_before = false;
    for (count, unit) in [
        (i64::from(months / 12), "year"),
        (i64::from(months % 12), "mon"),
        (i64::from(days), "day"),
    ] {
        if count == 0 {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        let sign = if negative_before && count > 0 {
            "+"
        } else {
            ""
        };
        let plural = if count == 1 { "" } else { "s" };
        let _ = write!(out, "{sign}{count} {unit}{plural}");
        negative_before = count < 0;
    }
    if out.is_empty() || micros != 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        if micros < 0 {
            out.push('-');
        } else if negative_before {
            out.push('+');
        }
        push_clock(
            &mut out,
            micros.unsigned_abs().try_into().unwrap_or(i64::MAX),
        );
    }
    out
}

/// `inet`/`cidr`: family (2: IPv4, 3: IPv6), prefix bits, is-cidr, address length, address.
fn inet(bytes: &[u8], cidr: bool) -> Option<String> {
    let [family, bits, _, len, address @ ..] = bytes else {
        return None;
    };
    let (text, full) = match (family, usize::from(*len), address.len()) {
        (2, 4, 4) => (
            Ipv4Addr::from(<[u8; 4]>::try_from(address).ok()?).to_string(),
            32,
        ),
        (3, 16, 16) => (
            Ipv6Addr::from(<[u8; 16]>::try_from(address).ok()?).to_string(),
            128,
        ),
        _ => return None,
    };
    Some(if cidr || *bits != full {
        format!("{text}/{bits}")
    } else {
        text
    })
}

fn mac(bytes: &[u8]) -> String {
    let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    parts.join(":")
}

/// `bit`/`varbit`: the length in bits, then the bits, most significant first.
fn bits(bytes: &[u8]) -> Option<String> {
    let len = usize::try_from(be_i32(bytes)?).ok()?;
    let data = bytes.get(4..)?;
    if data.len() * 8 < len {
        return None;
    }
    Some(
        (0..len)
            .map(|i| {
                if data[i / 8] & (0x80 >> (i % 8)) != 0 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporal_values_print_as_postgres_prints_them() {
        assert_eq!(date(0).unwrap(), "2000-01-01");
        assert_eq!(date(-730_120).unwrap(), "0001-12-31 BC");
        assert_eq!(date(i32::MAX).unwrap(), "infinity");
        let ts = 1_000_000 * 3_600 + 500_000;
        assert_eq!(timestamp(ts, false).unwrap(), "2000-01-01 01:00:00.5");
        assert_eq!(
            timestamp(-1, true).unwrap(),
            "1999-12-31 23:59:59.999999+00"
        );
        assert_eq!(time_of_day(86_400 * MICROS_PER_SECOND), "24:00:00");
        let mut tz = time_of_day(0);
        push_offset(&mut tz, -(5 * 3600 + 30 * 60));
        assert_eq!(tz, "00:00:00-05:30");
        assert_eq!(interval(0, 0, 0), "00:00:00");
        assert_eq!(
            interval(4 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000, 3, 14),
            "1 year 2 mons 3 days 04:05:06.5"
        );
        assert_eq!(interval(7_200_000_000, -1, 0), "-1 days +02:00:00");
        assert_eq!(interval(-1_000_000, 0, 0), "-00:00:01");
        assert_eq!(interval(0, 1, -1), "-1 mons +1 day");
    }

    #[test]
    fn arrays_of_them_print_as_postgres_prints_them() {
        use keyshard_types::Dim;
        use keyshard_types::pg_array::write_binary;
        let dates = Array {
            element: DATE,
            dims: vec![Dim { len: 3, lower: 0 }],
            elements: vec![Value::Int(0), Value::Null, Value::Int(-1)],
        };
        let bytes = write_binary(&dates, DATE, |v| {
            Ok::<_, keyshard_types::pg_array::ArrayBinaryError>(match v {
                Value::Int(days) => Some((*days as i32).to_be_bytes().to_vec()),
                _ => None,
            })
        })
        .unwrap();
        assert_eq!(
            binary_to_text(1182, &bytes).unwrap(),
            "[0:2]={2000-01-01,NULL,1999-12-31}"
        );
        // Elements that need quotes get them: a timestamp holds a space.
        let stamps = Array::new(TIMESTAMP, vec![Value::Int(0)]);
        let bytes = write_binary(&stamps, TIMESTAMP, |_| {
            Ok::<_, keyshard_types::pg_array::ArrayBinaryError>(Some(0i64.to_be_bytes().to_vec()))
        })
        .unwrap();
        assert_eq!(
            binary_to_text(1115, &bytes).unwrap(),
            "{\"2000-01-01 00:00:00\"}"
        );
        // The element type the bytes name must be the array's.
        assert_eq!(binary_to_text(1182, &bytes), None);
    }

    #[test]
    fn ranges_print_as_postgres_prints_them() {
        let bound = |bytes: &[u8]| {
            let mut out = (bytes.len() as i32).to_be_bytes().to_vec();
            out.extend_from_slice(bytes);
            out
        };
        // int4range(1, 5): [ inclusive, ) exclusive.
        let mut bytes = vec![0x02];
        bytes.extend(bound(&1i32.to_be_bytes()));
        bytes.extend(bound(&5i32.to_be_bytes()));
        assert_eq!(binary_to_text(3904, &bytes).unwrap(), "[1,5)");
        // '[1,)': an infinite upper bound has no bytes.
        let mut bytes = vec![0x02 | 0x10];
        bytes.extend(bound(&1i64.to_be_bytes()));
        assert_eq!(binary_to_text(3926, &bytes).unwrap(), "[1,)");
        assert_eq!(binary_to_text(3904, &[0x01]).unwrap(), "empty");
        // A timestamp bound holds a space: quoted.
        let mut bytes = vec![0x02];
        bytes.extend(bound(&0i64.to_be_bytes()));
        bytes.extend(bound(&86_400_000_000i64.to_be_bytes()));
        assert_eq!(
            binary_to_text(3908, &bytes).unwrap(),
            "[\"2000-01-01 00:00:00\",\"2000-01-02 00:00:00\")"
        );
        // Cut short: no text.
        assert_eq!(binary_to_text(3904, &[0x02, 0, 0, 0, 4, 0]), None);
    }

    #[test]
    fn other_types_print_as_postgres_prints_them() {
        let id = [
            0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38,
            0x0a, 0x11,
        ];
        assert_eq!(
            binary_to_text(UUID, &id).unwrap(),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(
            binary_to_text(JSONB, b"\x01{\"a\": 1}").unwrap(),
            "{\"a\": 1}"
        );
        assert_eq!(
            binary_to_text(INET, &[2, 32, 0, 4, 10, 0, 0, 1]).unwrap(),
            "10.0.0.1"
        );
        assert_eq!(
            binary_to_text(CIDR, &[2, 8, 1, 4, 10, 0, 0, 0]).unwrap(),
            "10.0.0.0/8"
        );
        assert_eq!(
            binary_to_text(BIT, &[0, 0, 0, 10, 0xa5, 0x80]).unwrap(),
            "1010010110"
        );
        // As PostgreSQL 15 printed them with lc_monetary C.UTF-8.
        for (cents, text) in [
            (1250i64, "$12.50"),
            (-123_456, "-$1,234.56"),
            (0, "$0.00"),
            (-1, "-$0.01"),
            (100_000, "$1,000.00"),
            (i64::MAX, "$92,233,720,368,547,758.07"),
            (i64::MIN, "-$92,233,720,368,547,758.08"),
        ] {
            assert_eq!(binary_to_text(MONEY, &cents.to_be_bytes()).unwrap(), text);
        }
        assert_eq!(binary_to_text(MONEY, &[0; 7]), None);
        assert_eq!(binary_to_text(CHAR, &[0xc3]).unwrap(), "\\303");
        assert_eq!(binary_to_text(CHAR, &[0]).unwrap(), "");
    }
}
