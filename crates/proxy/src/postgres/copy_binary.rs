//! The values of a binary `COPY … FROM STDIN`: each field read in its column type's binary
//! form by the same decoder as binary Bind parameters (`types::decode`), then written as the
//! text the shards would take for that type in a text COPY, so that the load becomes the same
//! INSERT as a text or CSV one.

use keyshard_types::SqlType;
use keyshard_types::Value;
use keyshard_types::pg_array::array_oid_of;

use super::pg_error::PgError;
use super::types::{self, TypeError, oid};
use crate::copy::binary_layout::{self, BinaryError};

mod temporal;

/// How a column's fields are read.
#[derive(Clone, Copy)]
enum Reader {
    /// As a Bind parameter of this OID.
    Oid(u32),
    /// A date, time, timestamp or UUID of this type.
    Temporal(SqlType),
}

/// The rows of `data`, a binary COPY stream into columns of `types`.
pub(super) fn rows(data: &[u8], types: &[SqlType]) -> Result<Vec<Vec<Value>>, PgError> {
    let readers = types
        .iter()
        .enumerate()
        .map(|(i, ty)| reader(*ty, i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows = Vec::new();
    for (line, tuple) in binary_layout::tuples(data, readers.len())
        .map_err(format_error)?
        .enumerate()
    {
        let tuple = tuple.map_err(format_error)?;
        let row = tuple
            .into_iter()
            .zip(&readers)
            .enumerate()
            .map(|(column, (field, &reader))| {
                let value = match (reader, field) {
                    (_, None) => Ok(Value::Null),
                    (Reader::Oid(oid), field) => value(field, oid),
                    (Reader::Temporal(ty), Some(bytes)) => {
                        temporal::text(ty, bytes).map(Value::Text)
                    }
                };
                value.map_err(|e| {
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

/// How the field of a column of type `ty` is read; types whose binary form Keyshard does not
/// read (intervals, JSON, …) are refused rather than guessed at: their bytes are not text.
fn reader(ty: SqlType, column: usize) -> Result<Reader, PgError> {
    if temporal::is_temporal(ty) {
        return Ok(Reader::Temporal(ty));
    }
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
    Ok(Reader::Oid(types::oid_of(ty)))
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
    // Money's text is the shard session's lc_monetary's, which a C locale's text (what the
    // conversion writes) may be read wrongly by: `$1,000.00` is 1.00 under de_DE.
    if oid == types::oid::MONEY {
        return Err(PgError::new(
            "0A000",
            "money in a binary COPY: send it in the text format",
        ));
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
mod tests;
