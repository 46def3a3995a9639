//! What Describe answers: the parameter types and the result columns, each column as
//! RowDescription reports it.

use std::sync::Arc;

use keyshard_backend::{Column, PgEnumColumn};

/// A result column as RowDescription reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The column name.
    pub name: String,
    /// Its type.
    pub oid: u32,
    /// Its type modifier (`varchar(20)`: 24), -1 for none.
    pub typmod: i32,
    /// A column of a user-defined enum or an array of one.
    pub pg_enum: Option<PgEnumColumn>,
    /// The type's size as the shard described the column, when it is described with the
    /// shard's type.
    pub shard_size: Option<i16>,
    /// The table OID and column number RowDescription tells, as the logical database shows
    /// the table (see `keyshard_backend`'s `origins`); `None`: 0, not from a table.
    pub origin: Option<(u32, i16)>,
}

impl Field {
    /// A column of type `oid` without a type modifier.
    pub fn new(name: impl Into<String>, oid: u32) -> Self {
        Self {
            name: name.into(),
            oid,
            typmod: -1,
            pg_enum: None,
            shard_size: None,
            origin: None,
        }
    }

    /// The type size RowDescription reports: the shard's, else an enum's 4 (as its catalog
    /// row says), else the type's own (see [`crate::postgres::types::size_of`]).
    pub fn size(&self) -> i16 {
        match (self.shard_size, self.pg_enum) {
            (Some(size), _) => size,
            (None, Some(PgEnumColumn::Enum)) => 4,
            _ => crate::postgres::types::size_of(self.oid),
        }
    }

    /// The column `column` of a shard's result or a table, typed `oid`.
    pub fn of_column(column: &Column, oid: u32) -> Self {
        Self {
            name: column.name.clone(),
            oid,
            typmod: column.typmod,
            pg_enum: column.pg_enum,
            shard_size: column.pg_size.filter(|_| column.oid == Some(oid)),
            origin: column.pg_origin,
        }
    }
}

/// The result columns of a statement, as far as they can be known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fields {
    /// It returns no rows (NoData).
    None,
    /// These columns, shared: each Describe and Execute of a portal hands them on.
    Known(Arc<[Field]>),
    /// It returns rows whose columns only running it tells.
    Unknown,
}

/// Parameter types and result columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// One OID per parameter.
    pub params: Vec<u32>,
    /// The result columns.
    pub fields: Fields,
    /// Why the statement does not parse, when it does not and is no session statement.
    pub syntax_error: Option<String>,
}
