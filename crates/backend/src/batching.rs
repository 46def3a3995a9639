//! Natural batching: single-row INSERTs of several sessions, queued for the same actual table at
//! the same moment, go to the shard as one multi-row INSERT.
//!
//! Nothing waits to form a batch. A statement runs alone while fewer than [`RUNNING`] of its
//! kind are in flight; one that arrives while they are queues, and when a slot frees up,
//! everything queued by then goes as one statement. Statements are of a kind when they have
//! the same text around their row, on the same data source, from sessions with the same
//! settings (which the batch's connection then has). The router marks which statements may
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
use std::fmt::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keyshard_router::{BatchRow, ExecutionUnit};
use sqlx::Row;
use tokio::sync::oneshot;

use crate::outcome::UnitResult;
use crate::session_state::{self, SessionState, Settings};
use crate::{BackendError, Pool, execute};

/// Statements of one kind in flight at once, each alone or a batch.
const RUNNING: usize = 1;

/// The most bytes of rows one batch carries (MariaDB's `max_allowed_packet` is 16 MiB).
const MAX_BATCH_BYTES: usize = 1 << 20;

/// The most parameters of one batch: both protocols count them in 16 bits.
const MAX_BATCH_PARAMS: usize = u16::MAX as usize;

/// How long what a table allows is believed before it is read again (a trigger created on the
/// shard directly is seen within this time).
const TABLE_CHECK_TTL: Duration = Duration::from_secs(10);

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

/// Whether a table's rows may be batched, as last read.
#[derive(Debug, Clone, Copy)]
enum Allowed {
    /// A statement is reading it (a read that never ends is retried after the TTL).
    Checking(Instant),
    /// Yes; and whether its connections are in a strict `sql_mode` by themselves (MariaDB).
    Yes(Instant, bool),
    No(Instant),
}

/// What [`Batching::joins`] answers.
enum Joining {
    /// It does not.
    No,
    /// It does: with the settings its batch must have, and whether the batch needs [`STRICT`].
    Yes(Option<Arc<Settings>>, bool),
    /// Its table must be read first; it runs alone.
    Check,
}

#[derive(Debug)]
struct Waiting {
    unit: ExecutionUnit,
    row: BatchRow,
    /// Its batch needs [`STRICT`].
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
    /// its batch must have and whether it needs [`STRICT`] (MariaDB, unless neither the
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

/// Statements of a kind on one data source: the same text around their row, from sessions
/// with the same settings.
#[derive(Debug)]
struct Queue {
    kind: Kind,
    waiting: Vec<Waiting>,
    running: usize,
}

/// What makes statements of a kind, owned.
#[derive(Debug, Clone)]
struct Kind {
    head: Box<str>,
    tail: Box<str>,
    settings: Option<Arc<Settings>>,
}

impl Kind {
    fn is(&self, head: &str, tail: &str, settings: &Option<Arc<Settings>>) -> bool {
        let same_settings = match (&self.settings, settings) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            (a, b) => a.is_none() && b.is_none(),
        };
        same_settings && *self.head == *head && *self.tail == *tail
    }
}

/// Where the queue of a kind is among its data source's.
fn position(
    kinds: &[Queue],
    (head, tail): (&str, &str),
    settings: &Option<Arc<Settings>>,
) -> Option<usize> {
    kinds.iter().position(|q| q.kind.is(head, tail, settings))
}

/// Queues with nothing running or waiting a data source keeps for their kinds' next
/// statements (a client's next INSERT then finds its queue instead of making one).
const IDLE_QUEUES: usize = 32;

/// Gives back a slot of `kinds[at]`, which has nothing waiting; ends the data source's idle
/// queues when it has more than [`IDLE_QUEUES`].
fn give_back(kinds: &mut Vec<Queue>, at: usize) {
    let Some(queue) = kinds.get_mut(at) else {
        return;
    };
    queue.running = queue.running.saturating_sub(1);
    if queue.running == 0 && kinds.len() > IDLE_QUEUES {
        kinds.retain(|q| q.running > 0 || !q.waiting.is_empty());
    }
}

/// Notes what `table` on `data_source` allows.
fn note(
    tables: &mut BTreeMap<String, Vec<(String, Allowed)>>,
    data_source: &str,
    table: &str,
    allowed: Allowed,
) {
    let sources = tables.entry(table.to_owned()).or_default();
    match sources.iter_mut().find(|(ds, _)| ds == data_source) {
        Some((_, noted)) => *noted = allowed,
        None => sources.push((data_source.to_owned(), allowed)),
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
            Some(queue) if queue.running >= RUNNING => {
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
                queue.running += 1;
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
                    running: 1,
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

/// The text before and after a unit's row.
fn around<'a>(unit: &'a ExecutionUnit, row: &Range<usize>) -> Option<(&'a str, &'a str)> {
    Some((unit.sql.get(..row.start)?, unit.sql.get(row.end..)?))
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
        if kinds[at].waiting.is_empty() {
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

/// Sends what is queued of `kind` on `data_source` as batches until nothing is, then gives
/// its slot back.
async fn drain(batching: Arc<Batching>, pool: Arc<Pool>, data_source: String, kind: Kind) {
    let text = (&*kind.head, &*kind.tail);
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
            if queue.waiting.is_empty() {
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

/// What makes a MariaDB batch refuse whatever a single row would be refused or changed for,
/// whatever the session's `sql_mode`.
const STRICT: &str = "SET STATEMENT sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES') FOR ";

/// One INSERT of every row of `batch`, around them the text they share; its parameters are
/// theirs in turn, PostgreSQL's numbered on from the rows before.
fn joined(batch: &[Waiting]) -> Option<ExecutionUnit> {
    let first = batch.first()?;
    let (head, tail) = around(&first.unit, &first.row.row)?;
    let rows: usize = batch.iter().map(|w| w.row.row.len() + 4).sum();
    let mut sql = String::with_capacity(STRICT.len() + head.len() + rows + tail.len());
    if first.strict {
        sql.push_str(STRICT);
    }
    sql.push_str(head);
    let mut before = 0;
    for (i, waiting) in batch.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        numbered_on(&mut sql, &waiting.unit, &waiting.row, before)?;
        before += waiting.unit.params.len();
    }
    sql.push_str(tail);
    let params = batch.iter().flat_map(|w| w.unit.params.iter().cloned());
    Some(ExecutionUnit {
        sql,
        params: params.collect(),
        rows: (0..batch.len()).collect(),
        ..first.unit.clone()
    })
}

/// Appends `unit`'s row with its PostgreSQL placeholders (`$1` …) numbered on from `before`.
/// `None`: the placeholders are not what the row's parameters say.
fn numbered_on(
    sql: &mut String,
    unit: &ExecutionUnit,
    row: &BatchRow,
    before: usize,
) -> Option<()> {
    let text = unit.sql.as_str();
    if row.placeholders.is_empty() || before == 0 {
        sql.push_str(text.get(row.row.clone())?);
        return Some(());
    }
    if row.placeholders.len() != unit.params.len() {
        return None;
    }
    let mut from = row.row.start;
    for &at in &row.placeholders {
        let digits = text
            .get(at + 1..)?
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let n: usize = text.get(at + 1..at + 1 + digits)?.parse().ok()?;
        sql.push_str(text.get(from..at)?);
        let _ = write!(sql, "${}", n + before);
        from = at + 1 + digits;
    }
    sql.push_str(text.get(from..row.row.end)?);
    Some(())
}

/// Whether rows inserted into `table` beside others are what they would have been alone: no
/// triggers or rules; on MySQL, a MariaDB server (which has `SET STATEMENT`, see [`STRICT`]) and
/// a transactional table (a multi-row INSERT refused halfway keeps no row). If so, whether
/// its connections are in a strict `sql_mode` by themselves.
async fn allows_batches(pool: &Pool, table: &str) -> Result<Option<bool>, sqlx::Error> {
    match pool {
        Pool::MySql(c) => {
            let row = c
                .with_base(async |conn| {
                    sqlx::query(
                        "SELECT CAST(t.ENGINE AS CHAR), CAST(@@version AS CHAR), \
                         CAST(@@SESSION.sql_mode AS CHAR), \
                         (SELECT COUNT(*) FROM information_schema.TRIGGERS g WHERE \
                         g.EVENT_OBJECT_SCHEMA = t.TABLE_SCHEMA AND \
                         g.EVENT_OBJECT_TABLE = t.TABLE_NAME) \
                         FROM information_schema.TABLES t \
                         WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = ?",
                    )
                    .bind(table)
                    .fetch_optional(conn)
                    .await
                })
                .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let engine: Option<String> = row.try_get(0)?;
            let version: Option<String> = row.try_get(1)?;
            let mode: Option<String> = row.try_get(2)?;
            let triggers: i64 = row.try_get(3)?;
            let allowed = engine.is_some_and(|e| e.eq_ignore_ascii_case("InnoDB"))
                && version.is_some_and(|v| v.contains("MariaDB"))
                && triggers == 0;
            // Either strict mode is strict for InnoDB.
            let strict = mode.is_some_and(|m| m.contains("STRICT_"));
            Ok(allowed.then_some(strict))
        }
        Pool::Postgres(c) => {
            let allowed: Option<bool> = c
                .with_base(async |conn| {
                    sqlx::query_scalar(
                        "SELECT c.relkind = 'r' AND NOT c.relhasrules AND NOT EXISTS \
                         (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT \
                         g.tgisinternal) FROM pg_class c WHERE c.oid = to_regclass($1)",
                    )
                    .bind(table)
                    .fetch_optional(conn)
                    .await
                })
                .await?;
            Ok((allowed == Some(true)).then_some(true))
        }
        Pool::Sqlite(_) => Ok(None),
    }
}
