//! One pass over the statement's tokens for what the AST does not say precisely enough: every
//! placeholder in text order and table qualifiers (`t_order.status`); and, for `INSERT … SET`
//! only, where the assignment list ends.

use std::ops::Range;

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::RouteError;
use crate::locate::Locator;
use keyshard_types::Dialect;

/// A placeholder and the 0-based parameter it stands for.
#[derive(Debug)]
pub(crate) struct Placeholder {
    pub(crate) range: Range<usize>,
    pub(crate) index: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Tokens {
    pub(crate) placeholders: Vec<Placeholder>,
    /// Words naming one of the logic tables right before a `.`, with their quote style and
    /// which of the tables they name.
    pub(crate) qualifiers: Vec<(Range<usize>, Option<char>, usize)>,
    /// Parameters the statement needs: the count of `?`, or the largest `$n`.
    pub(crate) param_count: usize,
    /// A read that only a primary may answer, not a replica (see [`crate::replica_reads`]).
    pub(crate) needs_primary: bool,
}

const INTERNAL: RouteError = RouteError::Internal("a placeholder the tokenizer did not see");

impl Tokens {
    /// Reads the tokens `parser` holds after parsing.
    pub(crate) fn scan(
        parser: &Parser<'_>,
        locator: &mut Locator<'_>,
        dialect: Dialect,
        logic_tables: &[&str],
    ) -> Result<Self, RouteError> {
        let mut tokens = Tokens::default();
        for index in 0.. {
            let token = parser.token_at(index);
            match &token.token {
                Token::EOF => break,
                Token::Word(word) if parser.token_at(index + 1).token == Token::Period => {
                    if let Some(table) = logic_tables
                        .iter()
                        .position(|t| word.value.eq_ignore_ascii_case(t))
                    {
                        let range =
                            locator.offset(token.span.start)?..locator.offset(token.span.end)?;
                        tokens.qualifiers.push((range, word.quote_style, table));
                    }
                }
                Token::Placeholder(text) => {
                    let param = placeholder_index(text, dialect, tokens.placeholders.len())?;
                    tokens.param_count = tokens.param_count.max(param + 1);
                    let range =
                        locator.offset(token.span.start)?..locator.offset(token.span.end)?;
                    tokens.placeholders.push(Placeholder {
                        range,
                        index: param,
                    });
                }
                _ => {}
            }
            tokens.needs_primary =
                tokens.needs_primary || crate::replica_reads::needs_primary(parser, index, token);
        }
        Ok(tokens)
    }

    /// The parameter of the placeholder starting at byte `start`.
    pub(crate) fn placeholder_at(&self, start: usize) -> Result<usize, RouteError> {
        self.placeholders
            .binary_search_by_key(&start, |p| p.range.start)
            .map(|i| self.placeholders[i].index)
            .map_err(|_| INTERNAL)
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
}

/// `sql`'s tokens in MySQL's dialect, white space left out, for a look at a statement before
/// (or without) parsing it; `None` when it does not tokenize (the parser then reports it).
pub(crate) fn mysql_significant(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let tokens = sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::MySqlDialect {}, sql)
        .tokenize_with_location()
        .ok()?;
    Some(
        tokens
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .collect(),
    )
}

/// [`mysql_significant`] of a statement that starts with SELECT; `None` for any other.
pub(crate) fn mysql_select(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let tokens = mysql_significant(sql)?;
    tokens
        .first()
        .is_some_and(|t| is_keyword(&t.token, Keyword::SELECT))
        .then_some(tokens)
}

/// Whether `token` is the unquoted word `keyword`.
pub(crate) fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

/// The tokens `parser` holds after parsing, white space left out.
pub(crate) fn significant<'p>(parser: &'p Parser<'_>) -> impl Iterator<Item = &'p TokenWithSpan> {
    (0..)
        .map(|index| parser.token_at(index))
        .take_while(|token| token.token != Token::EOF)
        .filter(|token| !matches!(token.token, Token::Whitespace(_)))
}

/// The end of the expression list that starts at byte `from`: the end of the last token
/// before a top-level `ON`, `RETURNING`, `;` or the end of the statement. sqlparser's spans of
/// some expressions (function calls) stop short of their closing parenthesis, so the end is
/// found from the tokens.
pub(crate) fn list_end(
    parser: &Parser<'_>,
    locator: &mut Locator<'_>,
    from: usize,
) -> Result<usize, RouteError> {
    let mut depth = 0i32;
    let mut end = from;
    for token in significant(parser) {
        let start = locator.offset(token.span.start)?;
        if start < from {
            continue;
        }
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::SemiColon if depth <= 0 => break,
            Token::Word(w)
                if depth <= 0
                    && w.quote_style.is_none()
                    && matches!(w.keyword, Keyword::ON | Keyword::RETURNING) =>
            {
                break;
            }
            _ => {}
        }
        end = locator.offset(token.span.end)?;
    }
    Ok(end)
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
