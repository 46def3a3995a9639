//! What a client session asks of the shard connections it uses: the settings it made, applied
//! to whichever connection serves it, and — once it made state no setting re-creates
//! (temporary tables, locks, LISTEN, held cursors) — the connections it keeps for itself.
//!
//! A pooled connection carries the settings last applied to it ([`Settings`], compared by
//! value), so that a connection moves from one session's settings to another's with one
//! statement, and only when they differ. A connection whose state is anything else than its
//! recorded settings is never given to another session: it is closed.
//!
//! The session's state reaches the pools through a task-local value set around the client
//! connection's task ([`serve`]): every shard connection is taken in `Connections::acquire`,
//! from any of the backend's paths (autocommit, transactions, describe, metadata), and none of
//! them has to pass the session along.

use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_config::DatabaseKind;

use crate::holdings::Holdings;
use crate::replicas::position::{Position, Written};

tokio::task_local! {
    static STATE: Arc<SessionState>;
}

/// Runs `work` (a client connection's whole life) with `state` as the session whose
/// connections the backend takes.
pub async fn serve<F: Future>(state: Arc<SessionState>, work: F) -> F::Output {
    STATE.scope(state, work).await
}

/// The session of the running task, if any (none for the proxy's own work: metadata at start,
/// recovery, coordination).
pub(crate) fn current() -> Option<Arc<SessionState>> {
    STATE.try_with(Arc::clone).ok()
}

/// Settings a session made, each as the statement part that makes it again, for one kind of
/// database. Two sessions with equal settings share connections without any statement between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    kind: DatabaseKind,
    /// By lower-case name: what follows `SET` (PostgreSQL: `search_path TO a, b`, `TIME ZONE
    /// 'UTC'`) or `SET SESSION` (MySQL: `time_zone = '+09:00'`) to make it.
    entries: BTreeMap<String, String>,
}

impl Settings {
    /// No settings, for databases of `kind`.
    pub fn new(kind: DatabaseKind) -> Self {
        Self {
            kind,
            entries: BTreeMap::new(),
        }
    }

    /// The kind of database they are written for.
    pub fn kind(&self) -> DatabaseKind {
        self.kind
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What makes setting `name` (lower case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }

    /// Every setting's name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Sets `name` (lower case) with `assignment`.
    pub fn set(&mut self, name: String, assignment: String) {
        self.entries.insert(name, assignment);
    }

    /// Removes `name`, back to the database's default.
    pub fn remove(&mut self, name: &str) {
        self.entries.remove(name);
    }

    /// Whether a connection with these settings can be brought to `to` at all: PostgreSQL
    /// keeps a custom setting (`app.tenant`) defined, as '', once set, and no statement
    /// undefines it, so a connection that has one serves only sessions that define it too.
    pub fn can_become(&self, to: Option<&Settings>) -> bool {
        self.kind != DatabaseKind::Postgres
            || self
                .names()
                .filter(|name| name.contains('.'))
                .all(|name| to.is_some_and(|to| to.get(name).is_some()))
    }

    /// The statements that take a connection of `kind` from the settings `from` (`None`: as
    /// opened) to `to`: the settings `to` drops are reset, those it changes or adds are made.
    /// Empty when nothing changes, or when the settings are another kind of database's.
    pub fn transition(
        kind: DatabaseKind,
        from: Option<&Settings>,
        to: Option<&Settings>,
    ) -> String {
        fn of_kind(s: Option<&Settings>, kind: DatabaseKind) -> Option<&Settings> {
            s.filter(|s| s.kind == kind && !s.is_empty())
        }
        let (from, to) = (of_kind(from, kind), of_kind(to, kind));
        let empty = BTreeMap::new();
        let old = from.map_or(&empty, |s| &s.entries);
        let new = to.map_or(&empty, |s| &s.entries);
        let dropped = old.keys().filter(|name| !new.contains_key(*name));
        let made = new
            .iter()
            .filter(|(name, assignment)| old.get(*name) != Some(*assignment))
            .map(|(_, assignment)| assignment);
        match kind {
            // One statement: `SET SESSION a = DEFAULT, b = 'x'`.
            DatabaseKind::MySql => {
                let parts: Vec<String> = dropped
                    .map(|name| format!("{name} = DEFAULT"))
                    .chain(made.cloned())
                    .collect();
                match parts.is_empty() {
                    true => String::new(),
                    false => format!("SET SESSION {}", parts.join(", ")),
                }
            }
            DatabaseKind::Postgres => dropped
                .map(|name| format!("RESET {};", reset_name(name)))
                .chain(made.map(|assignment| format!("SET {assignment};")))
                .collect(),
            DatabaseKind::Sqlite => String::new(),
        }
    }
}

/// What `RESET` names for a setting: PostgreSQL's `SET ROLE` and `SET SESSION AUTHORIZATION`
/// are reset by their own words.
fn reset_name(name: &str) -> &str {
    match name {
        "session_authorization" => "SESSION AUTHORIZATION",
        other => other,
    }
}

/// A client session's part in the backend's connections.
#[derive(Debug)]
pub struct SessionState {
    /// The settings every connection the session uses must have; `None`: none.
    wanted: Mutex<Option<Arc<Settings>>>,
    /// Whether the session keeps the connections it uses (see [`SessionState::pin`]).
    pinned: AtomicBool,
    /// The connections it keeps, one per data source at most, by data source name; each a
    /// `Leased<DB>` of its pool's database.
    kept: Mutex<Vec<(String, Box<dyn Any + Send>)>>,
    /// The shard connections it holds now, for a cancel (see `cancel`).
    holdings: Arc<Holdings>,
    /// Its last statement on each primary with replicas, by data source (see `replicas`).
    written: Mutex<Vec<(Arc<str>, Written)>>,
    /// Its reads go to primaries only (`SET READWRITE_SPLITTING HINT SOURCE = write`).
    primary_only: AtomicBool,
}

impl Default for SessionState {
    fn default() -> Self {
        Self {
            wanted: Mutex::new(None),
            pinned: AtomicBool::new(false),
            kept: Mutex::new(Vec::new()),
            holdings: Arc::default(),
            written: Mutex::new(Vec::new()),
            primary_only: AtomicBool::new(false),
        }
    }
}

impl SessionState {
    /// A session with `settings` (a PostgreSQL client's startup parameters, say).
    pub fn new(settings: Option<Settings>) -> Self {
        let state = Self::default();
        state.set_wanted(settings);
        state
    }

    /// The settings its connections must have.
    pub fn wanted(&self) -> Option<Arc<Settings>> {
        lock(&self.wanted).clone()
    }

    /// Replaces the settings its connections must have (they are applied at each
    /// connection's next use); answers the ones before.
    pub fn set_wanted(&self, settings: Option<Settings>) -> Option<Arc<Settings>> {
        let settings = settings.filter(|s| !s.is_empty()).map(Arc::new);
        std::mem::replace(&mut *lock(&self.wanted), settings)
    }

    /// Puts back settings [`SessionState::set_wanted`] answered.
    pub fn restore_wanted(&self, settings: Option<Arc<Settings>>) {
        *lock(&self.wanted) = settings;
    }

    /// From now on, the session keeps every shard connection it uses until
    /// [`SessionState::unpin`]: it made (or is about to make) state on one of them that no
    /// setting re-creates. Answers whether it was not pinned before.
    pub fn pin(&self) -> bool {
        !self.pinned.swap(true, Ordering::Relaxed)
    }

    /// Whether it keeps its connections.
    pub fn is_pinned(&self) -> bool {
        self.pinned.load(Ordering::Relaxed)
    }

    /// The data sources it keeps a connection of, now.
    pub fn kept_data_sources(&self) -> Vec<String> {
        lock(&self.kept).iter().map(|(ds, _)| ds.clone()).collect()
    }

    /// Ends pinning: the kept connections are closed (whatever they hold goes with them), and
    /// the session takes pooled ones again.
    pub fn unpin(&self) {
        self.pinned.store(false, Ordering::Relaxed);
        let kept = std::mem::take(&mut *lock(&self.kept));
        drop(kept);
    }

    /// A statement of this session ended on `data_source`'s primary just now: its next read
    /// there must see what it did.
    pub(crate) fn wrote(&self, data_source: &Arc<str>) {
        let mut written = lock(&self.written);
        let mark = Written::Since(std::time::Instant::now());
        match written.iter_mut().find(|(ds, _)| ds == data_source) {
            Some((_, noted)) => *noted = mark,
            None => written.push((Arc::clone(data_source), mark)),
        }
    }

    /// What it must see of its own writes on `data_source`, if it wrote there.
    pub(crate) fn written(&self, data_source: &str) -> Option<Written> {
        let written = lock(&self.written);
        let (_, mark) = written.iter().find(|(ds, _)| &**ds == data_source)?;
        Some(mark.clone())
    }

    /// Its write on `data_source` of `moment` is known to be at most at `position`.
    pub(crate) fn written_at(
        &self,
        data_source: &str,
        moment: std::time::Instant,
        position: Position,
    ) {
        let mut written = lock(&self.written);
        if let Some((_, mark)) = written.iter_mut().find(|(ds, _)| &**ds == data_source)
            && matches!(mark, Written::Since(m) if *m == moment)
        {
            *mark = Written::At(position);
        }
    }

    /// Sends its reads to primaries only, or lets replicas answer them again.
    pub fn set_primary_only(&self, primary_only: bool) {
        self.primary_only.store(primary_only, Ordering::Relaxed);
    }

    /// Whether its reads go to primaries only.
    pub fn primary_only(&self) -> bool {
        self.primary_only.load(Ordering::Relaxed)
    }

    /// The shard connections it holds now.
    pub(crate) fn holdings(&self) -> &Arc<Holdings> {
        &self.holdings
    }

    /// It starts a statement, or has none: a cancel of the one before is over.
    pub fn statement_started(&self) {
        self.holdings.statement_started();
    }

    /// The connection kept for `data_source`, taken out while a statement uses it.
    pub(crate) fn take_kept<T: Any + Send>(&self, data_source: &str) -> Option<T> {
        let mut kept = lock(&self.kept);
        let at = kept.iter().position(|(ds, _)| ds == data_source)?;
        let (_, conn) = kept.swap_remove(at);
        conn.downcast::<T>().ok().map(|conn| *conn)
    }

    /// Keeps `conn` for `data_source`, unless one is kept there already (a read that took two
    /// connections at once): then `conn` is answered back.
    pub(crate) fn keep<T: Any + Send>(&self, data_source: &str, conn: T) -> Result<(), T> {
        let mut kept = lock(&self.kept);
        if kept.iter().any(|(ds, _)| ds == data_source) {
            return Err(conn);
        }
        kept.push((data_source.to_owned(), Box::new(conn)));
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(kind: DatabaseKind, entries: &[(&str, &str)]) -> Settings {
        let mut s = Settings::new(kind);
        for (name, assignment) in entries {
            s.set((*name).to_owned(), (*assignment).to_owned());
        }
        s
    }

    #[test]
    fn a_transition_resets_what_is_dropped_and_makes_what_changed() {
        let my = DatabaseKind::MySql;
        let a = settings(my, &[("time_zone", "time_zone = '+09:00'"), ("x", "x = 1")]);
        let b = settings(my, &[("x", "x = 1"), ("sql_mode", "sql_mode = ''")]);
        assert_eq!(
            Settings::transition(my, Some(&a), Some(&b)),
            "SET SESSION time_zone = DEFAULT, sql_mode = ''"
        );
        assert_eq!(Settings::transition(my, Some(&a), Some(&a)), "");
        assert_eq!(
            Settings::transition(my, None, Some(&a)),
            "SET SESSION time_zone = '+09:00', x = 1"
        );
        let pg = DatabaseKind::Postgres;
        let p = settings(
            pg,
            &[
                ("search_path", "search_path TO s"),
                ("session_authorization", "SESSION AUTHORIZATION u"),
            ],
        );
        assert_eq!(
            Settings::transition(pg, Some(&p), None),
            "RESET search_path;RESET SESSION AUTHORIZATION;"
        );
        // A custom setting stays defined on a PostgreSQL connection.
        let custom = settings(pg, &[("app.x", "app.x TO 'a'")]);
        let undefined = settings(pg, &[("app.x", "app.x TO DEFAULT")]);
        assert!(custom.can_become(Some(&undefined)));
        assert!(!custom.can_become(Some(&p)));
        assert!(!custom.can_become(None));
        assert!(p.can_become(None));
        assert!(a.can_become(None));
        // Another database's settings never reach a connection.
        assert_eq!(Settings::transition(pg, None, Some(&a)), "");
        assert_eq!(
            Settings::transition(DatabaseKind::Sqlite, None, Some(&p)),
            ""
        );
    }

    #[test]
    fn a_kept_connection_is_one_per_data_source() {
        let state = SessionState::default();
        assert!(state.pin());
        assert!(!state.pin());
        assert_eq!(state.keep("ds_0", 1_u8), Ok(()));
        assert_eq!(state.keep("ds_0", 2_u8), Err(2));
        assert_eq!(state.take_kept::<u8>("ds_0"), Some(1));
        assert_eq!(state.take_kept::<u8>("ds_0"), None);
        state.unpin();
        assert!(!state.is_pinned());
    }
}
