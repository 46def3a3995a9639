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
        assert!(!starts_with_any(
            "INSERT INTO t VALUES (1)",
            &["set", "show"]
        ));
    }
}
