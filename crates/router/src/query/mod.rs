//! SELECT, UPDATE and DELETE on sharded tables: which data nodes can hold the rows a statement
//! touches, and the statement each of them runs. Conditions on sharding columns (`=`, `IN`,
//! `AND`, `OR`; literals and parameters) narrow the nodes; anything else leaves them all. Every
//! reference to a logic table is spliced as INSERT does. A read over several nodes is rewritten
//! (`AVG` as `SUM` and `COUNT`, `LIMIT offset + count`, sort keys it must see) and says how the
//! rows merge.
//!
//! Here: prepare and bind. Each job they call on has its file: `tables` (which tables, where
//! written), `conditions` (the WHERE clause → nodes), `rewrite` with `limit`, `select_list`,
//! `hidden`, `having`, `joined` (string aggregates), `computed` (expressions over aggregates)
//! and `union` (a read over several nodes), `guard` (an UPDATE that would move rows).

use std::ops::Range;
use std::sync::Arc;

use keyshard_config::TableRule;
use smallvec::SmallVec;
use sqlparser::ast::{Query, Select, SetExpr, Statement};
use sqlparser::parser::Parser;

use crate::RouteError;
use crate::plan::{ExecutionUnit, Plan, moves};
use crate::shape::Shape;
use crate::template::{Edit, Literals, Piece, Renderer, RowKey, Template};
use crate::tokens::Tokens;
use gather::GatherQuery;
use keyshard_types::Dialect;
use keyshard_types::Value;
use update_moves::{Moving, Unchanged, sharding_assignments};

mod aggregates;
mod calls;
mod computed;
mod conditions;
pub mod gather;
mod guard;
mod having;
mod hidden;
mod joined;
mod limit;
mod rewrite;
mod select_list;
mod tables;
mod union;
mod update_moves;

use conditions::Condition;
pub(crate) use conditions::{Operand, operand};
use rewrite::{MultiRead, multi_read};
pub(crate) use tables::{Tables, tables};
use union::union_read;

/// A SELECT, UPDATE or DELETE on sharded tables, parsed once; [`PreparedQuery::bind`] plans an
/// execution.
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    /// Shared with the plans bound from a shape (see [`Plan::described_as`]).
    sql: Arc<str>,
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
    /// A read over several nodes that no merge answers: how its rows are gathered instead.
    gather: Option<Arc<GatherQuery>>,
    /// The WHERE clause routes the gather too: the statement reads one sharded table, once,
    /// alone in its FROM.
    narrows_gather: bool,
    /// A read a replica may answer (see [`Plan::replica_safe`]).
    replica_safe: bool,
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
        if !tables.self_aliased.contains(table)
            && !tables
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
    let narrows_gather = tables.alone && tables.rules.len() == 1 && !tables.repeated;
    let mut assigned = Vec::new();
    let (selection, kind) = match statement {
        Statement::Query(query) => {
            // A set operation at the top (UNION, INTERSECT, EXCEPT) merges by its own rules.
            let read = if query.with.is_none() && select_of(query).is_none() {
                union_read(sql, dialect, parser, query, &tables, &tokens, &edits)
            } else {
                multi_read(sql, dialect, parser, query, &tables, &tokens, &edits)
            }
            .map(Box::new);
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
    let condition = Condition::of_where(
        selection,
        &tables.rules,
        &tables.aliases,
        &tokens,
        &mut tables.locator,
    )?;
    let condition = with_hint(condition, sql, &tables.rules)?;
    audit(sql, statement, &tables.rules, &condition)?;
    let mut unchanged = Vec::new();
    let mut moving = None;
    for (column, value) in assigned {
        if let Some(pinned) = condition.pinned(&column) {
            unchanged.push(Unchanged::new(column, value, pinned));
            continue;
        }
        // A complex strategy's column is not guarded: its new value alone says nothing of where
        // the row belongs, so the guard could not see that the row would be misplaced.
        let of_complex = tables.rules.iter().any(|r| {
            [&r.database_strategy, &r.table_strategy]
                .into_iter()
                .flatten()
                .any(|s| s.columns.iter().any(|c| c.eq_ignore_ascii_case(&column)))
        });
        if of_complex {
            return Err(moves(&column));
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
    let replica_safe = matches!(kind, Kind::Read(_)) && !tokens.needs_primary;
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
        gather: None,
        narrows_gather,
        replica_safe,
    })
}

/// ShardingSphere's `DML_SHARDING_CONDITIONS` auditor: a statement on an audited table must
/// say something of where its rows are, so that no application reads or changes every shard
/// by mistake.
/// `condition` and the values the statement's hint gives the tables' hint strategies, each a
/// condition on the strategy's value as on a column.
fn with_hint(
    condition: Condition,
    sql: &str,
    rules: &[Arc<TableRule>],
) -> Result<Condition, RouteError> {
    let Some(hint) = crate::hint::read(sql)? else {
        return Ok(condition);
    };
    let mut parts = Vec::new();
    for (table, rule) in rules.iter().enumerate() {
        let strategies = [&rule.database_strategy, &rule.table_strategy];
        for strategy in strategies.into_iter().flatten() {
            if let Some(value) = hint.value(&rule.logic_table, &strategy.column) {
                parts.push(Condition::Equals {
                    table: Some(table),
                    column: strategy.column.clone(),
                    values: vec![Operand::Value(value.clone())],
                });
            }
        }
    }
    if parts.is_empty() {
        return Ok(condition);
    }
    parts.push(condition);
    Ok(Condition::And(parts))
}

fn audit(
    sql: &str,
    statement: &Statement,
    rules: &[Arc<TableRule>],
    condition: &Condition,
) -> Result<(), RouteError> {
    if !condition.is_any() || rules.iter().all(|r| r.auditors.is_empty()) {
        return Ok(());
    }
    // `/* SHARDINGSPHERE_HINT: disableAuditNames=… */` switches named auditors off.
    let disabled = crate::hint::read(sql)?
        .map(|h| h.disabled_auditors)
        .unwrap_or_default();
    let Some((rule, auditor)) = rules.iter().find_map(|r| {
        r.auditors
            .iter()
            .find(|a| !(r.audit_hint_disable && disabled.contains(a)))
            .map(|a| (r, a))
    }) else {
        return Ok(());
    };
    let kind = match statement {
        Statement::Update(_) => "UPDATE",
        Statement::Delete(_) => "DELETE",
        _ => "SELECT",
    };
    Err(RouteError::Unsupported(format!(
        "{kind} of '{}' without a condition on its sharding columns (auditor '{auditor}', \
         DML_SHARDING_CONDITIONS)",
        rule.logic_table
    )))
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

/// Whether a read stores its result (`SELECT … INTO @v`, `INTO OUTFILE`) instead of returning it.
pub(crate) fn select_into(query: &Query) -> bool {
    select_of(query).is_some_and(|s| s.into.is_some())
}

pub(crate) fn select_of(query: &Query) -> Option<&Select> {
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

    /// Whether the statement reads one sharded table alone, so that its WHERE clause routes
    /// its gather.
    pub(crate) fn narrows_gather(&self) -> bool {
        self.narrows_gather
    }

    /// The sharded tables, numbered as the statement's.
    pub(crate) fn rules(&self) -> &[Arc<TableRule>] {
        &self.tables
    }

    /// Whether a read over several nodes would be refused, and not gathered, so that the
    /// router prepares its gather.
    pub(crate) fn unmerged(&self) -> bool {
        matches!(self.kind, Kind::Read(Err(_)))
    }

    /// Reads over several nodes are not merged, for `why` (see [`Router::prepare_gathered`]).
    ///
    /// [`Router::prepare_gathered`]: crate::Router::prepare_gathered
    pub(crate) fn refuse_merge(&mut self, why: &str) {
        if let Kind::Read(_) = self.kind {
            self.kind = Kind::Read(Err(why.to_owned()));
        }
    }

    /// Gathers the read's rows where they cannot be merged (see [`gather`]).
    pub(crate) fn set_gather(&mut self, gather: GatherQuery) {
        self.gather = Some(Arc::new(gather));
    }

    /// Plans one execution with `params`.
    pub fn bind(&self, params: &[Value]) -> Result<Plan, RouteError> {
        self.bind_with(params, None)
    }

    /// Plans `sql`, a statement of `shape`, with this statement prepared from the shape's text
    /// (and checked with [`PreparedQuery::stands_for`]): its literals are bound as the
    /// parameters and written back as they were.
    pub fn bind_shape(&self, sql: &str, shape: &Shape) -> Result<Plan, RouteError> {
        let mut plan = self.bind_with(&shape.values, Some(shape.literals(sql)))?;
        plan.described_as = Some(Arc::clone(&self.sql));
        Ok(plan)
    }

    /// Whether this statement, prepared from `shape`'s text, plans every statement of that
    /// shape as `original`, prepared from one of them, plans it: the same tables, the same
    /// kind of read or write, and a WHERE clause that reads each cut literal where the
    /// original reads the literal itself (a parameter in place of a value, not, say, inside
    /// an expression the router leaves alone in one and not the other). A shape cuts only the
    /// WHERE clause's literals, and those only route, so one check answers for the shape.
    /// UPDATEs that set a sharding column are left to parsing.
    pub fn stands_for(&self, original: &PreparedQuery, shape: &Shape) -> bool {
        let values = &shape.values;
        let same_kind = match (&self.kind, &original.kind) {
            (Kind::Read(Ok(_)), Kind::Read(Ok(_))) => true,
            (Kind::Read(Err(mine)), Kind::Read(Err(theirs))) => mine == theirs,
            (
                Kind::Write { unsplittable: mine },
                Kind::Write {
                    unsplittable: theirs,
                },
            ) => mine == theirs,
            _ => false,
        };
        self.param_count == values.len()
            && original.param_count == 0
            && self.dialect == original.dialect
            && self.tables.len() == original.tables.len()
            && self
                .tables
                .iter()
                .zip(&original.tables)
                .all(|(mine, theirs)| Arc::ptr_eq(mine, theirs))
            && same_kind
            // A gathered read runs the statement's own text, literals and all, on the
            // gathering data source: parsed each time, never bound through a shape.
            && [self, original].iter().all(|q| {
                q.unchanged.is_empty() && q.moving.is_none() && q.gather.is_none()
            })
            && self.condition.stands_for(&original.condition, values)
    }

    fn bind_with(
        &self,
        params: &[Value],
        literals: Option<Literals<'_>>,
    ) -> Result<Plan, RouteError> {
        for unchanged in &self.unchanged {
            unchanged.check(params)?;
        }
        if let Some(gather) = &self.gather
            && let Some(why) = &gather.always
        {
            return gather.bind(self.dialect, params, None, why);
        }
        let mut scratch = String::new();
        let mut nodes = self.condition.nodes(&self.tables, params, &mut scratch)?;
        let guard = match &self.moving {
            Some(moving) => self.guard(moving, params, &mut nodes, &mut scratch)?,
            None => None,
        };
        let mut chosen: Vec<usize> = nodes.iter().collect();
        if chosen.is_empty() {
            // No node can hold a matching row; one node still answers with the right shape
            // (an empty result, no row changed), since it evaluates the same condition.
            chosen.push(0);
        }
        if chosen.len() == 1 {
            let unit = self.render(&self.plain, chosen[0], params, (0, 0), literals)?;
            let mut plan = Plan::of_units(vec![unit]);
            plan.guard = guard;
            plan.replica_safe = self.replica_safe;
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
                    .map(|&n| self.render(&self.plain, n, params, (0, 0), literals))
                    .collect::<Result<_, _>>()?;
                let mut plan = Plan::of_units(units);
                plan.guard = guard;
                Ok(plan)
            }
            Kind::Read(Err(why)) => match &self.gather {
                Some(gather) => {
                    let nodes = self.narrows_gather.then_some(chosen.as_slice());
                    gather.bind(self.dialect, params, nodes, why)
                }
                None => Err(RouteError::Unsupported(format!(
                    "{why} when the rows are on several shards"
                ))),
            },
            Kind::Read(Ok(read)) => {
                let mut plan = self.bind_read(read, &chosen, params, literals)?;
                plan.replica_safe = self.replica_safe;
                Ok(plan)
            }
        }
    }

    fn render(
        &self,
        template: &Template,
        node: usize,
        params: &[Value],
        limit: (u64, u64),
        literals: Option<Literals<'_>>,
    ) -> Result<ExecutionUnit, RouteError> {
        // Per statement: a query names a few tables, kept on the stack.
        let nodes: SmallVec<[&keyshard_config::DataNode; 4]> = self
            .tables
            .iter()
            .map(|r| r.data_nodes.get(node))
            .collect::<Option<_>>()
            .ok_or_else(RouteError::internal("bound tables with different nodes"))?;
        let first = nodes
            .first()
            .ok_or_else(RouteError::internal("a query without tables"))?;
        let tables: SmallVec<[&str; 4]> = nodes.iter().map(|n| n.table.as_str()).collect();
        let mut renderer = Renderer::new(&self.sql, self.dialect, &tables, params);
        renderer.limit = limit;
        renderer.literals = literals;
        renderer.render(template.head(), RowKey::NONE)?;
        Ok(ExecutionUnit {
            data_source: first.data_source.clone(),
            table: first.table.clone(),
            sql: renderer.out,
            params: renderer.out_params,
            rows: Vec::new(),
            binary_results: false,
        })
    }
}
