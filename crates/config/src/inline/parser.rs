//! Parses inline expression text into literal segments and `${…}` groups.

use super::error::{InlineError, column};
use super::expr::{Expr, Literal};
use super::lexer::{Token, TokenKind, tokenize};

/// How deeply parentheses and unary operators may nest; deeper input is refused rather than
/// risking the stack on hostile configuration.
const MAX_DEPTH: usize = 64;

/// A parsed template: literal text interleaved with groups.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    Literal(String),
    Group { group: Group, at: usize },
}

/// The content of one `${…}` group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Group {
    Expr(Expr),
    /// Inclusive bounds; `first > last` counts down, as Groovy's `3..0` does.
    Range {
        first: i64,
        last: i64,
    },
    List(Vec<Literal>),
}

/// Where a `${` or `$->{` group opens at byte `at`: the offset of its body.
fn group_body_start(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'$') {
        return None;
    }
    match bytes.get(at + 1) {
        Some(b'{') => Some(at + 2),
        Some(b'-') if bytes.get(at + 2) == Some(&b'>') && bytes.get(at + 3) == Some(&b'{') => {
            Some(at + 4)
        }
        _ => None,
    }
}

/// The offset of the `}` closing a group whose body starts at `body`; quotes are skipped so
/// `${'}'}` works.
fn group_end(text: &str, open: usize, body: usize) -> Result<usize, InlineError> {
    let bytes = text.as_bytes();
    let mut i = body;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'}' => return Ok(i),
            None if b == b'{' => {
                return Err(InlineError::Unsupported {
                    what: "'{' (closures and nested groups are not supported)".to_owned(),
                    column: column(text, i),
                });
            }
            None => {}
        }
        i += 1;
    }
    Err(InlineError::UnclosedGroup {
        column: column(text, open),
    })
}

/// Splits `text` at commas outside groups, as ShardingSphere's inline parser does, so
/// `ds_${[0, 1]}.t, ds_2.t` is two items. Returns each item's byte range, untrimmed.
pub(crate) fn split_top_level(text: &str) -> Result<Vec<(usize, usize)>, InlineError> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(body) = group_body_start(bytes, i) {
            i = group_end(text, i, body)? + 1;
            continue;
        }
        if bytes[i] == b',' {
            items.push((start, i));
            start = i + 1;
        }
        i += 1;
    }
    items.push((start, bytes.len()));
    Ok(items)
}

/// Parses `text[start..end]` as a template.
pub(crate) fn parse_template(
    text: &str,
    start: usize,
    end: usize,
) -> Result<Vec<Segment>, InlineError> {
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    let mut literal_start = start;
    let mut i = start;
    while i < end {
        let Some(body) = group_body_start(bytes, i) else {
            i += 1;
            continue;
        };
        let close = group_end(text, i, body)?;
        if close >= end {
            return Err(InlineError::UnclosedGroup {
                column: column(text, i),
            });
        }
        if literal_start < i {
            segments.push(Segment::Literal(text[literal_start..i].to_owned()));
        }
        let group = parse_group(text, i, body, close)?;
        segments.push(Segment::Group { group, at: i });
        i = close + 1;
        literal_start = i;
    }
    if literal_start < end {
        segments.push(Segment::Literal(text[literal_start..end].to_owned()));
    }
    Ok(segments)
}

fn parse_group(text: &str, open: usize, body: usize, close: usize) -> Result<Group, InlineError> {
    let tokens = tokenize(text, body, close)?;
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
    };
    if parser.peek().kind == TokenKind::Eof {
        return Err(InlineError::EmptyGroup {
            column: column(text, open),
        });
    }
    let group = if parser.peek().kind == TokenKind::LBracket {
        Group::List(parser.list()?)
    } else {
        let first_at = parser.peek().at;
        let first = parser.expr(0)?;
        let inclusive = match parser.peek().kind {
            TokenKind::DotDot => Some(true),
            TokenKind::DotDotLt => Some(false),
            _ => None,
        };
        match inclusive {
            None => Group::Expr(first),
            Some(inclusive) => {
                parser.pos += 1;
                let second = parser.expr(0)?;
                range(text, first_at, &first, &second, inclusive)?
            }
        }
    };
    parser.expect_eof()?;
    Ok(group)
}

/// Builds a range group from constant integer bounds.
fn range(
    text: &str,
    at: usize,
    first: &Expr,
    second: &Expr,
    inclusive: bool,
) -> Result<Group, InlineError> {
    let bound = |e: &Expr| match e.constant() {
        Some(Ok(Literal::Int(v))) => Ok(v),
        Some(Err(err)) => Err(err),
        _ => Err(InlineError::NonIntegerRange {
            column: column(text, at),
        }),
    };
    let (first, last) = (bound(first)?, bound(second)?);
    if inclusive {
        return Ok(Group::Range { first, last });
    }
    // Groovy's `a..<b` stops one short of `b` in the direction of travel; `a..<a` is empty,
    // which an empty list expresses.
    Ok(match first.cmp(&last) {
        std::cmp::Ordering::Less => Group::Range {
            first,
            last: last - 1,
        },
        std::cmp::Ordering::Greater => Group::Range {
            first,
            last: last + 1,
        },
        std::cmp::Ordering::Equal => Group::List(Vec::new()),
    })
}

/// Recursive descent over one group's tokens: `+ -` bind looser than `* / %`, which bind looser
/// than unary minus, as in Groovy.
struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // `tokenize` always ends with Eof and the parser never moves past it.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn unexpected(&self, expected: &'static str) -> InlineError {
        let token = self.peek();
        InlineError::Unexpected {
            found: token.kind.describe(),
            expected,
            column: column(self.text, token.at),
        }
    }

    fn expect_eof(&self) -> Result<(), InlineError> {
        match self.peek().kind {
            TokenKind::Eof => Ok(()),
            TokenKind::LParen => Err(InlineError::Unsupported {
                what: "'(' after a value (function calls are not supported)".to_owned(),
                column: column(self.text, self.peek().at),
            }),
            _ => Err(self.unexpected("an operator or the end of the expression")),
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, InlineError> {
        let mut left = self.term(depth)?;
        while let TokenKind::Op(op @ ('+' | '-')) = self.peek().kind {
            self.pos += 1;
            let right = self.term(depth)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn term(&mut self, depth: usize) -> Result<Expr, InlineError> {
        let mut left = self.unary(depth)?;
        while let TokenKind::Op(op @ ('*' | '/' | '%')) = self.peek().kind {
            self.pos += 1;
            let right = self.unary(depth)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, InlineError> {
        if depth >= MAX_DEPTH {
            return Err(InlineError::TooDeep {
                column: column(self.text, self.peek().at),
            });
        }
        match self.peek().kind {
            TokenKind::Op('-') => {
                self.pos += 1;
                // Fold `-5` into a literal so lists and ranges accept negative bounds cheaply.
                match self.unary(depth + 1)? {
                    Expr::Int(v) if v != i64::MIN => Ok(Expr::Int(-v)),
                    inner => Ok(Expr::Neg(Box::new(inner))),
                }
            }
            TokenKind::Op('+') => {
                self.pos += 1;
                self.unary(depth + 1)
            }
            _ => self.primary(depth),
        }
    }

    fn primary(&mut self, depth: usize) -> Result<Expr, InlineError> {
        let token = self.peek().clone();
        let expr = match token.kind {
            TokenKind::Int(v) => Expr::Int(v),
            TokenKind::Str(s) => Expr::Str(s.into()),
            TokenKind::Ident(name) => Expr::Var(name.into()),
            TokenKind::LParen => {
                self.pos += 1;
                let inner = self.expr(depth + 1)?;
                if self.peek().kind != TokenKind::RParen {
                    return Err(self.unexpected("')'"));
                }
                inner
            }
            TokenKind::LBracket => {
                return Err(InlineError::RangeInExpression {
                    column: column(self.text, token.at),
                });
            }
            _ => return Err(self.unexpected("a number, a string, a variable or '('")),
        };
        self.pos += 1;
        Ok(expr)
    }

    fn list(&mut self) -> Result<Vec<Literal>, InlineError> {
        self.pos += 1; // '['
        let mut items = Vec::new();
        if self.peek().kind == TokenKind::RBracket {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            let negative = self.peek().kind == TokenKind::Op('-');
            if negative {
                self.pos += 1;
            }
            let item = match (self.peek().kind.clone(), negative) {
                (TokenKind::Int(v), _) => Literal::Int(if negative { -v } else { v }),
                (TokenKind::Str(s), false) => Literal::Str(s),
                (TokenKind::Ident(name), false) => {
                    return Err(InlineError::VariableInDataNodes {
                        name,
                        column: column(self.text, self.peek().at),
                    });
                }
                _ => return Err(self.unexpected("a number or a string literal")),
            };
            self.pos += 1;
            items.push(item);
            match self.peek().kind {
                TokenKind::Comma => self.pos += 1,
                TokenKind::RBracket => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> Result<Vec<Segment>, InlineError> {
        parse_template(text, 0, text.len())
    }

    #[test]
    fn parses_literals_and_both_group_syntaxes() {
        let segments = template("ds_${0..1}.t_$->{['a', 'b']}").unwrap();
        assert_eq!(
            segments,
            vec![
                Segment::Literal("ds_".into()),
                Segment::Group {
                    group: Group::Range { first: 0, last: 1 },
                    at: 3
                },
                Segment::Literal(".t_".into()),
                Segment::Group {
                    group: Group::List(vec![Literal::Str("a".into()), Literal::Str("b".into())]),
                    at: 13
                },
            ]
        );
    }

    #[test]
    fn precedence_follows_groovy() {
        let segments = template("${a + 2 * -b % 3}").unwrap();
        let Segment::Group {
            group: Group::Expr(expr),
            ..
        } = &segments[0]
        else {
            panic!("{segments:?}")
        };
        let var = |n: &str| Box::new(Expr::Var(n.into()));
        assert_eq!(
            *expr,
            Expr::Binary(
                '+',
                var("a"),
                Box::new(Expr::Binary(
                    '%',
                    Box::new(Expr::Binary(
                        '*',
                        Box::new(Expr::Int(2)),
                        Box::new(Expr::Neg(var("b")))
                    )),
                    Box::new(Expr::Int(3)),
                ))
            )
        );
    }

    #[test]
    fn half_open_and_descending_ranges() {
        let group = |t: &str| match template(t).unwrap().remove(0) {
            Segment::Group { group, .. } => group,
            other => panic!("{other:?}"),
        };
        assert_eq!(group("${0..<4}"), Group::Range { first: 0, last: 3 });
        assert_eq!(group("${3..0}"), Group::Range { first: 3, last: 0 });
        assert_eq!(group("${-1..1}"), Group::Range { first: -1, last: 1 });
        assert_eq!(group("${2..<2}"), Group::List(vec![]));
    }

    #[test]
    fn errors_carry_columns() {
        assert_eq!(
            template("t_${a").unwrap_err(),
            InlineError::UnclosedGroup { column: 3 }
        );
        assert_eq!(
            template("t_${}").unwrap_err(),
            InlineError::EmptyGroup { column: 3 }
        );
        assert_eq!(
            template("t_${a b}").unwrap_err().to_string(),
            "expected an operator or the end of the expression at column 7, found 'b'"
        );
        assert_eq!(
            template("t_${(a % 2}").unwrap_err().to_string(),
            "expected ')' at column 11, found end of expression"
        );
        assert_eq!(
            template("t_${a ?: 1}").unwrap_err().to_string(),
            "unsupported syntax at column 7: '?' (ternary and Elvis operators are not supported)"
        );
        assert_eq!(
            template("t_${foo(a)}").unwrap_err().to_string(),
            "unsupported syntax at column 8: '(' after a value (function calls are not supported)"
        );
        assert_eq!(
            template("t_${{ -> 1 }}").unwrap_err().to_string(),
            "unsupported syntax at column 5: '{' (closures and nested groups are not supported)"
        );
        assert_eq!(
            template("${'a'..'c'}").unwrap_err(),
            InlineError::NonIntegerRange { column: 3 }
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = format!("${{{}1{}}}", "(".repeat(500), ")".repeat(500));
        assert!(matches!(template(&text), Err(InlineError::TooDeep { .. })));
        let text = format!("${{{}1}}", "-".repeat(500));
        assert!(matches!(template(&text), Err(InlineError::TooDeep { .. })));
    }

    #[test]
    fn splits_only_at_top_level_commas() {
        let text = "ds_${[0, 1]}.t, ds_2.t_${'a,b'}";
        let items: Vec<&str> = split_top_level(text)
            .unwrap()
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(items, ["ds_${[0, 1]}.t", " ds_2.t_${'a,b'}"]);
    }
}
