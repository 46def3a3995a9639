//! UNION over several nodes. Each node runs the whole statement on its own actual tables.
//! UNION ALL: when every branch reads a sharded table (the nodes' tables are bound, so each
//! row of every branch is on exactly one node) and no branch aggregates, groups or removes
//! duplicates, the nodes' rows put together are the statement's rows. UNION: each node's rows
//! are distinct already, and the merge keeps one of each row across nodes, as `SELECT
//! DISTINCT` merges; a branch may then read broadcast tables alone (their rows, on every node,
//! are kept once) or remove duplicates itself. ORDER BY (by position or output name) and LIMIT
//! merge as for any read. INTERSECT and EXCEPT of two such branches: the nodes run them as a
//! UNION ALL whose rows say which branch they come from (two hidden columns), and the merge
//! keeps each row that both branches have (INTERSECT) or the first alone has (EXCEPT), their
//! MIN and MAX tested as HAVING is. UNIONs of both kinds in one statement, the ALL forms of
//! INTERSECT and EXCEPT and longer chains of them are gathered.

use sqlparser::ast::{
    Expr, GroupByExpr, OrderByKind, OrderBySort, Query, Select, SelectItem, SetExpr, SetOperator,
    SetQuantifier, TableFactor, Value as SqlValue,
};
use sqlparser::parser::Parser;

use super::Tables;
use super::aggregates::contains_aggregate;
use super::limit::limit_edits;
use super::rewrite::{MultiRead, find_item, has_subqueries};
use super::select_list::set_operation_parts;
use crate::RouteError;
use crate::locate::Locator;
use crate::merge::{
    Aggregate, AggregateColumn, ColumnRef, Comparison, Filter, FilterOperand, MergeSpec, SortKey,
};
use crate::names::last_ident;
use crate::template::{Edit, Piece, Template};
use crate::tokens::Tokens;
use keyshard_types::Dialect;

/// The rewrite and merge of a UNION over several nodes; `Err` says why it cannot be merged.
pub(super) fn union_read(
    sql: &str,
    dialect: Dialect,
    parser: &Parser<'_>,
    query: &Query,
    tables: &Tables<'_>,
    tokens: &Tokens,
    table_edits: &[Edit],
) -> Result<MultiRead, String> {
    if query.fetch.is_some() || !query.locks.is_empty() {
        return Err("FETCH or a locking clause on a UNION".into());
    }
    let mut branches = Vec::new();
    let mut all = None;
    let operation = match &*query.body {
        SetExpr::SetOperation {
            op: op @ (SetOperator::Intersect | SetOperator::Except),
            set_quantifier: SetQuantifier::Distinct | SetQuantifier::None,
            left,
            right,
        } => match (&**left, &**right) {
            (SetExpr::Select(left), SetExpr::Select(right)) => {
                branches.extend([&**left, &**right]);
                Some(*op)
            }
            _ => return Err("INTERSECT or EXCEPT of more than two SELECTs".into()),
        },
        body => {
            collect_branches(body, &mut branches, &mut all)?;
            None
        }
    };
    let distinct = all == Some(false) || operation.is_some();
    for branch in &branches {
        node_by_node(branch, tables, distinct)?;
    }
    if has_subqueries(query) {
        return Err("subqueries".into());
    }
    let first = branches.first().ok_or("an empty UNION")?;
    // UNION is a GROUP BY of the whole row.
    let group_by = match distinct {
        true if has_wildcard(first) => return Err("UNION of *".into()),
        true => (0..first.projection.len()).map(ColumnRef::Index).collect(),
        false => Vec::new(),
    };
    let mut order_by = Vec::new();
    if let Some(order) = &query.order_by {
        let OrderByKind::Expressions(exprs) = &order.kind else {
            return Err("ORDER BY ALL".into());
        };
        for item in exprs {
            order_by.push(SortKey {
                column: output_column(&item.expr, first)?,
                descending: matches!(item.options.sort, Some(OrderBySort::Desc)),
                nulls_first: item.options.nulls_first,
            });
        }
    }
    let mut locator = Locator::new(sql);
    let mut edits = table_edits.to_vec();
    let (aggregates, having) = match operation {
        Some(op) => branch_tags(op, group_by.len(), parser, &mut locator, &mut edits)?,
        None => (Vec::new(), None),
    };
    let hidden_columns = aggregates.len();
    let (offset, limit) =
        limit_edits(query, dialect, tokens, &mut locator, &mut edits, Vec::new())?;
    Ok(MultiRead::new(
        Template::whole(sql.len(), edits).map_err(|e: RouteError| e.to_string())?,
        MergeSpec {
            group_by,
            aggregates,
            computed: Vec::new(),
            division_scale: None,
            having,
            when_empty: None,
            order_by,
            offset: 0,
            limit: None,
            hidden_columns,
            dialect,
        },
        offset,
        limit,
        distinct,
    ))
}

/// INTERSECT (`op`) or EXCEPT of two SELECTs of `width` columns as the nodes run it: a UNION
/// ALL whose rows say which branch they come from, twice (edits added to `edits`), and the
/// aggregates and HAVING that keep a row by the MIN and MAX of that: both branches have it,
/// or the first alone.
fn branch_tags(
    op: SetOperator,
    width: usize,
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
    edits: &mut Vec<Edit>,
) -> Result<(Vec<AggregateColumn>, Option<Filter>), String> {
    let (ends, operator) = set_operation_parts(parser, locator).map_err(|e| e.to_string())?;
    let (Some(operator), [left, right]) = (operator, ends.as_slice()) else {
        return Err("this INTERSECT or EXCEPT".into());
    };
    edits.push(Edit {
        range: operator,
        piece: Piece::Text("UNION ALL".into()),
    });
    for (at, side) in [(*left, ", 0, 0"), (*right, ", 1, 1")] {
        edits.push(Edit {
            range: at..at,
            piece: Piece::Text(side.into()),
        });
    }
    let tag = |index, function| AggregateColumn {
        index,
        function,
        distinct: None,
        joined: None,
    };
    let side_is = |column: usize, side: &str| Filter::Compare {
        left: FilterOperand::Column(column),
        op: Comparison::Eq,
        right: FilterOperand::Number(side.into()),
    };
    let having = match op {
        SetOperator::Intersect => Filter::And(vec![side_is(width, "0"), side_is(width + 1, "1")]),
        _ => side_is(width + 1, "0"),
    };
    Ok((
        vec![tag(width, Aggregate::Min), tag(width + 1, Aggregate::Max)],
        Some(having),
    ))
}

/// The SELECTs of a tree of UNIONs, left to right, and whether they are `ALL` (all of one
/// kind: `A UNION B UNION ALL C` keeps C's duplicates but not A's and B's).
fn collect_branches<'q>(
    body: &'q SetExpr,
    branches: &mut Vec<&'q Select>,
    all: &mut Option<bool>,
) -> Result<(), String> {
    match body {
        SetExpr::Select(select) => branches.push(select),
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } => {
            let this = match set_quantifier {
                SetQuantifier::All => true,
                SetQuantifier::Distinct | SetQuantifier::None => false,
                _ => return Err("this UNION".into()),
            };
            if all.replace(this).is_some_and(|other| other != this) {
                return Err("UNION and UNION ALL in one statement".into());
            }
            collect_branches(left, branches, all)?;
            collect_branches(right, branches, all)?;
        }
        _ => return Err("INTERSECT and EXCEPT".into()),
    }
    Ok(())
}

fn has_wildcard(select: &Select) -> bool {
    select.projection.iter().any(|item| {
        matches!(
            item,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    })
}

/// Refuses a branch whose rows the nodes' rows put together would not be: one that aggregates,
/// groups or numbers rows (each node would do so over its own rows alone), and, in a UNION ALL
/// (`distinct` false), one that reads no sharded table (each node would send all of its rows)
/// or removes duplicates.
fn node_by_node(select: &Select, tables: &Tables<'_>, distinct: bool) -> Result<(), String> {
    let grouped =
        !matches!(&select.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    let aggregated = select.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e)
        }
        _ => false,
    });
    if (select.distinct.is_some() && !distinct)
        || matches!(select.distinct, Some(sqlparser::ast::Distinct::On(_)))
        || grouped
        || aggregated
        || select.having.is_some()
        || select.top.is_some()
        || select.into.is_some()
        || select.qualify.is_some()
        || !select.named_window.is_empty()
    {
        return Err("a UNION branch that aggregates, groups or removes duplicates".into());
    }
    let sharded = |factor: &TableFactor| match factor {
        TableFactor::Table { name, .. } => tables
            .rules
            .iter()
            .find(|r| r.logic_table.eq_ignore_ascii_case(last_ident(name)))
            .map(|r| r.logic_table.as_str()),
        _ => None,
    };
    // Node `i` of a table meets only node `i` of itself within a branch: a self-join's rows
    // on other nodes would never pair.
    let mut read: Vec<&str> = Vec::new();
    for from in &select.from {
        for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
        {
            if let Some(name) = sharded(factor) {
                if read.iter().any(|r| r.eq_ignore_ascii_case(name)) {
                    return Err("a sharded table used twice in one UNION branch".into());
                }
                read.push(name);
            }
        }
    }
    if read.is_empty() && !distinct {
        return Err("a UNION ALL branch that reads no sharded table".into());
    }
    Ok(())
}

/// The output column an ORDER BY key of a set operation names: by position, or by a name of
/// the first branch's columns (what the databases accept there).
fn output_column(expr: &Expr, first: &Select) -> Result<ColumnRef, String> {
    let wildcard = has_wildcard(first);
    match expr {
        Expr::Value(v) if matches!(v.value, SqlValue::Number(..)) && !wildcard => {
            match find_item(expr, first) {
                Some(index) if index < first.projection.len() => Ok(ColumnRef::Index(index)),
                _ => Err("ORDER BY a position the select list does not have".into()),
            }
        }
        Expr::Identifier(ident) if wildcard => Ok(ColumnRef::Name(ident.value.clone())),
        Expr::Identifier(_) => find_item(expr, first)
            .map(ColumnRef::Index)
            .ok_or_else(|| "ORDER BY what the UNION does not select".into()),
        _ => Err("ORDER BY an expression of a UNION".into()),
    }
}
