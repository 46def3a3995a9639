//! Where tables without a sharding or broadcast rule live, as `!SINGLE` found them: a
//! statement on them goes to their data source instead of the default one.

use std::collections::HashMap;

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

impl Router {
    /// Statements on these tables without a rule go to the data source each lives on
    /// (`!SINGLE`, as read from the data sources at start).
    pub fn with_single_tables<'a>(
        mut self,
        homes: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        for (table, data_source) in homes {
            self.single.add(table, data_source);
        }
        self
    }

    /// The data source a statement on the unsharded `tables` goes to: where they live, else
    /// the default one.
    pub(crate) fn home<'a>(
        &'a self,
        tables: &[String],
        default: &'a str,
    ) -> Result<&'a str, RouteError> {
        Ok(self.single.of(tables, default)?.unwrap_or(default))
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
