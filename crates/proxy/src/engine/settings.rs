//! Settings the shards hold for the session (`SET time_zone`, `SET search_path`, …): recorded
//! in the session, checked and reported by a database of the session's kind, made on every
//! shard connection the session uses (see `keyshard_backend::session_state`).

use std::collections::BTreeMap;

use keyshard_backend::session_state::Settings;
use keyshard_backend::{SavepointCommand, SettingScope};
use keyshard_config::DatabaseKind;
use keyshard_types::{Dialect, Value};

use super::Engine;
use crate::error::Error;
use crate::pinning::Held;
use crate::reply::Reply;
use crate::session::{AtSavepoint, Session, SettingsBefore};
use crate::settings::{Change, SetSettings};

impl Engine {
    /// Applies `set`: the new settings are made on the shard connections the session holds in
    /// its transaction at once, and on every other one it uses from now on. A database of the
    /// session's kind checks them first and reports their values, as `SHOW` and `@@name` then
    /// answer; a setting it refuses is refused to the client with its error, and nothing
    /// changes.
    pub(super) async fn set_settings(
        &self,
        session: &mut Session,
        sql: &str,
        mut set: SetSettings,
    ) -> Result<Reply, Error> {
        for control in set.controls {
            self.control(session, control).await?;
        }
        if set.local {
            // PostgreSQL's SET LOCAL: outside a transaction block it changes nothing.
            if let Some(transaction) = &mut session.transaction {
                self.backend
                    .set_in(transaction, sql, None, SettingScope::Transaction)
                    .await?;
            }
            return Ok(Reply::done());
        }
        let kind = kind_of(session.dialect);
        let before = session.shard.wanted();
        let mut next = before
            .as_deref()
            .cloned()
            .unwrap_or_else(|| Settings::new(kind));
        if set.reset_all {
            next = session
                .startup_settings
                .clone()
                .unwrap_or_else(|| Settings::new(kind));
            let kept = placeholders(before.as_deref());
            set.changes.extend(SetSettings::resets(kept).changes);
        }
        for change in &set.changes {
            match &change.assignment {
                // MySQL reads `@@sql_mode` in `CONCAT(@@sql_mode, ',X')` in the session, whose
                // value may not be the one a shard connection begins with.
                Some(assignment) if session.dialect == Dialect::MySql => next.set(
                    change.name.clone(),
                    with_session_values(assignment, &session.reported),
                ),
                Some(assignment) => next.set(change.name.clone(), assignment.clone()),
                // Back to the session's default: its startup value, or the database's.
                None => match session
                    .startup_settings
                    .as_ref()
                    .and_then(|s| s.get(&change.name))
                {
                    Some(startup) => next.set(change.name.clone(), startup.to_owned()),
                    None => match placeholder(kind, &change.name) {
                        Some(undefined) => next.set(change.name.clone(), undefined),
                        None => next.remove(&change.name),
                    },
                },
            }
        }
        // What a change inside a transaction must do to the connections the transaction
        // holds, whose settings are the session's before it. `set_config` changed the
        // connections the session keeps without being tracked (pg_dump's empty search_path):
        // a SET or RESET after it is made there as written too, or RESET would leave it.
        let untracked =
            session.dialect == Dialect::Postgres && session.held.contains_key(&Held::Session);
        let on_branches = Settings::transition(kind, before.as_deref(), Some(&next));
        let undone = session.dialect == Dialect::Postgres;
        if undone && session.transaction.is_some() && session.postgres.settings_before.is_none() {
            session.postgres.settings_before = Some(SettingsBefore {
                wanted: before.clone(),
                reported: session.reported.clone(),
            });
        }
        session.shard.set_wanted(Some(next));
        let applied = async {
            if let Some(transaction) = &mut session.transaction {
                if !on_branches.is_empty() {
                    let wanted = session.shard.wanted();
                    let scope = SettingScope::Session { undone };
                    self.backend
                        .set_in(transaction, &on_branches, wanted, scope)
                        .await?;
                }
                // On the branches it has and those it opens on kept connections later.
                if untracked {
                    let scope = SettingScope::Transaction;
                    self.backend.set_in(transaction, sql, None, scope).await?;
                }
            } else if untracked {
                self.on_kept_connections(session, sql).await?;
            }
            self.report(session, &set.changes).await
        }
        .await;
        let reported = match applied {
            Ok(reported) => reported,
            Err(e) => {
                session.shard.restore_wanted(before);
                return Err(e);
            }
        };
        // MySQL evaluates a value (`CONCAT(@@sql_mode, ',X')`, `@x`) when it is set: it is
        // made again elsewhere as the value the database reported, not as written.
        if let (Dialect::MySql, Some(mut settings)) = (session.dialect, session.shard.wanted())
            && reported.is_some()
        {
            let settings = std::sync::Arc::make_mut(&mut settings);
            for (change, value) in set.changes.iter().zip(reported.iter().flatten()) {
                if change.assignment.is_some() {
                    let literal = mysql_literal(value.as_deref());
                    settings.set(change.name.clone(), format!("{} = {literal}", change.name));
                }
            }
            session.shard.set_wanted(Some(settings.clone()));
        }
        let reported: Vec<String> = match reported {
            Some(values) => values.into_iter().map(Option::unwrap_or_default).collect(),
            None => set.changes.iter().map(|c| c.written.clone()).collect(),
        };
        if set.reset_all {
            session.reported.clear();
            session.postgres.parameters.reset_all();
        }
        for (change, value) in set.changes.iter().zip(reported) {
            match (&change.assignment, value) {
                // Defined still, with the value the database reported.
                (None, value) if placeholder(kind, &change.name).is_some() => {
                    session.reported.insert(change.name.clone(), value);
                }
                (None, _) => {
                    session.reported.remove(&change.name);
                }
                (Some(_), value) => {
                    session.reported.insert(change.name.clone(), value);
                }
            }
        }
        Ok(Reply::done())
    }

    /// The values of the `changes`' settings as a database of the session's kind reports them
    /// now, on a connection with the session's settings (which makes them there, and so checks
    /// them), in its transaction when it has one; `None` when no data source is of that kind
    /// (SQLite shards).
    async fn report(
        &self,
        session: &mut Session,
        changes: &[Change],
    ) -> Result<Option<Vec<Option<String>>>, Error> {
        let dialect = session.dialect;
        let kind = kind_of(dialect);
        let source = self
            .config
            .data_sources
            .values()
            .find(|source| source.kind == kind);
        let Some(source) = source else {
            return Ok(None);
        };
        // `RESET ALL` names nothing to check: back to what the session began with.
        if changes.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let items: Vec<String> = changes
            .iter()
            .map(|c| match dialect {
                Dialect::MySql => format!("CAST(@@session.{} AS CHAR)", c.name),
                // A custom setting reset away is no error, as RESET of it was none.
                Dialect::Postgres => format!("current_setting('{}', true)", c.name),
            })
            .collect();
        let sql = format!("SELECT {}", items.join(", "));
        let outcome = self
            .backend
            .execute_on_in(session.transaction.as_mut(), &source.name, &sql)
            .await?;
        let row = outcome.rows.into_iter().next().unwrap_or_default();
        Ok(Some(
            (0..changes.len())
                .map(|i| row.get(i).and_then(text_of))
                .collect(),
        ))
    }

    /// Brings the session's settings back to those it began with (a reset of the session):
    /// the custom settings it defined stay defined, as `''` (see [`placeholder`]).
    pub(super) async fn reset_settings(&self, session: &mut Session) {
        let placeholders = placeholders(session.shard.wanted().as_deref());
        session.shard.set_wanted(session.startup_settings.clone());
        session.reported.clear();
        session.postgres.settings_before = None;
        session.postgres.at_savepoints.clear();
        if !placeholders.is_empty() {
            let reset = SetSettings::resets(placeholders);
            if let Err(e) = self.set_settings(session, "", reset).await {
                tracing::warn!("connection {}: {e}", session.connection_id);
            }
        }
    }

    /// Undoes the session's changes of settings made in a transaction that rolled back
    /// (PostgreSQL: the database undoes them on the connections the transaction held).
    pub(super) fn transaction_ended(&self, session: &mut Session, committed: bool) {
        session.postgres.at_savepoints.clear();
        if let Some(before) = session.postgres.settings_before.take()
            && !committed
        {
            session.shard.restore_wanted(before.wanted);
            session.reported = before.reported;
        }
    }
}

impl Engine {
    /// PostgreSQL: remembers the session's settings and channels at savepoint `key`.
    pub(super) fn state_at_savepoint(&self, session: &mut Session, key: &str) {
        let settings = SettingsBefore {
            wanted: session.shard.wanted(),
            reported: session.reported.clone(),
        };
        let channels = crate::notify::channels(session);
        session.postgres.at_savepoints.push(AtSavepoint {
            key: key.to_owned(),
            settings,
            channels,
        });
    }

    /// PostgreSQL: a rollback to savepoint `key` brings back the settings it had, on the
    /// session and on the transaction's connections (those that joined it after a change
    /// had it made before they began, which the database's rollback does not undo), and the
    /// channels it listened on; a release forgets them.
    pub(super) async fn savepoint_ended(
        &self,
        session: &mut Session,
        key: &str,
        command: SavepointCommand,
    ) -> Result<(), Error> {
        let at = session
            .postgres
            .at_savepoints
            .iter()
            .rposition(|s| s.key == key);
        let Some(at) = at else {
            return Ok(());
        };
        if command == SavepointCommand::Release {
            session.postgres.at_savepoints.truncate(at);
            return Ok(());
        }
        session.postgres.at_savepoints.truncate(at + 1);
        let channels = session.postgres.at_savepoints[at].channels.clone();
        self.listen_only(session, &channels).await?;
        let then = session.postgres.at_savepoints[at].settings.clone();
        let now = session.shard.wanted();
        session.reported = then.reported;
        if now == then.wanted {
            return Ok(());
        }
        let kind = kind_of(session.dialect);
        let back = Settings::transition(kind, now.as_deref(), then.wanted.as_deref());
        session.shard.restore_wanted(then.wanted.clone());
        if let Some(transaction) = &mut session.transaction
            && !back.is_empty()
        {
            let scope = SettingScope::Session { undone: true };
            self.backend
                .set_in(transaction, &back, then.wanted, scope)
                .await?;
        }
        Ok(())
    }
}

/// PostgreSQL keeps a custom setting (`app.tenant`) defined once a session named it: as ''
/// after `RESET`, `RESET ALL` and `DISCARD ALL`, where a shard connection that never saw it
/// does not know it (42704). Such a name stays among the session's settings as `app.tenant TO
/// DEFAULT`, which defines it there; `None` for any other name.
fn placeholder(kind: DatabaseKind, name: &str) -> Option<String> {
    (kind == DatabaseKind::Postgres && name.contains('.')).then(|| format!("{name} TO DEFAULT"))
}

/// The custom settings `settings` define, which a reset to the session's defaults keeps (see
/// [`placeholder`]).
fn placeholders(settings: Option<&Settings>) -> Vec<String> {
    settings.map_or_else(Vec::new, |settings| {
        let kind = settings.kind();
        settings
            .names()
            .filter(|name| placeholder(kind, name).is_some())
            .map(str::to_owned)
            .collect()
    })
}

/// The database kind a frontend's settings are written for.
fn kind_of(dialect: Dialect) -> DatabaseKind {
    match dialect {
        Dialect::MySql => DatabaseKind::MySql,
        Dialect::Postgres => DatabaseKind::Postgres,
    }
}

fn text_of(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => return None,
        Value::Text(text) => text.clone(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        other => other.to_literal(Dialect::Postgres),
    })
}

/// A MySQL system variable's value as it is set again: numbers bare (a numeric variable
/// refuses a string), NULL, else a quoted string.
/// `assignment` with each `@@name` (`@@session.name`, `@@local.name`) the session has a value
/// for written as that value.
fn with_session_values(
    assignment: &str,
    reported: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut out = String::with_capacity(assignment.len());
    let (mut rest, mut quote) = (assignment, None);
    while let Some(c) = rest.chars().next() {
        match (c, quote) {
            ('\'' | '"' | '`', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('@', None) if rest.starts_with("@@") => {
                let after = &rest[2..];
                let lower = after.to_ascii_lowercase();
                let scope = ["session.", "local."]
                    .iter()
                    .find(|p| lower.starts_with(**p))
                    .map_or(0, |p| p.len());
                let name_len = after[scope..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len() - scope);
                let name = lower[scope..scope + name_len].to_owned();
                if let Some(value) = reported.get(&name) {
                    out.push_str(&mysql_literal(Some(value)));
                    rest = &after[scope + name_len..];
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn mysql_literal(value: Option<&str>) -> String {
    match value {
        None => "NULL".to_owned(),
        Some(v)
            if v.parse::<f64>().is_ok()
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') =>
        {
            v.to_owned()
        }
        Some(v) => Value::Text(v.to_owned()).to_literal(Dialect::MySql),
    }
}

/// A PostgreSQL client's startup parameters with the settings its `options` parameter holds
/// (`-c name=value`, `--name=value`, as libpq's PGOPTIONS writes them) spelt out.
pub(crate) fn startup_parameters(
    parameters: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut spelt = parameters.clone();
    let Some(options) = parameters.get("options") else {
        return spelt;
    };
    let mut words = options.split_whitespace();
    while let Some(word) = words.next() {
        let setting = match word {
            "-c" => words.next(),
            other => other
                .strip_prefix("-c")
                .or_else(|| other.strip_prefix("--")),
        };
        if let Some((name, value)) = setting.and_then(|s| s.split_once('=')) {
            spelt.insert(name.replace('-', "_"), value.to_owned());
        }
    }
    spelt
}

/// A MySQL client's sql_mode from its login, when it is not the server's: one that asks for
/// CLIENT_IGNORE_SPACE gets IGNORE_SPACE added, as the server gives it (the shard connections
/// themselves begin with the server's sql_mode, `base`). The setting, and its value as the
/// server reports it (the modes in the server's order).
pub(crate) fn mysql_startup_settings(
    ignore_space: bool,
    base: Option<&str>,
) -> Option<(Settings, String)> {
    let base = base.filter(|_| ignore_space)?;
    let mut modes: Vec<&str> = base.split(',').filter(|m| !m.is_empty()).collect();
    if modes.iter().any(|m| m.eq_ignore_ascii_case("IGNORE_SPACE")) {
        return None;
    }
    let before = ["REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES"];
    let at = modes.iter().take_while(|m| before.contains(m)).count();
    modes.insert(at, "IGNORE_SPACE");
    let mode = modes.join(",");
    let mut settings = Settings::new(DatabaseKind::MySql);
    settings.set("sql_mode".to_owned(), format!("sql_mode = '{mode}'"));
    Some((settings, mode))
}

/// A PostgreSQL client's startup parameters that the shards hold (its time zone, DateStyle,
/// extra_float_digits, …), as the settings its session begins with.
pub(crate) fn startup_settings(parameters: &BTreeMap<String, String>) -> Option<Settings> {
    let mut settings = Settings::new(DatabaseKind::Postgres);
    for (name, value) in parameters {
        let name = name.to_ascii_lowercase();
        let plain = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        let identity = matches!(
            name.as_str(),
            "user" | "database" | "options" | "replication"
        );
        if !plain || identity || crate::settings::is_own(&name, Dialect::Postgres) {
            continue;
        }
        let quoted = value.replace('\'', "''");
        settings.set(name.clone(), format!("{name} TO '{quoted}'"));
    }
    (!settings.is_empty()).then_some(settings)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_relative_mysql_setting_reads_the_sessions_values() {
        let reported = BTreeMap::from([("sql_mode".to_owned(), "IGNORE_SPACE,ANSI".to_owned())]);
        assert_eq!(
            with_session_values(
                "sql_mode = (SELECT CONCAT(@@sql_mode, ',X', @@SESSION.sql_mode, '@@sql_mode', @@time_zone))",
                &reported
            ),
            "sql_mode = (SELECT CONCAT('IGNORE_SPACE,ANSI', ',X', 'IGNORE_SPACE,ANSI', '@@sql_mode', @@time_zone))"
        );
    }

    #[test]
    fn a_client_asking_for_ignore_space_gets_it_in_its_sql_mode() {
        let base = "PIPES_AS_CONCAT,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION";
        let (settings, mode) = mysql_startup_settings(true, Some(base)).unwrap();
        assert_eq!(
            mode,
            "PIPES_AS_CONCAT,IGNORE_SPACE,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"
        );
        assert_eq!(
            settings.get("sql_mode"),
            Some(&*format!("sql_mode = '{mode}'"))
        );
        assert!(mysql_startup_settings(false, Some(base)).is_none());
        assert!(mysql_startup_settings(true, Some("IGNORE_SPACE")).is_none());
        assert_eq!(
            mysql_startup_settings(true, Some("")).map(|(_, m)| m),
            Some("IGNORE_SPACE".to_owned())
        );
    }
}
