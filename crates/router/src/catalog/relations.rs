//! The catalog relations the logical view presents in each dialect, and the statement that
//! reads their columns from a shard once, at start.

use keyshard_types::{Dialect, Value};

/// The catalog relations this module presents, by the database's dialect: the name columns of
/// each that hold table names.
const MYSQL_RELATIONS: &[&str] = &[
    "TABLES",
    "COLUMNS",
    "STATISTICS",
    "KEY_COLUMN_USAGE",
    "TABLE_CONSTRAINTS",
    "REFERENTIAL_CONSTRAINTS",
    "CHECK_CONSTRAINTS",
    "PARTITIONS",
    "VIEWS",
    "SCHEMATA",
    "PROCESSLIST",
];
const POSTGRES_CATALOG: &[&str] = &[
    "pg_class",
    "pg_tables",
    "pg_indexes",
    "pg_database",
    "pg_stat_activity",
];

const POSTGRES_INFORMATION_SCHEMA: &[&str] = &[
    "tables",
    "columns",
    "key_column_usage",
    "table_constraints",
    "constraint_column_usage",
    "views",
];

/// The statement that reads the relations' columns on a data source of `dialect`: rows of
/// schema, relation, column and (PostgreSQL) the column's type, in column order; with
/// PostgreSQL's `tableoid` system column, which pg_dump reads of pg_class.
pub fn catalog_columns_sql(dialect: Dialect) -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| Value::Text((*n).to_owned()).to_literal(dialect))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match dialect {
        Dialect::MySql => format!(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE \
             FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME IN ({}) \
             ORDER BY TABLE_NAME, ORDINAL_POSITION",
            list(MYSQL_RELATIONS)
        ),
        Dialect::Postgres => format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, \
             format_type(a.atttypid, a.atttypmod) \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE (a.attnum > 0 OR a.attname = 'tableoid') AND NOT a.attisdropped \
             AND (n.nspname = 'pg_catalog' AND c.relname IN ({}) \
             OR n.nspname = 'information_schema' AND c.relname IN ({})) \
             ORDER BY 1, 2, a.attnum",
            list(POSTGRES_CATALOG),
            list(POSTGRES_INFORMATION_SCHEMA)
        ),
    }
}
