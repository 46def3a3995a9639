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

use std::ops::Range;

use crate::literal::number_value;
use crate::template::Literals;
use keyshard_types::Dialect;
use keyshard_types::Value;

mod rows;

use rows::{Folded, RowScan};

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

/// The words a [`Scope::Where`] scan acts on.
#[derive(Clone, Copy, PartialEq)]
enum Word {
    Select,
    SetOperation,
    Where,
    /// A top-level word that ends a WHERE clause.
    EndsWhere,
    Other,
}

impl Word {
    /// The scan asks it of every word of a read: its length and first letter name the one
    /// word it can be, if any, before any other byte is looked at.
    fn of(word: &[u8]) -> Word {
        let Some(first) = word.first() else {
            return Word::Other;
        };
        let (candidate, kind): (&[u8], Word) = match (word.len(), first.to_ascii_lowercase()) {
            (6, b's') => (b"select", Word::Select),
            (5, b'u') => (b"union", Word::SetOperation),
            (9, b'i') => (b"intersect", Word::SetOperation),
            (6, b'e') => (b"except", Word::SetOperation),
            (5, b'w') => (b"where", Word::Where),
            (5, b'g') => (b"group", Word::EndsWhere),
            (5, b'o') => (b"order", Word::EndsWhere),
            (6, b'h') => (b"having", Word::EndsWhere),
            (5, b'l') => (b"limit", Word::EndsWhere),
            (6, b'o') => (b"offset", Word::EndsWhere),
            (5, b'f') => (b"fetch", Word::EndsWhere),
            (3, b'f') => (b"for", Word::EndsWhere),
            (4, b'l') => (b"lock", Word::EndsWhere),
            (6, b'w') => (b"window", Word::EndsWhere),
            (9, b'r') => (b"returning", Word::EndsWhere),
            (4, b'i') => (b"into", Word::EndsWhere),
            _ => return Word::Other,
        };
        if word.eq_ignore_ascii_case(candidate) {
            kind
        } else {
            Word::Other
        }
    }
}

impl Shape {
    /// The shape of `sql` when it is an INSERT, REPLACE, SELECT, UPDATE or DELETE the scan can
    /// cut with certainty.
    pub fn of(sql: &str, dialect: Dialect) -> Option<Shape> {
        let first_word = sql
            .trim_start()
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()?;
        let is = |word: &str| first_word.eq_ignore_ascii_case(word);
        let scope = if is("insert") || is("replace") {
            Scope::Values
        } else if is("select") {
            Scope::Where { selects: 1 }
        } else if is("update") || is("delete") {
            Scope::Where { selects: 0 }
        } else {
            return None;
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
                    let end = i + bytes[i..].iter().take_while(|&&c| is_word(c)).count();
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

/// Appends `sql[span]` with `literals` (inside it, in order) as placeholders numbered on
/// after `numbered`.
fn push_shape(
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
fn push_placeholder(text: &mut String, n: usize, dialect: Dialect) {
    match dialect {
        Dialect::MySql => text.push('?'),
        Dialect::Postgres => {
            text.push('$');
            text.push_str(itoa::Buffer::new().format(n));
        }
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
    WORD_BYTES[usize::from(c)]
}

/// [`is_word`] as a table: the scan asks it of nearly every byte.
static WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
        c += 1;
    }
    table
};

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
            "SHOW TABLES",
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

    #[test]
    fn reads_and_writes_cut_their_where_clause_only() {
        let (text, values) = shape(
            "SELECT a, COALESCE(b, 'x'), 3 FROM t WHERE user_id = 7 AND (s IN ('a', -2) OR c >= 1.5) \
             ORDER BY 1, 2 LIMIT 5, 10",
            Dialect::MySql,
        )
        .unwrap();
        assert_eq!(
            text,
            "SELECT a, COALESCE(b, 'x'), 3 FROM t WHERE user_id = ? AND (s IN (?, ?) OR c >= ?) \
             ORDER BY 1, 2 LIMIT 5, 10"
        );
        assert_eq!(
            values,
            [
                Value::Int(7),
                Value::Text("a".into()),
                Value::Int(-2),
                Value::Double(1.5)
            ]
        );
        let (text, values) = shape(
            "update t set status = 'x', n = 2 where id = 5 and d > DATE '2020-01-01' returning 1",
            Dialect::Postgres,
        )
        .unwrap();
        assert_eq!(
            text,
            "update t set status = 'x', n = 2 where id = $1 and d > DATE '2020-01-01' returning 1"
        );
        assert_eq!(values, [Value::Int(5)]);
        let (text, values) = shape("DELETE FROM t WHERE a - 5 = b", Dialect::MySql).unwrap();
        assert_eq!(text, "DELETE FROM t WHERE a - 5 = b");
        assert!(values.is_empty());
    }

    #[test]
    fn rows_alike_fold_into_the_first() {
        let sql = "INSERT INTO t (a, b) VALUES (1, 'x'), (-2, 'y'),(3, 'z') \
                   ON DUPLICATE KEY UPDATE b = 'w'";
        let folded = Shape::of(sql, Dialect::MySql).unwrap();
        assert_eq!(
            folded.text(),
            "INSERT INTO t (a, b) VALUES (?, ?) ON DUPLICATE KEY UPDATE b = ?"
        );
        assert_eq!(folded.values().len(), 7);
        assert_eq!(folded.folded_rows(), Some(3));
        let first = folded.first_row_only(sql).unwrap();
        assert_eq!(
            first,
            "INSERT INTO t (a, b) VALUES (1, 'x') ON DUPLICATE KEY UPDATE b = 'w'"
        );
        let one = Shape::of(&first, Dialect::MySql).unwrap();
        assert_eq!((one.text(), one.folded_rows()), (folded.text(), None));

        for (sql, text, rows) in [
            (
                "insert into t (a, b) values (1, 'x'), (2, 'y') on conflict (a) do update set b = 'z'",
                "insert into t (a, b) values ($1, $2) on conflict (a) do update set b = $3",
                2,
            ),
            (
                "INSERT INTO t (a) VALUES (DEFAULT), (DEFAULT) RETURNING a",
                "INSERT INTO t (a) VALUES (DEFAULT) RETURNING a",
                2,
            ),
            (
                "INSERT INTO t (a, b) VALUES (upper('a'), 1), (upper('b'), 2)",
                "INSERT INTO t (a, b) VALUES (upper($1), $2)",
                2,
            ),
        ] {
            let shape = Shape::of(sql, Dialect::Postgres).unwrap();
            assert_eq!((shape.text(), shape.folded_rows()), (text, Some(rows)));
        }
    }

    #[test]
    fn rows_that_differ_beyond_their_literals_stay_apart() {
        for sql in [
            "INSERT INTO t (a, b) VALUES (1, 'x')",
            "INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL)",
            "INSERT INTO t (a, b) VALUES (1, 'x'), (2,'y')",
            "INSERT INTO t (a) VALUES (1), (2, 3)",
            "INSERT INTO t (a) VALUES ROW(1), ROW(2)",
            "INSERT INTO t (a) VALUES (1) (2)",
            "INSERT INTO t (a) VALUES (1), 2",
            "INSERT INTO t (a) SELECT a FROM u WHERE b = 1",
        ] {
            let shape = Shape::of(sql, Dialect::MySql);
            assert_eq!(shape.and_then(|s| s.folded_rows()), None, "{sql}");
        }
    }

    #[test]
    fn words_are_told_apart_by_length_first_letter_and_spelling() {
        for (word, kind) in [
            ("SELECT", Word::Select),
            ("Union", Word::SetOperation),
            ("intersect", Word::SetOperation),
            ("EXCEPT", Word::SetOperation),
            ("where", Word::Where),
            ("GROUP", Word::EndsWhere),
            ("order", Word::EndsWhere),
            ("having", Word::EndsWhere),
            ("LIMIT", Word::EndsWhere),
            ("offset", Word::EndsWhere),
            ("fetch", Word::EndsWhere),
            ("FOR", Word::EndsWhere),
            ("lock", Word::EndsWhere),
            ("window", Word::EndsWhere),
            ("RETURNING", Word::EndsWhere),
            ("into", Word::EndsWhere),
            ("selects", Word::Other),
            ("orders", Word::Other),
            ("ordex", Word::Other),
            ("user_id", Word::Other),
            ("", Word::Other),
        ] {
            assert!(Word::of(word.as_bytes()) == kind, "{word}");
        }
    }

    #[test]
    fn subqueries_set_operations_and_runs_of_literals_are_shapeless() {
        for sql in [
            "SELECT a FROM t WHERE id IN (SELECT id FROM u)",
            "SELECT a FROM (SELECT a FROM t) x WHERE a = 1",
            "SELECT a FROM t WHERE a = 1 UNION SELECT a FROM u",
            "SELECT a FROM t WHERE a = 1 EXCEPT TABLE u",
            "UPDATE t SET a = (SELECT 1) WHERE id = 1",
            "SELECT a FROM t WHERE a = 'x' 'y'",
            "SELECT a FROM t WHERE a = 1 WHERE b = 2",
            "SELECT a FROM t WHERE a = -'1'",
            "SELECT a FROM t WHERE a = ?",
            "SELECT a FROM t WHERE a = 1)",
            "SELECT a FROM t WHERE a = 'x' -- c",
        ] {
            assert_eq!(shape(sql, Dialect::MySql), None, "{sql}");
        }
    }
}
