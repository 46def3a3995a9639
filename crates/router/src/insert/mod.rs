//! INSERTs into sharded tables, in two steps so that a prepared statement is parsed once:
//! `prepare` reads the statement (rows, key slots, sharding sources, template) and `bind`
//! executes it (keys generated, rows routed, one statement rendered per data node). The
//! prepared form both share is defined here.

use std::sync::Arc;

use keyshard_config::TableRule;
use keyshard_keygen::KeyGenerator;

use crate::Dialect;
use crate::template::Template;
use crate::value::Value;

mod bind;
mod classify;
mod prepare;

pub(crate) use prepare::prepare;

/// Where a row's sharding value comes from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
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
pub(crate) enum KeySpec {
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
pub(crate) struct RowSpec {
    pub(crate) key: KeySpec,
    /// The database strategy's value for this row; `None` when the column is not inserted.
    pub(crate) database: Option<Source>,
    /// The table strategy's value for this row; `None` when the column is not inserted.
    pub(crate) table: Option<Source>,
    /// A generated key goes in as a placeholder when the row has parameters, else as a literal.
    pub(crate) has_params: bool,
}

/// An INSERT into a sharded table, parsed once; [`PreparedInsert::bind`] plans one execution.
#[derive(Debug, Clone)]
pub struct PreparedInsert {
    pub(crate) sql: Box<str>,
    pub(crate) dialect: Dialect,
    pub(crate) rule: Arc<TableRule>,
    pub(crate) template: Template,
    pub(crate) rows: Vec<RowSpec>,
    pub(crate) generator: Option<Arc<dyn KeyGenerator>>,
    pub(crate) param_count: usize,
    /// The column each parameter is the whole value of, when every parameter is one.
    pub(crate) value_columns: Option<Box<[Box<str>]>>,
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
