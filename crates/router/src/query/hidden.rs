//! The columns a read over several nodes asks of them beyond its select list, hidden from the
//! client: aggregates the merge combines (HAVING's, an expression's) and the keys the nodes
//! also group by.

use std::ops::Range;

use sqlparser::ast::{Function, Select, Spanned};
use sqlparser::parser::Parser;

use super::calls::pieces_of;
use super::select_list::call_end;
use crate::locate::Locator;
use crate::merge::{Aggregate, AggregateColumn};
use crate::template::{Edit, Piece};
use crate::tokens::Tokens;

/// The pieces that write an aggregate call as each node runs it (its qualifiers renamed).
pub(super) fn call_pieces(
    function: &Function,
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
    tokens: &Tokens,
    table_edits: &[Edit],
) -> Result<Vec<Piece>, String> {
    let start = locator
        .offset(function.name.span().start)
        .map_err(|e| e.to_string())?;
    let end = call_end(parser, locator, start)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("the end of {function}"))?;
    if tokens.has_placeholder_in(&(start..end)) {
        return Err(format!("a parameter inside {function} over several nodes"));
    }
    Ok(pieces_of(start..end, table_edits))
}

/// Appends an aggregate the merge combines as a hidden column; returns its position.
pub(super) fn hidden_aggregate(
    pieces: Vec<Piece>,
    function: Aggregate,
    hidden: &mut Vec<Vec<Piece>>,
    aggregates: &mut Vec<AggregateColumn>,
    select: &Select,
) -> usize {
    hidden.push(pieces);
    let index = select.projection.len() + hidden.len() - 1;
    aggregates.push(AggregateColumn {
        index,
        function,
        distinct: None,
        joined: None,
    });
    index
}

/// The keys the nodes also group by, beyond the statement's GROUP BY, each sent as a hidden
/// column: DISTINCT aggregates' arguments and ordered string aggregates' keys.
#[derive(Default)]
pub(super) struct NodeKeys<'s> {
    /// Each key's text and hidden column, so a key written twice is sent once.
    columns: Vec<(&'s str, usize)>,
    /// The pieces that write each key into the nodes' GROUP BY.
    pub(super) group_by: Vec<Vec<Piece>>,
}

impl<'s> NodeKeys<'s> {
    /// The hidden column of the key written at `key`, added if new.
    pub(super) fn add(
        &mut self,
        sql: &'s str,
        key: Range<usize>,
        table_edits: &[Edit],
        hidden: &mut Vec<Vec<Piece>>,
        select: &Select,
    ) -> usize {
        let text = sql[key.clone()].trim();
        if let Some(&(_, index)) = self.columns.iter().find(|(t, _)| *t == text) {
            return index;
        }
        hidden.push(pieces_of(key.clone(), table_edits));
        let index = select.projection.len() + hidden.len() - 1;
        self.columns.push((text, index));
        self.group_by.push(pieces_of(key, table_edits));
        index
    }
}
