//! The proxy's own sessions, as operators list them (`SHOW [FULL] PROCESSLIST`) and stop them
//! (`KILL`, `pg_cancel_backend`, a cancel request): who is connected, from where, and what
//! each runs now. The shards' process lists name the pooled connections every client shares,
//! so the proxy answers from its sessions instead.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;
use std::time::{Instant, SystemTime};

use futures_util::task::AtomicWaker;
use keyshard_backend::Column;
use keyshard_backend::session_state::SessionState;
use keyshard_types::SqlType;
use keyshard_types::{Dialect, Value};
use serde_json::json;

use crate::reply::Reply;

/// The most of a statement's text a listing keeps (MySQL's FULL shows it all; a bulk INSERT
/// is not copied whole per statement for it).
const KEPT_TEXT: usize = 1024;
/// What the plain listing shows of it, as MySQL's does.
const SHOWN_TEXT: usize = 100;

type Listing = Mutex<BTreeMap<u32, Entry>>;

#[derive(Debug)]
struct Entry {
    activity: Arc<Mutex<Activity>>,
    control: Arc<Control>,
}

/// What another session needs to stop one.
#[derive(Debug)]
pub(crate) struct Control {
    /// Its part in the backend: the shard connections it holds, for a cancel.
    pub(crate) shard: Arc<SessionState>,
    /// The secret of its PostgreSQL cancel key.
    secret: Option<i32>,
    /// It is to end (`KILL CONNECTION`, `pg_terminate_backend`).
    killed: AtomicBool,
    /// The session's task waiting for `killed` ([`Listed::until_killed`]), which it does
    /// between every two statements: one waiter, registered without the lock and list
    /// insertion (and removal) a `Notify` cost each time.
    wake: AtomicWaker,
}

impl Control {
    /// Ends the session: its connection closes once its statement, if any, is over.
    pub(crate) fn kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.wake.wake();
    }
}

/// Every session that is logged in.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Arc<Listing>);

/// One session's place in the list; it leaves the list when dropped (the session ended).
#[derive(Debug)]
pub(crate) struct Listed {
    id: u32,
    activity: Arc<Mutex<Activity>>,
    control: Arc<Control>,
    list: Weak<Listing>,
}

#[derive(Debug)]
struct Activity {
    user: String,
    host: String,
    database: Option<String>,
    /// When it logged in.
    started: SystemTime,
    /// Since when it runs its statement, or has been idle.
    since: Instant,
    /// Whether it runs a statement: `text`'s.
    busy: bool,
    /// The statement it runs, or ran last, its first [`KEPT_TEXT`] bytes: kept between
    /// statements so that each one's text is copied into room already there.
    text: String,
}

impl Activity {
    /// The statement it runs, if any.
    fn running(&self) -> Option<&str> {
        self.busy.then_some(self.text.as_str())
    }
}

impl Sessions {
    /// Lists session `id` of `user` from `host`; `shard` is its part in the backend, `secret`
    /// its PostgreSQL cancel key's.
    pub(crate) fn enter(
        &self,
        id: u32,
        who: (&str, &str),
        database: Option<&str>,
        shard: Arc<SessionState>,
        secret: Option<i32>,
    ) -> Listed {
        let (user, host) = who;
        let activity = Arc::new(Mutex::new(Activity {
            user: user.to_owned(),
            host: host.to_owned(),
            database: database.map(str::to_owned),
            started: SystemTime::now(),
            since: Instant::now(),
            busy: false,
            text: String::new(),
        }));
        let control = Arc::new(Control {
            shard,
            secret,
            killed: AtomicBool::new(false),
            wake: AtomicWaker::new(),
        });
        if let Ok(mut list) = self.0.lock() {
            let entry = Entry {
                activity: Arc::clone(&activity),
                control: Arc::clone(&control),
            };
            list.insert(id, entry);
        }
        Listed {
            id,
            activity,
            control,
            list: Arc::downgrade(&self.0),
        }
    }

    /// Session `id`'s controls, when it is listed.
    pub(crate) fn control(&self, id: u32) -> Option<Arc<Control>> {
        let list = self.0.lock().ok()?;
        list.get(&id).map(|entry| Arc::clone(&entry.control))
    }

    /// The controls of the session whose PostgreSQL cancel key is `id` and `secret`.
    pub(crate) fn control_by_key(&self, id: u32, secret: i32) -> Option<Arc<Control>> {
        self.control(id).filter(|c| c.secret == Some(secret))
    }

    /// How many sessions are logged in.
    pub(crate) fn count(&self) -> usize {
        self.0.lock().map_or(0, |list| list.len())
    }

    /// Every session's activity, by id, taken out of the list's lock.
    fn snapshot(&self) -> Vec<(u32, Arc<Mutex<Activity>>)> {
        match self.0.lock() {
            Ok(list) => list
                .iter()
                .map(|(id, entry)| (*id, Arc::clone(&entry.activity)))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The sessions as the rows of the catalog relation that lists them, a JSON array of
    /// objects keyed by its columns: MySQL's `information_schema.PROCESSLIST`, PostgreSQL's
    /// `pg_stat_activity` (see `keyshard_router::with_sessions`).
    pub(crate) fn json(&self, dialect: Dialect) -> String {
        let sessions = self.snapshot();
        let (now, wall) = (Instant::now(), SystemTime::now());
        let rows: Vec<serde_json::Value> = sessions
            .into_iter()
            .filter_map(|(id, activity)| {
                let a = activity.lock().ok()?;
                let idle_for = now.duration_since(a.since);
                Some(match dialect {
                    Dialect::MySql => json!({
                        "ID": id,
                        "USER": a.user,
                        "HOST": a.host,
                        "DB": a.database,
                        "COMMAND": if a.busy { "Query" } else { "Sleep" },
                        "TIME": idle_for.as_secs(),
                        "STATE": if a.busy { "executing" } else { "" },
                        "INFO": a.running(),
                    }),
                    Dialect::Postgres => {
                        let at = |t: SystemTime| humantime::format_rfc3339_micros(t).to_string();
                        let changed = wall.checked_sub(idle_for).unwrap_or(wall);
                        // An address that is not one (none was known) would fail the cast.
                        let address = a.host.parse::<std::net::IpAddr>().ok();
                        json!({
                            "datname": a.database,
                            "pid": id,
                            "usename": a.user,
                            "client_addr": address.map(|ip| ip.to_string()),
                            "backend_start": at(a.started),
                            "query_start": a.busy.then(|| at(changed)),
                            "state_change": at(changed),
                            "state": if a.busy { "active" } else { "idle" },
                            "query": a.running().unwrap_or_default(),
                            "backend_type": "client backend",
                        })
                    }
                })
            })
            .collect();
        serde_json::Value::Array(rows).to_string()
    }

    /// MariaDB's `SHOW [FULL] PROCESSLIST`.
    pub(crate) fn processlist(&self, full: bool) -> Reply {
        let sessions = self.snapshot();
        let now = Instant::now();
        let rows = sessions
            .into_iter()
            .filter_map(|(id, activity)| {
                let a = activity.lock().ok()?;
                let info = a.running().map(|sql| match full {
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
        self.control.shard.statement_started();
        if let Ok(mut a) = self.activity.lock() {
            a.since = Instant::now();
            a.busy = true;
            a.text.clear();
            a.text.push_str(prefix(sql.trim(), KEPT_TEXT));
            if a.database.as_deref() != database {
                a.database = database.map(str::to_owned);
            }
        }
    }

    /// The session waits for its client.
    pub(crate) fn idle(&self) {
        self.control.shard.statement_started();
        if let Ok(mut a) = self.activity.lock() {
            a.since = Instant::now();
            a.busy = false;
        }
    }

    /// Whether another session ended this one.
    pub(crate) fn killed(&self) -> bool {
        self.control.killed.load(Ordering::Acquire)
    }

    /// Completes once another session ends this one.
    pub(crate) async fn until_killed(&self) {
        std::future::poll_fn(|cx| {
            if self.killed() {
                return Poll::Ready(());
            }
            self.control.wake.register(cx.waker());
            // Asked again: a kill between the first look and the registration woke nobody.
            match self.killed() {
                true => Poll::Ready(()),
                false => Poll::Pending,
            }
        })
        .await
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
        let enter = |id, who, database| sessions.enter(id, who, database, Arc::default(), Some(5));
        let a = enter(7, ("root", "127.0.0.1"), Some("sharding_db"));
        let b = enter(9, ("app", "10.0.0.2"), None);
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

    #[tokio::test]
    async fn a_session_is_found_by_its_id_or_cancel_key_and_ended_by_a_kill() {
        let sessions = Sessions::default();
        let listed = sessions.enter(3, ("root", "h"), None, Arc::default(), Some(77));
        assert!(sessions.control(4).is_none());
        assert!(sessions.control_by_key(3, 78).is_none());
        let control = sessions.control_by_key(3, 77).expect("listed");
        assert!(!listed.killed());
        control.kill();
        listed.until_killed().await;
        assert!(listed.killed());
        drop(listed);
        assert!(sessions.control(3).is_none());
        // A kill wakes a session already waiting for one.
        let waiting = Arc::new(sessions.enter(5, ("root", "h"), None, Arc::default(), None));
        let waiter = tokio::spawn({
            let waiting = Arc::clone(&waiting);
            async move { waiting.until_killed().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        sessions.control(5).expect("listed").kill();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .unwrap();
    }
}
