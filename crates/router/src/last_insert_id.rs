//! `LAST_INSERT_ID()` inside a statement for the shards: the shards know nothing of the keys
//! the proxy generated, so there the call answers 0 and `INSERT INTO child (parent_id) VALUES
//! (LAST_INSERT_ID())` would store 0. The call is replaced by the session's value first.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::locate::Locator;

/// `sql` with every `LAST_INSERT_ID()` (no argument) replaced by `value`; `None` when it has
/// none, which a plain byte search decides for almost every statement.
pub fn substitute_last_insert_id(sql: &str, value: u64) -> Option<String> {
    if !mentions_the_function(sql.as_bytes()) {
        return None;
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize_with_location()
        .ok()?;
    let significant: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut locator = Locator::new(sql);
    let mut calls = Vec::new();
    for window in significant.windows(3) {
        let [name, open, close] = window else {
            continue;
        };
        if let Token::Word(word) = &name.token
            && word.quote_style.is_none()
            && word.value.eq_ignore_ascii_case("last_insert_id")
            && open.token == Token::LParen
            && close.token == Token::RParen
        {
            let start = locator.offset(name.span.start).ok()?;
            let end = locator.offset(close.span.end).ok()?;
            calls.push(start..end);
        }
    }
    if calls.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    for call in calls {
        out.push_str(&sql[copied..call.start]);
        out.push_str(&value.to_string());
        copied = call.end;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

/// Whether `sql` contains `last_insert_id` in any case. Runs on every MySQL text statement, so
/// only the rare underscores are looked at: the name is checked around its first one.
fn mentions_the_function(sql: &[u8]) -> bool {
    const NAME: &[u8] = b"last_insert_id";
    const FIRST_UNDERSCORE: usize = 4;
    sql.iter().enumerate().any(|(i, b)| {
        *b == b'_'
            && i >= FIRST_UNDERSCORE
            && sql
                .get(i - FIRST_UNDERSCORE..i - FIRST_UNDERSCORE + NAME.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(NAME))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_found_wherever_it_stands() {
        assert!(mentions_the_function(b"last_insert_id()"));
        assert!(mentions_the_function(b"SELECT x, LAST_INSERT_ID"));
        assert!(!mentions_the_function(b"last_insert_i"));
        assert!(!mentions_the_function(b"_insert_id() last_insert"));
        assert!(!mentions_the_function(
            b"INSERT INTO t_order (user_id) VALUES (1)"
        ));
    }

    #[test]
    fn calls_become_the_value_and_nothing_else_changes() {
        assert_eq!(
            substitute_last_insert_id("INSERT INTO c (p) VALUES (LAST_INSERT_ID())", 42).as_deref(),
            Some("INSERT INTO c (p) VALUES (42)")
        );
        assert_eq!(
            substitute_last_insert_id(
                "SELECT * FROM t WHERE id = last_insert_id ( ) OR id = Last_Insert_Id()",
                7
            )
            .as_deref(),
            Some("SELECT * FROM t WHERE id = 7 OR id = 7")
        );
        // In strings, comments, quoted identifiers, with an argument: left alone.
        for sql in [
            "SELECT 'LAST_INSERT_ID()'",
            "SELECT 1 -- LAST_INSERT_ID()",
            "SELECT `last_insert_id`() FROM t",
            "SELECT LAST_INSERT_ID(5)",
            "SELECT 1",
        ] {
            assert_eq!(substitute_last_insert_id(sql, 9), None, "{sql}");
        }
        assert_eq!(
            substitute_last_insert_id("SELECT 'é', LAST_INSERT_ID()", 3).as_deref(),
            Some("SELECT 'é', 3")
        );
    }
}
