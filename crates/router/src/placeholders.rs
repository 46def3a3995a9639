//! Placeholders rewritten in statement text: bound to SQL values (SQL-level `EXECUTE`), or
//! given the type their client declared (PostgreSQL parameters sent as text).

use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::locate::Locator;
use keyshard_types::Dialect;

/// `sql` with each placeholder replaced by what `replace` writes for it, given its index
/// (MySQL's `?` in order, PostgreSQL's `$n` by number) and its text; `None` when `sql` does
/// not tokenize or `replace` refuses one.
fn rewrite(
    sql: &str,
    dialect: Dialect,
    mut replace: impl FnMut(usize, &str, &mut String) -> Option<()>,
) -> Option<String> {
    let tokens = match dialect {
        Dialect::MySql => Tokenizer::new(&MySqlDialect {}, sql).tokenize_with_location(),
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location(),
    }
    .ok()?;
    let mut locator = Locator::new(sql);
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut copied, mut next) = (0, 0);
    for token in &tokens {
        let Token::Placeholder(text) = &token.token else {
            continue;
        };
        let index = match text.strip_prefix('$') {
            Some(number) => number.parse::<usize>().ok()?.checked_sub(1)?,
            None => {
                next += 1;
                next - 1
            }
        };
        let start = locator.offset(token.span.start).ok()?;
        let end = locator.offset(token.span.end).ok()?;
        out.push_str(&sql[copied..start]);
        replace(index, text, &mut out)?;
        copied = end;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

/// `sql` with its placeholders replaced by `values`, SQL text each: MySQL's `?` in order,
/// PostgreSQL's `$n` by number (as `(value)`). `None` when a placeholder has no value or a value
/// no placeholder (SQL-level EXECUTE's arguments must match).
pub fn bind_placeholders(sql: &str, dialect: Dialect, values: &[String]) -> Option<String> {
    let mut used = vec![false; values.len()];
    let out = rewrite(sql, dialect, |index, _, out| {
        let value = values.get(index)?;
        used[index] = true;
        match dialect {
            Dialect::MySql => out.push_str(value),
            Dialect::Postgres => {
                out.push('(');
                out.push_str(value);
                out.push(')');
            }
        }
        Some(())
    })?;
    used.iter().all(|u| *u).then_some(out)
}

/// PostgreSQL `sql` with each `$n` for which `with[n - 1]` is given replaced by that text (a
/// cast of the parameter, `$1::timestamptz`, or a literal); `None` when `sql` does not
/// tokenize.
pub fn replace_placeholders<T: AsRef<str>>(sql: &str, with: &[Option<T>]) -> Option<String> {
    rewrite(sql, Dialect::Postgres, |index, text, out| {
        match with.get(index) {
            Some(Some(replacement)) => out.push_str(replacement.as_ref()),
            _ => out.push_str(text),
        }
        Some(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_their_values_in_order_or_by_number() {
        let values = ["1".to_owned(), "'it''s'".to_owned()];
        assert_eq!(
            bind_placeholders("SELECT ?, '?', ?", Dialect::MySql, &values).as_deref(),
            Some("SELECT 1, '?', 'it''s'")
        );
        assert_eq!(
            bind_placeholders("SELECT $2, $1, $2", Dialect::Postgres, &values).as_deref(),
            Some("SELECT ('it''s'), (1), ('it''s')")
        );
        assert_eq!(bind_placeholders("SELECT ?", Dialect::MySql, &values), None);
        assert_eq!(
            bind_placeholders("SELECT ?, ?, ?", Dialect::MySql, &values),
            None
        );
        assert_eq!(
            bind_placeholders("SELECT $3", Dialect::Postgres, &values),
            None
        );
    }

    #[test]
    fn placeholders_are_replaced_by_number() {
        let with = [Some("$1::timestamptz"), None, Some("E'it''s'")];
        assert_eq!(
            replace_placeholders(
                "INSERT INTO t VALUES ($1, $2, '$1', $3) -- $1\nRETURNING $1::text",
                &with
            )
            .as_deref(),
            Some(
                "INSERT INTO t VALUES ($1::timestamptz, $2, '$1', E'it''s') -- $1\n\
                 RETURNING $1::timestamptz::text"
            )
        );
        assert_eq!(
            replace_placeholders("SELECT $4, $$ $1 $$", &with).as_deref(),
            Some("SELECT $4, $$ $1 $$")
        );
    }
}
