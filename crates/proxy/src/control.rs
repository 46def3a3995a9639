//! Statements that start and end transactions, recognised from their text in either dialect.

use crate::words::starts_with_any;

/// What a transaction-control statement asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// BEGIN, START TRANSACTION.
    Begin,
    /// COMMIT, END; `chain`: `AND CHAIN`, a new transaction begins at once.
    Commit {
        /// `AND CHAIN`.
        chain: bool,
    },
    /// ROLLBACK, ABORT; `chain`: `AND CHAIN`.
    Rollback {
        /// `AND CHAIN`.
        chain: bool,
    },
    /// `SET autocommit = 0|1` (MySQL).
    Autocommit(bool),
    /// `SAVEPOINT name`.
    Savepoint(SavepointName),
    /// `ROLLBACK [WORK] TO [SAVEPOINT] name`.
    RollbackTo(SavepointName),
    /// `RELEASE [SAVEPOINT] name`.
    Release(SavepointName),
}

/// A savepoint's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavepointName {
    /// As written, quotes included: what the shards are sent.
    pub sql: String,
    /// As names compare: a double-quoted name exactly, any other folded to lower case
    /// (PostgreSQL folds unquoted names; MySQL compares savepoint names case-insensitively).
    pub key: String,
}

impl SavepointName {
    /// The name `text` when it is one identifier, plain or quoted.
    fn parse(text: &str) -> Option<Self> {
        let quoted = |q: char| {
            text.strip_prefix(q)?
                .strip_suffix(q)
                .filter(|inner| !inner.is_empty() && !inner.contains(q))
        };
        let key = if let Some(inner) = quoted('"') {
            inner.to_owned()
        } else if let Some(inner) = quoted('`') {
            inner.to_lowercase()
        } else if !text.is_empty()
            && !text.starts_with(|c: char| c.is_ascii_digit())
            && text
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            text.to_lowercase()
        } else {
            return None;
        };
        Some(Self {
            sql: text.to_owned(),
            key,
        })
    }
}

/// The control statement `sql` is, if it is one.
pub fn parse(sql: &str) -> Option<Control> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    let known = [
        "begin",
        "start",
        "commit",
        "end",
        "rollback",
        "abort",
        "set",
        "savepoint",
        "release",
    ];
    if !starts_with_any(text, &known) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    Some(match words.as_slice() {
        ["begin"] | ["begin", "work" | "transaction"] => Control::Begin,
        // Isolation levels and access modes are the shards' defaults.
        ["begin", "transaction" | "work" | "isolation" | "read", ..]
        | ["start", "transaction", ..] => Control::Begin,
        ["commit" | "end", rest @ ..] => Control::Commit {
            chain: chain(rest)?,
        },
        ["savepoint", _, ..] => Control::Savepoint(name_after(text, 1)?),
        ["rollback" | "abort", rest @ ..] => {
            let skip = usize::from(matches!(rest.first(), Some(&("work" | "transaction"))));
            match &rest[skip..] {
                ["to", "savepoint", _, ..] => Control::RollbackTo(name_after(text, skip + 3)?),
                ["to", _, ..] => Control::RollbackTo(name_after(text, skip + 2)?),
                _ => Control::Rollback {
                    chain: chain(rest)?,
                },
            }
        }
        ["release", "savepoint", _, ..] => Control::Release(name_after(text, 2)?),
        ["release", _, ..] => Control::Release(name_after(text, 1)?),
        ["set", ..] => {
            let compact: String = lower[3..].chars().filter(|c| !c.is_whitespace()).collect();
            let setting = compact
                .strip_prefix("session")
                .or_else(|| compact.strip_prefix("@@session."))
                .or_else(|| compact.strip_prefix("@@"))
                .unwrap_or(&compact);
            match setting
                .strip_prefix("autocommit")?
                .trim_start_matches(['=', ' '])
            {
                "0" | "off" | "false" => Control::Autocommit(false),
                "1" | "on" | "true" => Control::Autocommit(true),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The savepoint name that follows the first `words` words of `text`.
fn name_after(text: &str, words: usize) -> Option<SavepointName> {
    let mut rest = text;
    for _ in 0..words {
        rest = rest.trim_start();
        rest = &rest[rest.find(char::is_whitespace)?..];
    }
    SavepointName::parse(rest.trim())
}

/// What follows COMMIT or ROLLBACK: `[WORK | TRANSACTION] [AND [NO] CHAIN]`; whether it
/// chains. MySQL's `RELEASE` (disconnect) is not understood.
fn chain(rest: &[&str]) -> Option<bool> {
    let rest = match rest {
        ["work" | "transaction", rest @ ..] => rest,
        rest => rest,
    };
    match rest {
        [] | ["and", "no", "chain"] => Some(false),
        ["and", "chain"] => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dialects_statements() {
        let name = |sql: &str, key: &str| SavepointName {
            sql: sql.to_owned(),
            key: key.to_owned(),
        };
        for (sql, control) in [
            ("BEGIN", Control::Begin),
            ("begin work;", Control::Begin),
            ("START TRANSACTION READ WRITE", Control::Begin),
            ("BEGIN ISOLATION LEVEL SERIALIZABLE", Control::Begin),
            ("commit", Control::Commit { chain: false }),
            ("END", Control::Commit { chain: false }),
            ("COMMIT WORK AND CHAIN", Control::Commit { chain: true }),
            ("commit and no chain", Control::Commit { chain: false }),
            ("ROLLBACK WORK", Control::Rollback { chain: false }),
            ("rollback and chain", Control::Rollback { chain: true }),
            ("abort", Control::Rollback { chain: false }),
            ("SET autocommit = 0", Control::Autocommit(false)),
            ("set @@session.autocommit=ON", Control::Autocommit(true)),
            ("SET SESSION autocommit = 1", Control::Autocommit(true)),
            ("SAVEPOINT Sp1", Control::Savepoint(name("Sp1", "sp1"))),
            (
                "savepoint \"Sp 1\"",
                Control::Savepoint(name("\"Sp 1\"", "Sp 1")),
            ),
            (
                "ROLLBACK TO SAVEPOINT a",
                Control::RollbackTo(name("a", "a")),
            ),
            (
                "rollback work to `A`",
                Control::RollbackTo(name("`A`", "a")),
            ),
            (
                "RELEASE SAVEPOINT _pg3_1",
                Control::Release(name("_pg3_1", "_pg3_1")),
            ),
            ("release b;", Control::Release(name("b", "b"))),
        ] {
            assert_eq!(parse(sql), Some(control), "{sql}");
        }
        for sql in [
            "SET NAMES utf8",
            "SET autocommit_x = 1",
            "begin_x",
            "SELECT 1",
            "COMMIT AND CHAIN RELEASE",
            "COMMIT PREPARED 'x'",
            "ROLLBACK PREPARED 'x'",
            "SAVEPOINT 1a",
            "SAVEPOINT a b",
            "SAVEPOINT \"a\"\"b\"",
            "ROLLBACK TO",
            "",
        ] {
            assert_eq!(parse(sql), None, "{sql}");
        }
    }
}
