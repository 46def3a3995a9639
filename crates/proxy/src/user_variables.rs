//! MySQL user variables: `SET @x = expr` keeps the value in the session (evaluated by `SELECT
//! expr`, through the proxy), and every later `@x` in a statement is replaced by it before the
//! statement goes to a shard, where `@x` would be NULL.

use crate::words::split_top_level;

/// The most user variables one session keeps.
pub(crate) const MAX_VARIABLES: usize = 1024;

/// A MySQL `SET` (see `Intent::of`) that assigns both user variables and settings (mysqldump's
/// `SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0`): its assignments, each to be
/// made as a `SET` of its own, in order (so `@OLD…` reads the value before it changes).
pub(crate) fn split_mixed_set(sql: &str) -> Option<Vec<&str>> {
    if !sql.contains('@') {
        return None;
    }
    let text = sql.trim().trim_end_matches(';').trim_end();
    let body = text.get(3..)?.trim_start();
    let items: Vec<&str> = split_top_level(body).into_iter().map(str::trim).collect();
    let user = |item: &&str| item.starts_with('@') && !item.starts_with("@@");
    let mixed = items.iter().any(user) && !items.iter().all(user);
    mixed.then_some(items)
}

/// The assignments of `SET @a = expr [, @b := expr …]`, names lower-cased, from `sql`, a `SET`
/// (see `Intent::of`); `None` when it is not such a statement (or mixes in other settings,
/// left to the session statements).
pub(crate) fn parse_set(sql: &str) -> Option<Vec<(String, &str)>> {
    if !sql.contains('@') {
        return None;
    }
    let text = sql.trim().trim_end_matches(';').trim_end();
    let body = text.get(3..)?.trim_start();
    let mut assignments = Vec::new();
    for item in split_top_level(body) {
        let item = item.trim();
        let name_end = item
            .char_indices()
            .skip(1)
            .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.')))
            .map_or(item.len(), |(i, _)| i);
        let name = item.strip_prefix('@')?.get(..name_end - 1)?;
        if name.is_empty() || name.starts_with('@') {
            return None;
        }
        let rest = item[name_end..].trim_start();
        let expr = rest
            .strip_prefix(":=")
            .or_else(|| rest.strip_prefix('='))?
            .trim();
        if expr.is_empty() {
            return None;
        }
        assignments.push((name.to_lowercase(), expr));
    }
    (!assignments.is_empty()).then_some(assignments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_are_read_and_everything_else_is_not() {
        assert_eq!(
            parse_set("SET @X = 5, @y := CONCAT('a,b', (SELECT 1, 2));"),
            Some(vec![
                ("x".to_owned(), "5"),
                ("y".to_owned(), "CONCAT('a,b', (SELECT 1, 2))")
            ])
        );
        for sql in [
            "SET NAMES utf8",
            "SET @@session.sql_mode = ''",
            "SET @x = 1, NAMES utf8",
            "SET @x",
            "SET @ = 1",
            "SELECT @x = 1",
        ] {
            assert_eq!(parse_set(sql), None, "{sql}");
        }
    }
}
