//! Connections kept between statements (see `connections`).
//!
//! Every connection is handed out as a [`Leased`] one, which knows the session settings
//! applied to it (see `session_state`): it is brought to the settings of the session that
//! takes it, kept by a session that pins its connections, and closed rather than given back
//! to sqlx's pool whenever it holds anything but the state it was opened in.

mod connections;
mod kind;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::Database;
use sqlx::pool::PoolConnection;

use crate::holdings::Holding;
use crate::session_state::{SessionState, Settings};
pub use connections::{Connections, PinRefused, PoolStats};
pub use kind::Kind;

/// A pooled connection and what a session left on it.
#[derive(Debug)]
pub(crate) struct Leased<DB: Database> {
    conn: PoolConnection<DB>,
    /// The session settings applied to it; `None`: as it was opened.
    applied: Option<Arc<Settings>>,
    /// The settings it will have when its transaction commits, when a setting changed inside
    /// it (PostgreSQL undoes such a change when the transaction rolls back).
    on_commit: Option<Option<Arc<Settings>>>,
    /// Set while a pinned session keeps it.
    kept: Option<Pin>,
    /// What it holds is not known (a change of settings failed halfway): it is closed.
    unknown: bool,
    /// Its record in the holdings of the session that has it, for a cancel.
    holding: Option<Holding>,
}

impl<DB: Database> Leased<DB> {
    fn new(conn: PoolConnection<DB>) -> Self {
        Self {
            conn,
            applied: None,
            on_commit: None,
            kept: None,
            unknown: false,
            holding: None,
        }
    }

    /// Whether its settings are `wanted`.
    fn has(&self, wanted: Option<&Arc<Settings>>) -> bool {
        match (&self.applied, wanted) {
            (None, None) => true,
            (Some(a), Some(w)) => Arc::ptr_eq(a, w) || a == w,
            _ => false,
        }
    }

    /// Whether its settings can be brought to `wanted` (see `Settings::can_become`).
    fn can_become(&self, wanted: Option<&Arc<Settings>>) -> bool {
        self.applied
            .as_deref()
            .is_none_or(|applied| applied.can_become(wanted.map(|w| &**w)))
    }

    /// Whether it holds nothing a session made, so that sqlx's pool may have it back.
    fn is_clean(&self) -> bool {
        self.applied.is_none() && self.kept.is_none() && !self.unknown
    }

    /// Marks it as holding state of its own (a gathered read's temporary tables) until
    /// `holding(false)`: dropped meanwhile (its statement cancelled), it is closed, never
    /// given to another session with that state.
    pub(crate) fn holding(&mut self, holds: bool) {
        self.unknown = holds;
    }

    /// Records that `session` has it, for a cancel (see `cancel`).
    fn hold_for(&mut self, session: &Arc<SessionState>, data_source: &Arc<str>)
    where
        DB: Kind,
    {
        if self.holding.is_none()
            && let Some(id) = DB::server_id(&self.conn)
        {
            self.holding = Some(Holding::new(session.holdings(), data_source, id));
        }
    }

    /// Closes it instead of giving it back, whatever it holds.
    pub(crate) fn close(mut self) {
        self.unknown = true;
    }

    /// Records that `settings` were made on it inside a transaction: they hold once the
    /// transaction commits, and on MySQL (where `SET` is not transactional) at once.
    pub(crate) fn set_in_transaction(&mut self, settings: Option<Arc<Settings>>, undone: bool) {
        match undone {
            true => self.on_commit = Some(settings),
            false => self.applied = settings,
        }
    }

    /// Its transaction ended: a change of settings made inside it holds when it committed.
    pub(crate) fn transaction_ended(&mut self, committed: bool) {
        if let Some(settings) = self.on_commit.take()
            && committed
        {
            self.applied = settings;
        }
    }

    /// Its transaction rolled back to a savepoint: a change of settings made inside it may or
    /// may not hold now.
    pub(crate) fn rolled_back_to_savepoint(&mut self) {
        if self.on_commit.is_some() {
            self.unknown = true;
        }
    }
}

impl<DB: Kind> Leased<DB> {
    /// Brings it to `wanted`, with one statement when its settings differ. A failure leaves
    /// it in a state not known, to be closed.
    async fn settle(&mut self, wanted: Option<&Arc<Settings>>) -> Result<(), sqlx::Error> {
        if self.has(wanted) {
            return Ok(());
        }
        let sql = Settings::transition(DB::KIND, self.applied.as_deref(), wanted.map(|w| &**w));
        if !sql.is_empty() {
            self.unknown = true;
            DB::run_text(&mut self.conn, &sql).await?;
            self.unknown = false;
        }
        self.applied = wanted.cloned();
        Ok(())
    }
}

impl<DB: Database> Deref for Leased<DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        &self.conn
    }
}

impl<DB: Database> DerefMut for Leased<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        &mut self.conn
    }
}

impl<DB: Database> Drop for Leased<DB> {
    fn drop(&mut self) {
        // Never back to sqlx's pool, from where another session would take it as it is: sqlx
        // closes it gracefully (the server ends its session and all it held) and keeps its
        // place in the pool until then.
        if !self.is_clean() {
            self.conn.close_on_drop();
        }
    }
}

/// One connection pinned, counted in its pool's count while it lives.
#[derive(Debug)]
pub(crate) struct Pin(Arc<AtomicUsize>);

impl Pin {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(count))
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
