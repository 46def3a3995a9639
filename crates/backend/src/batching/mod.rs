//! Natural batching: single-row INSERTs of several sessions, queued for the same actual table at
//! the same moment, go to the shard as one multi-row INSERT.
//!
//! Nothing waits to form a batch. A statement runs alone while fewer than two of its kind are
//! in flight and none of them is a batch (see [`InFlight`]); one that arrives otherwise queues, and when
//! a slot frees up, everything queued by then goes as one statement. A batch in flight is the
//! sign that the database, not the proxy, is what statements wait for: then one statement or
//! batch of a kind runs at a time, so that batches are as large as the load makes them. While
//! none has formed, two run side by side, so that at a light load no statement waits behind
//! another of its kind (one at a time cost four clients a fifth of their INSERTs).
//!
//! Statements are of a kind when they have the same text around their row, on the same data
//! source, from sessions with the same settings (which the batch's connection then has). The
//! router marks which statements may
//! join (one row of plain values, nothing else to do: see `Plan::batch_row`); the table must be
//! one where a row inserted beside others is what it would have been alone: no triggers or
//! rules, and on MariaDB a transactional engine. MariaDB runs the batch in strict mode, where a
//! multi-row INSERT refuses whatever a single row would be refused (not strict, it would store
//! a NULL for a NOT NULL column as a default) or changed with a warning.
//!
//! Each session gets what it would have had alone: one affected row, its own key (the router
//! generated it). When the database refuses the batch, which then stored nothing (one
//! statement in autocommit), its statements run again one by one with their own settings, so
//! that only the statement at fault gets the error. When the connection fails, whether the
//! batch was stored is not known, and every session is told so. The batch runs in a task of
//! its own: a session that goes away does not take the others' answers with it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use keyshard_router::{BatchRow, ExecutionUnit};
use tokio::sync::oneshot;

use crate::outcome::UnitResult;
use crate::session_state::{self, SessionState, Settings};
use crate::{BackendError, Pool, execute};

mod joined;
mod queue;
mod tables;

use joined::{around, joined};
use queue::{InFlight, Kind, Queue, give_back, position};
use tables::{Allowed, TABLE_CHECK_TTL, allows_batches, note};

/// The most bytes of rows one batch carries (MariaDB's `max_allowed_packet` is 16 MiB).
const MAX_BATCH_BYTES: usize = 1 << 20;

/// The most parameters of one batch: both protocols count them in 16 bits.
const MAX_BATCH_PARAMS: usize = u16::MAX as usize;

/// The batches of a backend, and what each table allows.
#[derive(Debug)]
pub(crate) struct Batching {
    /// `props.insert-batch-max-rows`: the most rows in one batch; below 2: no batching.
    max_rows: usize,
    /// By data source: a few kinds each, found by comparing (no hashing of a statement's text
    /// or its session's settings, no allocation on a statement's way; a few data sources are
    /// found in fewer steps in a tree than by hashing their names).
    queues: Mutex<BTreeMap<String, Vec<Queue>>>,
    /// By actual table, then data source.
    tables: Mutex<BTreeMap<String, Vec<(String, Allowed)>>>,
    stats: Stats,
}

/// What `/metrics` shows of batching.
#[derive(Debug, Default)]
pub struct Stats {
    /// Multi-row INSERTs sent.
    pub batches: AtomicU64,
    /// Statements they carried.
    pub batched: AtomicU64,
    /// Batches the database refused, whose statements then ran one by one.
    pub retried: AtomicU64,
}

/// What [`Batching::joins`] answers.
enum Joining {
    /// It does not.
    No,
    /// It does: with the settings its batch must have, and whether the batch needs [`joined::STRICT`].
    Yes(Option<Arc<Settings>>, bool),
    /// Its table must be read first; it runs alone.
    Check,
}

#[derive(Debug)]
struct Waiting {
    unit: ExecutionUnit,
    row: BatchRow,
    /// Its batch needs [`joined::STRICT`].
    strict: bool,
    answer: oneshot::Sender<Result<UnitResult, BackendError>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Batching {
    pub(crate) fn new(max_rows: usize) -> Self {
        Self {
            max_rows,
            queues: Mutex::default(),
            tables: Mutex::default(),
            stats: Stats::default(),
        }
    }

    pub(crate) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Whether `unit`, the one unit of a statement that may join others, joins them: batching
    /// is on, its session keeps no connection and its table allows it; if so, the settings
    /// its batch must have and whether it needs [`joined::STRICT`] (MariaDB, unless neither the
    /// connections nor the session make the mode other than strict). A table not known yet is
    /// read by the statement that finds it so, which then runs alone.
    fn joins(&self, pool: &Pool, unit: &ExecutionUnit) -> Joining {
        if self.max_rows < 2 || matches!(pool, Pool::Sqlite(_)) {
            return Joining::No;
        }
        let settings = match session_state::current() {
            Some(session) if session.is_pinned() => return Joining::No,
            Some(session) => session.wanted(),
            None => None,
        };
        // Another search_path may find another table than the one checked.
        if settings
            .as_ref()
            .is_some_and(|s| s.get("search_path").is_some())
        {
            return Joining::No;
        }
        let mut tables = lock(&self.tables);
        let known = (tables.get(unit.table.as_str()))
            .and_then(|sources| sources.iter().find(|(ds, _)| *ds == unit.data_source))
            .map(|(_, allowed)| *allowed);
        match known {
            Some(Allowed::Yes(at, strict)) if at.elapsed() < TABLE_CHECK_TTL => {
                let mode = settings
                    .as_ref()
                    .is_some_and(|s| s.get("sql_mode").is_some());
                let needs_strict = matches!(pool, Pool::MySql(_)) && (mode || !strict);
                Joining::Yes(settings, needs_strict)
            }
            Some(Allowed::No(at)) if at.elapsed() < TABLE_CHECK_TTL => Joining::No,
            Some(Allowed::Checking(at)) if at.elapsed() < TABLE_CHECK_TTL => Joining::No,
            _ => {
                note(
                    &mut tables,
                    &unit.data_source,
                    &unit.table,
                    Allowed::Checking(Instant::now()),
                );
                Joining::Check
            }
        }
    }

    /// Reads what `unit`'s table allows, for the statements after this one.
    async fn check(&self, pool: &Pool, unit: &ExecutionUnit) {
        let allowed = match allows_batches(pool, &unit.table).await {
            Ok(Some(strict)) => Allowed::Yes(Instant::now(), strict),
            Ok(None) => Allowed::No(Instant::now()),
            Err(e) => {
                tracing::debug!(table = unit.table, "batching not checked: {e}");
                Allowed::No(Instant::now())
            }
        };
        note(
            &mut lock(&self.tables),
            &unit.data_source,
            &unit.table,
            allowed,
        );
    }

    /// Forgets what tables allow: a schema change through the proxy may have added a trigger.
    pub(crate) fn forget_tables(&self) {
        lock(&self.tables).clear();
    }
}

/// Runs `unit`, whose one row is `row`, alone or in a batch. `None`: it does not join others;
/// run it as usual.
pub(crate) async fn insert(
    batching: &Arc<Batching>,
    pool: &Arc<Pool>,
    unit: &ExecutionUnit,
    row: &BatchRow,
) -> Option<Result<UnitResult, BackendError>> {
    let text = around(unit, &row.row)?;
    let (settings, strict) = match batching.joins(pool, unit) {
        Joining::Yes(settings, strict) => (settings, strict),
        Joining::No => return None,
        Joining::Check => {
            batching.check(pool, unit).await;
            return None;
        }
    };
    let answered = {
        let mut queues = lock(&batching.queues);
        if !queues.contains_key(&unit.data_source) {
            queues.insert(unit.data_source.clone(), Vec::new());
        }
        let kinds = queues.get_mut(&unit.data_source)?;
        match position(kinds, text, &settings).map(|at| &mut kinds[at]) {
            Some(queue) if !queue.in_flight.admits() => {
                let (answer, answered) = oneshot::channel();
                queue.waiting.push(Waiting {
                    unit: unit.clone(),
                    row: row.clone(),
                    strict,
                    answer,
                });
                Some(answered)
            }
            Some(queue) => {
                queue.in_flight.running += 1;
                None
            }
            None => {
                let kind = Kind {
                    head: text.0.into(),
                    tail: text.1.into(),
                    settings: settings.clone(),
                };
                kinds.push(Queue {
                    kind,
                    waiting: Vec::new(),
                    in_flight: InFlight {
                        running: 1,
                        batches: 0,
                    },
                });
                None
            }
        }
    };
    let Some(answered) = answered else {
        let slot = Slot {
            batching,
            pool,
            unit,
            text,
            settings: &settings,
        };
        let result = execute::autocommit(pool, &[unit]).await;
        drop(slot);
        return Some(one(&unit.data_source, result));
    };
    Some(answered.await.unwrap_or_else(|_| {
        Err(BackendError::OutcomeUnknown {
            data_source: unit.data_source.clone(),
            message: "the batch this INSERT was sent in ended without an answer".into(),
        })
    }))
}

/// A statement's place among those of its kind in flight. Given back when it ends (or its
/// session goes away): to a batch of what queued meanwhile, if anything did.
struct Slot<'a> {
    batching: &'a Arc<Batching>,
    pool: &'a Arc<Pool>,
    unit: &'a ExecutionUnit,
    text: (&'a str, &'a str),
    settings: &'a Option<Arc<Settings>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let data_source = self.unit.data_source.as_str();
        let mut queues = lock(&self.batching.queues);
        let Some(kinds) = queues.get_mut(data_source) else {
            return;
        };
        let Some(at) = position(kinds, self.text, self.settings) else {
            return;
        };
        if kinds[at].waiting.is_empty() || kinds[at].in_flight.hands_over() {
            give_back(kinds, at);
            return;
        }
        let kind = kinds[at].kind.clone();
        drop(queues);
        let (batching, pool) = (Arc::clone(self.batching), Arc::clone(self.pool));
        let data_source = data_source.to_owned();
        // The batch's connection gets the sessions' settings, as their own would.
        let state = Arc::new(SessionState::new(kind.settings.as_deref().cloned()));
        let drain = drain(batching, pool, data_source, kind);
        tokio::spawn(session_state::serve(state, drain));
    }
}

/// Sends what is queued of `kind` on `data_source` as batches until nothing is, or another
/// batch of its kind is in flight to take it, then gives its slot back.
async fn drain(batching: Arc<Batching>, pool: Arc<Pool>, data_source: String, kind: Kind) {
    let text = (&*kind.head, &*kind.tail);
    let mut sent_batch = false;
    loop {
        let batch = {
            let mut queues = lock(&batching.queues);
            let Some(kinds) = queues.get_mut(&data_source) else {
                return;
            };
            let Some(at) = position(kinds, text, &kind.settings) else {
                return;
            };
            let queue = &mut kinds[at];
            if sent_batch {
                queue.in_flight.batches = queue.in_flight.batches.saturating_sub(1);
            }
            if queue.waiting.is_empty() || queue.in_flight.hands_over() {
                give_back(kinds, at);
                return;
            }
            let (mut bytes, mut params) = (0, 0);
            let take = queue
                .waiting
                .iter()
                .take(batching.max_rows)
                .take_while(|w| {
                    bytes += w.row.row.len();
                    params += w.unit.params.len();
                    bytes <= MAX_BATCH_BYTES && params <= MAX_BATCH_PARAMS
                })
                .count()
                .max(1);
            sent_batch = take > 1;
            queue.in_flight.batches += usize::from(sent_batch);
            queue.waiting.drain(..take).collect::<Vec<_>>()
        };
        run(&batching.stats, &pool, batch).await;
    }
}

/// Runs `batch` as one statement, or, refused, each of its statements alone; answers each.
async fn run(stats: &Stats, pool: &Pool, mut batch: Vec<Waiting>) {
    if batch.len() == 1 {
        let waiting = batch.remove(0);
        let result = execute::autocommit(pool, &[&waiting.unit]).await;
        answer(waiting, result);
        return;
    }
    let Some(joined) = joined(&batch) else {
        return alone(pool, batch).await;
    };
    tracing::debug!(rows = batch.len(), sql = %joined.sql, "batched INSERT");
    match execute::autocommit(pool, &[&joined]).await {
        Ok(results) => {
            stats.batches.fetch_add(1, Ordering::Relaxed);
            stats
                .batched
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            let affected: u64 = results.iter().map(|r| r.affected_rows).sum();
            if affected != batch.len() as u64 {
                tracing::warn!(
                    affected,
                    rows = batch.len(),
                    "a batched INSERT changed another number of rows than it carried"
                );
            }
            for waiting in batch {
                let _ = waiting.answer.send(Ok(UnitResult {
                    affected_rows: 1,
                    ..UnitResult::default()
                }));
            }
        }
        // The database refused it, so it stored nothing (one statement in autocommit): each
        // runs alone, and only the one at fault is refused.
        Err(e) if e.as_database_error().is_some() => {
            stats.retried.fetch_add(1, Ordering::Relaxed);
            tracing::debug!("batched INSERT refused, its statements run alone: {e}");
            alone(pool, batch).await;
        }
        Err(e) => {
            for waiting in batch {
                let _ = waiting.answer.send(Err(BackendError::OutcomeUnknown {
                    data_source: joined.data_source.clone(),
                    message: format!(
                        "the connection failed while this INSERT ran with {} others in one \
                         statement: {e}",
                        joined.rows.len() - 1
                    ),
                }));
            }
        }
    }
}

/// Each statement of `batch` alone, in the order they came.
async fn alone(pool: &Pool, batch: Vec<Waiting>) {
    for waiting in batch {
        let result = execute::autocommit(pool, &[&waiting.unit]).await;
        answer(waiting, result);
    }
}

fn answer(waiting: Waiting, result: Result<Vec<UnitResult>, sqlx::Error>) {
    let _ = waiting.answer.send(one(&waiting.unit.data_source, result));
}

/// The result of a unit run alone. A connection that failed may have failed after the
/// database stored the row: the client is told that it is not known, not that it failed.
fn one(
    data_source: &str,
    result: Result<Vec<UnitResult>, sqlx::Error>,
) -> Result<UnitResult, BackendError> {
    match result {
        Ok(mut results) => Ok(results.pop().unwrap_or_default()),
        Err(e @ (sqlx::Error::Io(_) | sqlx::Error::Protocol(_))) => {
            Err(BackendError::OutcomeUnknown {
                data_source: data_source.to_owned(),
                message: format!("the connection failed while this INSERT ran: {e}"),
            })
        }
        Err(e) => Err(BackendError::from_sqlx(data_source, e)),
    }
}
