//! Where tables without a sharding or broadcast rule live, as `!SINGLE` found them: a
//! statement on them goes to their data source instead of the default one.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::{RouteError, Router};

/// Each single table's data sources, by ASCII-lower-cased name.
#[derive(Debug, Clone, Default)]
pub(crate) struct SingleHomes {
    tables: HashMap<String, Vec<String>>,
}

impl SingleHomes {
    /// Records that `table` lives on `data_source`.
    pub(crate) fn add(&mut self, table: &str, data_source: &str) {
        let sources = self.tables.entry(table.to_ascii_lowercase()).or_default();
        if !sources.iter().any(|s| s == data_source) {
            sources.push(data_source.to_owned());
        }
    }

    /// The data source a statement on `tables` goes to: the one where those with a home live
    /// (the default data source, when one of them lives there too); `None` when none has one.
    pub(crate) fn of<'a>(
        &'a self,
        tables: &[String],
        default: &str,
    ) -> Result<Option<&'a str>, RouteError> {
        if self.tables.is_empty() {
            return Ok(None);
        }
        let mut chosen: Option<(&str, &str)> = None;
        for table in tables {
            let Some(sources) = self.tables.get(&table.to_ascii_lowercase()) else {
                continue;
            };
            let home = match sources.as_slice() {
                _ if sources.iter().any(|s| s == default) => sources.iter().find(|s| *s == default),
                [one] => Some(one),
                _ => {
                    return Err(RouteError::Unsupported(format!(
                        "table '{table}' lives on data sources {}, and !SINGLE does not say \
                         which one is meant",
                        sources.join(", ")
                    )));
                }
            };
            let Some(home) = home else { continue };
            match chosen {
                Some((other_table, other)) if other != home => {
                    return Err(RouteError::Unsupported(format!(
                        "tables '{other_table}' (on {other}) and '{table}' (on {home}) in one \
                         statement: single tables on different data sources"
                    )));
                }
                _ => chosen = Some((table, home)),
            }
        }
        Ok(chosen.map(|(_, home)| home))
    }
}

/// Where `!SINGLE`'s tables live, shared by a proxy's routers: found at start and found again
/// when tables may have come or gone (after DDL, on `REFRESH TABLE METADATA`), so that the
/// routers follow without being rebuilt.
#[derive(Debug, Default)]
pub struct SingleTables {
    found: RwLock<(SingleHomes, Vec<(String, String)>)>,
}

impl SingleTables {
    /// The tables `found`, each with its data source.
    pub fn new(found: Vec<(String, String)>) -> Self {
        let tables = Self::default();
        tables.replace(found);
        tables
    }

    /// Replaces what was found with `found`.
    pub fn replace(&self, found: Vec<(String, String)>) {
        let mut homes = SingleHomes::default();
        for (table, data_source) in &found {
            homes.add(table, data_source);
        }
        // A poisoned lock held only a finished replacement: its value is whole.
        let mut slot = self.found.write().unwrap_or_else(|e| e.into_inner());
        *slot = (homes, found);
    }

    /// Each table with its data source, in the order found.
    pub fn listed(&self) -> Vec<(String, String)> {
        self.found
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .clone()
    }

    fn home(&self, tables: &[String], default: &str) -> Result<Option<String>, RouteError> {
        let found = self.found.read().unwrap_or_else(|e| e.into_inner());
        Ok(found.0.of(tables, default)?.map(str::to_owned))
    }
}

impl Router {
    /// Statements on these tables without a rule go to the data source each lives on
    /// (`!SINGLE`); `tables` may be shared with other routers and replaced while they run.
    pub fn with_single_tables(mut self, tables: Arc<SingleTables>) -> Self {
        self.single = tables;
        self
    }

    /// The data source a statement on the unsharded `tables` goes to: where they live, else
    /// the default one.
    pub(crate) fn home(&self, tables: &[String], default: &str) -> Result<String, RouteError> {
        Ok(self
            .single
            .home(tables, default)?
            .unwrap_or_else(|| default.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_go_where_they_live() {
        let mut homes = SingleHomes::default();
        homes.add("t_audit", "ds_1");
        homes.add("t_both", "ds_0");
        homes.add("t_both", "ds_1");
        homes.add("t_other", "ds_2");
        homes.add("t_other", "ds_3");
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            homes.of(&names(&["T_AUDIT"]), "ds_0").unwrap(),
            Some("ds_1")
        );
        assert_eq!(homes.of(&names(&["t_unknown"]), "ds_0").unwrap(), None);
        assert_eq!(homes.of(&names(&["t_both"]), "ds_0").unwrap(), Some("ds_0"));
        assert!(homes.of(&names(&["t_audit", "t_both"]), "ds_0").is_err());
        assert!(homes.of(&names(&["t_other"]), "ds_0").is_err());
        assert_eq!(
            homes.of(&names(&["t_audit", "t_unknown"]), "ds_0").unwrap(),
            Some("ds_1")
        );
    }
}
