//! One multi-row INSERT from the single-row statements of a batch.

use std::fmt::Write;
use std::ops::Range;

use keyshard_router::{BatchRow, ExecutionUnit};

use super::Waiting;

/// The text before and after a unit's row.
pub(super) fn around<'a>(
    unit: &'a ExecutionUnit,
    row: &Range<usize>,
) -> Option<(&'a str, &'a str)> {
    Some((unit.sql.get(..row.start)?, unit.sql.get(row.end..)?))
}

/// What makes a MariaDB batch refuse whatever a single row would be refused or changed for,
/// whatever the session's `sql_mode`.
pub(super) const STRICT: &str =
    "SET STATEMENT sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES') FOR ";

/// One INSERT of every row of `batch`, around them the text they share; its parameters are
/// theirs in turn, PostgreSQL's numbered on from the rows before.
pub(super) fn joined(batch: &[Waiting]) -> Option<ExecutionUnit> {
    let first = batch.first()?;
    let (head, tail) = around(&first.unit, &first.row.row)?;
    let rows: usize = batch.iter().map(|w| w.row.row.len() + 4).sum();
    let mut sql = String::with_capacity(STRICT.len() + head.len() + rows + tail.len());
    if first.strict {
        sql.push_str(STRICT);
    }
    sql.push_str(head);
    let mut before = 0;
    for (i, waiting) in batch.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        numbered_on(&mut sql, &waiting.unit, &waiting.row, before)?;
        before += waiting.unit.params.len();
    }
    sql.push_str(tail);
    let params = batch.iter().flat_map(|w| w.unit.params.iter().cloned());
    Some(ExecutionUnit {
        sql,
        params: params.collect(),
        rows: (0..batch.len()).collect(),
        ..first.unit.clone()
    })
}

/// Appends `unit`'s row with its PostgreSQL placeholders (`$1` …) numbered on from `before`.
/// `None`: the placeholders are not what the row's parameters say.
pub(super) fn numbered_on(
    sql: &mut String,
    unit: &ExecutionUnit,
    row: &BatchRow,
    before: usize,
) -> Option<()> {
    let text = unit.sql.as_str();
    if row.placeholders.is_empty() || before == 0 {
        sql.push_str(text.get(row.row.clone())?);
        return Some(());
    }
    if row.placeholders.len() != unit.params.len() {
        return None;
    }
    let mut from = row.row.start;
    for &at in &row.placeholders {
        let digits = text
            .get(at + 1..)?
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let n: usize = text.get(at + 1..at + 1 + digits)?.parse().ok()?;
        sql.push_str(text.get(from..at)?);
        let _ = write!(sql, "${}", n + before);
        from = at + 1 + digits;
    }
    sql.push_str(text.get(from..row.row.end)?);
    Some(())
}
