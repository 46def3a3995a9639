//! PostgreSQL arrays on the wire: which array type holds which element type, and the binary
//! layout (dimensions, null flag, element type, then length-prefixed elements). The proxy's
//! PostgreSQL frontend reads and writes arrays of its clients with this layout; the backend
//! binds array parameters to shards and reads array results with it (`elements` holds the
//! element codecs).

mod elements;

pub use elements::{
    TEXT, decode_binary, decode_element_text, decode_text, element_supported, encode_binary,
};

use crate::array::MAX_DIMS;
use crate::{Array, Dim, Value};

/// PostgreSQL's built-in element types and their array types (`pg_type.typarray`).
const ARRAY_TYPES: &[(u32, u32)] = &[
    (16, 1000),   // bool
    (17, 1001),   // bytea
    (18, 1002),   // "char"
    (19, 1003),   // name
    (20, 1016),   // int8
    (21, 1005),   // int2
    (23, 1007),   // int4
    (25, 1009),   // text
    (26, 1028),   // oid
    (114, 199),   // json
    (700, 1021),  // float4
    (701, 1022),  // float8
    (1042, 1014), // bpchar
    (1043, 1015), // varchar
    (1082, 1182), // date
    (1083, 1183), // time
    (1114, 1115), // timestamp
    (1184, 1185), // timestamptz
    (1186, 1187), // interval
    (1700, 1231), // numeric
    (2950, 2951), // uuid
    (3802, 3807), // jsonb
];

/// The array type whose elements are of type `element`.
pub fn array_oid_of(element: u32) -> Option<u32> {
    ARRAY_TYPES
        .iter()
        .find(|(e, _)| *e == element)
        .map(|(_, a)| *a)
}

/// The element type of array type `array`; `None` when it is no array type Keyshard knows.
pub fn element_oid_of(array: u32) -> Option<u32> {
    ARRAY_TYPES
        .iter()
        .find(|(_, a)| *a == array)
        .map(|(e, _)| *e)
}

/// The element type of the array type named `type_name` (`INT4[]` as sqlx names result types,
/// `_int4` as `pg_type` does), as an OID (0: an element type not known here); `None` when the
/// name is no array type.
pub fn element_of_type_name(type_name: &str) -> Option<u32> {
    let name = type_name.trim();
    let element = match name.strip_suffix("[]") {
        Some(element) => element,
        None => name.strip_prefix('_')?,
    };
    let lower = element.trim().to_ascii_lowercase();
    let base = lower.split('(').next().unwrap_or_default().trim();
    Some(match base {
        "bool" | "boolean" => 16,
        "bytea" => 17,
        "name" => 19,
        "int8" | "bigint" => 20,
        "int2" | "smallint" => 21,
        "int4" | "int" | "integer" => 23,
        "text" => 25,
        "oid" => 26,
        "json" => 114,
        "float4" | "real" => 700,
        "float8" | "double precision" => 701,
        "bpchar" | "char" | "character" => 1042,
        "varchar" | "character varying" => 1043,
        "date" => 1082,
        "time" | "time without time zone" => 1083,
        "timestamp" | "timestamp without time zone" => 1114,
        "timestamptz" | "timestamp with time zone" => 1184,
        "interval" => 1186,
        "numeric" | "decimal" => 1700,
        "uuid" => 2950,
        "jsonb" => 3802,
        _ => 0,
    })
}

/// Why bytes are not an array in the binary layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayBinaryError {
    /// The bytes end before the layout does (PostgreSQL: "insufficient data left in message").
    #[error("insufficient data left in message")]
    Truncated,
    /// A header field is out of range.
    #[error("{0}")]
    Invalid(&'static str),
    /// Bytes are left after the last element.
    #[error("incorrect binary data format in array")]
    TrailingBytes,
    /// The array cannot be written: an element or dimension beyond 2^31.
    #[error("array too large")]
    TooLarge,
}

/// An array read from the binary layout; elements borrow from the bytes, `None` is NULL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryArray<'a> {
    /// The element type the sender wrote.
    pub element: u32,
    /// The dimensions, outermost first; none when empty.
    pub dims: Vec<Dim>,
    /// The elements' bytes in row-major order.
    pub elements: Vec<Option<&'a [u8]>>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ArrayBinaryError> {
        if self.bytes.len() < n {
            return Err(ArrayBinaryError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn i32(&mut self) -> Result<i32, ArrayBinaryError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Reads the binary layout. Every count is checked against the bytes actually there before
/// anything is allocated by it: each element takes at least its 4-byte length.
pub fn parse_binary(bytes: &[u8]) -> Result<BinaryArray<'_>, ArrayBinaryError> {
    let mut cursor = Cursor { bytes };
    let ndim = cursor.i32()?;
    let ndim = usize::try_from(ndim)
        .map_err(|_| ArrayBinaryError::Invalid("invalid number of dimensions"))?;
    if ndim > MAX_DIMS {
        return Err(ArrayBinaryError::Invalid(
            "number of array dimensions exceeds the maximum allowed (6)",
        ));
    }
    let flags = cursor.i32()?;
    if flags != 0 && flags != 1 {
        return Err(ArrayBinaryError::Invalid("invalid array flags"));
    }
    let element = cursor.i32()? as u32;
    let mut dims = Vec::with_capacity(ndim);
    let mut count: usize = 1;
    for _ in 0..ndim {
        let len = cursor.i32()?;
        let lower = cursor.i32()?;
        let len = usize::try_from(len)
            .map_err(|_| ArrayBinaryError::Invalid("invalid array dimension"))?;
        if i64::from(lower) + len as i64 - 1 > i64::from(i32::MAX) {
            return Err(ArrayBinaryError::Invalid("array upper bound is too large"));
        }
        count = count.checked_mul(len).ok_or(ArrayBinaryError::Invalid(
            "array size exceeds the maximum allowed",
        ))?;
        dims.push(Dim { len, lower });
    }
    if ndim == 0 || count == 0 {
        // PostgreSQL reads any zero-length dimension as the empty array.
        return Ok(BinaryArray {
            element,
            dims: Vec::new(),
            elements: Vec::new(),
        });
    }
    if count > cursor.bytes.len() / 4 {
        return Err(ArrayBinaryError::Truncated);
    }
    let mut elements = Vec::with_capacity(count);
    for _ in 0..count {
        let len = cursor.i32()?;
        if len == -1 {
            if flags == 0 {
                return Err(ArrayBinaryError::Invalid(
                    "null element in an array without nulls",
                ));
            }
            elements.push(None);
            continue;
        }
        let len = usize::try_from(len)
            .map_err(|_| ArrayBinaryError::Invalid("invalid element length"))?;
        elements.push(Some(cursor.take(len)?));
    }
    if !cursor.bytes.is_empty() {
        return Err(ArrayBinaryError::TrailingBytes);
    }
    Ok(BinaryArray {
        element,
        dims,
        elements,
    })
}

/// Writes `array` in the binary layout as an array of `element`, each non-NULL element as
/// `encode` writes it (`None` from it is NULL too).
pub fn write_binary<E: From<ArrayBinaryError>>(
    array: &Array,
    element: u32,
    mut encode: impl FnMut(&Value) -> Result<Option<Vec<u8>>, E>,
) -> Result<Vec<u8>, E> {
    let mut out = Vec::new();
    let empty = array.dims.is_empty() || array.elements.is_empty();
    let ndim = if empty { 0 } else { array.dims.len() };
    let ndim = i32::try_from(ndim).map_err(|_| ArrayBinaryError::TooLarge)?;
    out.extend_from_slice(&ndim.to_be_bytes());
    let has_null = array.elements.iter().any(|v| matches!(v, Value::Null));
    out.extend_from_slice(&i32::from(has_null).to_be_bytes());
    out.extend_from_slice(&element.to_be_bytes());
    if empty {
        return Ok(out);
    }
    for dim in &array.dims {
        let len = i32::try_from(dim.len).map_err(|_| ArrayBinaryError::TooLarge)?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&dim.lower.to_be_bytes());
    }
    for value in &array.elements {
        let bytes = match value {
            Value::Null => None,
            other => encode(other)?,
        };
        match bytes {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(bytes) => {
                let len = i32::try_from(bytes.len()).map_err(|_| ArrayBinaryError::TooLarge)?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&bytes);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int4s(values: &[Option<i32>]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&1i32.to_be_bytes());
        out.extend_from_slice(&i32::from(values.iter().any(Option::is_none)).to_be_bytes());
        out.extend_from_slice(&23u32.to_be_bytes());
        out.extend_from_slice(&(values.len() as i32).to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
        for v in values {
            match v {
                Some(v) => {
                    out.extend_from_slice(&4i32.to_be_bytes());
                    out.extend_from_slice(&v.to_be_bytes());
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        out
    }

    #[test]
    fn array_type_names_name_their_elements() {
        assert_eq!(element_of_type_name("INT4[]"), Some(23));
        assert_eq!(element_of_type_name("_int8"), Some(20));
        assert_eq!(element_of_type_name("TEXT[]"), Some(25));
        assert_eq!(element_of_type_name("_my_enum"), Some(0));
        assert_eq!(element_of_type_name("int4"), None);
        assert_eq!(array_oid_of(20), Some(1016));
        assert_eq!(element_oid_of(1009), Some(25));
    }

    #[test]
    fn reads_and_writes_the_layout() {
        let bytes = int4s(&[Some(1), None, Some(-3)]);
        let parsed = parse_binary(&bytes).unwrap();
        assert_eq!(parsed.element, 23);
        assert_eq!(parsed.dims, [Dim { len: 3, lower: 1 }]);
        assert_eq!(parsed.elements[1], None);
        let array = Array::new(23, vec![Value::Int(1), Value::Null, Value::Int(-3)]);
        let written = write_binary::<ArrayBinaryError>(&array, 23, |v| match v {
            Value::Int(i) => Ok(Some((*i as i32).to_be_bytes().to_vec())),
            _ => Ok(None),
        })
        .unwrap();
        assert_eq!(written, bytes);
        let empty =
            write_binary::<ArrayBinaryError>(&Array::new(20, vec![]), 20, |_| Ok(None)).unwrap();
        assert_eq!(
            parse_binary(&empty).unwrap().elements,
            Vec::<Option<&[u8]>>::new()
        );
    }

    #[test]
    fn bad_layouts_are_errors_and_allocate_nothing_unchecked() {
        let good = int4s(&[Some(1), Some(2)]);
        for cut in 0..good.len() {
            assert!(parse_binary(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(
            parse_binary(&trailing),
            Err(ArrayBinaryError::TrailingBytes)
        );
        // A header claiming 2^31-1 elements in a few bytes.
        let mut huge = good.clone();
        huge[12..16].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(parse_binary(&huge), Err(ArrayBinaryError::Truncated));
        // Dimensions whose product overflows.
        let mut header = Vec::new();
        for v in [6i32, 0, 23] {
            header.extend_from_slice(&v.to_be_bytes());
        }
        for _ in 0..6 {
            header.extend_from_slice(&i32::MAX.to_be_bytes());
            header.extend_from_slice(&1i32.to_be_bytes());
        }
        assert!(parse_binary(&header).is_err());
        let mut negative = good.clone();
        negative[0..4].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(parse_binary(&negative).is_err());
        let mut seven = good;
        seven[0..4].copy_from_slice(&7i32.to_be_bytes());
        assert!(parse_binary(&seven).is_err());
        // A NULL element in an array that says it has none.
        let mut lying = int4s(&[None]);
        lying[4..8].copy_from_slice(&0i32.to_be_bytes());
        assert!(parse_binary(&lying).is_err());
    }
}
