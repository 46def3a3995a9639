//! A logic table's columns with their declared types, read from its first actual table: the
//! router's metadata (the names, for column-less INSERTs) and PostgreSQL's Describe (the
//! types) both come from here.

use keyshard_config::TableRule;

use crate::{Backend, BackendError, Column, PgEnumColumn, Pool};
use keyshard_types::SqlType;

impl Backend {
    /// The columns of `rule`'s first actual table with the types they were declared with
    /// (`int8`, `varchar`, … for PostgreSQL; the declared type text for SQLite and MySQL), in
    /// column order; `None` when the table does not exist.
    pub async fn column_types(
        &self,
        rule: &TableRule,
    ) -> Result<Option<Vec<Column>>, BackendError> {
        let Some(node) = rule.data_nodes.first() else {
            return Ok(None);
        };
        let table = node.table.as_str();
        let pool = self.pool(&node.data_source)?;
        let kind = pool.kind();
        // Name, type name and, on PostgreSQL, the type's OID and modifier, for an enum its own
        // OID again, for an array of one its element type's, and where the column is: the
        // table's OID and the column's number.
        type Described = Vec<(
            String,
            String,
            Option<i64>,
            Option<i32>,
            Option<i64>,
            Option<i64>,
            Option<i16>,
        )>;
        let columns: Result<Described, sqlx::Error> = match pool {
            // MariaDB and MySQL mark invisible columns in EXTRA; they take no value in a
            // column-less INSERT.
            Pool::MySql(p) => {
                let query = sqlx::query_as(
                    "SELECT CAST(COLUMN_NAME AS CHAR), CAST(DATA_TYPE AS CHAR), NULL, NULL, NULL, \
                         NULL, NULL \
                         FROM information_schema.COLUMNS \
                         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? \
                         AND UPPER(EXTRA) NOT LIKE '%INVISIBLE%' ORDER BY ORDINAL_POSITION",
                )
                .bind(table);
                p.with(async |conn| query.fetch_all(conn).await).await
            }
            // udt_name is the type's own name (int4, varchar; a domain's base type), which maps
            // to one OID; a domain column's modifier is the domain's.
            Pool::Postgres(p) => {
                let query = sqlx::query_as(
                    "SELECT column_name::text, udt_name::text, \
                         (quote_ident(udt_schema) || '.' || quote_ident(udt_name))::regtype::oid::int8, \
                         (SELECT CASE WHEN a.atttypmod = -1 AND t.typtype = 'd' \
                          THEN t.typtypmod ELSE a.atttypmod END \
                          FROM pg_catalog.pg_attribute a \
                          JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
                          WHERE a.attrelid = to_regclass(quote_ident(table_schema) || '.' || quote_ident(table_name)) \
                          AND a.attname = column_name), \
                         (SELECT e.oid::int8 FROM pg_catalog.pg_type e \
                          WHERE (quote_ident(udt_schema) || '.' || quote_ident(udt_name))::regtype \
                          IN (e.oid, e.typarray) AND e.typtype = 'e'), \
                         to_regclass(quote_ident(table_schema) || '.' || quote_ident(table_name))::oid::int8, \
                         ordinal_position::int2 \
                         FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name = $1 \
                         ORDER BY ordinal_position",
                )
                .bind(table);
                p.with(async |conn| query.fetch_all(conn).await).await
            }
            // table_info leaves out hidden (generated virtual) columns, in column order.
            Pool::Sqlite(p) => {
                let query = sqlx::query_as(
                    "SELECT name, type, NULL, NULL, NULL, NULL, NULL FROM pragma_table_info(?1)",
                )
                .bind(table);
                p.with(async |conn| query.fetch_all(conn).await).await
            }
        };
        let columns = columns.map_err(|e| BackendError::from_sqlx(&node.data_source, e))?;
        Ok((!columns.is_empty()).then(|| {
            columns
                .into_iter()
                .map(|(name, type_name, oid, typmod, enum_oid, table, number)| {
                    let mut column = Column::new(name, SqlType::of(&type_name, kind));
                    let oid_of = |oid: Option<i64>| oid.and_then(|oid| u32::try_from(oid).ok());
                    column.oid = oid_of(oid);
                    column.typmod = typmod.unwrap_or(-1);
                    column.pg_enum = oid_of(enum_oid).map(|element| match column.oid {
                        Some(oid) if oid == element => PgEnumColumn::Enum,
                        _ => PgEnumColumn::Array { element },
                    });
                    column.pg_origin = oid_of(table).zip(number);
                    column
                })
                .collect()
        }))
    }
}
