//! A statement's shape: its text with its literal values replaced by placeholders.
//!
//! Applications send the same statements again and again with other values, as text. Parsing
//! is most of the proxy's own CPU time per such statement, and statements of one shape parse
//! alike; so a shape is prepared once, its literals as parameters, and each statement of that
//! shape only binds its literals ([`crate::PreparedInsert::bind_shape`],
//! [`crate::PreparedQuery::bind_shape`]), which are written back into the SQL as the very text
//! the client sent.
//!
//! Which literals are cut depends on the statement. In an INSERT or REPLACE, every one, and a
//! literal the scan cannot place makes the statement shapeless. In a SELECT, UPDATE or DELETE,
//! only those of the top-level WHERE clause, where the sharding conditions are; the rest of
//! the text (a LIMIT, a select list, SET) stays in the shape as written, and a subquery or a
//! set operation makes the statement shapeless.
//!
//! An INSERT's VALUES rows that are alike but for their literals (what a bulk load sends) are
//! folded into the first: the shape is that of the statement with one row, so a load's
//! statements share one shape whatever their row count, and the shape is prepared from one
//! row instead of parsing them all ([`Shape::first_row_only`]); binding repeats the prepared
//! row once per row of the statement.
//!
//! The scan is deliberately narrow. Whatever it cannot cut with certainty makes a statement
//! shapeless, to be parsed as usual: comments, backslashes, doubled quotes, prefixed strings
//! (`E'…'`, `X'…'`, `_utf8'…'`), placeholders, dollar quoting, MySQL's double-quoted strings,
//! numbers with exponents, two literals in a row. A literal is cut only where a value starts:
//! after `(`, `,` or `=` (and, in a WHERE clause, `<` or `>`), with an optional minus sign.

mod lexical;
mod rows;
mod scan;
mod text;

use std::ops::Range;

use crate::template::Literals;
use keyshard_types::Value;

use rows::Folded;

/// A statement's shape and its literals.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    text: String,
    /// Where each literal is in the statement, in text order.
    pub(crate) ranges: Vec<Range<usize>>,
    /// Each literal's value, as the parser would read it.
    pub(crate) values: Vec<Value>,
    /// The rows the shape folded into its first, if it did.
    pub(crate) folded: Option<Folded>,
}

impl Shape {
    /// At most the bytes [`Shape::of`] holds for a statement of `sql_len` bytes with at most
    /// `literals` literals: the shape's text (placeholders may be longer than the literals
    /// they replace), each literal's range and value, and the strings' contents; vectors
    /// counted at twice their length, as growth leaves them. Checked in `tests/it/memory.rs`.
    pub fn memory_bound(sql_len: usize, literals: usize) -> usize {
        let per_literal = 2 * (size_of::<Range<usize>>() + size_of::<Value>()) + 32;
        sql_len
            .saturating_mul(3)
            .saturating_add(literals.saturating_mul(per_literal))
    }

    /// How many VALUES rows the shape folded into its first; `None` when it folded none. A
    /// statement prepared from a folding shape has one row: only
    /// [`crate::PreparedInsert::bind_shape`] binds it for every row of the statement.
    pub fn folded_rows(&self) -> Option<usize> {
        self.folded.map(|f| f.rows)
    }

    /// `sql`, a statement of this shape, with its first VALUES row only, when the shape folds
    /// rows: a statement of the same shape that parses in a fraction of the time and memory.
    pub fn first_row_only(&self, sql: &str) -> Option<String> {
        let folded = self.folded?;
        let mut first = String::with_capacity(folded.first_end + sql.len() - folded.last_end);
        first.push_str(sql.get(..folded.first_end)?);
        first.push_str(sql.get(folded.last_end..)?);
        Some(first)
    }

    /// Each literal's value as the parser reads it, in placeholder order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The statement with its literals as placeholders: what is prepared, and the cache key.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The literals of `sql`, a statement of this shape, as its text spells them.
    pub(crate) fn literals<'a>(&'a self, sql: &'a str) -> Literals<'a> {
        Literals {
            sql,
            ranges: &self.ranges,
        }
    }
}

#[cfg(test)]
mod tests;
