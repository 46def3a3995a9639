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
