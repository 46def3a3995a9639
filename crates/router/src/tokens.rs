//! One pass over the statement's tokens for what the AST does not say precisely enough:
//! every placeholder in text order, table qualifiers (`t_order.status`), and where clauses end.

use std::ops::Range;

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::locate::Locator;
use crate::{Dialect, RouteError};

/// A placeholder and the 0-based parameter it stands for.
#[derive(Debug, Clone)]
pub(crate) struct Placeholder {
    pub(crate) range: Range<usize>,
    pub(crate) index: usize,
}

/// What the router needs to know about one significant (non-whitespace, non-comment) token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    LParen,
    RParen,
    /// `ON`, `RETURNING` or `;`: where an `INSERT … SET` list ends at the top level.
    ClauseEnd,
    /// A word immediately followed by `.`, naming the logic table, with its quote style.
    TableQualifier(Option<char>),
    Other,
}

#[derive(Debug, Default)]
pub(crate) struct Tokens {
    pub(crate) placeholders: Vec<Placeholder>,
    pub(crate) significant: Vec<(Range<usize>, Kind)>,
    /// Parameters the statement needs: the count of `?`, or the largest `$n`.
    pub(crate) param_count: usize,
}

impl Tokens {
    /// Reads the tokens `parser` holds after parsing `sql`.
    pub(crate) fn scan(
        parser: &Parser<'_>,
        locator: &mut Locator<'_>,
        dialect: Dialect,
        logic_table: &str,
    ) -> Result<Self, RouteError> {
        let mut tokens = Tokens::default();
        let mut index = 0;
        loop {
            let token = parser.token_at(index);
            index += 1;
            let kind = match &token.token {
                Token::EOF => break,
                Token::Whitespace(_) => continue,
                Token::LParen => Kind::LParen,
                Token::RParen => Kind::RParen,
                Token::SemiColon => Kind::ClauseEnd,
                Token::Word(word)
                    if matches!(word.keyword, Keyword::ON | Keyword::RETURNING)
                        && word.quote_style.is_none() =>
                {
                    Kind::ClauseEnd
                }
                Token::Word(word)
                    if parser.token_at(index).token == Token::Period
                        && word.value.eq_ignore_ascii_case(logic_table) =>
                {
                    Kind::TableQualifier(word.quote_style)
                }
                Token::Placeholder(text) => {
                    let param = placeholder_index(text, dialect, tokens.placeholders.len())?;
                    tokens.param_count = tokens.param_count.max(param + 1);
                    let range =
                        locator.offset(token.span.start)?..locator.offset(token.span.end)?;
                    tokens.placeholders.push(Placeholder {
                        range: range.clone(),
                        index: param,
                    });
                    tokens.significant.push((range, Kind::Other));
                    continue;
                }
                _ => Kind::Other,
            };
            let range = locator.offset(token.span.start)?..locator.offset(token.span.end)?;
            tokens.significant.push((range, kind));
        }
        Ok(tokens)
    }

    /// The placeholder starting at byte `start`, if any.
    pub(crate) fn placeholder_at(&self, start: usize) -> Option<&Placeholder> {
        self.placeholders
            .binary_search_by_key(&start, |p| p.range.start)
            .ok()
            .map(|i| &self.placeholders[i])
    }

    /// Whether any placeholder lies within `range`.
    pub(crate) fn has_placeholder_in(&self, range: &Range<usize>) -> bool {
        let first = self
            .placeholders
            .partition_point(|p| p.range.start < range.start);
        self.placeholders
            .get(first)
            .is_some_and(|p| p.range.end <= range.end)
    }

    /// The end of the expression list that starts at byte `from`: the end of the last token
    /// before a top-level `ON`, `RETURNING`, `;` or the end of the statement.
    pub(crate) fn list_end(&self, from: usize) -> usize {
        let first = self.significant.partition_point(|(r, _)| r.start < from);
        let mut depth = 0i32;
        let mut end = from;
        for (range, kind) in &self.significant[first..] {
            match kind {
                Kind::LParen => depth += 1,
                Kind::RParen => depth -= 1,
                Kind::ClauseEnd if depth <= 0 => break,
                _ => {}
            }
            end = range.end;
        }
        end
    }
}

fn placeholder_index(text: &str, dialect: Dialect, seen: usize) -> Result<usize, RouteError> {
    match dialect {
        Dialect::MySql if text == "?" => Ok(seen),
        Dialect::Postgres => text
            .strip_prefix('$')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1))
            .ok_or_else(|| {
                RouteError::Unsupported(format!("placeholder '{text}' (use $1, $2, …)"))
            }),
        Dialect::MySql => Err(RouteError::Unsupported(format!(
            "placeholder '{text}' (use ?)"
        ))),
    }
}
