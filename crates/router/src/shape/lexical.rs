//! What the scan reads in the bytes: which keyword a word is, where a quoted run or a run of
//! digits ends, and which bytes make up words.

/// The words a `Scope::Where` scan acts on.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Word {
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
    pub(super) fn of(word: &[u8]) -> Word {
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

/// The end (exclusive) of the quoted run opening at `open`; `None` when it does not close or
/// the quote is doubled inside it (an escape the scan leaves to the parser).
pub(super) fn closing(bytes: &[u8], open: usize, quote: u8) -> Option<usize> {
    let close = open + 1 + bytes.get(open + 1..)?.iter().position(|&c| c == quote)?;
    match bytes.get(close + 1) {
        Some(&c) if c == quote => None,
        _ => Some(close + 1),
    }
}

pub(super) fn digits(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count()
}

/// The end (exclusive) of the word starting at `from`: the scan's commonest run, as a plain
/// loop (`take_while(…).count()` spent twice the instructions a byte).
pub(super) fn word_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while let Some(&c) = bytes.get(end)
        && is_word(c)
    {
        end += 1;
    }
    end
}

/// A byte of an unquoted identifier or keyword (any non-ASCII byte belongs to one).
pub(super) fn is_word(c: u8) -> bool {
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
