//! MySQL's `LOAD DATA LOCAL INFILE 'file' [REPLACE | IGNORE] INTO TABLE t [CHARACTER SET …]
//! [FIELDS TERMINATED BY … [OPTIONALLY] ENCLOSED BY … ESCAPED BY …] [LINES TERMINATED BY …]
//! [IGNORE n LINES] [(columns)]`: the client sends the file, whose rows are loaded as a COPY's
//! are (`copy.rs`): all or none. MySQL takes LOCAL to mean IGNORE (a row whose unique key is
//! taken is skipped with a warning); here that needs IGNORE written, else such a row fails the
//! load with the shard's error, rather than leaving out rows unseen.

use keyshard_types::Dialect;

use crate::copy::{CopyIn, Format, column_count, one_char};
use crate::error::{Error, ErrorKind};

/// `sql` as a LOAD DATA statement: `Some(Ok)` for one the proxy takes, `Some(Err)` for one it
/// refuses (a server-side file, user variables, SET), `None` for other statements.
pub(crate) fn parse(sql: &str) -> Option<Result<CopyIn, Error>> {
    let tokens = lex(sql.trim().trim_end_matches(';'));
    let mut t = Tokens { tokens, at: 0 };
    if !(t.word("load") && t.word("data")) {
        return None;
    }
    Some(statement(&mut t))
}

fn statement(t: &mut Tokens) -> Result<CopyIn, Error> {
    let _ = t.word("low_priority") || t.word("concurrent");
    if !t.word("local") {
        return Err(Error::unsupported(
            "LOAD DATA INFILE without LOCAL (files on the server are the shards' business)",
        ));
    }
    if !t.word("infile") {
        return Err(syntax("INFILE"));
    }
    let file = t.string().ok_or_else(|| syntax("the file name"))?;
    let verb = if t.word("replace") {
        "REPLACE INTO"
    } else if t.word("ignore") {
        "INSERT IGNORE INTO"
    } else {
        "INSERT INTO"
    };
    if !(t.word("into") && t.word("table")) {
        return Err(syntax("INTO TABLE"));
    }
    let table = t.name().ok_or_else(|| syntax("the table"))?;
    let (mut delimiter, mut enclosed, mut escaped) = ('\t', None, Some('\\'));
    let mut skip = 0;
    loop {
        if t.word("character") {
            t.word("set");
            let charset = t.name().unwrap_or_default().to_ascii_lowercase();
            if !matches!(charset.as_str(), "utf8" | "utf8mb4" | "utf8mb3" | "binary") {
                return Err(Error::unsupported(format!("LOAD DATA in {charset}")));
            }
        } else if t.word("fields") || t.word("columns") {
            loop {
                if t.word("terminated") && t.word("by") {
                    delimiter = one(&t.string().ok_or_else(|| syntax("TERMINATED BY"))?)?;
                } else if t.word("optionally") || t.peek_word("enclosed") {
                    t.word("enclosed");
                    t.word("by");
                    let quote = t.string().ok_or_else(|| syntax("ENCLOSED BY"))?;
                    enclosed = if quote.is_empty() {
                        None
                    } else {
                        Some(one(&quote)?)
                    };
                } else if t.word("escaped") && t.word("by") {
                    let escape = t.string().ok_or_else(|| syntax("ESCAPED BY"))?;
                    escaped = if escape.is_empty() {
                        None
                    } else {
                        Some(one(&escape)?)
                    };
                } else {
                    break;
                }
            }
        } else if t.word("lines") {
            loop {
                if t.word("terminated") && t.word("by") {
                    let end = t.string().ok_or_else(|| syntax("LINES TERMINATED BY"))?;
                    if !matches!(end.as_str(), "\n" | "\r\n") {
                        return Err(Error::unsupported(
                            "lines terminated by other than a newline",
                        ));
                    }
                } else if t.word("starting") && t.word("by") {
                    if !t.string().unwrap_or_default().is_empty() {
                        return Err(Error::unsupported("LINES STARTING BY"));
                    }
                } else {
                    break;
                }
            }
        } else if t.word("ignore") {
            skip = t.number().ok_or_else(|| syntax("IGNORE n LINES"))?;
            if !(t.word("lines") || t.word("rows")) {
                return Err(syntax("IGNORE n LINES"));
            }
        } else {
            break;
        }
    }
    let mut target = table;
    if t.punct('(') {
        let mut columns = Vec::new();
        loop {
            match t.next() {
                Some(Token::Word(w)) if !w.starts_with('@') => columns.push(w),
                Some(Token::Word(_)) => {
                    return Err(Error::unsupported("LOAD DATA into user variables"));
                }
                _ => return Err(syntax("the column list")),
            }
            if t.punct(')') {
                break;
            }
            if !t.punct(',') {
                return Err(syntax("the column list"));
            }
        }
        target = format!("{target} ({})", columns.join(", "));
    }
    if t.word("set") {
        return Err(Error::unsupported("LOAD DATA … SET"));
    }
    if let Some(extra) = t.next() {
        return Err(syntax(&format!("the end of the statement, not {extra:?}")));
    }
    let format = match (enclosed, escaped) {
        (None, Some('\\')) => Format::Text {
            delimiter,
            null: "\\N".to_owned(),
            mysql: true,
        },
        (Some(quote), escape) => Format::Csv {
            delimiter,
            null: "\\N".to_owned(),
            quote,
            escape: escape.unwrap_or(quote),
            header: false,
        },
        (None, _) => {
            return Err(Error::unsupported("LOAD DATA with an escape other than \\"));
        }
    };
    Ok(CopyIn {
        verb,
        columns: column_count(&target),
        target,
        format,
        skip,
        rows_before: 0,
        dialect: Dialect::MySql,
        file,
    })
}

fn one(s: &str) -> Result<char, Error> {
    one_char(s).ok_or_else(|| {
        Error::unsupported(format!(
            "LOAD DATA with the separator '{s}' (one character is taken)"
        ))
    })
}

fn syntax(what: &str) -> Error {
    Error::new(
        ErrorKind::Syntax,
        format!("You have an error in your LOAD DATA syntax near {what}"),
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Str(String),
    Punct(char),
}

struct Tokens {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokens {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    /// What `read` makes of the next token, which is then taken; `None` leaves it.
    fn take<T>(&mut self, read: impl Fn(&Token) -> Option<T>) -> Option<T> {
        let taken = read(self.tokens.get(self.at)?)?;
        self.at += 1;
        Some(taken)
    }

    fn peek_word(&self, word: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word))
    }

    /// Takes `word` when it comes next.
    fn word(&mut self, word: &str) -> bool {
        self.take(|t| matches!(t, Token::Word(w) if w.eq_ignore_ascii_case(word)).then_some(()))
            .is_some()
    }

    fn punct(&mut self, c: char) -> bool {
        self.take(|t| (*t == Token::Punct(c)).then_some(()))
            .is_some()
    }

    fn string(&mut self) -> Option<String> {
        self.take(|t| match t {
            Token::Str(s) => Some(s.clone()),
            _ => None,
        })
    }

    fn name(&mut self) -> Option<String> {
        self.take(|t| match t {
            Token::Word(w) => Some(w.clone()),
            _ => None,
        })
    }

    fn number(&mut self) -> Option<usize> {
        self.take(|t| match t {
            Token::Word(w) => w.parse().ok(),
            _ => None,
        })
    }
}

/// Words (backquoted names unquoted), strings (MySQL escapes read) and punctuation.
fn lex(sql: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' | ')' | ',' => tokens.push(Token::Punct(c)),
            '\'' | '"' => {
                let mut s = String::new();
                while let Some(c2) = chars.next() {
                    match c2 {
                        '\\' => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some('0') => s.push('\0'),
                            Some(other) => s.push(other),
                            None => break,
                        },
                        q if q == c => {
                            if chars.peek() == Some(&c) {
                                chars.next();
                                s.push(c);
                            } else {
                                break;
                            }
                        }
                        other => s.push(other),
                    }
                }
                tokens.push(Token::Str(s));
            }
            '`' => {
                let mut s = String::new();
                for c2 in chars.by_ref() {
                    if c2 == '`' {
                        break;
                    }
                    s.push(c2);
                }
                tokens.push(Token::Word(format!("`{s}`")));
            }
            c => {
                let mut w = String::from(c);
                while let Some(&c2) = chars.peek() {
                    if c2.is_whitespace() || matches!(c2, '(' | ')' | ',' | '\'' | '"') {
                        break;
                    }
                    w.push(c2);
                    chars.next();
                }
                tokens.push(Token::Word(w));
            }
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use keyshard_types::Value;

    use super::*;

    #[test]
    fn statements() {
        let load =
            parse("LOAD DATA LOCAL INFILE '/tmp/o.tsv' INTO TABLE t_order (user_id, status)")
                .unwrap()
                .unwrap();
        assert_eq!(load.file, "/tmp/o.tsv");
        assert_eq!(load.verb, "INSERT INTO");
        assert_eq!(load.target, "t_order (user_id, status)");
        assert_eq!(load.columns, Some(2));
        let rows = load.rows("1\ta\\tb\n2\t\\N\n").unwrap();
        assert_eq!(
            rows,
            [
                vec![Value::Text("1".into()), Value::Text("a\tb".into())],
                vec![Value::Text("2".into()), Value::Null],
            ]
        );
        let csv = parse(
            "load data local infile 'x.csv' replace into table t_order fields terminated by ',' \
             optionally enclosed by '\"' lines terminated by '\\r\\n' ignore 1 lines \
             (user_id, status)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(csv.verb, "REPLACE INTO");
        assert_eq!(
            csv.rows("user_id,status\r\n3,\"x, y\"\r\n").unwrap(),
            [vec![Value::Text("3".into()), Value::Text("x, y".into())]]
        );
        assert!(
            parse("LOAD DATA INFILE '/etc/passwd' INTO TABLE t")
                .unwrap()
                .is_err()
        );
        assert!(
            parse("LOAD DATA LOCAL INFILE 'f' INTO TABLE t (@a, b)")
                .unwrap()
                .is_err()
        );
        assert!(
            parse("LOAD DATA LOCAL INFILE 'f' INTO TABLE t SET a = 1")
                .unwrap()
                .is_err()
        );
        assert!(parse("SELECT 1").is_none());
    }
}
