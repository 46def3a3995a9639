//! Result-set column metadata, and its mapping from the type names backends report.

use bytes::Bytes;
use keyshard_backend::Column;
use keyshard_types::Value;
use keyshard_types::{MySqlColumnType, MySqlOrigin, SqlType};
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
    /// Where it is read from, in the names the client knows; `None` for a column Keyshard
    /// made (an expression's, named by itself).
    pub origin: Option<Origin>,
    /// MariaDB's extended type information, as the shard sent it (`format json`).
    pub extended_type_info: Bytes,
}

/// Where a result column is read from: `schema`, `table`, `org_table` and `org_name` of the
/// column definition, empty as the database leaves them for an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The logical database.
    pub schema: Bytes,
    /// The table as the statement named it: its alias, or the logic table.
    pub table: Bytes,
    /// The logic table (or an unsharded table's own name).
    pub org_table: Bytes,
    /// The column's own name.
    pub org_name: Bytes,
}

/// What a shard's names are to the client: the logical database and each actual table's logic
/// table.
pub struct Naming<'a> {
    /// The logical database (`databaseName`).
    pub database: &'a Bytes,
    /// The logic table an actual table belongs to.
    pub logic_table: &'a dyn Fn(&str) -> Option<&'a str>,
}

impl Naming<'_> {
    fn origin(&self, shard: &MySqlOrigin) -> Origin {
        let org_table = std::str::from_utf8(&shard.table)
            .ok()
            .and_then(|name| (self.logic_table)(name))
            .map_or_else(
                || shard.table.clone(),
                |logic| Bytes::copy_from_slice(logic.as_bytes()),
            );
        // Without an alias the shard saw the actual table's name, which stands for the logic
        // table's; an alias of the statement's own (or a derived table's) stays.
        let table = if !shard.table.is_empty() && shard.table_alias == shard.table {
            org_table.clone()
        } else {
            shard.table_alias.clone()
        };
        let schema = if shard.schema.is_empty() {
            Bytes::new()
        } else {
            self.database.clone()
        };
        Origin {
            schema,
            table,
            org_table,
            org_name: shard.name.clone(),
        }
    }
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
            origin: None,
            extended_type_info: Bytes::new(),
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

    /// A result column as the client is told it: as its MySQL shard described it (its table
    /// named by `naming`), or else by its type (see [`ResultColumn::of`]).
    pub fn of_column(column: &Column, sample: Option<&Value>, naming: Option<&Naming>) -> Self {
        match column
            .mysql
            .as_ref()
            .and_then(|described| Self::described(&column.name, described, naming))
        {
            Some(described) => described,
            None => Self::of(&column.name, column.ty, sample),
        }
    }

    /// The shard's own description; `None` for a type code this protocol does not know.
    fn described(name: &str, described: &MySqlColumnType, naming: Option<&Naming>) -> Option<Self> {
        let column_type = ColumnType::try_from(described.code).ok()?;
        Some(Self {
            name: shown(name).to_owned(),
            column_type,
            flags: ColumnFlags::from_bits_retain(described.flags),
            // The shard connection's character set for text (a `_bin` collation's and JSON's
            // too), 63 for bytes: what tells a client to decode a value or not.
            charset: described.collation,
            length: described.length,
            decimals: described.decimals,
            origin: naming.map(|naming| naming.origin(&described.origin)),
            extended_type_info: described.extended_type_info.clone(),
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

    /// The column definition packet's payload (Protocol::ColumnDefinition41), with MariaDB's
    /// extended type information where the client negotiated it (`extended_metadata`).
    ///
    /// Encoded by hand: mysql_common 0.38's `Column` serializer writes the column length
    /// before the character set, the reverse of the protocol (its parser reads them right).
    pub(super) fn definition(&self, extended_metadata: bool) -> Vec<u8> {
        let mut buf = Vec::new();
        self.put_definition(&mut buf, extended_metadata);
        buf
    }

    /// Appends the column definition (see [`ResultColumn::definition`]) to `buf`.
    pub(super) fn put_definition(&self, buf: &mut Vec<u8>, extended_metadata: bool) {
        let name = self.name.as_bytes();
        let strings = match &self.origin {
            Some(o) => o.schema.len() + o.table.len() + o.org_table.len() + o.org_name.len(),
            None => name.len(),
        } + name.len()
            + self.extended_type_info.len();
        // Seven length-encoded strings (a prefix of at most nine bytes each, "def" and the
        // extended metadata among them) and the 13 bytes of fixed fields: reserved once, as
        // growing the buffer piece by piece reallocated it.
        buf.reserve(strings + 3 + 7 * 9 + 13);
        put_lenenc_bytes(buf, b"def");
        match &self.origin {
            Some(origin) => {
                put_lenenc_bytes(buf, &origin.schema);
                put_lenenc_bytes(buf, &origin.table);
                put_lenenc_bytes(buf, &origin.org_table);
                put_lenenc_bytes(buf, name);
                put_lenenc_bytes(buf, &origin.org_name);
            }
            // An expression: no table, and its name is its own.
            None => {
                put_lenenc_bytes(buf, b"");
                put_lenenc_bytes(buf, b"");
                put_lenenc_bytes(buf, b"");
                put_lenenc_bytes(buf, name);
                put_lenenc_bytes(buf, name);
            }
        }
        if extended_metadata {
            put_lenenc_bytes(buf, &self.extended_type_info);
        }
        buf.push(0x0c); // length of the fixed-length fields
        buf.extend_from_slice(&self.charset.to_le_bytes());
        buf.extend_from_slice(&self.length.to_le_bytes());
        buf.push(self.column_type as u8);
        buf.extend_from_slice(&self.flags.bits().to_le_bytes());
        buf.push(self.decimals);
        buf.extend_from_slice(&[0, 0]);
    }
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
        column.mysql = Some(Box::new(MySqlColumnType {
            code,
            flags,
            length,
            collation: UTF8MB4,
            decimals: 0,
            extended_type_info: Bytes::new(),
            origin: MySqlOrigin::default(),
        }));
        column
    }

    fn naming_test<T>(check: impl FnOnce(&Naming) -> T) -> T {
        let database = Bytes::from_static(b"sharding_db");
        let logic = |actual: &str| (actual == "t_order_1").then_some("t_order");
        check(&Naming {
            database: &database,
            logic_table: &logic,
        })
    }

    #[test]
    fn a_shard_description_is_passed_on_as_it_came() {
        // TEXT NOT NULL PART_KEY: a BLOB-typed text column, 4 bytes a character.
        let text =
            ResultColumn::of_column(&shard_described(0xfc, 1 | 16 | 0x4000, 262_140), None, None);
        assert_eq!(text.column_type, MYSQL_TYPE_BLOB);
        assert_eq!(text.flags.bits(), 1 | 16 | 0x4000);
        assert_eq!((text.charset, text.length), (UTF8MB4, 262_140));
        // A _bin text or JSON column is BINARY-flagged, yet text: the collation tells.
        let mut json = shard_described(0xfc, 128 | 16, 4_294_967_295);
        if let Some(described) = &mut json.mysql {
            described.decimals = 0x1f;
        }
        let json = ResultColumn::of_column(&json, None, None);
        assert_eq!((json.charset, json.decimals), (UTF8MB4, 0x1f));
    }

    #[test]
    fn a_shard_table_is_named_as_the_client_knows_it() {
        let mut column = shard_described(0x08, 1, 20);
        if let Some(described) = &mut column.mysql {
            described.origin = MySqlOrigin {
                schema: Bytes::from_static(b"shard_1"),
                table_alias: Bytes::from_static(b"t_order_1"),
                table: Bytes::from_static(b"t_order_1"),
                name: Bytes::from_static(b"order_id"),
            };
        }
        let origin = naming_test(|naming| ResultColumn::of_column(&column, None, Some(naming)))
            .origin
            .expect("named");
        assert_eq!(&origin.schema[..], b"sharding_db");
        assert_eq!(
            (&origin.table[..], &origin.org_table[..]),
            (&b"t_order"[..], &b"t_order"[..])
        );
        assert_eq!(&origin.org_name[..], b"order_id");
        // An alias of the statement's own stays; an expression has no table.
        if let Some(described) = &mut column.mysql {
            described.origin.table_alias = Bytes::from_static(b"o");
        }
        let origin = naming_test(|naming| ResultColumn::of_column(&column, None, Some(naming)))
            .origin
            .expect("named");
        assert_eq!(&origin.table[..], b"o");
        if let Some(described) = &mut column.mysql {
            described.origin = MySqlOrigin::default();
        }
        let origin = naming_test(|naming| ResultColumn::of_column(&column, None, Some(naming)))
            .origin
            .expect("named");
        assert!(origin.schema.is_empty() && origin.table.is_empty() && origin.org_name.is_empty());
    }

    #[test]
    fn a_type_code_the_protocol_does_not_know_falls_back_to_the_type() {
        let mut column = shard_described(0x42, 0, 1);
        column.ty = SqlType::Int {
            bytes: 4,
            unsigned: false,
        };
        assert_eq!(
            ResultColumn::of_column(&column, None, None).column_type,
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
        let def = ResultColumn::of("id", ty_of("BIGINT UNSIGNED"), None).definition(false);
        let column: Column = mysql_common::io::ParseBuf(&def).parse(()).unwrap();
        assert_eq!(column.name_str(), "id");
        assert_eq!(column.column_type(), MYSQL_TYPE_LONGLONG);
        assert!(column.flags().contains(ColumnFlags::UNSIGNED_FLAG));
        assert_eq!(column.character_set(), BINARY);
        assert_eq!(column.column_length(), 20);
    }
}
