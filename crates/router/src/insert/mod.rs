//! INSERTs into sharded tables, in two steps so that a prepared statement is parsed once:
//! `prepare` reads the statement (rows, key slots, sharding sources, template) and `bind`
//! executes it (keys generated, rows routed, one statement rendered per data node). The
//! prepared form both share is defined here.

use std::sync::Arc;

use keyshard_config::TableRule;
use keyshard_keygen::KeyGenerator;

use crate::template::Template;
use keyshard_types::Dialect;
use keyshard_types::Value;

mod bind;
mod classify;
mod gene;
mod prepare;
pub(crate) mod select;

pub(crate) use prepare::prepare;

/// Where a row's sharding value comes from.
#[derive(Debug, Clone)]
enum Source {
    /// A literal in the statement.
    Value(Value),
    /// A bound parameter (0-based).
    Param(usize),
    /// The row's key, given or generated.
    Key,
    /// An expression the router does not evaluate.
    Expr,
}

/// How a row gets its key.
#[derive(Debug, Clone)]
enum KeySpec {
    /// The table generates no keys.
    None,
    /// The statement gives the key.
    Given(Source),
    /// The key column is absent, `NULL` or `DEFAULT` (or MySQL's 0): generate.
    Generate,
    /// The key is parameter `i`: generate when it is bound to NULL (or MySQL's 0).
    ParamOrGenerate(usize),
}

#[derive(Debug, Clone)]
struct RowSpec {
    key: KeySpec,
    /// The database strategy's value for this row; `None` when the column is not inserted.
    database: Option<Source>,
    /// The table strategy's value for this row; `None` when the column is not inserted.
    table: Option<Source>,
    /// A complex database strategy's values for this row, one per column (else empty).
    database_columns: Vec<Option<Source>>,
    /// A complex table strategy's values, likewise.
    table_columns: Vec<Option<Source>>,
    /// A generated key goes in as a placeholder when the row has parameters, else as a literal.
    has_params: bool,
}

/// An INSERT into a sharded table, parsed once; [`PreparedInsert::bind`] plans one execution.
#[derive(Debug, Clone)]
pub struct PreparedInsert {
    sql: Box<str>,
    dialect: Dialect,
    rule: Arc<TableRule>,
    template: Template,
    rows: Vec<RowSpec>,
    generator: Option<Arc<dyn KeyGenerator>>,
    param_count: usize,
    /// The column each parameter is the whole value of, when every parameter is one.
    value_columns: Option<Box<[Box<str>]>>,
    /// It has `RETURNING`: the client is told every key, so a statement's keys need not be
    /// consecutive and may be more than one block of its generator.
    returning: bool,
    /// One row of plain values and nothing else: an execution without parameters may join
    /// other sessions' rows (see [`crate::Plan::batch_row`]).
    joins_others: bool,
}

impl PreparedInsert {
    /// How many parameters an execution must bind.
    pub fn param_count(&self) -> usize {
        self.param_count
    }

    /// The logic table the statement inserts into.
    pub fn logic_table(&self) -> &str {
        &self.rule.logic_table
    }

    /// The table rule the statement inserts by.
    pub fn table_rule(&self) -> &TableRule {
        &self.rule
    }

    /// How many rows the statement inserts.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// The column each parameter is the whole value of (`$2` in `VALUES ($1, $2)` is the
    /// second column's), in parameter order; `None` when some parameter is anything else:
    /// part of an expression, outside the rows, or used twice.
    pub fn value_columns(&self) -> Option<&[Box<str>]> {
        self.value_columns.as_deref()
    }
}
