//! INSERTs sent as text, planned through their shapes (see [`keyshard_router::Shape`]): the
//! first statement of a shape is parsed as usual and decides whether the shape, prepared
//! with its literals as parameters, plans every statement of it alike; the statements after
//! it only bind. This takes the parser off the path of an application's repeated INSERTs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_router::{Dialect, Metadata, Prepared, PreparedInsert, Router, Shape};

/// Shapes kept per dialect; beyond this many the map starts over, so that statements that
/// never repeat (a literal in a table name, say) cannot grow it without bound.
const CAPACITY: usize = 1024;

/// What is known of a shape.
#[derive(Debug, Clone)]
pub(crate) enum Known {
    /// Statements of this shape bind this.
    Insert(Arc<PreparedInsert>),
    /// Statements of this shape are parsed one by one.
    Parse,
}

#[derive(Debug)]
struct Entry {
    known: Known,
    /// The metadata it was prepared with (a column-less INSERT depends on it).
    metadata_version: u64,
}

/// The shapes seen so far, for both dialects.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    mysql: Mutex<HashMap<Box<str>, Entry>>,
    postgres: Mutex<HashMap<Box<str>, Entry>>,
}

impl Shapes {
    fn map(&self, dialect: Dialect) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Entry>> {
        match dialect {
            Dialect::MySql => &self.mysql,
            Dialect::Postgres => &self.postgres,
        }
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
    }

    /// What is known of `shape` under the metadata at `metadata_version`; `None` when it must
    /// be learned.
    pub(crate) fn get(
        &self,
        dialect: Dialect,
        shape: &Shape,
        metadata_version: u64,
    ) -> Option<Known> {
        self.map(dialect)
            .get(shape.text())
            .filter(|e| e.metadata_version == metadata_version)
            .map(|e| e.known.clone())
    }

    /// Learns `shape` from `original`, a statement of it as parsed (`None` when it is not an
    /// INSERT into a sharded table).
    pub(crate) fn learn(
        &self,
        router: &Router,
        shape: &Shape,
        original: Option<&PreparedInsert>,
        metadata: &dyn Metadata,
        metadata_version: u64,
    ) {
        let known = match (original, router.prepare(shape.text(), metadata)) {
            (Some(original), Ok(Prepared::Insert(insert))) => {
                match insert.stands_for(original, shape) {
                    Some(true) => Known::Insert(Arc::new(insert)),
                    Some(false) => Known::Parse,
                    // This statement cannot tell: the next one of the shape will try.
                    None => return,
                }
            }
            _ => Known::Parse,
        };
        let mut map = self.map(router.dialect());
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(
            shape.text().into(),
            Entry {
                known,
                metadata_version,
            },
        );
    }
}
