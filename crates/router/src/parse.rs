//! Parsing one statement in the router's dialect, keeping the tokens planning reads beside
//! the syntax tree.

use keyshard_types::Dialect;
use sqlparser::ast::Statement;
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

use crate::{RouteError, Router, explain, locate, tokenize};

/// One statement parsed: its syntax tree, and the tokens the planner reads beside it (where
/// each placeholder and qualifier stands in the text).
pub struct Parsed<'a> {
    pub(crate) sql: &'a str,
    pub(crate) parser: Parser<'static>,
    pub(crate) statement: Statement,
}

impl Parsed<'_> {
    /// The syntax tree, for a caller that inspects the statement further without parsing it
    /// again.
    pub fn into_statement(self) -> Statement {
        self.statement
    }
}

impl Router {
    /// Parses `sql`, which must be one statement.
    pub fn parse<'a>(&self, sql: &'a str) -> Result<Parsed<'a>, RouteError> {
        static MYSQL: MySqlDialect = MySqlDialect {};
        static POSTGRES: PostgreSqlDialect = PostgreSqlDialect {};
        let dialect: &'static dyn sqlparser::dialect::Dialect = match self.dialect {
            Dialect::MySql => &MYSQL,
            Dialect::Postgres => &POSTGRES,
        };
        // MariaDB's `ANALYZE [FORMAT=JSON] statement`, its EXPLAIN ANALYZE, which sqlparser does
        // not read: read as the EXPLAIN of the same length, marked as analysing. Units copy
        // the statement's own text, so each node is still sent ANALYZE.
        let analyze = match self.dialect {
            Dialect::MySql => explain::mariadb_analyze(sql),
            Dialect::Postgres => None,
        };
        let read = match analyze {
            Some(at) => std::borrow::Cow::Owned(format!("{}EXPLAIN{}", &sql[..at], &sql[at + 7..])),
            None => std::borrow::Cow::Borrowed(sql),
        };
        let mut parser = Parser::new(dialect).with_tokens_with_locations(tokenize(&read, dialect)?);
        let mut statements = parser
            .parse_statements()
            .map_err(|e| RouteError::Syntax(locate::syntax_error(sql, &e.to_string())))?;
        if statements.len() != 1 {
            return Err(RouteError::StatementCount(statements.len()));
        }
        let mut statement = statements.pop().ok_or(RouteError::StatementCount(0))?;
        if let (Some(_), Statement::Explain { analyze, .. }) = (analyze, &mut statement) {
            *analyze = true;
        }
        Ok(Parsed {
            sql,
            parser,
            statement,
        })
    }
}
