//! Which catalog statement a text is, read from its tokens: names may be quoted and qualified
//! by the database (`` `sharding_db`.`t_order` ``, `FROM t IN sharding_db`), and `LIKE`
//! filters. A form the proxy cannot answer exactly (`WHERE …`) is refused rather than sent to
//! a shard, whose answer would name its actual tables.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// What a catalog statement asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `SHOW [FULL] TABLES [{FROM | IN} db] [LIKE 'pattern']`.
    Tables {
        full: bool,
        database: Option<String>,
        like: Option<String>,
    },
    /// `SHOW [FULL] {COLUMNS | FIELDS} {FROM | IN} t [{FROM | IN} db] [LIKE 'pattern']`,
    /// `{DESCRIBE | DESC} t [column | 'pattern']`.
    Columns {
        table: Name,
        full: bool,
        like: Option<String>,
    },
    /// `SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern']`.
    TableStatus {
        database: Option<String>,
        like: Option<String>,
    },
    /// `SHOW CREATE TABLE t`.
    CreateTable { table: Name },
    /// `SHOW GRANTS [FOR CURRENT_USER[()] | FOR user]`: `None` for the session's own user.
    Grants { user: Option<String> },
    /// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db` (mariadb-dump's `--databases`).
    CreateDatabase { name: String, if_not_exists: bool },
    /// `SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db]`.
    Indexes { table: Name },
    /// One of these statements in a form the proxy does not answer (`… WHERE expr`).
    Refused,
}

impl Request {
    /// The database it names, if any.
    pub(crate) fn database(&self) -> Option<&str> {
        match self {
            Request::Tables { database, .. } | Request::TableStatus { database, .. } => {
                database.as_deref()
            }
            Request::Columns { table, .. }
            | Request::CreateTable { table }
            | Request::Indexes { table } => table.database.as_deref(),
            Request::CreateDatabase { name, .. } => Some(name),
            Request::Grants { .. } | Request::Refused => None,
        }
    }
}

/// A table name, with the database it was qualified by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name {
    pub(crate) database: Option<String>,
    pub(crate) table: String,
}

/// The catalog statement `sql`, led by `SHOW` or `DESCRIBE` (see `Intent::of`), is, if it is
/// one.
pub(crate) fn request(sql: &str) -> Option<Request> {
    let tokens: Vec<Token> = Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .ok()?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let mut t = Tokens { tokens, at: 0 };
    let request = if t.keyword("describe") || t.keyword("desc") {
        let table = t.name()?;
        // `DESCRIBE t col` or `DESCRIBE t 'pattern'`: the columns it matches.
        let like = t.word_or_string();
        Request::Columns {
            table,
            full: false,
            like,
        }
    } else {
        let _ = t.keyword("show");
        let full = t.keyword("full");
        if !full && t.keyword("grants") {
            let user = match t.keyword("for") {
                false => None,
                true if t.keyword("current_user") => {
                    if t.peek() == Some(&Token::LParen) {
                        t.at += 1;
                        (t.peek() == Some(&Token::RParen)).then_some(())?;
                        t.at += 1;
                    }
                    None
                }
                // `root@'%'` reads as the word `root@` and a string.
                true => {
                    let user = t.word_or_string()?;
                    Some(user.split('@').next().unwrap_or_default().to_owned())
                }
            };
            // `user@host`: the host is not matched (as `authority` does not), however the
            // tokenizer splits it.
            if user.is_some() {
                while t.peek().is_some_and(|p| *p != Token::SemiColon) {
                    t.at += 1;
                }
            }
            Request::Grants { user }
        } else if !full && t.keyword("table") {
            t.keyword("status").then_some(())?;
            let database = t.from().map(|n| n.table);
            Request::TableStatus {
                database,
                like: t.like(),
            }
        } else if t.keyword("tables") {
            let database = t.from().map(|n| n.table);
            let like = t.like();
            Request::Tables {
                full,
                database,
                like,
            }
        } else if t.keyword("columns") || t.keyword("fields") {
            t.take_from_or_in().then_some(())?;
            let mut table = t.name()?;
            if let Some(database) = t.from() {
                table.database = Some(database.table);
            }
            let like = t.like();
            Request::Columns { table, full, like }
        } else if !full && t.keyword("create") {
            if t.keyword("table") {
                Request::CreateTable { table: t.name()? }
            } else if t.keyword("database") || t.keyword("schema") {
                let if_not_exists = t.keyword("if") && t.keyword("not") && t.keyword("exists");
                Request::CreateDatabase {
                    name: t.word()?,
                    if_not_exists,
                }
            } else {
                return None;
            }
        } else if !full && (t.keyword("index") || t.keyword("indexes") || t.keyword("keys")) {
            t.take_from_or_in().then_some(())?;
            let mut table = t.name()?;
            if let Some(database) = t.from() {
                table.database = Some(database.table);
            }
            Request::Indexes { table }
        } else {
            return None;
        }
    };
    Some(match t.rest() {
        [] | [Token::SemiColon] => request,
        _ => Request::Refused,
    })
}

struct Tokens {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokens {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).filter(|t| **t != Token::EOF)
    }

    /// Takes the unquoted word `keyword` if it comes next.
    fn keyword(&mut self, keyword: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Word(w))
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword));
        self.at += usize::from(found);
        found
    }

    fn take_from_or_in(&mut self) -> bool {
        self.keyword("from") || self.keyword("in")
    }

    /// `{FROM | IN} name`, when it comes next.
    fn from(&mut self) -> Option<Name> {
        let at = self.at;
        if self.take_from_or_in()
            && let Some(name) = self.name()
        {
            return Some(name);
        }
        self.at = at;
        None
    }

    /// `name` or `database.name`, quoted or not.
    fn name(&mut self) -> Option<Name> {
        let first = self.word()?;
        if self.peek() == Some(&Token::Period) {
            self.at += 1;
            let table = self.word()?;
            return Some(Name {
                database: Some(first),
                table,
            });
        }
        Some(Name {
            database: None,
            table: first,
        })
    }

    fn word(&mut self) -> Option<String> {
        let Some(Token::Word(w)) = self.peek() else {
            return None;
        };
        let value = w.value.clone();
        self.at += 1;
        Some(value)
    }

    fn string(&mut self) -> Option<String> {
        let Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) = self.peek() else {
            return None;
        };
        let value = s.clone();
        self.at += 1;
        Some(value)
    }

    fn word_or_string(&mut self) -> Option<String> {
        self.string().or_else(|| self.word())
    }

    /// `LIKE 'pattern'`, when it comes next.
    fn like(&mut self) -> Option<String> {
        let at = self.at;
        if self.keyword("like")
            && let Some(pattern) = self.string()
        {
            return Some(pattern);
        }
        self.at = at;
        None
    }

    fn rest(&self) -> &[Token] {
        let end = self
            .tokens
            .iter()
            .position(|t| *t == Token::EOF)
            .unwrap_or(self.tokens.len());
        &self.tokens[self.at.min(end)..end]
    }
}
