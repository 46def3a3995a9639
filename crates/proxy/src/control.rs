//! Statements that start and end transactions, recognised from their text in either dialect.

use keyshard_backend::{Characteristics, Isolation};

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
mod tests;
