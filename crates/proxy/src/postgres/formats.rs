//! Format codes (text or binary) and the rows written in them.

use bytes::{BufMut, BytesMut};
use keyshard_types::Value;

use keyshard_backend::PgEnumColumn;

use super::describe::Field;
use super::pg_error::PgError;
use super::types;
use crate::dialect::postgres::ProxyText;
use crate::error::Error;

/// Format codes are 0 (text) or 1 (binary); PostgreSQL refuses anything else.
pub(super) fn check_format_codes(formats: &[i16]) -> Result<(), PgError> {
    match formats.iter().find(|f| !matches!(f, 0 | 1)) {
        Some(code) => Err(PgError::new(
            "22023",
            format!("unsupported format code: {code}"),
        )),
        None => Ok(()),
    }
}

/// A format code list applies to its items one by one, or one code to all, or none (text).
pub(super) fn format_of(formats: &[i16], i: usize) -> i16 {
    match formats {
        [] => 0,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(0),
    }
}

/// Refuses text columns whose values came in binary (the shards answer in binary when any
/// column is asked for in it, or the statement has parameters) and would be written in text
/// under settings Keyshard's conversion does not follow (a time zone other than UTC, a
/// DateStyle other than ISO, an IntervalStyle other than postgres, an lc_monetary other than
/// C): a wrong text is worse than the error.
pub(super) fn check_written_as_asked(
    text: &ProxyText,
    fields: &[Field],
    rows: &[Vec<Value>],
    formats: &[i16],
) -> Result<(), PgError> {
    for (i, field) in fields.iter().enumerate() {
        if format_of(formats, i) != 0 || text.writes(field.oid) {
            continue;
        }
        let from_binary = rows
            .iter()
            .any(|row| matches!(row.get(i), Some(Value::Wire(w)) if w.binary));
        if from_binary {
            return Err(PgError::from(Error::unsupported(format!(
                "column \"{}\" in the text format beside binary ones under this session's \
                 TimeZone/DateStyle/IntervalStyle/lc_monetary (ask for every column in one \
                 format)",
                field.name
            ))));
        }
    }
    Ok(())
}

/// Writes the RowDescription of `fields` read in `formats` at the end of `out`, where the
/// wire sends it from (see [`push_data_row`]).
pub(super) fn push_row_description(
    out: &mut BytesMut,
    fields: &[Field],
    formats: &[i16],
) -> Result<(), PgError> {
    push_message(out, b'T', |out| {
        out.put_i16(column_count(fields.len())?);
        for (i, f) in fields.iter().enumerate() {
            out.extend_from_slice(identifier(&f.name).as_bytes());
            out.put_u8(0);
            out.put_u32(f.origin.map_or(0, |(table, _)| table));
            out.put_i16(f.origin.map_or(0, |(_, number)| number));
            out.put_u32(f.oid);
            out.put_i16(f.size());
            out.put_i32(f.typmod);
            out.put_i16(format_of(formats, i));
        }
        Ok(())
    })
}

/// Writes a message of type `tag` whose body `body` writes at the end of `out`, its length
/// filled in after: a message built apart would cost allocations, a copy and a drop. On an
/// error `out` is left as it was.
fn push_message(
    out: &mut BytesMut,
    tag: u8,
    body: impl FnOnce(&mut BytesMut) -> Result<(), PgError>,
) -> Result<(), PgError> {
    let start = out.len();
    out.put_u8(tag);
    // The length, written once the body is.
    out.put_i32(0);
    let written = body(out).and_then(|()| {
        let length = value_length(out.len() - start - 1)?;
        out[start + 1..start + 5].copy_from_slice(&length.to_be_bytes());
        Ok(())
    });
    if written.is_err() {
        out.truncate(start);
    }
    written
}

fn column_count(n: usize) -> Result<i16, PgError> {
    i16::try_from(n).map_err(|_| PgError::new("54011", "too many columns"))
}

/// A column's name as PostgreSQL keeps an identifier: at most 63 bytes (NAMEDATALEN - 1),
/// cut at a character boundary. A shard that is not PostgreSQL (SQLite names a column by its
/// expression) may give a longer one.
fn identifier(name: &str) -> &str {
    const MAX: usize = 63;
    if name.len() <= MAX {
        return name;
    }
    let end = (0..=MAX)
        .rev()
        .find(|&i| name.is_char_boundary(i))
        .unwrap_or(0);
    &name[..end]
}

/// Writes `row` as a DataRow message at the end of `out`, where the wire sends it from. On
/// an error `out` is left as it was.
pub(super) fn push_data_row(
    out: &mut BytesMut,
    row: &[Value],
    fields: &[Field],
    formats: &[i16],
) -> Result<(), PgError> {
    push_message(out, b'D', |out| {
        out.reserve(2 + row.len() * 16);
        out.put_i16(column_count(row.len())?);
        for (i, value) in row.iter().enumerate() {
            let field = fields.get(i);
            let oid = field.map_or(types::oid::TEXT, |f| f.oid);
            let binary = format_of(formats, i) == 1;
            if !binary && push_plain_text(out, value, oid) {
                continue;
            }
            let relabelled = match (value, field) {
                (Value::Wire(wire), Some(field)) if binary => match field.pg_enum {
                    Some(PgEnumColumn::Array { element }) => types::enum_array_as(wire, element),
                    _ => None,
                },
                _ => None,
            };
            let encoded = match relabelled {
                Some(bytes) => Some(bytes),
                None => types::encode(value, oid, binary)?,
            };
            match encoded {
                Some(bytes) => {
                    out.put_i32(value_length(bytes.len())?);
                    out.extend_from_slice(&bytes);
                }
                None => out.put_i32(-1),
            }
        }
        Ok(())
    })
}

/// Writes CommandComplete with `tag` at the end of `out`, in place as rows are: each
/// statement ends with one, and a message built apart cost its own allocation and drop.
pub(super) fn push_command_complete(out: &mut BytesMut, tag: &str) -> Result<(), PgError> {
    push_message(out, b'C', |out| {
        out.extend_from_slice(tag.as_bytes());
        out.put_u8(0);
        Ok(())
    })
}

/// Writes ReadyForQuery with transaction `status` (`I`, `T` or `E`) at the end of `out`.
pub(super) fn push_ready_for_query(out: &mut BytesMut, status: u8) {
    out.extend_from_slice(&[b'Z', 0, 0, 0, 5, status]);
}

/// The messages that are their type alone, without a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bare {
    ParseComplete,
    BindComplete,
    CloseComplete,
    NoData,
    PortalSuspended,
    EmptyQueryResponse,
}

/// Writes `message` at the end of `out`.
pub(super) fn push_bare(out: &mut BytesMut, message: Bare) {
    let tag = match message {
        Bare::ParseComplete => b'1',
        Bare::BindComplete => b'2',
        Bare::CloseComplete => b'3',
        Bare::NoData => b'n',
        Bare::PortalSuspended => b's',
        Bare::EmptyQueryResponse => b'I',
    };
    out.extend_from_slice(&[tag, 0, 0, 0, 4]);
}

fn value_length(len: usize) -> Result<i32, PgError> {
    i32::try_from(len).map_err(|_| PgError::new("54000", "value too large"))
}

/// Writes the text form of an integer or a string, what most values of a row are, straight
/// into the row (the general path, `types::encode`, builds each value's bytes apart); false
/// for any other value, or a column whose type gives it another text form.
fn push_plain_text(data: &mut BytesMut, value: &Value, oid: u32) -> bool {
    if keyshard_types::pg_array::element_oid_of(oid).is_some() {
        return false;
    }
    let mut digits = itoa::Buffer::new();
    let text = match value {
        Value::Int(v) if oid != types::oid::BOOL => digits.format(*v).as_bytes(),
        Value::UInt(v) => digits.format(*v).as_bytes(),
        Value::Text(s) => s.as_bytes(),
        _ => return false,
    };
    let Ok(len) = i32::try_from(text.len()) else {
        return false;
    };
    data.extend_from_slice(&len.to_be_bytes());
    data.extend_from_slice(text);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgwire::messages::PgWireBackendMessage as Out;
    use pgwire::messages::data::{DataRow, FieldDescription, RowDescription};

    #[test]
    fn names_are_cut_to_postgresql_identifiers_at_a_character_boundary() {
        assert_eq!(identifier("order_id"), "order_id");
        assert_eq!(identifier(&"x".repeat(100)), "x".repeat(63));
        // 'é' is two bytes: the 63rd byte would split one.
        let accented = "é".repeat(40);
        assert_eq!(identifier(&accented), "é".repeat(31));
    }

    /// `message` as pgwire encodes it.
    fn encoded(message: Out) -> BytesMut {
        let mut out = BytesMut::new();
        message.encode(&mut out).unwrap();
        out
    }

    #[test]
    fn messages_written_in_place_are_pgwire_s() {
        use pgwire::messages::extendedquery::{
            BindComplete, CloseComplete, ParseComplete, PortalSuspended,
        };
        use pgwire::messages::response::{
            CommandComplete, EmptyQueryResponse, ReadyForQuery, TransactionStatus,
        };
        for tag in ["SELECT 1", "INSERT 0 12345", "CREATE TABLE", ""] {
            let mut out = BytesMut::from(&b"xy"[..]);
            push_command_complete(&mut out, tag).unwrap();
            assert_eq!(
                &out[2..],
                &encoded(Out::CommandComplete(CommandComplete::new(tag.into())))[..]
            );
        }
        for (status, byte) in [
            (TransactionStatus::Idle, b'I'),
            (TransactionStatus::Transaction, b'T'),
            (TransactionStatus::Error, b'E'),
        ] {
            let mut out = BytesMut::new();
            push_ready_for_query(&mut out, byte);
            assert_eq!(out, encoded(Out::ReadyForQuery(ReadyForQuery::new(status))));
        }
        for (message, tag) in [
            (
                Out::ParseComplete(ParseComplete::new()),
                Bare::ParseComplete,
            ),
            (Out::BindComplete(BindComplete::new()), Bare::BindComplete),
            (
                Out::CloseComplete(CloseComplete::new()),
                Bare::CloseComplete,
            ),
            (
                Out::NoData(pgwire::messages::data::NoData::new()),
                Bare::NoData,
            ),
            (
                Out::PortalSuspended(PortalSuspended::new()),
                Bare::PortalSuspended,
            ),
            (
                Out::EmptyQueryResponse(EmptyQueryResponse::new()),
                Bare::EmptyQueryResponse,
            ),
        ] {
            let mut out = BytesMut::new();
            push_bare(&mut out, tag);
            assert_eq!(out, encoded(message));
        }
    }

    #[test]
    fn plain_text_is_what_the_general_encoding_writes() {
        let values = [
            Value::Int(-42),
            Value::Int(1),
            Value::UInt(u64::MAX),
            Value::Text("new".into()),
            Value::Text(String::new()),
            Value::Double(1.5),
            Value::Bool(true),
        ];
        for oid in [
            types::oid::TEXT,
            types::oid::INT8,
            types::oid::BOOL,
            1007,
            1009,
        ] {
            for value in &values {
                let mut plain = BytesMut::new();
                if !push_plain_text(&mut plain, value, oid) {
                    continue;
                }
                let general = types::encode(value, oid, false).unwrap().unwrap();
                let mut expected = (general.len() as i32).to_be_bytes().to_vec();
                expected.extend_from_slice(&general);
                assert_eq!(&plain[..], &expected[..], "{value:?} as {oid}");
            }
        }
        // Booleans and arrays keep their own text forms.
        let mut plain = BytesMut::new();
        assert!(!push_plain_text(
            &mut plain,
            &Value::Int(1),
            types::oid::BOOL
        ));
        assert!(!push_plain_text(
            &mut plain,
            &Value::Text("{1}".into()),
            1007
        ));
    }

    #[test]
    fn a_row_is_written_in_place_as_pgwire_writes_a_data_row() {
        let fields = [
            Field::new("id", types::oid::INT8),
            Field::new("name", types::oid::TEXT),
            Field::new("price", types::oid::NUMERIC),
            Field::new("gone", types::oid::TEXT),
        ];
        let row = [
            Value::Int(1_234_567_890_123_456_789),
            Value::Text("café".into()),
            Value::Text("12.50".into()),
            Value::Null,
        ];
        for formats in [&[][..], &[1], &[0, 1, 0, 1]] {
            let mut values = BytesMut::new();
            for (i, value) in row.iter().enumerate() {
                let binary = format_of(formats, i) == 1;
                match types::encode(value, fields[i].oid, binary).unwrap() {
                    Some(bytes) => {
                        values.put_i32(bytes.len() as i32);
                        values.extend_from_slice(&bytes);
                    }
                    None => values.put_i32(-1),
                }
            }
            let mut expected = BytesMut::new();
            Out::DataRow(DataRow::new(values, 4))
                .encode(&mut expected)
                .unwrap();
            // After what the buffer holds already, as the wire queues messages.
            let mut out = BytesMut::from(&b"Z"[..]);
            push_data_row(&mut out, &row, &fields, formats).unwrap();
            assert_eq!(&out[1..], &expected[..], "formats {formats:?}");
        }
    }

    #[test]
    fn a_row_description_is_written_in_place_as_pgwire_writes_one() {
        let mut origin = Field::new("order_id", types::oid::INT8);
        origin.origin = Some((16_384, 1));
        let mut sized = Field::new("status", types::oid::VARCHAR);
        sized.typmod = 54;
        let fields = [origin, sized, Field::new("x".repeat(70), types::oid::TEXT)];
        for formats in [&[][..], &[1], &[0, 1, 0]] {
            let described = fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    FieldDescription::new(
                        identifier(&f.name).to_owned(),
                        f.origin.map_or(0, |(table, _)| table as i32),
                        f.origin.map_or(0, |(_, number)| number),
                        f.oid,
                        f.size(),
                        f.typmod,
                        format_of(formats, i),
                    )
                })
                .collect();
            let mut expected = BytesMut::new();
            Out::RowDescription(RowDescription::new(described))
                .encode(&mut expected)
                .unwrap();
            let mut out = BytesMut::from(&b"Z"[..]);
            push_row_description(&mut out, &fields, formats).unwrap();
            assert_eq!(&out[1..], &expected[..], "formats {formats:?}");
        }
    }

    #[test]
    fn a_row_that_cannot_be_written_leaves_the_buffer_as_it_was() {
        let fields = [
            Field::new("id", types::oid::INT8),
            Field::new("n", types::oid::INT8),
        ];
        let row = [Value::Int(7), Value::Text("not a number".into())];
        let mut out = BytesMut::from(&b"queued"[..]);
        assert!(push_data_row(&mut out, &row, &fields, &[1]).is_err());
        assert_eq!(&out[..], b"queued");
    }

    #[test]
    fn format_codes_are_text_or_binary() {
        assert!(check_format_codes(&[]).is_ok());
        assert!(check_format_codes(&[0, 1, 1]).is_ok());
        let refused = check_format_codes(&[0, 2]).unwrap_err();
        assert_eq!(refused.code, "22023");
        assert!(check_format_codes(&[-1]).is_err());
    }
}
