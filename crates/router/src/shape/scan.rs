//! The scan that cuts a statement's literals: one pass over its bytes, tracking where a
//! value may start, which clause it is in and how deep in parentheses, and refusing whatever
//! it cannot cut with certainty.

use keyshard_types::Dialect;
use keyshard_types::Value;

use super::Shape;
use super::lexical::{Word, closing, digits, is_word, word_end};
use super::rows::RowScan;
use super::text::{push_placeholder, push_shape};
use crate::Leading;
use crate::literal::number_value;

/// What came before the current byte, skipping whitespace.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    /// `(`, `,` or `=`: a value may start here.
    ValueStart,
    /// A `-` right after a value start, at this byte: a negative number may follow.
    Sign(usize),
    /// A literal (cut or not): another one right after it would be a run the scan leaves to
    /// the parser (`'a' 'b'`).
    Literal,
    Other,
}

/// Which literals a statement's shape cuts.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// INSERT, REPLACE: every literal; one the scan cannot place makes it shapeless.
    Values,
    /// SELECT (`selects` = 1), UPDATE, DELETE (`selects` = 0): the top-level WHERE clause's.
    Where { selects: usize },
}

impl Scope {
    /// Whether a literal where a value starts is cut, in `clause`.
    fn cuts(self, clause: Clause) -> bool {
        match self {
            Scope::Values => true,
            Scope::Where { .. } => clause == Clause::Where,
        }
    }

    /// Whether a literal not cut is kept as written after `before`: only outside an INSERT's
    /// values, and not glued to a sign or another literal.
    fn keeps(self, before: Before) -> bool {
        self != Scope::Values && matches!(before, Before::ValueStart | Before::Other)
    }
}

/// Where the scan is in a [`Scope::Where`] statement.
#[derive(Clone, Copy, PartialEq)]
enum Clause {
    BeforeWhere,
    Where,
    AfterWhere,
}

impl Shape {
    /// The shape of `sql` when it is an INSERT, REPLACE, SELECT, UPDATE or DELETE the scan can
    /// cut with certainty.
    pub fn of(sql: &str, dialect: Dialect) -> Option<Shape> {
        Self::with_leading(sql, Leading::of(sql), dialect)
    }

    /// [`Shape::of`] for a statement whose leading keyword is known already.
    pub fn with_leading(sql: &str, leading: Leading, dialect: Dialect) -> Option<Shape> {
        let scope = match leading {
            Leading::Insert | Leading::Replace => Scope::Values,
            Leading::Select => Scope::Where { selects: 1 },
            Leading::Update | Leading::Delete => Scope::Where { selects: 0 },
            _ => return None,
        };
        let bytes = sql.as_bytes();
        // Room for a few literals without growing: most statements have no more.
        let mut ranges = Vec::with_capacity(4);
        let mut values = Vec::with_capacity(4);
        let mut rows = RowScan::default();
        // The text is written as the scan goes until a second VALUES row opens: the rows may
        // then fold, and the text is written after the scan, as they turn out.
        let mut text = String::with_capacity(sql.len());
        let mut copied = Some(0);
        let mut before = Before::Other;
        let mut clause = Clause::BeforeWhere;
        let mut depth = 0usize;
        let mut selects = 0;
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
                    if content.contains('\\') {
                        return None;
                    }
                    match before {
                        Before::ValueStart if scope.cuts(clause) => {
                            (end, Some((i, Value::Text(content.to_owned()))))
                        }
                        _ if scope.keeps(before) => (end, None),
                        _ => return None,
                    }
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
                    match before {
                        Before::ValueStart if scope.cuts(clause) => {
                            (end, Some((i, number_value(number, false)?)))
                        }
                        Before::Sign(at) if scope.cuts(clause) => match number_value(number, true)?
                        {
                            // The parser keeps `-0` an expression, unlike `0` (see `classify`).
                            Value::Int(0) => return None,
                            value => (end, Some((at, value))),
                        },
                        _ if scope.keeps(before) => (end, None),
                        _ => return None,
                    }
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
                    if depth == 0 {
                        rows.other();
                    }
                    i += 1;
                    continue;
                }
                b'(' | b',' | b'=' => {
                    if depth == 0 {
                        match b {
                            b'(' => {
                                if rows.open(i, values.len()) {
                                    copied = None;
                                }
                            }
                            b',' => rows.comma(),
                            _ => rows.other(),
                        }
                    }
                    if b == b'(' {
                        depth += 1;
                    }
                    before = Before::ValueStart;
                    i += 1;
                    continue;
                }
                b'<' | b'>' if scope != Scope::Values => {
                    before = Before::ValueStart;
                    i += 1;
                    continue;
                }
                b')' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        rows.close(i + 1, sql, &ranges);
                    }
                    (i + 1, None)
                }
                _ if is_word(b) && b != b'$' => {
                    let end = word_end(bytes, i);
                    // A word glued to a quote prefixes a string (`E'…'`, `N'…'`, `_utf8'…'`).
                    if matches!(bytes.get(end), Some(b'\'' | b'"')) {
                        return None;
                    }
                    match scope {
                        Scope::Values if depth == 0 => rows.word(&bytes[i..end]),
                        Scope::Values => {}
                        Scope::Where { selects: allowed } => match Word::of(&bytes[i..end]) {
                            Word::Select => {
                                selects += 1;
                                if selects > allowed {
                                    return None;
                                }
                            }
                            Word::SetOperation => return None,
                            Word::Where if depth > 0 || clause != Clause::BeforeWhere => {
                                return None;
                            }
                            Word::Where => clause = Clause::Where,
                            Word::EndsWhere if depth == 0 && clause == Clause::Where => {
                                clause = Clause::AfterWhere;
                            }
                            Word::EndsWhere | Word::Other => {}
                        },
                    }
                    (end, None)
                }
                b'?' | b'$' | b'\\' | b'#' | b'"' => return None,
                b'/' if bytes.get(i + 1) == Some(&b'*') => return None,
                _ => {
                    if depth == 0 {
                        rows.other();
                    }
                    (i + 1, None)
                }
            };
            before = Before::Other;
            if matches!(b, b'\'' | b'0'..=b'9') {
                before = Before::Literal;
            }
            if depth == 0 && matches!(b, b'\'' | b'0'..=b'9' | b'`' | b'"') {
                rows.other();
            }
            if let Some((start, value)) = literal {
                values.push(value);
                ranges.push(start..end);
                if let Some(from) = copied {
                    text.push_str(sql.get(from..start)?);
                    push_placeholder(&mut text, values.len(), dialect);
                    copied = Some(end);
                }
            }
            i = end;
        }
        let folded = rows.fold();
        match (copied, folded) {
            (Some(from), _) => text.push_str(sql.get(from..)?),
            (None, None) => {
                text.clear();
                push_shape(&mut text, sql, 0..sql.len(), &ranges, 0, dialect)?;
            }
            (None, Some(f)) => {
                text.clear();
                let head_and_first = ranges.get(..f.head + f.per_row)?;
                let tail = ranges.get(f.head + f.rows * f.per_row..)?;
                push_shape(&mut text, sql, 0..f.first_end, head_and_first, 0, dialect)?;
                let numbered = head_and_first.len();
                push_shape(
                    &mut text,
                    sql,
                    f.last_end..sql.len(),
                    tail,
                    numbered,
                    dialect,
                )?;
            }
        }
        Some(Shape {
            text,
            ranges,
            values,
            folded,
        })
    }
}
