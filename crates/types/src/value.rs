//! Values that flow through a plan: bound parameters, literals and generated keys.

pub mod array;

use std::fmt::Write as _;

use crate::Dialect;

/// A statement parameter or a value the router puts in its place (a generated key).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer too large for `i64` (MySQL BIGINT UNSIGNED).
    UInt(u64),
    /// A floating-point number.
    Double(f64),
    /// A boolean parameter (PostgreSQL's `boolean`), which a shard compares and casts only as
    /// a boolean.
    Bool(bool),
    /// Text.
    Text(String),
    /// Bytes (a binary parameter).
    Bytes(Vec<u8>),
    /// A PostgreSQL array: a parameter such as the list of `order_id = ANY($1)`, or a result
    /// value such as `array_agg(x)`'s.
    Array(Array),
    /// A result value Keyshard passes on as the shard sent it (dates, times, JSON, UUID …):
    /// its bytes in the shard's wire format, typed by its column.
    Wire(Wire),
}

/// A value in a shard's own wire form. Keyshard reads it only to order or group rows across
/// shards ([`WireKind`] says how) and to add up floats; the client gets the bytes as they came,
/// or converted to the other format of the same protocol when it asked for that one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wire {
    /// What the bytes hold, as far as ordering needs to know.
    pub kind: WireKind,
    /// Binary format (PostgreSQL's binary format, MySQL's binary protocol) rather than text.
    pub binary: bool,
    /// The value: for MySQL's binary protocol without the length prefix of length-encoded
    /// types, and with the length byte of temporal ones, as sqlx hands them out.
    pub bytes: Box<[u8]>,
    /// The PostgreSQL type the bytes are a value of (0: not known, or MySQL), so that a binary
    /// value goes back to a shard as exactly that type.
    pub oid: u32,
}

/// How a [`Wire`] value orders: the temporal types of each database, which Keyshard decodes
/// to compare, and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireKind {
    /// PostgreSQL `date`.
    PgDate,
    /// PostgreSQL `time`.
    PgTime,
    /// PostgreSQL `timetz`.
    PgTimeTz,
    /// PostgreSQL `timestamp` and `timestamptz` (its text in the shard connection's zone, UTC).
    PgTimestamp,
    /// PostgreSQL `interval`.
    PgInterval,
    /// MySQL `DATE`, `DATETIME`, `TIMESTAMP`.
    MySqlDateTime,
    /// MySQL `TIME` (negative and over 24 hours too).
    MySqlTime,
    /// MySQL `YEAR`.
    MySqlYear,
    /// PostgreSQL `float4` and `float8` (binary: 4 or 8 bytes, big-endian).
    PgFloat,
    /// MySQL `FLOAT` and `DOUBLE` (binary: 4 or 8 bytes, little-endian).
    MySqlFloat,
    /// PostgreSQL `inet` and `cidr`.
    PgInet,
    /// PostgreSQL `money`: binary, the amount in the currency's smallest unit (8 bytes,
    /// big-endian); text, as the shard's `lc_monetary` writes it (`-$1,234.56`).
    PgMoney,
    /// Bytes whose order is the database's own (PostgreSQL `uuid`, MySQL `BIT`): compared as
    /// bytes.
    Bytewise,
    /// A PostgreSQL enum: its label, the same bytes in the text and the binary format. It
    /// orders as its type declares the labels, which Keyshard does not track: never ordered
    /// across shards.
    PgEnum,
    /// An array of a PostgreSQL enum: in the binary format, each element its label.
    PgEnumArray,
    /// A type whose order Keyshard does not know (JSON, geometry …): equal when the bytes are,
    /// never ordered across shards.
    Opaque,
    /// A PostgreSQL catalog reference (`regclass`, `regtype` …) read in binary, with its text
    /// looked up on the shard: the 4-byte OID (the binary form), then the text form. Never
    /// ordered across shards.
    PgCatalogRef,
}

impl Wire {
    /// A value of `kind` in the text (`binary == false`) or binary format.
    pub fn new(kind: WireKind, binary: bool, bytes: &[u8]) -> Self {
        Self {
            kind,
            binary,
            bytes: bytes.into(),
            oid: 0,
        }
    }

    /// The same value, known to be of PostgreSQL type `oid`.
    pub fn with_oid(mut self, oid: u32) -> Self {
        self.oid = oid;
        self
    }

    /// The number a [`WireKind::PgFloat`] or [`WireKind::MySqlFloat`] value holds, from either
    /// format; `None` for other kinds and for bytes that are no such number.
    pub fn float(&self) -> Option<f64> {
        let bytes = &self.bytes[..];
        match (self.kind, self.binary) {
            (WireKind::PgFloat, true) => match bytes.len() {
                4 => Some(f32::from_be_bytes(bytes.try_into().ok()?).into()),
                8 => Some(f64::from_be_bytes(bytes.try_into().ok()?)),
                _ => None,
            },
            (WireKind::MySqlFloat, true) => match bytes.len() {
                4 => Some(f32::from_le_bytes(bytes.try_into().ok()?).into()),
                8 => Some(f64::from_le_bytes(bytes.try_into().ok()?)),
                _ => None,
            },
            (WireKind::PgFloat | WireKind::MySqlFloat, false) => {
                match std::str::from_utf8(bytes).ok()?.trim() {
                    "NaN" => Some(f64::NAN),
                    "Infinity" => Some(f64::INFINITY),
                    "-Infinity" => Some(f64::NEG_INFINITY),
                    text => text.parse().ok(),
                }
            }
            _ => None,
        }
    }

    /// The amount a [`WireKind::PgMoney`] value holds, in the currency's smallest unit. Its
    /// text is read as its digits, whatever the locale puts around them: every locale writes
    /// the same count of fraction digits for every value of a column.
    pub fn money(&self) -> Option<i128> {
        if self.kind != WireKind::PgMoney {
            return None;
        }
        if self.binary {
            return Some(i64::from_be_bytes(self.bytes[..].try_into().ok()?).into());
        }
        let text = std::str::from_utf8(&self.bytes).ok()?;
        let mut amount: i128 = 0;
        let mut digits = 0;
        for d in text.chars().filter_map(|c| c.to_digit(10)) {
            amount = amount.checked_mul(10)?.checked_add(d.into())?;
            digits += 1;
        }
        let negative = text.contains(['-', '(']);
        (digits > 0).then_some(if negative { -amount } else { amount })
    }

    /// A catalog reference's binary form (its OID) and text form (see
    /// [`WireKind::PgCatalogRef`]).
    pub fn catalog_ref(&self) -> Option<(&[u8], &str)> {
        if self.kind != WireKind::PgCatalogRef {
            return None;
        }
        let (oid, text) = self.bytes.split_at_checked(4)?;
        Some((oid, std::str::from_utf8(text).ok()?))
    }

    /// The value's text form, when it is in the text format and UTF-8.
    pub fn text(&self) -> Option<&str> {
        (!self.binary)
            .then(|| std::str::from_utf8(&self.bytes).ok())
            .flatten()
    }
}

/// An array's elements (in row-major order), its dimensions and its element type.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The elements' type as a PostgreSQL type OID (arrays exist only there); it decides how
    /// the array is written to a shard and to a client.
    pub element: u32,
    /// Each dimension's length and lower bound, outermost first; none for an empty array.
    pub dims: Vec<Dim>,
    /// The elements, flattened in row-major order.
    pub elements: Vec<Value>,
}

/// One dimension of an [`Array`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    /// How many elements (or sub-arrays) it has.
    pub len: usize,
    /// The index of its first element (1 unless the array was written with bounds).
    pub lower: i32,
}

impl Array {
    /// A one-dimensional array of `elements` of type `element`, indexed from 1.
    pub fn new(element: u32, elements: Vec<Value>) -> Self {
        let dims = if elements.is_empty() {
            Vec::new()
        } else {
            vec![Dim {
                len: elements.len(),
                lower: 1,
            }]
        };
        Self {
            element,
            dims,
            elements,
        }
    }
}

impl Value {
    /// About the bytes the value takes, itself and what it owns: for the proxy's memory
    /// budget.
    pub fn size(&self) -> usize {
        let owned = match self {
            Value::Text(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Array(a) => a.elements.iter().map(Value::size).sum(),
            Value::Wire(w) => w.bytes.len(),
            Value::Null | Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Bool(_) => 0,
        };
        owned + std::mem::size_of::<Value>()
    }

    /// The value as an SQL literal of `dialect` (`'it''s'`, `NULL`, `X'0a'`).
    pub fn to_literal(&self, dialect: Dialect) -> String {
        let mut out = String::new();
        push_literal(&mut out, self, dialect);
        out
    }

    /// Whether a key column holding this value counts as absent, so a key is generated:
    /// NULL always, and 0 in MySQL, as MySQL's own AUTO_INCREMENT does (Java entities with a
    /// primitive `long id` send 0).
    pub fn means_generate(&self, zero_means_generate: bool) -> bool {
        match self {
            Value::Null => true,
            Value::Int(0) | Value::UInt(0) => zero_means_generate,
            _ => false,
        }
    }
}

/// Writes a value as an SQL literal of `dialect`.
pub fn push_literal(out: &mut String, value: &Value, dialect: Dialect) {
    match value {
        Value::Null => out.push_str("NULL"),
        // Keys and values are written per row: itoa skips fmt's machinery.
        Value::Int(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Value::UInt(v) => out.push_str(itoa::Buffer::new().format(*v)),
        // MySQL reads a number with an exponent as a DOUBLE (`3e0`), one without as an
        // integer or DECIMAL, whose arithmetic differs (`3 / 4` is 0.7500). PostgreSQL reads
        // either as numeric, which a float column takes; Debug keeps long digits short there.
        Value::Double(v) if v.is_finite() => {
            let _ = match dialect {
                Dialect::MySql => write!(out, "{v:e}"),
                Dialect::Postgres => write!(out, "{v:?}"),
            };
        }
        // Only PostgreSQL has them, and reads them from quoted text.
        Value::Double(v) => {
            let text = crate::float_text::postgres(*v, false, 1);
            push_literal(out, &Value::Text(text), dialect);
        }
        Value::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Value::Text(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    // MySQL reads a backslash in a string as an escape.
                    '\\' if dialect == Dialect::MySql => out.push_str("\\\\"),
                    _ => out.push(c),
                }
            }
            out.push('\'');
        }
        Value::Bytes(bytes) => {
            out.push_str(match dialect {
                Dialect::MySql => "X'",
                Dialect::Postgres => "'\\x",
            });
            for b in bytes {
                let _ = write!(out, "{b:02x}");
            }
            out.push('\'');
        }
        // A result value that comes back into SQL (a user variable set from a query, which
        // runs as text) is written as the string the database printed: it reads it back as
        // the type the context needs.
        // A float as a number, so that it compares as one.
        Value::Wire(wire) if let Some(v) = wire.float() => {
            push_literal(out, &Value::Double(v), dialect);
        }
        Value::Wire(wire) => {
            let text = String::from_utf8_lossy(&wire.bytes).into_owned();
            push_literal(out, &Value::Text(text), dialect);
        }
        // PostgreSQL reads the quoted text form as the array the context needs.
        Value::Array(array) => {
            let text = array::write_text(array, array::plain_element_text);
            push_literal(out, &Value::Text(text), dialect);
        }
    }
}
