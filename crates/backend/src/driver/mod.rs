//! What differs between the three databases: binding our values and reading result values.

use std::borrow::Cow;

use keyshard_config::DatabaseKind;
use keyshard_types::{SqlType, Value, Wire};
use sqlx::{Arguments, Database, TypeInfo};

use crate::Column;
use crate::outcome::UnitResult;

/// An array for a database without arrays: PostgreSQL's text form, the string a client would
/// see for it.
fn array_text(array: &keyshard_types::Array) -> String {
    keyshard_types::array::write_text(array, keyshard_types::array::plain_element_text)
}

/// A result value bound back as a parameter (only values that came as text do: a user
/// variable set from a query): its text, or its bytes.
fn bind_wire<'q, DB: Database>(args: &mut Args<'q, DB>, wire: &'q Wire) -> Bound
where
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q [u8]: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    match wire.text() {
        Some(text) => Arguments::add(args, text),
        None => Arguments::add(args, &wire.bytes[..]),
    }
}

/// A value read from a result row, or why it could not be.
pub(crate) type Decoded = Result<Value, sqlx::Error>;

/// A statement's parameters, as the database's driver encodes them.
pub(crate) type Args<'q, DB> = <DB as Database>::Arguments<'q>;

/// Whether a parameter could be encoded.
pub(crate) type Bound = Result<(), sqlx::error::BoxDynError>;

/// `params` encoded for `D`'s database, room for them made once (a value's [`Value::size`]
/// covers its encoding) instead of growing as each is added.
pub(crate) fn arguments<'q, D: Driver>(params: &'q [Value]) -> Result<Args<'q, D>, sqlx::Error> {
    let mut args = Args::<D>::default();
    args.reserve(params.len(), params.iter().map(Value::size).sum());
    for (i, param) in params.iter().enumerate() {
        D::bind(&mut args, param).map_err(|e| {
            sqlx::Error::Encode(format!("Encoding argument ${} failed: {e}", i + 1).into())
        })?;
    }
    Ok(args)
}

/// The per-database half of execution.
pub(crate) trait Driver: Database + sqlx::database::HasStatementCache {
    /// Adds one parameter.
    fn bind<'q>(args: &mut Args<'q, Self>, value: &'q Value) -> Bound;

    /// Reads column `index` of `row`; `first` is kept for the column over a result's rows,
    /// for the driver to note how it reads the column (see `first_decodable!`). `binary`:
    /// the row came in the database's binary format (a prepared statement's).
    fn decode(row: &Self::Row, index: usize, first: &mut Option<u8>, binary: bool) -> Decoded;

    /// The affected-row count of a statement's result.
    fn rows_affected(result: &Self::QueryResult) -> u64;

    /// The database whose type names this driver reports.
    const KIND: DatabaseKind;

    /// Makes sure the connection's cached statement for `sql`, if any, takes `params` as they
    /// are bound.
    fn fit_cache<'a>(
        _conn: &'a mut Self::Connection,
        _sql: &'a str,
        _params: &'a [Value],
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send + 'a {
        std::future::ready(Ok(()))
    }

    /// Whether a result of `columns` read in binary needs [`Driver::complete`].
    fn completes(_columns: &[Column]) -> bool {
        false
    }

    /// Completes what a result read in binary does not carry (PostgreSQL: the text of
    /// catalog references, see `catalog_refs`), on the connection that read it.
    fn complete<'a>(
        _conn: &'a mut Self::Connection,
        _result: &'a mut UnitResult,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send + 'a {
        std::future::ready(Ok(()))
    }

    /// The statement as the shard gets it with `params` bound.
    fn shard_sql<'a>(sql: &'a str, _params: &[Value]) -> Cow<'a, str> {
        Cow::Borrowed(sql)
    }

    /// The type OIDs a prepared statement's parameters were given (PostgreSQL only).
    fn parameter_oids(_statement: &Self::Statement<'_>) -> Vec<u32> {
        Vec::new()
    }

    /// A result column as the database described it.
    fn column(column: &Self::Column) -> Column {
        use sqlx::Column as _;
        Column::new(
            column.name(),
            SqlType::of(column.type_info().name(), Self::KIND),
        )
    }
}

/// A decimal integer's ASCII digits, with an optional `-`, as `i64`; `None` for anything else
/// or a value out of range.
pub(super) fn ascii_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() {
        return None;
    }
    // Eighteen digits cannot overflow, so only a nineteenth (snowflake keys have nineteen) is
    // added with checks: a checked step per digit cost as much again as the whole parse. Eight
    // digits at a time cost about what two do one by one.
    let (head, last) = digits.split_at(digits.len().min(18));
    let mut eights = head.chunks_exact(8);
    let mut value: u64 = 0;
    for eight in &mut eights {
        value = value * 100_000_000 + eight_digits(eight)?;
    }
    for &b in eights.remainder() {
        value = value * 10 + digit(b)?;
    }
    for &b in last {
        value = value.checked_mul(10)?.checked_add(digit(b)?)?;
    }
    if negative {
        0i64.checked_sub_unsigned(value)
    } else {
        i64::try_from(value).ok()
    }
}

fn digit(b: u8) -> Option<u64> {
    let digit = b.wrapping_sub(b'0');
    (digit <= 9).then_some(u64::from(digit))
}

/// Eight ASCII digits (the first the most significant) as their value, in a few steps over one
/// word: each step joins neighbouring groups, digits into pairs, pairs into fours, fours into
/// the eight. `None` when a byte is not a digit.
fn eight_digits(eight: &[u8]) -> Option<u64> {
    const NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let word = u64::from_le_bytes(eight.try_into().ok()?);
    // Every byte 0x30..=0x39: its high nibble 3, and still 3 with 6 added.
    if word & NIBBLES != ZEROS || word.wrapping_add(0x0606_0606_0606_0606) & NIBBLES != ZEROS {
        return None;
    }
    let word = word & 0x0F0F_0F0F_0F0F_0F0F;
    let word = (word * 10 + (word >> 8)) & 0x00FF_00FF_00FF_00FF;
    let word = (word * 100 + (word >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((word * 10_000 + (word >> 32)) & 0xFFFF_FFFF)
}

/// Tries each Rust type the database can decode the column as, in order, from the first one
/// compatible with the column's type. Which that is, `first` keeps across a result's rows: the
/// check (`try_get`'s, asked here first so that a mismatch builds no error) compares type
/// descriptions, for every type before the column's, and MySQL and PostgreSQL type the column,
/// not the value. `$raw`, the value, is evaluated again for each attempt: decoding consumes it.
macro_rules! first_decodable {
    ($raw:expr, $index:expr, $first:expr, $($ty:ty => $wrap:expr),+ $(,)?) => {{
        let raw = $raw;
        if raw.is_null() {
            return Ok(Value::Null);
        }
        let type_info = raw.type_info();
        let first: &mut Option<u8> = $first;
        let mut n = 0u8;
        $(
            let compatible = match *first {
                Some(known) if n <= known => n == known,
                _ => type_info.is_null() || <$ty as sqlx::Type<Self>>::compatible(&type_info),
            };
            if compatible {
                first.get_or_insert(n);
                if let Ok(v) = <$ty as sqlx::Decode<Self>>::decode($raw) {
                    return Ok($wrap(v));
                }
            }
            n += 1;
        )+
        let _ = n;
        let type_name = raw.type_info().to_string();
        Err(sqlx::Error::ColumnDecode {
            index: $index.to_string(),
            source: format!("type {type_name} is not supported in results yet").into(),
        })
    }};
}

// Declared after `first_decodable!`, which they expand: a `macro_rules!` macro is only seen
// by the code that follows it.
mod mysql;
mod postgres;
mod sqlite;

#[cfg(test)]
mod tests {
    use super::ascii_i64;

    #[test]
    fn integer_text_is_read_as_the_standard_parse_reads_it() {
        // Every length up to 21 and every kind of byte at every place, from a fixed seed.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let bytes = b"0123456789-+ .x/:\x00\xff";
        for _ in 0..200_000 {
            let len = (next() % 22) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 10 {
                    0 => bytes[(next() % bytes.len() as u64) as usize],
                    _ => b'0' + (next() % 10) as u8,
                })
                .collect();
            let standard = std::str::from_utf8(&text)
                .ok()
                .filter(|t| !t.starts_with('+'))
                .and_then(|t| t.parse::<i64>().ok());
            assert_eq!(
                ascii_i64(&text),
                standard,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn integer_text_is_read_without_a_utf8_check_and_strictly() {
        for v in [
            0,
            7,
            -7,
            i64::MAX,
            i64::MIN,
            1_234_567_890,
            999_999_999_999_999_999,
            -999_999_999_999_999_999,
            1_000_000_000_000_000_000,
        ] {
            assert_eq!(ascii_i64(v.to_string().as_bytes()), Some(v), "{v}");
        }
        for text in [
            "",
            "-",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "18446744073709551616",
            "-18446744073709551615",
            "00000000000000000001x",
            "x",
        ] {
            assert_eq!(ascii_i64(text.as_bytes()), None, "{text}");
        }
    }
}
