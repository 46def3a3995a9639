//! `string_agg(x, ', ' ORDER BY k)` and `GROUP_CONCAT(x ORDER BY k SEPARATOR ', ')` over
//! several nodes: the nodes also group by the call's ORDER BY keys and send them as hidden
//! columns, so each piece holds the values of one key, and the merge joins a group's pieces in
//! the keys' order with the separator (see [`crate::merge::Joined`]).

use std::ops::Range;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArgumentList,
    FunctionArguments, OrderBySort, Spanned,
};

use super::calls::is_distinct;
use crate::locate::Locator;
use crate::names::last_ident;

/// MySQL's `@@group_concat_max_len`, written so that SQLite, which has no such variable and
/// no limit, reads 0: MySQL and MariaDB run what `/*!` comments hold, SQLite skips them.
pub(super) const MAX_LENGTH_PROBE: &str = "(/*! @@group_concat_max_len + */ 0)";

/// MySQL's `@@div_precision_increment` plus 1, which SQLite reads as 0 (unknown): 0 is a
/// value MySQL allows.
pub(super) const DIVISION_SCALE_PROBE: &str = "(/*! @@div_precision_increment + 1 + */ 0)";

/// A `string_agg`/`GROUP_CONCAT` call the merge can join.
pub(super) struct JoinCall {
    /// What goes between two values.
    pub(super) separator: Box<str>,
    /// The call's ORDER BY keys: where each is written, DESC, and `NULLS FIRST`/`LAST`.
    pub(super) keys: Vec<(Range<usize>, bool, Option<bool>)>,
    /// GROUP_CONCAT: MySQL cuts what is longer than `group_concat_max_len`.
    pub(super) bounded: bool,
    /// DISTINCT: its one key is the value itself.
    pub(super) distinct: bool,
}

/// The call's separator and keys if it is a `string_agg`/`GROUP_CONCAT`; `Ok(None)` for any
/// other function, `Err` (why) for one written in a way the merge does not join.
pub(super) fn join_call(
    sql: &str,
    function: &Function,
    locator: &mut Locator<'_>,
) -> Result<Option<JoinCall>, String> {
    let name = last_ident(&function.name).to_ascii_lowercase();
    let bounded = match name.as_str() {
        "group_concat" => true,
        "string_agg" => false,
        _ => return Ok(None),
    };
    let unsupported = |what: &str| Err(format!("{name}() {what}"));
    let FunctionArguments::List(FunctionArgumentList { args, clauses, .. }) = &function.args else {
        return unsupported("without arguments");
    };
    if function.over.is_some() || function.filter.is_some() || !function.within_group.is_empty() {
        return unsupported("with OVER, FILTER or WITHIN GROUP");
    }
    let mut separator = None;
    let mut keys = Vec::new();
    for clause in clauses {
        match clause {
            FunctionArgumentClause::Separator(value) => {
                separator = Some(literal(sql, value.span, locator)?);
            }
            FunctionArgumentClause::OrderBy(order) => {
                for item in order {
                    if !matches!(item.expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                        return unsupported("ordered by an expression");
                    }
                    let span = item.expr.span();
                    let range = offset(locator, span.start)?..offset(locator, span.end)?;
                    let descending = matches!(item.options.sort, Some(OrderBySort::Desc));
                    keys.push((range, descending, item.options.nulls_first));
                }
            }
            _ => return unsupported("with this clause"),
        }
    }
    let separator = match (bounded, args.as_slice(), separator) {
        (true, [_, ..], separator) => separator.unwrap_or_else(|| ",".into()),
        (
            false,
            [
                _,
                FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v))),
            ],
            None,
        ) => literal(sql, v.span, locator)?,
        _ => return unsupported("with a separator that is not a string literal"),
    };
    // DISTINCT: the value is its own key, so the nodes send each of theirs once and the
    // merge keeps one piece per value.
    let distinct = is_distinct(function);
    if distinct {
        let value = match args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(value))]
            | [
                FunctionArg::Unnamed(FunctionArgExpr::Expr(value)),
                FunctionArg::Unnamed(_),
            ] if !bounded || args.len() == 1 => value,
            _ => return unsupported("with DISTINCT of several values"),
        };
        if !matches!(value, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            return unsupported("with DISTINCT of an expression");
        }
        let span = value.span();
        let range = offset(locator, span.start)?..offset(locator, span.end)?;
        match keys.as_slice() {
            [] => keys.push((range, false, None)),
            [(key, ..)] if sql.get(key.clone()) == sql.get(range) => {}
            _ => return unsupported("with DISTINCT ordered by what it does not join"),
        }
    }
    Ok(Some(JoinCall {
        separator,
        keys,
        bounded,
        distinct,
    }))
}

/// The text of a plain quoted string literal: no escapes, no doubled quotes, no prefix, so it
/// means the same in every dialect and under every `standard_conforming_strings`.
fn literal(
    sql: &str,
    span: sqlparser::tokenizer::Span,
    locator: &mut Locator<'_>,
) -> Result<Box<str>, String> {
    let range = offset(locator, span.start)?..offset(locator, span.end)?;
    let text = sql.get(range).unwrap_or_default();
    text.strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|t| !t.contains(['\'', '\\']))
        .map(Into::into)
        .ok_or_else(|| format!("a separator written as {text}, not a plain string literal"))
}

fn offset(locator: &mut Locator<'_>, at: sqlparser::tokenizer::Location) -> Result<usize, String> {
    locator.offset(at).map_err(|e| e.to_string())
}
