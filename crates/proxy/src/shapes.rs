//! Statements sent as text, planned through their shapes (see [`keyshard_router::Shape`]):
//! the first statement of a shape is parsed as usual and noted, the second is parsed too and
//! decides whether the shape, prepared with its literals as parameters, plans every statement
//! of it alike; the statements after it only bind. This takes the parser off the path of an
//! application's repeated INSERTs and its reads and writes by key. A multi-row INSERT whose
//! rows fold into its first (a bulk load's) is learned at once, from that row alone: one row
//! parsed, where parsing the statement would hold every row's tokens and tree; its shape then
//! serves every row count. On PostgreSQL and MariaDB shards an INSERT's literals go as
//! parameters too (see [`typed`]), which takes it off the database's path as well; the other
//! statements go as the client wrote them.
//!
//! Only statements the engine routes are learned, and none whose text it rewrote first
//! (MySQL's `LAST_INSERT_ID()` and user variables): the text outside its literals, which is
//! the shape's, decides both, so a statement of a known shape is routed as it stands.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_backend::cache::{Bounds, Cache, CacheStats};
use keyshard_router::{Metadata, Prepared, PreparedInsert, PreparedQuery, Router, Shape};
use keyshard_types::Dialect;

use typed::Slot;

use crate::session::Planned;

pub(crate) mod typed;

/// What is known of a shape.
#[derive(Debug, Clone)]
pub(crate) enum Known {
    /// Statements of this shape bind this.
    Insert(Arc<ShapedInsert>),
    /// Statements of this shape (a SELECT, UPDATE or DELETE) bind this.
    Query(Arc<PreparedQuery>),
    /// Statements of this shape are parsed one by one.
    Parse,
    /// One statement of this shape was parsed; the next one learns it. A statement whose
    /// text never repeats (an ad-hoc query, an IN list of a new length) is then parsed once,
    /// not also prepared from its shape.
    Seen,
}

/// The INSERT that statements of a shape bind.
#[derive(Debug)]
pub(crate) struct ShapedInsert {
    /// Prepared from the shape's text.
    pub(crate) insert: PreparedInsert,
    /// How its literals go to the shards as parameters; `None`: written back as text.
    pub(crate) slots: Option<Box<[Slot]>>,
}

#[derive(Debug)]
struct Entry {
    known: Known,
    /// The metadata it was prepared with (a column-less INSERT depends on it).
    metadata_version: u64,
    calls: CallsChecked,
}

/// One more than the generation of the routines (see `routines::Names`) under which a
/// statement of a shape was last found to call no routine nor function that holds session
/// state, every name it calls known; 0: not yet. The shape's next statements skip that check
/// until the routines are read again: it reads the text outside the literals, which is the
/// shape's (see `engine::pinned`).
pub(crate) type CallsChecked = Arc<AtomicU64>;

/// By shape text, weighing its length.
type Kept = Cache<Box<str>, Entry>;

/// The shapes seen so far, for both dialects, each within `props.shape-cache-entries` and
/// `props.shape-cache-bytes` (of shape texts): statements that never repeat (a literal in a
/// table name, say) or huge multi-row INSERTs cannot grow it without bound. A plan takes a few
/// times its text's size.
#[derive(Debug)]
pub(crate) struct Shapes {
    mysql: Mutex<Kept>,
    postgres: Mutex<Kept>,
    /// A statement longer than this is parsed every time: its shape would crowd out the
    /// others.
    longest: usize,
}

impl Default for Shapes {
    fn default() -> Self {
        Self::new(keyshard_config::Props::default().shape_cache)
    }
}

impl Shapes {
    /// None known yet; each dialect's within `bounds`.
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            mysql: Mutex::new(Cache::new(bounds)),
            postgres: Mutex::new(Cache::new(bounds)),
            longest: bounds.bytes / 16,
        }
    }

    /// Each dialect's cache, as it is now.
    pub(crate) fn stats(&self) -> [(&'static str, CacheStats); 2] {
        [
            ("shapes_mysql", self.kept(Dialect::MySql).stats()),
            ("shapes_postgresql", self.kept(Dialect::Postgres).stats()),
        ]
    }

    fn kept(&self, dialect: Dialect) -> std::sync::MutexGuard<'_, Kept> {
        match dialect {
            Dialect::MySql => &self.mysql,
            Dialect::Postgres => &self.postgres,
        }
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
    }

    /// What is known of `shape` under the metadata at `metadata_version`, and its
    /// [`CallsChecked`]; `None` when it must be learned.
    pub(crate) fn get(
        &self,
        dialect: Dialect,
        shape: &Shape,
        metadata_version: u64,
    ) -> Option<(Known, CallsChecked)> {
        self.kept(dialect)
            .get(shape.text())
            .filter(|e| e.metadata_version == metadata_version)
            .map(|e| (e.known.clone(), Arc::clone(&e.calls)))
    }

    /// Learns `shape` from `original`, a statement of it as planned, when one was seen before
    /// (else notes that this one was), or `at_once`; `slots` tells how the literals of an
    /// INSERT prepared from the shape can go as parameters. What is known of the shape
    /// afterwards; `None` when this statement could not tell, or was only noted.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn learn(
        &self,
        router: &Router,
        shape: &Shape,
        original: &Planned,
        metadata: &dyn Metadata,
        metadata_version: u64,
        at_once: bool,
        slots: impl FnOnce(&PreparedInsert) -> Option<Box<[Slot]>>,
    ) -> Option<Known> {
        if shape.text().len() > self.longest {
            return None;
        }
        let dialect = router.dialect();
        match self
            .get(dialect, shape, metadata_version)
            .map(|(known, _)| known)
        {
            Some(Known::Seen) => {}
            None if at_once => {}
            // Learned meanwhile, on another connection.
            Some(known) => return Some(known),
            None => {
                self.keep(dialect, shape, Known::Seen, metadata_version);
                return None;
            }
        }
        let known = match (original, router.prepare(shape.text(), metadata)) {
            (Planned::Insert(original), Ok(Prepared::Insert(insert))) => {
                match insert.stands_for(original, shape)? {
                    true => Known::Insert(Arc::new(ShapedInsert {
                        slots: slots(&insert),
                        insert,
                    })),
                    false => Known::Parse,
                }
            }
            (Planned::Query(original), Ok(Prepared::Query(query)))
                if query.stands_for(original, shape) =>
            {
                Known::Query(Arc::new(query))
            }
            _ => Known::Parse,
        };
        self.keep(router.dialect(), shape, known.clone(), metadata_version);
        Some(known)
    }

    fn keep(&self, dialect: Dialect, shape: &Shape, known: Known, metadata_version: u64) {
        let text = shape.text();
        let entry = Entry {
            known,
            metadata_version,
            calls: CallsChecked::default(),
        };
        self.kept(dialect).insert(text.into(), entry, text.len());
    }
}

#[cfg(test)]
mod tests;
