//! PostgreSQL's side of execution: parameters bound with the types the shard must read them
//! as, statement caches kept fit for them, and result values read (arrays, NUMERIC, enums,
//! the types passed on in wire form, text-format integers and strings).

use std::borrow::Cow;

use keyshard_config::DatabaseKind;
use keyshard_types::ascii_i64;
use keyshard_types::pg_array::element_oid_of;
use keyshard_types::wire::{pg_cast_name, pg_wire_kind};
use keyshard_types::{SqlType, Value, Wire, WireKind};
use sqlx::Either;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgConnection, PgQueryResult, PgRow, PgTypeInfo, PgValueFormat, Postgres};
use sqlx::{Arguments, Connection, Executor, Row, Statement, TypeInfo, ValueRef};

use super::{Args, Bound, Decoded, Driver, bind_wire};
use crate::outcome::UnitResult;
use crate::pg_array::{ArrayParam, decode_array};
use crate::{Column, PgEnumColumn};

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

/// A binary value of a known type (a client's binary parameter, a shard's binary result),
/// sent as that type's bytes unchanged.
struct TypedBinary<'a>(&'a Wire);

impl sqlx::Type<Postgres> for TypedBinary<'_> {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(Oid(0))
    }
}

impl sqlx::Encode<'_, Postgres> for TypedBinary<'_> {
    fn produces(&self) -> Option<PgTypeInfo> {
        Some(PgTypeInfo::with_oid(Oid(self.0.oid)))
    }

    fn encode_by_ref(
        &self,
        buf: &mut sqlx::postgres::PgArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        buf.extend_from_slice(&self.0.bytes);
        Ok(sqlx::encode::IsNull::No)
    }
}

/// `text` as a PostgreSQL string literal that reads the same whatever the session's
/// `standard_conforming_strings`.
fn escaped_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str("E'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The type of a result column of a common built-in type, from its OID: what
/// `SqlType::of` reads from the name sqlx gives that type, without comparing the name with
/// every type name it knows (every column of every result asks). `None`: ask the name.
fn builtin_type(oid: u32) -> Option<SqlType> {
    let int = |bytes| SqlType::Int {
        bytes,
        unsigned: false,
    };
    Some(match oid {
        16 => SqlType::Bool,
        17 => SqlType::Blob,
        19 => SqlType::Name,
        20 => int(8),
        21 => int(2),
        23 => int(4),
        25 => SqlType::Text,
        26 => SqlType::Oid,
        114 | 3802 => SqlType::Json,
        700 => SqlType::Float,
        701 => SqlType::Double,
        1042 => SqlType::Char,
        1043 => SqlType::VarChar,
        1082 => SqlType::Date,
        1083 => SqlType::Time,
        1114 => SqlType::Timestamp,
        1184 | 1186 | 1266 => SqlType::Zoned,
        1700 => SqlType::Decimal { unsigned: false },
        2950 => SqlType::Uuid,
        _ => return None,
    })
}

/// The type `Postgres::bind` sends `value` as; `None` for NULL, which the server types.
fn pg_param_oid(value: &Value) -> Option<u32> {
    const BOOL: u32 = 16;
    const BYTEA: u32 = 17;
    const INT8: u32 = 20;
    const TEXT: u32 = 25;
    const FLOAT8: u32 = 701;
    match value {
        Value::Null => None,
        Value::Int(_) => Some(INT8),
        Value::UInt(v) => Some(if i64::try_from(*v).is_ok() {
            INT8
        } else {
            TEXT
        }),
        Value::Double(_) => Some(FLOAT8),
        Value::Bool(_) => Some(BOOL),
        Value::Text(_) => Some(TEXT),
        Value::Bytes(_) => Some(BYTEA),
        Value::Wire(w) if w.binary && w.oid != 0 => Some(w.oid),
        Value::Wire(w) => Some(if w.text().is_some() { TEXT } else { BYTEA }),
        Value::Array(a) => ArrayParam(a).oid().or(Some(1009)),
    }
}

// How `Driver::decode` reads a column's values: arrays, NUMERIC, the types passed on in wire
// form and the commonest columns are told from the column's type once per result, as the
// types of `first_decodable!` are.
const ARRAY: u8 = u8::MAX;
const NUMERIC: u8 = u8::MAX - 1;
const TEXT_INTEGER: u8 = u8::MAX - 2;
const TEXT_STRING: u8 = u8::MAX - 3;
const WIRE: u8 = u8::MAX - 4;
const BINARY_STRING: u8 = u8::MAX - 5;
const BINARY_INT8: u8 = u8::MAX - 6;
const BINARY_INT4: u8 = u8::MAX - 7;
const BINARY_INT2: u8 = u8::MAX - 8;

/// How `Driver::decode` reads a column of `type_info` sent in `format`; `None` leaves it to
/// `first_decodable!`. int8, int4, int2; text, varchar, bpchar, name are what
/// `first_decodable!` reads as i64, i32, i16 and String, read here as they are, without asking
/// each type of its list in turn whether it takes the column's.
fn kind_of(type_info: &PgTypeInfo, format: PgValueFormat) -> Option<u8> {
    let oid = type_info.oid().map(|oid| oid.0);
    if pg_wire_kind(oid.unwrap_or(0)).is_some() {
        return Some(WIRE);
    }
    if oid.is_some_and(|oid| element_oid_of(oid).is_some()) {
        return Some(ARRAY);
    }
    if type_info.name() == "NUMERIC" {
        return Some(NUMERIC);
    }
    let binary = format == PgValueFormat::Binary;
    match oid? {
        20 if binary => Some(BINARY_INT8),
        23 if binary => Some(BINARY_INT4),
        21 if binary => Some(BINARY_INT2),
        25 | 1043 | 1042 | 19 if binary => Some(BINARY_STRING),
        20 | 23 | 21 => Some(TEXT_INTEGER),
        25 | 1043 | 1042 | 19 => Some(TEXT_STRING),
        _ => None,
    }
}

/// A value of the commonest kinds read from its bytes: integers (big-endian in binary, their
/// digits in text; checking digits as UTF-8 first cost as much as the parse) and strings (their
/// UTF-8). `None` for another kind, or bytes that are not one (the general path reports them).
fn plain_value(kind: u8, bytes: &[u8]) -> Option<Value> {
    match (kind, bytes) {
        (BINARY_STRING | TEXT_STRING, _) => std::str::from_utf8(bytes)
            .ok()
            .map(|text| Value::Text(text.to_owned())),
        (TEXT_INTEGER, _) => ascii_i64(bytes).map(Value::Int),
        (BINARY_INT8, &[a, b, c, d, e, f, g, h]) => {
            Some(Value::Int(i64::from_be_bytes([a, b, c, d, e, f, g, h])))
        }
        (BINARY_INT4, &[a, b, c, d]) => Some(Value::Int(i32::from_be_bytes([a, b, c, d]).into())),
        (BINARY_INT2, &[a, b]) => Some(Value::Int(i16::from_be_bytes([a, b]).into())),
        _ => None,
    }
}

/// The first OID PostgreSQL gives a type the application creates: only such a type is an enum.
const FIRST_NORMAL_OID: u32 = 16_384;

/// The kind of a result column whose type is a user-defined enum or an array of one.
fn enum_kind(type_info: &PgTypeInfo) -> Option<WireKind> {
    if is_enum(type_info) {
        Some(WireKind::PgEnum)
    } else {
        enum_array_element(type_info).map(|_| WireKind::PgEnumArray)
    }
}

/// The element type's OID of an array of a user-defined enum.
fn enum_array_element(type_info: &PgTypeInfo) -> Option<u32> {
    match resolved_kind(type_info)? {
        sqlx::postgres::PgTypeKind::Array(element) if is_enum(element) => {
            element.oid().map(|oid| oid.0)
        }
        _ => None,
    }
}

fn is_enum(type_info: &PgTypeInfo) -> bool {
    matches!(
        resolved_kind(type_info),
        Some(sqlx::postgres::PgTypeKind::Enum(_))
    )
}

/// A type's kind, where sqlx has resolved it: it resolves a type it does not know when it
/// prepares a statement; one met in a simple query's results stays unresolved (named "?"),
/// and asking its kind then panics.
fn resolved_kind(type_info: &PgTypeInfo) -> Option<&sqlx::postgres::PgTypeKind> {
    use sqlx::TypeInfo as _;
    (type_info.name() != "?").then(|| type_info.kind())
}

impl Driver for Postgres {
    fn completes(columns: &[Column]) -> bool {
        crate::catalog_refs::any(columns)
    }

    fn complete<'a>(
        conn: &'a mut PgConnection,
        result: &'a mut UnitResult,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send + 'a {
        crate::catalog_refs::name(conn, result)
    }

    /// A parameter the client sent as text with a type declared (or inferred from its column)
    /// that Keyshard does not read — `timestamptz`, `jsonb`, `uuid`, an enum …, as
    /// node-postgres sends every value and psycopg a `Jsonb` or `%t` — is bound as text, since
    /// sqlx binds in the binary format only. The statement makes the shard read it as the
    /// client meant: a cast to its type, or, for a type without a name known here (one the
    /// application created), the text as a literal, which the shard types from its context
    /// exactly as it would the client's untyped parameter.
    fn shard_sql<'a>(sql: &'a str, params: &[Value]) -> Cow<'a, str> {
        fn typed_text(value: &Value) -> Option<&Wire> {
            match value {
                Value::Wire(wire) if !wire.binary && wire.oid != 0 => Some(wire),
                _ => None,
            }
        }
        if !params.iter().any(|p| typed_text(p).is_some()) {
            return Cow::Borrowed(sql);
        }
        let with: Vec<Option<String>> = params
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let wire = typed_text(value)?;
                Some(match pg_cast_name(wire.oid) {
                    Some(name) => format!("${}::{name}", i + 1),
                    None => escaped_literal(&String::from_utf8_lossy(&wire.bytes)),
                })
            })
            .collect();
        keyshard_router::replace_placeholders(sql, &with).map_or(Cow::Borrowed(sql), Cow::Owned)
    }

    fn parameter_oids(statement: &sqlx::postgres::PgStatement<'_>) -> Vec<u32> {
        use sqlx::Statement as _;
        match statement.parameters() {
            Some(sqlx::Either::Left(types)) => types
                .iter()
                .map(|t| t.oid().map_or(0, |oid| oid.0))
                .collect(),
            _ => Vec::new(),
        }
    }

    const KIND: DatabaseKind = DatabaseKind::Postgres;

    fn column(described: &sqlx::postgres::PgColumn) -> Column {
        use sqlx::Column as _;
        let type_info = described.type_info();
        let oid = type_info.oid().map(|oid| oid.0);
        let ty = oid
            .and_then(builtin_type)
            .unwrap_or_else(|| SqlType::of(type_info.name(), Self::KIND));
        let mut column = Column::new(described.name(), ty);
        column.oid = oid;
        // As the shard's RowDescription gave them (the patched sqlx-postgres keeps them).
        column.typmod = described.type_modifier();
        column.pg_size = Some(described.type_size());
        column.pg_origin = described
            .relation_id()
            .zip(described.relation_attribute_no())
            .map(|(table, number)| (table.0, number));
        column.pg_enum = match column.oid {
            Some(oid) if oid >= FIRST_NORMAL_OID && is_enum(type_info) => Some(PgEnumColumn::Enum),
            Some(oid) if oid >= FIRST_NORMAL_OID => {
                enum_array_element(type_info).map(|element| PgEnumColumn::Array { element })
            }
            _ => None,
        };
        column
    }

    // PostgreSQL types a statement's parameters when it is prepared: from the values of its
    // first execution, or by inference (a describe, a NULL). sqlx reuses a cached statement by
    // its text alone, so a later value of another type would be sent in a binary format the
    // server reads as the first type: an error at best (`$1::integer` described, then bound
    // as BIGINT), another value at worst. sqlx cannot drop one statement from its cache, so a
    // misfit clears the connection's: rare, since a statement's values keep their types and a
    // NULL fits any.
    async fn fit_cache(
        conn: &mut PgConnection,
        sql: &str,
        params: &[Value],
    ) -> Result<(), sqlx::Error> {
        let oids: Vec<Option<u32>> = params.iter().map(pg_param_oid).collect();
        let types: Vec<PgTypeInfo> = oids
            .iter()
            .map(|oid| PgTypeInfo::with_oid(Oid(oid.unwrap_or(0))))
            .collect();
        let statement = conn.prepare_with(sql, &types).await?;
        let fits = match statement.parameters() {
            Some(Either::Left(cached)) => {
                cached.len() == oids.len()
                    && cached
                        .iter()
                        .zip(&oids)
                        .all(|(cached, oid)| oid.is_none_or(|oid| cached.oid() == Some(Oid(oid))))
            }
            _ => true,
        };
        if !fits {
            conn.clear_cached_statements().await?;
        }
        Ok(())
    }

    fn bind<'q>(args: &mut Args<'q, Self>, value: &'q Value) -> Bound {
        match value {
            Value::Null => Arguments::add(args, UntypedNull),
            Value::Int(v) => Arguments::add(args, *v),
            // PostgreSQL has no unsigned integers: a value beyond BIGINT goes as text, which the
            // server accepts for NUMERIC columns and refuses, clearly, for integer ones.
            Value::UInt(v) => match i64::try_from(*v) {
                Ok(v) => Arguments::add(args, v),
                Err(_) => Arguments::add(args, v.to_string()),
            },
            Value::Double(v) => Arguments::add(args, *v),
            Value::Bool(b) => Arguments::add(args, *b),
            Value::Text(s) => Arguments::add(args, s.as_str()),
            Value::Bytes(b) => Arguments::add(args, b.as_slice()),
            Value::Array(a) => Arguments::add(args, ArrayParam(a)),
            Value::Wire(w) if w.binary && w.oid != 0 => Arguments::add(args, TypedBinary(w)),
            Value::Wire(w) => bind_wire::<Self>(args, w),
        }
    }

    // Inlined into the row's loop: a call to the whole reader set up a frame for its every
    // path for each value.
    #[inline]
    fn decode(row: &PgRow, index: usize, first: &mut Option<u8>, _binary: bool) -> Decoded {
        // The column's kind, from its description, with its first value: a point read's every
        // value is its column's first, and must take the quick path too.
        if first.is_none()
            && let Some(column) = row.columns().get(index)
        {
            *first = kind_of(sqlx::Column::type_info(column), row.format_of_values());
        }
        // A value of the commonest kinds is read from the row's bytes: `try_get_raw` would copy
        // the column's type into a value reference for it.
        if let Some(kind) = *first
            && let Some(bytes) = row.value_bytes(index)
        {
            match bytes {
                None => return Ok(Value::Null),
                Some(bytes) => {
                    if let Some(value) = plain_value(kind, bytes) {
                        return Ok(value);
                    }
                }
            }
        }
        Self::decode_value(row, index, first)
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}

/// [`Driver::decode`] for PostgreSQL past its quick path: the kinds `plain_value` does not
/// read, and the values it refused (reported here). A trait of its own because
/// `first_decodable!` names the database as `Self`.
trait DecodeValue {
    fn decode_value(row: &PgRow, index: usize, first: &mut Option<u8>) -> Decoded;
}

impl DecodeValue for Postgres {
    #[inline(never)]
    fn decode_value(row: &PgRow, index: usize, first: &mut Option<u8>) -> Decoded {
        let raw = row.try_get_raw(index)?;
        if raw.is_null() {
            return Ok(Value::Null);
        }
        if let Some(BINARY_STRING | BINARY_INT8 | BINARY_INT4 | BINARY_INT2) = *first {
            return Err(sqlx::Error::ColumnDecode {
                index: index.to_string(),
                source: format!("a malformed value of type {}", raw.type_info().name()).into(),
            });
        }
        if *first == Some(WIRE) {
            let type_info = raw.type_info();
            let oid = type_info.oid().map_or(0, |oid| oid.0);
            let kind = match pg_wire_kind(oid) {
                Some(WireKind::Opaque) if oid >= FIRST_NORMAL_OID => {
                    enum_kind(&type_info).unwrap_or(WireKind::Opaque)
                }
                kind => kind.unwrap_or(WireKind::Opaque),
            };
            let binary = raw.format() == PgValueFormat::Binary;
            let bytes = raw.as_bytes().map_err(|source| sqlx::Error::ColumnDecode {
                index: index.to_string(),
                source,
            })?;
            return Ok(Value::Wire(Wire::new(kind, binary, bytes).with_oid(oid)));
        }
        // What `plain_value` did not read: reported, or an integer's text it does not expect.
        if let Some(kind @ (TEXT_INTEGER | TEXT_STRING)) = *first {
            let decoded = raw.as_str().and_then(|text| {
                Ok(match kind {
                    TEXT_INTEGER => Value::Int(text.parse()?),
                    _ => Value::Text(text.to_owned()),
                })
            });
            return decoded.map_err(|source| sqlx::Error::ColumnDecode {
                index: index.to_string(),
                source,
            });
        }
        if *first == Some(ARRAY)
            && let Some(array) = decode_array(raw.clone(), index)
        {
            return array;
        }
        if *first == Some(NUMERIC) {
            // NUMERIC (SUM and AVG of integers) as its exact decimal text.
            let text = match raw.format() {
                PgValueFormat::Text => raw.as_str().ok().map(str::to_owned),
                PgValueFormat::Binary => raw
                    .as_bytes()
                    .ok()
                    .and_then(keyshard_types::numeric::binary_to_text),
            };
            return text
                .map(Value::Text)
                .ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: index.to_string(),
                    source: "a malformed NUMERIC value".into(),
                });
        }
        first_decodable!(raw.clone(), index, first,
            i64 => Value::Int,
            i32 => |v: i32| Value::Int(v.into()),
            // Catalog types (asyncpg reads them to learn array types): `oid` a number,
            // `"char"` the one character it holds (none for the zero byte, as PostgreSQL prints
            // an unset `attgenerated`).
            sqlx::postgres::types::Oid => |v: sqlx::postgres::types::Oid| Value::Int(v.0.into()),
            i8 => |v: i8| Value::Text(match v {
                0 => String::new(),
                v => char::from(v as u8).to_string(),
            }),
            i16 => |v: i16| Value::Int(v.into()),
            f64 => Value::Double,
            f32 => |v: f32| Value::Double(v.into()),
            bool => |v: bool| Value::Int(v.into()),
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds read from bare bytes read them as PostgreSQL writes them, and leave to the
    /// general path (which reports them) bytes of another length or outside their kind.
    #[test]
    fn plain_values_are_read_from_their_bytes() {
        let int = |v: i64| Some(Value::Int(v));
        assert_eq!(
            plain_value(BINARY_INT8, &i64::MIN.to_be_bytes()),
            int(i64::MIN)
        );
        assert_eq!(plain_value(BINARY_INT4, &(-7i32).to_be_bytes()), int(-7));
        assert_eq!(plain_value(BINARY_INT2, &300i16.to_be_bytes()), int(300));
        assert_eq!(plain_value(BINARY_INT4, &[0, 0, 1]), None);
        assert_eq!(plain_value(BINARY_INT8, &[0; 4]), None);
        assert_eq!(
            plain_value(TEXT_INTEGER, b"-9223372036854775808"),
            int(i64::MIN)
        );
        assert_eq!(
            plain_value(TEXT_INTEGER, b"1000000000000000017"),
            int(1_000_000_000_000_000_017)
        );
        assert_eq!(plain_value(TEXT_INTEGER, b"9223372036854775808"), None);
        assert_eq!(plain_value(TEXT_INTEGER, b"1.5"), None);
        for kind in [TEXT_STRING, BINARY_STRING] {
            assert_eq!(
                plain_value(kind, "né".as_bytes()),
                Some(Value::Text("né".into()))
            );
            assert_eq!(plain_value(kind, b""), Some(Value::Text(String::new())));
            assert_eq!(plain_value(kind, &[0xff, 0xfe]), None);
        }
        for kind in [ARRAY, NUMERIC, WIRE, 0, 1] {
            assert_eq!(plain_value(kind, b"12"), None);
        }
    }

    /// Each OID read without its name is read as its name reads: the names as sqlx gives
    /// them (`PgType::display_name`).
    #[test]
    fn builtin_types_by_oid_are_those_their_names_say() {
        let names = [
            (16, "BOOL"),
            (17, "BYTEA"),
            (19, "NAME"),
            (20, "INT8"),
            (21, "INT2"),
            (23, "INT4"),
            (25, "TEXT"),
            (26, "OID"),
            (114, "JSON"),
            (3802, "JSONB"),
            (700, "FLOAT4"),
            (701, "FLOAT8"),
            (1042, "CHAR"),
            (1043, "VARCHAR"),
            (1082, "DATE"),
            (1083, "TIME"),
            (1114, "TIMESTAMP"),
            (1184, "TIMESTAMPTZ"),
            (1186, "INTERVAL"),
            (1266, "TIMETZ"),
            (1700, "NUMERIC"),
            (2950, "UUID"),
        ];
        for (oid, name) in names {
            assert_eq!(
                builtin_type(oid),
                Some(SqlType::of(name, DatabaseKind::Postgres)),
                "{name}"
            );
        }
        let listed = |oid| names.iter().any(|&(o, _)| o == oid);
        assert!((0..20_000).all(|oid| listed(oid) || builtin_type(oid).is_none()));
    }
}
