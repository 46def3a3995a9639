use bytes::Bytes;

use crate::ext::ustr::UStr;
use crate::protocol::text::ColumnFlags;
use crate::{MySql, MySqlTypeInfo};
pub(crate) use sqlx_core::column::*;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "offline", derive(serde::Serialize, serde::Deserialize))]
pub struct MySqlColumn {
    pub(crate) ordinal: usize,
    pub(crate) name: UStr,
    pub(crate) type_info: MySqlTypeInfo,

    #[cfg_attr(feature = "offline", serde(skip))]
    pub(crate) flags: Option<ColumnFlags>,

    // keyshard: the rest of the server's column definition, which a proxy passes on.
    #[cfg_attr(feature = "offline", serde(skip))]
    pub(crate) definition: Option<MySqlColumnDefinition>,
}

/// keyshard: a result column's definition as the server sent it (the fields a proxy must pass
/// on that `MySqlTypeInfo` does not keep). The strings are slices of the packet, not copies.
#[derive(Debug, Clone, Default)]
pub struct MySqlColumnDefinition {
    pub(crate) schema: Bytes,
    pub(crate) table_alias: Bytes,
    pub(crate) table: Bytes,
    pub(crate) name: Bytes,
    pub(crate) collation: u16,
    pub(crate) length: u32,
    pub(crate) type_code: u8,
    pub(crate) flags: u16,
    pub(crate) decimals: u8,
    pub(crate) extended_type_info: Bytes,
}

impl MySqlColumnDefinition {
    /// The database of the table the column is read from (empty for an expression).
    pub fn schema(&self) -> &Bytes {
        &self.schema
    }

    /// The name the statement gave the table (its alias), empty for an expression.
    pub fn table_alias(&self) -> &Bytes {
        &self.table_alias
    }

    /// The table's own name, empty for an expression.
    pub fn table(&self) -> &Bytes {
        &self.table
    }

    /// The column's own name, before any alias (empty for an expression).
    pub fn org_name(&self) -> &Bytes {
        &self.name
    }

    /// The collation id of the values as sent (63: binary).
    pub fn collation(&self) -> u16 {
        self.collation
    }

    /// The display length.
    pub fn length(&self) -> u32 {
        self.length
    }

    /// The type code (`MYSQL_TYPE_*`).
    pub fn type_code(&self) -> u8 {
        self.type_code
    }

    /// The column flags as sent, every bit.
    pub fn flags(&self) -> u16 {
        self.flags
    }

    /// The digits after the decimal point (0x1f: not fixed).
    pub fn decimals(&self) -> u8 {
        self.decimals
    }

    /// MariaDB's extended type information as sent (pairs of a key byte, 0 type or 1 format,
    /// and a length-encoded value: `format` `json`, `type` `uuid`); empty from MySQL or for a
    /// column without any.
    pub fn extended_type_info(&self) -> &Bytes {
        &self.extended_type_info
    }
}

impl MySqlColumn {
    /// keyshard: the column's definition as the server sent it; `None` for a column sqlx
    /// made up itself.
    pub fn definition(&self) -> Option<&MySqlColumnDefinition> {
        self.definition.as_ref()
    }
}

impl Column for MySqlColumn {
    type Database = MySql;

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn type_info(&self) -> &MySqlTypeInfo {
        &self.type_info
    }
}
