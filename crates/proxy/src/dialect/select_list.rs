//! The select list of a `SELECT` the proxy may answer itself (`SELECT @@version, 1 AS one`):
//! plain items with at most one alias each, nothing after them but MySQL's `LIMIT 1`. Whether
//! each expression is one the session can answer is the dialect's to say; everything else
//! (`1 AS a FROM t_order WHERE …`, an operator, a clause) is a query for the shards.

use crate::words::split_top_level;

/// One item: its expression and its alias (unquoted), as written.
pub(crate) struct Item<'a> {
    pub(crate) expr: &'a str,
    pub(crate) alias: Option<&'a str>,
}

/// The items of `sql` when it is `SELECT item [, …] [LIMIT 1]` with single-identifier aliases;
/// `None` for anything else.
pub(crate) fn items(sql: &str) -> Option<Vec<Item<'_>>> {
    let sql = sql.trim().trim_end_matches(';').trim_end();
    let head = sql.get(..6)?;
    let body = sql[6..].trim();
    if !head.eq_ignore_ascii_case("select") || !sql[6..].starts_with(char::is_whitespace) {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let body = match lower.rfind(" limit ") {
        Some(i) if body[i + 7..].trim() == "1" => &body[..i],
        _ => body,
    };
    let items: Vec<Item> = split_top_level(body)
        .into_iter()
        .map(|item| split_alias(item.trim()))
        .collect::<Option<_>>()?;
    (!items.is_empty() && items.iter().all(|i| !i.expr.is_empty())).then_some(items)
}

/// `expr AS alias`, `expr alias` or `expr`; `None` when what follows the expression is not one
/// alias (`1 AS a FROM t_order WHERE …` is a query, not a constant).
fn split_alias(item: &str) -> Option<Item<'_>> {
    let lower = item.to_ascii_lowercase();
    let as_at = lower.match_indices("as").map(|(i, _)| i).find(|&i| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + 2..].chars().next();
        before.is_some_and(char::is_whitespace) && after.is_some_and(char::is_whitespace)
    });
    if let Some(i) = as_at {
        return Some(Item {
            expr: item[..i].trim(),
            alias: Some(alias(item[i + 2..].trim())?),
        });
    }
    match item.rsplit_once(char::is_whitespace) {
        Some((expr, raw)) if !expr.trim().is_empty() && !raw.contains(')') => Some(Item {
            expr: expr.trim(),
            alias: Some(alias(raw)?),
        }),
        _ => Some(Item {
            expr: item,
            alias: None,
        }),
    }
}

/// A single identifier, bare or quoted, without its quotes.
fn alias(raw: &str) -> Option<&str> {
    let quoted = ['`', '"', '\'']
        .into_iter()
        .find(|q| raw.len() >= 2 && raw.starts_with(*q) && raw.ends_with(*q));
    match quoted {
        Some(q) => {
            let inner = &raw[1..raw.len() - 1];
            (!inner.contains(q)).then_some(inner)
        }
        None => (!raw.is_empty()
            && raw
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
        .then_some(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> Option<Vec<(String, Option<String>)>> {
        items(sql).map(|items| {
            items
                .into_iter()
                .map(|i| (i.expr.to_owned(), i.alias.map(str::to_owned)))
                .collect()
        })
    }

    #[test]
    fn plain_items_with_aliases() {
        let item = |e: &str, a: Option<&str>| (e.to_owned(), a.map(str::to_owned));
        assert_eq!(
            parsed("SELECT 1 AS `one`, @@version v LIMIT 1"),
            Some(vec![item("1", Some("one")), item("@@version", Some("v"))])
        );
        assert_eq!(
            parsed("select current_setting('a, b') as\n\"x\";"),
            Some(vec![item("current_setting('a, b')", Some("x"))])
        );
        assert_eq!(
            parsed("SELECT version()"),
            Some(vec![item("version()", None)])
        );
    }

    /// Whatever follows an item but one alias makes the statement a query: answered by the
    /// proxy as a constant, Django's `.exists()` would always be true. (`SELECT 1 a FROM t`
    /// is an item `1 a FROM` aliased `t`, which no dialect takes for a session value.)
    #[test]
    fn queries_are_not_select_lists() {
        for sql in [
            "SELECT 1 AS a FROM t_order WHERE order_id = 1 LIMIT 1",
            "select 1 as a\nfrom t_order",
            "SELECT 1 AS `a` FROM t_order",
            "select",
            "select ",
            "SELECTED 1",
            "SELECT 1,",
        ] {
            assert!(parsed(sql).is_none(), "{sql}");
        }
    }
}
