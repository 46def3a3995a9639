//! MySQL's `SELECT … INTO @a, @b`: the values of the one row a SELECT finds, stored in the
//! session's user variables. The proxy keeps those variables (see the proxy's
//! `user_variables`); on a shard the INTO would set a pooled connection's. So the proxy runs
//! the SELECT without its INTO and stores the row itself.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use crate::RouteError;
use crate::locate::{Locator, splice};
use crate::tokens::is_keyword;

/// A `SELECT … INTO @variables` split in two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectInto {
    /// The statement without its INTO clause.
    pub select: String,
    /// The variables, lower-cased, without their `@`, in order.
    pub variables: Vec<String>,
}

/// `sql` split, when it is a SELECT whose top level stores into user variables; `None`
/// otherwise (`INTO OUTFILE`, a subquery's INTO, another statement).
pub fn select_into_variables(sql: &str) -> Result<Option<SelectInto>, RouteError> {
    let Some(significant) = crate::tokens::mysql_select(sql) else {
        return Ok(None);
    };
    let mut depth = 0i32;
    let mut into = None;
    for (i, token) in significant.iter().enumerate() {
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            t if depth == 0 && is_keyword(t, Keyword::INTO) => {
                into = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(into) = into else {
        return Ok(None);
    };
    // `@a, @b`: user variables (`@name` words), separated by commas.
    let mut variables = Vec::new();
    let mut last = into;
    while let Some(Token::Word(word)) = significant.get(last + 1).map(|t| &t.token) {
        let Some(name) = word
            .value
            .strip_prefix('@')
            .filter(|n| !n.is_empty() && !n.starts_with('@'))
        else {
            break;
        };
        variables.push(name.to_lowercase());
        last += 1;
        match significant.get(last + 1).map(|t| &t.token) {
            Some(Token::Comma) => last += 1,
            _ => break,
        }
    }
    if variables.is_empty()
        || significant
            .get(last)
            .is_some_and(|t| t.token == Token::Comma)
    {
        return Ok(None);
    }
    let mut locator = Locator::new(sql);
    let start = locator.offset(significant[into].span.start)?;
    let end = locator.offset(significant[last].span.end)?;
    Ok(Some(SelectInto {
        select: splice(sql, vec![(start..end, String::new())])?,
        variables,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(sql: &str) -> Option<(String, Vec<String>)> {
        select_into_variables(sql)
            .unwrap()
            .map(|s| (s.select, s.variables))
    }

    #[test]
    fn the_into_clause_goes_wherever_it_stands() {
        assert_eq!(
            split("SELECT status, user_id INTO @S, @u FROM t WHERE id = 1"),
            Some((
                "SELECT status, user_id  FROM t WHERE id = 1".to_owned(),
                vec!["s".to_owned(), "u".to_owned()]
            ))
        );
        assert_eq!(
            split("select 5 into @t"),
            Some(("select 5 ".to_owned(), vec!["t".to_owned()]))
        );
        assert_eq!(
            split("SELECT a FROM t LIMIT 1 INTO @x FOR UPDATE"),
            Some((
                "SELECT a FROM t LIMIT 1  FOR UPDATE".to_owned(),
                vec!["x".to_owned()]
            ))
        );
    }

    #[test]
    fn only_user_variables_at_the_top() {
        for sql in [
            "SELECT a FROM t",
            "SELECT a INTO OUTFILE '/tmp/x' FROM t",
            "SELECT * FROM (SELECT a INTO @x FROM t) s",
            "INSERT INTO t SELECT 1",
            "SELECT a INTO @@x FROM t",
        ] {
            assert_eq!(split(sql), None, "{sql}");
        }
    }
}
