//! The first word of a statement: what decides, before anything is parsed or allocated,
//! whether one of the proxy's own handlers (session, transaction, catalog statements) might
//! answer it — most statements are INSERTs, which none of them answer.

/// The leading run of ASCII letters after white space (`""` when there is none).
pub(crate) fn first_word(sql: &str) -> &str {
    let sql = sql.trim_start();
    let end = sql
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(sql.len());
    &sql[..end]
}

/// Whether `sql` starts with one of `words`, case-insensitively.
pub(crate) fn starts_with_any(sql: &str, words: &[&str]) -> bool {
    let first = first_word(sql);
    words.iter().any(|w| w.eq_ignore_ascii_case(first))
}

/// Splits a list (a projection, `SET` assignments, arguments) at the commas outside
/// parentheses and quotes.
pub(crate) fn split_top_level(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"' | '`', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('(', None) => depth += 1,
            (')', None) => depth -= 1,
            (',', None) if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words() {
        assert_eq!(first_word("  SELECT 1"), "SELECT");
        assert_eq!(first_word("begin;"), "begin");
        assert_eq!(first_word("(SELECT 1)"), "");
        assert_eq!(first_word(""), "");
        assert!(starts_with_any("show tables", &["set", "SHOW"]));
        assert_eq!(
            split_top_level("a, f(b, c), 'd,e'"),
            ["a", " f(b, c)", " 'd,e'"]
        );
        assert!(!starts_with_any(
            "INSERT INTO t VALUES (1)",
            &["set", "show"]
        ));
    }
}
