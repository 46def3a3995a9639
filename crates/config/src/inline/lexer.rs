//! Tokens of the expression inside one `${…}` group.

use super::error::{InlineError, column};

/// One token and the byte offset where it starts in the whole expression text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub at: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Int(i64),
    Str(String),
    Ident(String),
    Op(char),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    /// `..` (inclusive range).
    DotDot,
    /// `..<` (Groovy's half-open range).
    DotDotLt,
    Eof,
}

impl TokenKind {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Int(v) => format!("'{v}'"),
            TokenKind::Str(s) => format!("string '{s}'"),
            TokenKind::Ident(s) => format!("'{s}'"),
            TokenKind::Op(c) => format!("'{c}'"),
            TokenKind::LParen => "'('".into(),
            TokenKind::RParen => "')'".into(),
            TokenKind::LBracket => "'['".into(),
            TokenKind::RBracket => "']'".into(),
            TokenKind::Comma => "','".into(),
            TokenKind::DotDot => "'..'".into(),
            TokenKind::DotDotLt => "'..<'".into(),
            TokenKind::Eof => "end of expression".into(),
        }
    }
}

/// Splits `text[start..end]` into tokens, ending with [`TokenKind::Eof`] at `end`.
pub(crate) fn tokenize(text: &str, start: usize, end: usize) -> Result<Vec<Token>, InlineError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = start;
    while i < end {
        let b = bytes[i];
        let at = i;
        let kind = match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'0'..=b'9' => {
                while i < end && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if i < end && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
                    return Err(InlineError::Unsupported {
                        what: format!(
                            "'{}' (only plain decimal integer literals are supported)",
                            word_at(text, at, end)
                        ),
                        column: column(text, at),
                    });
                }
                let value =
                    text[at..i]
                        .parse::<i64>()
                        .map_err(|_| InlineError::IntegerOutOfRange {
                            column: column(text, at),
                        })?;
                TokenKind::Int(value)
            }
            b'\'' | b'"' => {
                let (value, next) = string_literal(text, at, end)?;
                i = next;
                TokenKind::Str(value)
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                while i < end && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                TokenKind::Ident(text[at..i].to_owned())
            }
            b'+' | b'-' | b'*' | b'/' | b'%' => {
                i += 1;
                TokenKind::Op(char::from(b))
            }
            b'(' => {
                i += 1;
                TokenKind::LParen
            }
            b')' => {
                i += 1;
                TokenKind::RParen
            }
            b'[' => {
                i += 1;
                TokenKind::LBracket
            }
            b']' => {
                i += 1;
                TokenKind::RBracket
            }
            b',' => {
                i += 1;
                TokenKind::Comma
            }
            b'.' if bytes.get(i + 1) == Some(&b'.') && i + 1 < end => {
                if i + 2 < end && bytes[i + 2] == b'<' {
                    i += 3;
                    TokenKind::DotDotLt
                } else {
                    i += 2;
                    TokenKind::DotDot
                }
            }
            _ => {
                return Err(InlineError::Unsupported {
                    what: unsupported_reason(text, at, end),
                    column: column(text, at),
                });
            }
        };
        tokens.push(Token { kind, at });
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        at: end,
    });
    Ok(tokens)
}

/// Reads a `'…'` or `"…"` literal starting at `at`; returns its value and the offset after it.
///
/// Backslash escapes the next character, as in Groovy; `$` inside double quotes is taken
/// literally (Groovy would interpolate it, which this subset does not support).
fn string_literal(text: &str, at: usize, end: usize) -> Result<(String, usize), InlineError> {
    let quote = text.as_bytes()[at];
    let mut value = String::new();
    let mut chars = text[at + 1..end].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((_, escaped)) => value.push(escaped),
                None => break,
            },
            c if c == char::from(quote) => return Ok((value, at + 1 + offset + 1)),
            c => value.push(c),
        }
    }
    Err(InlineError::UnterminatedString {
        column: column(text, at),
    })
}

/// The identifier-like word starting at `at`, for messages.
fn word_at(text: &str, at: usize, end: usize) -> &str {
    let len = text[at..end]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(end - at);
    &text[at..at + len]
}

fn unsupported_reason(text: &str, at: usize, end: usize) -> String {
    // `at` is always on a char boundary: every branch above advances by whole ASCII bytes or
    // whole string literals.
    let found = text[at..end].chars().next().unwrap_or('?');
    match found {
        '.' => format!(
            "'{}' (method calls and property access are not supported)",
            &text[at..end].split_whitespace().next().unwrap_or(".")
        ),
        '?' => "'?' (ternary and Elvis operators are not supported)".to_owned(),
        '{' | '}' => format!("'{found}' (closures are not supported)"),
        '=' | '<' | '>' | '!' | '&' | '|' => {
            format!("'{found}' (comparison and logical operators are not supported)")
        }
        _ => format!("unexpected character '{found}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text, 0, text.len())
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn tokenizes_operators_literals_and_ranges() {
        assert_eq!(
            kinds("a % 2 + 'x\\'y' ..< 0..1"),
            vec![
                TokenKind::Ident("a".into()),
                TokenKind::Op('%'),
                TokenKind::Int(2),
                TokenKind::Op('+'),
                TokenKind::Str("x'y".into()),
                TokenKind::DotDotLt,
                TokenKind::Int(0),
                TokenKind::DotDot,
                TokenKind::Int(1),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn rejects_method_calls_with_column() {
        let err = tokenize("id.hashCode()", 0, 13).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported syntax at column 3: '.hashCode()' (method calls and property access are not supported)"
        );
    }

    #[test]
    fn rejects_unterminated_strings_and_huge_integers() {
        assert_eq!(
            tokenize(" 'abc", 0, 5).unwrap_err(),
            InlineError::UnterminatedString { column: 2 }
        );
        assert_eq!(
            tokenize("99999999999999999999", 0, 20).unwrap_err(),
            InlineError::IntegerOutOfRange { column: 1 }
        );
    }
}
