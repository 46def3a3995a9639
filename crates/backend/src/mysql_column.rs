//! A MySQL shard's own description of a result column, so that a MySQL client is told what a
//! direct connection would tell it: the type code, every flag (NOT_NULL, PRI_KEY, PART_KEY,
//! BLOB, ENUM, SET, ZEROFILL …), `VARCHAR(100)`'s 400 bytes, `DECIMAL(10,2)`'s 2 decimals,
//! the collation that tells text (a `_bin` one, JSON) from bytes, where the column comes
//! from, and MariaDB's extended type information. sqlx 0.8.6 reads all of it and keeps only part; the copy in `vendor/sqlx-mysql` keeps
//! the rest (see `vendor/README.md`).

use bytes::Bytes;

/// What a MySQL shard said of a result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MySqlColumnType {
    /// The protocol's type code (`MYSQL_TYPE_*`).
    pub code: u8,
    /// The column definition's flags (`NOT_NULL_FLAG` …), every bit as sent.
    pub flags: u16,
    /// The maximum display length, in bytes.
    pub length: u32,
    /// The collation id of the values as sent: 63 for bytes, else the text's.
    pub collation: u16,
    /// Digits after the decimal point (0x1f: not fixed).
    pub decimals: u8,
    /// Where the column is read from, as the shard named it.
    pub origin: MySqlOrigin,
    /// MariaDB's extended type information as sent (`format json` marks a JSON column, which
    /// is a LONGTEXT on the wire); empty from MySQL and for most columns.
    pub extended_type_info: Bytes,
}

/// Where a MySQL result column comes from, in the shard's names (its database, the actual
/// table): the frontend puts the logical names in their place. All empty for an expression;
/// only `table_alias` and `name` for a derived table's column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MySqlOrigin {
    /// The database of the table.
    pub schema: Bytes,
    /// The table as the statement named it (its alias, or the table's own name).
    pub table_alias: Bytes,
    /// The table's own name.
    pub table: Bytes,
    /// The column's own name, before any alias.
    pub name: Bytes,
}

/// The description of `column`, when the shard sent one.
pub(crate) fn described(column: &sqlx::mysql::MySqlColumn) -> Option<MySqlColumnType> {
    let definition = column.definition()?;
    // Slices of the packet sqlx read: no copies.
    let origin = MySqlOrigin {
        schema: definition.schema().clone(),
        table_alias: definition.table_alias().clone(),
        table: definition.table().clone(),
        name: definition.org_name().clone(),
    };
    Some(MySqlColumnType {
        code: definition.type_code(),
        flags: definition.flags(),
        length: definition.length(),
        collation: definition.collation(),
        decimals: definition.decimals(),
        origin,
        extended_type_info: definition.extended_type_info().clone(),
    })
}
