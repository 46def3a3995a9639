//! The proxy's own sessions, as operators list them (`SHOW [FULL] PROCESSLIST`): who is
//! connected, from where, and what each runs now. The shards' process lists name the pooled
//! connections every client shares, so the proxy answers from its sessions instead.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use keyshard_backend::{Column, SqlType};
use keyshard_router::Value;

use crate::reply::Reply;

/// The most of a statement's text a listing keeps (MySQL's FULL shows it all; a bulk INSERT
/// is not copied whole per statement for it).
const KEPT_TEXT: usize = 1024;
/// What the plain listing shows of it, as MySQL's does.
const SHOWN_TEXT: usize = 100;

type Listing = Mutex<BTreeMap<u32, Arc<Mutex<Activity>>>>;

/// Every session that is logged in.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Arc<Listing>);

/// One session's place in the list; it leaves the list when dropped (the session ended).
#[derive(Debug)]
pub(crate) struct Listed {
    id: u32,
    activity: Arc<Mutex<Activity>>,
    list: Weak<Listing>,
}

#[derive(Debug)]
struct Activity {
    user: String,
    host: String,
    database: Option<String>,
    /// Since when it runs its statement, or has been idle.
    since: Instant,
    /// The statement it runs, its first [`KEPT_TEXT`] bytes.
    running: Option<String>,
}

impl Sessions {
    /// Lists session `id` of `user` from `host`.
    pub(crate) fn enter(&self, id: u32, user: &str, host: &str, database: Option<&str>) -> Listed {
        let activity = Arc::new(Mutex::new(Activity {
            user: user.to_owned(),
            host: host.to_owned(),
            database: database.map(str::to_owned),
            since: Instant::now(),
            running: None,
        }));
        if let Ok(mut list) = self.0.lock() {
            list.insert(id, Arc::clone(&activity));
        }
        Listed {
            id,
            activity,
            list: Arc::downgrade(&self.0),
        }
    }

    /// How many sessions are logged in.
    pub(crate) fn count(&self) -> usize {
        self.0.lock().map_or(0, |list| list.len())
    }

    /// MariaDB's `SHOW [FULL] PROCESSLIST`.
    pub(crate) fn processlist(&self, full: bool) -> Reply {
        let sessions: Vec<(u32, Arc<Mutex<Activity>>)> = match self.0.lock() {
            Ok(list) => list.iter().map(|(id, a)| (*id, Arc::clone(a))).collect(),
            Err(_) => Vec::new(),
        };
        let now = Instant::now();
        let rows = sessions
            .into_iter()
            .filter_map(|(id, activity)| {
                let a = activity.lock().ok()?;
                let info = a.running.as_deref().map(|sql| match full {
                    true => sql.to_owned(),
                    false => prefix(sql, SHOWN_TEXT).to_owned(),
                });
                let (command, state) = match info {
                    Some(_) => ("Query", "executing"),
                    None => ("Sleep", ""),
                };
                Some(vec![
                    Value::Int(i64::from(id)),
                    Value::Text(a.user.clone()),
                    Value::Text(a.host.clone()),
                    a.database.clone().map_or(Value::Null, Value::Text),
                    Value::Text(command.to_owned()),
                    Value::Int(i64::try_from(now.duration_since(a.since).as_secs()).unwrap_or(0)),
                    Value::Text(state.to_owned()),
                    info.map_or(Value::Null, Value::Text),
                    Value::Text("0.000".to_owned()),
                ])
            })
            .collect();
        let text = |name: &str| Column::new(name, SqlType::VarChar);
        let int = |name: &str| {
            Column::new(
                name,
                SqlType::Int {
                    bytes: 8,
                    unsigned: false,
                },
            )
        };
        Reply::Rows {
            columns: vec![
                int("Id"),
                text("User"),
                text("Host"),
                text("db"),
                text("Command"),
                int("Time"),
                text("State"),
                Column::new("Info", SqlType::Text),
                Column::new("Progress", SqlType::Decimal { unsigned: false }),
            ],
            rows,
        }
    }
}

impl Listed {
    /// The session now runs `sql`, in `database`.
    pub(crate) fn running(&self, sql: &str, database: Option<&str>) {
        if let Ok(mut a) = self.activity.lock() {
            a.since = Instant::now();
            a.running = Some(prefix(sql.trim(), KEPT_TEXT).to_owned());
            if a.database.as_deref() != database {
                a.database = database.map(str::to_owned);
            }
        }
    }

    /// The session waits for its client.
    pub(crate) fn idle(&self) {
        if let Ok(mut a) = self.activity.lock() {
            a.since = Instant::now();
            a.running = None;
        }
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        if let Some(list) = self.list.upgrade()
            && let Ok(mut list) = list.lock()
        {
            list.remove(&self.id);
        }
    }
}

/// The first `max` bytes of `text`, cut at a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids_and_infos(reply: &Reply) -> Vec<(Value, Value, Value)> {
        let Reply::Rows { rows, .. } = reply else {
            panic!("{reply:?}")
        };
        rows.iter()
            .map(|r| (r[0].clone(), r[4].clone(), r[7].clone()))
            .collect()
    }

    #[test]
    fn sessions_are_listed_while_they_live_with_what_they_run() {
        let sessions = Sessions::default();
        let a = sessions.enter(7, "root", "127.0.0.1", Some("sharding_db"));
        let b = sessions.enter(9, "app", "10.0.0.2", None);
        let long = format!("SELECT '{}'", "é".repeat(700));
        a.running(&long, Some("sharding_db"));
        let listed = ids_and_infos(&sessions.processlist(false));
        assert_eq!(listed[0].0, Value::Int(7));
        assert_eq!(listed[0].1, Value::Text("Query".into()));
        let Value::Text(shown) = &listed[0].2 else {
            panic!()
        };
        assert!(shown.len() <= SHOWN_TEXT && long.starts_with(shown.as_str()));
        let full = ids_and_infos(&sessions.processlist(true));
        let Value::Text(kept) = &full[0].2 else {
            panic!()
        };
        assert!(kept.len() <= KEPT_TEXT && kept.len() > SHOWN_TEXT);
        assert_eq!(
            listed[1],
            (Value::Int(9), Value::Text("Sleep".into()), Value::Null)
        );
        a.idle();
        drop(b);
        let after = ids_and_infos(&sessions.processlist(true));
        assert_eq!(
            after,
            [(Value::Int(7), Value::Text("Sleep".into()), Value::Null)]
        );
    }
}
