//! Transactions across data sources: a client's explicit transaction, and the implicit one of a
//! statement that runs on several data sources. Both end through one commit protocol.

mod commit;
mod savepoints_and_settings;
mod statements;

use crate::branch::Branch;
use crate::characteristics::Characteristics;
use crate::xa::XaTransaction;
use savepoints_and_settings::Replayed;
pub use savepoints_and_settings::{SavepointCommand, SettingScope};

/// An open transaction across data sources; empty until its first statement.
#[derive(Debug)]
pub struct Transaction {
    branches: Vec<Branch>,
    /// The transaction's id when it may commit in two phases (XA), taken with its first
    /// branch.
    xa: Option<XaTransaction>,
    /// Never two-phase, whatever the backend's transaction type.
    local: bool,
    /// The isolation level and access mode each branch begins with.
    characteristics: Characteristics,
    /// The client's savepoints and PostgreSQL's `SET LOCAL …` statements, in the order they
    /// were made. A branch that begins later makes them all at once, in that order, so that
    /// rolling back to a savepoint undoes that branch's work and later settings too.
    replayed: Vec<Replayed>,
    /// A statement ran that may change a table's columns: kept result columns are forgotten
    /// again when the transaction ends, as its changes show to other connections then.
    changes_columns: bool,
    /// MySQL: its connections hold the session's table locks (see
    /// [`Transaction::keeping_table_locks`]).
    keeps_table_locks: bool,
    /// The replica each read/write group's reads go to under `transactionalReadQueryStrategy:
    /// FIXED`, by group (see `replicas`).
    fixed_replicas: Vec<(String, String)>,
}

impl Default for Transaction {
    fn default() -> Self {
        Self::new()
    }
}

impl Transaction {
    /// A transaction that has touched no data source yet, committing as the backend is
    /// configured to.
    pub fn new() -> Self {
        Self {
            branches: Vec::new(),
            xa: None,
            local: false,
            characteristics: Characteristics::default(),
            replayed: Vec::new(),
            changes_columns: false,
            keeps_table_locks: false,
            fixed_replicas: Vec::new(),
        }
    }

    /// A LOCAL transaction on connections that hold MySQL table locks: each branch runs with
    /// autocommit off (`SET autocommit = 0` … `COMMIT; SET autocommit = 1`), which keeps the
    /// locks where `START TRANSACTION` and `XA START` would let go of them.
    pub fn keeping_table_locks() -> Self {
        Self {
            local: true,
            keeps_table_locks: true,
            ..Self::new()
        }
    }

    /// A transaction that commits each data source on its own (LOCAL) even where the backend
    /// commits in two phases.
    pub fn local() -> Self {
        Self {
            local: true,
            ..Self::new()
        }
    }

    /// Begins every branch with `characteristics`.
    pub fn with(mut self, characteristics: Characteristics) -> Self {
        self.characteristics = characteristics;
        self
    }

    /// Changes the characteristics its branches begin with; `false`, changing nothing, once a
    /// branch has begun.
    pub fn set_characteristics(&mut self, characteristics: Characteristics) -> bool {
        if !self.branches.is_empty() {
            return false;
        }
        self.characteristics = characteristics.or(self.characteristics);
        true
    }

    /// Its isolation level and access mode, as asked for.
    pub fn characteristics(&self) -> Characteristics {
        self.characteristics
    }

    /// The data sources it holds a connection on.
    pub fn data_sources(&self) -> impl Iterator<Item = &str> {
        self.branches.iter().map(Branch::data_source)
    }

    /// How many savepoints the client holds.
    pub fn savepoint_count(&self) -> usize {
        self.replayed
            .iter()
            .filter(|r| matches!(r, Replayed::Savepoint { .. }))
            .count()
    }

    pub(crate) fn branch(&mut self, data_source: &str) -> Option<&mut Branch> {
        self.branches
            .iter_mut()
            .find(|b| b.data_source() == data_source)
    }
}
