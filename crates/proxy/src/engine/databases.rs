//! The logical databases one proxy serves, each an engine of its own (its data sources, rules,
//! routers and key generators). A connection is served by the engine of the database it names
//! at login, or the first configured one, until it switches with `USE`.

use std::sync::Arc;

use keyshard_backend::ReplicaStatus;

use super::Engine;

/// The engines, the first one the default.
#[derive(Debug)]
pub(crate) struct Databases {
    first: Arc<Engine>,
    others: Vec<Arc<Engine>>,
}

impl Databases {
    /// `first` and the others, in the order they were configured.
    pub(crate) fn new(first: Arc<Engine>, others: Vec<Arc<Engine>>) -> Self {
        Self { first, others }
    }

    /// The engine of a connection that names no database.
    pub(crate) fn first(&self) -> &Arc<Engine> {
        &self.first
    }

    /// The engine of the logical database `name` (case-insensitive).
    pub(crate) fn named(&self, name: &str) -> Option<&Arc<Engine>> {
        self.iter().find(|e| e.is_database(name))
    }

    /// The instance's metrics in Prometheus' text format, with every database's pools,
    /// replicas and caches as they are now (named `database.name` when there are several
    /// databases).
    pub(crate) fn render_metrics(&self) -> String {
        let pools = self.per_database(|engine| engine.backend().pool_stats());
        let replicas: Vec<_> = self
            .per_database(|engine| {
                let replicas = engine.backend().replica_status().into_iter();
                replicas.map(|r| (r.group.clone(), r)).collect()
            })
            .into_iter()
            .map(|(group, replica)| ReplicaStatus { group, ..replica })
            .collect();
        let caches = self.per_database(|engine| {
            let caches = engine.caches().into_iter();
            caches
                .map(|(name, stats)| (name.to_owned(), stats))
                .collect()
        });
        let mut counters = [0; 4];
        for engine in self.iter() {
            let backend = engine.backend();
            let stats = backend.batch_stats();
            let counts = [&stats.batches, &stats.batched, &stats.retried]
                .map(|count| count.load(std::sync::atomic::Ordering::Relaxed));
            let counts = counts.into_iter().chain([backend.combined_reads()]);
            for (sum, count) in counters.iter_mut().zip(counts) {
                *sum += count;
            }
        }
        self.first
            .metrics()
            .render(&pools, &replicas, &caches, counters)
    }

    /// What `of` lists for each database, each name prefixed with its database's when there
    /// are several.
    fn per_database<T>(&self, of: impl Fn(&Engine) -> Vec<(String, T)>) -> Vec<(String, T)> {
        let several = !self.others.is_empty();
        self.iter()
            .flat_map(|engine| {
                let database = &engine.config().database_name;
                of(engine)
                    .into_iter()
                    .map(move |(name, item)| match several {
                        true => (format!("{database}.{name}"), item),
                        false => (name, item),
                    })
            })
            .collect()
    }

    /// Every engine, the first first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Engine>> {
        std::iter::once(&self.first).chain(&self.others)
    }
}
