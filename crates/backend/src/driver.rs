//! What differs between the three databases: binding our values and reading result values.

use keyshard_router::Value;
use sqlx::mysql::{MySql, MySqlQueryResult, MySqlRow};
use sqlx::postgres::{PgQueryResult, PgRow, PgTypeInfo, PgValueFormat, Postgres};
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteQueryResult, SqliteRow};
use sqlx::{Database, Row, TypeInfo, ValueRef};

/// A value read from a result row, or why it could not be.
pub(crate) type Decoded = Result<Value, sqlx::Error>;

pub(crate) type BoundQuery<'q, DB> = Query<'q, DB, <DB as Database>::Arguments<'q>>;

/// The per-database half of execution.
pub(crate) trait Driver: Database {
    /// Binds one parameter.
    fn bind<'q>(query: BoundQuery<'q, Self>, value: &'q Value) -> BoundQuery<'q, Self>;

    /// Reads column `index` of `row`.
    fn decode(row: &Self::Row, index: usize) -> Decoded;

    /// The affected-row count of a statement's result.
    fn rows_affected(result: &Self::QueryResult) -> u64;
}

/// Tries each Rust type the database can decode the column as, in order.
macro_rules! first_decodable {
    ($row:expr, $index:expr, $($ty:ty => $wrap:expr),+ $(,)?) => {{
        let raw = $row.try_get_raw($index)?;
        if raw.is_null() {
            return Ok(Value::Null);
        }
        $(
            if let Ok(v) = $row.try_get::<$ty, _>($index) {
                return Ok($wrap(v));
            }
        )+
        let type_name = raw.type_info().to_string();
        Err(sqlx::Error::ColumnDecode {
            index: $index.to_string(),
            source: format!("type {type_name} is not supported in results yet").into(),
        })
    }};
}

impl Driver for MySql {
    fn bind<'q>(query: BoundQuery<'q, Self>, value: &'q Value) -> BoundQuery<'q, Self> {
        match value {
            Value::Null => query.bind(None::<&str>),
            Value::Int(v) => query.bind(*v),
            Value::UInt(v) => query.bind(*v),
            Value::Double(v) => query.bind(*v),
            Value::Text(s) => query.bind(s.as_str()),
            Value::Bytes(b) => query.bind(b.as_slice()),
        }
    }

    fn decode(row: &MySqlRow, index: usize) -> Decoded {
        let raw = row.try_get_raw(index)?;
        if !raw.is_null() && raw.type_info().name() == "DECIMAL" {
            // DECIMAL (SUM, AVG) arrives as its digits in both protocols; sqlx decodes it only
            // with a decimal crate, and the proxy passes it on as the text it is.
            return row.try_get_unchecked::<String, _>(index).map(Value::Text);
        }
        first_decodable!(row, index,
            i64 => Value::Int,
            u64 => Value::UInt,
            f64 => Value::Double,
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }

    fn rows_affected(result: &MySqlQueryResult) -> u64 {
        result.rows_affected()
    }
}

/// A NULL whose type PostgreSQL infers from where it is used: binding a typed NULL (say TEXT)
/// to an INTEGER column would be a type error.
struct UntypedNull;

impl sqlx::Type<Postgres> for UntypedNull {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(sqlx::postgres::types::Oid(0))
    }
}

impl sqlx::Encode<'_, Postgres> for UntypedNull {
    fn encode_by_ref(
        &self,
        _buf: &mut sqlx::postgres::PgArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        Ok(sqlx::encode::IsNull::Yes)
    }
}

impl Driver for Postgres {
    fn bind<'q>(query: BoundQuery<'q, Self>, value: &'q Value) -> BoundQuery<'q, Self> {
        match value {
            Value::Null => query.bind(UntypedNull),
            Value::Int(v) => query.bind(*v),
            // PostgreSQL has no unsigned integers: a value beyond BIGINT goes as text, which the
            // server accepts for NUMERIC columns and refuses, clearly, for integer ones.
            Value::UInt(v) => match i64::try_from(*v) {
                Ok(v) => query.bind(v),
                Err(_) => query.bind(v.to_string()),
            },
            Value::Double(v) => query.bind(*v),
            Value::Text(s) => query.bind(s.as_str()),
            Value::Bytes(b) => query.bind(b.as_slice()),
        }
    }

    fn decode(row: &PgRow, index: usize) -> Decoded {
        let raw = row.try_get_raw(index)?;
        if !raw.is_null() && raw.type_info().name() == "NUMERIC" {
            // NUMERIC (SUM and AVG of integers) as its exact decimal text.
            let text = match raw.format() {
                PgValueFormat::Text => raw.as_str().ok().map(str::to_owned),
                PgValueFormat::Binary => raw.as_bytes().ok().and_then(pg_numeric_text),
            };
            return text
                .map(Value::Text)
                .ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: index.to_string(),
                    source: "a malformed NUMERIC value".into(),
                });
        }
        first_decodable!(row, index,
            i64 => Value::Int,
            i32 => |v: i32| Value::Int(v.into()),
            i16 => |v: i16| Value::Int(v.into()),
            f64 => Value::Double,
            f32 => |v: f32| Value::Double(v.into()),
            bool => |v: bool| Value::Int(v.into()),
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}

impl Driver for Sqlite {
    fn bind<'q>(query: BoundQuery<'q, Self>, value: &'q Value) -> BoundQuery<'q, Self> {
        match value {
            Value::Null => query.bind(None::<&str>),
            Value::Int(v) => query.bind(*v),
            // SQLite integers are 64-bit signed; larger values are stored as text.
            Value::UInt(v) => match i64::try_from(*v) {
                Ok(v) => query.bind(v),
                Err(_) => query.bind(v.to_string()),
            },
            Value::Double(v) => query.bind(*v),
            Value::Text(s) => query.bind(s.as_str()),
            Value::Bytes(b) => query.bind(b.as_slice()),
        }
    }

    fn decode(row: &SqliteRow, index: usize) -> Decoded {
        first_decodable!(row, index,
            i64 => Value::Int,
            f64 => Value::Double,
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }

    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }
}

/// PostgreSQL's binary NUMERIC as decimal text: a header of digit count, weight (the power of
/// 10000 of the first digit), sign and display scale, then base-10000 digits.
fn pg_numeric_text(bytes: &[u8]) -> Option<String> {
    let word = |i: usize| -> Option<u16> {
        Some(u16::from_be_bytes([
            *bytes.get(i * 2)?,
            *bytes.get(i * 2 + 1)?,
        ]))
    };
    let count = usize::from(word(0)?);
    let weight = i64::from(word(1)? as i16);
    let sign = word(2)?;
    let scale = usize::from(word(3)?);
    if sign == 0xC000 {
        return Some("NaN".to_owned());
    }
    let digits: Vec<u16> = (0..count).map(|i| word(4 + i)).collect::<Option<_>>()?;
    let digit = |position: i64| -> u16 {
        usize::try_from(position)
            .ok()
            .and_then(|p| digits.get(p).copied())
            .unwrap_or(0)
    };
    let mut out = String::new();
    if sign == 0x4000 {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        out.push_str(&digit(0).to_string());
        for position in 1..=weight {
            out.push_str(&format!("{:04}", digit(position)));
        }
    }
    if scale > 0 {
        let mut fraction = String::new();
        let mut position = weight + 1;
        while fraction.len() < scale {
            fraction.push_str(&format!("{:04}", digit(position)));
            position += 1;
        }
        fraction.truncate(scale);
        out.push('.');
        out.push_str(&fraction);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::pg_numeric_text;

    fn numeric(weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        for word in [digits.len() as u16, weight as u16, sign, scale]
            .into_iter()
            .chain(digits.iter().copied())
        {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out
    }

    #[test]
    fn binary_numerics_read_as_text() {
        assert_eq!(pg_numeric_text(&numeric(0, 0, 0, &[])).unwrap(), "0");
        assert_eq!(
            pg_numeric_text(&numeric(1, 0, 0, &[1, 2345])).unwrap(),
            "12345"
        );
        assert_eq!(
            pg_numeric_text(&numeric(0, 0x4000, 4, &[15, 5000])).unwrap(),
            "-15.5000"
        );
        assert_eq!(
            pg_numeric_text(&numeric(-1, 0, 5, &[12])).unwrap(),
            "0.00120"
        );
        assert_eq!(
            pg_numeric_text(&numeric(-2, 0, 8, &[7])).unwrap(),
            "0.00000007"
        );
        assert_eq!(pg_numeric_text(&numeric(1, 0, 0, &[2])).unwrap(), "20000");
        assert!(pg_numeric_text(&[0, 1]).is_none());
    }
}
