//! SELECT, UPDATE and DELETE on sharded tables: which data nodes can hold the rows a statement
//! touches, and the statement each of them runs. Conditions on sharding columns (`=`, `IN`,
//! `AND`, `OR`; literals and parameters) narrow the nodes; anything else leaves them all. Every
//! reference to a logic table is spliced as INSERT does. A read over several nodes is rewritten
//! (`AVG` as `SUM` and `COUNT`, `LIMIT offset + count`, sort keys it must see) and says how the
//! rows merge.

use std::ops::{ControlFlow, Range};
use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{
    Delete, Expr, FromTable, Function, FunctionArgumentList, FunctionArguments, GroupByExpr,
    InTarget, LimitClause, ObjectName, ObjectNamePart, OrderByKind, OrderBySort, Query, Select,
    SelectItem, SetExpr, Spanned, Statement, TableFactor, TableWithJoins, Value as SqlValue, Visit,
    Visitor, visit_expressions, visit_relations,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Span, Token};

use crate::literal::literal_value;
use crate::locate::Locator;
use crate::merge::{Aggregate, AggregateColumn, ColumnRef, MergeSpec, SortKey};
use crate::names::last_ident;
use crate::names::push_identifier;
use crate::plan::{ExecutionUnit, Plan};
use crate::route::{describe, is_sharding_column, nodes_with};
use crate::template::{Edit, Piece, Renderer, RowKey, Template};
use crate::tokens::{self, Tokens};
use crate::unchanged::{Moving, Unchanged, moves, sharding_assignments};
use crate::value::Value;
use crate::{Dialect, RouteError};

mod guard;

/// A per-node LIMIT that limits nothing, in range for MySQL, PostgreSQL and SQLite alike.
const NO_LIMIT: u64 = i64::MAX as u64;

/// A SELECT, UPDATE or DELETE on sharded tables, parsed once; [`PreparedQuery::bind`] plans an
/// execution.
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    sql: Box<str>,
    dialect: Dialect,
    /// The sharded tables, numbered as the template's table pieces; bound alike, so data node
    /// `i` of one goes with data node `i` of the others.
    tables: Vec<Arc<TableRule>>,
    condition: Condition,
    /// Logic tables renamed, every placeholder renumbered: what a single node runs.
    plain: Template,
    kind: Kind,
    param_count: usize,
    /// An UPDATE's sharding-column assignments, each with the value the WHERE clause pins the
    /// column to: allowed only when the two are equal, so the row stays on its node.
    unchanged: Vec<Unchanged>,
    /// An UPDATE's sharding column set where the WHERE clause does not pin it.
    moving: Option<Moving>,
}

#[derive(Debug, Clone)]
enum Kind {
    /// A read; how several nodes answer it, or why they cannot.
    Read(Result<Box<MultiRead>, String>),
    /// UPDATE or DELETE, and why it cannot be split over nodes, if it cannot: with ORDER BY or
    /// LIMIT each node would apply its own, and a sharded table it also reads (a subquery on
    /// itself) would be read one node at a time.
    Write { unsplittable: Option<&'static str> },
}

/// A read as several nodes run it, and how their rows merge.
#[derive(Debug, Clone)]
struct MultiRead {
    template: Template,
    /// The merge, its offset and limit still to be bound.
    spec: MergeSpec,
    offset: Option<Operand>,
    limit: Option<Operand>,
    /// Grouped results cannot be cut per node: a group may span nodes.
    grouped: bool,
}

/// A value in the statement: written there, or a parameter (0-based).
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    Value(Value),
    Param(usize),
}

/// Which data nodes a WHERE clause can match.
#[derive(Debug, Clone)]
enum Condition {
    /// Any node: the clause says nothing the router reads.
    Any,
    /// A sharding column of the statement's table `table` (of every sharded table that shards
    /// by it when unqualified) equals one of `values`.
    Equals {
        table: Option<usize>,
        column: String,
        values: Vec<Operand>,
    },
    And(Vec<Condition>),
    Or(Vec<Condition>),
}

impl Condition {
    /// The one value the clause requires `column` to have in every row it matches: an
    /// equality with a single value, alone or among conditions joined by AND.
    fn pinned(&self, column: &str) -> Option<Operand> {
        match self {
            Condition::Equals {
                column: c, values, ..
            } if c.eq_ignore_ascii_case(column) && values.len() == 1 => values.first().cloned(),
            Condition::And(parts) => parts.iter().find_map(|p| p.pinned(column)),
            _ => None,
        }
    }
}

/// What prepare needs to know of the statement's tables.
pub(crate) struct Tables<'a> {
    /// The sharded tables in the statement, in order of first appearance.
    pub(crate) rules: Vec<Arc<TableRule>>,
    /// Where each sharded table's name is written, with its number and quote style.
    pub(crate) names: Vec<(Range<usize>, usize, Option<char>)>,
    /// The same table twice (a self-join or a subquery on it).
    pub(crate) repeated: bool,
    /// Aliases of the top-level FROM, lower-cased, by sharded table number.
    pub(crate) aliases: Vec<(String, usize)>,
    pub(crate) locator: Locator<'a>,
}

pub(crate) fn prepare(
    sql: &str,
    dialect: Dialect,
    parser: &Parser<'_>,
    statement: &Statement,
    mut tables: Tables<'_>,
) -> Result<PreparedQuery, RouteError> {
    let logic_names: Vec<&str> = tables
        .rules
        .iter()
        .map(|r| r.logic_table.as_str())
        .collect();
    let locator = &mut tables.locator;
    let tokens = Tokens::scan(parser, locator, dialect, &logic_names)?;
    let mut edits: Vec<Edit> = Vec::new();
    for (range, table, quote) in &tables.names {
        edits.push(Edit {
            range: range.clone(),
            piece: Piece::Table(*table, *quote),
        });
    }
    for (range, quote, table) in &tokens.qualifiers {
        if !tables
            .names
            .iter()
            .any(|(name, _, _)| name.start <= range.start && range.end <= name.end)
        {
            edits.push(Edit {
                range: range.clone(),
                piece: Piece::Table(*table, *quote),
            });
        }
    }
    let context = Context {
        rules: &tables.rules,
        aliases: &tables.aliases,
        tokens: &tokens,
    };
    let mut assigned = Vec::new();
    let (selection, kind) = match statement {
        Statement::Query(query) => {
            let read =
                multi_read(sql, dialect, parser, query, &tables, &tokens, &edits).map(Box::new);
            (
                select_of(query).and_then(|s| s.selection.as_ref()),
                Kind::Read(read),
            )
        }
        Statement::Update(update) => {
            assigned = sharding_assignments(update, &tables.rules, &tokens, &mut tables.locator)?;
            let limited = update.limit.is_some() || !update.order_by.is_empty();
            let unsplittable = write_limits(limited, tables.repeated);
            (update.selection.as_ref(), Kind::Write { unsplittable })
        }
        Statement::Delete(delete) => {
            let limited = delete.limit.is_some() || !delete.order_by.is_empty();
            let unsplittable = write_limits(limited, tables.repeated);
            (delete.selection.as_ref(), Kind::Write { unsplittable })
        }
        _ => return Err(RouteError::Internal("a query that is not one")),
    };
    let condition = match selection {
        Some(expr) => context.condition(expr, &mut tables.locator)?,
        None => Condition::Any,
    };
    let mut unchanged = Vec::new();
    let mut moving = None;
    for (column, value) in assigned {
        if let Some(pinned) = condition.pinned(&column) {
            unchanged.push(Unchanged::new(column, value, pinned));
            continue;
        }
        // One sharding column set where the WHERE clause does not pin it can be guarded.
        let guarded = match (statement, &moving) {
            (Statement::Update(update), None) => Moving::new(
                sql,
                update,
                (column.clone(), value),
                &tokens,
                &mut tables.locator,
                dialect,
            )?,
            _ => None,
        };
        moving = Some(guarded.ok_or_else(|| moves(&column))?);
    }
    let mut plain_edits = placeholder_edits(&tokens, &[]);
    plain_edits.extend(edits.iter().cloned());
    Ok(PreparedQuery {
        plain: Template::whole(sql.len(), plain_edits)?,
        sql: sql.into(),
        dialect,
        tables: tables.rules,
        condition,
        kind,
        param_count: tokens.param_count,
        unchanged,
        moving,
    })
}

/// Every placeholder outside `skip`, rendered (and for PostgreSQL renumbered) per unit.
fn placeholder_edits(tokens: &Tokens, skip: &[Range<usize>]) -> Vec<Edit> {
    tokens
        .placeholders
        .iter()
        .filter(|p| {
            !skip
                .iter()
                .any(|s| s.start <= p.range.start && p.range.end <= s.end)
        })
        .map(|p| Edit {
            range: p.range.clone(),
            piece: Piece::Param(p.index),
        })
        .collect()
}

fn select_of(query: &Query) -> Option<&Select> {
    match &*query.body {
        SetExpr::Select(select) => Some(select),
        _ => None,
    }
}

fn write_limits(limited: bool, repeated: bool) -> Option<&'static str> {
    if limited {
        Some("with ORDER BY or LIMIT")
    } else if repeated {
        Some("that also reads the table it changes")
    } else {
        None
    }
}

struct Context<'a> {
    rules: &'a [Arc<TableRule>],
    aliases: &'a [(String, usize)],
    tokens: &'a Tokens,
}

impl Context<'_> {
    /// What `expr` (a WHERE clause) says about where its rows are.
    fn condition(&self, expr: &Expr, locator: &mut Locator<'_>) -> Result<Condition, RouteError> {
        Ok(match expr {
            Expr::Nested(inner) => self.condition(inner, locator)?,
            Expr::BinaryOp { left, op, right } => match op {
                sqlparser::ast::BinaryOperator::And => Condition::And(vec![
                    self.condition(left, locator)?,
                    self.condition(right, locator)?,
                ]),
                sqlparser::ast::BinaryOperator::Or => Condition::Or(vec![
                    self.condition(left, locator)?,
                    self.condition(right, locator)?,
                ]),
                sqlparser::ast::BinaryOperator::Eq => {
                    match (self.column(left), self.column(right)) {
                        (Some((table, column)), None) => {
                            self.equals(table, column, [&**right], locator)?
                        }
                        (None, Some((table, column))) => {
                            self.equals(table, column, [&**left], locator)?
                        }
                        _ => Condition::Any,
                    }
                }
                _ => Condition::Any,
            },
            Expr::In {
                expr,
                target: InTarget::List(list),
                negated: false,
                ..
            } => match self.column(expr) {
                Some((table, column)) => self.equals(table, column, list, locator)?,
                None => Condition::Any,
            },
            _ => Condition::Any,
        })
    }

    fn equals<'e>(
        &self,
        table: Option<usize>,
        column: &str,
        values: impl IntoIterator<Item = &'e Expr>,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        let mut operands = Vec::new();
        for value in values {
            match operand(value, self.tokens, locator)? {
                Some(operand) => operands.push(operand),
                // `id = other_column`, `id IN (1, f(x))`: anywhere.
                None => return Ok(Condition::Any),
            }
        }
        Ok(Condition::Equals {
            table,
            column: column.to_owned(),
            values: operands,
        })
    }

    /// The sharding column `expr` names: `col`, `alias.col` or `table.col`.
    fn column<'e>(&self, expr: &'e Expr) -> Option<(Option<usize>, &'e str)> {
        let (table, column) = match expr {
            Expr::Identifier(ident) => (None, ident.value.as_str()),
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [.., qualifier, column] => {
                    let lower = qualifier.value.to_ascii_lowercase();
                    let table = self
                        .aliases
                        .iter()
                        .find(|(alias, _)| *alias == lower)
                        .map(|(_, t)| *t)?;
                    (Some(table), column.value.as_str())
                }
                _ => return None,
            },
            Expr::Nested(inner) => return self.column(inner),
            _ => return None,
        };
        let shards_by = |t: usize| {
            self.rules
                .get(t)
                .is_some_and(|r| is_sharding_column(r, column))
        };
        let known = match table {
            Some(t) => shards_by(t),
            None => (0..self.rules.len()).any(shards_by),
        };
        known.then_some((table, column))
    }
}

/// A literal or a placeholder; `None` for any other expression.
pub(crate) fn operand(
    expr: &Expr,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Option<Operand>, RouteError> {
    Ok(match expr {
        Expr::Value(v) => match &v.value {
            SqlValue::Placeholder(_) => {
                let at = locator.offset(v.span.start)?;
                Some(Operand::Param(tokens.placeholder_at(at)?))
            }
            other => literal_value(other, false).map(Operand::Value),
        },
        Expr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) => literal_value(&v.value, true).map(Operand::Value),
            _ => None,
        },
        Expr::Nested(inner) => operand(inner, tokens, locator)?,
        _ => None,
    })
}

impl Operand {
    pub(crate) fn resolve<'a>(&'a self, params: &'a [Value]) -> Result<&'a Value, RouteError> {
        match self {
            Operand::Value(v) => Ok(v),
            Operand::Param(i) => params.get(*i).ok_or(RouteError::MissingParameter {
                needed: i + 1,
                given: params.len(),
            }),
        }
    }
}

impl Condition {
    /// The data nodes (by index, shared by the bound tables) whose rows can match.
    fn nodes(
        &self,
        rules: &[Arc<TableRule>],
        params: &[Value],
        scratch: &mut String,
    ) -> Result<Vec<bool>, RouteError> {
        let count = rules.first().map_or(0, |r| r.data_nodes.len());
        Ok(match self {
            Condition::Any => vec![true; count],
            Condition::Equals {
                table,
                column,
                values,
            } => {
                let mut nodes = vec![false; count];
                for value in values {
                    let value = value.resolve(params)?;
                    let mut these = vec![true; count];
                    for (t, rule) in rules.iter().enumerate() {
                        if table.is_some_and(|only| only != t) {
                            continue;
                        }
                        // A value that routes nowhere is looked for everywhere: the database
                        // evaluates the condition anyway, so this is only slower, never wrong.
                        if let Some(matching) = nodes_with(rule, column, value, scratch) {
                            and(&mut these, &matching);
                        }
                    }
                    or(&mut nodes, &these);
                }
                nodes
            }
            Condition::And(parts) => {
                let mut nodes = vec![true; count];
                for part in parts {
                    and(&mut nodes, &part.nodes(rules, params, scratch)?);
                }
                nodes
            }
            Condition::Or(parts) => {
                let mut nodes = vec![false; count];
                for part in parts {
                    or(&mut nodes, &part.nodes(rules, params, scratch)?);
                }
                nodes
            }
        })
    }
}

fn and(nodes: &mut [bool], other: &[bool]) {
    for (n, o) in nodes.iter_mut().zip(other) {
        *n &= *o;
    }
}

fn or(nodes: &mut [bool], other: &[bool]) {
    for (n, o) in nodes.iter_mut().zip(other) {
        *n |= *o;
    }
}

impl PreparedQuery {
    /// Parameters the statement takes.
    pub fn param_count(&self) -> usize {
        self.param_count
    }

    /// The statement as written.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Whether the statement only reads.
    pub fn is_read(&self) -> bool {
        matches!(self.kind, Kind::Read(_))
    }

    /// Plans one execution with `params`.
    pub fn bind(&self, params: &[Value]) -> Result<Plan, RouteError> {
        for unchanged in &self.unchanged {
            unchanged.check(params)?;
        }
        let mut scratch = String::new();
        let mut nodes = self.condition.nodes(&self.tables, params, &mut scratch)?;
        let guard = match &self.moving {
            Some(moving) => self.guard(moving, params, &mut nodes, &mut scratch)?,
            None => None,
        };
        let mut chosen: Vec<usize> = (0..nodes.len()).filter(|&n| nodes[n]).collect();
        if chosen.is_empty() {
            // No node can hold a matching row; one node still answers with the right shape
            // (an empty result, no row changed), since it evaluates the same condition.
            chosen.push(0);
        }
        if chosen.len() == 1 {
            let unit = self.render(&self.plain, chosen[0], params, (0, 0))?;
            let mut plan = Plan::of_units(vec![unit]);
            plan.guard = guard;
            return Ok(plan);
        }
        match &self.kind {
            Kind::Write {
                unsplittable: Some(why),
            } => Err(RouteError::Unsupported(format!(
                "UPDATE or DELETE {why} on several shards"
            ))),
            Kind::Write { unsplittable: None } => {
                let units = chosen
                    .iter()
                    .map(|&n| self.render(&self.plain, n, params, (0, 0)))
                    .collect::<Result<_, _>>()?;
                let mut plan = Plan::of_units(units);
                plan.guard = guard;
                Ok(plan)
            }
            Kind::Read(Err(why)) => Err(RouteError::Unsupported(format!(
                "{why} when the rows are on several shards"
            ))),
            Kind::Read(Ok(read)) => {
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
                    .map(|&n| self.render(&read.template, n, params, (0, per_node)))
                    .collect::<Result<_, _>>()?;
                Ok(Plan {
                    merge: Some(spec),
                    ..Plan::of_units(units)
                })
            }
        }
    }

    fn render(
        &self,
        template: &Template,
        node: usize,
        params: &[Value],
        limit: (u64, u64),
    ) -> Result<ExecutionUnit, RouteError> {
        let nodes: Vec<&keyshard_config::DataNode> = self
            .tables
            .iter()
            .map(|r| r.data_nodes.get(node))
            .collect::<Option<_>>()
            .ok_or(RouteError::Internal("bound tables with different nodes"))?;
        let first = nodes
            .first()
            .ok_or(RouteError::Internal("a query without tables"))?;
        let tables: Vec<&str> = nodes.iter().map(|n| n.table.as_str()).collect();
        let mut renderer = Renderer::new(&self.sql, self.dialect, &tables, params);
        renderer.limit = limit;
        renderer.render(template.head(), RowKey::NONE)?;
        Ok(ExecutionUnit {
            data_source: first.data_source.clone(),
            table: first.table.clone(),
            sql: renderer.out,
            params: renderer.out_params,
            rows: Vec::new(),
        })
    }
}

fn limit_number(value: &Value) -> Result<u64, RouteError> {
    match value {
        Value::Int(v) => u64::try_from(*v).ok(),
        Value::UInt(v) => Some(*v),
        Value::Text(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        RouteError::Unsupported(format!(
            "LIMIT or OFFSET value {}: it must be a non-negative integer",
            describe(value)
        ))
    })
}

/// The names of the sharded tables a statement reads or writes, where they are written, and the
/// top-level aliases. `rule_of` says whether a name is a sharded table.
pub(crate) fn tables<'a>(
    sql: &'a str,
    statement: &Statement,
    rule_of: impl Fn(&str) -> Option<Arc<TableRule>>,
) -> Result<(Tables<'a>, Vec<String>), RouteError> {
    let mut tables = Tables {
        rules: Vec::new(),
        names: Vec::new(),
        repeated: false,
        aliases: Vec::new(),
        locator: Locator::new(sql),
    };
    let mut others = Vec::new();
    let mut spans: Vec<(Span, usize, Option<char>)> = Vec::new();
    let _ = visit_relations(statement, |name: &ObjectName| {
        let Some(ObjectNamePart::Identifier(ident)) = name.0.last() else {
            return ControlFlow::<()>::Continue(());
        };
        match rule_of(&ident.value) {
            Some(rule) => {
                let number = match tables
                    .rules
                    .iter()
                    .position(|r| Arc::ptr_eq(r, &rule) || r.logic_table == rule.logic_table)
                {
                    Some(n) => n,
                    None => {
                        tables.rules.push(rule);
                        tables.rules.len() - 1
                    }
                };
                spans.push((ident.span, number, ident.quote_style));
            }
            None => others.push(ident.value.clone()),
        }
        ControlFlow::Continue(())
    });
    for (span, number, quote) in spans {
        let range = tables.locator.offset(span.start)?..tables.locator.offset(span.end)?;
        tables.names.push((range, number, quote));
    }
    // Relations only: a qualified column (`t_order.id`) is not one.
    tables.repeated = tables.names.len() > tables.rules.len();
    let froms: Vec<&TableWithJoins> = match statement {
        Statement::Query(query) => select_of(query)
            .map(|s| s.from.iter().collect())
            .unwrap_or_default(),
        Statement::Update(update) => vec![&update.table],
        Statement::Delete(Delete { from, .. }) => match from {
            FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f.iter().collect(),
        },
        _ => Vec::new(),
    };
    for from in froms {
        let factors = std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation));
        for factor in factors {
            if let TableFactor::Table { name, alias, .. } = factor {
                let logic = last_ident(name);
                if let Some(n) = tables
                    .rules
                    .iter()
                    .position(|r| r.logic_table.eq_ignore_ascii_case(logic))
                {
                    let written = alias
                        .as_ref()
                        .map_or(logic, |a| a.name.value.as_str())
                        .to_ascii_lowercase();
                    tables.aliases.push((written, n));
                }
            }
        }
    }
    Ok((tables, others))
}

/// The aggregate functions merged across shards.
fn aggregate_of(function: &Function) -> Option<Aggregate> {
    let name = last_ident(&function.name);
    let aggregate = [
        ("count", Aggregate::Count),
        ("sum", Aggregate::Sum),
        ("min", Aggregate::Min),
        ("max", Aggregate::Max),
        ("avg", Aggregate::Avg { count_index: 0 }),
    ]
    .into_iter()
    .find(|(n, _)| name.eq_ignore_ascii_case(n))?
    .1;
    Some(aggregate)
}

fn contains_aggregate(expr: &Expr) -> bool {
    visit_expressions(expr, |e| match e {
        Expr::Function(f) if aggregate_of(f).is_some() || f.over.is_some() => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
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

/// The rewrite and merge of a SELECT over several nodes; `Err` says why it cannot be merged.
#[allow(clippy::too_many_arguments)]
fn multi_read(
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
    let mut counter = QueryCount(0);
    let _ = query.visit(&mut counter);
    if counter.0 > 1 {
        return unsupported("subqueries");
    }
    if query.with.is_some() || query.fetch.is_some() {
        return unsupported("WITH or FETCH");
    }
    let Some(select) = select_of(query) else {
        return unsupported("UNION, INTERSECT and EXCEPT");
    };
    if select.distinct.is_some() || select.having.is_some() || select.top.is_some() {
        return unsupported("DISTINCT, HAVING or TOP");
    }
    let group_by = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs,
        _ => return unsupported("GROUP BY ALL, ROLLUP, CUBE or GROUPING SETS"),
    };
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
    let mut hidden: Vec<String> = Vec::new();
    let mut aggregates = Vec::new();
    for (index, (item, range)) in select.projection.iter().zip(&items).enumerate() {
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(expr) => (expr, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
            _ => continue,
        };
        let function = match expr {
            Expr::Function(f) => f,
            other if contains_aggregate(other) => {
                return unsupported("an aggregate or window function inside an expression");
            }
            _ => continue,
        };
        let Some(mut aggregate) = aggregate_of(function) else {
            if contains_aggregate(expr) {
                return unsupported("an aggregate or window function inside an expression");
            }
            continue;
        };
        let FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            clauses,
            ..
        }) = &function.args
        else {
            return unsupported("DISTINCT in an aggregate");
        };
        if function.over.is_some() || function.filter.is_some() || !clauses.is_empty() {
            return unsupported("window functions, FILTER or ordered aggregates");
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
            hidden.push(format!("COUNT({})", &sql[arguments]));
        }
        aggregates.push(AggregateColumn {
            index,
            function: aggregate,
        });
    }
    if wildcard && !aggregates.is_empty() {
        return unsupported("* beside aggregates");
    }

    // A column the merge needs: where the select list has it, else appended and hidden.
    let column_for = |expr: &Expr, hidden: &mut Vec<String>| -> Result<ColumnRef, String> {
        if let Some(index) = find_item(expr, select) {
            return Ok(ColumnRef::Index(index));
        }
        let name = match expr {
            Expr::Identifier(ident) => ident.value.clone(),
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [qualifier, column]
                    if !tables
                        .rules
                        .iter()
                        .any(|r| r.logic_table.eq_ignore_ascii_case(&qualifier.value)) =>
                {
                    format!("{}.{}", qualifier, column)
                }
                // `t_order.status` would need its qualifier renamed per node.
                [.., column] if wildcard => column.value.clone(),
                _ => return Err("ORDER BY or GROUP BY on a column qualified by its table name that is not selected".into()),
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
        hidden.push(format!("{name} AS {label}"));
        Ok(if wildcard {
            ColumnRef::Name(label)
        } else {
            ColumnRef::Index(select.projection.len() + hidden.len() - 1)
        })
    };
    let mut spec_group = Vec::new();
    for expr in group_by {
        spec_group.push(column_for(expr, &mut hidden)?);
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
    if let Some(last) = items.last()
        && !hidden.is_empty()
    {
        let mut text = String::new();
        for column in &hidden {
            text.push_str(", ");
            text.push_str(column);
        }
        edits.push(Edit {
            range: last.end..last.end,
            piece: Piece::Text(text.into()),
        });
    }

    let (offset, limit, limit_ranges) = limit_clause(query, tokens, &mut locator)?;
    for (range, is_offset) in &limit_ranges {
        edits.push(Edit {
            range: range.clone(),
            piece: Piece::Limit { offset: *is_offset },
        });
    }
    let skip: Vec<Range<usize>> = limit_ranges.iter().map(|(r, _)| r.clone()).collect();
    edits.extend(placeholder_edits(tokens, &skip));
    let grouped = !spec_group.is_empty() || !aggregates.is_empty();
    Ok(MultiRead {
        template: Template::whole(sql.len(), edits).map_err(|e| e.to_string())?,
        spec: MergeSpec {
            group_by: spec_group,
            aggregates,
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
fn find_item(expr: &Expr, select: &Select) -> Option<usize> {
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

/// The byte ranges of the top-level select list's items, from the tokens (sqlparser's spans of
/// some expressions stop short of their closing parenthesis).
fn projection_ranges(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<Option<Vec<Range<usize>>>, RouteError> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut started = false;
    let mut current: Option<Range<usize>> = None;
    for token in tokens::significant(parser) {
        if !started {
            if let Token::Word(w) = &token.token
                && w.keyword == Keyword::SELECT
            {
                started = true;
            }
            continue;
        }
        let range = locator.offset(token.span.start)?..locator.offset(token.span.end)?;
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                items.extend(current.take());
                continue;
            }
            Token::Word(w)
                if depth == 0
                    && w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::FROM
                            | Keyword::WHERE
                            | Keyword::GROUP
                            | Keyword::ORDER
                            | Keyword::LIMIT
                            | Keyword::INTO
                    ) =>
            {
                break;
            }
            Token::SemiColon if depth == 0 => break,
            _ => {}
        }
        current = Some(match current {
            Some(c) => c.start..range.end,
            None => range,
        });
    }
    items.extend(current);
    Ok(started.then_some(items))
}

/// The text between the parentheses of the call whose name ends at `name_end`, within `item`.
fn arguments_text(sql: &str, item: &Range<usize>, name_end: usize) -> Option<Range<usize>> {
    let text = sql.get(name_end..item.end)?;
    let open = name_end + text.find('(')? + 1;
    let close = name_end + text.rfind(')')?;
    (open <= close).then_some(open..close)
}

type LimitParts = (Option<Operand>, Option<Operand>, Vec<(Range<usize>, bool)>);

/// The statement's OFFSET and LIMIT, and where their values are written.
fn limit_clause(
    query: &Query,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<LimitParts, String> {
    let (offset, limit) = match &query.limit_clause {
        None => return Ok((None, None, Vec::new())),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err("LIMIT BY".into());
            }
            (offset.as_ref().map(|o| &o.value), limit.as_ref())
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => (Some(offset), Some(limit)),
    };
    let mut ranges = Vec::new();
    let mut read = |expr: Option<&Expr>, is_offset: bool| -> Result<Option<Operand>, String> {
        let Some(expr) = expr else { return Ok(None) };
        // `LIMIT ALL` (PostgreSQL) or `LIMIT NULL`: no limit.
        if let Expr::Value(v) = expr
            && v.value == SqlValue::Null
        {
            return Ok(None);
        }
        let value = operand(expr, tokens, locator)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "a LIMIT or OFFSET that is not a number or a parameter".to_owned())?;
        let span = expr.span();
        let range = locator
            .offset(span.start)
            .and_then(|s| Ok(s..locator.offset(span.end)?))
            .map_err(|e| e.to_string())?;
        ranges.push((range, is_offset));
        Ok(Some(value))
    };
    let offset = read(offset, true)?;
    let limit = read(limit, false)?;
    Ok((offset, limit, ranges))
}
