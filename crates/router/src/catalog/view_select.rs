//! The derived table that stands for one catalog relation: logic tables' names in place of
//! their actual tables', the logical database in place of the shard's, and the tables not
//! shown filtered out.

use keyshard_types::{Dialect, Value};

use super::sessions::sessions_select;
use super::{CatalogColumn, LogicalNames};
use crate::names::{identifier_quote, push_identifier};

/// The derived table's SELECT over `columns` (one relation's).
pub(super) fn view_select(
    dialect: Dialect,
    columns: &[CatalogColumn],
    names: &LogicalNames,
) -> String {
    let quote = identifier_quote(dialect);
    let literal = |s: &str| Value::Text(s.to_owned()).to_literal(dialect);
    let ident = |s: &str| {
        let mut out = String::new();
        push_identifier(&mut out, s, Some(quote));
        out
    };
    let is_name = |c: &CatalogColumn| {
        let name = c.name.to_ascii_lowercase();
        matches!(
            name.as_str(),
            "table_name" | "referenced_table_name" | "tablename"
        ) || name == "relname" && c.relation == "pg_class"
    };
    let is_schema = |c: &CatalogColumn| {
        let name = c.name.to_ascii_lowercase();
        dialect == Dialect::MySql && (name.ends_with("_schema") || name == "schema_name")
    };
    // PostgreSQL's list of databases (psql's `\l`) shows the logical database alone, as the
    // shard's current one.
    let is_database = |c: &CatalogColumn| c.relation == "pg_database" && c.name == "datname";
    let lists_sessions = |c: &CatalogColumn| {
        c.relation.eq_ignore_ascii_case("processlist") || c.relation == "pg_stat_activity"
    };
    if columns.first().is_some_and(lists_sessions) {
        return sessions_select(dialect, columns);
    }
    let mut select = String::from("SELECT ");
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            select.push_str(", ");
        }
        let name = ident(&column.name);
        let renamed = if is_name(column) && !names.renames.is_empty() {
            let mut case = format!("CASE {name}");
            for (actual, logic) in &names.renames {
                case.push_str(&format!(
                    " WHEN {} THEN {}",
                    literal(actual),
                    literal(logic)
                ));
            }
            case.push_str(&format!(" ELSE {name} END"));
            Some(case)
        } else if is_database(column) {
            Some(literal(&names.logic_database))
        } else if is_schema(column) {
            Some(format!(
                "CASE WHEN {name} = {} THEN {} ELSE {name} END",
                literal(&names.shard_database),
                literal(&names.logic_database)
            ))
        } else {
            None
        };
        match renamed {
            Some(expression) if dialect == Dialect::Postgres => {
                select.push_str(&format!(
                    "CAST({expression} AS {}) AS {name}",
                    column.sql_type
                ));
            }
            Some(expression) => select.push_str(&format!("{expression} AS {name}")),
            None => select.push_str(&name),
        }
    }
    let (Some(first), true) = (columns.first(), !columns.is_empty()) else {
        return select;
    };
    select.push_str(&format!(
        " FROM {}.{}",
        ident(&first.schema),
        ident(&first.relation)
    ));
    let mut conditions = Vec::new();
    if dialect == Dialect::MySql
        && let Some(schema) = [
            "TABLE_SCHEMA",
            "CONSTRAINT_SCHEMA",
            "INDEX_SCHEMA",
            "SCHEMA_NAME",
        ]
        .iter()
        .find(|s| columns.iter().any(|c| c.name.eq_ignore_ascii_case(s)))
    {
        conditions.push(format!(
            "{} = {}",
            ident(schema),
            literal(&names.shard_database)
        ));
    }
    if columns.iter().any(is_database) {
        conditions.push("datname = current_database()".to_owned());
    }
    if !names.hidden.is_empty() {
        let hidden: Vec<String> = names.hidden.iter().map(|h| literal(h)).collect();
        for column in columns.iter().filter(|c| is_name(c)) {
            conditions.push(format!(
                "({0} IS NULL OR {0} NOT IN ({1}))",
                ident(&column.name),
                hidden.join(", ")
            ));
        }
        // Nor the indexes of those tables (psql's `\di`), which pg_class lists by their own
        // names.
        if first.relation == "pg_class" && columns.iter().any(|c| c.name == "oid") {
            conditions.push(format!(
                "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class t \
                 ON t.oid = i.indrelid WHERE i.indexrelid = \"pg_class\".\"oid\" \
                 AND t.relname IN ({}))",
                hidden.join(", ")
            ));
        }
    }
    if !conditions.is_empty() {
        select.push_str(" WHERE ");
        select.push_str(&conditions.join(" AND "));
    }
    select
}
