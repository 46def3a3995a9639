//! Keyshard's value and type model, shared by every other crate: the values that flow through a
//! plan and back from the shards ([`Value`], [`Wire`]), the client's SQL [`Dialect`], the
//! [`DatabaseKind`] behind a data source, column types ([`SqlType`], [`MySqlColumnType`]),
//! PostgreSQL arrays (text and binary layout), NUMERIC arithmetic, float printing, and how wire
//! values order. Pure code: no I/O, no database driver, no other Keyshard crate, so a crate
//! that needs a value depends on this one alone.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod float_text;
mod integer_text;
mod mysql_column;
pub mod numeric;
pub mod pg_array;
mod sql_type;
mod value;
pub mod wire;

pub use integer_text::ascii_i64;
pub use mysql_column::{MySqlColumnType, MySqlOrigin, average_of_sum};
pub use sql_type::SqlType;
pub use value::array;
pub use value::{Array, Dim, Value, Wire, WireKind, push_literal};

/// The SQL dialect of the client, which decides parsing, placeholders and MySQL's `0` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL/MariaDB: `?` placeholders; a key given as 0 is generated (AUTO_INCREMENT's rule).
    MySql,
    /// PostgreSQL: `$n` placeholders.
    Postgres,
}

/// The database behind a data source, from its URL scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatabaseKind {
    /// MySQL or MariaDB (`mysql://`, `mariadb://`).
    MySql,
    /// PostgreSQL (`postgres://`, `postgresql://`).
    Postgres,
    /// SQLite (`sqlite:`), a file or `:memory:` (quote `"sqlite::memory:"` in YAML: a plain
    /// scalar may not end with a colon).
    Sqlite,
}
