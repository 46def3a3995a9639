//! MySQL's `SELECT SQL_CALC_FOUND_ROWS … LIMIT n`: `FOUND_ROWS()` then answers how many rows
//! the statement would have returned without its LIMIT. Each shard would count only its own
//! rows, on a pooled connection another client's statement reuses; so the proxy runs the
//! statement without the modifier and counts its rows itself with a second statement, the
//! same read without its LIMIT under `COUNT(*)`, as MySQL's documentation advises in place of
//! the modifier.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use crate::RouteError;
use crate::locate::{Locator, splice};

const MODIFIER: &str = "SQL_CALC_FOUND_ROWS";

/// A `SELECT SQL_CALC_FOUND_ROWS` split in two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcFoundRows {
    /// The statement without the modifier.
    pub select: String,
    /// `SELECT COUNT(*)` of its rows without its LIMIT.
    pub count: String,
}

/// `sql` split, when it is a SELECT with the modifier at its top level; `None` otherwise.
pub fn calc_found_rows(sql: &str) -> Result<Option<CalcFoundRows>, RouteError> {
    let Some(significant) = crate::tokens::mysql_select(sql) else {
        return Ok(None);
    };
    let mut locator = Locator::new(sql);
    let (mut modifier, mut limit, mut tail) = (None, None, None);
    let mut depth = 0i32;
    for token in &significant {
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 => {
                let start = locator.offset(token.span.start)?;
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(MODIFIER) {
                    modifier.get_or_insert(start..locator.offset(token.span.end)?);
                } else if w.keyword == Keyword::LIMIT {
                    (limit, tail) = (Some(start), None);
                } else if limit.is_some()
                    && tail.is_none()
                    && matches!(w.keyword, Keyword::FOR | Keyword::LOCK | Keyword::INTO)
                {
                    tail = Some(start);
                }
            }
            Token::SemiColon if depth == 0 && tail.is_none() => {
                tail = Some(locator.offset(token.span.start)?);
            }
            _ => {}
        }
    }
    let Some(modifier) = modifier else {
        return Ok(None);
    };
    let select = splice(sql, vec![(modifier.clone(), String::new())])?;
    let mut edits = vec![(modifier, String::new())];
    let end = tail.unwrap_or(sql.len());
    if let Some(limit) = limit {
        edits.push((limit..end, String::new()));
    }
    edits.push((end..sql.len(), String::new()));
    let counted = splice(sql, edits)?;
    Ok(Some(CalcFoundRows {
        select,
        count: format!(
            "SELECT COUNT(*) FROM ({}) AS `keyshard_found_rows`",
            counted.trim_end()
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(sql: &str) -> Option<(String, String)> {
        calc_found_rows(sql).unwrap().map(|c| (c.select, c.count))
    }

    #[test]
    fn the_modifier_goes_and_the_count_drops_the_limit() {
        let (select, count) =
            split("SELECT SQL_CALC_FOUND_ROWS id FROM t WHERE a = 'LIMIT' ORDER BY id LIMIT 10, 5")
                .unwrap();
        assert_eq!(
            select,
            "SELECT  id FROM t WHERE a = 'LIMIT' ORDER BY id LIMIT 10, 5"
        );
        assert_eq!(
            count,
            "SELECT COUNT(*) FROM (SELECT  id FROM t WHERE a = 'LIMIT' ORDER BY id) AS \
             `keyshard_found_rows`"
        );
        let (_, count) =
            split("select sql_calc_found_rows * from t where id in (select id from u limit 1) limit 3 for update;")
                .unwrap();
        assert_eq!(
            count,
            "SELECT COUNT(*) FROM (select  * from t where id in (select id from u limit 1)) AS \
             `keyshard_found_rows`"
        );
        let (_, count) = split("SELECT SQL_CALC_FOUND_ROWS a FROM t").unwrap();
        assert_eq!(
            count,
            "SELECT COUNT(*) FROM (SELECT  a FROM t) AS `keyshard_found_rows`"
        );
    }

    #[test]
    fn only_a_select_with_the_modifier_at_its_top() {
        for sql in [
            "SELECT a FROM t LIMIT 1",
            "SELECT `SQL_CALC_FOUND_ROWS` FROM t",
            "SELECT * FROM (SELECT SQL_CALC_FOUND_ROWS a FROM t) x",
            "INSERT INTO t SELECT SQL_CALC_FOUND_ROWS a FROM u",
        ] {
            assert_eq!(split(sql), None, "{sql}");
        }
    }
}
