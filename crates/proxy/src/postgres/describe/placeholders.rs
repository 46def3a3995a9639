//! Placeholders by number: how many a statement has, and which parameter `$n` is.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The most parameters a statement can have: Bind carries their count in 16 bits.
pub const MAX_PARAMETERS: usize = 65_535;

/// The highest `$n` in `sql` (0 when there is none).
pub fn highest_placeholder(sql: &str) -> usize {
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else {
        return 0;
    };
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Placeholder(p) => placeholder_number(p),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The zero-based index of `$n`.
pub(super) fn placeholder_index(text: &str) -> Option<usize> {
    placeholder_number(text)?.checked_sub(1)
}

/// The `n` of `$n`, saturating rather than overflowing (`$99999999999` is a number too large
/// to bind, not a word).
fn placeholder_number(text: &str) -> Option<usize> {
    let digits = text.strip_prefix('$')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(usize::MAX))
}
