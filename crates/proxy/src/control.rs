//! Statements that start and end transactions, recognised from their text in either dialect.

use keyshard_backend::{Characteristics, Isolation};

use crate::words::starts_with_any;

/// What a transaction-control statement asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// BEGIN, START TRANSACTION, with an isolation level or access mode.
    Begin(Characteristics),
    /// `SET [SESSION] TRANSACTION …`, `SET SESSION CHARACTERISTICS AS TRANSACTION …` or
    /// `SET transaction_isolation = …`.
    SetTransaction(Scope, Characteristics),
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

/// What a `SET … TRANSACTION` applies to, as written; the dialect decides what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `SET TRANSACTION`: MySQL's next transaction, PostgreSQL's current one.
    Transaction,
    /// `SET SESSION TRANSACTION`, `SET SESSION CHARACTERISTICS AS TRANSACTION`,
    /// `default_transaction_isolation`: every later transaction.
    Session,
    /// `SET transaction_isolation = …` and the like: the session's in MySQL, the current
    /// transaction's in PostgreSQL.
    Variable,
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
        ["begin", rest @ ..] => {
            let rest = match rest {
                ["work" | "transaction", rest @ ..] => rest,
                rest => rest,
            };
            Control::Begin(characteristics(rest)?)
        }
        ["start", "transaction", rest @ ..] => Control::Begin(characteristics(rest)?),
        ["set", "transaction", rest @ ..] => {
            Control::SetTransaction(Scope::Transaction, characteristics(rest)?)
        }
        ["set", "session", "transaction", rest @ ..]
        | [
            "set",
            "session",
            "characteristics",
            "as",
            "transaction",
            rest @ ..,
        ] => Control::SetTransaction(Scope::Session, characteristics(rest)?),
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
        ["set", ..] => set_variable(&lower[3..])?,
        _ => return None,
    })
}

/// `SET [SESSION] name = value` for autocommit and the transaction characteristics.
fn set_variable(assignment: &str) -> Option<Control> {
    let assignment = assignment.replacen(" to ", " = ", 1);
    let compact: String = assignment.chars().filter(|c| !c.is_whitespace()).collect();
    let session = compact
        .strip_prefix("session")
        .or_else(|| compact.strip_prefix("@@session."));
    let bare = compact.strip_prefix("@@");
    let setting = session.or(bare).unwrap_or(&compact);
    let (name, value) = setting.split_once('=')?;
    let value = value.trim_matches(['\'', '"']);
    let flag = || match value {
        "0" | "off" | "false" => Some(false),
        "1" | "on" | "true" => Some(true),
        _ => None,
    };
    // `SET @@transaction_isolation` (no scope) is MySQL's next transaction only.
    let scope = match bare {
        Some(_) => Scope::Transaction,
        None => Scope::Variable,
    };
    let read_only = |scope, read_only| {
        Control::SetTransaction(
            scope,
            Characteristics {
                isolation: None,
                read_only: Some(read_only),
            },
        )
    };
    let isolation = |scope| {
        Some(Control::SetTransaction(
            scope,
            Characteristics {
                isolation: Some(Isolation::from_name(value)?),
                read_only: None,
            },
        ))
    };
    Some(match name {
        "autocommit" => Control::Autocommit(flag()?),
        "transaction_isolation" | "tx_isolation" => isolation(scope)?,
        "default_transaction_isolation" => isolation(Scope::Session)?,
        "transaction_read_only" | "tx_read_only" => read_only(scope, flag()?),
        "default_transaction_read_only" => read_only(Scope::Session, flag()?),
        _ => return None,
    })
}

/// Transaction characteristics, in either dialect: `ISOLATION LEVEL …`, `READ ONLY`,
/// `READ WRITE`, commas between them or not. PostgreSQL's `[NOT] DEFERRABLE` and MySQL's `WITH
/// CONSISTENT SNAPSHOT` are taken and have no effect.
fn characteristics(words: &[&str]) -> Option<Characteristics> {
    let words: Vec<&str> = words
        .iter()
        .flat_map(|w| w.split(','))
        .filter(|w| !w.is_empty())
        .collect();
    let mut characteristics = Characteristics::default();
    let mut rest = words.as_slice();
    while !rest.is_empty() {
        let (level, taken) = match rest {
            ["isolation", "level", "read", "uncommitted", ..] => (Isolation::ReadUncommitted, 4),
            ["isolation", "level", "read", "committed", ..] => (Isolation::ReadCommitted, 4),
            ["isolation", "level", "repeatable", "read", ..] => (Isolation::RepeatableRead, 4),
            ["isolation", "level", "serializable", ..] => (Isolation::Serializable, 3),
            ["read", mode @ ("only" | "write"), ..] => {
                characteristics.read_only = Some(*mode == "only");
                rest = &rest[2..];
                continue;
            }
            ["not", "deferrable", ..] | ["with", "consistent", "snapshot", ..] => {
                rest = &rest[2 + usize::from(rest[0] == "with")..];
                continue;
            }
            ["deferrable", ..] => {
                rest = &rest[1..];
                continue;
            }
            _ => return None,
        };
        characteristics.isolation = Some(level);
        rest = &rest[taken..];
    }
    Some(characteristics)
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
        let none = Characteristics::default();
        let serializable = Characteristics {
            isolation: Some(Isolation::Serializable),
            read_only: None,
        };
        let read_only = Characteristics {
            isolation: None,
            read_only: Some(true),
        };
        let read_write = Characteristics {
            isolation: None,
            read_only: Some(false),
        };
        let serializable_read_only = serializable.or(read_only);
        let name = |sql: &str, key: &str| SavepointName {
            sql: sql.to_owned(),
            key: key.to_owned(),
        };
        for (sql, control) in [
            ("BEGIN", Control::Begin(none)),
            ("begin work;", Control::Begin(none)),
            ("START TRANSACTION READ WRITE", Control::Begin(read_write)),
            (
                "BEGIN ISOLATION LEVEL SERIALIZABLE",
                Control::Begin(serializable),
            ),
            (
                "begin transaction isolation level serializable, read only deferrable",
                Control::Begin(serializable_read_only),
            ),
            (
                "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                Control::Begin(read_only),
            ),
            (
                "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                Control::SetTransaction(Scope::Transaction, serializable),
            ),
            (
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE READ ONLY",
                Control::SetTransaction(Scope::Session, serializable_read_only),
            ),
            (
                "SET SESSION TRANSACTION READ ONLY",
                Control::SetTransaction(Scope::Session, read_only),
            ),
            (
                "set session transaction_isolation = 'SERIALIZABLE'",
                Control::SetTransaction(Scope::Variable, serializable),
            ),
            (
                "SET @@transaction_isolation='serializable'",
                Control::SetTransaction(Scope::Transaction, serializable),
            ),
            (
                "SET default_transaction_isolation TO 'serializable'",
                Control::SetTransaction(Scope::Session, serializable),
            ),
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
            "BEGIN ISOLATION LEVEL SNAPSHOT",
            "SET TRANSACTION ISOLATION LEVEL",
            "SET transaction_isolation = 'nonsense'",
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
