//! DDL on a logic table (CREATE TABLE, DROP TABLE, TRUNCATE, ALTER TABLE, CREATE/DROP INDEX):
//! one statement per actual table, the names spliced into the original text like INSERT's.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{
    AlterTableOperation, Ident, ObjectName, ObjectNamePart, ObjectType, Spanned, Statement,
    TableConstraint,
};

use crate::RouteError;
use crate::locate::Locator;
use crate::names::{last_ident, push_identifier, quote_of};
use crate::plan::{ExecutionUnit, Plan};
use keyshard_types::Dialect;

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
    /// (PostgreSQL, SQLite): ShardingSphere appends `_<actual table>`. A primary key or
    /// unique constraint added by name is one (its index takes the name).
    index: Option<&'a Ident>,
    /// Only the last part of each name is the table's (a schema before it stays), as in
    /// queries; else the whole name is replaced (MySQL's qualifier is the logical database,
    /// which the shards do not have).
    last_part: bool,
}

impl<'a> Names<'a> {
    pub(crate) fn of_tables(tables: Vec<&'a ObjectName>) -> Self {
        Names {
            tables,
            index: None,
            last_part: false,
        }
    }

    /// A table named in a query, whose schema stays as written.
    pub(crate) fn of_table_in_query(table: &'a ObjectName) -> Self {
        Names {
            tables: vec![table],
            index: None,
            last_part: true,
        }
    }
}

fn last_part(name: &ObjectName) -> Option<&Ident> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => Some(ident),
        _ => None,
    }
}

pub(crate) fn names(statement: &Statement) -> Option<Names<'_>> {
    let tables = Names::of_tables;
    match statement {
        Statement::CreateTable(create) => Some(tables(vec![&create.name])),
        Statement::AlterTable(alter) => {
            let constraint = alter.operations.iter().find_map(|op| match op {
                AlterTableOperation::AddConstraint { constraint, .. } => match constraint {
                    TableConstraint::PrimaryKey(key) => key.name.as_ref(),
                    TableConstraint::Unique(unique) => unique.name.as_ref(),
                    _ => None,
                },
                _ => None,
            });
            Some(Names {
                tables: vec![&alter.name],
                index: constraint,
                last_part: false,
            })
        }
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
            index: names.first().and_then(last_part),
            last_part: false,
        }),
        Statement::CreateIndex(create) => Some(Names {
            tables: vec![&create.table_name],
            index: create.name.as_ref().and_then(last_part),
            last_part: false,
        }),
        _ => None,
    }
}

/// Plans `statement` when it is DDL on a sharded table: `Ok(None)` when it is not. On
/// PostgreSQL a schema qualifier stays: `public.t_order` is `public.t_order_0` (pg_dump's
/// restore runs with an empty search_path).
pub(crate) fn plan(
    sql: &str,
    statement: &Statement,
    dialect: Dialect,
    table: impl Fn(&str) -> Option<Arc<TableRule>>,
) -> Result<Option<DdlPlan>, RouteError> {
    let Some(mut names) = names(statement) else {
        return Ok(None);
    };
    names.last_part = dialect == Dialect::Postgres;
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
    Ok(Some(DdlPlan {
        logic_table: rule.logic_table.clone(),
        plan: per_node(sql, &names, &rule)?,
    }))
}

/// One unit per data node of `rule`: `sql` with the names in `names` (all `rule`'s logic
/// table) spliced as the node's actual table, or index.
pub(crate) fn per_node(sql: &str, names: &Names<'_>, rule: &TableRule) -> Result<Plan, RouteError> {
    let mut locator = Locator::new(sql);
    let mut edits: Vec<(std::ops::Range<usize>, Option<char>, bool)> = Vec::new();
    for name in &names.tables {
        let span = match last_part(name) {
            Some(ident) if names.last_part => ident.span,
            _ => name.span(),
        };
        let range = locator.offset(span.start)?..locator.offset(span.end)?;
        edits.push((range, quote_of(name), false));
    }
    if let Some(index) = names.index {
        let range = locator.offset(index.span.start)?..locator.offset(index.span.end)?;
        edits.push((range, index.quote_style, true));
    }
    edits.sort_by_key(|(range, _, _)| range.start);
    let index_name = names.index.map(|i| i.value.as_str()).unwrap_or_default();

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
    Ok(Plan::of_units(units))
}

/// MySQL's `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS`, which mysqldump writes around a
/// table's rows and sqlparser does not read: where the table's name stands (its last part,
/// a database before it included), and that last part with its quote.
pub(crate) fn toggled_keys(sql: &str) -> Option<(std::ops::Range<usize>, String, Option<char>)> {
    let text = sql.trim_end().trim_end_matches(';').trim_end();
    let mut rest = text.trim_start();
    for word in ["alter", "table"] {
        rest = strip_word(rest, word)?;
    }
    let start = text.len() - rest.len();
    let mut end = start;
    // `name`, `` `name` ``, or either qualified by a database.
    let (value, quote) = loop {
        let part = &text[end..];
        let (value, quote, len) = match part.strip_prefix('`') {
            Some(quoted) => {
                let close = quoted.find('`')?;
                (quoted[..close].to_owned(), Some('`'), close + 2)
            }
            None => {
                let len = part
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(part.len());
                (part[..len].to_owned(), None, len)
            }
        };
        if value.is_empty() {
            return None;
        }
        end += len;
        match text[end..].strip_prefix('.') {
            Some(_) => end += 1,
            None => break (value, quote),
        }
    };
    let mut tail = text[end..].trim_start();
    tail = strip_word(tail, "disable").or_else(|| strip_word(tail, "enable"))?;
    if !tail.eq_ignore_ascii_case("keys") {
        return None;
    }
    let name_start = end - value.len() - if quote.is_some() { 2 } else { 0 };
    Some((name_start..end, value, quote))
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}
