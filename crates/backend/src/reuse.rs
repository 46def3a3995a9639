//! Connections kept between statements.
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
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::Database;
use sqlx::pool::PoolConnection;
use tokio::sync::oneshot;

/// A pool's state at one moment, for the metrics endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections open, busy or idle.
    pub open: usize,
    /// Connections open and idle.
    pub idle: usize,
    /// Statements waiting for a connection.
    pub waiting: usize,
}

/// A sqlx pool and the connections kept out of it between statements.
#[derive(Debug)]
pub struct Connections<DB: Database> {
    pool: sqlx::Pool<DB>,
    idle: Mutex<Vec<(PoolConnection<DB>, Instant)>>,
    /// Statements waiting for a connection, oldest first.
    waiters: Mutex<VecDeque<oneshot::Sender<PoolConnection<DB>>>>,
    idle_timeout: Duration,
    acquire_timeout: Duration,
}

impl<DB: Database> Connections<DB> {
    pub(crate) fn new(pool: sqlx::Pool<DB>, idle_timeout: Duration) -> Self {
        let acquire_timeout = pool.options().get_acquire_timeout();
        Self {
            pool,
            idle: Mutex::new(Vec::new()),
            waiters: Mutex::new(VecDeque::new()),
            idle_timeout,
            acquire_timeout,
        }
    }

    /// The sqlx pool underneath (its connect options serve a check outside the pool).
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }

    /// A kept connection that has not been idle too long, else one from the pool, waiting up
    /// to the pool's acquire time-out for whichever comes first.
    pub(crate) async fn acquire(&self) -> Result<PoolConnection<DB>, sqlx::Error> {
        if let Some(conn) = self.pop_fresh() {
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

    fn pop_fresh(&self) -> Option<PoolConnection<DB>> {
        loop {
            let kept = lock(&self.idle).pop();
            match kept {
                Some((conn, since)) if since.elapsed() < self.idle_timeout => return Some(conn),
                // Back to sqlx, which checks it and retires it when the database dropped it.
                Some(stale) => drop(stale),
                None => return None,
            }
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
        if result.is_ok() {
            self.release(conn);
        }
        result
    }

    /// Keeps a connection whose statement completed, for the next statement.
    pub(crate) fn release(&self, mut conn: PoolConnection<DB>) {
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
