//! An INSERT's VALUES rows, found at the top level of the shape scan, and whether they fold
//! into the first: every row the first's text but for its literals (see [`super::Shape`]).

use std::ops::Range;

/// An INSERT's VALUES rows alike but for their literals, folded into the first: the shape's
/// literals are those before the rows, the first row's, then those after the rows, while the
/// statement's are those before, every row's in turn, then those after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Folded {
    /// Literals before the rows.
    pub(super) head: usize,
    pub(crate) rows: usize,
    /// Literals in each row.
    pub(crate) per_row: usize,
    /// Where the first row and the last row end in the statement.
    pub(super) first_end: usize,
    pub(super) last_end: usize,
}

/// Finds an INSERT's VALUES rows at the top level of its scan, and whether they fold.
#[derive(Default)]
pub(super) struct RowScan {
    state: RowState,
    /// The first row's text and the indices of its literals.
    first: Option<(Range<usize>, Range<usize>)>,
    rows: usize,
    last_end: usize,
    /// A row after the first differs from it in more than its literals.
    unlike: bool,
}

#[derive(Default, Clone, Copy, PartialEq)]
enum RowState {
    /// Before the VALUES keyword.
    #[default]
    Before,
    /// After VALUES, or a comma after a row: a row opens next.
    Expect,
    /// In a row opened at this byte, whose first literal has this index.
    Open(usize, usize),
    /// After a row: a comma or the end of the rows follows.
    Closed,
    /// After the rows.
    After,
    /// Rows the scan does not fold (`VALUES ROW(…)`, or not rows at all).
    Unfoldable,
}

impl RowScan {
    pub(super) fn word(&mut self, word: &[u8]) {
        // Only `VALUES` (or MySQL's `VALUE`) matters, and only before the rows.
        let is_values =
            |w: &[u8]| w.eq_ignore_ascii_case(b"values") || w.eq_ignore_ascii_case(b"value");
        self.state = match self.state {
            RowState::Before if is_values(word) => RowState::Expect,
            RowState::Expect => RowState::Unfoldable,
            RowState::Closed => RowState::After,
            state => state,
        };
    }

    /// A parenthesis opened at the top level, at `at`; whether it opens a row after the first.
    pub(super) fn open(&mut self, at: usize, literal: usize) -> bool {
        self.state = match self.state {
            RowState::Expect => RowState::Open(at, literal),
            RowState::Closed => RowState::Unfoldable,
            state => state,
        };
        matches!(self.state, RowState::Open(..)) && self.rows > 0
    }

    /// A parenthesis closed at the top level, before `end`; `literals` are those so far.
    pub(super) fn close(&mut self, end: usize, sql: &str, literals: &[Range<usize>]) {
        let RowState::Open(start, first_literal) = self.state else {
            return;
        };
        let row = start..end;
        let mine = first_literal..literals.len();
        match &self.first {
            None => self.first = Some((row, mine)),
            Some((first, theirs)) => {
                let alike = match (literals.get(mine), literals.get(theirs.clone())) {
                    (Some(mine), Some(theirs)) => {
                        alike(sql.as_bytes(), (&row, mine), (first, theirs))
                    }
                    _ => false,
                };
                self.unlike |= !alike;
            }
        }
        self.rows += 1;
        self.last_end = end;
        self.state = RowState::Closed;
    }

    pub(super) fn comma(&mut self) {
        self.state = match self.state {
            RowState::Closed => RowState::Expect,
            RowState::Expect => RowState::Unfoldable,
            state => state,
        };
    }

    /// Any other token at the top level.
    pub(super) fn other(&mut self) {
        self.state = match self.state {
            RowState::Closed => RowState::After,
            RowState::Expect => RowState::Unfoldable,
            state => state,
        };
    }

    /// The rows folded into the first, when there are several and each is the first's text
    /// but for its literals.
    pub(super) fn fold(&self) -> Option<Folded> {
        let (first, literals) = self.first.as_ref()?;
        let folds = self.rows > 1
            && !self.unlike
            && matches!(self.state, RowState::Closed | RowState::After);
        folds.then_some(Folded {
            head: literals.start,
            rows: self.rows,
            per_row: literals.len(),
            first_end: first.end,
            last_end: self.last_end,
        })
    }
}

/// Whether two rows, each with its literals, have the same text between their literals. The
/// scan asks it of every row of a bulk load: plain byte comparisons, no iterator chains.
fn alike(
    bytes: &[u8],
    (row, literals): (&Range<usize>, &[Range<usize>]),
    (first, first_literals): (&Range<usize>, &[Range<usize>]),
) -> bool {
    if literals.len() != first_literals.len() {
        return false;
    }
    let gap = |row: &Range<usize>, literals: &[Range<usize>], i: usize| {
        let start = match i.checked_sub(1) {
            None => row.start,
            Some(before) => literals.get(before)?.end,
        };
        let end = literals.get(i).map_or(row.end, |l| l.start);
        bytes.get(start..end)
    };
    (0..=literals.len()).all(
        |i| match (gap(row, literals, i), gap(first, first_literals, i)) {
            (Some(mine), Some(theirs)) => {
                mine.len() == theirs.len() && mine.iter().zip(theirs).all(|(a, b)| a == b)
            }
            _ => false,
        },
    )
}
