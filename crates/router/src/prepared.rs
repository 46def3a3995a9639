//! What planning a statement gives: a statement prepared for binding, or why it is not
//! planned here.

use crate::{
    DdlPlan, Direct, Explain, InsertSelect, Plan, PreparedInsert, PreparedQuery, TableLocks,
};

/// A statement, parsed and prepared: binding it plans one execution.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// An INSERT into a sharded table.
    Insert(PreparedInsert),
    /// An INSERT into a sharded table whose rows a SELECT reading no sharded table computes.
    InsertSelect(InsertSelect),
    /// DDL on a sharded table, one statement per actual table.
    Ddl(DdlPlan),
    /// SELECT, UPDATE or DELETE on sharded tables.
    Query(PreparedQuery),
    /// A statement on unsharded or broadcast tables (or none), sent as it is.
    Direct(Direct),
    /// Table locks taken or let go, one statement per data source.
    Locks(TableLocks),
    /// `COPY … TO STDOUT`: each unit's copy data, one after the other.
    CopyOut(Plan),
    /// `EXPLAIN` of a statement on sharded tables: each node's plan.
    Explain(Explain),
    /// Anything this router does not plan; the caller decides what to answer.
    Other(Other),
}

/// Why a statement is not planned here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Other {
    /// A kind of statement the router does not route (SHOW, SET, GRANT, …).
    NotRouted,
    /// A statement on a table that no sharding rule covers, while the router knows no data
    /// source to send it to.
    UnshardedTable(String),
}
