//! A read that no merge answers exactly (DISTINCT, HAVING, subqueries, UNION, window functions,
//! joins of tables sharded differently, joins with unsharded tables …): the rows of each sharded
//! table it names are gathered into a temporary table of the same name on one data source's
//! connection, where the database runs the statement as written. Its semantics are then the
//! database's own (collations, NULLs, functions, correlated subqueries), never an
//! approximation of them by the proxy.
//!
//! A temporary table hides a table of the same name in MySQL, PostgreSQL and SQLite alike, so
//! the statement needs no change beyond its sharded tables' qualifiers (`public.t_order`,
//! `sharding_db.t_order`): the temporary table is not in that schema.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use keyshard_config::TableRule;
use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Select, TableFactor, Value as SqlValue, visit_expressions};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::Router;
use crate::locate::Locator;
use crate::metadata::Metadata;
use crate::query::{self, PreparedQuery};

use crate::RouteError;
use crate::names::push_identifier;
use crate::plan::{ExecutionUnit, Plan};
pub use crate::plan::{Gather, GatheredTable};
use keyshard_types::Dialect;
use keyshard_types::Value;

/// A read prepared to be gathered when it spans several nodes.
#[derive(Debug, Clone)]
pub(crate) struct GatherQuery {
    data_source: String,
    /// The statement with its sharded tables' names unqualified: the gathered tables'.
    sql: String,
    tables: Vec<Source>,
    /// Gathered even when its rows are on one node: a join the shards cannot answer at all.
    pub(crate) always: Option<String>,
}

#[derive(Debug, Clone)]
struct Source {
    rule: Arc<TableRule>,
    /// The schema written before the table's name (`public.`), kept in the reads.
    schema: String,
    /// Index of the node on the gathering data source.
    like_node: usize,
    /// What each node's read selects: the columns the statement may use, or `*`.
    columns: String,
    /// What follows the actual table's name in each node's read: the statement's alias and
    /// WHERE clause, when the statement reads this table alone and its condition can be
    /// evaluated on the node as well (see [`pushdown`]), and a locking read's lock.
    filter: String,
}

/// Where a statement writes a sharded table's name: its number and its qualifier (`public.`;
/// empty when none).
pub(crate) struct Written {
    pub(crate) table: usize,
    pub(crate) schema: Range<usize>,
    /// The name itself, in quotes when `quoted`.
    pub(crate) name: Range<usize>,
    pub(crate) quoted: bool,
}

impl Written {
    /// The name without its quotes.
    fn unquoted<'s>(&self, sql: &'s str) -> &'s str {
        let name = sql.get(self.name.clone()).unwrap_or_default();
        match self.quoted {
            true => name
                .get(1..name.len().saturating_sub(1))
                .unwrap_or_default(),
            false => name,
        }
    }
}

/// A read on sharded tables, as the router prepares its gather.
pub(crate) struct Read<'a> {
    pub(crate) sql: &'a str,
    pub(crate) parser: &'a Parser<'a>,
    pub(crate) statement: &'a sqlparser::ast::Statement,
    pub(crate) written: &'a [Written],
    /// An unsharded table it also reads.
    pub(crate) unsharded: Option<String>,
    /// Why its sharded tables cannot be joined node by node, if they cannot.
    pub(crate) unbound: Option<RouteError>,
}

/// Why a statement on sharded tables and the unsharded table `other` runs on no one node.
pub(crate) fn with_unsharded(other: &str) -> String {
    format!("a statement on both sharded tables and the unsharded table '{other}'")
}

impl Router {
    /// Prepares how `query` is gathered: always when no node can answer it (it reads an
    /// unsharded table, or joins tables not bound), else when it cannot be merged and binds to
    /// several nodes. An error when it must be gathered and cannot be.
    pub(crate) fn prepare_gather(
        &self,
        query: &mut PreparedQuery,
        read: Read<'_>,
        metadata: &dyn Metadata,
    ) -> Result<(), RouteError> {
        let always = match (&read.unsharded, read.unbound) {
            (Some(other), _) => Some(with_unsharded(other)),
            (None, Some(RouteError::Unsupported(why))) => Some(why),
            (None, Some(other)) => Some(other.to_string()),
            (None, None) => None,
        };
        if always.is_none() && !query.unmerged() {
            return Ok(());
        }
        let sqlparser::ast::Statement::Query(q) = read.statement else {
            return Ok(());
        };
        let pushdown = match query.narrows_gather() {
            true => query::select_of(q).and_then(|s| pushdown(read.sql, read.parser, s)),
            false => None,
        };
        let gather = GatherQuery::prepare(
            read.sql,
            self.dialect,
            read.parser,
            query.rules(),
            read.written,
            &self.data_sources,
            self.default_data_source.as_deref(),
            read.unsharded.is_some(),
            |table| metadata.visible_columns(table),
            pushdown,
            lock_clause(&q.locks, self.dialect).as_deref(),
        );
        // A gathered read would store its INTO on the gathering connection.
        let unfit = query::select_into(q).then_some("SELECT … INTO");
        match (gather, unfit, always) {
            (Ok(mut gather), None, always) => {
                gather.always = always;
                query.set_gather(gather);
                Ok(())
            }
            // Refused when it binds to several nodes, as before gathering.
            (_, _, None) => Ok(()),
            (Err(why), None, Some(always)) => Err(RouteError::Unsupported(format!(
                "{always}, gathering {why}"
            ))),
            (_, Some(unfit), Some(always)) => {
                Err(RouteError::Unsupported(format!("{unfit} in {always}")))
            }
        }
    }
}

impl GatherQuery {
    /// Prepares `sql`'s gather: `rules` are its sharded tables (numbered as in `written`),
    /// `unsharded` whether it reads tables of the default data source too, `columns` each
    /// table's columns when they are known.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        sql: &str,
        dialect: Dialect,
        parser: &Parser<'_>,
        rules: &[Arc<TableRule>],
        written: &[Written],
        data_sources: &[String],
        default: Option<&str>,
        unsharded: bool,
        columns: impl Fn(&str) -> Option<Vec<String>>,
        filter: Option<String>,
        lock: Option<&str>,
    ) -> Result<Self, String> {
        // Where every sharded table has a node (to take its columns from), and the unsharded
        // tables live, if it reads any.
        let candidates: Vec<&str> = match (unsharded, default) {
            (true, Some(default)) => vec![default],
            (true, None) => {
                return Err("reads of unsharded tables without a default data source".into());
            }
            (false, _) => default
                .into_iter()
                .chain(data_sources.iter().map(String::as_str))
                .collect(),
        };
        let data_source = candidates
            .into_iter()
            .find(|ds| {
                rules
                    .iter()
                    .all(|r| r.data_nodes.iter().any(|n| n.data_source == *ds))
            })
            .ok_or_else(|| {
                "tables with no node on one common data source (where their rows would be gathered)"
                    .to_owned()
            })?;
        // Names stay as written (a result column labelled by an expression keeps its text);
        // their qualifiers go, and a name in other letter case is the logic table's (MySQL
        // compares table names case-sensitively on most systems).
        let mut out = String::with_capacity(sql.len());
        let mut at = 0;
        let mut sorted: Vec<&Written> = written.iter().collect();
        sorted.sort_by_key(|w| w.schema.start);
        for w in sorted {
            let logic = rules.get(w.table).map_or("", |r| r.logic_table.as_str());
            if w.unquoted(sql) == logic {
                if w.schema.is_empty() {
                    continue;
                }
                out.push_str(sql.get(at..w.schema.start).unwrap_or_default());
                at = w.schema.end;
            } else {
                out.push_str(sql.get(at..w.schema.start).unwrap_or_default());
                push_identifier(&mut out, logic, Some(quote_char(dialect)));
                at = w.name.end;
            }
        }
        out.push_str(sql.get(at..).unwrap_or_default());
        let words = match dialect {
            Dialect::MySql => named_words(parser),
            // A PostgreSQL table's name alone is its whole row (`SELECT o FROM t_order o`,
            // `row_to_json(o)`): every column is read.
            Dialect::Postgres => None,
        };
        let selected = |rule: &TableRule| -> String {
            let (Some(words), Some(columns)) = (&words, columns(&rule.logic_table)) else {
                return "*".to_owned();
            };
            let mut out = String::new();
            for column in columns
                .iter()
                .filter(|c| words.contains(&c.to_ascii_lowercase()))
            {
                if !out.is_empty() {
                    out.push_str(", ");
                }
                push_identifier(&mut out, column, Some(quote_char(dialect)));
            }
            // None named (`SELECT COUNT(*)`): a row each, of any column.
            match (out.is_empty(), columns.first()) {
                (true, Some(first)) => {
                    push_identifier(&mut out, first, Some(quote_char(dialect)));
                    out
                }
                (true, None) => "*".to_owned(),
                (false, _) => out,
            }
        };
        let tables = rules
            .iter()
            .enumerate()
            .map(|(number, rule)| Source {
                columns: selected(rule),
                filter: format!(
                    "{}{}",
                    filter.as_deref().unwrap_or_default(),
                    lock.unwrap_or_default()
                ),
                rule: Arc::clone(rule),
                schema: match dialect {
                    // A MySQL qualifier names a database: the logical one, not the node's.
                    Dialect::MySql => String::new(),
                    Dialect::Postgres => written
                        .iter()
                        .find(|w| w.table == number)
                        .and_then(|w| sql.get(w.schema.clone()))
                        .unwrap_or_default()
                        .to_owned(),
                },
                like_node: rule
                    .data_nodes
                    .iter()
                    .position(|n| n.data_source == data_source)
                    .unwrap_or_default(),
            })
            .collect();
        Ok(Self {
            data_source: data_source.to_owned(),
            sql: out,
            tables,
            always: None,
        })
    }

    /// The plan gathering every node of each table, or only `nodes` when the statement names
    /// one sharded table once (its WHERE clause routes as any read's), and running the
    /// statement with `params`.
    pub(crate) fn bind(
        &self,
        dialect: Dialect,
        params: &[Value],
        nodes: Option<&[usize]>,
        reason: &str,
    ) -> Result<Plan, RouteError> {
        let quote = Some(quote_char(dialect));
        let reference = |schema: &str, table: &str| {
            let mut out = schema.to_owned();
            push_identifier(&mut out, table, quote);
            out
        };
        let mut tables = Vec::with_capacity(self.tables.len());
        for source in &self.tables {
            let data_nodes = &source.rule.data_nodes;
            let like = data_nodes
                .get(source.like_node)
                .ok_or_else(RouteError::internal("a gathered table without its node"))?;
            let chosen: Vec<usize> = match nodes {
                Some(nodes) if self.tables.len() == 1 => nodes.to_vec(),
                _ => (0..data_nodes.len()).collect(),
            };
            let reads = chosen
                .iter()
                .filter_map(|&n| data_nodes.get(n))
                .map(|node| ExecutionUnit {
                    data_source: node.data_source.clone(),
                    table: node.table.clone(),
                    sql: format!(
                        "SELECT {} FROM {}{}",
                        source.columns,
                        reference(&source.schema, &node.table),
                        source.filter
                    ),
                    params: Vec::new(),
                    rows: Vec::new(),
                    binary_results: false,
                })
                .collect();
            tables.push(GatheredTable {
                name: source.rule.logic_table.clone(),
                like: format!(
                    "SELECT {} FROM {}",
                    source.columns,
                    reference(&source.schema, &like.table)
                ),
                reads,
            });
        }
        let statement = ExecutionUnit {
            data_source: self.data_source.clone(),
            table: String::new(),
            sql: self.sql.clone(),
            params: params.to_vec(),
            rows: Vec::new(),
            binary_results: false,
        };
        Ok(Plan {
            gather: Some(Box::new(Gather {
                data_source: self.data_source.clone(),
                tables,
                statement,
                reason: reason.to_owned(),
            })),
            ..Plan::of_units(Vec::new())
        })
    }
}

fn quote_char(dialect: Dialect) -> char {
    match dialect {
        Dialect::MySql => '`',
        Dialect::Postgres => '"',
    }
}

/// Every word of a statement, lower-cased, when it names each column it reads; `None` when it
/// may read columns it does not name: a wildcard (`*`, `o.*`), a natural join, MySQL's
/// `TABLE t`.
fn named_words(parser: &Parser<'_>) -> Option<HashSet<String>> {
    let mut words = HashSet::new();
    // Whether a `*` here would be a wildcard: at the start, after `,` or `.`, or after a
    // keyword that starts a select list.
    let mut wildcard_here = true;
    for index in 0.. {
        let token = &parser.token_at(index).token;
        match token {
            Token::EOF => break,
            Token::Whitespace(_) => continue,
            Token::Mul if wildcard_here => return None,
            Token::Word(w) if matches!(w.keyword, Keyword::NATURAL | Keyword::TABLE) => {
                return None;
            }
            Token::Word(w) => {
                words.insert(w.value.to_ascii_lowercase());
            }
            _ => {}
        }
        wildcard_here = match token {
            Token::Comma | Token::Period => true,
            Token::Word(w) => matches!(
                w.keyword,
                Keyword::SELECT | Keyword::DISTINCT | Keyword::DISTINCTROW | Keyword::ALL
            ),
            _ => false,
        };
    }
    Some(words)
}

/// For a SELECT that reads one sharded table alone, ` AS alias WHERE condition` for each
/// node's read: the same rows reach the gathered table as pass the statement's own WHERE
/// clause there, so each node sends only those. Only a condition that means the same on any
/// connection at any moment is sent: no subquery, function, variable or parameter.
pub(crate) fn pushdown(sql: &str, parser: &Parser<'_>, select: &Select) -> Option<String> {
    let selection = select.selection.as_ref()?;
    let [from] = select.from.as_slice() else {
        return None;
    };
    let TableFactor::Table { name, alias, .. } = &from.relation else {
        return None;
    };
    let mut portable = true;
    let _ = visit_expressions(selection, |expr: &Expr| {
        portable &= match expr {
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::Function(_)
            | Expr::Value(sqlparser::ast::ValueWithSpan {
                value: SqlValue::Placeholder(_),
                ..
            }) => false,
            Expr::Identifier(ident) => !ident.value.starts_with('@'),
            Expr::CompoundIdentifier(parts) => parts.iter().all(|p| !p.value.starts_with('@')),
            _ => true,
        };
        ControlFlow::<()>::Continue(())
    });
    if !portable {
        return None;
    }
    // The clause's text: from after the top-level WHERE to the next top-level clause.
    let mut depth = 0usize;
    let mut start = None;
    let mut end = None;
    for index in 0.. {
        let token = parser.token_at(index);
        match &token.token {
            Token::EOF | Token::SemiColon if start.is_some() => {
                end = Some(token.span.start);
                break;
            }
            Token::EOF => break,
            // A subquery or a parameter inside the clause: not sent (see above).
            Token::Placeholder(_) if start.is_some() => return None,
            Token::Word(w) if start.is_some() && w.keyword == Keyword::SELECT => return None,
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Word(w) if depth == 0 && start.is_none() && w.keyword == Keyword::WHERE => {
                start = Some(token.span.end);
            }
            Token::Word(w)
                if depth == 0
                    && start.is_some()
                    && matches!(
                        w.keyword,
                        Keyword::GROUP
                            | Keyword::HAVING
                            | Keyword::WINDOW
                            | Keyword::QUALIFY
                            | Keyword::ORDER
                            | Keyword::LIMIT
                            | Keyword::OFFSET
                            | Keyword::FETCH
                            | Keyword::FOR
                            | Keyword::LOCK
                            | Keyword::INTO
                            | Keyword::UNION
                            | Keyword::EXCEPT
                            | Keyword::INTERSECT
                    ) =>
            {
                end = Some(token.span.start);
                break;
            }
            _ => {}
        }
    }
    let mut locator = Locator::new(sql);
    let start = locator.offset(start?).ok()?;
    let end = locator.offset(end?).ok()?;
    let condition = sql.get(start..end)?.trim();
    let mut out = String::from(" AS ");
    match alias {
        Some(alias) => push_identifier(&mut out, &alias.name.value, alias.name.quote_style),
        None => {
            let last = name.0.last()?.as_ident()?;
            push_identifier(&mut out, &last.value, last.quote_style);
        }
    }
    out.push_str(" WHERE ");
    out.push_str(condition);
    Some(out)
}

/// The lock a locking read takes on every row each node reads for it (a superset of the rows
/// one database would lock, never fewer), in the session's transaction: ` FOR UPDATE`,
/// ` FOR SHARE` (MySQL: ` LOCK IN SHARE MODE`), with `NOWAIT` or `SKIP LOCKED`.
pub(crate) fn lock_clause(
    locks: &[sqlparser::ast::LockClause],
    dialect: Dialect,
) -> Option<String> {
    use sqlparser::ast::{LockType, NonBlock};
    let update = locks.iter().any(|l| l.lock_type == LockType::Update);
    let first = locks.first()?;
    let mut out = match (update, dialect) {
        (true, _) => " FOR UPDATE".to_owned(),
        (false, Dialect::MySql) => " LOCK IN SHARE MODE".to_owned(),
        (false, Dialect::Postgres) => " FOR SHARE".to_owned(),
    };
    match first.nonblock {
        Some(NonBlock::Nowait) => out.push_str(" NOWAIT"),
        Some(NonBlock::SkipLocked) => out.push_str(" SKIP LOCKED"),
        None => {}
    }
    Some(out)
}
