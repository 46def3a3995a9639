//! Keyshard's backend: the configured data sources behind sqlx pools, the table metadata the
//! router needs, and execution of a [`Plan`] so that a statement touching several shards
//! commits on all of them or on none.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assemble;
mod atomic;
mod batching;
mod branch;
pub mod cache;
mod cancel;
mod catalog_refs;
mod characteristics;
mod collations;
mod combined;
mod copy_out;
mod driver;
mod error;
mod execute;
pub mod failpoint;
mod gather;
mod holdings;
mod merge;
mod metadata;
mod mysql_column;
mod notify;
mod origins;
mod outcome;
mod pg_array;
mod pool;
mod recovery;
mod replicas;
mod result_columns;
mod reuse;
pub mod session_state;
pub mod stream;
mod table_columns;
mod transaction;
mod xa;

use std::collections::BTreeMap;
use std::sync::Arc;

use keyshard_config::{Config, ShardingRule, TableRule};
use keyshard_router::merge::Aggregate;
use keyshard_router::{ExecutionUnit, Plan};
use keyshard_types::{SqlType, Value};
use outcome::in_plan_order;

pub use batching::Stats as BatchStats;
pub use characteristics::{Characteristics, Isolation};
pub use error::BackendError;
pub use gather::GatherLimits;
pub use merge::MergeError;
pub use metadata::MetadataStore;
pub use notify::{Listener, Notification};
pub use outcome::{Column, Outcome, PgEnumColumn};
pub use pool::Pool;
pub use recovery::Recovered;
pub use replicas::ReplicaStatus;
pub use reuse::Connections;
pub use reuse::{PinRefused, PoolStats};
pub use transaction::{SavepointCommand, SettingScope, Transaction};
pub use xa::XaCoordinator;

/// Every configured data source, with the metadata of the logic tables on them.
#[derive(Debug)]
pub struct Backend {
    /// Shared with the batches' tasks (see `batching`).
    pools: BTreeMap<String, Arc<Pool>>,
    metadata: MetadataStore,
    /// Reads' result columns, kept per statement shape.
    result_columns: result_columns::ResultColumns,
    /// Merged reads a data source answered as one combined statement (see `combined`).
    combined_reads: std::sync::atomic::AtomicU64,
    sql_show: bool,
    /// `props.max-connections-size-per-query`: connections one read takes per data source.
    max_connections_per_query: usize,
    /// Set under `!TRANSACTION defaultType: XA`.
    xa: Option<Arc<XaCoordinator>>,
    /// What one gathered read may gather.
    gather_limits: GatherLimits,
    /// MySQL text columns' own collations, for merges that compare them.
    collations: collations::Collations,
    /// PostgreSQL result columns' tables as the logical database shows them.
    origins: Arc<origins::Origins>,
    /// `props.result-memory-bytes`: what a read's kept rows may take (see `stream`).
    result_limit: u64,
    /// The replicas behind data sources (`!READWRITE_SPLITTING`).
    replicas: replicas::Replicas,
    /// Single-row INSERTs of several sessions sent as one (see `batching`).
    batching: Arc<batching::Batching>,
}

impl Backend {
    /// Pools for every data source of `config`; connections are opened on first use. Call it
    /// inside a Tokio runtime.
    pub fn new(config: &Config) -> Result<Self, BackendError> {
        tokio::runtime::Handle::try_current().map_err(|_| BackendError::NoRuntime)?;
        let replicas = replicas::Replicas::new(config)?;
        let pools = config
            .data_sources
            .values()
            .map(|source| {
                let mut pool = Pool::connect_lazy(source)?;
                if replicas.has(&source.name) {
                    pool.note_writes();
                }
                Ok((source.name.clone(), Arc::new(pool)))
            })
            .collect::<Result<_, BackendError>>()?;
        Ok(Self {
            pools,
            metadata: MetadataStore::default(),
            result_columns: result_columns::ResultColumns::new(config.props.column_cache),
            combined_reads: Default::default(),
            sql_show: config.props.sql_show,
            max_connections_per_query: config.props.max_connections_per_query,
            xa: None,
            gather_limits: GatherLimits {
                max_rows: config.props.gather_max_rows,
                max_bytes: config.props.gather_max_bytes,
            },
            collations: collations::Collations::new(config.props.collation_cache),
            result_limit: {
                // One limit for the process: sqlx reads each message whole (see vendor/).
                let max_row = usize::try_from(config.props.max_row_bytes).unwrap_or(usize::MAX);
                sqlx::postgres::set_max_message_len(max_row);
                sqlx::mysql::set_max_packet_len(max_row);
                config.props.result_memory
            },
            replicas,
            batching: Arc::new(batching::Batching::new(config.props.insert_batch_max_rows)),
            origins: Arc::new(origins::Origins::new(
                config
                    .sharding
                    .default_data_source
                    .clone()
                    .or_else(|| config.data_sources.keys().next().cloned()),
            )),
        })
    }

    /// The plan's outcome from its units' results (see [`Outcome::of`]), the MySQL text
    /// columns a merge compares given their own collations first.
    pub(crate) async fn outcome(
        &self,
        plan: &Plan,
        mut results: Vec<outcome::UnitResult>,
    ) -> Result<Outcome, BackendError> {
        if results.iter().any(|r| r.streamed.is_some()) {
            return Outcome::streamed(results).await;
        }
        // The columns come from the first unit that has any (see `Outcome::of`).
        let described_by = results.iter().position(|r| !r.columns.is_empty());
        if let Some(spec) = &plan.merge
            && let Some((unit, result)) = plan
                .units
                .iter()
                .zip(results.iter_mut())
                .find(|(_, r)| !r.columns.is_empty())
        {
            let (data_source, columns) = (&unit.data_source, &mut result.columns);
            let mut compared = merge::compared_columns(spec, columns);
            // A column whose values are never text orders without a collation: asking for
            // one scanned the statement and locked the collation map on every merge.
            compared.retain(|&i| columns.get(i).is_none_or(|c| !c.ty.never_text()));
            match (spec.dialect, self.pool(data_source)?) {
                _ if compared.is_empty() => {}
                (keyshard_types::Dialect::MySql, Pool::MySql(_)) => {
                    let table = &unit.table;
                    (self.collations)
                        .give(self, data_source, table, columns, &compared)
                        .await;
                }
                (_, Pool::Postgres(_)) => {
                    (self.collations)
                        .give_postgres(self, data_source, &unit.sql, columns, &compared)
                        .await;
                }
                _ => {}
            }
        }
        let mut outcome = Outcome::of(plan, results).await?;
        if let Some(unit) = described_by.and_then(|at| plan.units.get(at)) {
            self.origins
                .logical(&unit.data_source, &mut outcome.columns);
        }
        Ok(outcome)
    }

    /// Commits statements and transactions that write to several data sources in two phases,
    /// recording decisions through `coordinator`.
    pub fn enable_xa(&mut self, coordinator: XaCoordinator) {
        self.xa = Some(Arc::new(coordinator));
    }

    /// The pool of data source `name`.
    pub fn pool(&self, name: &str) -> Result<&Pool, BackendError> {
        self.pools
            .get(name)
            .map(|pool| &**pool)
            .ok_or_else(|| BackendError::UnknownDataSource(name.to_owned()))
    }

    /// Each data source's pool, as it is now.
    pub fn pool_stats(&self) -> Vec<(String, PoolStats)> {
        self.pools
            .iter()
            .map(|(name, pool)| (name.clone(), pool.stats()))
            .chain((self.replicas.pools()).map(|(name, pool)| (name.to_owned(), pool.stats())))
            .collect()
    }

    /// The data source names, in order.
    pub fn data_sources(&self) -> impl Iterator<Item = &str> {
        self.pools.keys().map(String::as_str)
    }

    /// The logic tables' columns, for the router.
    pub fn metadata(&self) -> &MetadataStore {
        &self.metadata
    }

    /// Loads the columns of every logic table of `rule`. A table that does not exist yet is
    /// not an error (it may be created through the proxy later); an unreachable data source is.
    pub async fn load_metadata(&self, rule: &ShardingRule) -> Result<(), BackendError> {
        for table in rule.tables.values() {
            self.refresh_metadata(table).await?;
        }
        Ok(())
    }

    /// Reloads one logic table's columns (after DDL, or when a statement needs them).
    pub async fn refresh_metadata(&self, table: &TableRule) -> Result<(), BackendError> {
        // A schema change may have added a trigger, which rows of a batch would not meet alone.
        self.batching.forget_tables();
        self.load_origins(table).await?;
        let mut columns = self.column_types(table).await?;
        if let (Some(columns), Some(node)) = (&mut columns, table.data_nodes.first()) {
            self.origins.logical(&node.data_source, columns);
        }
        self.metadata.set(&table.logic_table, columns);
        Ok(())
    }

    /// Executes `plan`: a single unit directly, several units in one transaction per data
    /// source, committed everywhere or nowhere.
    pub async fn execute(&self, plan: &Plan) -> Result<Outcome, BackendError> {
        self.execute_plan(plan, self.xa.is_some()).await
    }

    /// Executes `plan` like [`Backend::execute`], but never in two phases: for schema changes
    /// (MySQL commits DDL implicitly and refuses it inside an XA transaction) and for sessions
    /// that chose LOCAL.
    pub async fn execute_local(&self, plan: &Plan) -> Result<Outcome, BackendError> {
        self.execute_plan(plan, false).await
    }

    async fn execute_plan(&self, plan: &Plan, two_phase: bool) -> Result<Outcome, BackendError> {
        for unit in &plan.units {
            self.starting(unit);
        }
        let results = match plan.units.as_slice() {
            [] => Vec::new(),
            [unit] => match &plan.batch_row {
                Some(row) => self.insert(plan, unit, row).await?,
                None => self.autocommit(plan, &unit.data_source, &[unit]).await?,
            },
            // A read needs no transaction: every data source answers at once, its units sharing
            // up to `max_connections_per_query` connections there.
            units if plan.merge.is_some() => {
                // A pinned session's state is on its one connection per data source.
                let pinned = session_state::current().is_some_and(|s| s.is_pinned());
                let connections = if pinned {
                    1
                } else {
                    self.max_connections_per_query
                };
                let parts = read_parts(units, connections);
                // One connection's worth of work in plan order (the default of one connection
                // per query, on one data source): run it as it is, without a join to wait on
                // or results to reorder (~1.5k instructions a merge).
                match parts.as_slice() {
                    [part] if part.iter().enumerate().all(|(i, &at)| i == at) => {
                        let part: Vec<&ExecutionUnit> = units.iter().collect();
                        self.read_part(plan, &units[0].data_source, &part).await?
                    }
                    _ => {
                        let reads = parts.into_iter().map(|positions| {
                            let part: Vec<&ExecutionUnit> =
                                positions.iter().map(|&i| &units[i]).collect();
                            async move {
                                let Some(data_source) = part.first().map(|u| &u.data_source) else {
                                    return Ok((positions, Vec::new()));
                                };
                                let results = self.read_part(plan, data_source, &part).await?;
                                Ok::<_, BackendError>((positions, results))
                            }
                        });
                        in_plan_order(
                            units.len(),
                            futures_util::future::try_join_all(reads).await?,
                        )
                    }
                }
            }
            units => {
                self.atomically(&self.group(units)?, units.len(), two_phase)
                    .await?
            }
        };
        self.outcome(plan, results).await
    }

    /// Runs `units`, all of `plan` on `data_source`, in autocommit mode: on a replica when one
    /// may answer the read (see `replicas`), else on the data source's own pool.
    async fn autocommit(
        &self,
        plan: &Plan,
        data_source: &str,
        units: &[&ExecutionUnit],
    ) -> Result<Vec<outcome::UnitResult>, BackendError> {
        let primary = self.pool(data_source)?;
        // Boxed: a data source without replicas (most) carries no replica read in its future.
        if plan.replica_safe
            && self.replicas.has(data_source)
            && let Some(results) = Box::pin(self.read_on_replica(plan, data_source, units)).await?
        {
            return Ok(results);
        }
        execute::autocommit(primary, units)
            .await
            .map_err(|e| BackendError::from_sqlx(data_source, e))
    }

    /// Runs the one unit of a single-row INSERT that may join other sessions' (see
    /// `batching`).
    async fn insert(
        &self,
        plan: &Plan,
        unit: &ExecutionUnit,
        row: &keyshard_router::BatchRow,
    ) -> Result<Vec<outcome::UnitResult>, BackendError> {
        let data_source = unit.data_source.as_str();
        let pool = self
            .pools
            .get(data_source)
            .ok_or_else(|| BackendError::UnknownDataSource(data_source.to_owned()))?;
        match batching::insert(&self.batching, pool, unit, row).await {
            Some(result) => {
                pool.noted_write();
                Ok(vec![result?])
            }
            None => self.autocommit(plan, data_source, &[unit]).await,
        }
    }

    /// What batching did so far.
    pub fn batch_stats(&self) -> &BatchStats {
        self.batching.stats()
    }

    /// Checks the replicas' health and positions, and their primaries' positions, until the
    /// future is dropped; returns at once without replicas.
    pub async fn watch_replicas(&self) {
        self.replicas.watch(&self.pools).await;
    }

    /// The result columns kept per statement shape: what the cache holds and has done.
    pub fn column_cache(&self) -> cache::CacheStats {
        self.result_columns.stats()
    }

    /// The text columns' collations kept per table: what the cache holds and has done.
    pub fn collation_cache(&self) -> cache::CacheStats {
        self.collations.stats()
    }

    /// How many merged reads' parts a data source answered as one combined statement.
    pub fn combined_reads(&self) -> u64 {
        self.combined_reads
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Every replica's state now.
    pub fn replica_status(&self) -> Vec<ReplicaStatus> {
        self.replicas.status()
    }

    /// Runs one statement, as text, on one data source (DDL, administration), in
    /// `transaction` when there is one.
    pub async fn execute_on_in(
        &self,
        transaction: Option<&mut Transaction>,
        data_source: &str,
        sql: &str,
    ) -> Result<Outcome, BackendError> {
        match transaction {
            Some(transaction) => {
                let plan = Plan::of_units(vec![text_unit(data_source, sql)]);
                self.execute_in(transaction, &plan).await
            }
            None => self.execute_on(data_source, sql).await,
        }
    }

    /// Runs one statement, as text, on one data source (DDL, administration).
    pub async fn execute_on(&self, data_source: &str, sql: &str) -> Result<Outcome, BackendError> {
        let unit = text_unit(data_source, sql);
        self.starting(&unit);
        let result = execute::autocommit(self.pool(data_source)?, &[&unit])
            .await
            .map_err(|e| BackendError::from_sqlx(data_source, e))?;
        let result = result.into_iter().next().unwrap_or_default();
        Ok(Outcome {
            affected_rows: result.affected_rows,
            columns: result.columns,
            rows: result.rows,
            ..Outcome::default()
        })
    }

    /// Connects to every data source at once, replicas last; one result per data source, in
    /// order.
    pub async fn check(&self) -> Vec<(&str, Result<(), BackendError>)> {
        let pools = self
            .pools
            .iter()
            .map(|(name, pool)| (name.as_str(), &**pool));
        let checks = pools
            .chain(self.replicas.pools())
            .map(|(name, pool)| async move {
                (
                    name,
                    pool.check()
                        .await
                        .map_err(|e| BackendError::from_sqlx(name, e)),
                )
            });
        futures_util::future::join_all(checks).await
    }

    /// Closes every pool.
    pub async fn close(&self) {
        futures_util::future::join_all(self.pools.values().map(|pool| pool.close())).await;
        self.replicas.close().await;
    }

    /// The columns `plan`'s read returns to the client, asked of the database without running
    /// it (a result without rows does not carry them), or as it answered for an earlier
    /// statement of the same shape (see `result_columns.rs`); the merge's hidden columns left out.
    /// With them, the parameter types a PostgreSQL data source infers for the first unit.
    pub async fn result_columns(
        &self,
        plan: &Plan,
    ) -> Result<(Vec<Column>, Vec<u32>), BackendError> {
        if let Some(gather) = &plan.gather {
            let (outcome, params) = self.gather(None, gather, false, true).await?;
            return Ok((outcome.columns, params));
        }
        let Some(unit) = plan.units.first() else {
            return Ok((Vec::new(), Vec::new()));
        };
        let (mut columns, params) = match self.kept_columns(plan, unit) {
            Ok(description) => description,
            Err(slot) => {
                let description = execute::describe(self.pool(&unit.data_source)?, &unit.sql)
                    .await
                    .map_err(|e| BackendError::from_sqlx(&unit.data_source, e))?;
                if let Some(slot) = slot {
                    self.result_columns.put(slot, &description);
                }
                description
            }
        };
        self.origins.logical(&unit.data_source, &mut columns);
        let Some(spec) = &plan.merge else {
            return Ok((columns, params));
        };
        columns.truncate(columns.len().saturating_sub(spec.hidden_columns));
        // The shards were asked for AVG as SUM; the merge answers an average, typed as it types
        // the rows it merges.
        for aggregate in &spec.aggregates {
            if let (Aggregate::Avg { .. }, Some(column)) =
                (aggregate.function, columns.get_mut(aggregate.index))
            {
                let ty = if column.ty.is_float() {
                    SqlType::Double
                } else {
                    SqlType::Decimal { unsigned: false }
                };
                // Described before any row says the session's increment: its default.
                merge::describe_average(column, ty, merge::DEFAULT_DIVISION_SCALE);
            }
        }
        Ok((columns, params))
    }

    /// The kept result columns of `plan`'s first unit, or where to keep them.
    fn kept_columns(
        &self,
        plan: &Plan,
        unit: &ExecutionUnit,
    ) -> Result<result_columns::Description, Option<result_columns::Slot>> {
        let version = self.metadata.version();
        match &plan.described_as {
            // A unit's text differs from its shape by its tables (the first names the others:
            // they are bound alike) and, for a merged read, by the columns added for the merge.
            Some(shape) => {
                let merged = if plan.merge.is_some() {
                    "merged"
                } else {
                    "one"
                };
                let key = result_columns::shape_key(merged, &unit.table, shape);
                self.result_columns
                    .get_keyed(&unit.data_source, key, version)
            }
            None => self
                .result_columns
                .get(&unit.data_source, &unit.sql, version),
        }
    }

    /// Logs `unit` as it is about to run, and forgets the kept result columns when it may
    /// change a table's; answers whether it may.
    pub(crate) fn starting(&self, unit: &ExecutionUnit) -> bool {
        let changes = self.result_columns.note(&unit.sql);
        self.show_sql("Actual SQL", &unit.data_source, &unit.sql, &unit.params);
        changes
    }

    /// Logs `sql` as sent to `data_source`, at info level under `props.sql-show`, else at
    /// debug, in ShardingSphere's sql-show format: "Actual SQL: ds ::: sql ::: [params]".
    pub(crate) fn show_sql(&self, label: &str, data_source: &str, sql: &str, params: &[Value]) {
        if self.sql_show {
            tracing::info!("{label}: {data_source} ::: {sql} ::: {params:?}");
        } else {
            tracing::debug!("{label}: {data_source} ::: {sql} ::: {params:?}");
        }
    }
}

/// `sql` as one unit of text on `data_source`.
fn text_unit(data_source: &str, sql: &str) -> ExecutionUnit {
    ExecutionUnit {
        data_source: data_source.to_owned(),
        table: String::new(),
        sql: sql.to_owned(),
        params: Vec::new(),
        rows: Vec::new(),
        binary_results: false,
    }
}

/// A read's units in parts, each for one connection: every data source's units split into at
/// most `connections` runs of consecutive units, by position.
fn read_parts(units: &[ExecutionUnit], connections: usize) -> Vec<Vec<usize>> {
    let mut by_source: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, unit) in units.iter().enumerate() {
        match by_source.iter_mut().find(|(ds, _)| *ds == unit.data_source) {
            Some((_, positions)) => positions.push(i),
            None => by_source.push((&unit.data_source, vec![i])),
        }
    }
    by_source
        .into_iter()
        .flat_map(|(_, positions)| {
            let size = positions.len().div_ceil(connections.max(1));
            positions
                .chunks(size)
                .map(<[usize]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reads_units_share_the_connections_of_their_data_source() {
        let unit = |data_source: &str| ExecutionUnit {
            data_source: data_source.to_owned(),
            table: String::new(),
            sql: String::new(),
            params: Vec::new(),
            rows: Vec::new(),
            binary_results: false,
        };
        let units = [unit("ds_0"), unit("ds_1"), unit("ds_0"), unit("ds_0")];
        assert_eq!(read_parts(&units, 1), [vec![0, 2, 3], vec![1]]);
        assert_eq!(read_parts(&units, 2), [vec![0, 2], vec![3], vec![1]]);
        assert_eq!(read_parts(&units, 8), [vec![0], vec![2], vec![3], vec![1]]);
    }
}
