//! Keyshard's router: an INSERT and its parameters → a [`Plan`]: the generated keys and, per
//! data node, the rewritten statement and its parameters.
//!
//! The pipeline follows ShardingSphere's kernel: parse (once per prepared statement), bind,
//! generate keys, route, rewrite. Rewriting splices the original text — it never prints the
//! AST, which would normalise the statement and, for MySQL backslash escapes, change data.
//! Pure library code: no I/O, no async.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ddl;
mod error;
mod insert;
mod locate;
pub mod merge;
mod metadata;
mod plan;
mod route;
mod template;
mod tokens;
mod value;

use std::collections::HashMap;
use std::sync::Arc;

use keyshard_config::{ShardingRule, TableRule};
use sqlparser::ast::{ObjectNamePart, Statement, TableObject};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

pub use ddl::DdlPlan;
pub use error::RouteError;
pub use metadata::{Metadata, NoMetadata};
pub use plan::{ExecutionUnit, Plan, PreparedInsert};
pub use value::Value;

/// The SQL dialect of the client, which decides parsing, placeholders and MySQL's `0` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL/MariaDB: `?` placeholders; a key given as 0 is generated (AUTO_INCREMENT's rule).
    MySql,
    /// PostgreSQL: `$n` placeholders.
    Postgres,
}

/// A statement, parsed and, when it is an INSERT into a sharded table, prepared.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// An INSERT into a sharded table: bind it to plan an execution.
    Insert(PreparedInsert),
    /// DDL on a sharded table, one statement per actual table.
    Ddl(DdlPlan),
    /// Anything this router does not plan; the caller decides where it goes.
    Other(Other),
}

/// Why a statement is not planned here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Other {
    /// Neither an INSERT nor DDL on a sharded table.
    NotAnInsert,
    /// An INSERT into a table that no sharding rule covers.
    UnshardedTable(String),
}

/// Plans INSERTs for one sharding rule and one client dialect.
#[derive(Debug, Clone)]
pub struct Router {
    tables: HashMap<String, Arc<TableRule>>,
    dialect: Dialect,
}

impl Router {
    /// A router for `rule`'s tables, parsing `dialect`.
    pub fn new(rule: &ShardingRule, dialect: Dialect) -> Self {
        let tables = rule
            .tables
            .values()
            .map(|t| (t.logic_table.to_ascii_lowercase(), Arc::new(t.clone())))
            .collect();
        Self { tables, dialect }
    }

    /// The dialect this router parses.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Parses `sql` (one statement) and, for an INSERT into a sharded table, prepares it.
    pub fn prepare(&self, sql: &str, metadata: &dyn Metadata) -> Result<Prepared, RouteError> {
        let mysql = MySqlDialect {};
        let postgres = PostgreSqlDialect {};
        let dialect: &dyn sqlparser::dialect::Dialect = match self.dialect {
            Dialect::MySql => &mysql,
            Dialect::Postgres => &postgres,
        };
        let mut parser = Parser::new(dialect)
            .try_with_sql(sql)
            .map_err(|e| RouteError::Syntax(e.to_string()))?;
        let mut statements = parser
            .parse_statements()
            .map_err(|e| RouteError::Syntax(e.to_string()))?;
        if statements.len() != 1 {
            return Err(RouteError::StatementCount(statements.len()));
        }
        let statement = statements.pop().ok_or(RouteError::StatementCount(0))?;
        let Statement::Insert(insert) = statement else {
            return Ok(
                match ddl::plan(sql, &statement, |t| self.table(t).cloned())? {
                    Some(ddl) => Prepared::Ddl(ddl),
                    None => Prepared::Other(Other::NotAnInsert),
                },
            );
        };
        let TableObject::TableName(name) = &insert.table else {
            return Err(RouteError::Unsupported("INSERT INTO TABLE FUNCTION".into()));
        };
        let table = match name.0.last() {
            Some(ObjectNamePart::Identifier(ident)) => ident.value.as_str(),
            _ => return Err(RouteError::Unsupported(format!("table name {name}"))),
        };
        let Some(rule) = self.table(table) else {
            return Ok(Prepared::Other(Other::UnshardedTable(table.to_owned())));
        };
        insert::prepare(sql, self.dialect, &parser, &insert, name, rule, metadata)
            .map(Prepared::Insert)
    }

    /// Prepares and binds in one step: the plan for one unprepared statement, or why there is
    /// none (not an INSERT or DDL on a sharded table).
    pub fn plan(
        &self,
        sql: &str,
        params: &[Value],
        metadata: &dyn Metadata,
    ) -> Result<Result<Plan, Other>, RouteError> {
        match self.prepare(sql, metadata)? {
            Prepared::Insert(insert) => insert.bind(params).map(Ok),
            Prepared::Ddl(ddl) => Ok(Ok(ddl.plan)),
            Prepared::Other(other) => Ok(Err(other)),
        }
    }

    fn table(&self, name: &str) -> Option<&Arc<TableRule>> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.tables.get(&name.to_ascii_lowercase())
        } else {
            self.tables.get(name)
        }
    }
}
