//! Arrays between PostgreSQL clients and the proxy: an array parameter (`order_id = ANY($1)`)
//! read from the text form (`{1,2,3}`) or the binary layout, and array results
//! (`array_agg(x)`, `text[]` columns) written in either, each element by its element type's
//! own codec in [`super`].

use keyshard_types::array::{parse_text, write_text};
use keyshard_types::pg_array::{ArrayBinaryError, element_supported, parse_binary, write_binary};
use keyshard_types::{Array, Value};

use super::{Text, TypeError, oid};

impl From<ArrayBinaryError> for TypeError {
    fn from(error: ArrayBinaryError) -> Self {
        TypeError::Protocol(format!("array: {error}"))
    }
}

/// Writes `value` as an array of `element`.
pub(super) fn encode(value: &Value, element: u32, binary: bool) -> Result<Vec<u8>, TypeError> {
    let Value::Array(array) = value else {
        // Only an array is an array; a shard never hands up anything else for an array type.
        return Err(TypeError::Invalid {
            type_name: super::name_of(oid::TEXT_ARRAY),
            detail: format!("{value:?} is not an array"),
        });
    };
    if binary {
        write_binary::<TypeError>(array, element, |v| super::encode(v, element, true))
    } else {
        Ok(text_with(array, element).into_bytes())
    }
}

/// The text form of `array`, elements written as its own element type writes them.
pub(super) fn text_of(array: &Array) -> String {
    text_with(array, array.element)
}

fn text_with(array: &Array, element: u32) -> String {
    write_text(array, |v| match super::encode_text(v, element) {
        Text::String(s) => s,
        // Bytes that are no text: bytea's hex form, which PostgreSQL reads back.
        Text::Raw => match super::encode_text(v, oid::BYTEA) {
            Text::String(s) => s,
            Text::Raw => String::new(),
        },
    })
}

/// Reads an array parameter of `element`s sent in the text form or the binary layout.
pub(super) fn decode(bytes: &[u8], element: u32, binary: bool) -> Result<Value, TypeError> {
    if binary {
        // Only element types read faithfully from binary: anything else would be misread.
        if !element_supported(element) {
            return Err(TypeError::Unsupported(format!(
                "binary arrays of element type {element} are not supported; send them in text format"
            )));
        }
        let parsed = parse_binary(bytes)?;
        if parsed.element != element {
            return Err(TypeError::WrongElementType {
                sent: parsed.element,
                expected: element,
            });
        }
        let elements = parsed
            .elements
            .iter()
            .map(|e| super::decode(*e, element, true))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Value::Array(Array {
            element,
            dims: parsed.dims,
            elements,
        }));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| {
        TypeError::MalformedArray("malformed array literal: not valid UTF-8".into())
    })?;
    let parsed = parse_text(text).map_err(|e| TypeError::MalformedArray(e.to_string()))?;
    let elements = parsed
        .elements
        .iter()
        .map(|e| super::decode(e.as_deref().map(str::as_bytes), element, false))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(Array {
        element,
        dims: parsed.dims,
        elements,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::pg_error::PgError;
    use crate::postgres::types;

    const INT8_ARRAY: u32 = 1016;

    #[test]
    fn arrays_round_trip_in_both_formats() {
        for (array_oid, element, values) in [
            (
                INT8_ARRAY,
                oid::INT8,
                vec![Value::Int(1 << 40), Value::Null],
            ),
            (1007, oid::INT4, vec![Value::Int(3), Value::Int(-4)]),
            (
                oid::TEXT_ARRAY,
                oid::TEXT,
                vec![Value::Text("a, \"b\"".into()), Value::Text("NULL".into())],
            ),
            (1000, oid::BOOL, vec![Value::Bool(true), Value::Bool(false)]),
            (1001, oid::BYTEA, vec![Value::Bytes(vec![0, 255])]),
            (1022, oid::FLOAT8, vec![Value::Double(2.5)]),
            (1231, oid::NUMERIC, vec![Value::Text("10.25".into())]),
        ] {
            let value = Value::Array(Array::new(element, values));
            for binary in [false, true] {
                let bytes = types::encode(&value, array_oid, binary).unwrap().unwrap();
                assert_eq!(
                    types::decode(Some(&bytes), array_oid, binary).unwrap(),
                    value,
                    "{array_oid} binary={binary}"
                );
            }
        }
        let text = types::encode(
            &Value::Array(Array::new(oid::INT4, vec![Value::Int(1), Value::Int(2)])),
            1007,
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(text, b"{1,2}");
    }

    /// Truncated, overwritten and random array parameters, in both formats and as every
    /// array type: each decodes or is refused, none panics or asks for memory its bytes do not
    /// hold.
    #[test]
    fn mutated_arrays_never_panic() {
        let types = [
            (INT8_ARRAY, oid::INT8),
            (1007, oid::INT4),
            (oid::TEXT_ARRAY, oid::TEXT),
            (1000, oid::BOOL),
            (1001, oid::BYTEA),
            (1022, oid::FLOAT8),
            (1231, oid::NUMERIC),
        ];
        let nested = Array::new(oid::INT4, vec![Value::Int(7), Value::Null, Value::Int(-1)]);
        let samples: Vec<Vec<u8>> = [true, false]
            .into_iter()
            .flat_map(|binary| {
                let nested = Value::Array(nested.clone());
                types::encode(&nested, 1007, binary).ok().flatten()
            })
            .chain([b"{{1,2},{3,4}}".to_vec(), b"{\"a\\\"\",NULL,\"\"}".to_vec()])
            .collect();
        for seed in crate::fuzzing::seeds(0xA11A_7E57) {
            let mut rng = crate::fuzzing::Rng::new(seed);
            let mut next = move || rng.next();
            for _ in 0..5_000 {
                let sample = &samples[(next() % samples.len() as u64) as usize];
                let mut bytes = sample[..(next() as usize % (sample.len() + 1))].to_vec();
                for _ in 0..(next() % 4) {
                    if let Some(i) = (!bytes.is_empty()).then(|| next() as usize % bytes.len()) {
                        bytes[i] = [0, 0xff, 0x7f, 0x80, b'{', b'"', b','][next() as usize % 7];
                    }
                }
                if next() % 8 == 0 {
                    bytes = (0..next() % 40).map(|_| next() as u8).collect();
                }
                let (array_oid, _) = types[(next() % types.len() as u64) as usize];
                let _ = types::decode(Some(&bytes), array_oid, next() % 2 == 0);
            }
        }
    }

    #[test]
    fn node_pg_quoted_elements_take_the_element_type() {
        assert_eq!(
            types::decode(Some(br#"{"1","2",NULL}"#), INT8_ARRAY, false).unwrap(),
            Value::Array(Array::new(
                oid::INT8,
                vec![Value::Int(1), Value::Int(2), Value::Null]
            ))
        );
    }

    #[test]
    fn bad_arrays_are_errors_with_postgres_codes() {
        let code = |bytes: &[u8], binary: bool| {
            let error = types::decode(Some(bytes), INT8_ARRAY, binary).unwrap_err();
            PgError::from(error).code
        };
        assert_eq!(code(b"{1,2", false), "22P02");
        assert_eq!(code(b"{1,x}", false), "22P02");
        assert_eq!(code(b"1,2", false), "22P02");
        assert_eq!(code(&[0, 0, 0, 1, 0, 0], true), "08P01");
        let int4s = types::encode(
            &Value::Array(Array::new(oid::INT4, vec![Value::Int(1)])),
            1007,
            true,
        )
        .unwrap()
        .unwrap();
        assert_eq!(code(&int4s, true), "42804");
        let error = types::decode(Some(&int4s), 2951, true).unwrap_err();
        assert_eq!(PgError::from(error).code, "0A000");
        // A header claiming 2^31-1 elements of a few bytes: refused before allocating.
        let mut huge = int4s.clone();
        huge[12..16].copy_from_slice(&i32::MAX.to_be_bytes());
        let error = types::decode(Some(&huge), 1007, true).unwrap_err();
        assert_eq!(PgError::from(error).code, "08P01");
    }
}
