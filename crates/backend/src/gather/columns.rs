//! The gathered statement's result columns told as from the actual tables the temporary tables
//! stand for: MySQL's key and column flags, PostgreSQL's table origins.

use keyshard_config::DatabaseKind;
use keyshard_router::gather::GatheredTable;
use keyshard_types::Value;
use sqlx::{Executor, Statement as _};

use crate::Backend;
use crate::driver::Driver;
use crate::outcome::Column;

/// MySQL column flags a table's definition gives its columns and a temporary table made by
/// [`create`](super::create) does not: PRI_KEY, UNIQUE_KEY, MULTIPLE_KEY, AUTO_INCREMENT,
/// ON_UPDATE_NOW and PART_KEY.
const TABLE_FLAGS: u16 = 0x0002 | 0x0004 | 0x0008 | 0x0200 | 0x2000 | 0x4000;

/// MySQL: each gathered table's name with the columns of the actual table it stands for, as
/// the database describes them (a prepared statement's description: nothing runs, and the
/// connection's statement cache keeps it for the next gather).
pub(super) async fn actual_columns<'t, D: Driver>(
    conn: &mut D::Connection,
    tables: &'t [GatheredTable],
) -> Result<Vec<(&'t str, Column)>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    let mut columns = Vec::new();
    if <D as Driver>::KIND != DatabaseKind::MySql {
        return Ok(columns);
    }
    for table in tables {
        let described = conn.prepare(&table.like).await?;
        columns.extend(
            described
                .columns()
                .iter()
                .map(|c| (table.name.as_str(), D::column(c))),
        );
    }
    Ok(columns)
}

/// Gives each result column read from a gathered table the [`TABLE_FLAGS`] of the actual
/// table's column, so that a client is told what a plain database holding the rows would tell
/// it.
pub(super) fn restore_table_flags(columns: &mut [Column], actual: &[(&str, Column)]) {
    for column in columns {
        let Some(result) = column.mysql.as_deref_mut() else {
            continue;
        };
        let origin = &result.origin;
        let Some(flags) = actual.iter().find_map(|(table, actual)| {
            let actual = actual.mysql.as_deref()?;
            (origin.table.as_ref() == table.as_bytes() && origin.name == actual.origin.name)
                .then_some(actual.flags)
        }) else {
            continue;
        };
        result.flags = (result.flags & !TABLE_FLAGS) | (flags & TABLE_FLAGS);
    }
}

/// PostgreSQL: the gathered statement's columns told as from the tables the logical database
/// shows (see `origins`): a temporary table's column `k` is its logic table's `k`th, the
/// temporary table having the actual table's visible columns in order.
pub(super) async fn tell_origins<D: Driver>(
    backend: &Backend,
    conn: &mut D::Connection,
    tables: &[GatheredTable],
    columns: &mut [Column],
) -> Result<(), sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    if <D as Driver>::KIND != DatabaseKind::Postgres
        || columns.iter().all(|c| c.pg_origin.is_none())
    {
        return Ok(());
    }
    let sql = "SELECT c.oid::int8, c.relname::text FROM pg_catalog.pg_class c \
               WHERE c.relnamespace = pg_catalog.pg_my_temp_schema()";
    let mut temporary: Vec<(i64, String)> = Vec::new();
    let mut decoding = [None, None];
    for row in conn.fetch_all(sqlx::raw_sql(sql)).await? {
        let [oid, name] = &mut decoding;
        if let (Value::Int(oid), Value::Text(name)) = (
            D::decode(&row, 0, oid, false)?,
            D::decode(&row, 1, name, false)?,
        ) {
            temporary.push((oid, name));
        }
    }
    for column in columns {
        column.pg_origin = column.pg_origin.and_then(|(oid, number)| {
            let (_, name) = temporary.iter().find(|(t, _)| *t == i64::from(oid))?;
            let table = tables.iter().find(|t| t.name == *name)?;
            let logic = backend.metadata().columns(&table.name)?;
            let at = usize::try_from(number).ok()?.checked_sub(1)?;
            logic.get(at)?.pg_origin
        });
    }
    Ok(())
}
