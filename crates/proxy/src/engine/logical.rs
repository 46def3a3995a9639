//! The engine among the instance's logical databases: which is its, which a user may use,
//! the other ones, and where `!SINGLE`'s tables of its own data sources live now.

use std::sync::Arc;

use super::{Databases, Engine};

impl Engine {
    /// Whether `user` may use logical database `database` (`DATABASE_PERMITTED`).
    pub(crate) fn may_use(&self, user: &str, database: &str) -> bool {
        self.config
            .users
            .iter()
            .any(|u| u.name == user && u.may_use(database))
    }

    /// Whether `database` is this engine's logical database.
    pub fn is_database(&self, database: &str) -> bool {
        database.eq_ignore_ascii_case(&self.config.database_name)
    }

    /// The logical databases of the instance, this one among them.
    pub(crate) fn databases(&self) -> &[String] {
        &self.instance.databases
    }

    /// Gives the engine the instance's started engines, itself among them.
    pub(crate) fn attach(&self, databases: &Arc<Databases>) {
        let _ = self.siblings.set(Arc::downgrade(databases));
    }

    /// The engine of `database` when it is another logical database of the instance.
    pub(super) fn other_database(&self, database: &str) -> Option<Arc<Engine>> {
        if self.is_database(database) {
            return None;
        }
        let databases = self.siblings.get()?.upgrade()?;
        databases.named(database).cloned()
    }

    /// Looks for `!SINGLE`'s tables again (`*.*`, `ds.*`: what each data source holds now),
    /// so that statements on them go where they now live.
    pub(crate) async fn refresh_single_tables(&self) {
        if self.config.sharding.single_tables.is_empty() {
            return;
        }
        let (mut found, unread) = crate::single_tables::discover(&self.backend, &self.config).await;
        // A data source not read now keeps the tables it had: forgetting them would send
        // their statements to the default data source, which may have tables of those names.
        found.extend(
            self.single_tables
                .listed()
                .into_iter()
                .filter(|(_, ds)| unread.contains(ds)),
        );
        self.single_tables.replace(found);
    }
}
