//! An INSERT's shape: its text with each literal value replaced by a placeholder.
//!
//! Applications send the same INSERT again and again with other values, as text. Parsing is
//! most of the proxy's own CPU time per such statement, and statements of one shape parse
//! alike; so a shape is prepared once, its literals as parameters, and each statement of that
//! shape only binds its literals ([`crate::PreparedInsert::bind_shape`]), which are written
//! back into the SQL as the very text the client sent.
//!
//! The scan is deliberately narrow. Whatever it cannot cut with certainty makes a statement
//! shapeless, to be parsed as usual: comments, backslashes, doubled quotes, prefixed strings
//! (`E'…'`, `X'…'`, `_utf8'…'`, `DATE '…'`), placeholders, dollar quoting, MySQL's
//! double-quoted strings, numbers with exponents. A literal must follow `(`, `,` or `=`
//! (with an optional minus sign), where a value starts.

use std::ops::Range;

use std::fmt::Write as _;

use crate::Dialect;
use crate::literal::number_value;
use crate::value::Value;

/// An INSERT statement's shape and its literals.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    text: String,
    /// Where each literal is in the statement, in text order.
    pub(crate) ranges: Vec<Range<usize>>,
    /// Each literal's value, as the parser would read it.
    pub(crate) values: Vec<Value>,
}

/// What came before the current byte, skipping whitespace.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    /// `(`, `,` or `=`: a value may start here.
    ValueStart,
    /// A `-` right after a value start, at this byte: a negative number may follow.
    Sign(usize),
    Other,
}

impl Shape {
    /// The shape of `sql` when it is an INSERT or REPLACE the scan can cut with certainty.
    pub fn of(sql: &str, dialect: Dialect) -> Option<Shape> {
        let first_word = sql
            .trim_start()
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()?;
        if !first_word.eq_ignore_ascii_case("insert") && !first_word.eq_ignore_ascii_case("replace")
        {
            return None;
        }
        let bytes = sql.as_bytes();
        let mut shape = Shape {
            text: String::with_capacity(sql.len()),
            ranges: Vec::new(),
            values: Vec::new(),
        };
        let mut copied = 0;
        let mut before = Before::Other;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let (end, literal) = match b {
                b' ' | b'\t' | b'\r' | b'\n' => {
                    i += 1;
                    continue;
                }
                b'\'' => {
                    let end = closing(bytes, i, b'\'')?;
                    let content = sql.get(i + 1..end - 1)?;
                    if before != Before::ValueStart || content.contains('\\') {
                        return None;
                    }
                    (end, Some((i, Value::Text(content.to_owned()))))
                }
                b'0'..=b'9' => {
                    let mut end = digits(bytes, i);
                    if bytes.get(end) == Some(&b'.')
                        && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
                    {
                        end = digits(bytes, end + 1);
                    }
                    if bytes.get(end).is_some_and(|&c| is_word(c) || c == b'.') {
                        return None;
                    }
                    let number = sql.get(i..end)?;
                    let (start, value) = match before {
                        Before::ValueStart => (i, number_value(number, false)?),
                        Before::Sign(at) => match number_value(number, true)? {
                            // The parser keeps `-0` an expression, unlike `0` (see `classify`).
                            Value::Int(0) => return None,
                            value => (at, value),
                        },
                        Before::Other => return None,
                    };
                    (end, Some((start, value)))
                }
                b'`' if dialect == Dialect::MySql => (closing(bytes, i, b'`')?, None),
                b'"' if dialect == Dialect::Postgres => (closing(bytes, i, b'"')?, None),
                b'-' => {
                    if bytes.get(i + 1) == Some(&b'-') {
                        return None;
                    }
                    before = match before {
                        Before::ValueStart => Before::Sign(i),
                        _ => Before::Other,
                    };
                    i += 1;
                    continue;
                }
                b'(' | b',' | b'=' => {
                    before = Before::ValueStart;
                    i += 1;
                    continue;
                }
                _ if is_word(b) && b != b'$' => {
                    let end = i + bytes[i..].iter().take_while(|&&c| is_word(c)).count();
                    // A word glued to a quote prefixes a string (`E'…'`, `N'…'`, `_utf8'…'`).
                    if matches!(bytes.get(end), Some(b'\'' | b'"')) {
                        return None;
                    }
                    (end, None)
                }
                b'?' | b'$' | b'\\' | b'#' | b'"' => return None,
                b'/' if bytes.get(i + 1) == Some(&b'*') => return None,
                _ => (i + 1, None),
            };
            if let Some((start, value)) = literal {
                shape.text.push_str(sql.get(copied..start)?);
                shape.values.push(value);
                match dialect {
                    Dialect::MySql => shape.text.push('?'),
                    Dialect::Postgres => {
                        let _ = write!(shape.text, "${}", shape.values.len());
                    }
                }
                shape.ranges.push(start..end);
                copied = end;
            }
            before = Before::Other;
            i = end;
        }
        shape.text.push_str(sql.get(copied..)?);
        Some(shape)
    }

    /// Each literal's value as the parser reads it, in placeholder order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The statement with its literals as placeholders: what is prepared, and the cache key.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The end (exclusive) of the quoted run opening at `open`; `None` when it does not close or
/// the quote is doubled inside it (an escape the scan leaves to the parser).
fn closing(bytes: &[u8], open: usize, quote: u8) -> Option<usize> {
    let close = open + 1 + bytes.get(open + 1..)?.iter().position(|&c| c == quote)?;
    match bytes.get(close + 1) {
        Some(&c) if c == quote => None,
        _ => Some(close + 1),
    }
}

fn digits(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count()
}

/// A byte of an unquoted identifier or keyword (any non-ASCII byte belongs to one).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(sql: &str, dialect: Dialect) -> Option<(String, Vec<Value>)> {
        Shape::of(sql, dialect).map(|s| {
            for (range, value) in s.ranges.iter().zip(&s.values) {
                assert!(!sql[range.clone()].is_empty(), "{value:?}");
            }
            (s.text, s.values)
        })
    }

    #[test]
    fn literals_become_placeholders() {
        let (text, values) = shape(
            "INSERT INTO t_order (user_id, status, amount) VALUES (7, 'new', -2.5), (-8,'x y',0)",
            Dialect::MySql,
        )
        .unwrap();
        assert_eq!(
            text,
            "INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?,?,?)"
        );
        assert_eq!(
            values,
            [
                Value::Int(7),
                Value::Text("new".into()),
                Value::Double(-2.5),
                Value::Int(-8),
                Value::Text("x y".into()),
                Value::Int(0),
            ]
        );
        let (text, _) = shape(
            "insert into \"T\" (a, b) values (1, 'é') returning a",
            Dialect::Postgres,
        )
        .unwrap();
        assert_eq!(text, "insert into \"T\" (a, b) values ($1, $2) returning a");
    }

    #[test]
    fn words_tables_and_expressions_stay_in_the_shape() {
        let (text, values) = shape(
            "REPLACE INTO t_order_1 (a, `b c`) VALUES (NULL, DEFAULT) ON DUPLICATE KEY UPDATE a = 3",
            Dialect::MySql,
        )
        .unwrap();
        assert_eq!(
            text,
            "REPLACE INTO t_order_1 (a, `b c`) VALUES (NULL, DEFAULT) ON DUPLICATE KEY UPDATE a = ?"
        );
        assert_eq!(values, [Value::Int(3)]);
    }

    #[test]
    fn anything_subtle_is_shapeless() {
        for sql in [
            "SELECT 1",
            "INSERT INTO t (a) VALUES ('it''s')",
            "INSERT INTO t (a) VALUES ('a\\'b')",
            "INSERT INTO t (a) VALUES (E'x')",
            "INSERT INTO t (a) VALUES (X'0a')",
            "INSERT INTO t (a) VALUES (_utf8'x')",
            "INSERT INTO t (a) VALUES (DATE '2020-01-01')",
            "INSERT INTO t (a) VALUES ('a' 'b')",
            "INSERT INTO t (a) VALUES (1e5)",
            "INSERT INTO t (a) VALUES (1abc)",
            "INSERT INTO t (a) VALUES (.5)",
            "INSERT INTO t (a) VALUES (-0)",
            "INSERT INTO t (a) VALUES (?)",
            "INSERT INTO t (a) VALUES (1) -- c",
            "INSERT INTO t (a) VALUES (1) /* c */",
            "INSERT INTO t (a) VALUES (1) # c",
            "INSERT INTO t (a) VALUES (\"x\")",
            "INSERT INTO t (a) VALUES ('unclosed)",
            "INSERT INTO t (a) VALUES (x1 - 5)",
        ] {
            assert_eq!(shape(sql, Dialect::MySql), None, "{sql}");
        }
        for sql in [
            "INSERT INTO t (a) VALUES ($1)",
            "INSERT INTO t (a) VALUES ($$x$$)",
            "INSERT INTO \"t\"\"x\" (a) VALUES (1)",
        ] {
            assert_eq!(shape(sql, Dialect::Postgres), None, "{sql}");
        }
    }
}
