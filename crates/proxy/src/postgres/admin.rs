//! The statements PostgreSQL clients send to set up and inspect a session (`SET
//! extra_float_digits = 3`, `SET application_name`, `SHOW TRANSACTION ISOLATION LEVEL`, `SELECT
//! version()`, `select current_schema()`, `DISCARD ALL`, …), answered by the proxy from the
//! session's settings: shards never see them, and they must work before anything else does.

use std::collections::BTreeMap;

use keyshard_backend::{Characteristics, Column, Isolation};
use keyshard_router::Value;

use super::auth::SERVER_VERSION;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::Session;
use crate::words::starts_with_any;

/// The settings a session starts with, beside the client's startup parameters. Names are
/// lower case; `SHOW` answers them.
const DEFAULTS: &[(&str, &str)] = &[
    ("application_name", ""),
    ("client_encoding", "UTF8"),
    ("datestyle", "ISO, MDY"),
    ("default_transaction_isolation", "read committed"),
    ("default_transaction_read_only", "off"),
    ("extra_float_digits", "1"),
    ("integer_datetimes", "on"),
    ("intervalstyle", "postgres"),
    ("is_superuser", "off"),
    ("lc_collate", "C.UTF-8"),
    ("lc_ctype", "C.UTF-8"),
    ("lc_messages", "C.UTF-8"),
    ("max_identifier_length", "63"),
    ("search_path", "\"$user\", public"),
    ("server_encoding", "UTF8"),
    ("server_version", SERVER_VERSION),
    ("server_version_num", "160000"),
    ("standard_conforming_strings", "on"),
    ("statement_timeout", "0"),
    ("timezone", "UTC"),
    ("transaction_isolation", "read committed"),
    ("transaction_read_only", "off"),
];

/// A session's settings as `SET` left them.
#[derive(Debug, Clone)]
pub struct Settings {
    values: BTreeMap<String, String>,
    user: String,
    database: String,
    backend_pid: u32,
}

impl Settings {
    /// The defaults, overridden by the client's startup parameters.
    pub fn new(
        user: &str,
        database: &str,
        backend_pid: u32,
        startup: &BTreeMap<String, String>,
    ) -> Self {
        let mut values: BTreeMap<String, String> = DEFAULTS
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        for (name, value) in startup {
            if !matches!(
                name.as_str(),
                "user" | "database" | "options" | "replication"
            ) {
                values.insert(name.to_ascii_lowercase(), value.clone());
            }
        }
        Self {
            values,
            user: user.to_owned(),
            database: database.to_owned(),
            backend_pid,
        }
    }

    /// Takes the transaction settings from `session`, which owns them (`SHOW
    /// transaction_isolation` inside a transaction shows that transaction's).
    pub fn follow(&mut self, session: &Session) {
        let default = session.characteristics;
        let current = session
            .transaction
            .as_ref()
            .map_or(default, |t| t.characteristics().or(default));
        let level = |c: Characteristics| match c.isolation {
            None | Some(Isolation::ReadCommitted) => "read committed",
            Some(Isolation::ReadUncommitted) => "read uncommitted",
            Some(Isolation::RepeatableRead) => "repeatable read",
            Some(Isolation::Serializable) => "serializable",
        };
        let flag = |c: Characteristics| match c.read_only {
            Some(true) => "on",
            _ => "off",
        };
        // Written only when changed: this runs before every statement.
        for (name, value) in [
            ("transaction_isolation", level(current)),
            ("transaction_read_only", flag(current)),
            ("default_transaction_isolation", level(default)),
            ("default_transaction_read_only", flag(default)),
        ] {
            if self.values.get(name).map(String::as_str) != Some(value) {
                self.values.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// The first words of the statements [`answer`] handles.
const WORDS: &[&str] = &["set", "reset", "show", "select", "discard"];

/// The answer to `sql` when it is a session statement; `None` for everything else. A
/// statement the proxy answers itself carries its command tag.
pub fn answer(sql: &str, settings: &mut Settings) -> Option<Result<(Reply, String), Error>> {
    if !starts_with_any(sql, WORDS) {
        return None;
    }
    let text = sql.trim().trim_end_matches(';').trim_end();
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let done = |tag: &str| Some(Ok((Reply::done(), tag.to_owned())));
    match words.as_slice() {
        ["set", ..] => Some(set(text, settings).map(|()| (Reply::done(), "SET".to_owned()))),
        ["reset", "all"] => {
            let fresh = Settings::new(
                &settings.user,
                &settings.database,
                settings.backend_pid,
                &BTreeMap::new(),
            );
            *settings = fresh;
            done("RESET")
        }
        ["reset", name] => {
            let name = unquote(name);
            match DEFAULTS.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => settings.values.insert(name.to_owned(), (*v).to_owned()),
                None => settings.values.remove(name),
            };
            done("RESET")
        }
        ["discard", "all"] => done("DISCARD ALL"),
        ["show", "transaction", "isolation", "level"] => show("transaction_isolation", settings),
        ["show", "all"] => Some(Ok((
            rows(
                &["name", "setting"],
                settings
                    .values
                    .iter()
                    .map(|(n, v)| vec![Value::Text(n.clone()), Value::Text(v.clone())])
                    .collect(),
            ),
            "SHOW".to_owned(),
        ))),
        ["show", name] => show(unquote(name), settings),
        ["select", ..] => select(text, &lower, settings),
        _ => None,
    }
}

/// `SET [SESSION | LOCAL] name { TO | = } value [, …]` and `SET TIME ZONE value`.
fn set(text: &str, settings: &mut Settings) -> Result<(), Error> {
    let rest = text["set".len()..].trim_start();
    let rest = strip_word(rest, "session")
        .or_else(|| strip_word(rest, "local"))
        .unwrap_or(rest);
    let (name, value) =
        if let Some(value) = strip_word(rest, "time").and_then(|r| strip_word(r, "zone")) {
            ("timezone".to_owned(), value.trim())
        } else {
            let split = rest
                .find(|c: char| c == '=' || c.is_whitespace())
                .ok_or_else(|| syntax(text))?;
            let (name, value) = rest.split_at(split);
            let value = value.trim_start();
            let value = value
                .strip_prefix('=')
                .or_else(|| strip_word(value, "to"))
                .ok_or_else(|| syntax(text))?;
            (unquote(name.trim()).to_ascii_lowercase(), value.trim())
        };
    let value = if value.eq_ignore_ascii_case("default") {
        DEFAULTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned())
            .unwrap_or_default()
    } else {
        value
            .split(',')
            .map(|v| unquote(v.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if name == "client_encoding"
        && !matches!(
            value.to_ascii_uppercase().as_str(),
            "UTF8" | "UTF-8" | "UNICODE"
        )
    {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("Keyshard speaks only UTF8, not client_encoding {value}"),
        ));
    }
    settings.values.insert(name, value);
    Ok(())
}

fn show(name: &str, settings: &Settings) -> Option<Result<(Reply, String), Error>> {
    let answer = match settings.get(name) {
        Some(value) => Ok((
            rows(&[name], vec![vec![Value::Text(value.to_owned())]]),
            "SHOW".to_owned(),
        )),
        None => Err(Error::new(
            ErrorKind::Unsupported,
            format!("unrecognized configuration parameter \"{name}\""),
        )),
    };
    Some(answer)
}

/// `SELECT` of session functions and constants: `version()`, `current_schema()`,
/// `current_database()`, `current_user`, `pg_backend_pid()`, `current_setting('x')`, `1`.
fn select(text: &str, lower: &str, settings: &Settings) -> Option<Result<(Reply, String), Error>> {
    let list = lower["select".len()..].trim();
    let original = text["select".len()..].trim();
    // Only a list of plain items: anything with FROM or a clause is a real query.
    if list.is_empty() || list.contains(" from ") || list.contains(" where ") {
        return None;
    }
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut types = Vec::new();
    for (item, original) in split_items(list).into_iter().zip(split_items(original)) {
        let (expr, alias) = match item.rsplit_once(" as ") {
            Some((e, a)) => (e.trim(), Some(unquote(a.trim()).to_owned())),
            None => (item.trim(), None),
        };
        let compact: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
        let (name, value, type_name) = match compact.as_str() {
            "version()" => (
                "version",
                Value::Text(format!(
                    "PostgreSQL {SERVER_VERSION} on x86_64-pc-linux-gnu, Keyshard sharding proxy"
                )),
                "TEXT",
            ),
            "current_schema()" | "current_schema" => {
                ("current_schema", Value::Text("public".into()), "NAME")
            }
            "current_database()" => (
                "current_database",
                Value::Text(settings.database.clone()),
                "NAME",
            ),
            "current_user" | "session_user" | "user" | "current_role" => {
                (compact.as_str(), Value::Text(settings.user.clone()), "NAME")
            }
            "pg_backend_pid()" => (
                "pg_backend_pid",
                Value::Int(settings.backend_pid.into()),
                "INT4",
            ),
            "pg_is_in_recovery()" => ("pg_is_in_recovery", Value::Int(0), "BOOL"),
            _ => {
                if let Some(setting) = compact
                    .strip_prefix("current_setting('")
                    .and_then(|s| s.strip_suffix("')"))
                {
                    let value = settings.get(setting).map(str::to_owned);
                    let Some(value) = value else {
                        return Some(Err(Error::new(
                            ErrorKind::Unsupported,
                            format!("unrecognized configuration parameter \"{setting}\""),
                        )));
                    };
                    ("current_setting", Value::Text(value), "TEXT")
                } else if let Ok(n) = compact.parse::<i32>() {
                    ("?column?", Value::Int(n.into()), "INT4")
                } else if let Some(s) = original
                    .trim()
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .filter(|s| !s.contains('\''))
                {
                    ("?column?", Value::Text(s.to_owned()), "TEXT")
                } else {
                    return None;
                }
            }
        };
        names.push(alias.unwrap_or_else(|| name.to_owned()));
        values.push(value);
        types.push(type_name);
    }
    let columns = names
        .into_iter()
        .zip(types)
        .map(|(name, type_name)| Column {
            name,
            type_name: type_name.to_owned(),
        })
        .collect();
    Some(Ok((
        Reply::Rows {
            columns,
            rows: vec![values],
        },
        "SELECT 1".to_owned(),
    )))
}

/// Items of a select list, split at top-level commas.
fn split_items(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in list.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

fn rows(names: &[&str], rows: Vec<Vec<Value>>) -> Reply {
    Reply::Rows {
        columns: names
            .iter()
            .map(|n| Column {
                name: (*n).to_owned(),
                type_name: "TEXT".to_owned(),
            })
            .collect(),
        rows,
    }
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then_some(rest.trim_start())
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '\'' || c == '"')
}

fn syntax(text: &str) -> Error {
    Error::new(ErrorKind::Syntax, format!("syntax error in \"{text}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        let mut startup = BTreeMap::new();
        startup.insert("application_name".into(), "psql".into());
        Settings::new("root", "sharding_db", 7, &startup)
    }

    fn single(reply: Reply) -> (String, Value) {
        match reply {
            Reply::Rows { columns, mut rows } => {
                (columns[0].name.clone(), rows.remove(0).remove(0))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn set_then_show() {
        let mut s = settings();
        let (reply, tag) = answer("SET extra_float_digits = 3", &mut s)
            .unwrap()
            .unwrap();
        assert_eq!((reply, tag.as_str()), (Reply::done(), "SET"));
        answer("set application_name to 'PostgreSQL JDBC Driver'", &mut s)
            .unwrap()
            .unwrap();
        let (reply, _) = answer("SHOW application_name", &mut s).unwrap().unwrap();
        assert_eq!(
            single(reply).1,
            Value::Text("PostgreSQL JDBC Driver".into())
        );
        let (reply, _) = answer("SHOW extra_float_digits;", &mut s).unwrap().unwrap();
        assert_eq!(single(reply).1, Value::Text("3".into()));
        let (reply, _) = answer("SHOW TRANSACTION ISOLATION LEVEL", &mut s)
            .unwrap()
            .unwrap();
        assert_eq!(
            single(reply),
            (
                "transaction_isolation".into(),
                Value::Text("read committed".into())
            )
        );
        assert!(answer("SHOW no_such_thing", &mut s).unwrap().is_err());
        assert!(
            answer("SET client_encoding = 'LATIN1'", &mut s)
                .unwrap()
                .is_err()
        );
    }

    #[test]
    fn session_functions() {
        let mut s = settings();
        let (reply, _) = answer("select current_schema()", &mut s).unwrap().unwrap();
        assert_eq!(
            single(reply),
            ("current_schema".into(), Value::Text("public".into()))
        );
        let (reply, _) = answer("SELECT version()", &mut s).unwrap().unwrap();
        assert!(matches!(single(reply).1, Value::Text(v) if v.starts_with("PostgreSQL 16.0")));
        let (reply, _) = answer("SELECT 1", &mut s).unwrap().unwrap();
        assert_eq!(single(reply), ("?column?".into(), Value::Int(1)));
        assert!(answer("SELECT * FROM t_order", &mut s).is_none());
        assert!(answer("INSERT INTO t VALUES (1)", &mut s).is_none());
    }
}
