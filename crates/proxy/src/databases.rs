//! The logical databases one proxy serves, each an engine of its own (its data sources, rules,
//! routers and key generators). A connection is served by the engine of the database it names
//! at login, or the first configured one, until it switches with `USE`.

use std::sync::Arc;

use crate::engine::Engine;

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

    /// The instance's metrics in Prometheus' text format, with every database's pools as
    /// they are now (named `database.data_source` when there are several databases).
    pub(crate) fn render_metrics(&self) -> String {
        let several = !self.others.is_empty();
        let pools: Vec<_> =
            self.iter()
                .flat_map(|engine| {
                    let database = &engine.config().database_name;
                    engine.backend().pool_stats().into_iter().map(
                        move |(name, stats)| match several {
                            true => (format!("{database}.{name}"), stats),
                            false => (name, stats),
                        },
                    )
                })
                .collect();
        let replicas: Vec<_> = self
            .iter()
            .flat_map(|engine| {
                let database = &engine.config().database_name;
                engine
                    .backend()
                    .replica_status()
                    .into_iter()
                    .map(move |mut r| {
                        if several {
                            r.group = format!("{database}.{}", r.group);
                        }
                        r
                    })
            })
            .collect();
        let caches: Vec<_> = self
            .iter()
            .flat_map(|engine| {
                let database = &engine.config().database_name;
                engine
                    .caches()
                    .into_iter()
                    .map(move |(name, stats)| match several {
                        true => (format!("{database}.{name}"), stats),
                        false => (name.to_owned(), stats),
                    })
            })
            .collect();
        self.first.metrics().render(&pools, &replicas, &caches)
    }

    /// Every engine, the first first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Engine>> {
        std::iter::once(&self.first).chain(&self.others)
    }
}
