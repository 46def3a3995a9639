//! Result-set column metadata, and its mapping from the type names backends report.

use keyshard_router::Value;
use mysql_common::constants::{ColumnFlags, ColumnType};

use crate::mysql::protocol::wire::put_lenenc_bytes;

/// `binary`: the character set of numbers, dates and blobs.
const BINARY: u16 = 63;
/// utf8mb4_general_ci, the character set of text columns.
const UTF8MB4: u16 = 45;
/// MySQL's NOT_FIXED_DEC: the number of decimals is not fixed (floating-point columns).
const NOT_FIXED_DEC: u8 = 0x1f;

/// One column of a result set as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultColumn {
    /// Column name (or alias).
    pub name: String,
    /// Declared type; binary-protocol rows are encoded according to it.
    pub column_type: ColumnType,
    /// UNSIGNED_FLAG, BINARY_FLAG, NOT_NULL_FLAG …
    pub flags: ColumnFlags,
    /// Collation id: 63 binary, 45 or 255 utf8mb4.
    pub charset: u16,
    /// Maximum display length.
    pub length: u32,
    /// Digits after the decimal point; 0x1f when not fixed.
    pub decimals: u8,
}

impl ResultColumn {
    fn new(name: impl Into<String>, column_type: ColumnType, length: u32) -> Self {
        use ColumnType::*;
        let (charset, flags, decimals) = match column_type {
            MYSQL_TYPE_VARCHAR | MYSQL_TYPE_VAR_STRING | MYSQL_TYPE_STRING => {
                (UTF8MB4, ColumnFlags::empty(), 0)
            }
            MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => {
                (BINARY, ColumnFlags::BINARY_FLAG, NOT_FIXED_DEC)
            }
            _ => (BINARY, ColumnFlags::BINARY_FLAG, 0),
        };
        Self {
            name: name.into(),
            column_type,
            flags,
            charset,
            length,
            decimals,
        }
    }

    /// A utf8mb4 VAR_STRING column.
    pub fn text(name: impl Into<String>) -> Self {
        Self::new(name, ColumnType::MYSQL_TYPE_VAR_STRING, 1020)
    }

    /// A signed BIGINT column.
    pub fn int(name: impl Into<String>) -> Self {
        Self::new(name, ColumnType::MYSQL_TYPE_LONGLONG, 20)
    }

    /// A column from the type name a backend reports through sqlx — MySQL (`BIGINT UNSIGNED`,
    /// `VARCHAR`, `DATETIME` …), PostgreSQL (`INT8`, `TEXT`, `BOOL`, `BYTEA` …) or SQLite
    /// (`INTEGER`, `REAL`, `BLOB` …) — and, for a name it does not know (SQLite reports `NULL`
    /// for expressions), from the kind of `sample`, the column's first non-null value.
    pub fn from_type_name(name: &str, type_name: &str, sample: Option<&Value>) -> Self {
        let upper = type_name.trim().to_ascii_uppercase();
        // "VARCHAR(255)", "DECIMAL(10,2)" and "INT(11) ZEROFILL" name the same types as their
        // first words; only UNSIGNED matters here.
        let unsigned = upper.contains("UNSIGNED");
        let base = base_type_name(&upper);
        let base = base.as_str();
        let mut column = match type_from_name(base) {
            Some((column_type, length)) => Self::new(name, column_type, length),
            None => Self::from_sample(name, sample),
        };
        if let Some(charset) = binary_string(base) {
            column.charset = charset;
            column.flags |= ColumnFlags::BINARY_FLAG;
        }
        if unsigned {
            column.flags |= ColumnFlags::UNSIGNED_FLAG;
        }
        column
    }

    fn from_sample(name: &str, sample: Option<&Value>) -> Self {
        match sample {
            Some(Value::Int(_)) => Self::int(name),
            Some(Value::UInt(_)) => {
                let mut column = Self::int(name);
                column.flags |= ColumnFlags::UNSIGNED_FLAG;
                column
            }
            Some(Value::Double(_)) => Self::new(name, ColumnType::MYSQL_TYPE_DOUBLE, 22),
            Some(Value::Bytes(_)) => Self::new(name, ColumnType::MYSQL_TYPE_BLOB, 65_535),
            // Text holds anything: a string column is the safe guess.
            Some(Value::Text(_) | Value::Null) | None => Self::text(name),
        }
    }

    /// The column definition packet's payload (Protocol::ColumnDefinition41).
    ///
    /// Encoded by hand: mysql_common 0.38's `Column` serializer writes the column length
    /// before the character set, the reverse of the protocol (its parser reads them right).
    pub(super) fn definition(&self) -> Vec<u8> {
        let name = self.name.as_bytes();
        let mut buf = Vec::with_capacity(32 + 2 * name.len());
        put_lenenc_bytes(&mut buf, b"def");
        put_lenenc_bytes(&mut buf, b""); // schema
        put_lenenc_bytes(&mut buf, b""); // table
        put_lenenc_bytes(&mut buf, b""); // org_table
        put_lenenc_bytes(&mut buf, name);
        put_lenenc_bytes(&mut buf, name); // org_name
        buf.push(0x0c); // length of the fixed-length fields
        buf.extend_from_slice(&self.charset.to_le_bytes());
        buf.extend_from_slice(&self.length.to_le_bytes());
        buf.push(self.column_type as u8);
        buf.extend_from_slice(&self.flags.bits().to_le_bytes());
        buf.push(self.decimals);
        buf.extend_from_slice(&[0, 0]);
        buf
    }
}

/// The type name without arguments in parentheses and without sign or fill modifiers.
fn base_type_name(upper: &str) -> String {
    let mut depth = 0usize;
    let bare: String = upper
        .chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    bare.split_whitespace()
        .filter(|w| !matches!(*w, "UNSIGNED" | "SIGNED" | "ZEROFILL"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The MySQL type and display length for a backend type name (upper case, no arguments).
fn type_from_name(name: &str) -> Option<(ColumnType, u32)> {
    use ColumnType::*;
    let mapped = match name {
        "BOOL" | "BOOLEAN" => (MYSQL_TYPE_TINY, 1),
        "TINYINT" => (MYSQL_TYPE_TINY, 4),
        "SMALLINT" | "INT2" | "SMALLSERIAL" => (MYSQL_TYPE_SHORT, 6),
        "MEDIUMINT" => (MYSQL_TYPE_INT24, 9),
        "INT" | "INT4" | "SERIAL" => (MYSQL_TYPE_LONG, 11),
        // SQLite's INTEGER is 64-bit, unlike MySQL's: only BIGINT is wide enough for it.
        "BIGINT" | "INT8" | "INTEGER" | "BIGSERIAL" => (MYSQL_TYPE_LONGLONG, 20),
        "FLOAT" | "FLOAT4" => (MYSQL_TYPE_FLOAT, 12),
        "DOUBLE" | "DOUBLE PRECISION" | "REAL" | "FLOAT8" => (MYSQL_TYPE_DOUBLE, 22),
        "DECIMAL" | "NUMERIC" | "DEC" => (MYSQL_TYPE_NEWDECIMAL, 65),
        "YEAR" => (MYSQL_TYPE_YEAR, 4),
        "DATE" => (MYSQL_TYPE_DATE, 10),
        "DATETIME" => (MYSQL_TYPE_DATETIME, 26),
        "TIMESTAMP" => (MYSQL_TYPE_TIMESTAMP, 26),
        "TIME" => (MYSQL_TYPE_TIME, 17),
        "CHAR" | "BPCHAR" | "ENUM" | "SET" | "BINARY" => (MYSQL_TYPE_STRING, 1020),
        // PostgreSQL's zoned and interval types print in forms no MySQL temporal type holds.
        "VARCHAR" | "CHARACTER VARYING" | "TEXT" | "TINYTEXT" | "MEDIUMTEXT" | "LONGTEXT"
        | "NAME" | "UUID" | "TIMESTAMPTZ" | "TIMETZ" | "INTERVAL" | "VARBINARY" => {
            (MYSQL_TYPE_VAR_STRING, 1020)
        }
        "BLOB" | "TINYBLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BYTEA" => (MYSQL_TYPE_BLOB, 65_535),
        "JSON" | "JSONB" => (MYSQL_TYPE_JSON, 4_294_967_295),
        "BIT" => (MYSQL_TYPE_BIT, 1),
        _ => return None,
    };
    Some(mapped)
}

/// String types that hold bytes rather than text: they get the binary character set.
fn binary_string(name: &str) -> Option<u16> {
    matches!(name, "BINARY" | "VARBINARY").then_some(BINARY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ColumnType::*;
    use mysql_common::packets::Column;

    fn ty(type_name: &str) -> (ColumnType, bool) {
        let c = ResultColumn::from_type_name("c", type_name, None);
        (c.column_type, c.flags.contains(ColumnFlags::UNSIGNED_FLAG))
    }

    #[test]
    fn maps_mysql_type_names() {
        assert_eq!(ty("BIGINT"), (MYSQL_TYPE_LONGLONG, false));
        assert_eq!(ty("BIGINT UNSIGNED"), (MYSQL_TYPE_LONGLONG, true));
        assert_eq!(ty("int(11) unsigned"), (MYSQL_TYPE_LONG, true));
        assert_eq!(ty("VARCHAR"), (MYSQL_TYPE_VAR_STRING, false));
        assert_eq!(ty("TEXT"), (MYSQL_TYPE_VAR_STRING, false));
        assert_eq!(ty("DOUBLE"), (MYSQL_TYPE_DOUBLE, false));
        assert_eq!(ty("DECIMAL"), (MYSQL_TYPE_NEWDECIMAL, false));
        assert_eq!(ty("DATETIME"), (MYSQL_TYPE_DATETIME, false));
        assert_eq!(ty("BLOB"), (MYSQL_TYPE_BLOB, false));
        assert_eq!(ty("TINYINT(1)"), (MYSQL_TYPE_TINY, false));
        assert_eq!(
            ty("decimal(10,2) unsigned zerofill"),
            (MYSQL_TYPE_NEWDECIMAL, true)
        );
        assert_eq!(ty("ENUM('a','b')"), (MYSQL_TYPE_STRING, false));
    }

    #[test]
    fn maps_postgres_and_sqlite_type_names() {
        assert_eq!(ty("INT8"), (MYSQL_TYPE_LONGLONG, false));
        assert_eq!(ty("INT4"), (MYSQL_TYPE_LONG, false));
        assert_eq!(ty("FLOAT8"), (MYSQL_TYPE_DOUBLE, false));
        assert_eq!(ty("BOOL"), (MYSQL_TYPE_TINY, false));
        assert_eq!(ty("BYTEA"), (MYSQL_TYPE_BLOB, false));
        assert_eq!(ty("TIMESTAMPTZ"), (MYSQL_TYPE_VAR_STRING, false));
        assert_eq!(ty("INTEGER"), (MYSQL_TYPE_LONGLONG, false));
        assert_eq!(ty("REAL"), (MYSQL_TYPE_DOUBLE, false));
    }

    #[test]
    fn unknown_names_fall_back_to_the_sample() {
        let from =
            |v: Option<Value>| ResultColumn::from_type_name("c", "NULL", v.as_ref()).column_type;
        assert_eq!(from(Some(Value::Int(1))), MYSQL_TYPE_LONGLONG);
        assert_eq!(from(Some(Value::Double(1.5))), MYSQL_TYPE_DOUBLE);
        assert_eq!(from(Some(Value::Bytes(vec![1]))), MYSQL_TYPE_BLOB);
        assert_eq!(from(Some(Value::Text("x".into()))), MYSQL_TYPE_VAR_STRING);
        assert_eq!(from(None), MYSQL_TYPE_VAR_STRING);
    }

    #[test]
    fn charsets_tell_text_from_binary() {
        assert_eq!(ResultColumn::text("a").charset, UTF8MB4);
        assert_eq!(ResultColumn::int("a").charset, BINARY);
        assert_eq!(
            ResultColumn::from_type_name("a", "VARBINARY", None).charset,
            BINARY
        );
        assert_eq!(
            ResultColumn::from_type_name("a", "BLOB", None).charset,
            BINARY
        );
    }

    #[test]
    fn definition_decodes_with_mysql_common() {
        let def = ResultColumn::from_type_name("id", "BIGINT UNSIGNED", None).definition();
        let column: Column = mysql_common::io::ParseBuf(&def).parse(()).unwrap();
        assert_eq!(column.name_str(), "id");
        assert_eq!(column.column_type(), MYSQL_TYPE_LONGLONG);
        assert!(column.flags().contains(ColumnFlags::UNSIGNED_FLAG));
        assert_eq!(column.character_set(), BINARY);
        assert_eq!(column.column_length(), 20);
    }
}
