//! `INSERT … SELECT` whose SELECT reads no sharded table (`SELECT … FROM (VALUES …)`,
//! `UNNEST($1::int[], …)`, constants, unsharded tables): the SELECT runs once on one data
//! source, and its rows become the rows of an ordinary multi-row INSERT, so that keys are
//! generated, rows routed and `RETURNING` rows come back in the SELECT's order. SQLAlchemy's
//! `add_all` and Django's `bulk_create` write batches this way on PostgreSQL.

use sqlparser::ast::{Insert, SetExpr, Spanned, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use keyshard_config::TableRule;
use keyshard_types::Dialect;
use keyshard_types::Value;

use crate::direct::Direct;
use crate::locate::Locator;
use crate::tokens::Tokens;
use crate::{Other, Prepared, RouteError, Router, names, query};

/// An INSERT whose rows a SELECT computes.
#[derive(Debug, Clone)]
pub struct InsertSelect {
    /// The SELECT, as written, for the data source that evaluates it.
    source: Direct,
    /// The statement's text before the SELECT (`INSERT INTO t (a, b) `) and after it
    /// (` RETURNING id`).
    head: Box<str>,
    tail: Box<str>,
    dialect: Dialect,
}

impl InsertSelect {
    /// Parameters the statement takes: all of them are the SELECT's.
    pub fn param_count(&self) -> usize {
        self.source.param_count
    }

    /// The SELECT with `params`, planned on the data source that evaluates it.
    pub fn source(&self) -> &Direct {
        &self.source
    }

    /// The INSERT of `rows` (the SELECT's result) as literal VALUES; `None` when the SELECT
    /// returned no rows.
    pub fn with_rows(&self, rows: &[Vec<Value>]) -> Option<String> {
        if rows.is_empty() {
            return None;
        }
        let mut sql = String::with_capacity(self.head.len() + self.tail.len() + 16 * rows.len());
        sql.push_str(&self.head);
        sql.push_str(" VALUES ");
        crate::template::push_rows(&mut sql, rows, self.dialect);
        if !self.tail.is_empty() {
            sql.push(' ');
            sql.push_str(&self.tail);
        }
        Some(sql)
    }
}

impl Router {
    /// An INSERT … SELECT into `rule`'s table. A SELECT that reads no sharded table runs on one
    /// data source: where the unsharded tables it reads live, else the table's first. Rows
    /// copied from sharded tables are refused, as ShardingSphere refuses them.
    pub(crate) fn insert_select(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        insert: &Insert,
        rule: &TableRule,
    ) -> Result<Prepared, RouteError> {
        let query = as_query(insert)
            .ok_or_else(RouteError::internal("INSERT … SELECT without its SELECT"))?;
        let (tables, others) = query::tables(sql, &query, |t| self.table(t).cloned())?;
        if !tables.rules.is_empty() {
            let names_key = rule.key_generate.as_ref().is_none_or(|k| {
                insert
                    .columns
                    .iter()
                    .any(|c| names::last_ident(c).eq_ignore_ascii_case(&k.column))
            });
            return Err(if names_key {
                RouteError::Unsupported("INSERT … SELECT from a sharded table".into())
            } else {
                RouteError::InsertSelectWithoutKey
            });
        }
        let data_source = match (others.is_empty(), &self.default_data_source) {
            (false, Some(default)) => self.home(&others, default)?,
            (false, None) => {
                return Ok(Prepared::Other(Other::UnshardedTable(
                    others.first().cloned().unwrap_or_default(),
                )));
            }
            (true, _) => match rule.data_nodes.first() {
                Some(node) => node.data_source.clone(),
                None => return Err(RouteError::Internal("a table rule without data nodes")),
            },
        };
        prepare(sql, self.dialect, parser, insert, data_source).map(Prepared::InsertSelect)
    }
}

/// Whether `insert` takes its rows from a query rather than a plain `VALUES` list.
pub(crate) fn is_insert_select(insert: &Insert) -> bool {
    insert.source.as_ref().is_some_and(|query| {
        !matches!(&*query.body, SetExpr::Values(_))
            || query.with.is_some()
            || query.order_by.is_some()
            || query.limit_clause.is_some()
    })
}

/// Prepares `insert` (see [`is_insert_select`]) to evaluate its SELECT on `data_source`.
pub(crate) fn prepare(
    sql: &str,
    dialect: Dialect,
    parser: &Parser<'_>,
    insert: &Insert,
    data_source: String,
) -> Result<InsertSelect, RouteError> {
    let Some(query) = &insert.source else {
        return Err(RouteError::Internal("INSERT … SELECT without its SELECT"));
    };
    let mut locator = Locator::new(sql);
    let start = locator.offset(query.span().start)?;
    let end = match source_end(parser, &mut locator, start)? {
        Some(end) => end,
        None => sql.trim_end().trim_end_matches(';').len(),
    };
    let source = start..end.max(start);
    let unsplit = || RouteError::Unsupported("this form of INSERT … SELECT".into());
    let head = sql.get(..source.start).ok_or_else(unsplit)?.trim_end();
    let select = sql.get(source.clone()).ok_or_else(unsplit)?.trim_end();
    let tail = sql.get(source.end..).ok_or_else(unsplit)?;
    if select.is_empty() {
        return Err(unsplit());
    }
    let tokens = Tokens::scan(parser, &mut locator, dialect, &[])?;
    if tokens
        .placeholders
        .iter()
        .any(|p| p.range.start < source.start || p.range.end > source.end)
    {
        return Err(RouteError::Unsupported(
            "a parameter outside the SELECT of an INSERT … SELECT".into(),
        ));
    }
    Ok(InsertSelect {
        source: Direct {
            sql: select.into(),
            data_sources: vec![data_source],
            param_count: tokens.param_count,
            is_read: true,
            replicated: false,
            replica_safe: false,
            table: String::new(),
        },
        head: head.into(),
        tail: tail.trim().trim_end_matches(';').trim_end().into(),
        dialect,
    })
}

/// Where the SELECT that starts at `start` ends: at `RETURNING`, `ON CONFLICT` or `ON DUPLICATE
/// KEY` outside parentheses; `None` when nothing follows it. (The AST's spans leave out parts
/// of some sources, such as `UNNEST(…)`.)
fn source_end(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
    start: usize,
) -> Result<Option<usize>, RouteError> {
    let word = |token: &Token| match token {
        Token::Word(w) => Some(w.keyword),
        _ => None,
    };
    let mut depth = 0usize;
    for index in 0.. {
        let token = parser.token_at(index);
        match &token.token {
            Token::EOF => break,
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            t if depth == 0 && locator.offset(token.span.start)? >= start => {
                let next = (index + 1..)
                    .map(|i| &parser.token_at(i).token)
                    .find(|t| !matches!(t, Token::Whitespace(_)));
                let ends = match word(t) {
                    Some(Keyword::RETURNING) => true,
                    Some(Keyword::ON) => matches!(
                        next.and_then(word),
                        Some(Keyword::CONFLICT | Keyword::DUPLICATE)
                    ),
                    _ => false,
                };
                if ends {
                    return Ok(Some(locator.offset(token.span.start)?));
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

/// The statement `insert` is, for a check of what its SELECT reads.
pub(crate) fn as_query(insert: &Insert) -> Option<Statement> {
    insert.source.as_ref().map(|q| Statement::Query(q.clone()))
}
