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

use std::ops::Range;
use std::sync::Arc;

use keyshard_config::TableRule;

use crate::names::push_identifier;
use crate::plan::{ExecutionUnit, Plan};
use crate::value::Value;
use crate::{Dialect, RouteError};

/// What one execution gathers and runs; the backend carries it out.
#[derive(Debug, Clone, PartialEq)]
pub struct Gather {
    /// Where the statement runs, on a connection of its own: the session's transaction,
    /// settings and kept connections stay as they are.
    pub data_source: String,
    /// Each sharded table's gathered copy.
    pub tables: Vec<GatheredTable>,
    /// The statement itself, on `data_source`, with the client's parameters.
    pub statement: ExecutionUnit,
    /// Why its rows could not be merged from the shards' results instead (for PREVIEW).
    pub reason: String,
}

/// The temporary table that stands for one logic table.
#[derive(Debug, Clone, PartialEq)]
pub struct GatheredTable {
    /// Its name: the logic table's, unquoted.
    pub name: String,
    /// An actual table of the logic table on the gathering data source, as a reference the
    /// data source reads (its schema when the statement named one): the temporary table takes
    /// its columns, without its keys and indexes (rows unique per shard need not be unique
    /// together).
    pub like: String,
    /// A read of each data node the statement may need rows of, on the node's data source,
    /// run in the session's transaction when it has one so that it sees its own writes.
    pub reads: Vec<ExecutionUnit>,
}

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
}

/// Where a statement writes a sharded table's name: its number and its qualifier (`public.`;
/// empty when none).
pub(crate) struct Written {
    pub(crate) table: usize,
    pub(crate) schema: Range<usize>,
    /// Where the name ends, and the name itself.
    pub(crate) end: usize,
    pub(crate) unquoted: String,
}

impl GatherQuery {
    /// Prepares `sql`'s gather: `rules` are its sharded tables (numbered as in `written`),
    /// `unsharded` whether it reads tables of the default data source too.
    pub(crate) fn prepare(
        sql: &str,
        dialect: Dialect,
        rules: &[Arc<TableRule>],
        written: &[Written],
        data_sources: &[String],
        default: Option<&str>,
        unsharded: bool,
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
            if w.unquoted == logic {
                if w.schema.is_empty() {
                    continue;
                }
                out.push_str(sql.get(at..w.schema.start).unwrap_or_default());
                at = w.schema.end;
            } else {
                out.push_str(sql.get(at..w.schema.start).unwrap_or_default());
                push_identifier(&mut out, logic, Some(quote_char(dialect)));
                at = w.end;
            }
        }
        out.push_str(sql.get(at..).unwrap_or_default());
        let tables = rules
            .iter()
            .enumerate()
            .map(|(number, rule)| Source {
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
                    sql: format!("SELECT * FROM {}", reference(&source.schema, &node.table)),
                    params: Vec::new(),
                    rows: Vec::new(),
                    binary_results: false,
                })
                .collect();
            tables.push(GatheredTable {
                name: source.rule.logic_table.clone(),
                like: reference(&source.schema, &like.table),
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
