//! The router's answer for one execution: the statement each data node runs, and what the
//! caller needs to put the results together (generated keys, the merge of a read, a guard).

use std::sync::Arc;

use keyshard_keygen::Key;

use crate::RouteError;
use crate::merge::MergeSpec;
use keyshard_types::Value;

/// What to run for one statement: one unit per data node, and the keys generated for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One rewritten statement per data node the rows go to, in data node order.
    pub units: Vec<ExecutionUnit>,
    /// The keys generated for this statement, in the client's row order (rows that supplied
    /// their own key have none here).
    pub generated_keys: Vec<Key>,
    /// For each row of the statement, in the client's order, the index of its unit.
    pub row_units: Vec<usize>,
    /// For a read sent to several data nodes: how their rows become one result. Such units
    /// run independently, outside any transaction the statement does not already have.
    pub merge: Option<MergeSpec>,
    /// Every unit writes the same rows to its own copy of a broadcast table: the statement
    /// changed as many rows as one unit did.
    pub replicated: bool,
    /// A read that changes nothing and locks nothing: a replica of its data source may answer
    /// it (see `!READWRITE_SPLITTING`) when the session's transaction and consistency allow.
    pub replica_safe: bool,
    /// An UPDATE that sets a sharding column the WHERE clause does not pin: runs first, and
    /// the UPDATE is refused when it finds a row.
    pub guard: Option<Box<MoveGuard>>,
    /// For a statement bound through its shape (see [`crate::Shape`]): the shape's text. The
    /// literals it cuts (a read's WHERE clause) never change a result's columns, so the
    /// columns can be kept under it instead of under a key made from each statement's text.
    pub described_as: Option<Arc<str>>,
    /// A read no merge answers: its tables' rows gathered on one data source, where the
    /// statement runs as written (see [`Gather`]); `units` is then empty.
    pub gather: Option<Box<Gather>>,
    /// A single-row INSERT of plain values with nothing but its row to do (no `RETURNING`,
    /// `ON DUPLICATE KEY`, `ON CONFLICT`, `IGNORE`, function call or subquery): where that row
    /// is in its one unit's text, so the backend may send it with other sessions' rows of the
    /// same text around them as one multi-row INSERT (see the backend's `batching`).
    pub batch_row: Option<Box<BatchRow>>,
}

/// Where a single-row INSERT's row is in its unit's text (see [`Plan::batch_row`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchRow {
    /// The row's bytes, parentheses included; nothing outside them has a parameter.
    pub row: std::ops::Range<usize>,
    /// PostgreSQL: where each of the row's placeholders starts (`$1`, `$2`, … in turn), so
    /// that rows after the first in a batch can number theirs on. Empty on MySQL, whose
    /// placeholders are positional.
    pub placeholders: Vec<usize>,
}

/// The rows an UPDATE would have to move to another data node: those its WHERE clause matches
/// on the nodes its new sharding values do not route to.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveGuard {
    /// A read of at most one such row, on those nodes only.
    pub reads: Plan,
    /// The sharding column the UPDATE sets.
    pub column: String,
}

impl MoveGuard {
    /// The error when `reads` found a row: ShardingSphere's refusal to move one.
    pub fn refusal(&self) -> RouteError {
        moves(&self.column)
    }
}

/// One statement for one data node.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionUnit {
    /// The data source to run it on.
    pub data_source: String,
    /// The actual table it writes.
    pub table: String,
    /// The rewritten SQL.
    pub sql: String,
    /// Its parameters, in placeholder order.
    pub params: Vec<Value>,
    /// The statement's rows (0-based, client order) that this unit inserts, in order.
    pub rows: Vec<usize>,
    /// The client reads the result in a binary format (MySQL's COM_STMT_EXECUTE, PostgreSQL
    /// binary result columns): the shard is asked for its binary format too, so that values
    /// Keyshard passes on need no conversion.
    pub binary_results: bool,
}

impl Plan {
    /// Units and nothing else: no generated keys, no merge, no guard.
    pub fn of_units(units: Vec<ExecutionUnit>) -> Self {
        Self {
            units,
            generated_keys: Vec::new(),
            row_units: Vec::new(),
            merge: None,
            replicated: false,
            replica_safe: false,
            guard: None,
            described_as: None,
            gather: None,
            batch_row: None,
        }
    }
}

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
    /// A read of an actual table of the logic table on the gathering data source (in its
    /// schema when the statement named one): the temporary table takes the columns it
    /// returns, without keys and indexes (rows unique per shard need not be unique together).
    pub like: String,
    /// A read of each data node the statement may need rows of, on the node's data source,
    /// run in the session's transaction when it has one so that it sees its own writes.
    pub reads: Vec<ExecutionUnit>,
}

/// ShardingSphere's refusal of an UPDATE that would move a row to another shard.
pub(crate) fn moves(column: &str) -> RouteError {
    RouteError::Unsupported(format!(
        "UPDATE of the sharding column '{column}': it would move the row to another shard"
    ))
}
