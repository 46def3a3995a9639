//! The catalog relations of the default data source, read once at start, so that a client's
//! reads of `information_schema` and `pg_catalog` show the logical database (see the router's
//! `catalog` module).

use keyshard_backend::Backend;
use keyshard_config::{Config, DatabaseKind};
use keyshard_router::{CatalogColumn, CatalogViews, Router, catalog_columns_sql};
use keyshard_types::Dialect;

use crate::identity::read_texts;

/// `router` with the views of its default data source's catalog, when that data source speaks
/// the router's dialect and answers; else `router` as it is (catalog reads then show the
/// actual tables, and a warning says why).
pub(crate) async fn with_catalog(router: Router, backend: &Backend, config: &Config) -> Router {
    let Some(default) = router.default_data_source().map(str::to_owned) else {
        return router;
    };
    let dialect = match config.data_sources.get(&default).map(|d| d.kind) {
        Some(DatabaseKind::MySql) => Dialect::MySql,
        Some(DatabaseKind::Postgres) => Dialect::Postgres,
        Some(DatabaseKind::Sqlite) | None => return router,
    };
    if dialect != router.dialect() {
        return router;
    }
    let shard_database = match dialect {
        Dialect::MySql => {
            let rows = read_texts(backend, &default, "SELECT DATABASE()", "database").await;
            match rows.and_then(|rows| rows.into_iter().next()?.into_iter().next()) {
                Some(name) => name,
                None => return router,
            }
        }
        Dialect::Postgres => String::new(),
    };
    let sql = catalog_columns_sql(dialect);
    let Some(rows) = read_texts(backend, &default, &sql, "catalog").await else {
        return router;
    };
    let columns: Vec<CatalogColumn> = rows
        .into_iter()
        .filter_map(|row| {
            let [schema, relation, name, sql_type]: [String; 4] = row.try_into().ok()?;
            Some(CatalogColumn {
                schema,
                relation,
                name,
                sql_type,
            })
        })
        .collect();
    let names = router.logical_names(
        &shard_database,
        &config.database_name,
        keyshard_coordination::TABLES,
    );
    let views = CatalogViews::new(dialect, &columns, &names);
    router.with_catalog(views)
}
