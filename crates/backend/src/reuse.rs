//! Connections kept between statements.
//!
//! sqlx 0.8 pings every connection given back to its pool (`return_to_pool` sends COM_PING or
//! its equivalent), which costs a second round trip to the database for every statement a
//! proxy runs in autocommit mode. A connection that finished its statement cleanly is kept
//! here instead and handed out again; it goes back to sqlx (and its checks) only when it has
//! been idle too long, when a statement on it failed, or when the pool closes.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::Database;
use sqlx::pool::PoolConnection;

/// A sqlx pool and the connections kept out of it between statements.
#[derive(Debug)]
pub struct Connections<DB: Database> {
    pool: sqlx::Pool<DB>,
    idle: Mutex<Vec<(PoolConnection<DB>, Instant)>>,
    idle_timeout: Duration,
}

impl<DB: Database> Connections<DB> {
    pub(crate) fn new(pool: sqlx::Pool<DB>, idle_timeout: Duration) -> Self {
        Self {
            pool,
            idle: Mutex::new(Vec::new()),
            idle_timeout,
        }
    }

    /// The sqlx pool (for transactions and one-off queries).
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }

    /// A kept connection that has not been idle too long, else one from the pool.
    pub(crate) async fn acquire(&self) -> Result<PoolConnection<DB>, sqlx::Error> {
        loop {
            let kept = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            match kept {
                Some((conn, since)) if since.elapsed() < self.idle_timeout => return Ok(conn),
                // Back to sqlx, which checks it and retires it when the database dropped it.
                Some(stale) => drop(stale),
                None => return self.pool.acquire().await,
            }
        }
    }

    /// Keeps a connection whose statement completed, for the next statement.
    pub(crate) fn release(&self, conn: PoolConnection<DB>) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((conn, Instant::now()));
    }

    /// Gives every kept connection back and closes the pool.
    pub(crate) async fn close(&self) {
        let kept = std::mem::take(&mut *self.idle.lock().unwrap_or_else(PoisonError::into_inner));
        drop(kept);
        self.pool.close().await;
    }
}
