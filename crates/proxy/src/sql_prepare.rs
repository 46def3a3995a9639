//! Prepared statements made with SQL rather than the protocol: MySQL's `PREPARE s FROM '…'`,
//! `EXECUTE s USING @a, …` and `{DEALLOCATE | DROP} PREPARE s`; PostgreSQL's `PREPARE s [(types)]
//! AS …`, `EXECUTE s(args)` and `DEALLOCATE [PREPARE] s | ALL`. The text is kept in the session;
//! an execution binds the arguments into it as SQL and runs it as a statement sent as text.

use keyshard_types::Dialect;

use crate::error::{Error, ErrorKind};
use crate::words::split_top_level;

/// The most SQL-level prepared statements one session keeps (MySQL's
/// `max_prepared_stmt_count`).
pub(crate) const MAX_STATEMENTS: usize = 16_382;

/// A SQL-level prepared-statement command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command<'a> {
    /// `PREPARE name FROM 'text'` / `FROM @variable` / `AS text`.
    Prepare { name: String, text: Text<'a> },
    /// `EXECUTE name USING @a, …` (each a user variable) / `EXECUTE name(expr, …)`.
    Execute { name: String, args: Vec<&'a str> },
    /// `DEALLOCATE PREPARE name`; `None`: all of them.
    Deallocate { name: Option<String> },
}

/// Where a PREPARE's statement text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Text<'a> {
    /// Written in the command.
    Sql(String),
    /// In a MySQL user variable (lower-cased name).
    Variable(&'a str),
}

/// The error for a statement name nothing was prepared under, as `dialect` words it.
pub(crate) fn unknown(dialect: Dialect, name: &str, verb: &str) -> Error {
    let message = match dialect {
        Dialect::MySql => format!("Unknown prepared statement handler ({name}) given to {verb}"),
        Dialect::Postgres => format!("prepared statement \"{name}\" does not exist"),
    };
    Error::new(ErrorKind::UnknownStatement, message)
}

/// The command `sql` is, if it is one.
pub(crate) fn parse(sql: &str, dialect: Dialect) -> Option<Command<'_>> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    let (verb, rest) = split_word(text)?;
    let verb = verb.to_ascii_lowercase();
    match (verb.as_str(), dialect) {
        ("prepare", _) => {
            let (name, rest) = split_name(rest)?;
            let (keyword, body) = split_word(rest)?;
            let text = match (keyword.to_ascii_lowercase().as_str(), dialect) {
                ("from", Dialect::MySql) => match body.trim().strip_prefix('@') {
                    Some(variable) => Text::Variable(variable),
                    None => Text::Sql(unquote(body)?),
                },
                (_, Dialect::Postgres) => {
                    // `PREPARE s (int, text) AS …`: the types are the statement's business.
                    let body = match rest.trim_start().strip_prefix('(') {
                        Some(typed) => typed.split_once(')')?.1,
                        None => rest,
                    };
                    let (keyword, body) = split_word(body)?;
                    if !keyword.eq_ignore_ascii_case("as") {
                        return None;
                    }
                    Text::Sql(body.trim().to_owned())
                }
                _ => return None,
            };
            Some(Command::Prepare { name, text })
        }
        ("execute", Dialect::MySql) => {
            let (name, rest) = split_name(rest)?;
            let args = match split_word(rest) {
                None => Vec::new(),
                Some((using, list)) if using.eq_ignore_ascii_case("using") => list
                    .split(',')
                    .map(|a| a.trim().strip_prefix('@'))
                    .collect::<Option<Vec<_>>>()?,
                Some(_) => return None,
            };
            Some(Command::Execute { name, args })
        }
        ("execute", Dialect::Postgres) => {
            let (name, rest) = split_name(rest)?;
            let rest = rest.trim();
            let args = if rest.is_empty() {
                Vec::new()
            } else {
                let list = rest.strip_prefix('(')?.strip_suffix(')')?;
                split_top_level(list).into_iter().map(str::trim).collect()
            };
            Some(Command::Execute { name, args })
        }
        ("deallocate" | "drop", _) => {
            let rest = match split_word(rest) {
                Some((prepare, rest)) if prepare.eq_ignore_ascii_case("prepare") => rest,
                _ if verb == "drop" => return None,
                _ => rest,
            };
            let name = rest.trim();
            if name.eq_ignore_ascii_case("all") && dialect == Dialect::Postgres {
                return Some(Command::Deallocate { name: None });
            }
            let (name, rest) = split_name(name)?;
            rest.trim()
                .is_empty()
                .then_some(Command::Deallocate { name: Some(name) })
        }
        _ => None,
    }
}

/// The first word and what follows it.
fn split_word(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    (end > 0).then(|| (&text[..end], &text[end..]))
}

/// A statement name (an identifier, quoted or not; compared case-insensitively unless
/// double-quoted) and what follows it.
fn split_name(text: &str) -> Option<(String, &str)> {
    let text = text.trim_start();
    for quote in ['"', '`'] {
        if let Some(rest) = text.strip_prefix(quote) {
            let end = rest.find(quote)?;
            let name = &rest[..end];
            let name = if quote == '"' {
                name.to_owned()
            } else {
                name.to_lowercase()
            };
            return Some((name, &rest[end + 1..]));
        }
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    (end > 0).then(|| (text[..end].to_lowercase(), &text[end..]))
}

/// A MySQL string literal's content: `'…'` or `"…"`, with doubled quotes and backslash escapes.
fn unquote(literal: &str) -> Option<String> {
    let literal = literal.trim();
    let quote = literal.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let body = literal.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                other => out.push(other),
            },
            c if c == quote => {
                // A doubled quote; a lone one would have ended the literal.
                if chars.next()? != quote {
                    return None;
                }
                out.push(quote);
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
