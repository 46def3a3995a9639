//! What a statement takes and returns, before it runs: PostgreSQL's Describe answers with the
//! parameter types and the result columns, and clients such as tokio-postgres encode their
//! parameters and decode the rows by exactly those types.
//!
//! Types come from the client's declared parameter OIDs first, then from the logic tables'
//! declared column types: a placeholder in an INSERT's row takes its column's type, one
//! compared with a column (`order_id = $1`, `IN ($1, $2)`, `SET status = $2`) that column's
//! (`order_id = ANY($1)`: an array of it),
//! and `RETURNING`/select lists name columns whose types are known. Session statements are
//! answered on a copy of the session to see their columns; the DistSQL statements the proxy
//! answers have fixed columns.

mod analyse;
mod description;
mod param_types;
mod placeholders;
mod projection;
mod proxy_answered;
mod result_fields;
mod table_columns;

use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

pub use description::{Description, Field, Fields};
pub use placeholders::{MAX_PARAMETERS, highest_placeholder};
pub use result_fields::{reply_fields, result_fields};
pub use table_columns::TableColumns;

use crate::postgres::types::oid;
use crate::sql::Sql;

/// Parses `sql` within the router's operator-chain budget, which keeps a long chain from
/// overflowing the stack.
fn parse(sql: &str) -> Result<Vec<sqlparser::ast::Statement>, String> {
    let dialect = PostgreSqlDialect {};
    let tokens = keyshard_router::tokenize(sql, &dialect).map_err(|e| e.to_string())?;
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| e.to_string())
}

/// Describes `sql`, whose highest placeholder is `$parameters` (see [`highest_placeholder`],
/// at most [`MAX_PARAMETERS`]): `declared` are the client's parameter OIDs (0 = let the server
/// decide). `tree` is its syntax tree when it was parsed already.
pub async fn describe(
    sql: Sql<'_>,
    tree: Option<Statement>,
    parameters: usize,
    declared: &[u32],
    known: &TableColumns,
) -> Description {
    let count = parameters.min(MAX_PARAMETERS).max(declared.len());
    let mut inferred = vec![oid::TEXT; count];
    let mut syntax_error = None;
    let fields = match proxy_answered::fields(sql) {
        Some(fields) => fields,
        None => match tree.map_or_else(|| parse(sql.text), |tree| Ok(vec![tree])) {
            Ok(statements) if statements.len() == 1 => {
                param_types::cast_placeholders(&statements[0], &mut inferred);
                analyse::analyse(&statements[0], known, &mut inferred).await
            }
            Ok(_) => guess_fields(sql),
            Err(e) => {
                syntax_error = Some(e);
                guess_fields(sql)
            }
        },
    };
    let params = inferred
        .into_iter()
        .enumerate()
        .map(|(i, inferred)| match declared.get(i) {
            Some(&declared) if declared != 0 => declared,
            _ => inferred,
        })
        .collect();
    Description {
        params,
        fields,
        syntax_error,
    }
}

/// For text the parser does not take: whether it looks like a query by its first word.
fn guess_fields(sql: Sql<'_>) -> Fields {
    if sql.leading.answers_rows() || contains_word(sql.text, "returning") {
        Fields::Unknown
    } else {
        Fields::None
    }
}

fn contains_word(sql: &str, word: &str) -> bool {
    sql.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests;
