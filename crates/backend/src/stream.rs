//! Rows passed on to the client as a shard sends them, instead of gathered whole first.
//!
//! A read whose rows need no merge (one node, or several whose rows are only put one after the
//! other) sends them in batches through a bounded channel to the frontend, which writes each
//! batch to the client as it comes. A slow client therefore slows its own shard reads (the
//! channel is full, the shard's socket fills, the shard waits), and the proxy holds a few
//! batches of a result however long it is.
//!
//! A read that cannot go out so (a merge orders, groups or windows the rows) keeps its rows
//! within `props.result-memory-bytes`, and fails past it.
//!
//! The engine runs each read in [`Backend::reading`], offering a [`Tap`] when the frontend
//! passes rows on as they come; the units of that read's plan, and only those, use it: the
//! backend's paths (autocommit, transactions, a session's kept connections) all end in
//! `execute::run_statement`, which finds its unit's way out through a task-local value, so
//! that none of them has to pass it along. A statement the proxy runs for itself meanwhile
//! (settings replayed, a savepoint) is no unit of that plan and keeps its rows.

use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_router::{ExecutionUnit, Plan};
use keyshard_types::Value;
use tokio::sync::{mpsc, oneshot};

use crate::Backend;
use crate::origins::Origins;
use crate::outcome::{Column, UnitResult};

/// Rows in one batch at most.
const BATCH_ROWS: usize = 256;
/// About the bytes of values at which a batch goes out before it has [`BATCH_ROWS`] rows.
const BATCH_BYTES: usize = 256 * 1024;
/// Batches read ahead of the client.
const AHEAD: usize = 2;

/// Rows read from one shard, in its order.
#[derive(Debug)]
pub struct Batch {
    /// The result's columns, with a unit's first batch: the first batch the frontend receives
    /// describes the result (every unit of a read has the same columns).
    pub columns: Option<Vec<Column>>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
}

/// The backend's end of a statement's result stream. The channel the batches go through is
/// opened with the first batch: nearly every read is answered whole without one (a point read
/// fills no batch), and a channel made and dropped cost each about 750 instructions.
#[derive(Debug)]
pub struct Tap(oneshot::Sender<mpsc::Receiver<Batch>>);

/// The frontend's end of a statement's result stream.
#[derive(Debug)]
pub struct Batches(Opening);

#[derive(Debug)]
enum Opening {
    /// Until the backend opens the channel, or ends the read without one.
    Waiting(oneshot::Receiver<mpsc::Receiver<Batch>>),
    Open(mpsc::Receiver<Batch>),
    Done,
}

impl Batches {
    /// The next batch; `None` once the statement's rows have all gone (or none went).
    /// Dropping this end makes the backend's next send fail: the client is gone.
    pub async fn recv(&mut self) -> Option<Batch> {
        if let Opening::Waiting(opening) = &mut self.0 {
            self.0 = match opening.await {
                Ok(receiver) => Opening::Open(receiver),
                Err(_) => Opening::Done,
            };
        }
        match &mut self.0 {
            Opening::Open(receiver) => receiver.recv().await,
            _ => None,
        }
    }
}

/// A tap and the frontend's end, which yields batches until the statement is answered.
pub fn channel() -> (Tap, Batches) {
    let (opened, opening) = oneshot::channel();
    (Tap(opened), Batches(Opening::Waiting(opening)))
}

/// A tap and its receiver when the statement about to run `may_stream`, else none (a write
/// answers no rows).
pub fn channel_if(may_stream: bool) -> (Option<Tap>, Option<Batches>) {
    match may_stream {
        true => {
            let (tap, batches) = channel();
            (Some(tap), Some(batches))
        }
        false => (None, None),
    }
}

/// Whether `plan`'s rows can go to the client as they arrive: a read whose merge, if any,
/// only concatenates the nodes' rows.
fn streams(plan: &Plan) -> bool {
    !plan.units.is_empty()
        && plan.gather.is_none()
        && plan.guard.is_none()
        && !plan.replicated
        && plan.merge.as_ref().is_none_or(|m| m.is_concatenation())
}

/// Where a streaming read's batches go.
enum Out {
    /// No batch yet: the channel is opened with the first.
    Unopened(Tap),
    Open(mpsc::Sender<Batch>),
}

/// The read in flight: where its batches go, if anywhere, and which units are its own.
struct Active {
    /// `None`: its rows are kept, to be merged or answered whole.
    out: Option<Mutex<Out>>,
    /// The addresses of the plan's units.
    units: Range<usize>,
    origins: Arc<Origins>,
    /// About the bytes of the rows its units keep, together.
    kept: Arc<AtomicU64>,
    /// `props.result-memory-bytes`.
    limit: u64,
    /// Whether any of its rows went out to the client yet.
    passed_on: Arc<AtomicBool>,
}

tokio::task_local! {
    static ACTIVE: Active;
}

impl Active {
    /// Where the read's batches go, the channel opened if no batch went yet; `None` when its
    /// rows are kept.
    fn sender(&self) -> Option<mpsc::Sender<Batch>> {
        let out = self.out.as_ref()?;
        Some(out.lock().unwrap_or_else(PoisonError::into_inner).sender())
    }
}

impl Out {
    /// The channel's sender, opened with the first call. A frontend gone before it opened
    /// gets the receiver dropped, so the send fails as it would had it gone after.
    fn sender(&mut self) -> mpsc::Sender<Batch> {
        if let Out::Open(sender) = self {
            return sender.clone();
        }
        let (sender, receiver) = mpsc::channel(AHEAD);
        if let Out::Unopened(tap) = std::mem::replace(self, Out::Open(sender.clone())) {
            let _ = tap.0.send(receiver);
        }
        sender
    }
}

impl Backend {
    /// Runs `work`, which executes the read `plan`: with `tap`, when the plan [`streams`], the
    /// rows of its units go there as they arrive, and those units' results then hold no rows,
    /// only how many were sent ([`crate::Outcome::streamed`]); rows its units keep are held
    /// within `props.result-memory-bytes`, beyond which the read fails.
    pub async fn reading<F: Future>(&self, plan: &Plan, tap: Option<Tap>, work: F) -> F::Output {
        let units = plan.units.as_ptr_range();
        let active = Active {
            out: tap
                .filter(|_| streams(plan))
                .map(|tap| Mutex::new(Out::Unopened(tap))),
            units: units.start as usize..units.end as usize,
            origins: Arc::clone(&self.origins),
            kept: Arc::default(),
            limit: self.result_limit,
            passed_on: Arc::default(),
        };
        ACTIVE.scope(active, work).await
    }
}

/// Why a unit's rows stopped: carried through sqlx's error to `BackendError::from_sqlx`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Stopped {
    /// The frontend dropped its end: the client is gone, or its socket failed.
    #[error("the client stopped reading the result")]
    ClientGone,
    /// The rows kept for the read outgrew `props.result-memory-bytes`.
    #[error("the read's rows outgrew props.result-memory-bytes ({0})")]
    TooLarge(u64),
}

impl From<Stopped> for sqlx::Error {
    fn from(stopped: Stopped) -> Self {
        sqlx::Error::Configuration(Box::new(stopped))
    }
}

/// Sends rows a unit kept (its values needed completing first) after those already streamed.
pub(crate) async fn send_kept(rows: Vec<Vec<Value>>) -> Result<(), crate::BackendError> {
    let Ok(Some(sender)) = ACTIVE.try_with(Active::sender) else {
        return Ok(());
    };
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let batch = Batch {
            columns: None,
            rows: rows.by_ref().take(BATCH_ROWS).collect(),
        };
        sender
            .send(batch)
            .await
            .map_err(|_| crate::BackendError::ClientGone)?;
    }
    Ok(())
}

/// Whether rows of the read in flight went out to the client already: then it cannot be run
/// again elsewhere without the client seeing them twice.
pub(crate) fn passed_on() -> bool {
    ACTIVE
        .try_with(|active| active.passed_on.load(Ordering::Relaxed))
        .unwrap_or(false)
}

/// Where one unit of the read in flight puts its rows: out to the client as they come, or
/// kept within the read's limit.
pub(crate) struct UnitRows {
    /// Whether its rows go out as they come.
    streams: bool,
    /// Where they go, from its first batch.
    sender: Option<mpsc::Sender<Batch>>,
    origins: Arc<Origins>,
    kept: Arc<AtomicU64>,
    limit: u64,
    passed_on: Arc<AtomicBool>,
    /// The columns, as the unit's data source described them, until the first batch takes
    /// them.
    columns: Option<(Vec<Column>, String)>,
    batch: Vec<Vec<Value>>,
    bytes: usize,
    sent: u64,
}

impl UnitRows {
    /// Where `unit`'s rows go, when it is a unit of the read in flight.
    pub(crate) fn of(unit: &ExecutionUnit) -> Option<Self> {
        let at = std::ptr::from_ref(unit) as usize;
        ACTIVE
            .try_with(|active| {
                active.units.contains(&at).then(|| UnitRows {
                    streams: active.out.is_some(),
                    sender: None,
                    origins: Arc::clone(&active.origins),
                    kept: Arc::clone(&active.kept),
                    limit: active.limit,
                    passed_on: Arc::clone(&active.passed_on),
                    columns: None,
                    batch: Vec::new(),
                    bytes: 0,
                    sent: 0,
                })
            })
            .ok()
            .flatten()
    }

    /// Keeps the unit's rows: values completed after the result cannot go out before it.
    pub(crate) fn keep(&mut self) {
        self.streams = false;
    }

    /// The columns of `unit`'s result, which go out with its first batch when its rows do
    /// (`columns` is left empty until [`UnitRows::finish`] gives them back to a result kept
    /// whole).
    pub(crate) fn describe(&mut self, unit: &ExecutionUnit, columns: &mut Vec<Column>) {
        if self.streams {
            self.columns = Some((std::mem::take(columns), unit.data_source.clone()));
        }
    }

    /// A row of the unit's result: into the next batch, or into `kept`. `true` when the
    /// batch is full: [`UnitRows::send`] it before the next row.
    pub(crate) fn push(
        &mut self,
        row: Vec<Value>,
        kept: &mut Vec<Vec<Value>>,
    ) -> Result<bool, sqlx::Error> {
        let bytes = row.iter().map(Value::size).sum::<usize>();
        if !self.streams {
            let held = self.kept.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
            if held > self.limit {
                return Err(Stopped::TooLarge(self.limit).into());
            }
            with_room(kept).push(row);
            return Ok(false);
        }
        self.bytes += bytes;
        with_room(&mut self.batch).push(row);
        Ok(self.batch.len() >= BATCH_ROWS || self.bytes >= BATCH_BYTES)
    }

    /// Ends the unit's rows into `result`: what is left of them goes out when some went
    /// already, and `result` says how many; a result that never filled a batch (nearly every
    /// one: a point read) is kept whole in `result` instead, rows and columns, and answered as
    /// any kept result is, which costs less than passing it on.
    pub(crate) async fn finish(mut self, result: &mut UnitResult) -> Result<(), sqlx::Error> {
        if self.sent == 0 {
            if let Some((columns, _)) = self.columns.take() {
                result.columns = columns;
            }
            if result.rows.is_empty() {
                result.rows = std::mem::take(&mut self.batch);
            } else {
                result.rows.append(&mut self.batch);
            }
            return Ok(());
        }
        if !self.batch.is_empty() {
            self.send().await?;
        }
        result.streamed = Some(self.sent);
        Ok(())
    }

    /// Sends the batch, waiting while the client is behind.
    pub(crate) async fn send(&mut self) -> Result<(), sqlx::Error> {
        if !self.streams {
            return Ok(());
        }
        let sender = match &mut self.sender {
            Some(sender) => sender,
            // The unit runs inside its read's scope (see `UnitRows::of`); a read whose channel
            // cannot be reached stops rather than keep its rows unbounded.
            empty => empty.insert(
                ACTIVE
                    .try_with(Active::sender)
                    .ok()
                    .flatten()
                    .ok_or(Stopped::ClientGone)?,
            ),
        };
        let rows = std::mem::take(&mut self.batch);
        self.sent += rows.len() as u64;
        self.passed_on.store(true, Ordering::Relaxed);
        self.bytes = 0;
        // The columns as the logical database shows them (see `origins`).
        let columns = self.columns.take().map(|(mut columns, data_source)| {
            self.origins.logical(&data_source, &mut columns);
            columns
        });
        let batch = Batch { columns, rows };
        sender
            .send(batch)
            .await
            .map_err(|_| Stopped::ClientGone.into())
    }
}

/// `rows`, with room for a short result's rows from the first: grown one row at a time from
/// empty, a vector of rows is reallocated at 4, 8 and 16.
fn with_room(rows: &mut Vec<Vec<Value>>) -> &mut Vec<Vec<Value>> {
    if rows.capacity() == 0 {
        rows.reserve(16);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(n: usize) -> Batch {
        Batch {
            columns: None,
            rows: vec![Vec::new(); n],
        }
    }

    /// The frontend's end waits for the channel, reads what goes through it in order, and
    /// ends when the backend's ends are gone, opened or not.
    #[tokio::test]
    async fn a_channel_opens_with_the_first_batch_only() {
        let (tap, mut batches) = channel();
        drop(tap);
        assert!(batches.recv().await.is_none());

        let (tap, mut batches) = channel();
        let mut out = Out::Unopened(tap);
        let first = out.sender();
        let second = out.sender();
        let sending = async {
            for (sender, rows) in [(&first, 1), (&second, 2), (&first, 3)] {
                sender.send(batch(rows)).await.unwrap();
            }
            drop((first, second, out));
        };
        let receiving = async {
            let mut seen = Vec::new();
            while let Some(batch) = batches.recv().await {
                seen.push(batch.rows.len());
            }
            seen
        };
        let ((), seen) = tokio::join!(sending, receiving);
        assert_eq!(seen, [1, 2, 3]);
    }

    /// A frontend gone before the first batch makes that batch's send fail: the read stops
    /// as it does for one gone later.
    #[tokio::test]
    async fn a_frontend_gone_before_the_first_batch_fails_its_send() {
        let (tap, batches) = channel();
        drop(batches);
        let sender = Out::Unopened(tap).sender();
        assert!(sender.send(batch(1)).await.is_err());
    }
}
