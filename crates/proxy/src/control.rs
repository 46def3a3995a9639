//! Statements that start and end transactions, recognised from their text in either dialect.

use crate::words::starts_with_any;

/// What a transaction-control statement asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// BEGIN, START TRANSACTION.
    Begin,
    /// COMMIT, END.
    Commit,
    /// ROLLBACK, ABORT.
    Rollback,
    /// `SET autocommit = 0|1` (MySQL).
    Autocommit(bool),
}

/// The control statement `sql` is, if it is one. `ROLLBACK TO SAVEPOINT` and the like are not.
pub fn parse(sql: &str) -> Option<Control> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    let known = [
        "begin", "start", "commit", "end", "rollback", "abort", "set",
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
        ["commit"]
        | ["commit", "work" | "transaction"]
        | ["end"]
        | ["end", "work" | "transaction"] => Control::Commit,
        ["rollback"]
        | ["rollback", "work" | "transaction"]
        | ["abort"]
        | ["abort", "work" | "transaction"] => Control::Rollback,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dialects_statements() {
        for (sql, control) in [
            ("BEGIN", Control::Begin),
            ("begin work;", Control::Begin),
            ("START TRANSACTION READ WRITE", Control::Begin),
            ("BEGIN ISOLATION LEVEL SERIALIZABLE", Control::Begin),
            ("commit", Control::Commit),
            ("END", Control::Commit),
            ("ROLLBACK WORK", Control::Rollback),
            ("abort", Control::Rollback),
            ("SET autocommit = 0", Control::Autocommit(false)),
            ("set @@session.autocommit=ON", Control::Autocommit(true)),
            ("SET SESSION autocommit = 1", Control::Autocommit(true)),
        ] {
            assert_eq!(parse(sql), Some(control), "{sql}");
        }
        for sql in [
            "ROLLBACK TO SAVEPOINT a",
            "SET NAMES utf8",
            "SET autocommit_x = 1",
            "begin_x",
            "SELECT 1",
            "",
        ] {
            assert_eq!(parse(sql), None, "{sql}");
        }
    }
}
