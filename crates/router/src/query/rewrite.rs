//! A SELECT over several nodes: rewritten so that each node returns what the merge needs
//! (`AVG` as `SUM` and `COUNT`, sort and group keys it must see as hidden columns, `LIMIT
//! offset + count`), and the merge that turns their rows into one result.

use std::ops::{ControlFlow, Range};

use sqlparser::ast::{
    Distinct, Expr, Function, GroupByExpr, Ident, OrderByKind, OrderBySort, Query, Select,
    SelectItem, Spanned, Value as SqlValue, Visit, Visitor,
};
use sqlparser::parser::Parser;

use super::aggregates::{aggregate_of, contains_aggregate, unmerged_aggregate};
use super::calls::{after_distinct, is_distinct, one_argument, pieces_of, plain_call};
use super::computed::{computed_of, described_only};
use super::having::filter_of;
use super::hidden::{NodeKeys, call_pieces, hidden_aggregate};
use super::joined::{DIVISION_SCALE_PROBE, MAX_LENGTH_PROBE, join_call};
use super::limit::{NO_LIMIT, limit_edits, limit_number};
use super::select_list::{arguments_text, group_by_end, having_range, projection_ranges};
use super::{Operand, PreparedQuery, Tables, select_of};
use crate::RouteError;
use crate::locate::Locator;
use crate::merge::{
    Aggregate, AggregateColumn, ColumnRef, ComputedColumn, Joined, MergeSpec, SortKey,
};
use crate::names::{last_ident, push_identifier};
use crate::plan::Plan;
use crate::template::{Edit, Literals, Piece, Template};
use crate::tokens::Tokens;
use keyshard_types::Dialect;
use keyshard_types::Value;

/// A read as several nodes run it, and how their rows merge.
#[derive(Debug, Clone)]
pub(super) struct MultiRead {
    template: Template,
    /// The merge, its offset and limit still to be bound.
    spec: MergeSpec,
    offset: Option<Operand>,
    limit: Option<Operand>,
    /// Grouped results cannot be cut per node: a group may span nodes.
    grouped: bool,
}

impl MultiRead {
    pub(super) fn new(
        template: Template,
        spec: MergeSpec,
        offset: Option<Operand>,
        limit: Option<Operand>,
        grouped: bool,
    ) -> Self {
        Self {
            template,
            spec,
            offset,
            limit,
            grouped,
        }
    }
}

impl PreparedQuery {
    /// Plans a read whose rows are on the nodes `chosen` (more than one).
    pub(super) fn bind_read(
        &self,
        read: &MultiRead,
        chosen: &[usize],
        params: &[Value],
        literals: Option<Literals<'_>>,
    ) -> Result<Plan, RouteError> {
        let number = |o: &Option<Operand>| -> Result<Option<u64>, RouteError> {
            o.as_ref()
                .map(|o| limit_number(o.resolve(params)?))
                .transpose()
        };
        let offset = number(&read.offset)?.unwrap_or(0);
        let limit = number(&read.limit)?;
        // Each node returns what could be among the first offset + count rows.
        let per_node = match (read.grouped, limit) {
            // Capped where every database's LIMIT still takes it (SQLite's is signed).
            (false, Some(count)) => offset.saturating_add(count).min(NO_LIMIT),
            _ => NO_LIMIT,
        };
        let mut spec = read.spec.clone();
        spec.offset = offset;
        spec.limit = limit;
        let units = chosen
            .iter()
            .map(|&n| self.render(&read.template, n, params, (0, per_node), literals))
            .collect::<Result<_, _>>()?;
        Ok(Plan {
            merge: Some(spec),
            ..Plan::of_units(units)
        })
    }
}

/// Counts the queries in a statement: more than one means subqueries, which per-node
/// execution would answer per node.
struct QueryCount(usize);

impl Visitor for QueryCount {
    type Break = ();
    fn pre_visit_query(&mut self, _query: &Query) -> ControlFlow<()> {
        self.0 += 1;
        ControlFlow::Continue(())
    }
}

/// Whether `query` holds another query (a subquery), which each node would answer over its
/// own rows alone.
pub(super) fn has_subqueries(query: &Query) -> bool {
    let mut counter = QueryCount(0);
    let _ = query.visit(&mut counter);
    counter.0 > 1
}

/// The rewrite and merge of a SELECT over several nodes; `Err` says why it cannot be merged.
#[allow(clippy::too_many_arguments)]
pub(super) fn multi_read(
    sql: &str,
    dialect: Dialect,
    parser: &Parser<'_>,
    query: &Query,
    tables: &Tables<'_>,
    tokens: &Tokens,
    table_edits: &[Edit],
) -> Result<MultiRead, String> {
    let unsupported = |what: &str| Err(what.to_owned());
    // Node `i` of a table meets only node `i` of itself: rows on other nodes never pair.
    if tables.repeated {
        return unsupported("a sharded table used twice in one statement");
    }
    if has_subqueries(query) {
        return unsupported("subqueries");
    }
    if query.with.is_some() || query.fetch.is_some() {
        return unsupported("WITH or FETCH");
    }
    let Some(select) = select_of(query) else {
        return unsupported("UNION, INTERSECT and EXCEPT");
    };
    // Each node would store its own rows where the client asked for the merged ones.
    if super::select_into(query) {
        return unsupported("SELECT … INTO");
    }
    if select.top.is_some() {
        return unsupported("TOP");
    }
    // `SELECT DISTINCT a, b` is `GROUP BY a, b` of the same list: each node sends its distinct
    // rows, and the merge keeps one of each, as it keeps one row per group.
    let distinct = match &select.distinct {
        None | Some(Distinct::All) => false,
        Some(Distinct::Distinct) => true,
        Some(Distinct::On(_)) => return unsupported("DISTINCT ON"),
    };
    let group_by = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs,
        _ => return unsupported("GROUP BY ALL, ROLLUP, CUBE or GROUPING SETS"),
    };
    if distinct && !group_by.is_empty() {
        return unsupported("DISTINCT with GROUP BY");
    }
    let mut locator = Locator::new(sql);
    let items = projection_ranges(parser, &mut locator)
        .map_err(|e| e.to_string())?
        .filter(|r| r.len() == select.projection.len())
        .ok_or_else(|| "this select list".to_owned())?;
    let wildcard = select.projection.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    });

    let mut edits = table_edits.to_vec();
    // Each hidden column as the pieces that write it: its qualifier, when it names a sharded
    // table, is that table's actual name on each node.
    let mut hidden: Vec<Vec<Piece>> = Vec::new();
    let mut aggregates = Vec::new();
    // Keys the nodes also group by (DISTINCT aggregates' arguments, ordered joins' keys).
    let mut node_keys = NodeKeys::default();
    let mut computed = Vec::new();
    for (index, (item, range)) in select.projection.iter().zip(&items).enumerate() {
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(expr) => (expr, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
            _ => continue,
        };
        let function = match expr {
            Expr::Function(f) => f,
            other if contains_aggregate(other) => {
                let mut leaf = |function: &Function, aggregate| {
                    let pieces = call_pieces(function, parser, &mut locator, tokens, table_edits)?;
                    Ok(hidden_aggregate(
                        pieces,
                        aggregate,
                        &mut hidden,
                        &mut aggregates,
                        select,
                    ))
                };
                let expr = computed_of(other, &mut leaf)?;
                if dialect == Dialect::Postgres {
                    let alias_start = match alias {
                        Some(alias) => Some(
                            locator
                                .offset(alias.span.start)
                                .map_err(|e| e.to_string())?,
                        ),
                        None => None,
                    };
                    edits.extend(described_only(sql, range, alias_start));
                }
                computed.push(ComputedColumn { index, expr });
                continue;
            }
            _ => continue,
        };
        let Some(mut aggregate) = aggregate_of(function) else {
            if let Some(call) = join_call(sql, function, &mut locator)? {
                let mut order = Vec::new();
                for (key, descending, nulls_first) in call.keys {
                    if tokens.has_placeholder_in(&key) {
                        return unsupported("a parameter inside an ordered string aggregate");
                    }
                    let index = node_keys.add(sql, key, table_edits, &mut hidden, select);
                    order.push(SortKey {
                        column: ColumnRef::Index(index),
                        descending,
                        nulls_first,
                    });
                }
                let max_length = call.bounded.then(|| {
                    hidden.push(vec![Piece::Text(MAX_LENGTH_PROBE.into())]);
                    select.projection.len() + hidden.len() - 1
                });
                aggregates.push(AggregateColumn {
                    index,
                    function: Aggregate::Join,
                    distinct: None,
                    joined: Some(Joined {
                        separator: call.separator,
                        order,
                        distinct: call.distinct,
                        max_length,
                    }),
                });
                continue;
            }
            if unmerged_aggregate(function) && function.over.is_none() {
                return Err(format!(
                    "{}() (its per-shard results do not merge)",
                    last_ident(&function.name)
                ));
            }
            if contains_aggregate(expr) {
                return unsupported("an aggregate or window function inside an expression");
            }
            continue;
        };
        if !plain_call(function) {
            return unsupported("window functions, FILTER or ordered aggregates");
        }
        // `COUNT(DISTINCT x)`: the nodes group by `x` too, so each sends each of its `x`
        // once, and the merge combines one row per distinct `x` (MIN and MAX need nothing).
        let mut distinct_key = None;
        if is_distinct(function) && !matches!(aggregate, Aggregate::Min | Aggregate::Max) {
            if matches!(aggregate, Aggregate::Concat) || !one_argument(function) {
                return unsupported("this DISTINCT aggregate");
            }
            let name_end = locator
                .offset(function.name.span().end)
                .map_err(|e| e.to_string())?;
            let key = arguments_text(sql, range, name_end)
                .and_then(|arguments| after_distinct(sql, arguments))
                .ok_or_else(|| "this DISTINCT aggregate".to_owned())?;
            if tokens.has_placeholder_in(&key) {
                return unsupported("a parameter inside a DISTINCT aggregate");
            }
            distinct_key = Some(node_keys.add(sql, key, table_edits, &mut hidden, select));
        }
        if let Aggregate::Avg { count_index } = &mut aggregate {
            let name = locator
                .offset(function.name.span().start)
                .and_then(|s| Ok(s..locator.offset(function.name.span().end)?))
                .map_err(|e| e.to_string())?;
            let arguments =
                arguments_text(sql, range, name.end).ok_or_else(|| "this AVG".to_owned())?;
            if tokens.has_placeholder_in(&arguments) {
                return unsupported("a parameter inside AVG");
            }
            edits.push(Edit {
                range: name,
                piece: Piece::Text("SUM".into()),
            });
            if alias.is_none() {
                // The name the client would see: MySQL's is the expression as written.
                let mut label = " AS ".to_owned();
                match dialect {
                    Dialect::MySql => push_identifier(&mut label, &sql[range.clone()], Some('`')),
                    Dialect::Postgres => label.push_str("avg"),
                }
                edits.push(Edit {
                    range: range.end..range.end,
                    piece: Piece::Text(label.into()),
                });
            }
            *count_index = select.projection.len() + hidden.len();
            let mut count = vec![Piece::Text("COUNT(".into())];
            count.extend(pieces_of(arguments, table_edits));
            count.push(Piece::Text(")".into()));
            hidden.push(count);
        }
        aggregates.push(AggregateColumn {
            index,
            function: aggregate,
            distinct: distinct_key,
            joined: None,
        });
    }
    if wildcard && !aggregates.is_empty() {
        return unsupported("* beside aggregates");
    }
    if !node_keys.group_by.is_empty() {
        // Without GROUP BY the answer is one row even where no node sends one; it can be
        // written only when every column is an aggregate.
        let visible = aggregates
            .iter()
            .filter(|a| a.index < select.projection.len())
            .count();
        if group_by.is_empty() && visible + computed.len() != select.projection.len() {
            return unsupported(
                "DISTINCT or ordered string aggregates beside other columns without GROUP BY",
            );
        }
        let at = group_by_end(parser, &mut locator).map_err(|e| e.to_string())?;
        let mut separator = if group_by.is_empty() {
            " GROUP BY "
        } else {
            ", "
        };
        for key in &node_keys.group_by {
            for piece in std::iter::once(Piece::Text(separator.into())).chain(key.iter().cloned()) {
                edits.push(Edit {
                    range: at..at,
                    piece,
                });
            }
            separator = ", ";
        }
    }
    if distinct && (wildcard || !aggregates.is_empty()) {
        return unsupported("DISTINCT of * or beside aggregates");
    }

    // A column the merge needs: where the select list has it, else appended and hidden.
    let column_for = |expr: &Expr, hidden: &mut Vec<Vec<Piece>>| -> Result<ColumnRef, String> {
        if let Some(index) = find_item(expr, select) {
            return Ok(ColumnRef::Index(index));
        }
        let sharded = |qualifier: &Ident| {
            tables
                .rules
                .iter()
                .position(|r| r.logic_table.eq_ignore_ascii_case(&qualifier.value))
        };
        let mut pieces = Vec::new();
        match expr {
            Expr::Identifier(ident) => pieces.push(Piece::Text(ident.to_string().into())),
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [.., column] if wildcard => pieces.push(Piece::Text(column.value.clone().into())),
                [qualifier, column] => {
                    match sharded(qualifier) {
                        // `t_order.status`: the qualifier is renamed per node, as in the text.
                        Some(table) => pieces.push(Piece::Table(table, qualifier.quote_style)),
                        None => pieces.push(Piece::Text(qualifier.to_string().into())),
                    }
                    pieces.push(Piece::Text(format!(".{column}").into()));
                }
                _ => return Err(
                    "ORDER BY or GROUP BY on a column qualified by its schema that is not selected"
                        .into(),
                ),
            },
            _ => return Err("ORDER BY or GROUP BY on an expression that is not selected".into()),
        };
        if wildcard {
            // Under `*` only the result knows positions; a plain column is in it by name.
            if let Expr::Identifier(ident) = expr {
                return Ok(ColumnRef::Name(ident.value.clone()));
            }
        }
        let label = format!("ks_hidden_{}", hidden.len());
        pieces.push(Piece::Text(format!(" AS {label}").into()));
        hidden.push(pieces);
        Ok(if wildcard {
            ColumnRef::Name(label)
        } else {
            ColumnRef::Index(select.projection.len() + hidden.len() - 1)
        })
    };
    let mut spec_group: Vec<ColumnRef> = match distinct {
        true => (0..select.projection.len()).map(ColumnRef::Index).collect(),
        false => Vec::new(),
    };
    for expr in group_by {
        spec_group.push(column_for(expr, &mut hidden)?);
    }
    let mut having = None;
    let mut skip: Vec<Range<usize>> = Vec::new();
    if let Some(expr) = &select.having {
        if distinct {
            return unsupported("DISTINCT with HAVING");
        }
        let clause = having_range(parser, &mut locator)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "this HAVING".to_owned())?;
        let groups: Vec<(&Expr, &ColumnRef)> = group_by.iter().zip(&spec_group).collect();
        let mut column = |e: &Expr| -> Result<usize, String> {
            let Expr::Function(function) = e else {
                return match groups.iter().find(|(g, _)| *g == e) {
                    Some((_, ColumnRef::Index(index))) => Ok(*index),
                    _ => Err(format!("HAVING on {e}, which is not grouped by")),
                };
            };
            if let Some(index) = find_item(e, select) {
                return match aggregates.iter().any(|a| a.index == index) {
                    true => Ok(index),
                    false => Err(format!("HAVING on {e}")),
                };
            }
            let aggregate = aggregate_of(function)
                .filter(|a| {
                    !matches!(
                        a,
                        Aggregate::Avg { .. } | Aggregate::Concat | Aggregate::Join
                    )
                })
                .ok_or_else(|| format!("HAVING on {e}, which is not selected"))?;
            if !plain_call(function) || is_distinct(function) {
                return Err(format!("HAVING on {e}"));
            }
            let pieces = call_pieces(function, parser, &mut locator, tokens, table_edits)?;
            Ok(hidden_aggregate(
                pieces,
                aggregate,
                &mut hidden,
                &mut aggregates,
                select,
            ))
        };
        having = Some(filter_of(expr, &mut column)?);
        // The nodes group without it; their partial groups are tested once merged.
        edits.retain(|e| !(clause.start <= e.range.start && e.range.end <= clause.end));
        edits.push(Edit {
            range: clause.clone(),
            piece: Piece::Text("".into()),
        });
        skip.push(clause);
    }
    let mut order_by = Vec::new();
    if let Some(order) = &query.order_by {
        let OrderByKind::Expressions(exprs) = &order.kind else {
            return unsupported("ORDER BY ALL");
        };
        for item in exprs {
            order_by.push(SortKey {
                column: column_for(&item.expr, &mut hidden)?,
                descending: matches!(item.options.sort, Some(OrderBySort::Desc)),
                nulls_first: item.options.nulls_first,
            });
        }
    }
    // MySQL's division scale is the session's: its nodes send it.
    let divides = aggregates
        .iter()
        .any(|a| matches!(a.function, Aggregate::Avg { .. }))
        || computed.iter().any(|c| c.expr.divides());
    let division_scale = (dialect == Dialect::MySql && divides).then(|| {
        hidden.push(vec![Piece::Text(DIVISION_SCALE_PROBE.into())]);
        select.projection.len() + hidden.len() - 1
    });
    // A hidden column would be one more the nodes' DISTINCT tells rows apart by.
    if distinct && !hidden.is_empty() {
        return unsupported("DISTINCT with ORDER BY on what it does not select");
    }
    if let Some(last) = items.last()
        && !hidden.is_empty()
    {
        // Insertions at one position keep their order.
        for column in &hidden {
            let separator = std::iter::once(Piece::Text(", ".into()));
            for piece in separator.chain(column.iter().cloned()) {
                edits.push(Edit {
                    range: last.end..last.end,
                    piece,
                });
            }
        }
    }

    let (offset, limit) = limit_edits(query, dialect, tokens, &mut locator, &mut edits, skip)?;
    // One row is answered for all: ordering it by what it does not select would be an
    // error in PostgreSQL, which the nodes' grouping would hide.
    if group_by.is_empty()
        && !node_keys.group_by.is_empty()
        && order_by
            .iter()
            .any(|k| !matches!(k.column, ColumnRef::Index(i) if i < select.projection.len()))
    {
        return unsupported("ORDER BY what an aggregate without GROUP BY does not select");
    }
    let grouped = !spec_group.is_empty() || !aggregates.is_empty();
    let when_empty = (group_by.is_empty() && !node_keys.group_by.is_empty()).then(|| {
        let mut row = vec![Value::Null; select.projection.len() + hidden.len()];
        for a in &aggregates {
            if let (Aggregate::Count, Some(slot)) = (a.function, row.get_mut(a.index)) {
                *slot = Value::Int(0);
            }
        }
        row
    });
    Ok(MultiRead {
        template: Template::whole(sql.len(), edits).map_err(|e| e.to_string())?,
        spec: MergeSpec {
            group_by: spec_group,
            aggregates,
            computed,
            division_scale,
            having,
            when_empty,
            order_by,
            offset: 0,
            limit: None,
            hidden_columns: hidden.len(),
            dialect,
        },
        offset,
        limit,
        grouped,
    })
}

/// The select list item whose value `expr` is: by position (`ORDER BY 2`), by alias, or by the
/// same expression (a column matched by name, however qualified).
pub(super) fn find_item(expr: &Expr, select: &Select) -> Option<usize> {
    if let Expr::Value(v) = expr
        && let SqlValue::Number(n, _) = &v.value
    {
        return n.parse::<usize>().ok()?.checked_sub(1);
    }
    let column_name = |e: &Expr| -> Option<String> {
        match e {
            Expr::Identifier(i) => Some(i.value.to_ascii_lowercase()),
            Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.to_ascii_lowercase()),
            _ => None,
        }
    };
    let wanted = column_name(expr);
    select.projection.iter().position(|item| match item {
        SelectItem::ExprWithAlias { expr: e, alias } => {
            e == expr
                || matches!(expr, Expr::Identifier(i) if i.value.eq_ignore_ascii_case(&alias.value))
        }
        SelectItem::UnnamedExpr(e) => e == expr || (wanted.is_some() && column_name(e) == wanted),
        _ => false,
    })
}
