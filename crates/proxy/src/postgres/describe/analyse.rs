//! What each kind of statement (INSERT, UPDATE, DELETE, SELECT) tells of its parameters'
//! types and its result columns, from the tables it names.

use keyshard_backend::Column;
use keyshard_router::names::last_ident;
use sqlparser::ast::{Expr, FromTable, Insert, SelectItem, SetExpr, Statement, TableObject};

use super::description::Fields;
use super::param_types::{assign, mark_integers, set_param, walk};
use super::projection::projection;
use super::table_columns::{TableColumns, find, table_columns};
use crate::postgres::types::column_oid;

/// The result columns of `statement`, typing the placeholders in `params` its columns tell.
pub(super) async fn analyse(
    statement: &Statement,
    known: &TableColumns,
    params: &mut [u32],
) -> Fields {
    match statement {
        Statement::Insert(insert) => analyse_insert(insert, known, params).await,
        Statement::Update(update) => {
            let columns = table_columns(std::slice::from_ref(&update.table), known).await;
            for assignment in &update.assignments {
                assign(assignment, &columns, params);
            }
            if let Some(selection) = &update.selection {
                walk(selection, &columns, params);
            }
            returning(update.returning.as_deref(), &columns)
        }
        Statement::Delete(delete) => {
            let tables = match &delete.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            let columns = table_columns(tables, known).await;
            if let Some(selection) = &delete.selection {
                walk(selection, &columns, params);
            }
            returning(delete.returning.as_deref(), &columns)
        }
        Statement::Query(query) => match &*query.body {
            SetExpr::Select(select) => {
                let columns = table_columns(&select.from, known).await;
                if let Some(selection) = &select.selection {
                    walk(selection, &columns, params);
                }
                if let Some(limit) = &query.limit_clause {
                    mark_integers(&format!("{limit}"), params);
                }
                match projection(&select.projection, &columns) {
                    Some(fields) => Fields::Known(fields.into()),
                    None => Fields::Unknown,
                }
            }
            _ => Fields::Unknown,
        },
        Statement::ShowVariable { .. } | Statement::Explain { .. } => Fields::Unknown,
        _ => Fields::None,
    }
}

async fn analyse_insert(insert: &Insert, known: &TableColumns, params: &mut [u32]) -> Fields {
    let TableObject::TableName(name) = &insert.table else {
        return returning(insert.returning.as_deref(), &[]);
    };
    let table = known.columns(last_ident(name)).await.unwrap_or_default();
    let rows: Vec<&[Expr]> = match insert.source.as_deref().map(|q| &*q.body) {
        Some(SetExpr::Values(values)) => values.rows.iter().map(|r| r.content.as_slice()).collect(),
        _ => Vec::new(),
    };
    let width = rows.first().map_or(0, |r| r.len());
    // The columns the values are for: named, or the table's, or (one value short) the table's
    // without the generated key, ShardingSphere's rule for a column-less INSERT.
    let targets: Vec<Option<&Column>> = if insert.columns.is_empty() {
        let key = known
            .engine
            .config()
            .sharding
            .table(last_ident(name))
            .and_then(|rule| rule.key_generate.as_ref().map(|k| k.column.clone()));
        if width + 1 == table.len()
            && let Some(key) = key
        {
            table
                .iter()
                .filter(|c| !c.name.eq_ignore_ascii_case(&key))
                .map(Some)
                .collect()
        } else {
            table.iter().map(Some).collect()
        }
    } else {
        insert
            .columns
            .iter()
            .map(|c| find(&table, last_ident(c)))
            .collect()
    };
    for row in rows {
        for (expr, column) in row.iter().zip(&targets) {
            if let Some(column) = column {
                set_param(expr, column_oid(column), params);
            }
        }
    }
    for assignment in &insert.assignments {
        assign(assignment, &table, params);
    }
    returning(insert.returning.as_deref(), &table)
}

fn returning(items: Option<&[SelectItem]>, columns: &[Column]) -> Fields {
    match items {
        None => Fields::None,
        Some(items) => match projection(items, columns) {
            Some(fields) => Fields::Known(fields.into()),
            None => Fields::Unknown,
        },
    }
}
