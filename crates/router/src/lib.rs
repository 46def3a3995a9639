//! Keyshard's router: a statement and its parameters → a [`Plan`]: per data node, the rewritten
//! statement and its parameters; for INSERTs the generated keys, for reads over several nodes
//! how their rows merge.
//!
//! The pipeline follows ShardingSphere's kernel: parse (once per prepared statement), bind,
//! generate keys, route, rewrite. Rewriting splices the original text — it never prints the
//! AST, which would normalise the statement and, for MySQL backslash escapes, change data.
//! Pure library code: no I/O, no async.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod binding;
mod budget;
mod catalog;
mod copy_out;
mod ddl;
mod direct;
mod error;
mod explain;
mod found_rows;
mod hint;
mod insert;
pub mod leading;
mod literal;
mod locate;
mod logical_names;
pub mod merge;
mod metadata;
pub mod names;
mod parse;
mod placeholders;
mod plan;
mod prepare;
mod prepared;
mod query;
pub use query::gather;
mod replica_reads;
mod route;
mod router;
mod select_into;
mod sequences;
mod session_values;
mod shape;
mod single;
mod table_locks;
mod template;
mod tokens;
mod unparsed;
mod unsharded;

pub use budget::{MAX_OPERATOR_CHAIN, tokenize};
pub use catalog::{
    CatalogColumn, CatalogViews, LogicalNames, SESSIONS, catalog_columns_sql, with_sessions,
};
pub use ddl::DdlPlan;
pub use direct::Direct;
pub use error::RouteError;
pub use explain::Explain;
pub use found_rows::{CalcFoundRows, calc_found_rows};
pub use insert::PreparedInsert;
pub use insert::select::InsertSelect;
pub use leading::Leading;
pub use metadata::{Metadata, NoMetadata};
pub use parse::Parsed;
pub use placeholders::{bind_placeholders, replace_placeholders};
pub use plan::{BatchRow, ExecutionUnit, MoveGuard, Plan};
pub use prepared::{Other, Prepared};
pub use query::PreparedQuery;
pub use router::Router;
pub use select_into::{SelectInto, select_into_variables};
pub use sequences::{SequenceUse, mariadb_sequences};
pub use session_values::{SessionValues, substitute_session_values};
pub use shape::Shape;
pub use single::SingleTables;
pub use table_locks::{LockKind, TableLocks};
pub use template::push_rows;
