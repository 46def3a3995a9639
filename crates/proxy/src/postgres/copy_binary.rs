//! The values of a binary `COPY … FROM STDIN`: each field read in its column type's binary
//! form by the same decoder as binary Bind parameters (`types::decode`), then written as the
//! text the shards would take for that type in a text COPY, so that the load becomes the same
//! INSERT as a text or CSV one.

use keyshard_backend::SqlType;
use keyshard_backend::pg_array::array_oid_of;
use keyshard_router::Value;

use super::pg_error::PgError;
use super::types::{self, TypeError, oid};
use crate::copy::binary::{self, BinaryError};

/// The rows of `data`, a binary COPY stream into columns of `types`.
pub(super) fn rows(data: &[u8], types: &[SqlType]) -> Result<Vec<Vec<Value>>, PgError> {
    let oids = types
        .iter()
        .enumerate()
        .map(|(i, ty)| readable_oid(*ty, i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows = Vec::new();
    for (line, tuple) in binary::tuples(data, oids.len())
        .map_err(format_error)?
        .enumerate()
    {
        let tuple = tuple.map_err(format_error)?;
        let row = tuple
            .into_iter()
            .zip(&oids)
            .enumerate()
            .map(|(column, (field, &oid))| {
                value(field, oid).map_err(|e| {
                    e.with_context(&format!("COPY row {}, column {}", line + 1, column + 1))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(row);
    }
    Ok(rows)
}

fn format_error(error: BinaryError) -> PgError {
    let code = match error {
        BinaryError::FieldTooLarge(_) => "54000",
        _ => "22P04",
    };
    PgError::new(code, error.to_string())
}

/// The OID whose binary form the field of a column of type `ty` is read in; types whose
/// binary form Keyshard does not read (dates, times, UUID, JSON …) are refused rather than
/// guessed at: their bytes are not text.
fn readable_oid(ty: SqlType, column: usize) -> Result<u32, PgError> {
    let readable = match ty {
        SqlType::Array { element } => array_oid_of(element).is_some(),
        SqlType::Bool
        | SqlType::Int { .. }
        | SqlType::Float
        | SqlType::Double
        | SqlType::Decimal { .. }
        | SqlType::Char
        | SqlType::VarChar
        | SqlType::Text
        | SqlType::Name
        | SqlType::Oid
        | SqlType::Binary
        | SqlType::VarBinary
        | SqlType::Blob => true,
        _ => false,
    };
    if !readable {
        return Err(PgError::new(
            "0A000",
            format!(
                "binary COPY into column {} of type {ty:?}: Keyshard does not read that \
                 type's binary form (use the text or CSV format)",
                column + 1
            ),
        ));
    }
    Ok(types::oid_of(ty))
}

/// One field: NULL, or its bytes in `oid`'s binary form.
fn value(field: Option<&[u8]>, oid: u32) -> Result<Value, PgError> {
    let Some(bytes) = field else {
        return Ok(Value::Null);
    };
    // A fixed-width type's receive function reads exactly its width: fewer bytes is
    // PostgreSQL's "insufficient data left in message", more is unread data.
    if let Ok(width @ (1 | 2 | 4 | 8)) = usize::try_from(types::size_of(oid)) {
        if bytes.len() < width {
            return Err(PgError::new("08P01", "insufficient data left in message"));
        }
        if bytes.len() > width {
            return Err(PgError::new("22P03", "incorrect binary data format"));
        }
    }
    let value = types::decode(Some(bytes), oid, true).map_err(|e| match e {
        // The bytes are no value of the type: in binary that is a bad representation.
        TypeError::Invalid { .. } => PgError::new("22P03", e.to_string()),
        other => PgError::from(other),
    })?;
    match (&value, oid) {
        (Value::Bytes(_), oid::BYTEA) => return Ok(value),
        (Value::Bytes(_), _) => return Err(not_utf8()),
        (Value::Text(s), _) if s.contains('\0') => return Err(not_utf8()),
        _ => {}
    }
    // As text, the value is what a text COPY would have sent for it.
    match types::encode(&value, oid, false)? {
        None => Ok(Value::Null),
        Some(text) => String::from_utf8(text)
            .map(Value::Text)
            .map_err(|_| not_utf8()),
    }
}

fn not_utf8() -> PgError {
    PgError::new("22021", "invalid byte sequence for encoding \"UTF8\"")
}

#[cfg(test)]
mod tests {
    use keyshard_config::DatabaseKind;

    use super::*;

    fn stream(fields: &[Option<&[u8]>]) -> Vec<u8> {
        let mut out = binary::SIGNATURE.to_vec();
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(fields.len() as i16).to_be_bytes());
        for field in fields {
            match field {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(b) => {
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(b);
                }
            }
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        out
    }

    fn pg(names: &[&str]) -> Vec<SqlType> {
        names
            .iter()
            .map(|n| SqlType::of(n, DatabaseKind::Postgres))
            .collect()
    }

    fn code(result: Result<Vec<Vec<Value>>, PgError>) -> String {
        result.unwrap_err().code
    }

    #[test]
    fn fields_are_read_by_their_column_types() {
        let data = stream(&[
            Some(&21i32.to_be_bytes()),
            Some(b"paid"),
            None,
            Some(&[1]),
            Some(&1.5f64.to_be_bytes()),
            Some(&[0, 0xff]),
        ]);
        let types = pg(&["int4", "varchar", "int8", "bool", "float8", "bytea"]);
        let rows = rows(&data, &types).unwrap();
        assert_eq!(
            rows,
            [vec![
                Value::Text("21".into()),
                Value::Text("paid".into()),
                Value::Null,
                Value::Text("t".into()),
                Value::Text("1.5".into()),
                Value::Bytes(vec![0, 0xff]),
            ]]
        );
    }

    #[test]
    fn arrays_are_read_by_their_element_type() {
        let mut array = Vec::new();
        for word in [1i32, 0, 23, 2, 1, 4, 1, 4, 2] {
            array.extend_from_slice(&word.to_be_bytes());
        }
        let types = pg(&["_int4"]);
        let rows = rows(&stream(&[Some(&array)]), &types).unwrap();
        assert_eq!(rows, [vec![Value::Text("{1,2}".into())]]);
        // An int8[] sent for an int4[] column is refused, not misread.
        array[8..12].copy_from_slice(&20i32.to_be_bytes());
        assert_eq!(code(rows_of(&array, &types)), "42804");
    }

    fn rows_of(field: &[u8], types: &[SqlType]) -> Result<Vec<Vec<Value>>, PgError> {
        rows(&stream(&[Some(field)]), types)
    }

    /// Valid streams with random bytes changed, cut or inserted: each is read or refused with
    /// a SQLSTATE, never a panic.
    #[test]
    fn mutated_streams_never_panic() {
        let types = pg(&[
            "int4", "text", "bool", "numeric", "_int8", "float4", "bytea",
        ]);
        let mut array = Vec::new();
        for word in [1i32, 1, 20, 2, 1, 8, 0, 7, -1] {
            array.extend_from_slice(&word.to_be_bytes());
        }
        let numeric = [0u8, 1, 0, 0, 0, 0, 0, 0, 0, 42];
        let row: [Option<&[u8]>; 7] = [
            Some(&[0, 0, 0, 5]),
            Some(b"text"),
            Some(&[1]),
            Some(&numeric),
            Some(&array),
            Some(&[0x3f, 0x80, 0, 0]),
            None,
        ];
        let good = stream(&row);
        rows(&good, &types).unwrap();
        for seed in crate::fuzzing::seeds(0x5EED_C0B1) {
            let mut rng = crate::fuzzing::Rng::new(seed);
            let mut next = move || rng.next();
            for _ in 0..5_000 {
                let mut data = good.clone();
                for _ in 0..=(next() % 4) {
                    let at = (next() % data.len() as u64) as usize;
                    match next() % 4 {
                        0 => data[at] = next() as u8,
                        1 => data[at] = [0, 0xff, 0x7f, 0x80][(next() % 4) as usize],
                        2 => data.truncate(at.max(1)),
                        _ => data.insert(at, next() as u8),
                    }
                }
                if let Err(e) = rows(&data, &types) {
                    assert_eq!(e.code.len(), 5, "{e:?}");
                }
            }
        }
    }

    #[test]
    fn bad_values_get_postgres_sqlstates() {
        let types = pg(&["int4"]);
        assert_eq!(code(rows(&stream(&[Some(&[0, 1])]), &types)), "08P01");
        assert_eq!(code(rows(&stream(&[Some(&[0; 6])]), &types)), "22P03");
        assert_eq!(code(rows(b"PGCOPY\n", &types)), "22P04");
        assert_eq!(code(rows(&stream(&[None, None]), &types)), "22P04");
        let text = pg(&["text"]);
        assert_eq!(code(rows(&stream(&[Some(&[0xff, 0xfe])]), &text)), "22021");
        assert_eq!(code(rows(&stream(&[Some(b"a\0b")]), &text)), "22021");
        let stamp = pg(&["timestamptz"]);
        assert_eq!(code(rows(&stream(&[Some(&[0; 8])]), &stamp)), "0A000");
    }
}
