//! The session's values inside a statement for the shards: the shards know nothing of the
//! keys the proxy generated, the rows its statements changed nor the client's user variables,
//! so there `LAST_INSERT_ID()` answers 0, `ROW_COUNT()` and `FOUND_ROWS()` the shard's own
//! counts for whichever client used the connection last, `@x` NULL, and
//! `INSERT INTO child (parent_id) VALUES (LAST_INSERT_ID())` would store 0. They are replaced by
//! the session's values first; a select item keeps its label (`SELECT LAST_INSERT_ID()` is
//! still labelled `LAST_INSERT_ID()`).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// What a MySQL session knows that its shards do not.
pub struct SessionValues<'a> {
    /// `LAST_INSERT_ID()`.
    pub last_insert_id: u64,
    /// `ROW_COUNT()`: the rows the previous statement changed, -1 after a result set.
    pub row_count: i64,
    /// `FOUND_ROWS()`: the rows the last SELECT returned, or would have without its LIMIT
    /// (`SQL_CALC_FOUND_ROWS`).
    pub found_rows: u64,
    /// A user variable's value as an SQL literal, by lower-cased name.
    pub variable: &'a dyn Fn(&str) -> String,
}

use crate::RouteError;
use crate::locate::{Locator, splice};

/// `sql` with every `LAST_INSERT_ID()` and `ROW_COUNT()` (no argument) replaced by the
/// session's values and every user variable `@name` by the SQL literal `values.variable` gives
/// for its lower-cased name; `None` when it has none, which a byte search decides for almost
/// every statement. An assignment (`@x := …`) inside a statement is refused: its value would
/// stay on the shard.
pub fn substitute_session_values(
    sql: &str,
    values: &SessionValues<'_>,
) -> Result<Option<String>, RouteError> {
    if !mentions_a_session_value(sql.as_bytes()) {
        return Ok(None);
    }
    let Some(significant) = crate::tokens::mysql_significant(sql) else {
        return Ok(None);
    };
    let mut locator = Locator::new(sql);
    let mut edits = Vec::new();
    let mut depth = 0i32;
    for (i, token) in significant.iter().enumerate() {
        match token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        let Token::Word(word) = &token.token else {
            if token.token == Token::Assignment {
                return Err(RouteError::Unsupported(
                    "assigning a user variable inside a statement (`@x := …`); use SET @x = …"
                        .into(),
                ));
            }
            continue;
        };
        if word.quote_style.is_some() {
            continue;
        }
        let call = |name: &str| {
            let open = significant.get(i + 1)?;
            let close = significant.get(i + 2)?;
            (word.value.eq_ignore_ascii_case(name)
                && open.token == Token::LParen
                && close.token == Token::RParen)
                .then_some(i + 2)
        };
        let (last, value) = if let Some(name) = word
            .value
            .strip_prefix('@')
            .filter(|n| !n.is_empty() && !n.starts_with('@'))
        {
            (i, (values.variable)(&name.to_lowercase()))
        } else if let Some(close) = call("last_insert_id") {
            (close, values.last_insert_id.to_string())
        } else if let Some(close) = call("row_count") {
            (close, values.row_count.to_string())
        } else if let Some(close) = call("found_rows") {
            (close, values.found_rows.to_string())
        } else {
            continue;
        };
        let start = locator.offset(token.span.start)?;
        let end = locator.offset(significant[last].span.end)?;
        let item = depth == 0
            && i.checked_sub(1)
                .is_some_and(|p| starts_an_item(&significant[p].token))
            && significant
                .get(last + 1)
                .is_none_or(|n| ends_an_item(&n.token));
        let value = match item {
            true => format!("{value} AS `{}`", sql[start..end].replace('`', "``")),
            false => value,
        };
        edits.push((start..end, value));
    }
    if edits.is_empty() {
        return Ok(None);
    }
    splice(sql, edits).map(Some)
}

/// Whether a select item may begin after `token`.
fn starts_an_item(token: &Token) -> bool {
    match token {
        Token::Comma => true,
        Token::Word(w) => matches!(
            w.keyword,
            Keyword::SELECT | Keyword::DISTINCT | Keyword::ALL
        ),
        _ => false,
    }
}

/// Whether a select item without an alias ends before `token`.
fn ends_an_item(token: &Token) -> bool {
    match token {
        Token::Comma | Token::SemiColon | Token::EOF => true,
        Token::Word(w) => matches!(
            w.keyword,
            Keyword::FROM
                | Keyword::WHERE
                | Keyword::UNION
                | Keyword::EXCEPT
                | Keyword::INTERSECT
                | Keyword::INTO
                | Keyword::ORDER
                | Keyword::GROUP
                | Keyword::HAVING
                | Keyword::LIMIT
                | Keyword::FOR
                | Keyword::LOCK
                | Keyword::WINDOW
        ),
        _ => false,
    }
}

/// Whether `sql` contains `@`, `last_insert_id`, `row_count` or `found_rows` in any case. Runs on every
/// MySQL text statement, in one pass: only the rare `@` and underscores are looked at, each
/// name around its first underscore.
fn mentions_a_session_value(sql: &[u8]) -> bool {
    const NAMES: [(&[u8], usize); 3] = [
        (b"last_insert_id", 4),
        (b"row_count", 3),
        (b"found_rows", 5),
    ];
    sql.iter().enumerate().any(|(i, b)| {
        *b == b'@'
            || *b == b'_'
                && NAMES.iter().any(|(name, underscore)| {
                    i.checked_sub(*underscore)
                        .and_then(|start| sql.get(start..start + name.len()))
                        .is_some_and(|w| w.eq_ignore_ascii_case(name))
                })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn substitute_last_insert_id(sql: &str, id: u64) -> Option<String> {
        let values = SessionValues {
            last_insert_id: id,
            row_count: -1,
            found_rows: 0,
            variable: &|name| format!("<{name}>"),
        };
        substitute_session_values(sql, &values).unwrap()
    }

    #[test]
    fn user_variables_become_their_values() {
        assert_eq!(
            substitute_last_insert_id("SELECT @x, @@version, @Y + 1, '@z' FROM t", 0).as_deref(),
            Some("SELECT <x> AS `@x`, @@version, <y> + 1, '@z' FROM t")
        );
        assert_eq!(substitute_last_insert_id("SELECT a@b", 0), None);
        let values = SessionValues {
            last_insert_id: 0,
            row_count: 0,
            found_rows: 0,
            variable: &|_| String::new(),
        };
        let assigns = substitute_session_values("SELECT @x := 1", &values);
        assert!(matches!(assigns, Err(RouteError::Unsupported(_))));
    }

    #[test]
    fn the_name_is_found_wherever_it_stands() {
        assert!(mentions_a_session_value(b"last_insert_id()"));
        assert!(mentions_a_session_value(b"SELECT x, LAST_INSERT_ID"));
        assert!(!mentions_a_session_value(b"last_insert_i"));
        assert!(!mentions_a_session_value(b"_insert_id() last_insert"));
        assert!(!mentions_a_session_value(
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
            Some("SELECT 'é', 3 AS `LAST_INSERT_ID()`")
        );
    }

    #[test]
    fn row_count_is_the_sessions_and_select_items_keep_their_labels() {
        assert_eq!(
            substitute_last_insert_id("SELECT LAST_INSERT_ID(), row_count() FROM dual; ", 8)
                .as_deref(),
            Some("SELECT 8 AS `LAST_INSERT_ID()`, -1 AS `row_count()` FROM dual; ")
        );
        for (sql, expected) in [
            ("SELECT LAST_INSERT_ID() AS id", "SELECT 8 AS id"),
            ("SELECT LAST_INSERT_ID() id", "SELECT 8 id"),
            (
                "SELECT IFNULL(@a, LAST_INSERT_ID())",
                "SELECT IFNULL(<a>, 8)",
            ),
            ("SELECT ROW_COUNT() + 1", "SELECT -1 + 1"),
            ("SELECT DISTINCT @a", "SELECT DISTINCT <a> AS `@a`"),
        ] {
            assert_eq!(substitute_last_insert_id(sql, 8).as_deref(), Some(expected));
        }
        assert!(mentions_a_session_value(b"SELECT ROW_COUNT()"));
        assert!(!mentions_a_session_value(b"SELECT row_coun"));
    }
}
