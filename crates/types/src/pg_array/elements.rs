//! Array elements between Keyshard's values and PostgreSQL's binary and text forms, by element
//! type: what an array parameter is bound as, and how an array result is read into
//! [`Value::Array`].

use super::{ArrayBinaryError, parse_binary, write_binary};
use crate::array::parse_text;
use crate::numeric;
use crate::{Array, Value};

const BOOL: u32 = 16;
const BYTEA: u32 = 17;
const NAME: u32 = 19;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
/// `text`: what an element of a type not converted is sent as.
pub const TEXT: u32 = 25;
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

/// `array` in the binary layout with elements of type `element`, or why a value is not one.
pub fn encode_binary(array: &Array, element: u32) -> Result<Vec<u8>, String> {
    write_binary::<ElementError>(array, element, |v| encode_element(v, element)).map_err(|e| e.0)
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

/// An array value of element type `element` from its binary layout.
pub fn decode_binary(bytes: &[u8], element: u32) -> Result<Value, String> {
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

/// An array value of element type `element` from its text form (`{1,NULL}`).
pub fn decode_text(text: &str, element: u32) -> Result<Value, String> {
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
            let bytes = encode_binary(&array, element).unwrap();
            assert_eq!(decode_binary(&bytes, element).unwrap(), Value::Array(array));
        }
    }

    #[test]
    fn text_results_are_read_by_element_type() {
        let value = decode_text("{{1,NULL},{3,4}}", INT4).unwrap();
        let Value::Array(array) = value else {
            panic!("{value:?}")
        };
        assert_eq!(array.dims.len(), 2);
        assert_eq!(array.elements[1], Value::Null);
        assert_eq!(array.elements[3], Value::Int(4));
        assert!(decode_text("{x}", INT8).is_err());
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
