//! DDL on a logic table (CREATE TABLE, DROP TABLE, TRUNCATE, ALTER TABLE, CREATE/DROP INDEX):
//! one statement per actual table, the names spliced into the original text like INSERT's.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{ObjectName, ObjectType, Spanned, Statement};

use crate::RouteError;
use crate::locate::Locator;
use crate::names::{last_ident, push_identifier, quote_of};
use crate::plan::{ExecutionUnit, Plan};

/// A DDL statement on one logic table, as one unit per actual table.
#[derive(Debug, Clone, PartialEq)]
pub struct DdlPlan {
    /// The logic table the statement changes; its metadata is stale afterwards.
    pub logic_table: String,
    /// One unit per data node, in data node order.
    pub plan: Plan,
}

/// The table and index names of a DDL statement the router fans out, if it is one.
pub(crate) struct Names<'a> {
    pub(crate) tables: Vec<&'a ObjectName>,
    /// An index name that must differ per actual table where index names are per schema
    /// (PostgreSQL, SQLite): ShardingSphere appends `_<actual table>`.
    index: Option<&'a ObjectName>,
}

pub(crate) fn names(statement: &Statement) -> Option<Names<'_>> {
    fn tables(tables: Vec<&ObjectName>) -> Names<'_> {
        Names {
            tables,
            index: None,
        }
    }
    match statement {
        Statement::CreateTable(create) => Some(tables(vec![&create.name])),
        Statement::AlterTable(alter) => Some(tables(vec![&alter.name])),
        Statement::Truncate(truncate) => Some(tables(
            truncate.table_names.iter().map(|t| &t.name).collect(),
        )),
        Statement::Drop {
            object_type: ObjectType::Table,
            names,
            ..
        } => Some(tables(names.iter().collect())),
        Statement::Drop {
            object_type: ObjectType::Index,
            names,
            table: Some(table),
            ..
        } if names.len() == 1 => Some(Names {
            tables: vec![table],
            index: names.first(),
        }),
        Statement::CreateIndex(create) => Some(Names {
            tables: vec![&create.table_name],
            index: create.name.as_ref(),
        }),
        _ => None,
    }
}

/// Plans `statement` when it is DDL on a sharded table: `Ok(None)` when it is not.
pub(crate) fn plan(
    sql: &str,
    statement: &Statement,
    table: impl Fn(&str) -> Option<Arc<TableRule>>,
) -> Result<Option<DdlPlan>, RouteError> {
    let Some(names) = names(statement) else {
        return Ok(None);
    };
    let rules: Vec<Option<Arc<TableRule>>> =
        names.tables.iter().map(|n| table(last_ident(n))).collect();
    let rule = match rules.as_slice() {
        [Some(rule)] => Arc::clone(rule),
        _ if rules.iter().all(Option::is_none) => return Ok(None),
        _ => {
            return Err(RouteError::Unsupported(
                "DDL naming several tables of which some are sharded; send one statement per table"
                    .into(),
            ));
        }
    };
    let mut locator = Locator::new(sql);
    let mut edits: Vec<(std::ops::Range<usize>, Option<char>, bool)> = Vec::new();
    for name in names
        .tables
        .iter()
        .map(|n| (*n, false))
        .chain(names.index.map(|n| (n, true)))
    {
        let (name, is_index) = name;
        let span = name.span();
        edits.push((
            locator.offset(span.start)?..locator.offset(span.end)?,
            quote_of(name),
            is_index,
        ));
    }
    edits.sort_by_key(|(range, _, _)| range.start);
    let index_name = names.index.map(last_ident).unwrap_or_default();

    let mut units = Vec::with_capacity(rule.data_nodes.len());
    // The configuration refuses duplicate data nodes, so each gets exactly one statement.
    for node in &rule.data_nodes {
        let mut out = String::with_capacity(sql.len() + 16);
        let mut at = 0;
        for (range, quote, is_index) in &edits {
            out.push_str(
                sql.get(at..range.start)
                    .ok_or_else(RouteError::internal("overlapping DDL names"))?,
            );
            if *is_index {
                push_identifier(&mut out, &format!("{index_name}_{}", node.table), *quote);
            } else {
                push_identifier(&mut out, &node.table, *quote);
            }
            at = range.end;
        }
        out.push_str(sql.get(at..).unwrap_or_default());
        units.push(ExecutionUnit {
            data_source: node.data_source.clone(),
            table: node.table.clone(),
            sql: out,
            params: Vec::new(),
            rows: Vec::new(),
            binary_results: false,
        });
    }
    Ok(Some(DdlPlan {
        logic_table: rule.logic_table.clone(),
        plan: Plan::of_units(units),
    }))
}
