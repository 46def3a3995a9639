//! The shapes of an aggregate call the merges read (DISTINCT, one argument, no ORDER BY,
//! FILTER or OVER), and the text of a part of the statement as each node writes it.

use std::ops::Range;

use sqlparser::ast::{
    DuplicateTreatment, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments,
};

use crate::template::{Edit, Piece};

/// Whether an aggregate call has no ORDER BY, FILTER or OVER.
pub(super) fn plain_call(function: &Function) -> bool {
    matches!(
        &function.args,
        FunctionArguments::List(FunctionArgumentList { clauses, .. }) if clauses.is_empty()
    ) && function.over.is_none()
        && function.filter.is_none()
}

pub(super) fn is_distinct(function: &Function) -> bool {
    matches!(
        &function.args,
        FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: Some(DuplicateTreatment::Distinct),
            ..
        })
    )
}

pub(super) fn one_argument(function: &Function) -> bool {
    matches!(
        &function.args,
        FunctionArguments::List(FunctionArgumentList { args, .. })
            if matches!(args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Expr(_))])
    )
}

/// The argument after DISTINCT, within the text of a call's `arguments`.
pub(super) fn after_distinct(sql: &str, arguments: Range<usize>) -> Option<Range<usize>> {
    let text = sql.get(arguments.clone())?;
    let rest = text.trim_start();
    let keyword = rest.get(.."DISTINCT".len())?;
    let argument = &rest[keyword.len()..];
    let separated = !argument.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    let start = arguments.end - argument.trim_start().len();
    (keyword.eq_ignore_ascii_case("DISTINCT") && separated).then_some(start..arguments.end)
}

/// The pieces that write the bytes `range` of the statement with the `edits` inside it (its
/// sharded tables' names) applied.
pub(super) fn pieces_of(range: Range<usize>, edits: &[Edit]) -> Vec<Piece> {
    let mut inside: Vec<&Edit> = edits
        .iter()
        .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
        .collect();
    inside.sort_by_key(|e| e.range.start);
    let mut pieces = Vec::with_capacity(inside.len() * 2 + 1);
    let mut at = range.start;
    for edit in inside {
        if at < edit.range.start {
            pieces.push(Piece::Copy(at..edit.range.start));
        }
        pieces.push(edit.piece.clone());
        at = edit.range.end;
    }
    if at < range.end {
        pieces.push(Piece::Copy(at..range.end));
    }
    pieces
}
