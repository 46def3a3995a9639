//! A sqlx pool and the connections kept out of it between statements.
//!
//! sqlx 0.8 pings every connection given back to its pool (`return_to_pool` sends COM_PING or
//! its equivalent), which costs a second round trip to the database for every statement a
//! proxy runs in autocommit mode. A connection that finished its statement cleanly is kept
//! here instead and handed out again; it goes back to sqlx (and its checks) only when it has
//! been idle too long, when a statement on it failed, or when the pool closes.
//!
//! Kept connections are checked out of sqlx's pool, so a statement that finds none kept and
//! the pool at its maximum waits for either source: sqlx's pool (where a connection goes back
//! after a failure) or the next connection kept here, which is handed to the longest waiting
//! statement directly — were it put on the stack, the statement that just gave it back could
//! take it again at once and starve the waiters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use keyshard_config::DatabaseKind;
use sqlx::Database;
use tokio::sync::oneshot;

use super::{Kind, Leased, Pin};
use crate::cancel::Interrupted;
use crate::session_state::{self, SessionState, Settings};

/// A pool's state at one moment, for the metrics endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections open, busy or idle.
    pub open: usize,
    /// Connections open and idle.
    pub idle: usize,
    /// Statements waiting for a connection.
    pub waiting: usize,
    /// Connections sessions keep for themselves (pinned), busy or not.
    pub pinned: usize,
}

/// Why a pinned session may not keep one more connection.
#[derive(Debug, thiserror::Error)]
pub enum PinRefused {
    /// It would be the pool's last.
    #[error(
        "this session holds state that stays on its shard connections (temporary tables, \
         locks, LISTEN, held cursors, set_config) and would take the last connection of a \
         pool of {size}: raise the data source's maxPoolSize, or release that state (DISCARD \
         ALL, COM_RESET_CONNECTION, reconnecting)"
    )]
    Exhausted {
        /// The pool's size.
        size: u32,
    },
    /// The data source is configured `sessionState: strict`.
    #[error(
        "state that stays on a shard connection (temporary tables, locks, LISTEN, held \
         cursors, set_config) is refused here: the data source is configured with \
         sessionState: strict"
    )]
    Strict,
}

/// A sqlx pool and the connections kept out of it between statements.
#[derive(Debug)]
pub struct Connections<DB: Database> {
    /// The data source's name, which sessions keep their connections by.
    name: Arc<str>,
    pool: sqlx::Pool<DB>,
    idle: Mutex<Vec<(Leased<DB>, Instant)>>,
    /// Statements waiting for a connection, oldest first.
    waiters: Mutex<VecDeque<oneshot::Sender<Leased<DB>>>>,
    idle_timeout: Duration,
    acquire_timeout: Duration,
    /// Connections pinned sessions keep.
    kept: Arc<AtomicUsize>,
    /// Pinning refused (`sessionState: strict`).
    strict: bool,
    /// A primary with replicas: a session's statements here are noted, so that its reads on
    /// a replica wait for them (see `replicas`).
    notes_writes: bool,
}

impl<DB: Kind> Connections<DB> {
    pub(crate) fn new(
        name: &str,
        pool: sqlx::Pool<DB>,
        idle_timeout: Duration,
        strict: bool,
    ) -> Self {
        let acquire_timeout = pool.options().get_acquire_timeout();
        Self {
            name: Arc::from(name),
            pool,
            idle: Mutex::new(Vec::new()),
            waiters: Mutex::new(VecDeque::new()),
            idle_timeout,
            acquire_timeout,
            kept: Arc::new(AtomicUsize::new(0)),
            notes_writes: false,
            strict,
        }
    }

    /// The sqlx pool underneath (its connect options serve a check outside the pool).
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }

    /// A connection for the running session, with its settings: the one it keeps here when
    /// it is pinned, else a pooled one.
    pub(crate) async fn acquire(&self) -> Result<Leased<DB>, sqlx::Error> {
        let Some(session) = session_state::current() else {
            return self.acquire_pooled(None).await;
        };
        if session.holdings().interrupted() {
            return Err(sqlx::Error::Configuration(Box::new(Interrupted(DB::KIND))));
        }
        let wanted = session.wanted();
        let mut conn = if !session.is_pinned() {
            self.acquire_pooled(wanted.as_ref()).await?
        } else if let Some(conn) = session.take_kept::<Leased<DB>>(&self.name) {
            conn
        } else {
            let pin = self.reserve_pin()?;
            let mut conn = self.acquire_pooled(wanted.as_ref()).await?;
            // A statement that did not pin (an INSERT whose serial default took a value) may
            // have left sequence values here, which `currval`/`lastval` of the session that
            // keeps the connection now would read as its own.
            if DB::KIND == DatabaseKind::Postgres {
                DB::run_text(&mut conn.conn, "DISCARD SEQUENCES").await?;
            }
            conn.kept = Some(pin);
            conn
        };
        conn.hold_for(&session, &self.name);
        match conn.settle(wanted.as_ref()).await {
            Ok(()) => Ok(conn),
            // A kept connection whose settings could not change keeps its place: what it
            // holds (a temporary table) is not lost with a refused setting.
            Err(e) if conn.kept.is_some() && e.as_database_error().is_some() => {
                conn.unknown = false;
                self.keep(&session, conn);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// A pooled connection with the running session's settings that is never one the session
    /// keeps: a gathered read's, whose temporary tables are dropped before it is shared again
    /// ([`Connections::release_apart`]).
    pub(crate) async fn acquire_apart(&self) -> Result<Leased<DB>, sqlx::Error> {
        let session = session_state::current();
        if session.as_ref().is_some_and(|s| s.holdings().interrupted()) {
            return Err(sqlx::Error::Configuration(Box::new(Interrupted(DB::KIND))));
        }
        let wanted = session.as_ref().and_then(|s| s.wanted());
        let mut conn = self.acquire_pooled(wanted.as_ref()).await?;
        if let Some(session) = &session {
            conn.hold_for(session, &self.name);
        }
        conn.settle(wanted.as_ref()).await?;
        Ok(conn)
    }

    /// Shares a connection from [`Connections::acquire_apart`] again.
    pub(crate) fn release_apart(&self, conn: Leased<DB>) {
        if !conn.unknown {
            self.share(conn);
        }
    }

    /// Counts one more pinned connection, refused when that would leave the pool none to
    /// share.
    pub(crate) fn reserve_pin(&self) -> Result<Pin, sqlx::Error> {
        if self.strict {
            return Err(sqlx::Error::Configuration(Box::new(PinRefused::Strict)));
        }
        let size = self.pool.options().get_max_connections();
        let pin = Pin::new(&self.kept);
        if self.kept.load(Ordering::Relaxed) >= size as usize {
            return Err(sqlx::Error::Configuration(Box::new(
                PinRefused::Exhausted { size },
            )));
        }
        Ok(pin)
    }

    /// A kept connection that has not been idle too long (one with `wanted` applied when there
    /// is one), else one from the pool, waiting up to the pool's acquire time-out for
    /// whichever comes first.
    async fn acquire_pooled(
        &self,
        wanted: Option<&Arc<Settings>>,
    ) -> Result<Leased<DB>, sqlx::Error> {
        if let Some(conn) = self.pop_fresh(wanted) {
            return Ok(conn);
        }
        let (handoff, handed) = oneshot::channel();
        lock(&self.waiters).push_back(handoff);
        // While the pool is below its maximum, sqlx's acquire opens a new connection, and it
        // runs on its own task: cancelled whenever a kept connection is handed over first
        // (under steady load nearly always sooner than a connect), it would leave the pool
        // stuck at the few connections of the first moments. Finished on its own, the new
        // connection goes back to sqlx's pool, ready for the next acquire. At the maximum no
        // connect can start, and the acquire waits in place.
        let growing = self.pool.size() < self.pool.options().get_max_connections();
        let from_pool = async {
            if growing {
                let pool = self.pool.clone();
                tokio::spawn(async move { pool.acquire().await })
                    .await
                    .unwrap_or(Err(sqlx::Error::PoolClosed))
            } else {
                self.pool.acquire().await
            }
            .map(Leased::new)
        };
        let wait = async {
            tokio::select! {
                conn = from_pool => conn,
                // A dropped sender means the pool is closing.
                conn = handed => conn.map_err(|_| sqlx::Error::PoolClosed),
            }
        };
        // A connection handed over after we stopped waiting is dropped with the receiver and
        // goes back to sqlx.
        tokio::time::timeout(self.acquire_timeout, wait)
            .await
            .unwrap_or(Err(sqlx::Error::PoolTimedOut))
    }

    fn pop_fresh(&self, wanted: Option<&Arc<Settings>>) -> Option<Leased<DB>> {
        loop {
            let kept = {
                let mut idle = lock(&self.idle);
                // The most recent one whose settings are already the session's, else the most
                // recent that can take them: stacks of sessions with the same settings change
                // none.
                let same = idle.iter().rposition(|(conn, _)| conn.has(wanted));
                let other = || idle.iter().rposition(|(conn, _)| conn.can_become(wanted));
                match same.or_else(other) {
                    Some(at) => Some(idle.remove(at)),
                    None => idle.pop(),
                }
            };
            match kept {
                // None can: the most recent is closed, which leaves sqlx's pool room for a new
                // one, where waiting for a kept one to suit might never end.
                Some((conn, _)) if !conn.can_become(wanted) => {
                    conn.close();
                    return None;
                }
                Some((conn, since)) if since.elapsed() < self.idle_timeout => return Some(conn),
                // Back to sqlx, which checks it and retires it when the database dropped it (or
                // closed, when a session's settings are on it).
                Some(stale) => drop(stale),
                None => return None,
            }
        }
    }

    /// Runs `work` on a connection in its base state, for the proxy's own look at the
    /// database (replication positions): no session's settings, no session's statement.
    pub(crate) async fn with_base<T>(
        &self,
        work: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let mut conn = self.acquire_pooled(None).await?;
        conn.settle(None).await?;
        let result = work(&mut conn).await;
        match &result {
            Ok(_) => self.share(conn),
            Err(_) => conn.close(),
        }
        result
    }

    /// Notes each session's statements here (see `notes_writes`).
    pub(crate) fn note_writes(&mut self) {
        self.notes_writes = true;
    }

    /// A statement of `session` ended here just now (noted for its reads on replicas).
    pub(crate) fn noted_write(&self, session: Option<&SessionState>) {
        if self.notes_writes
            && let Some(session) = session
        {
            session.wrote(&self.name);
        }
    }

    /// Runs `work` on a connection, keeping the connection when the work succeeded. Everything
    /// the backend runs in autocommit mode goes through here, so that no connection sits kept
    /// while sqlx's pool makes someone wait for it.
    pub(crate) async fn with<T>(
        &self,
        work: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let mut conn = self.acquire().await?;
        let result = work(&mut conn).await;
        match &result {
            Ok(_) => self.release(conn),
            // The database refused the statement and the connection is as it was: what a
            // session made on it stays usable (closing it would cost a new connection, or lose
            // a pinned session's temporary tables).
            Err(e) if !conn.is_clean() && e.as_database_error().is_some() => {
                self.release(conn);
            }
            // The database refused the statement: the connection is well.
            Err(e) if e.as_database_error().is_some() => drop(conn),
            // Broken, or stopped mid-result (a row too long, a client gone, a limit): closed,
            // never handed on with a result half read.
            Err(_) => conn.close(),
        }
        result
    }

    /// Keeps a connection whose statement completed, for the next statement: for its pinned
    /// session, or for any.
    pub(crate) fn release(&self, mut conn: Leased<DB>) {
        let session = session_state::current();
        self.noted_write(session.as_deref());
        if conn.unknown {
            return;
        }
        let pinned = session.as_ref().filter(|s| s.is_pinned());
        match (pinned, conn.kept.is_some()) {
            (Some(session), _) => {
                // Taken before the session pinned (a transaction's connection, on which the
                // pinning statement may have run): kept from now on as well.
                if conn.kept.is_none() {
                    conn.kept = Some(Pin::new(&self.kept));
                }
                self.keep(session, conn);
            }
            // A session that let go of its state meanwhile has it closed.
            (None, true) => drop(conn),
            (None, false) => self.share(conn),
        }
    }

    /// Keeps `conn` for `session`; closed when the session keeps one here already.
    fn keep(&self, session: &SessionState, conn: Leased<DB>) {
        if let Err(extra) = session.keep(&self.name, conn) {
            extra.close();
        }
    }

    /// Hands `conn` to the longest waiting statement, or keeps it idle; one a cancel went to
    /// is closed (the cancel may reach it yet).
    fn share(&self, mut conn: Leased<DB>) {
        if conn.holding.take().is_some_and(|h| h.cancelled()) {
            return conn.close();
        }
        loop {
            let Some(waiter) = lock(&self.waiters).pop_front() else {
                break;
            };
            match waiter.send(conn) {
                Ok(()) => return,
                // That statement got a connection from sqlx meanwhile: try the next one.
                Err(back) => conn = back,
            }
        }
        lock(&self.idle).push((conn, Instant::now()));
    }

    /// How many connections are open, how many of them idle, and how many statements wait.
    pub fn stats(&self) -> PoolStats {
        let idle = self.pool.num_idle() + lock(&self.idle).len();
        PoolStats {
            open: self.pool.size() as usize,
            idle,
            waiting: lock(&self.waiters).len(),
            pinned: self.kept.load(Ordering::Relaxed),
        }
    }

    /// Gives every kept connection back and closes the pool.
    pub(crate) async fn close(&self) {
        let kept = std::mem::take(&mut *lock(&self.idle));
        drop(kept);
        lock(&self.waiters).clear();
        self.pool.close().await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
