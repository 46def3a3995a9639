//! Two-phase commit across data sources (`!TRANSACTION defaultType: XA`).
//!
//! A transaction that wrote to several data sources prepares a branch on each, then records
//! its decision in the coordination repository, then commits the branches. The decision row is
//! the commit point: once it exists the transaction commits, whoever finishes it. Recovery
//! (any instance, [`crate::recovery`]) finishes prepared branches whose coordinator is gone:
//! commit where the decision says so, roll back where there is none, after recording an abort
//! so that the coordinator, should it still be running, can no longer decide to commit. The
//! repository keeps the first decision for a transaction, so the two can never both win.
//!
//! A transaction id names its coordinator: `ks-<worker id>-<lease epoch>-<sequence>`. Worker
//! id and epoch say whose lease must have expired before another instance may touch it; the
//! sequence counts this process's transactions. It fits MySQL's 64-byte gtrid.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use keyshard_config::{DataSource, DatabaseKind};
use keyshard_coordination::{CoordinationError, Repository};
use keyshard_keygen::WorkerLease;

use crate::BackendError;

/// Every Keyshard transaction id starts so.
pub(crate) const PREFIX: &str = "ks-";

/// How long finished transactions' decisions gather before one statement drops them all.
const FORGET_BATCH_DELAY: Duration = Duration::from_millis(50);

/// Coordinates this instance's two-phase transactions.
#[derive(Debug)]
pub struct XaCoordinator {
    pub(crate) repository: Arc<dyn Repository>,
    lease: Arc<WorkerLease>,
    sequence: AtomicU64,
    /// Transactions this instance is committing now: recovery leaves them alone.
    in_flight: Mutex<HashSet<String>>,
    /// Finished transactions whose decisions are about to be dropped.
    forgotten: Arc<Mutex<Vec<String>>>,
    /// How each data source names its branches.
    branches: BTreeMap<String, BranchNaming>,
    /// The data source whose database holds the repository's decisions.
    holder: Option<String>,
    /// How long one repository call may take.
    pub(crate) operation_timeout: Duration,
}

/// How a data source's XA commands name a branch of transaction `gtrid`.
#[derive(Debug, Clone)]
pub(crate) enum BranchNaming {
    /// MySQL/MariaDB: `'gtrid','<database>'`. `XA RECOVER` lists the whole server's branches,
    /// so the branch qualifier says which database (and so which data source) one belongs to.
    MySql {
        /// The data source's database.
        database: String,
    },
    /// PostgreSQL: `'gtrid.<data source>.<database>'`. Prepared transactions' ids are the
    /// whole server's, and two Keyshard clusters on one server (with databases of their
    /// own) number their transactions alike: the database keeps their branches apart, the
    /// data source two data sources in one database.
    Postgres {
        /// The data source's name.
        data_source: String,
        /// Its database.
        database: String,
    },
}

impl BranchNaming {
    /// The branch of `gtrid` as XA commands name it.
    pub(crate) fn xid(&self, gtrid: &str) -> String {
        match self {
            BranchNaming::MySql { database } => format!("'{gtrid}','{}'", quote(database)),
            BranchNaming::Postgres {
                data_source,
                database,
            } => format!("'{gtrid}.{}.{}'", quote(data_source), quote(database)),
        }
    }
}

fn quote(text: &str) -> String {
    text.replace('\'', "''")
}

/// A transaction id's coordinator (worker id and lease epoch) and sequence.
pub(crate) fn parse_gtrid(gtrid: &str) -> Option<((u16, u64), u64)> {
    let mut parts = gtrid.strip_prefix(PREFIX)?.split('-');
    let worker = parts.next()?.parse().ok()?;
    let epoch = parts.next()?.parse().ok()?;
    let sequence = parts.next()?.parse().ok()?;
    parts
        .next()
        .is_none()
        .then_some(((worker, epoch), sequence))
}

impl XaCoordinator {
    /// A coordinator that names its transactions after `lease`'s worker id and epoch and
    /// records decisions in `repository`. `holder` is the data source whose database is the
    /// repository's (a JDBC repository on a data source, the default): a transaction that
    /// writes there records its decision in that branch and commits it in one phase, as the
    /// commit point, instead of preparing it and writing the decision apart (Vitess does the
    /// same). Fails when a data source cannot take part in XA (SQLite, or a MySQL URL without
    /// a database); server versions and settings are checked by
    /// [`crate::Backend::check_xa`].
    pub fn new(
        repository: Arc<dyn Repository>,
        lease: Arc<WorkerLease>,
        data_sources: &BTreeMap<String, DataSource>,
        holder: Option<&str>,
        operation_timeout: Duration,
    ) -> Result<Self, BackendError> {
        let branches = data_sources
            .values()
            .map(|source| Ok((source.name.clone(), naming(source)?)))
            .collect::<Result<_, BackendError>>()?;
        refuse_shared_databases(data_sources)?;
        let holder = holder
            .filter(|name| data_sources.contains_key(*name))
            .map(str::to_owned);
        Ok(Self {
            repository,
            lease,
            sequence: AtomicU64::new(0),
            in_flight: Mutex::new(HashSet::new()),
            forgotten: Arc::default(),
            branches,
            holder,
            operation_timeout,
        })
    }

    /// A new transaction id, registered as in flight until the returned guard is dropped.
    pub(crate) fn begin(self: &Arc<Self>) -> Result<XaTransaction, BackendError> {
        let grant = self
            .lease
            .current()
            .filter(|g| g.valid_until > Instant::now())
            .ok_or(BackendError::NoLease)?;
        // Taken and registered under the lock, so that a watch sees either the transaction in
        // flight or a sequence at or past its own start.
        let mut in_flight = lock(&self.in_flight);
        let sequence = self.sequence.fetch_add(1, Ordering::SeqCst);
        let gtrid = format!("{PREFIX}{}-{}-{sequence}", grant.worker_id, grant.epoch);
        in_flight.insert(gtrid.clone());
        drop(in_flight);
        Ok(XaTransaction {
            coordinator: Arc::clone(self),
            gtrid,
        })
    }

    /// This instance's worker id and epoch, while it holds them.
    pub(crate) fn identity(&self) -> Option<(u16, u64)> {
        self.lease.current().map(|g| (g.worker_id, g.epoch))
    }

    /// Starts watching this instance's transactions for a recovery pass: a branch the pass
    /// finds prepared may belong to a transaction that finished between the scan and the
    /// look at what is in flight, and whose decision is already dropped. The watch tells
    /// every transaction in flight at any moment since it began; its memory is bounded by
    /// the transactions in flight when it began, not by those that run meanwhile.
    pub(crate) fn watch(&self) -> Watch<'_> {
        let in_flight = lock(&self.in_flight);
        Watch {
            coordinator: self,
            identity: self.identity(),
            since: self.sequence.load(Ordering::SeqCst),
            in_flight_then: in_flight.clone(),
        }
    }

    /// The data source that can hold transaction `gtrid`'s decision in its own commit, with
    /// the repository's statement that records the decision there.
    pub(crate) fn decision_in_branch(&self, gtrid: &str) -> Option<(&str, String)> {
        let holder = self.holder.as_deref()?;
        Some((holder, self.repository.decision_statement(gtrid)?))
    }

    pub(crate) fn naming(&self, data_source: &str) -> Option<&BranchNaming> {
        self.branches.get(data_source)
    }

    /// Records `commit` for `gtrid` unless a decision exists; the decision that stands.
    pub(crate) async fn decide(&self, gtrid: &str, commit: bool) -> Result<bool, BackendError> {
        tokio::time::timeout(
            self.operation_timeout,
            self.repository.decide(gtrid, commit),
        )
        .await
        .map_err(|_| CoordinationError::Timeout(self.operation_timeout))?
        .map_err(BackendError::from)
    }

    /// Drops `gtrid`'s decision in the background: every branch is finished. Decisions
    /// finished within [`FORGET_BATCH_DELAY`] of each other go in one statement.
    pub(crate) fn forget(&self, gtrid: String) {
        let first = {
            let mut pending = lock(&self.forgotten);
            pending.push(gtrid);
            pending.len() == 1
        };
        if !first {
            return;
        }
        let repository = Arc::clone(&self.repository);
        let forgotten = Arc::clone(&self.forgotten);
        tokio::spawn(async move {
            tokio::time::sleep(FORGET_BATCH_DELAY).await;
            let batch = std::mem::take(&mut *lock(&forgotten));
            // A decision left behind only costs a row; recovery never needs it again.
            if let Err(e) = repository.forget(&batch).await {
                tracing::debug!("XA: {} decisions not dropped: {e}", batch.len());
            }
        });
    }
}

fn naming(source: &DataSource) -> Result<BranchNaming, BackendError> {
    let refuse = |why: String| BackendError::XaUnsupported {
        data_source: source.name.clone(),
        message: why,
    };
    match source.kind {
        DatabaseKind::Sqlite => Err(refuse(
            "SQLite has no two-phase commit; XA needs MySQL/MariaDB or PostgreSQL data sources"
                .to_owned(),
        )),
        DatabaseKind::Postgres => Ok(BranchNaming::Postgres {
            data_source: source.name.clone(),
            database: database_of(&source.url).unwrap_or_default(),
        }),
        DatabaseKind::MySql => {
            let database = database_of(&source.url).unwrap_or_default();
            if database.is_empty() || database.len() > 64 {
                return Err(refuse(
                    "its URL must name a database (at most 64 bytes): it qualifies the XA \
                     branches"
                        .to_owned(),
                ));
            }
            Ok(BranchNaming::MySql { database })
        }
    }
}

/// Two MySQL data sources on one database of one server would name their branches of a
/// transaction alike, and the second `XA START` would fail; their rows are in one place anyway.
fn refuse_shared_databases(
    data_sources: &BTreeMap<String, DataSource>,
) -> Result<(), BackendError> {
    let mut seen: BTreeMap<(String, String), &str> = BTreeMap::new();
    for source in data_sources.values() {
        if source.kind != DatabaseKind::MySql {
            continue;
        }
        let Some(server) = server_of(&source.url) else {
            continue;
        };
        let database = database_of(&source.url).unwrap_or_default();
        if let Some(first) = seen.insert((server, database), &source.name) {
            return Err(BackendError::XaUnsupported {
                data_source: source.name.clone(),
                message: format!(
                    "it is the same database on the same server as data source '{first}'"
                ),
            });
        }
    }
    Ok(())
}

/// The `host:port` of a `mysql://user@host:port/…` URL.
fn server_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    Some(host.to_ascii_lowercase())
}

/// The database a `mysql://…/<database>?…` (or `postgres://…`) URL names, percent-decoding left out: a database
/// name that needs it is refused above by being compared as written.
fn database_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let path = rest.split_once('/')?.1;
    let database = path.split(['?', '#']).next()?;
    Some(database.to_owned())
}

/// What a recovery pass knows of this instance's transactions since it began.
#[derive(Debug)]
pub(crate) struct Watch<'a> {
    coordinator: &'a XaCoordinator,
    /// The instance's worker id and epoch when the pass began.
    identity: Option<(u16, u64)>,
    /// The first sequence a transaction begun during the pass can have.
    since: u64,
    in_flight_then: HashSet<String>,
}

impl Watch<'_> {
    /// Whether transaction `gtrid` has been in flight here at any moment since the watch
    /// began: in flight then or now, or begun since (this instance's, with a later sequence).
    pub(crate) fn saw(&self, gtrid: &str) -> bool {
        if self.in_flight_then.contains(gtrid) || lock(&self.coordinator.in_flight).contains(gtrid)
        {
            return true;
        }
        let Some((owner, sequence)) = parse_gtrid(gtrid) else {
            return false;
        };
        let ours = Some(owner) == self.identity || Some(owner) == self.coordinator.identity();
        ours && sequence >= self.since
    }
}

/// One two-phase transaction of this instance, in flight until dropped.
#[derive(Debug)]
pub(crate) struct XaTransaction {
    coordinator: Arc<XaCoordinator>,
    gtrid: String,
}

impl XaTransaction {
    pub(crate) fn gtrid(&self) -> &str {
        &self.gtrid
    }

    pub(crate) fn coordinator(&self) -> &XaCoordinator {
        &self.coordinator
    }

    /// How `data_source` names this transaction's branch.
    pub(crate) fn branch(&self, data_source: &str) -> Result<String, BackendError> {
        self.coordinator
            .naming(data_source)
            .map(|naming| naming.xid(&self.gtrid))
            .ok_or_else(|| BackendError::UnknownDataSource(data_source.to_owned()))
    }
}

impl Drop for XaTransaction {
    fn drop(&mut self) {
        lock(&self.coordinator.in_flight).remove(&self.gtrid);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_ids_name_their_coordinator() {
        assert_eq!(parse_gtrid("ks-12-7-0"), Some(((12, 7), 0)));
        assert_eq!(
            parse_gtrid("ks-1023-18446744073709551615-9"),
            Some(((1023, u64::MAX), 9))
        );
        for other in [
            "ks-12-7",
            "ks-12-7-0-1",
            "xx-1-2-3",
            "ks-a-1-2",
            "ks-1024000-1-1",
            "",
        ] {
            assert_eq!(parse_gtrid(other), None, "{other}");
        }
        // The longest id fits MySQL's 64-byte gtrid.
        assert!(format!("{PREFIX}1023-{}-{}", u64::MAX, u64::MAX).len() <= 64);
    }

    /// A recovery pass must not take a transaction that finished after its scan for one its
    /// coordinator left behind (its decision may already be dropped: recovery would record an
    /// abort and report a rollback of a committed branch).
    #[tokio::test]
    async fn a_watch_sees_every_transaction_in_flight_since_it_began() {
        let repository = keyshard_coordination::JdbcRepository::connect(
            &DataSource {
                name: "repository".to_owned(),
                kind: DatabaseKind::Sqlite,
                url: "sqlite::memory:".to_owned(),
                pool: Default::default(),
            },
            Duration::from_secs(30),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let lease = Arc::new(WorkerLease::new());
        lease.grant(keyshard_keygen::Grant {
            worker_id: 3,
            epoch: 9,
            valid_until: Instant::now() + Duration::from_secs(60),
            reserved_until_millis: i64::MAX,
            offset_millis: 0,
        });
        let xa = Arc::new(
            XaCoordinator::new(
                Arc::new(repository),
                lease,
                &BTreeMap::new(),
                None,
                Duration::from_secs(5),
            )
            .unwrap(),
        );
        let ended_before = xa.begin().unwrap().gtrid().to_owned();
        let ending = xa.begin().unwrap();
        let running = xa.begin().unwrap();
        let watch = xa.watch();
        let ends_during = ending.gtrid().to_owned();
        drop(ending);
        let begun_during = xa.begin().unwrap().gtrid().to_owned();
        assert!(!watch.saw(&ended_before));
        for seen in [&ends_during, running.gtrid(), &begun_during] {
            assert!(watch.saw(seen), "{seen}");
        }
        // Later sequences of another worker id, or of an earlier epoch of this one, are not
        // this instance's.
        assert!(!watch.saw("ks-4-9-100"));
        assert!(!watch.saw("ks-3-8-100"));
        assert!(watch.saw("ks-3-9-100"));
    }

    #[test]
    fn branches_are_named_per_database() {
        let mysql = BranchNaming::MySql {
            database: "shop's".into(),
        };
        assert_eq!(mysql.xid("ks-1-2-3"), "'ks-1-2-3','shop''s'");
        let pg = BranchNaming::Postgres {
            data_source: "ds_0".into(),
            database: "shop's".into(),
        };
        assert_eq!(pg.xid("ks-1-2-3"), "'ks-1-2-3.ds_0.shop''s'");
        assert_eq!(
            database_of("mysql://root@127.0.0.1:3306/ds_0?ssl-mode=disabled").as_deref(),
            Some("ds_0")
        );
        assert_eq!(database_of("mysql://root@127.0.0.1:3306").as_deref(), None);
        assert_eq!(
            server_of("mysql://root:p@ss@127.0.0.1:3306/ds_0").as_deref(),
            Some("127.0.0.1:3306")
        );
    }

    #[test]
    fn one_database_behind_two_data_sources_is_refused() {
        let source = |name: &str, url: &str| {
            let source = DataSource {
                name: name.to_owned(),
                kind: DatabaseKind::MySql,
                url: url.to_owned(),
                pool: Default::default(),
            };
            (name.to_owned(), source)
        };
        let apart: BTreeMap<_, _> = [
            source("ds_0", "mysql://root@127.0.0.1:3306/orders"),
            source("ds_1", "mysql://root@127.0.0.2:3306/orders"),
            source("ds_2", "mysql://root@127.0.0.1:3306/orders_2"),
        ]
        .into();
        assert!(refuse_shared_databases(&apart).is_ok());
        let shared: BTreeMap<_, _> = [
            source("ds_0", "mysql://root@127.0.0.1:3306/orders"),
            source(
                "ds_1",
                "mysql://app@127.0.0.1:3306/orders?ssl-mode=disabled",
            ),
        ]
        .into();
        let error = refuse_shared_databases(&shared).unwrap_err().to_string();
        assert!(
            error.contains("'ds_1'") && error.contains("'ds_0'"),
            "{error}"
        );
    }
}
