//! Array elements between the router's values and PostgreSQL shards: an array parameter is
//! bound in the binary layout with its element type, and array results (binary from prepared
//! statements, text from plain ones) are read into [`Value::Array`].

use keyshard_router::array::parse_text;
use keyshard_router::{Array, Value};
use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueFormat, PgValueRef, Postgres};
use sqlx::{TypeInfo, ValueRef};

use super::{ArrayBinaryError, array_oid_of, element_oid_of, parse_binary, write_binary};
use crate::numeric;

const BOOL: u32 = 16;
const BYTEA: u32 = 17;
const NAME: u32 = 19;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const TEXT: u32 = 25;
const OID: u32 = 26;
const JSON: u32 = 114;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const BPCHAR: u32 = 1042;
const VARCHAR: u32 = 1043;
const NUMERIC: u32 = 1700;
const JSONB: u32 = 3802;

/// Whether arrays of element type `oid` are converted: the element types the proxy's values
/// represent faithfully (numbers, booleans, text, bytes, JSON). Other arrays are refused
/// rather than passed on with their elements misread.
pub fn element_supported(oid: u32) -> bool {
    matches!(
        oid,
        BOOL | BYTEA
            | NAME
            | INT8
            | INT2
            | INT4
            | TEXT
            | OID
            | JSON
            | FLOAT4
            | FLOAT8
            | BPCHAR
            | VARCHAR
            | NUMERIC
            | JSONB
    )
}

/// An array parameter as sqlx binds it: typed as the array of its element type, so the shard
/// compares `order_id = ANY($1)` as PostgreSQL would for the client.
pub(crate) struct ArrayParam<'a>(pub(crate) &'a Array);

impl ArrayParam<'_> {
    /// The element type it is sent as: its own when supported, else text (the text of a value
    /// of any type is what PostgreSQL reads best).
    fn element(&self) -> u32 {
        if element_supported(self.0.element) {
            self.0.element
        } else {
            TEXT
        }
    }

    /// The array type it is sent as.
    pub(crate) fn oid(&self) -> Option<u32> {
        array_oid_of(self.element())
    }
}

impl sqlx::Type<Postgres> for ArrayParam<'_> {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(Oid(1009))
    }
}

impl sqlx::Encode<'_, Postgres> for ArrayParam<'_> {
    fn produces(&self) -> Option<PgTypeInfo> {
        array_oid_of(self.element()).map(|oid| PgTypeInfo::with_oid(Oid(oid)))
    }

    fn encode_by_ref(
        &self,
        buf: &mut PgArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, BoxDynError> {
        let element = self.element();
        let bytes = write_binary::<ElementError>(self.0, element, |v| encode_element(v, element))
            .map_err(|e| e.0)?;
        buf.extend_from_slice(&bytes);
        Ok(sqlx::encode::IsNull::No)
    }
}

struct ElementError(String);

impl From<ArrayBinaryError> for ElementError {
    fn from(e: ArrayBinaryError) -> Self {
        Self(e.to_string())
    }
}

fn encode_element(value: &Value, element: u32) -> Result<Option<Vec<u8>>, ElementError> {
    let wrong = || {
        ElementError(format!(
            "{value:?} is not a valid array element of type {element}"
        ))
    };
    let int = || -> Result<i64, ElementError> {
        match value {
            Value::Int(v) => Ok(*v),
            Value::Bool(b) => Ok(i64::from(*b)),
            Value::UInt(v) => i64::try_from(*v).map_err(|_| wrong()),
            Value::Double(v) if v.fract() == 0.0 && v.abs() < 9.2e18 => Ok(*v as i64),
            Value::Text(s) => s.trim().parse().map_err(|_| wrong()),
            _ => Err(wrong()),
        }
    };
    let float = || -> Result<f64, ElementError> {
        match value {
            Value::Int(v) => Ok(*v as f64),
            Value::UInt(v) => Ok(*v as f64),
            Value::Double(v) => Ok(*v),
            Value::Text(s) => s.trim().parse().map_err(|_| wrong()),
            _ => Err(wrong()),
        }
    };
    let text = || -> Result<String, ElementError> {
        match value {
            Value::Int(v) => Ok(v.to_string()),
            Value::UInt(v) => Ok(v.to_string()),
            Value::Double(v) => Ok(v.to_string()),
            Value::Bool(b) => Ok(if *b { "t" } else { "f" }.to_owned()),
            Value::Text(s) => Ok(s.clone()),
            Value::Bytes(b) => String::from_utf8(b.clone()).map_err(|_| wrong()),
            Value::Wire(w) => w.text().map(str::to_owned).ok_or_else(wrong),
            Value::Null | Value::Array(_) => Err(wrong()),
        }
    };
    let bytes = match element {
        INT2 => i16::try_from(int()?)
            .map_err(|_| wrong())?
            .to_be_bytes()
            .to_vec(),
        INT4 => i32::try_from(int()?)
            .map_err(|_| wrong())?
            .to_be_bytes()
            .to_vec(),
        INT8 => int()?.to_be_bytes().to_vec(),
        OID => u32::try_from(int()?)
            .map_err(|_| wrong())?
            .to_be_bytes()
            .to_vec(),
        // Narrowing to f32 is what a float4 element means.
        FLOAT4 => (float()? as f32).to_be_bytes().to_vec(),
        FLOAT8 => float()?.to_be_bytes().to_vec(),
        BOOL => vec![u8::from(int()? != 0)],
        NUMERIC => numeric::text_to_binary(&text()?).ok_or_else(wrong)?,
        BYTEA => match value {
            Value::Bytes(b) => b.clone(),
            _ => text()?.into_bytes(),
        },
        // jsonb's binary form is a version byte before the text.
        JSONB => {
            let mut out = vec![1];
            out.extend_from_slice(text()?.as_bytes());
            out
        }
        _ => text()?.into_bytes(),
    };
    Ok(Some(bytes))
}

/// Reads an array result value; `None` when the value is not of an array type.
pub(crate) fn decode_array(
    raw: PgValueRef<'_>,
    index: usize,
) -> Option<Result<Value, sqlx::Error>> {
    let type_info = raw.type_info();
    let element = element_oid_of(type_info.oid()?.0)?;
    let failed = |detail: String| sqlx::Error::ColumnDecode {
        index: index.to_string(),
        source: detail.into(),
    };
    if !element_supported(element) {
        return Some(Err(failed(format!(
            "type {} is not supported in results yet",
            type_info.name()
        ))));
    }
    Some(match raw.format() {
        PgValueFormat::Binary => raw
            .as_bytes()
            .map_err(|e| failed(e.to_string()))
            .and_then(|bytes| from_binary(bytes, element).map_err(failed)),
        PgValueFormat::Text => raw
            .as_str()
            .map_err(|e| failed(e.to_string()))
            .and_then(|text| from_text(text, element).map_err(failed)),
    })
}

fn from_binary(bytes: &[u8], element: u32) -> Result<Value, String> {
    let parsed = parse_binary(bytes).map_err(|e| e.to_string())?;
    let elements = decode_all(&parsed.elements, |bytes| {
        decode_element_binary(bytes, element)
    })?;
    Ok(Value::Array(Array {
        element,
        dims: parsed.dims,
        elements,
    }))
}

fn from_text(text: &str, element: u32) -> Result<Value, String> {
    let parsed = parse_text(text).map_err(|e| e.to_string())?;
    let elements = decode_all(&parsed.elements, |text| decode_element_text(text, element))?;
    Ok(Value::Array(Array {
        element,
        dims: parsed.dims,
        elements,
    }))
}

/// Each element decoded, a missing one as NULL.
fn decode_all<E>(
    elements: &[Option<E>],
    decode: impl Fn(&E) -> Result<Value, String>,
) -> Result<Vec<Value>, String> {
    elements
        .iter()
        .map(|e| e.as_ref().map_or(Ok(Value::Null), &decode))
        .collect()
}

fn decode_element_binary(bytes: &[u8], element: u32) -> Result<Value, String> {
    let wrong = || format!("a malformed array element of type {element}");
    let fixed = |n: usize| -> Result<&[u8], String> {
        if bytes.len() == n {
            Ok(bytes)
        } else {
            Err(wrong())
        }
    };
    let text = |b: &[u8]| {
        std::str::from_utf8(b)
            .map(|s| Value::Text(s.to_owned()))
            .map_err(|_| wrong())
    };
    Ok(match element {
        INT2 => Value::Int(i16::from_be_bytes(fixed(2)?.try_into().map_err(|_| wrong())?).into()),
        INT4 | OID => {
            let b: [u8; 4] = fixed(4)?.try_into().map_err(|_| wrong())?;
            if element == OID {
                Value::Int(u32::from_be_bytes(b).into())
            } else {
                Value::Int(i32::from_be_bytes(b).into())
            }
        }
        INT8 => Value::Int(i64::from_be_bytes(
            fixed(8)?.try_into().map_err(|_| wrong())?,
        )),
        FLOAT4 => {
            Value::Double(f32::from_be_bytes(fixed(4)?.try_into().map_err(|_| wrong())?).into())
        }
        FLOAT8 => Value::Double(f64::from_be_bytes(
            fixed(8)?.try_into().map_err(|_| wrong())?,
        )),
        BOOL => Value::Int(i64::from(fixed(1)?[0] != 0)),
        NUMERIC => Value::Text(numeric::binary_to_text(bytes).ok_or_else(wrong)?),
        BYTEA => Value::Bytes(bytes.to_vec()),
        JSONB => match bytes.split_first() {
            Some((1, rest)) => text(rest)?,
            _ => return Err(wrong()),
        },
        _ => text(bytes)?,
    })
}

/// An element of an array in the text form, as a value of element type `element`.
pub fn decode_element_text(text: &str, element: u32) -> Result<Value, String> {
    let wrong = || format!("invalid input for an array element of type {element}: \"{text}\"");
    Ok(match element {
        INT2 | INT4 | INT8 | OID => Value::Int(text.trim().parse().map_err(|_| wrong())?),
        FLOAT4 | FLOAT8 => Value::Double(match text.trim().to_ascii_lowercase().as_str() {
            "nan" => f64::NAN,
            "infinity" => f64::INFINITY,
            "-infinity" => f64::NEG_INFINITY,
            other => other.parse().map_err(|_| wrong())?,
        }),
        BOOL => Value::Int(match text.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "y" | "yes" | "on" | "1" => 1,
            "f" | "false" | "n" | "no" | "off" | "0" => 0,
            _ => return Err(wrong()),
        }),
        BYTEA => match text.strip_prefix("\\x") {
            Some(hex) if hex.len().is_multiple_of(2) => Value::Bytes(
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| wrong())?,
            ),
            Some(_) => return Err(wrong()),
            None => Value::Bytes(text.as_bytes().to_vec()),
        },
        _ => Value::Text(text.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_round_trip_through_the_binary_layout() {
        for (element, values) in [
            (INT8, vec![Value::Int(1 << 40), Value::Null, Value::Int(-2)]),
            (INT4, vec![Value::Int(7)]),
            (INT2, vec![Value::Int(-7)]),
            (FLOAT8, vec![Value::Double(1.5)]),
            (TEXT, vec![Value::Text("a,b".into()), Value::Null]),
            (BYTEA, vec![Value::Bytes(vec![0, 255])]),
            (BOOL, vec![Value::Int(1), Value::Int(0)]),
            (NUMERIC, vec![Value::Text("12.50".into())]),
        ] {
            let array = Array::new(element, values);
            let bytes =
                write_binary::<ElementError>(&array, element, |v| encode_element(v, element))
                    .map_err(|e| e.0)
                    .unwrap();
            assert_eq!(from_binary(&bytes, element).unwrap(), Value::Array(array));
        }
    }

    #[test]
    fn text_results_are_read_by_element_type() {
        let value = from_text("{{1,NULL},{3,4}}", INT4).unwrap();
        let Value::Array(array) = value else {
            panic!("{value:?}")
        };
        assert_eq!(array.dims.len(), 2);
        assert_eq!(array.elements[1], Value::Null);
        assert_eq!(array.elements[3], Value::Int(4));
        assert!(from_text("{x}", INT8).is_err());
        assert_eq!(
            decode_element_text("\\x00ff", BYTEA).unwrap(),
            Value::Bytes(vec![0, 255])
        );
        assert!(decode_element_text("\\x0", BYTEA).is_err());
        assert!(decode_element_binary(&[0, 0, 1], INT4).is_err());
    }

    #[test]
    fn out_of_range_elements_fail_to_bind() {
        assert!(encode_element(&Value::Int(1 << 40), INT4).is_err());
        assert!(encode_element(&Value::Text("x".into()), INT8).is_err());
    }
}
