//! A budget on how long an operator chain may be, checked on the tokens before parsing.
//!
//! sqlparser parses `a OR b OR c …` in a loop, but into a left-deep tree, and everything that
//! later walks or drops that tree recurses once per operator: one ORM-generated
//! `WHERE id = 1 OR id = 2 …` of a few thousand terms would overflow the stack of the runtime
//! thread serving it and abort the whole process. Nesting by parentheses is bounded by
//! sqlparser's own recursion limit; chains are bounded here.

use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::RouteError;

/// The most operators one expression may chain at one level of parentheses. Far above what a
/// hand-written statement holds; a generated list that long belongs in `IN (…)`.
pub const MAX_OPERATOR_CHAIN: usize = 400;

/// Tokenizes `sql` as the parser would, refusing a statement with an operator chain longer
/// than [`MAX_OPERATOR_CHAIN`].
pub fn tokenize(sql: &str, dialect: &dyn Dialect) -> Result<Vec<TokenWithSpan>, RouteError> {
    let tokens = Tokenizer::new(dialect, sql)
        .tokenize_with_location()
        .map_err(|e| RouteError::Syntax(crate::locate::syntax_error(sql, &e.to_string())))?;
    check_chains(&tokens)?;
    Ok(tokens)
}

/// Counts operators between commas at each level of parentheses, without recursion. The
/// operators of the enclosing levels count too: `a OR (b OR (c OR …))` nests as deep as the
/// chains it is made of.
fn check_chains(tokens: &[TokenWithSpan]) -> Result<(), RouteError> {
    // One counter per open parenthesis; the outermost level is the first.
    let mut levels: Vec<usize> = vec![0];
    let mut along_the_path = 0;
    for token in tokens {
        match &token.token {
            Token::LParen | Token::LBracket | Token::LBrace => levels.push(0),
            // An unbalanced closing parenthesis is the parser's to report.
            Token::RParen | Token::RBracket | Token::RBrace if levels.len() > 1 => {
                along_the_path -= levels.pop().unwrap_or(0);
            }
            Token::Comma | Token::SemiColon => {
                if let Some(level) = levels.last_mut() {
                    along_the_path -= *level;
                    *level = 0;
                }
            }
            token if is_operator(token) => {
                if let Some(level) = levels.last_mut() {
                    *level += 1;
                    along_the_path += 1;
                    if along_the_path > MAX_OPERATOR_CHAIN {
                        return Err(RouteError::TooComplex {
                            limit: MAX_OPERATOR_CHAIN,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `token` can join two expressions (or apply to one) in a chain: every operator
/// symbol, and the keywords AND, OR and XOR. Over-counting (a unary minus, BETWEEN's AND) only
/// makes the budget stricter.
fn is_operator(token: &Token) -> bool {
    match token {
        Token::Word(word) => matches!(word.keyword, Keyword::AND | Keyword::OR | Keyword::XOR),
        Token::EOF
        | Token::Number(..)
        | Token::Char(_)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedByteStringLiteral(_)
        | Token::TripleDoubleQuotedByteStringLiteral(_)
        | Token::SingleQuotedRawStringLiteral(_)
        | Token::DoubleQuotedRawStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::QuoteDelimitedStringLiteral(_)
        | Token::NationalQuoteDelimitedStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::Whitespace(_)
        | Token::Placeholder(_)
        | Token::Period
        | Token::Colon => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};

    use super::*;

    fn chain(operator: &str, terms: usize) -> String {
        let terms: Vec<String> = (0..terms).map(|i| format!("id = {i}")).collect();
        format!(
            "SELECT * FROM t_order WHERE {}",
            terms.join(&format!(" {operator} "))
        )
    }

    #[test]
    fn long_chains_are_refused_before_parsing() {
        // `id = i` is one operator, joined by one more: 2 per term.
        let ok = chain("OR", MAX_OPERATOR_CHAIN / 2);
        assert!(tokenize(&ok, &MySqlDialect {}).is_ok());
        for sql in [
            chain("OR", 10_000),
            chain("AND", MAX_OPERATOR_CHAIN),
            format!("SELECT 1{}", " + 1".repeat(100_000)),
            format!("SELECT 'a'{}", " || 'a'".repeat(1_000)),
        ] {
            assert_eq!(
                tokenize(&sql, &PostgreSqlDialect {}).map(|_| ()),
                Err(RouteError::TooComplex {
                    limit: MAX_OPERATOR_CHAIN
                }),
                "{}",
                &sql[..40]
            );
        }
    }

    #[test]
    fn commas_and_parentheses_start_new_chains() {
        let rows = vec!["(-1, -2 + 3, 'x')"; 5_000].join(", ");
        let insert = format!("INSERT INTO t (a, b, c) VALUES {rows}");
        assert!(tokenize(&insert, &MySqlDialect {}).is_ok());
        let list: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
        let in_list = format!("SELECT * FROM t WHERE id IN ({})", list.join(", "));
        assert!(tokenize(&in_list, &MySqlDialect {}).is_ok());
        // A chain of parenthesised terms is still one chain at the outer level.
        let grouped = vec!["(id = 1)"; 1_000].join(" OR ");
        assert!(tokenize(&format!("SELECT 1 WHERE {grouped}"), &MySqlDialect {}).is_err());
        // Chains nested in each other add up.
        let level = format!("{}(", "1 + ".repeat(20));
        let nested = format!("SELECT {}1{}", level.repeat(40), ")".repeat(40));
        assert!(tokenize(&nested, &MySqlDialect {}).is_err());
        let shallow = format!("SELECT {}1{}", level.repeat(10), ")".repeat(10));
        assert!(tokenize(&shallow, &MySqlDialect {}).is_ok());
    }
}
