//! A MySQL shard's description of a result column, as sqlx read it (the copy in
//! `vendor/sqlx-mysql` keeps every field: see `vendor/README.md`).

use keyshard_types::{MySqlColumnType, MySqlOrigin};

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
