//! Result-set column metadata, and its mapping from the type names backends report.

use keyshard_backend::{Column, MySqlColumnType, SqlType};
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

/// The most characters of a column's name MySQL and MariaDB send; a shard that is not one of
/// them (SQLite names a column by its expression) may give a longer one.
const MAX_NAME_CHARS: usize = 255;

/// `name` cut to [`MAX_NAME_CHARS`].
fn shown(name: &str) -> &str {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((end, _)) => &name[..end],
        None => name,
    }
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

    /// A column of type `ty`; one of a type the model does not know (SQLite reports none for
    /// expressions) is typed by `sample`, the column's first non-null value.
    pub fn of(name: &str, ty: SqlType, sample: Option<&Value>) -> Self {
        let name = shown(name);
        let mut column = match mysql_type(ty) {
            Some((column_type, length)) => Self::new(name, column_type, length),
            None => Self::from_sample(name, sample),
        };
        // String types that hold bytes rather than text get the binary character set.
        if matches!(ty, SqlType::Binary | SqlType::VarBinary) {
            column.charset = BINARY;
            column.flags |= ColumnFlags::BINARY_FLAG;
        }
        if matches!(
            ty,
            SqlType::Int { unsigned: true, .. } | SqlType::Decimal { unsigned: true }
        ) {
            column.flags |= ColumnFlags::UNSIGNED_FLAG;
        }
        column
    }

    /// A result column as the client is told it: as its MySQL shard described it, or else
    /// by its type (see [`ResultColumn::of`]).
    pub fn of_column(column: &Column, sample: Option<&Value>) -> Self {
        match column
            .mysql
            .and_then(|described| Self::described(&column.name, described, sample))
        {
            Some(described) => described,
            None => Self::of(&column.name, column.ty, sample),
        }
    }

    /// The shard's own description; `None` for a type code this protocol does not know.
    fn described(name: &str, described: MySqlColumnType, sample: Option<&Value>) -> Option<Self> {
        use ColumnType::*;
        let column_type = ColumnType::try_from(described.code).ok()?;
        let flags = ColumnFlags::from_bits_truncate(described.flags);
        let text_type = matches!(
            column_type,
            MYSQL_TYPE_VARCHAR
                | MYSQL_TYPE_VAR_STRING
                | MYSQL_TYPE_STRING
                | MYSQL_TYPE_ENUM
                | MYSQL_TYPE_SET
                | MYSQL_TYPE_TINY_BLOB
                | MYSQL_TYPE_MEDIUM_BLOB
                | MYSQL_TYPE_LONG_BLOB
                | MYSQL_TYPE_BLOB
                | MYSQL_TYPE_JSON
        );
        // A text column's collation is not among what sqlx keeps: utf8mb4, as the proxy's
        // connections read results in. A binary-flagged one holds bytes (or a _bin
        // collation's text, which this cannot tell apart).
        let charset = if text_type && !flags.contains(ColumnFlags::BINARY_FLAG) {
            UTF8MB4
        } else {
            BINARY
        };
        let decimals = match column_type {
            MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => NOT_FIXED_DEC,
            // DATETIME(n) is 19 characters and n digits after a point; TIME(n) 10 and n.
            MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP => fraction_digits(described.length, 19),
            MYSQL_TYPE_TIME => fraction_digits(described.length, 10),
            // The scale is not in what sqlx keeps; a value shows it.
            MYSQL_TYPE_NEWDECIMAL | MYSQL_TYPE_DECIMAL => sample_scale(sample),
            _ => 0,
        };
        Some(Self {
            name: shown(name).to_owned(),
            column_type,
            flags,
            charset,
            length: described.length,
            decimals,
        })
    }

    fn from_sample(name: &str, sample: Option<&Value>) -> Self {
        match sample {
            Some(Value::Int(_) | Value::Bool(_)) => Self::int(name),
            Some(Value::UInt(_)) => {
                let mut column = Self::int(name);
                column.flags |= ColumnFlags::UNSIGNED_FLAG;
                column
            }
            Some(Value::Double(_)) => Self::new(name, ColumnType::MYSQL_TYPE_DOUBLE, 22),
            Some(Value::Bytes(_)) => Self::new(name, ColumnType::MYSQL_TYPE_BLOB, 65_535),
            // Text holds anything: a string column is the safe guess. MySQL has no arrays; a
            // PostgreSQL shard's array reaches a MySQL client as its text form.
            Some(Value::Text(_) | Value::Null | Value::Array(_) | Value::Wire(_)) | None => {
                Self::text(name)
            }
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

/// The fraction digits of a temporal column `length` characters wide, `whole` without them.
fn fraction_digits(length: u32, whole: u32) -> u8 {
    match length.checked_sub(whole + 1) {
        Some(digits @ 1..=6) => u8::try_from(digits).unwrap_or(0),
        _ => 0,
    }
}

/// The digits after the point of a DECIMAL value.
fn sample_scale(sample: Option<&Value>) -> u8 {
    let text = match sample {
        Some(Value::Text(text)) => text.as_str(),
        _ => return 0,
    };
    text.split_once('.').map_or(0, |(_, fraction)| {
        u8::try_from(fraction.len().min(30)).unwrap_or(30)
    })
}

/// The MySQL type and display length of `ty`.
fn mysql_type(ty: SqlType) -> Option<(ColumnType, u32)> {
    use ColumnType::*;
    Some(match ty {
        SqlType::Bool => (MYSQL_TYPE_TINY, 1),
        SqlType::Int { bytes: 1, .. } => (MYSQL_TYPE_TINY, 4),
        SqlType::Int { bytes: 2, .. } => (MYSQL_TYPE_SHORT, 6),
        SqlType::Int { bytes: 3, .. } => (MYSQL_TYPE_INT24, 9),
        SqlType::Int { bytes: 4, .. } | SqlType::Oid => (MYSQL_TYPE_LONG, 11),
        SqlType::Int { .. } => (MYSQL_TYPE_LONGLONG, 20),
        SqlType::Float => (MYSQL_TYPE_FLOAT, 12),
        SqlType::Double => (MYSQL_TYPE_DOUBLE, 22),
        SqlType::Decimal { .. } => (MYSQL_TYPE_NEWDECIMAL, 65),
        SqlType::Year => (MYSQL_TYPE_YEAR, 4),
        SqlType::Date => (MYSQL_TYPE_DATE, 10),
        SqlType::DateTime => (MYSQL_TYPE_DATETIME, 26),
        SqlType::Timestamp => (MYSQL_TYPE_TIMESTAMP, 26),
        SqlType::Time => (MYSQL_TYPE_TIME, 17),
        SqlType::Char | SqlType::Enum | SqlType::Binary => (MYSQL_TYPE_STRING, 1020),
        // PostgreSQL's zoned and interval types print in forms no MySQL temporal type holds.
        SqlType::VarChar
        | SqlType::Text
        | SqlType::Name
        | SqlType::Uuid
        | SqlType::Zoned
        | SqlType::Array { .. }
        | SqlType::VarBinary => (MYSQL_TYPE_VAR_STRING, 1020),
        SqlType::Blob => (MYSQL_TYPE_BLOB, 65_535),
        SqlType::Json => (MYSQL_TYPE_JSON, 4_294_967_295),
        SqlType::Bit => (MYSQL_TYPE_BIT, 1),
        SqlType::Unknown => return None,
    })
}

#[cfg(test)]
mod tests {
    use ColumnType::*;
    use keyshard_config::DatabaseKind;

    use super::*;

    fn ty_of(name: &str) -> SqlType {
        SqlType::of(name, DatabaseKind::MySql)
    }
    use mysql_common::packets::Column;

    fn typed(type_name: &str, kind: DatabaseKind) -> (ColumnType, bool) {
        let c = ResultColumn::of("c", SqlType::of(type_name, kind), None);
        (c.column_type, c.flags.contains(ColumnFlags::UNSIGNED_FLAG))
    }

    fn ty(type_name: &str) -> (ColumnType, bool) {
        typed(type_name, DatabaseKind::MySql)
    }

    fn shard_described(code: u8, flags: u16, length: u32) -> keyshard_backend::Column {
        let mut column = keyshard_backend::Column::new("c", SqlType::Unknown);
        column.mysql = Some(MySqlColumnType {
            code,
            flags,
            length,
        });
        column
    }

    #[test]
    fn a_shard_description_is_passed_on_with_what_follows_from_it() {
        // TEXT NOT NULL: a BLOB-typed text column, 4 bytes a character.
        let text = ResultColumn::of_column(&shard_described(0xfc, 1 | 16, 262_140), None);
        assert_eq!(text.column_type, MYSQL_TYPE_BLOB);
        assert_eq!(
            text.flags,
            ColumnFlags::NOT_NULL_FLAG | ColumnFlags::BLOB_FLAG
        );
        assert_eq!((text.charset, text.length), (UTF8MB4, 262_140));
        // VARBINARY(16) holds bytes.
        let bytes = ResultColumn::of_column(&shard_described(0xfd, 128, 16), None);
        assert_eq!(bytes.charset, BINARY);
        // DATETIME(3) is 23 wide; TIME(6) 17.
        let datetime = ResultColumn::of_column(&shard_described(0x0c, 128, 23), None);
        assert_eq!(datetime.decimals, 3);
        let time = ResultColumn::of_column(&shard_described(0x0b, 128, 17), None);
        assert_eq!(time.decimals, 6);
        // A DECIMAL's scale shows in its values.
        let price = Value::Text("9.50".into());
        let decimal = ResultColumn::of_column(&shard_described(0xf6, 0, 12), Some(&price));
        assert_eq!((decimal.decimals, decimal.charset), (2, BINARY));
    }

    #[test]
    fn a_type_code_the_protocol_does_not_know_falls_back_to_the_type() {
        let mut column = shard_described(0x42, 0, 1);
        column.ty = SqlType::Int {
            bytes: 4,
            unsigned: false,
        };
        assert_eq!(
            ResultColumn::of_column(&column, None).column_type,
            MYSQL_TYPE_LONG
        );
    }

    #[test]
    fn names_are_cut_to_what_mysql_sends() {
        let long = "é".repeat(300);
        let column = ResultColumn::of(&long, ty_of("INT"), None);
        assert_eq!(column.name, "é".repeat(255));
        assert_eq!(ResultColumn::of("id", ty_of("INT"), None).name, "id");
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
        let pg = |name| typed(name, DatabaseKind::Postgres);
        let sqlite = |name| typed(name, DatabaseKind::Sqlite);
        assert_eq!(pg("INT8"), (MYSQL_TYPE_LONGLONG, false));
        assert_eq!(pg("INT4"), (MYSQL_TYPE_LONG, false));
        assert_eq!(pg("INTEGER"), (MYSQL_TYPE_LONG, false));
        assert_eq!(pg("FLOAT8"), (MYSQL_TYPE_DOUBLE, false));
        assert_eq!(pg("REAL"), (MYSQL_TYPE_FLOAT, false));
        assert_eq!(pg("BOOL"), (MYSQL_TYPE_TINY, false));
        assert_eq!(pg("BYTEA"), (MYSQL_TYPE_BLOB, false));
        assert_eq!(pg("TIMESTAMPTZ"), (MYSQL_TYPE_VAR_STRING, false));
        assert_eq!(sqlite("INTEGER"), (MYSQL_TYPE_LONGLONG, false));
        assert_eq!(sqlite("REAL"), (MYSQL_TYPE_DOUBLE, false));
    }

    #[test]
    fn unknown_names_fall_back_to_the_sample() {
        let from =
            |v: Option<Value>| ResultColumn::of("c", SqlType::Unknown, v.as_ref()).column_type;
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
            ResultColumn::of("a", SqlType::VarBinary, None).charset,
            BINARY
        );
        assert_eq!(ResultColumn::of("a", SqlType::Blob, None).charset, BINARY);
    }

    #[test]
    fn definition_decodes_with_mysql_common() {
        let def = ResultColumn::of("id", ty_of("BIGINT UNSIGNED"), None).definition();
        let column: Column = mysql_common::io::ParseBuf(&def).parse(()).unwrap();
        assert_eq!(column.name_str(), "id");
        assert_eq!(column.column_type(), MYSQL_TYPE_LONGLONG);
        assert!(column.flags().contains(ColumnFlags::UNSIGNED_FLAG));
        assert_eq!(column.character_set(), BINARY);
        assert_eq!(column.column_length(), 20);
    }
}
