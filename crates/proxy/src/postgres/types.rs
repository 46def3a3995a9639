//! PostgreSQL types on the wire: which OID a column or parameter gets, and how a [`Value`] is
//! written to, or read from, the text and binary formats.

use keyshard_types::pg_array::{array_oid_of, element_oid_of, element_supported};

use super::arrays;
use keyshard_backend::Column;
use keyshard_types::wire::pg_wire_kind;
use keyshard_types::{SqlType, numeric};
use keyshard_types::{Value, Wire, WireKind};

/// Type OIDs from PostgreSQL's `pg_type`, the ones Keyshard speaks.
pub mod oid {
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const UNKNOWN: u32 = 705;
    pub const MONEY: u32 = 790;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const NUMERIC: u32 = 1700;
    pub const TEXT_ARRAY: u32 = 1009;
}

/// Why a value cannot be read or written as the type asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// The bytes are not a value of the type.
    #[error("invalid input for type {type_name}: {detail}")]
    Invalid {
        /// The type, as PostgreSQL names it.
        type_name: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A text array literal is malformed (PostgreSQL's words, SQLSTATE 22P02).
    #[error("{0}")]
    MalformedArray(String),
    /// A binary value ends early or has a bad header (SQLSTATE 08P01, as PostgreSQL reports
    /// "insufficient data left in message").
    #[error("{0}")]
    Protocol(String),
    /// A binary array of another element type than the parameter's (SQLSTATE 42804).
    #[error("binary data has array element type {sent} instead of expected {expected}")]
    WrongElementType {
        /// The element type in the data.
        sent: u32,
        /// The parameter's element type.
        expected: u32,
    },
    /// An array whose elements Keyshard does not convert in this format (SQLSTATE 0A000).
    #[error("{0}")]
    Unsupported(String),
    /// Text that is not UTF-8 (SQLSTATE 22021, PostgreSQL's words).
    #[error("invalid byte sequence for encoding \"UTF8\": {0}")]
    Encoding(String),
}

impl TypeError {
    /// Why `bytes` are not UTF-8: the bytes of the first character that is not, as many as
    /// its first byte announces, as PostgreSQL shows them.
    fn encoding(bytes: &[u8], error: std::str::Utf8Error) -> Self {
        let rest = &bytes[error.valid_up_to()..];
        let announced = match rest.first() {
            Some(0xc0..=0xdf) => 2,
            Some(0xe0..=0xef) => 3,
            Some(0xf0..=0xf7) => 4,
            _ => 1,
        };
        let shown: Vec<String> = rest
            .iter()
            .take(announced)
            .map(|b| format!("0x{b:02x}"))
            .collect();
        Self::Encoding(shown.join(" "))
    }
}

/// The OID a column of type `ty` is described with. Types Keyshard does not convert travel as
/// text.
pub fn oid_of(ty: SqlType) -> u32 {
    match ty {
        SqlType::Array { element } => array_oid_of(element).unwrap_or(oid::TEXT_ARRAY),
        SqlType::Bool => oid::BOOL,
        SqlType::Blob | SqlType::Binary | SqlType::VarBinary => oid::BYTEA,
        SqlType::Int { bytes: 8, .. } => oid::INT8,
        SqlType::Int { bytes: 3 | 4, .. } => oid::INT4,
        SqlType::Int { .. } => oid::INT2,
        SqlType::Float => oid::FLOAT4,
        SqlType::Double => oid::FLOAT8,
        SqlType::Decimal { .. } => oid::NUMERIC,
        SqlType::VarChar => oid::VARCHAR,
        SqlType::Char => oid::BPCHAR,
        SqlType::Name => oid::NAME,
        SqlType::Oid => oid::OID,
        _ => oid::TEXT,
    }
}

/// Whether parameters of type `oid` are decoded as what they are (others are read as text).
pub fn is_native(oid: u32) -> bool {
    matches!(
        oid,
        oid::BOOL
            | oid::INT2
            | oid::INT4
            | oid::INT8
            | oid::OID
            | oid::FLOAT4
            | oid::FLOAT8
            | oid::NUMERIC
            | oid::BYTEA
            | oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
    )
}

/// PostgreSQL's name of a type OID, for messages.
pub fn name_of(oid: u32) -> &'static str {
    match oid {
        oid::BOOL => "boolean",
        oid::BYTEA => "bytea",
        oid::NAME => "name",
        oid::INT8 => "bigint",
        oid::INT2 => "smallint",
        oid::INT4 => "integer",
        oid::OID => "oid",
        oid::FLOAT4 => "real",
        oid::FLOAT8 => "double precision",
        oid::UNKNOWN => "unknown",
        oid::BPCHAR => "character",
        oid::VARCHAR => "character varying",
        oid::NUMERIC => "numeric",
        1000 => "boolean[]",
        1005 => "smallint[]",
        1007 => "integer[]",
        1016 => "bigint[]",
        1009 => "text[]",
        1015 => "character varying[]",
        other if element_oid_of(other).is_some() => "array",
        _ => "text",
    }
}

/// The name PostgreSQL's catalog gives a built-in type Keyshard reads (`int4`, `bpchar`), which
/// is what it names the column of a cast to it.
pub fn typname(oid: u32) -> Option<&'static str> {
    Some(match oid {
        oid::BOOL => "bool",
        oid::BYTEA => "bytea",
        oid::NAME => "name",
        oid::INT8 => "int8",
        oid::INT2 => "int2",
        oid::INT4 => "int4",
        oid::TEXT => "text",
        oid::OID => "oid",
        oid::FLOAT4 => "float4",
        oid::FLOAT8 => "float8",
        oid::BPCHAR => "bpchar",
        oid::VARCHAR => "varchar",
        oid::NUMERIC => "numeric",
        _ => return None,
    })
}

/// The type size RowDescription reports (negative: variable width).
pub fn size_of(oid: u32) -> i16 {
    match oid {
        oid::BOOL => 1,
        oid::INT2 => 2,
        oid::INT4 | oid::OID | oid::FLOAT4 => 4,
        // time, timestamp, timestamptz, money; date; timetz; interval, uuid; macaddr; macaddr8.
        oid::INT8 | oid::FLOAT8 | 1083 | 1114 | 1184 | 790 => 8,
        1082 => 4,
        1266 => 12,
        1186 | 2950 => 16,
        829 => 6,
        774 => 8,
        oid::NAME => 64,
        // "char".
        18 => 1,
        // xid, cid, regproc and the other reg* types: an OID each.
        24 | 28 | 29 | 2202 | 2203 | 2204 | 2205 | 2206 | 3734 | 3769 | 4089 | 4096 => 4,
        // tid, point, lseg, box, circle, line: fixed widths.
        27 => 6,
        600 => 16,
        601 | 603 => 32,
        628 | 718 => 24,
        _ => -1,
    }
}

/// The OID for a result column of type `ty` that holds `values`: the named type, widened to
/// BIGINT when an integer does not fit the narrower type, or TEXT when a value is not a number
/// at all (SQLite stores any value in any column).
pub fn oid_for_values<'a>(ty: SqlType, values: impl Iterator<Item = &'a Value>) -> u32 {
    let mut oid = oid_of(ty);
    for value in values {
        oid = match (oid, value) {
            (_, Value::Null) => oid,
            // An array column keeps its declared type; one typed by its values (an expression
            // such as `array_agg(x)`) takes its elements' array type.
            (_, Value::Array(_)) if element_oid_of(oid).is_some() => oid,
            (_, Value::Array(a)) => array_oid_of(a.element).unwrap_or(oid::TEXT_ARRAY),
            (_, _) if element_oid_of(oid).is_some() => oid::TEXT,
            (oid::INT2 | oid::INT4, Value::Int(v)) => {
                let fits = if oid == oid::INT2 {
                    i16::try_from(*v).is_ok()
                } else {
                    i32::try_from(*v).is_ok()
                };
                if fits { oid } else { oid::INT8 }
            }
            (oid::INT2 | oid::INT4 | oid::INT8, Value::UInt(v)) => {
                if i64::try_from(*v).is_ok() {
                    oid::INT8
                } else {
                    oid::NUMERIC
                }
            }
            (oid::INT8 | oid::BOOL | oid::OID, Value::Int(_)) | (oid::BOOL, Value::Bool(_)) => oid,
            (oid::FLOAT4 | oid::FLOAT8 | oid::NUMERIC, Value::Int(_) | Value::Double(_)) => oid,
            (oid::INT2 | oid::INT4 | oid::INT8 | oid::BOOL, Value::Double(_)) => oid::FLOAT8,
            (oid::BYTEA, Value::Bytes(_)) => oid,
            // NUMERIC arrives as its exact digits.
            (oid::NUMERIC, Value::Text(s)) if is_numeric_text(s) => oid,
            (oid::BYTEA, _) => oid::TEXT,
            (oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME, _) => oid,
            (_, Value::Bytes(_)) => oid::BYTEA,
            _ => oid::TEXT,
        };
    }
    oid
}

/// The type a PostgreSQL shard gave `column` when its values travel in wire form (dates,
/// JSON, UUID …): the client is told that type, whatever Keyshard's own model makes of it.
pub fn wire_oid(column: &Column) -> Option<u32> {
    column
        .oid
        .filter(|&oid| keyshard_types::wire::pg_wire_kind(oid).is_some())
}

/// The OID `column` is described with before its values are known (a prepared statement's
/// Describe).
pub fn column_oid(column: &Column) -> u32 {
    wire_oid(column).unwrap_or_else(|| oid_of(column.ty))
}

/// A value in the shard's wire form, in the format the client asked for: as it came, or from
/// binary to text (see [`super::wire_text`]).
fn encode_wire(wire: &Wire, oid: u32, binary: bool) -> Result<Vec<u8>, TypeError> {
    if let Some((oid_bytes, text)) = wire.catalog_ref() {
        return Ok(match binary {
            true => oid_bytes.to_vec(),
            false => text.as_bytes().to_vec(),
        });
    }
    match (wire.binary, binary) {
        (from, to) if from == to || wire.kind == WireKind::PgEnum => Ok(wire.bytes.to_vec()),
        // A float that came as text (a simple query's) for a binary column.
        (false, true) if wire.kind == WireKind::PgFloat => {
            let v = wire
                .float()
                .ok_or_else(|| invalid(oid, &String::from_utf8_lossy(&wire.bytes)))?;
            Ok(if oid == oid::FLOAT4 {
                (v as f32).to_be_bytes().to_vec()
            } else {
                v.to_be_bytes().to_vec()
            })
        }
        (true, false) if wire.kind == WireKind::PgEnumArray => {
            super::wire_text::label_array(&wire.bytes)
                .map(String::into_bytes)
                .ok_or_else(|| invalid(oid, "a malformed enum array"))
        }
        (true, false) => super::wire_text::binary_to_text(oid, &wire.bytes)
            .map(String::into_bytes)
            .ok_or_else(|| {
                TypeError::Unsupported(format!(
                    "Keyshard cannot write a value of type {oid} in the text format from the \
                     shard's binary one; read this column in the binary format"
                ))
            }),
        _ => Err(TypeError::Unsupported(format!(
            "Keyshard cannot write a value of type {oid} in the binary format from the shard's \
             text one; read this column in the text format"
        ))),
    }
}

/// A binary array of enum labels from any data source, its element type named `element` (the
/// OID the client was described), not the OID its own data source gave the type; `None` for
/// another value.
pub fn enum_array_as(wire: &Wire, element: u32) -> Option<Vec<u8>> {
    // ndim, the null flag, then the element type's OID.
    const ELEMENT: std::ops::Range<usize> = 8..12;
    if element == 0
        || wire.kind != WireKind::PgEnumArray
        || !wire.binary
        || wire.bytes.len() < ELEMENT.end
    {
        return None;
    }
    let mut bytes = wire.bytes.to_vec();
    bytes[ELEMENT].copy_from_slice(&element.to_be_bytes());
    Some(bytes)
}

/// Whether `text` is a NUMERIC value as PostgreSQL prints one (a SQLite column declared
/// NUMERIC may hold any text, which then travels as text).
fn is_numeric_text(text: &str) -> bool {
    matches!(text, "NaN" | "Infinity" | "-Infinity") || numeric::text_to_binary(text).is_some()
}

/// Writes `value` as type `oid` in the text (`binary == false`) or binary format; `None` is
/// SQL NULL.
pub fn encode(value: &Value, oid: u32, binary: bool) -> Result<Option<Vec<u8>>, TypeError> {
    match value {
        Value::Null => return Ok(None),
        Value::Wire(wire) => return encode_wire(wire, oid, binary).map(Some),
        _ => {}
    }
    if let Some(element) = element_oid_of(oid) {
        return arrays::encode(value, element, binary).map(Some);
    }
    if !binary {
        return Ok(Some(encode_text(value, oid).into_bytes_or(value)));
    }
    let bytes = match oid {
        oid::INT2 => i16::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        oid::INT4 => i32::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        // An OID is unsigned: 4294967295 is one.
        oid::OID => u32::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        oid::INT8 => integer(value, oid)?.to_be_bytes().to_vec(),
        // Narrowing to f32 is what a FLOAT4 column means.
        oid::FLOAT4 => (float(value, oid)? as f32).to_be_bytes().to_vec(),
        oid::FLOAT8 => float(value, oid)?.to_be_bytes().to_vec(),
        oid::BOOL => vec![u8::from(boolean(value, oid)?)],
        oid::NUMERIC => {
            let text = match encode_text(value, oid) {
                Text::String(s) => s,
                Text::Raw => String::new(),
            };
            numeric::text_to_binary(&text).ok_or_else(|| invalid(oid, &text))?
        }
        oid::BYTEA => match value {
            Value::Bytes(b) => b.clone(),
            other => encode_text(other, oid::TEXT).into_bytes_or(other),
        },
        _ => encode_text(value, oid).into_bytes_or(value),
    };
    Ok(Some(bytes))
}

/// Text that is either a string or, for BYTEA and non-UTF-8 bytes, raw bytes.
pub(super) enum Text {
    String(String),
    Raw,
}

impl Text {
    fn into_bytes_or(self, value: &Value) -> Vec<u8> {
        match (self, value) {
            (Text::String(s), _) => s.into_bytes(),
            (Text::Raw, Value::Bytes(b)) => b.clone(),
            (Text::Raw, _) => Vec::new(),
        }
    }
}

pub(super) fn encode_text(value: &Value, oid: u32) -> Text {
    Text::String(match value {
        Value::Array(array) => arrays::text_of(array),
        Value::Wire(wire) => match super::wire_text::text_of_binary(wire, oid) {
            Some(text) if wire.binary => text,
            _ => match wire.text() {
                Some(text) => text.to_owned(),
                None => return Text::Raw,
            },
        },
        Value::Null => String::new(),
        Value::Int(v) if oid == oid::BOOL => if *v != 0 { "t" } else { "f" }.to_owned(),
        Value::Bool(b) if oid == oid::BOOL => if *b { "t" } else { "f" }.to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Double(v) => float_text(*v, oid),
        Value::Text(s) => s.clone(),
        Value::Bytes(b) if oid == oid::BYTEA => {
            let mut out = String::with_capacity(2 + 2 * b.len());
            out.push_str("\\x");
            for byte in b {
                out.push_str(&format!("{byte:02x}"));
            }
            out
        }
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => return Text::Raw,
        },
    })
}

/// A float Keyshard holds as a number (a merged SUM, an array element) as PostgreSQL writes
/// one of type `oid` with the default `extra_float_digits`: a float4's digits are a float4's.
fn float_text(v: f64, oid: u32) -> String {
    keyshard_types::float_text::postgres(v, oid == oid::FLOAT4, 1)
}

fn integer(value: &Value, oid: u32) -> Result<i64, TypeError> {
    match value {
        Value::Int(v) => Ok(*v),
        Value::UInt(v) => i64::try_from(*v).map_err(|_| out_of_range(value, oid)),
        Value::Double(v) if v.fract() == 0.0 && v.abs() < 9.2e18 => Ok(*v as i64),
        Value::Text(s) => s.trim().parse().map_err(|_| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}

fn float(value: &Value, oid: u32) -> Result<f64, TypeError> {
    match value {
        Value::Int(v) => Ok(*v as f64),
        Value::UInt(v) => Ok(*v as f64),
        Value::Double(v) => Ok(*v),
        Value::Text(s) => parse_float(s).ok_or_else(|| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}

fn boolean(value: &Value, oid: u32) -> Result<bool, TypeError> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Int(v) => Ok(*v != 0),
        Value::UInt(v) => Ok(*v != 0),
        Value::Text(s) => parse_bool(s).ok_or_else(|| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}

fn invalid(oid: u32, detail: &str) -> TypeError {
    TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("\"{detail}\""),
    }
}

fn out_of_range(value: &Value, oid: u32) -> TypeError {
    TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("{value:?} is out of range"),
    }
}

fn parse_float(s: &str) -> Option<f64> {
    match s.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "inf" | "+infinity" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        other => other.parse().ok(),
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Reads a Bind parameter sent as type `oid` in the given format. A value of a type the
/// router does not compute with (NUMERIC, dates, UUIDs, JSON …) keeps its type: sent in binary,
/// it reaches the shard as the same bytes; a NUMERIC sent as text is bound as NUMERIC's binary
/// form, any other as its text with a cast to its type (sqlx binds in the binary format only,
/// and plain TEXT would meet `numeric < text` or a `jsonb` column).
pub fn decode_param(bytes: Option<&[u8]>, oid: u32, binary: bool) -> Result<Value, TypeError> {
    let typed = |binary: bool, bytes: &[u8]| {
        Value::Wire(Wire::new(wire_kind(oid), binary, bytes).with_oid(oid))
    };
    match bytes {
        Some(bytes)
            if element_oid_of(oid).is_some_and(element_supported) || router_computes(oid) =>
        {
            decode(Some(bytes), oid, binary)
        }
        Some(bytes) if binary => Ok(typed(true, bytes)),
        Some(bytes) => {
            let text = std::str::from_utf8(bytes).map_err(|e| TypeError::encoding(bytes, e))?;
            match (oid == oid::NUMERIC).then(|| numeric::text_to_binary(text.trim())) {
                Some(Some(binary)) => Ok(typed(true, &binary)),
                _ => Ok(typed(false, bytes)),
            }
        }
        None => Ok(Value::Null),
    }
}

/// Whether the router computes with values of type `oid` (routes by them, compares them):
/// numbers, booleans, text and bytes, which it reads into its own values.
fn router_computes(oid: u32) -> bool {
    matches!(
        oid,
        oid::INT2
            | oid::INT4
            | oid::INT8
            | oid::OID
            | oid::FLOAT4
            | oid::FLOAT8
            | oid::BOOL
            | oid::BYTEA
            | oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
            | oid::UNKNOWN
            // Unknown to the client too: the shard types it, from the bytes as they are.
            | 0
    )
}

fn wire_kind(oid: u32) -> WireKind {
    pg_wire_kind(oid).unwrap_or(WireKind::Opaque)
}

/// Reads a value of type `oid` in the given format into the router's values (array elements,
/// COPY fields): NUMERIC as text, and the types the shard's text form covers (dates, UUIDs …)
/// as that text.
pub fn decode(bytes: Option<&[u8]>, oid: u32, binary: bool) -> Result<Value, TypeError> {
    let Some(bytes) = bytes else {
        return Ok(Value::Null);
    };
    if let Some(element) = element_oid_of(oid) {
        return arrays::decode(bytes, element, binary);
    }
    if binary {
        return decode_binary(bytes, oid);
    }
    let text = || std::str::from_utf8(bytes).map_err(|e| TypeError::encoding(bytes, e));
    Ok(match oid {
        oid::INT2 | oid::INT4 | oid::INT8 | oid::OID => {
            let s = text()?;
            Value::Int(s.trim().parse().map_err(|_| invalid(oid, s))?)
        }
        oid::FLOAT4 | oid::FLOAT8 => {
            let s = text()?;
            Value::Double(parse_float(s).ok_or_else(|| invalid(oid, s))?)
        }
        oid::BOOL => {
            let s = text()?;
            Value::Bool(parse_bool(s).ok_or_else(|| invalid(oid, s))?)
        }
        oid::BYTEA => Value::Bytes(match bytes.strip_prefix(b"\\x") {
            Some(hex) => decode_hex(hex).ok_or_else(|| invalid(oid, "bad hex digits"))?,
            None => bytes.to_vec(),
        }),
        _ => Value::Text(text()?.to_owned()),
    })
}

fn decode_binary(bytes: &[u8], oid: u32) -> Result<Value, TypeError> {
    let wrong_size = || TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("{} bytes in binary format", bytes.len()),
    };
    Ok(match oid {
        oid::INT2 => {
            Value::Int(i16::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::INT4 => {
            Value::Int(i32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::OID => {
            Value::Int(u32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::INT8 => Value::Int(i64::from_be_bytes(
            bytes.try_into().map_err(|_| wrong_size())?,
        )),
        oid::FLOAT4 => {
            Value::Double(f32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::FLOAT8 => Value::Double(f64::from_be_bytes(
            bytes.try_into().map_err(|_| wrong_size())?,
        )),
        oid::BOOL => match bytes {
            [b] => Value::Bool(*b != 0),
            _ => return Err(wrong_size()),
        },
        oid::BYTEA => Value::Bytes(bytes.to_vec()),
        oid::NUMERIC => Value::Text(numeric::binary_to_text(bytes).ok_or_else(wrong_size)?),
        oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME => Value::Text(
            std::str::from_utf8(bytes)
                .map_err(|e| TypeError::encoding(bytes, e))?
                .to_owned(),
        ),
        // Text, in any of its types; a type this cannot read stays bytes.
        _ => match super::wire_text::binary_to_text(oid, bytes) {
            Some(text) => Value::Text(text),
            None => match std::str::from_utf8(bytes) {
                Ok(s) => Value::Text(s.to_owned()),
                Err(_) => Value::Bytes(bytes.to_vec()),
            },
        },
    })
}

fn decode_hex(hex: &[u8]) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2)
        .map(|pair| {
            let digit = |c: u8| (c as char).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use keyshard_config::DatabaseKind;

    use super::*;

    fn pg(name: &str) -> SqlType {
        SqlType::of(name, DatabaseKind::Postgres)
    }

    /// `'{sad,"not ok",NULL}'::mood[]` in the binary format, the element type `element`.
    fn moods(element: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        for word in [1i32, 1, element as i32, 3, 1] {
            bytes.extend(word.to_be_bytes());
        }
        for label in [&b"sad"[..], b"not ok"] {
            bytes.extend((label.len() as i32).to_be_bytes());
            bytes.extend(label);
        }
        bytes.extend((-1i32).to_be_bytes());
        bytes
    }

    #[test]
    fn enum_labels_and_arrays_reach_text_and_binary_clients() {
        let label = Value::Wire(Wire::new(WireKind::PgEnum, true, b"sad").with_oid(16_400));
        assert_eq!(encode(&label, 16_400, false).unwrap().unwrap(), b"sad");
        assert_eq!(encode(&label, 16_400, true).unwrap().unwrap(), b"sad");
        let wire = Wire::new(WireKind::PgEnumArray, true, &moods(16_401)).with_oid(16_402);
        let array = Value::Wire(wire.clone());
        assert_eq!(
            encode(&array, 16_402, false).unwrap().unwrap(),
            b"{sad,\"not ok\",NULL}"
        );
        // Another data source's element OID becomes the described one's; nothing else changes.
        assert_eq!(enum_array_as(&wire, 16_500).unwrap(), moods(16_500));
        assert_eq!(enum_array_as(&wire, 0), None);
        let cut = Wire::new(WireKind::PgEnumArray, true, &[0, 0, 0, 1]);
        assert_eq!(enum_array_as(&cut, 16_500), None);
        assert!(encode(&Value::Wire(cut), 16_402, false).is_err());
    }

    #[test]
    fn types_map_to_postgres_oids() {
        assert_eq!(oid_of(pg("INT8")), oid::INT8);
        assert_eq!(oid_of(pg("bigint")), oid::INT8);
        assert_eq!(oid_of(pg("VARCHAR(32)")), oid::VARCHAR);
        assert_eq!(oid_of(pg("int4")), oid::INT4);
        assert_eq!(oid_of(pg("real")), oid::FLOAT4);
        assert_eq!(oid_of(pg("DOUBLE PRECISION")), oid::FLOAT8);
        assert_eq!(
            oid_of(SqlType::of("BIGINT UNSIGNED", DatabaseKind::MySql)),
            oid::INT8
        );
        assert_eq!(oid_of(pg("timestamptz")), oid::TEXT);
        assert_eq!(
            oid_of(SqlType::of("INTEGER", DatabaseKind::Sqlite)),
            oid::INT8
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_in_either_format_and_bytes_are_not() {
        for binary in [false, true] {
            for oid in [oid::TEXT, oid::VARCHAR, oid::BPCHAR] {
                let error = decode_param(Some(b"ok\xc3("), oid, binary).unwrap_err();
                assert_eq!(
                    error.to_string(),
                    "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
                );
            }
        }
        let cut = decode_param(Some(b"ok\xe2\x82"), oid::TEXT, true).unwrap_err();
        assert_eq!(cut, TypeError::Encoding("0xe2 0x82".into()));
        assert_eq!(
            decode_param(Some(b"\xff"), oid::BYTEA, true),
            Ok(Value::Bytes(vec![0xff]))
        );
    }

    #[test]
    fn integers_widen_when_they_do_not_fit() {
        let big = [Value::Int(1 << 40)];
        assert_eq!(oid_for_values(pg("INTEGER"), big.iter()), oid::INT8);
        assert_eq!(
            oid_for_values(pg("INTEGER"), [Value::Int(7)].iter()),
            oid::INT4
        );
        assert_eq!(
            oid_for_values(pg("INTEGER"), [Value::Text("x".into())].iter()),
            oid::TEXT
        );
    }

    #[test]
    fn round_trips_in_both_formats() {
        for (value, oid) in [
            (Value::Int(-5), oid::INT2),
            (Value::Int(1 << 20), oid::INT4),
            (Value::Int(1 << 50), oid::INT8),
            (Value::Double(1.5), oid::FLOAT8),
            (Value::Text("héllo".into()), oid::VARCHAR),
            (Value::Bytes(vec![0, 255, 16]), oid::BYTEA),
            (Value::Bool(true), oid::BOOL),
        ] {
            for binary in [false, true] {
                let bytes = encode(&value, oid, binary).unwrap().unwrap();
                assert_eq!(
                    decode(Some(&bytes), oid, binary).unwrap(),
                    value,
                    "{oid} {binary}"
                );
            }
        }
        assert_eq!(encode(&Value::Null, oid::INT4, true).unwrap(), None);
        assert_eq!(decode(None, oid::INT4, true).unwrap(), Value::Null);
    }

    #[test]
    fn parameters_of_types_the_router_does_not_compute_with_keep_their_type() {
        // A binary timestamptz goes to the shard as the same type's same bytes.
        let micros = 757_479_845_123_456_i64.to_be_bytes();
        let Value::Wire(wire) = decode_param(Some(&micros), 1184, true).unwrap() else {
            panic!("a binary timestamptz is kept as it came");
        };
        assert_eq!(
            (wire.oid, wire.binary, &wire.bytes[..]),
            (1184, true, &micros[..])
        );
        // A decimal sent as text is bound as NUMERIC, not as TEXT.
        let Value::Wire(wire) = decode_param(Some(b"12.34"), oid::NUMERIC, false).unwrap() else {
            panic!("a text numeric is bound as NUMERIC");
        };
        assert_eq!(
            (wire.oid, numeric::binary_to_text(&wire.bytes).as_deref()),
            (oid::NUMERIC, Some("12.34"))
        );
        // Any other type sent as text keeps its type, to be cast to it on the shard.
        let Value::Wire(wire) = decode_param(Some(b"{\"a\": 1}"), 3802, false).unwrap() else {
            panic!("a text jsonb keeps its type");
        };
        assert_eq!(
            (wire.oid, wire.binary, wire.text()),
            (3802, false, Some("{\"a\": 1}"))
        );
        assert!(decode_param(Some(&[b'x', 0xff]), 1184, false).is_err());
        // Text in a binary parameter of a text type stays text, for routing.
        assert_eq!(
            decode_param(Some(b"abc"), oid::VARCHAR, true).unwrap(),
            Value::Text("abc".into())
        );
        // An element or COPY field of such a type is its text.
        assert_eq!(
            decode(Some(&micros), 1184, true).unwrap(),
            Value::Text("2024-01-02 03:04:05.123456+00".into())
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(decode(Some(b"12"), oid::INT8, true).is_err());
        assert!(decode(Some(b"abc"), oid::INT4, false).is_err());
        assert!(decode(Some(b"\\xzz"), oid::BYTEA, false).is_err());
        assert!(decode(Some(&[0xff, 0xfe]), oid::TEXT, false).is_err());
        assert!(encode(&Value::Int(1 << 40), oid::INT4, true).is_err());
        assert!(encode(&Value::Text("x".into()), oid::INT8, true).is_err());
    }
}
