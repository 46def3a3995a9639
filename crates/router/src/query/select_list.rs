//! Where the items of a SELECT's top-level select list are written, read from the tokens: the
//! rewrite of a read over several nodes appends hidden columns after the last item and
//! rewrites `AVG(…)` in place.

use std::ops::Range;

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::RouteError;
use crate::locate::Locator;
use crate::tokens;

/// The byte ranges of the top-level select list's items, from the tokens (sqlparser's spans of
/// some expressions stop short of their closing parenthesis).
pub(super) fn projection_ranges(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<Option<Vec<Range<usize>>>, RouteError> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut started = false;
    let mut current: Option<Range<usize>> = None;
    for token in tokens::significant(parser) {
        if !started {
            if let Token::Word(w) = &token.token
                && w.keyword == Keyword::SELECT
            {
                started = true;
            }
            continue;
        }
        let range = locator.offset(token.span.start)?..locator.offset(token.span.end)?;
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                items.extend(current.take());
                continue;
            }
            Token::Word(w)
                if depth == 0
                    && w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::FROM
                            | Keyword::WHERE
                            | Keyword::GROUP
                            | Keyword::ORDER
                            | Keyword::LIMIT
                            | Keyword::INTO
                    ) =>
            {
                break;
            }
            Token::SemiColon if depth == 0 => break,
            _ => {}
        }
        current = Some(match current {
            Some(c) => c.start..range.end,
            None => range,
        });
    }
    items.extend(current);
    Ok(started.then_some(items))
}

/// The text between the parentheses of the call whose name ends at `name_end`, within `item`.
pub(super) fn arguments_text(
    sql: &str,
    item: &Range<usize>,
    name_end: usize,
) -> Option<Range<usize>> {
    let text = sql.get(name_end..item.end)?;
    let open = name_end + text.find('(')? + 1;
    let close = name_end + text.rfind(')')?;
    (open <= close).then_some(open..close)
}

/// The byte range of the top-level HAVING clause, from its keyword to the end of its last
/// token, if the statement has one.
pub(super) fn having_range(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<Option<Range<usize>>, RouteError> {
    let mut depth = 0i32;
    let mut clause: Option<Range<usize>> = None;
    for token in tokens::significant(parser) {
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::SemiColon if depth == 0 => break,
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => {
                if clause.is_none() && w.keyword == Keyword::HAVING {
                    let start = locator.offset(token.span.start)?;
                    clause = Some(start..start);
                } else if clause.is_some() && follows_having(w.keyword) {
                    break;
                }
            }
            _ => {}
        }
        if let Some(clause) = &mut clause {
            clause.end = locator.offset(token.span.end)?;
        }
    }
    Ok(clause)
}

/// The end of the call whose name starts at byte `name_start`: the end of its closing
/// parenthesis (sqlparser's span of a call may stop short of it).
pub(super) fn call_end(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
    name_start: usize,
) -> Result<Option<usize>, RouteError> {
    let mut depth = 0i32;
    for token in tokens::significant(parser) {
        if locator.offset(token.span.start)? < name_start {
            continue;
        }
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Ok(Some(locator.offset(token.span.end)?));
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Where the GROUP BY list ends, or where one would go: the end of the last token before the
/// top-level HAVING, ORDER BY, LIMIT … or the end of the statement.
pub(super) fn group_by_end(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<usize, RouteError> {
    let mut depth = 0i32;
    let mut end = 0;
    for token in tokens::significant(parser) {
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::SemiColon if depth == 0 => break,
            Token::Word(w)
                if depth == 0
                    && w.quote_style.is_none()
                    && (w.keyword == Keyword::HAVING || follows_having(w.keyword)) =>
            {
                break;
            }
            _ => {}
        }
        end = locator.offset(token.span.end)?;
    }
    Ok(end)
}

/// The keywords of the clauses that may follow HAVING at the top level of a SELECT.
fn follows_having(keyword: Keyword) -> bool {
    matches!(
        keyword,
        Keyword::ORDER
            | Keyword::LIMIT
            | Keyword::OFFSET
            | Keyword::FETCH
            | Keyword::FOR
            | Keyword::LOCK
            | Keyword::WINDOW
            | Keyword::QUALIFY
            | Keyword::INTO
            | Keyword::UNION
            | Keyword::EXCEPT
            | Keyword::INTERSECT
    )
}

/// In a set operation of plain SELECTs: where each branch's select list ends, and where its
/// top-level INTERSECT or EXCEPT operator is written (with a DISTINCT after it).
pub(super) fn set_operation_parts(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
) -> Result<(Vec<usize>, Option<Range<usize>>), RouteError> {
    let mut depth = 0i32;
    let mut ends = Vec::new();
    let mut list_end: Option<usize> = None;
    let mut in_list = false;
    let mut operator: Option<Range<usize>> = None;
    let mut after_operator = false;
    for token in tokens::significant(parser) {
        let range = locator.offset(token.span.start)?..locator.offset(token.span.end)?;
        let keyword = match &token.token {
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => Some(w.keyword),
            _ => None,
        };
        if after_operator {
            after_operator = false;
            if let (Some(Keyword::DISTINCT), Some(op)) = (keyword, &mut operator) {
                op.end = range.end;
                continue;
            }
        }
        let ends_list = matches!(token.token, Token::SemiColon)
            || keyword.is_some_and(|k| k == Keyword::HAVING || follows_having(k))
            || matches!(
                keyword,
                Some(Keyword::FROM | Keyword::WHERE | Keyword::GROUP | Keyword::UNION)
            );
        if in_list && depth == 0 && ends_list {
            ends.extend(list_end.take());
            in_list = false;
        }
        match keyword {
            Some(Keyword::SELECT) => {
                in_list = true;
                list_end = None;
                continue;
            }
            Some(Keyword::INTERSECT | Keyword::EXCEPT) => {
                operator = Some(range.clone());
                after_operator = true;
            }
            _ => {}
        }
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        if in_list {
            list_end = Some(range.end);
        }
    }
    if in_list {
        ends.extend(list_end);
    }
    Ok((ends, operator))
}
