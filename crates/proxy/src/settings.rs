//! The `SET` statements whose settings live on the shard connections (time zone, sql_mode,
//! search_path, statement_timeout, …), read from their text: the session records them and the
//! backend makes them on every shard connection the session uses (see
//! `keyshard_backend::session_state`). The few settings the proxy itself answers for (the
//! client character set, autocommit and transaction characteristics, PostgreSQL's
//! application_name) stay with the session statements.

use keyshard_types::Dialect;

use crate::control::{self, Control};
use crate::error::{Error, ErrorKind};
use crate::words::split_top_level;

/// A `SET` of settings the shards hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SetSettings {
    /// PostgreSQL's `SET LOCAL`: for the rest of the transaction only.
    pub(crate) local: bool,
    /// PostgreSQL's `RESET ALL`: every setting back to the session's default first.
    pub(crate) reset_all: bool,
    /// MySQL: autocommit and transaction characteristics set beside the settings
    /// (`SET autocommit = 1, sql_mode = …`, as Connector/J sends), the session's own.
    pub(crate) controls: Vec<Control>,
    pub(crate) changes: Vec<Change>,
}

impl SetSettings {
    /// `RESET` of each of `names`.
    pub(crate) fn resets(names: Vec<String>) -> Self {
        let changes = names
            .into_iter()
            .map(|name| Change {
                name,
                assignment: None,
                written: String::new(),
            })
            .collect();
        Self::of(false, changes)
    }

    fn of(local: bool, changes: Vec<Change>) -> Self {
        Self {
            local,
            reset_all: false,
            controls: Vec::new(),
            changes,
        }
    }
}

/// One setting's change.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// Lower case, without `@@session.`.
    pub(crate) name: String,
    /// What makes it after `SET` / `SET SESSION`; `None`: back to its default.
    pub(crate) assignment: Option<String>,
    /// The value as written, for a session with no database of its kind to report it.
    pub(crate) written: String,
}

/// MySQL settings the proxy answers for: the client's character set is the proxy's
/// (utf8mb4), and autocommit and the transaction characteristics are the session's, set by
/// their own statements (`control`).
const MYSQL_OWN: &[&str] = &[
    "autocommit",
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
    "transaction_isolation",
    "transaction_read_only",
    "tx_isolation",
    "tx_read_only",
];

/// PostgreSQL settings the proxy answers for.
const POSTGRES_OWN: &[&str] = &[
    "application_name",
    "client_encoding",
    "default_transaction_isolation",
    "default_transaction_read_only",
    "transaction_isolation",
    "transaction_read_only",
];

/// Whether the proxy answers for setting `name` (lower case) itself in `dialect`.
pub(crate) fn is_own(name: &str, dialect: Dialect) -> bool {
    match dialect {
        Dialect::MySql => MYSQL_OWN.contains(&name),
        Dialect::Postgres => POSTGRES_OWN.contains(&name),
    }
}

/// `sql`, a `SET` or `RESET` (see `Intent::of`), as settings the shards hold: `None` when it
/// sets only what the proxy answers for; an error when it cannot be carried as written.
pub(crate) fn parse(sql: &str, dialect: Dialect) -> Option<Result<SetSettings, Error>> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    if let Some(name) = strip_word(text, "reset") {
        return reset(name, dialect);
    }
    let body = text.get(3..)?.trim_start();
    let parsed = match dialect {
        Dialect::MySql => mysql(body),
        Dialect::Postgres => postgres(body),
    };
    match parsed {
        // Controls alone are `control`'s (recognised before): with only the proxy's own
        // settings left, the session statement acknowledges them.
        Ok(set) if set.changes.is_empty() && set.controls.is_empty() && !set.reset_all => None,
        other => Some(other),
    }
}

/// PostgreSQL's `RESET name` and `RESET ALL`.
fn reset(name: &str, dialect: Dialect) -> Option<Result<SetSettings, Error>> {
    if dialect != Dialect::Postgres
        || name.contains(char::is_whitespace) && !name.eq_ignore_ascii_case("session authorization")
    {
        return None;
    }
    let name = match name.to_ascii_lowercase() {
        n if n == "session authorization" => "session_authorization".to_owned(),
        n => n.trim_matches('"').to_owned(),
    };
    let reset_all = name == "all";
    if is_own(&name, dialect) && !reset_all {
        return None;
    }
    let changes = match reset_all {
        true => Vec::new(),
        false => vec![Change {
            name,
            assignment: None,
            written: String::new(),
        }],
    };
    Some(Ok(SetSettings {
        local: false,
        reset_all,
        controls: Vec::new(),
        changes,
    }))
}

/// `SET [SESSION | LOCAL | @@session. | @@] name = value, …` and `SET NAMES …`.
fn mysql(body: &str) -> Result<SetSettings, Error> {
    let mut changes = Vec::new();
    let mut controls = Vec::new();
    for item in split_top_level(body) {
        let item = item.trim();
        let lower = item.to_ascii_lowercase();
        if ["names ", "character set ", "charset "]
            .iter()
            .any(|w| lower.starts_with(w))
        {
            check_charset(&lower)?;
            continue;
        }
        if [
            "global ",
            "persist ",
            "persist_only ",
            "@@global.",
            "@@persist",
        ]
        .iter()
        .any(|w| lower.starts_with(w))
        {
            return Err(Error::unsupported(
                "SET GLOBAL through Keyshard (it would change the shard servers for every \
                 client): run it on the shards directly",
            ));
        }
        let rest = ["session ", "local ", "@@session.", "@@local.", "@@"]
            .iter()
            .find_map(|w| lower.starts_with(w).then(|| &item[w.len()..]))
            .unwrap_or(item)
            .trim_start();
        let (name, value) =
            split_assignment(rest, &["=", ":="]).ok_or_else(|| syntax(item, Dialect::MySql))?;
        if name.starts_with('@') {
            return Err(Error::unsupported(
                "user variables and system variables in one SET (send them in two)",
            ));
        }
        let name = name.trim_matches('`').to_ascii_lowercase();
        if is_own(&name, Dialect::MySql) {
            if name.starts_with("character_set") || name == "collation_connection" {
                let value = value.to_ascii_lowercase();
                // Results "as stored", which mariadb-dump asks for around SHOW CREATE TABLE:
                // the shards store and send utf8mb4, so the bytes are the ones it gets anyway.
                if !(name == "character_set_results"
                    && value.trim().trim_matches(['\'', '"']) == "binary")
                {
                    check_charset(&value)?;
                }
                continue;
            }
            match control::parse(&format!("SET {name} = {value}")) {
                Some(control) => {
                    controls.push(control);
                    continue;
                }
                None => return Err(syntax(item, Dialect::MySql)),
            }
        }
        changes.push(change(name, value, |n, v| format!("{n} = {v}"))?);
    }
    Ok(SetSettings {
        local: false,
        reset_all: false,
        controls,
        changes,
    })
}

/// `SET [SESSION | LOCAL] name { TO | = } value`, `SET TIME ZONE …`, `SET ROLE …`, `SET
/// SESSION AUTHORIZATION …`.
fn postgres(body: &str) -> Result<SetSettings, Error> {
    let (local, rest) = match strip_word(body, "local") {
        Some(rest) => (true, rest),
        None => match strip_word(body, "session") {
            // `SET SESSION AUTHORIZATION` is a setting of its own, not a scope.
            Some(rest) if strip_word(rest, "authorization").is_none() => (false, rest),
            _ => (false, body),
        },
    };
    // Deferred constraints last as long as the transaction.
    if let Some(value) = strip_word(rest, "constraints") {
        let change = change("constraints".to_owned(), value, |_, v| {
            format!("CONSTRAINTS {v}")
        })?;
        return Ok(SetSettings::of(true, vec![change]));
    }
    let special = [
        ("timezone", &["time", "zone"][..], "TIME ZONE"),
        ("role", &["role"][..], "ROLE"),
        (
            "session_authorization",
            &["session", "authorization"][..],
            "SESSION AUTHORIZATION",
        ),
    ];
    for (name, words, keyword) in special {
        let Some(value) = words
            .iter()
            .try_fold(rest, |text, word| strip_word(text, word))
        else {
            continue;
        };
        // `SET role = x` and `SET role TO x` are the ordinary form.
        if split_assignment(rest, &["="]).is_some()
            || strip_word(value, "to").is_some() && words.len() == 1
        {
            break;
        }
        let reset = matches!(
            value.to_ascii_lowercase().as_str(),
            "default" | "local" | "none"
        );
        let change = match reset {
            true => Change {
                name: name.to_owned(),
                assignment: None,
                written: String::new(),
            },
            false => change(name.to_owned(), value, |_, v| format!("{keyword} {v}"))?,
        };
        return Ok(SetSettings::of(local, vec![change]));
    }
    let (name, value) = split_assignment(rest, &["="])
        .or_else(|| {
            let (name, value) = rest.split_once(char::is_whitespace)?;
            Some((name, strip_word(value.trim_start(), "to")?))
        })
        .ok_or_else(|| syntax(body, Dialect::Postgres))?;
    let name = name.trim_matches('"').to_ascii_lowercase();
    if is_own(&name, Dialect::Postgres) {
        return Ok(SetSettings::of(local, Vec::new()));
    }
    let change = change(name, value, |n, v| format!("{n} TO {v}"))?;
    Ok(SetSettings::of(local, vec![change]))
}

/// The change setting `name` to `value` (as written) makes; `assignment` writes it.
fn change(
    name: String,
    value: &str,
    assignment: impl Fn(&str, &str) -> String,
) -> Result<Change, Error> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !plain {
        return Err(Error::new(
            ErrorKind::Syntax,
            format!("\"{name}\" is not a setting name"),
        ));
    }
    let value = value.trim();
    // The value is sent again on every shard connection the session uses: it must be one
    // expression, never a statement riding along.
    if value.is_empty() || has_unquoted_semicolon(value) {
        return Err(Error::new(
            ErrorKind::Syntax,
            format!("the value of {name} must be one expression"),
        ));
    }
    if value.eq_ignore_ascii_case("default") {
        return Ok(Change {
            name,
            assignment: None,
            written: String::new(),
        });
    }
    Ok(Change {
        assignment: Some(assignment(&name, value)),
        written: value
            .split(',')
            .map(|v| v.trim().trim_matches(['\'', '"']))
            .collect::<Vec<_>>()
            .join(", "),
        name,
    })
}

/// `name` and the value after the first of `operators` outside quotes.
fn split_assignment<'a>(text: &'a str, operators: &[&str]) -> Option<(&'a str, &'a str)> {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"' | '`', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (_, None) => {
                if let Some(op) = operators.iter().find(|op| text[i..].starts_with(*op)) {
                    return Some((text[..i].trim(), &text[i + op.len()..]));
                }
            }
            _ => {}
        }
    }
    None
}

fn has_unquoted_semicolon(text: &str) -> bool {
    let mut quote = None;
    for c in text.chars() {
        match (c, quote) {
            ('\'' | '"' | '`', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (';', None) => return true,
            _ => {}
        }
    }
    false
}

/// The proxy speaks utf8mb4 with its clients and its shards: another character set is refused,
/// since the bytes would not be what the client asked for.
fn check_charset(lower: &str) -> Result<(), Error> {
    let value = lower
        .trim_start_matches("names")
        .trim_start_matches("character set")
        .trim_start_matches("charset")
        .trim();
    let charset = value
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_matches(['\'', '"', '`']);
    match charset {
        "utf8" | "utf8mb4" | "utf8mb3" | "default" | "null" | "" => Ok(()),
        other if other.starts_with("utf8") => Ok(()),
        other => Err(Error::unsupported(format!(
            "character set {other}: Keyshard speaks utf8mb4 with its clients"
        ))),
    }
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && (rest.is_empty() || rest.starts_with(char::is_whitespace)))
        .then(|| rest.trim_start())
}

fn syntax(text: &str, dialect: Dialect) -> Error {
    let message = match dialect {
        Dialect::MySql => format!(
            "You have an error in your SQL syntax; check the manual near '{text}' at line 1"
        ),
        Dialect::Postgres => format!("syntax error at or near \"{text}\""),
    };
    Error::new(ErrorKind::Syntax, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(sql: &str, dialect: Dialect) -> Vec<(String, Option<String>)> {
        match parse(sql, dialect) {
            Some(Ok(set)) => set
                .changes
                .into_iter()
                .map(|c| (c.name, c.assignment))
                .collect(),
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn one(name: &str, assignment: &str) -> Vec<(String, Option<String>)> {
        vec![(name.to_owned(), Some(assignment.to_owned()))]
    }

    #[test]
    fn mysql_settings_are_read_with_their_scope_words() {
        let my = Dialect::MySql;
        assert_eq!(
            changes("SET time_zone = '+09:00'", my),
            one("time_zone", "time_zone = '+09:00'")
        );
        assert_eq!(
            changes("SET SESSION sql_mode = 'ANSI_QUOTES';", my),
            one("sql_mode", "sql_mode = 'ANSI_QUOTES'")
        );
        assert_eq!(
            changes("set @@session.Time_Zone='a,b', @@wait_timeout := 5", my),
            vec![
                ("time_zone".to_owned(), Some("time_zone = 'a,b'".to_owned())),
                (
                    "wait_timeout".to_owned(),
                    Some("wait_timeout = 5".to_owned())
                ),
            ]
        );
        assert_eq!(
            changes("SET NAMES utf8mb4, time_zone = DEFAULT", my),
            vec![("time_zone".to_owned(), None)]
        );
        assert!(parse("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", my).is_none());
        assert!(parse("SET character_set_results = NULL", my).is_none());
        for refused in [
            "SET NAMES latin1",
            "SET GLOBAL time_zone = '+00:00'",
            "SET @@global.sql_mode = ''",
            "SET time_zone = '+00:00'; DROP TABLE t",
        ] {
            assert!(matches!(parse(refused, my), Some(Err(_))), "{refused}");
        }
        // Connector/J's first statement: autocommit beside settings.
        match parse(
            "SET autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')",
            my,
        ) {
            Some(Ok(set)) => {
                assert_eq!(set.controls, vec![Control::Autocommit(true)]);
                assert_eq!(set.changes.len(), 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn postgres_settings_are_read_in_every_form() {
        let pg = Dialect::Postgres;
        assert_eq!(
            changes("SET search_path TO app, public", pg),
            one("search_path", "search_path TO app, public")
        );
        assert_eq!(
            changes("set session statement_timeout = '5s'", pg),
            one("statement_timeout", "statement_timeout TO '5s'")
        );
        assert_eq!(
            changes("SET TIME ZONE 'Asia/Tokyo'", pg),
            one("timezone", "TIME ZONE 'Asia/Tokyo'")
        );
        assert_eq!(changes("SET ROLE reader", pg), one("role", "ROLE reader"));
        assert_eq!(
            changes("SET role = reader", pg),
            one("role", "role TO reader")
        );
        assert_eq!(
            changes("SET SESSION AUTHORIZATION someone", pg),
            one("session_authorization", "SESSION AUTHORIZATION someone")
        );
        assert_eq!(
            changes("SET ROLE NONE", pg),
            vec![("role".to_owned(), None)]
        );
        assert_eq!(
            changes("SET work_mem TO DEFAULT", pg),
            vec![("work_mem".to_owned(), None)]
        );
        match parse("SET LOCAL lock_timeout = 100", pg) {
            Some(Ok(set)) => assert!(set.local),
            other => panic!("{other:?}"),
        }
        assert!(parse("SET application_name = 'x'", pg).is_none());
        assert_eq!(
            changes("RESET search_path", pg),
            vec![("search_path".to_owned(), None)]
        );
        assert!(matches!(
            parse("RESET ALL", pg),
            Some(Ok(SetSettings {
                reset_all: true,
                ..
            }))
        ));
        assert!(parse("RESET application_name", pg).is_none());
        assert!(parse("RESET x", Dialect::MySql).is_none());
        assert!(parse("SET client_encoding TO 'UTF8'", pg).is_none());
        assert!(matches!(
            parse("SET search_path = a; SELECT 1", pg),
            Some(Err(_))
        ));
    }
}
