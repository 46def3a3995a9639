//! Writing a shape's text: spans of the statement with their literals replaced by numbered
//! placeholders in the dialect's form.

use std::ops::Range;

use keyshard_types::Dialect;

/// Appends `sql[span]` with `literals` (inside it, in order) as placeholders numbered on
/// after `numbered`.
pub(super) fn push_shape(
    text: &mut String,
    sql: &str,
    span: Range<usize>,
    literals: &[Range<usize>],
    numbered: usize,
    dialect: Dialect,
) -> Option<()> {
    let mut copied = span.start;
    for (n, literal) in literals.iter().enumerate() {
        text.push_str(sql.get(copied..literal.start)?);
        push_placeholder(text, numbered + n + 1, dialect);
        copied = literal.end;
    }
    text.push_str(sql.get(copied..span.end)?);
    Some(())
}

/// Appends placeholder number `n` (from 1).
pub(super) fn push_placeholder(text: &mut String, n: usize, dialect: Dialect) {
    match dialect {
        Dialect::MySql => text.push('?'),
        Dialect::Postgres => {
            text.push('$');
            text.push_str(itoa::Buffer::new().format(n));
        }
    }
}
