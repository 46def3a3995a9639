//! Format codes (text or binary) and the rows written in them.

use keyshard_router::Value;
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::data::{DataRow, FieldDescription, RowDescription};

use super::describe::Field;
use super::pg_error::PgError;
use super::types;

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

pub(super) fn row_description(fields: &[Field], formats: &[i16]) -> Out {
    Out::RowDescription(RowDescription::new(
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                FieldDescription::new(
                    f.name.clone(),
                    0,
                    0,
                    f.oid,
                    types::size_of(f.oid),
                    -1,
                    format_of(formats, i),
                )
            })
            .collect(),
    ))
}

pub(super) fn data_row(row: &[Value], fields: &[Field], formats: &[i16]) -> Result<Out, PgError> {
    let mut data = bytes::BytesMut::new();
    for (i, value) in row.iter().enumerate() {
        let oid = fields.get(i).map_or(types::oid::TEXT, |f| f.oid);
        match types::encode(value, oid, format_of(formats, i) == 1)? {
            Some(bytes) => {
                let len = i32::try_from(bytes.len())
                    .map_err(|_| PgError::new("54000", "value too large"))?;
                data.extend_from_slice(&len.to_be_bytes());
                data.extend_from_slice(&bytes);
            }
            None => data.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let count = i16::try_from(row.len()).map_err(|_| PgError::new("54011", "too many columns"))?;
    Ok(Out::DataRow(DataRow::new(data, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_codes_are_text_or_binary() {
        assert!(check_format_codes(&[]).is_ok());
        assert!(check_format_codes(&[0, 1, 1]).is_ok());
        let refused = check_format_codes(&[0, 2]).unwrap_err();
        assert_eq!(refused.code, "22023");
        assert!(check_format_codes(&[-1]).is_err());
    }
}
