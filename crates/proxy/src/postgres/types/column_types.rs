//! Which type OID a column is described with: from its type in Keyshard's model, from the
//! values it holds, or as the PostgreSQL shard gave it.

use keyshard_backend::Column;
use keyshard_types::pg_array::{array_oid_of, element_oid_of};
use keyshard_types::{SqlType, Value, numeric};

use super::oid;

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

/// The OID for a result column of type `ty` that holds `values`: the named type, widened to
/// BIGINT when an integer does not fit the narrower type, or TEXT when a value is not a number
/// at all (SQLite stores any value in any column).
pub fn oid_for_values<'a>(ty: SqlType, values: impl Iterator<Item = &'a Value> + Clone) -> u32 {
    let declared = oid_of(ty);
    // Nearly every column holds only values of its named type: one quick pass over them
    // tells, and only a column holding another value is typed by the scan.
    if values.clone().all(|value| holds_as_named(declared, value)) {
        return declared;
    }
    scanned(declared, values)
}

/// Whether `value` leaves a column described as `oid` so, whatever the rest hold: exactly the
/// values for which [`scanned`] keeps `oid`, for the types most columns are of.
fn holds_as_named(oid: u32, value: &Value) -> bool {
    match (oid, value) {
        (_, Value::Null) => true,
        (oid::INT8 | oid::BOOL | oid::OID, Value::Int(_)) | (oid::BOOL, Value::Bool(_)) => true,
        (oid::INT4, Value::Int(v)) => i32::try_from(*v).is_ok(),
        (oid::INT2, Value::Int(v)) => i16::try_from(*v).is_ok(),
        (oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME, value) => {
            !matches!(value, Value::Array(_))
        }
        _ => false,
    }
}

/// The OID a column described as `declared` takes on, value by value.
fn scanned<'a>(declared: u32, values: impl Iterator<Item = &'a Value>) -> u32 {
    let mut oid = declared;
    // Asked once per type the column takes on, not once per value.
    let mut array = element_oid_of(oid).is_some();
    for value in values {
        let next = match (oid, value) {
            (_, Value::Null) => oid,
            // An array column keeps its declared type; one typed by its values (an expression
            // such as `array_agg(x)`) takes its elements' array type.
            (_, Value::Array(_)) if array => oid,
            (_, Value::Array(a)) => array_oid_of(a.element).unwrap_or(oid::TEXT_ARRAY),
            (_, _) if array => oid::TEXT,
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
        if next != oid {
            oid = next;
            array = element_oid_of(oid).is_some();
        }
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

/// Whether `text` is a NUMERIC value as PostgreSQL prints one (a SQLite column declared
/// NUMERIC may hold any text, which then travels as text).
fn is_numeric_text(text: &str) -> bool {
    plain_decimal(text)
        || matches!(text, "NaN" | "Infinity" | "-Infinity")
        || numeric::text_to_binary(text).is_some()
}

/// Whether `text` is a short `[-]digits[.digits]`: what nearly every NUMERIC value is, told
/// without the binary form `text_to_binary` builds (about 1,300 instructions a price). Every
/// text it accepts, `text_to_binary` does: 1,000 bytes keep the scale, the digit groups and the
/// weight within their 16 bits.
fn plain_decimal(text: &str) -> bool {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    text.len() <= 1_000
        && int.len() + frac.len() > 0
        && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keyshard_types::{Array, DatabaseKind};

    /// Every text the quick decimal check accepts is a NUMERIC by the full conversion, over
    /// every text of up to five bytes drawn from digits, signs, points, spaces and `e`.
    #[test]
    fn plain_decimals_are_numeric() {
        let alphabet = b"09-+. e";
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |&c| format!("{t}{}", c as char)))
                .collect();
            texts.extend(longer);
        }
        texts.push("1".repeat(1_000));
        texts.push(format!("-{}.{}", "9".repeat(500), "1".repeat(498)));
        let mut accepted = 0;
        for text in &texts {
            if plain_decimal(text) {
                accepted += 1;
                assert!(numeric::text_to_binary(text).is_some(), "{text:?}");
            }
        }
        assert!(accepted > 500, "{accepted}");
        for rejected in ["", "-", ".", "-.", "1.2.3", "+1", " 1", "1e5", "１"] {
            assert!(!plain_decimal(rejected), "{rejected:?}");
        }
        assert!(!plain_decimal(&"1".repeat(1_001)));
    }

    /// The quick pass answers as the scan does, for every type a column can be named and
    /// every kind of value, alone and in pairs (the order values come in matters to the scan).
    #[test]
    fn the_quick_pass_agrees_with_the_scan() {
        let types = [
            "BIGINT",
            "INTEGER",
            "SMALLINT",
            "BOOLEAN",
            "OID",
            "TEXT",
            "VARCHAR",
            "CHAR",
            "NAME",
            "NUMERIC",
            "REAL",
            "DOUBLE PRECISION",
            "BYTEA",
            "INTEGER[]",
            "JSON",
        ];
        let values = [
            Value::Null,
            Value::Int(7),
            Value::Int(-40_000),
            Value::Int(1 << 40),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Bool(true),
            Value::Text("12.5".into()),
            Value::Text("x".into()),
            Value::Bytes(vec![1]),
            Value::Array(Array {
                element: oid::INT4,
                dims: Vec::new(),
                elements: Vec::new(),
            }),
        ];
        for name in types {
            let ty = SqlType::of(name, DatabaseKind::Postgres);
            let declared = oid_of(ty);
            for a in &values {
                for b in &values {
                    let pair = [a.clone(), b.clone()];
                    assert_eq!(
                        oid_for_values(ty, pair.iter()),
                        scanned(declared, pair.iter()),
                        "{name}: {a:?}, {b:?}"
                    );
                }
            }
        }
    }
}
