//! sqlparser reports positions as line and column (in characters); splicing needs byte
//! offsets into the original text.

use std::ops::Range;

use sqlparser::tokenizer::Location;

use crate::RouteError;

/// Converts locations to byte offsets. Lookups in increasing order cost O(1) each on ASCII
/// text and amortised O(1) otherwise, which is how a statement's tokens are visited.
pub(crate) struct Locator<'a> {
    sql: &'a str,
    /// Where lines 2, 3, … start.
    line_starts: Vec<usize>,
    ascii: bool,
    /// The last location found (line, column, byte), where a forward search resumes.
    cursor: (u64, u64, usize),
}

impl<'a> Locator<'a> {
    pub(crate) fn new(sql: &'a str) -> Self {
        // The tokenizer starts a new line at '\n' only. Line 1 starts at 0 and is not stored,
        // so the usual one-line statement allocates nothing here.
        let line_starts = sql
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        Self {
            sql,
            line_starts,
            ascii: sql.is_ascii(),
            cursor: (1, 1, 0),
        }
    }

    /// The byte offset of `location` (an exclusive span end is a valid location too).
    pub(crate) fn offset(&mut self, location: Location) -> Result<usize, RouteError> {
        let line_start = usize::try_from(location.line)
            .ok()
            .and_then(|line| line.checked_sub(1))
            .and_then(|index| match index {
                0 => Some(0),
                n => self.line_starts.get(n - 1).copied(),
            })
            .ok_or_else(RouteError::internal("a position outside the statement"))?;
        let column = usize::try_from(location.column)
            .ok()
            .and_then(|c| c.checked_sub(1))
            .ok_or_else(RouteError::internal("a position outside the statement"))?;
        if self.ascii {
            let offset = line_start + column;
            return (offset <= self.sql.len())
                .then_some(offset)
                .ok_or_else(RouteError::internal("a position outside the statement"));
        }
        let (line, col, byte) = self.cursor;
        let (mut col, mut byte) = if line == location.line && col <= location.column {
            (col, byte)
        } else {
            (1, line_start)
        };
        let mut chars = self.sql[byte..].chars();
        while col < location.column {
            let c = chars
                .next()
                .ok_or_else(RouteError::internal("a position outside the statement"))?;
            byte += c.len_utf8();
            col += 1;
        }
        self.cursor = (location.line, col, byte);
        Ok(byte)
    }
}

/// `sql` with each range of `edits` replaced by its text; every other byte copied unchanged.
/// Edits may come in any order but must not overlap.
pub(crate) fn splice(
    sql: &str,
    mut edits: Vec<(Range<usize>, String)>,
) -> Result<String, RouteError> {
    edits.sort_by_key(|(range, _)| range.start);
    let added: usize = edits.iter().map(|(_, text)| text.len()).sum();
    let mut out = String::with_capacity(sql.len() + added);
    let mut copied = 0;
    for (range, text) in edits {
        let kept = sql
            .get(copied..range.start)
            .filter(|_| range.end <= sql.len())
            .ok_or_else(RouteError::internal("overlapping edits"))?;
        out.push_str(kept);
        out.push_str(&text);
        copied = range.end;
    }
    out.push_str(sql.get(copied..).unwrap_or_default());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(line: u64, column: u64) -> Location {
        Location { line, column }
    }

    #[test]
    fn ascii_and_unicode_lines() {
        let sql = "ab\nc\u{e9}d\nxyz";
        let mut locator = Locator::new(sql);
        assert_eq!(locator.offset(loc(1, 1)).unwrap(), 0);
        assert_eq!(locator.offset(loc(2, 2)).unwrap(), 4);
        assert_eq!(locator.offset(loc(2, 3)).unwrap(), 6);
        assert_eq!(locator.offset(loc(3, 4)).unwrap(), sql.len());
        // Backwards works too.
        assert_eq!(locator.offset(loc(2, 1)).unwrap(), 3);
        assert!(locator.offset(loc(4, 1)).is_err());
        assert!(locator.offset(loc(0, 0)).is_err());
        let mut ascii = Locator::new("ab\ncd");
        assert_eq!(ascii.offset(loc(2, 2)).unwrap(), 4);
        assert!(ascii.offset(loc(2, 9)).is_err());
    }
}

/// The most of a statement a syntax error quotes, as MariaDB's "near '…'" does.
const NEAR: usize = 80;

/// A parser's or tokenizer's error about `sql` (its text ends `at Line: L, Column: C`) with the
/// statement's own text from that position quoted, as MariaDB quotes it: `… near 'AND 1' at
/// line 1`. Unchanged when it names no position inside the statement.
pub(crate) fn syntax_error(sql: &str, error: &str) -> String {
    let Some((detail, position)) = error.rsplit_once(" at Line: ") else {
        return error.to_owned();
    };
    let Some((line, column)) = position.split_once(", Column: ") else {
        return error.to_owned();
    };
    let (Ok(line), Ok(column)) = (line.trim().parse::<u64>(), column.trim().parse::<u64>()) else {
        return error.to_owned();
    };
    let Ok(at) = Locator::new(sql).offset(Location::new(line, column)) else {
        return error.to_owned();
    };
    let rest = sql.get(at..).unwrap_or_default();
    let mut end = rest.len().min(NEAR);
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    let detail = detail.strip_prefix("sql parser error: ").unwrap_or(detail);
    format!("{detail} near '{}' at line {line}", &rest[..end])
}

#[cfg(test)]
mod syntax_tests {
    use super::syntax_error;

    #[test]
    fn a_syntax_error_quotes_the_statement_from_its_position() {
        let sql = "SELECT *\nFROM t WHERE a = 'é' AND AND 1";
        assert_eq!(
            syntax_error(
                sql,
                "sql parser error: Expected: an expression, found: AND at Line: 2, Column: 26"
            ),
            "Expected: an expression, found: AND near 'AND 1' at line 2"
        );
        let long = format!("SELECT {}", "x".repeat(200));
        let quoted = syntax_error(&long, "oops at Line: 1, Column: 8");
        assert_eq!(quoted, format!("oops near '{}' at line 1", "x".repeat(80)));
        assert_eq!(syntax_error("SELECT", "no position"), "no position");
        assert_eq!(
            syntax_error("SELECT", "beyond at Line: 9, Column: 1"),
            "beyond at Line: 9, Column: 1"
        );
    }
}
