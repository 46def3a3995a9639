//! A statement cut, at prepare time, into the pieces every execution re-assembles: bytes of the
//! original text copied as they are, and the few places that change per shard or per execution.

use std::ops::Range;

use crate::RouteError;
use crate::names::push_identifier;
use keyshard_types::Dialect;
use keyshard_types::{Value, push_literal};

/// One piece of a rendered statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// These bytes of the original statement, unchanged.
    Copy(Range<usize>),
    /// Text the router adds (`, order_id`, a synthesised column list).
    Text(Box<str>),
    /// The actual table of the statement's `n`th sharded table, quoted as the logic name was
    /// (`None`: unquoted).
    Table(usize, Option<char>),
    /// A LIMIT's offset (`true`) or row count (`false`), as the shard must see it when several
    /// shards' rows are merged.
    Limit { offset: bool },
    /// A placeholder for parameter `i` (0-based) of the original statement.
    Param(usize),
    /// A placeholder for parameter `i` that holds this row's key: the generated key replaces a
    /// NULL (or, in MySQL, 0) bound there.
    KeyParam(usize),
    /// The row's generated key: a literal when the row has no parameters, else a placeholder.
    Key,
}

/// A change to the original text: `range` is replaced by `piece` (an empty range inserts).
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub(crate) range: Range<usize>,
    pub(crate) piece: Piece,
}

/// The statement as head, rows and tail; a unit renders the head, its own rows joined by
/// `row_separator`, and the tail. All pieces live in one vector (a statement of a hundred rows
/// is one allocation, not a hundred), each part a range of it.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
    head: Range<usize>,
    rows: Vec<Range<usize>>,
    tail: Range<usize>,
    pub(crate) row_separator: &'static str,
}

impl Template {
    /// Cuts `len` bytes of text at `row_ranges` (increasing, non-overlapping), applying `edits`.
    pub(crate) fn build(
        len: usize,
        row_ranges: &[Range<usize>],
        row_separator: &'static str,
        mut edits: Vec<Edit>,
    ) -> Result<Self, RouteError> {
        // Stable: insertions at one position keep the order they were added in.
        edits.sort_by_key(|e| e.range.start);
        let (Some(first), Some(last)) = (row_ranges.first(), row_ranges.last()) else {
            return Err(RouteError::Internal("a statement without rows"));
        };
        let mut cutter = Cutter {
            pieces: Vec::with_capacity(edits.len() * 2 + row_ranges.len() + 2),
            edits: edits.into_iter().peekable(),
        };
        let head = cutter.cut(0..first.start)?;
        let mut rows = Vec::with_capacity(row_ranges.len());
        let mut previous_end = first.start;
        for range in row_ranges {
            // Edits between rows (in the separators) would be lost; the router never makes any.
            if cutter
                .edits
                .peek()
                .is_some_and(|e| e.range.start < range.start)
                || range.start < previous_end
            {
                return Err(RouteError::Internal("an edit between rows"));
            }
            rows.push(cutter.cut(range.clone())?);
            previous_end = range.end;
        }
        let tail = cutter.cut(last.end..len)?;
        if cutter.edits.next().is_some() {
            return Err(RouteError::Internal("an edit outside the statement"));
        }
        Ok(Self {
            pieces: cutter.pieces,
            head,
            rows,
            tail,
            row_separator,
        })
    }

    /// A statement without rows: every piece is in the head.
    pub(crate) fn whole(len: usize, mut edits: Vec<Edit>) -> Result<Self, RouteError> {
        edits.sort_by_key(|e| e.range.start);
        let mut cutter = Cutter {
            pieces: Vec::with_capacity(edits.len() * 2 + 1),
            edits: edits.into_iter().peekable(),
        };
        let head = cutter.cut(0..len)?;
        if cutter.edits.next().is_some() {
            return Err(RouteError::Internal("an edit outside the statement"));
        }
        let end = cutter.pieces.len();
        Ok(Self {
            pieces: cutter.pieces,
            head,
            rows: Vec::new(),
            tail: end..end,
            row_separator: "",
        })
    }

    /// The pieces before the rows.
    pub(crate) fn head(&self) -> &[Piece] {
        self.part(&self.head)
    }

    /// Row `i`'s pieces.
    pub(crate) fn row(&self, i: usize) -> &[Piece] {
        self.rows.get(i).map_or(&[], |r| self.part(r))
    }

    /// The pieces after the rows.
    pub(crate) fn tail(&self) -> &[Piece] {
        self.part(&self.tail)
    }

    fn part(&self, range: &Range<usize>) -> &[Piece] {
        self.pieces.get(range.clone()).unwrap_or_default()
    }
}

/// Turns byte ranges of the statement into pieces, consuming the edits inside them.
struct Cutter {
    pieces: Vec<Piece>,
    edits: std::iter::Peekable<std::vec::IntoIter<Edit>>,
}

impl Cutter {
    /// Appends the pieces of `range` and returns where they are.
    fn cut(&mut self, range: Range<usize>) -> Result<Range<usize>, RouteError> {
        let first = self.pieces.len();
        let mut at = range.start;
        while let Some(edit) = self
            .edits
            .next_if(|e| e.range.start < range.end || e.range == (range.end..range.end))
        {
            if edit.range.start < at || edit.range.end > range.end {
                return Err(RouteError::Internal("overlapping edits"));
            }
            if edit.range.start > at {
                self.pieces.push(Piece::Copy(at..edit.range.start));
            }
            self.pieces.push(edit.piece);
            at = edit.range.end;
        }
        if at < range.end {
            self.pieces.push(Piece::Copy(at..range.end));
        }
        Ok(first..self.pieces.len())
    }
}

/// Renders pieces into one unit's SQL and parameters.
pub(crate) struct Renderer<'a> {
    pub(crate) sql: &'a str,
    pub(crate) dialect: Dialect,
    /// The actual tables, by the statement's sharded-table number.
    pub(crate) tables: &'a [&'a str],
    pub(crate) params: &'a [Value],
    /// For a statement prepared from a shape: the literals its parameters stand for, written
    /// back as the client's text instead of placeholders.
    pub(crate) literals: Option<Literals<'a>>,
    /// The offset and row count a LIMIT is rendered with.
    pub(crate) limit: (u64, u64),
    pub(crate) out: String,
    pub(crate) out_params: Vec<Value>,
    /// Where each placeholder written starts in `out`, when asked for (`Some`).
    pub(crate) placeholders: Option<Vec<usize>>,
}

/// The literals of the statement a shape was cut from.
#[derive(Clone, Copy)]
pub(crate) struct Literals<'a> {
    pub(crate) sql: &'a str,
    pub(crate) ranges: &'a [Range<usize>],
}

impl<'a> Literals<'a> {
    /// These literals from the `offset`th on.
    pub(crate) fn from(self, offset: usize) -> Literals<'a> {
        Literals {
            sql: self.sql,
            ranges: self.ranges.get(offset..).unwrap_or_default(),
        }
    }

    fn text(&self, index: usize) -> Result<&str, RouteError> {
        self.ranges
            .get(index)
            .and_then(|r| self.sql.get(r.clone()))
            .ok_or_else(RouteError::internal("a literal outside the statement"))
    }
}

/// What a row contributes to its pieces: its key, and whether it is written as a placeholder.
#[derive(Clone, Copy)]
pub(crate) struct RowKey<'k> {
    pub(crate) key: Option<&'k Value>,
    pub(crate) as_placeholder: bool,
}

impl RowKey<'_> {
    /// Outside the rows: no key.
    pub(crate) const NONE: RowKey<'static> = RowKey {
        key: None,
        as_placeholder: false,
    };
}

impl<'a> Renderer<'a> {
    /// A renderer of `sql`'s pieces with its parameters as placeholders and no LIMIT to set.
    pub(crate) fn new(
        sql: &'a str,
        dialect: Dialect,
        tables: &'a [&'a str],
        params: &'a [Value],
    ) -> Self {
        Renderer {
            sql,
            dialect,
            tables,
            params,
            literals: None,
            limit: (0, 0),
            out: String::with_capacity(sql.len() + 32),
            out_params: Vec::new(),
            placeholders: None,
        }
    }
}

impl Renderer<'_> {
    pub(crate) fn render(&mut self, pieces: &[Piece], row: RowKey<'_>) -> Result<(), RouteError> {
        for piece in pieces {
            match piece {
                Piece::Copy(range) => self.out.push_str(
                    self.sql
                        .get(range.clone())
                        .ok_or_else(RouteError::internal("a piece outside the statement"))?,
                ),
                Piece::Text(text) => self.out.push_str(text),
                Piece::Table(n, quote) => {
                    let table = self
                        .tables
                        .get(*n)
                        .ok_or_else(RouteError::internal("a table without its data node"))?;
                    push_identifier(&mut self.out, table, *quote);
                }
                Piece::Limit { offset } => {
                    let value = if *offset { self.limit.0 } else { self.limit.1 };
                    self.out.push_str(itoa::Buffer::new().format(value));
                }
                Piece::Param(i) => self.param(*i)?,
                Piece::KeyParam(i) => match (row.key, self.literals) {
                    (Some(key), Some(_)) => push_literal(&mut self.out, key, self.dialect),
                    (Some(key), None) => self.placeholder(key.clone()),
                    (None, _) => self.param(*i)?,
                },
                Piece::Key => {
                    let key = row
                        .key
                        .ok_or_else(RouteError::internal("a row without its key"))?;
                    if row.as_placeholder {
                        self.placeholder(key.clone());
                    } else {
                        push_literal(&mut self.out, key, self.dialect);
                    }
                }
            }
        }
        Ok(())
    }

    /// Parameter `index`: its placeholder, or the literal it stands for.
    fn param(&mut self, index: usize) -> Result<(), RouteError> {
        if let Some(literals) = self.literals {
            self.out.push_str(literals.text(index)?);
            return Ok(());
        }
        let value = self
            .params
            .get(index)
            .ok_or_else(|| RouteError::MissingParameter {
                needed: index + 1,
                given: self.params.len(),
            })?
            .clone();
        self.placeholder(value);
        Ok(())
    }

    fn placeholder(&mut self, value: Value) {
        self.out_params.push(value);
        if let Some(placeholders) = &mut self.placeholders {
            placeholders.push(self.out.len());
        }
        match self.dialect {
            Dialect::MySql => self.out.push('?'),
            // PostgreSQL parameters are numbered; each unit numbers its own from $1.
            Dialect::Postgres => {
                self.out.push('$');
                self.out
                    .push_str(itoa::Buffer::new().format(self.out_params.len()));
            }
        }
    }
}

/// Writes `rows` as the rows of a VALUES list, `(a, b), (c, d)`, in literals of `dialect`:
/// how rows computed by the proxy (a SELECT's result, a bulk load) become an INSERT.
pub fn push_rows(out: &mut String, rows: &[Vec<Value>], dialect: Dialect) {
    for (i, row) in rows.iter().enumerate() {
        out.push_str(if i == 0 { "(" } else { ", (" });
        for (j, value) in row.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            push_literal(out, value, dialect);
        }
        out.push(')');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &Template, sql: &str, rows: &[usize]) -> String {
        let mut r = Renderer::new(sql, Dialect::MySql, &["t_1"], &[]);
        let key = Value::Int(7);
        let row = RowKey {
            key: Some(&key),
            as_placeholder: false,
        };
        r.render(template.head(), row).unwrap();
        for (n, i) in rows.iter().enumerate() {
            if n > 0 {
                r.out.push_str(template.row_separator);
            }
            r.render(template.row(*i), row).unwrap();
        }
        r.render(template.tail(), row).unwrap();
        r.out
    }

    #[test]
    fn cuts_head_rows_and_tail() {
        let sql = "INSERT INTO t (a) VALUES (1),(2) -- end";
        let edits = vec![
            Edit {
                range: 12..13,
                piece: Piece::Table(0, None),
            },
            Edit {
                range: 16..16,
                piece: Piece::Text(", id".into()),
            },
            Edit {
                range: 27..27,
                piece: Piece::Text(", ".into()),
            },
            Edit {
                range: 27..27,
                piece: Piece::Key,
            },
            Edit {
                range: 31..31,
                piece: Piece::Text(", ".into()),
            },
            Edit {
                range: 31..31,
                piece: Piece::Key,
            },
        ];
        let template = Template::build(sql.len(), &[25..28, 29..32], ", ", edits).unwrap();
        assert_eq!(
            render(&template, sql, &[0, 1]),
            "INSERT INTO t_1 (a, id) VALUES (1, 7), (2, 7) -- end"
        );
        assert_eq!(
            render(&template, sql, &[1]),
            "INSERT INTO t_1 (a, id) VALUES (2, 7) -- end"
        );
    }

    #[test]
    fn overlapping_edits_are_an_error_not_a_panic() {
        let edits = vec![
            Edit {
                range: 0..5,
                piece: Piece::Key,
            },
            Edit {
                range: 3..6,
                piece: Piece::Key,
            },
        ];
        assert!(Template::build(10, std::slice::from_ref(&(8..9)), ", ", edits).is_err());
    }

    #[test]
    fn quotes_identifiers_and_literals() {
        let mut out = String::new();
        push_identifier(&mut out, "a`b", Some('`'));
        push_literal(&mut out, &Value::Text("x'\\".into()), Dialect::MySql);
        push_literal(&mut out, &Value::Text("x'\\".into()), Dialect::Postgres);
        assert_eq!(out, "`a``b`'x''\\\\''x''\\'");
    }
}
