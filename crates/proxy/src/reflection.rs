//! `SHOW TABLES` and `SHOW COLUMNS` / `DESCRIBE`, answered for the logical database: logic
//! tables in place of their actual tables, and a logic table's columns read from its first
//! actual table, in MySQL's shape whatever database the shard is.

use keyshard_config::DatabaseKind;
use keyshard_types::Value;

use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::words::like;

mod request;
mod status;
mod views;

use keyshard_backend::{Backend, Outcome};
use keyshard_config::Config;
pub(crate) use request::{Name, Request, request};
pub(crate) use views::with_catalog;

/// What answering needs: the configuration, and the shards to read actual tables from.
pub(crate) struct Shards<'a> {
    pub(crate) backend: &'a Backend,
    pub(crate) config: &'a Config,
}

impl Shards<'_> {
    /// Runs `sql` as it is on `data_source`, outside any transaction.
    async fn run_on(&self, data_source: &str, sql: &str) -> Result<Outcome, Error> {
        Ok(self.backend.execute_on(data_source, sql).await?)
    }
}

/// Answers `request` from the configuration and the shards.
pub(crate) async fn answer(
    shards: &Shards<'_>,
    request: Request,
    database_name: &str,
    session_user: &str,
) -> Result<Reply, Error> {
    match request {
        Request::Grants { user } => grants(shards, user.as_deref().unwrap_or(session_user)),
        Request::Tables {
            full,
            database,
            like,
        } => {
            if let Some(database) = database
                && !database.eq_ignore_ascii_case(database_name)
            {
                return Err(Error::unknown_database(&database));
            }
            tables(shards, full, like.as_deref(), database_name).await
        }
        Request::Columns { table, full, like } => {
            let table = logic_name(table, database_name)?;
            columns(shards, &table, full, like.as_deref(), database_name).await
        }
        Request::CreateTable { table } => {
            let table = logic_name(table, database_name)?;
            create_table(shards, &table, database_name).await
        }
        Request::TableStatus { database, like } => {
            if let Some(database) = database
                && !database.eq_ignore_ascii_case(database_name)
            {
                return Err(Error::unknown_database(&database));
            }
            let names = logic_tables(shards, like.as_deref()).await?;
            status::table_status(shards, &names).await
        }
        Request::CreateDatabase {
            name,
            if_not_exists,
        } => {
            if !name.eq_ignore_ascii_case(database_name) {
                return Err(Error::unknown_database(&name));
            }
            create_database(shards, database_name, if_not_exists).await
        }
        Request::Indexes { table } => {
            let table = logic_name(table, database_name)?;
            indexes(shards, &table, database_name).await
        }
        Request::Refused => Err(Error::unsupported(
            "this form of a catalog statement (FROM db and LIKE 'pattern' are answered; \
             query information_schema instead of WHERE)",
        )),
    }
}

/// The table a qualified name names in the logic database; a name in any other database is
/// a table that does not exist, as MySQL says of a database that does not.
fn logic_name(name: Name, database_name: &str) -> Result<String, Error> {
    match name.database {
        Some(database) if !database.eq_ignore_ascii_case(database_name) => {
            Err(no_such_table(&database, &name.table))
        }
        _ => Ok(name.table),
    }
}

async fn tables(
    shards: &Shards<'_>,
    full: bool,
    pattern: Option<&str>,
    database_name: &str,
) -> Result<Reply, Error> {
    let names = logic_tables(shards, pattern).await?;
    // MySQL names the column after the pattern too.
    let column = match pattern {
        Some(pattern) => format!("Tables_in_{database_name} ({pattern})"),
        None => format!("Tables_in_{database_name}"),
    };
    let rows = names
        .into_iter()
        .map(|n| {
            let mut row = vec![Value::Text(n)];
            if full {
                row.push(Value::Text("BASE TABLE".into()));
            }
            row
        })
        .collect();
    Ok(if full {
        Reply::text_rows(&[&column, "Table_type"], rows)
    } else {
        Reply::text_rows(&[&column], rows)
    })
}

/// The tables of the logical database whose names match `pattern`, sorted: the logic tables
/// whose first actual table exists, the broadcast tables that exist, and the default data
/// source's tables that no rule places there. A table configured but not created is not
/// listed, as a database does not list a table it does not have (`mariadb-dump` of the
/// database would stop at it).
async fn logic_tables(shards: &Shards<'_>, pattern: Option<&str>) -> Result<Vec<String>, Error> {
    let config = shards.config;
    let sharding = &config.sharding;
    let default = default_data_source(shards);
    let mut listed: Vec<(String, Vec<String>)> = Vec::new();
    let mut exists = async |data_source: &str, table: &str| -> Result<bool, Error> {
        if !listed.iter().any(|(ds, _)| ds == data_source) {
            let names = table_names(shards, data_source).await?;
            listed.push((data_source.to_owned(), names));
        }
        Ok(listed.iter().any(|(ds, names)| {
            ds == data_source && names.iter().any(|n| n.eq_ignore_ascii_case(table))
        }))
    };
    let mut names = Vec::new();
    for rule in sharding.tables.values() {
        if let Some(node) = rule.data_nodes.first()
            && exists(&node.data_source, &node.table).await?
        {
            names.push(rule.logic_table.clone());
        }
    }
    // A broadcast table is on every data source: the default one tells.
    for table in &config.broadcast_tables {
        let there = match &default {
            Some(default) => exists(default, table).await?,
            None => true,
        };
        if there {
            names.push(table.clone());
        }
    }
    // Unsharded tables are those on the default data source that no rule places there.
    if let Some(default) = default {
        let is_actual = |name: &str| {
            // Keyshard's own coordination tables are not the application's.
            keyshard_coordination::TABLES
                .iter()
                .any(|t| t.eq_ignore_ascii_case(name))
                || sharding.tables.values().any(|t| {
                    t.data_nodes
                        .iter()
                        .any(|n| n.table.eq_ignore_ascii_case(name))
                })
        };
        let on_default = match listed.iter_mut().find(|(ds, _)| *ds == default) {
            Some((_, names)) => std::mem::take(names),
            None => table_names(shards, &default).await?,
        };
        names.extend(on_default.into_iter().filter(|name| !is_actual(name)));
    }
    names.sort_by_key(|n| n.to_ascii_lowercase());
    names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    if let Some(pattern) = pattern {
        names.retain(|n| like(n, pattern));
    }
    Ok(names)
}

/// The tables of `data_source`'s database (its current schema on PostgreSQL).
async fn table_names(shards: &Shards<'_>, data_source: &str) -> Result<Vec<String>, Error> {
    let list = match kind_of(shards, data_source) {
        DatabaseKind::MySql => "SHOW TABLES",
        DatabaseKind::Postgres => {
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"
        }
        DatabaseKind::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        }
    };
    let rows = shards.run_on(data_source, list).await?.rows;
    Ok(rows
        .into_iter()
        .filter_map(|row| match row.into_iter().next() {
            Some(Value::Text(name)) => Some(name),
            _ => None,
        })
        .collect())
}

/// Where a logic table's definition is read: its first actual table, or the table itself on
/// the default data source when no rule shards it.
fn first_actual(
    shards: &Shards<'_>,
    table: &str,
    database_name: &str,
) -> Result<(String, String), Error> {
    let (data_source, actual) = match shards.config.sharding.table(table) {
        Some(rule) => match rule.data_nodes.first() {
            Some(node) => (node.data_source.clone(), node.table.clone()),
            None => return Err(no_such_table(database_name, table)),
        },
        None => match default_data_source(shards) {
            Some(default) => (default, table.to_owned()),
            None => return Err(no_such_table(database_name, table)),
        },
    };
    // Spliced into SQL below: a name that needs quoting is not one Keyshard serves.
    if actual.contains(['\'', '`', '"', '\\']) {
        return Err(no_such_table(database_name, table));
    }
    Ok((data_source, actual))
}

/// `SHOW GRANTS`: what `authority` lets a configured user do, which is everything
/// (ShardingSphere's ALL_PERMITTED, the one privilege provider Keyshard has).
fn grants(shards: &Shards<'_>, user: &str) -> Result<Reply, Error> {
    let configured = shards.config.users.iter().find(|u| u.name == user);
    let host = match configured {
        Some(u) => u.host.clone().unwrap_or_else(|| "%".to_owned()),
        None if shards.config.users.is_empty() => "%".to_owned(),
        None => {
            return Err(Error::new(
                ErrorKind::NoSuchGrant,
                format!("There is no such grant defined for user '{user}' on host '%'"),
            ));
        }
    };
    let quoted = |s: &str| format!("`{}`", s.replace('`', "``"));
    // ALL_PERMITTED: everything; DATABASE_PERMITTED: each database the user is mapped to.
    let scopes = match configured.and_then(|u| u.databases.as_ref()) {
        Some(databases) => databases
            .iter()
            .map(|d| format!("{}.*", quoted(d)))
            .collect(),
        None => vec!["*.*".to_owned()],
    };
    let rows = scopes
        .iter()
        .map(|scope| {
            vec![Value::Text(format!(
                "GRANT ALL PRIVILEGES ON {scope} TO {}@{} WITH GRANT OPTION",
                quoted(user),
                quoted(&host)
            ))]
        })
        .collect();
    Ok(Reply::text_rows(
        &[&format!("Grants for {user}@{host}")],
        rows,
    ))
}

/// `SHOW CREATE DATABASE`: the logical database, with the character set and collation of the
/// default data source's, in MariaDB's words.
async fn create_database(
    shards: &Shards<'_>,
    database_name: &str,
    if_not_exists: bool,
) -> Result<Reply, Error> {
    let refused = || Error::unsupported("SHOW CREATE DATABASE without a MySQL default data source");
    let default = default_data_source(shards).ok_or_else(refused)?;
    if kind_of(shards, &default) != DatabaseKind::MySql {
        return Err(refused());
    }
    let sql = "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
               FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()";
    let row = shards.run_on(&default, sql).await?.rows.into_iter().next();
    let text = |i: usize| match row.as_ref().and_then(|r| r.get(i)) {
        Some(Value::Text(s)) => s.clone(),
        _ => String::new(),
    };
    let (charset, collation) = (text(0), text(1));
    let name = database_name.replace('`', "``");
    let exists = if if_not_exists {
        "/*!32312 IF NOT EXISTS*/ "
    } else {
        ""
    };
    let definition = format!(
        "CREATE DATABASE {exists}`{name}` /*!40100 DEFAULT CHARACTER SET {charset} COLLATE \
         {collation} */"
    );
    Ok(Reply::text_rows(
        &["Database", "Create Database"],
        vec![vec![
            Value::Text(database_name.to_owned()),
            Value::Text(definition),
        ]],
    ))
}

/// `SHOW CREATE TABLE`: the first actual table's definition, under the logic table's name.
async fn create_table(
    shards: &Shards<'_>,
    table: &str,
    database_name: &str,
) -> Result<Reply, Error> {
    let (data_source, actual) = first_actual(shards, table, database_name)?;
    let sql = match kind_of(shards, &data_source) {
        DatabaseKind::MySql => format!("SHOW CREATE TABLE `{actual}`"),
        DatabaseKind::Sqlite => format!(
            "SELECT name AS \"Table\", sql AS \"Create Table\" FROM sqlite_master \
             WHERE type = 'table' AND name = '{actual}'"
        ),
        DatabaseKind::Postgres => {
            return Err(Error::unsupported(
                "SHOW CREATE TABLE on PostgreSQL data sources",
            ));
        }
    };
    let outcome = shards.run_on(&data_source, &sql).await?;
    let Some(row) = outcome.rows.into_iter().next() else {
        return Err(no_such_table(database_name, table));
    };
    let definition = match row.get(1) {
        Some(Value::Text(text)) => rename_definition(text, &actual, table),
        _ => return Err(no_such_table(database_name, table)),
    };
    Ok(Reply::text_rows(
        &["Table", "Create Table"],
        vec![vec![Value::Text(table.to_owned()), Value::Text(definition)]],
    ))
}

/// `CREATE TABLE <actual> (…)` as `CREATE TABLE <logic> (…)`: only the name after CREATE
/// TABLE, quoted as it was.
fn rename_definition(definition: &str, actual: &str, logic: &str) -> String {
    let head_end = definition.find('(').unwrap_or(definition.len());
    let (head, rest) = definition.split_at(head_end);
    match head.rfind(actual) {
        Some(at) => format!("{}{logic}{}{rest}", &head[..at], &head[at + actual.len()..]),
        None => definition.to_owned(),
    }
}

/// `SHOW INDEX FROM`: the first actual table's indexes, under the logic table's name.
async fn indexes(shards: &Shards<'_>, table: &str, database_name: &str) -> Result<Reply, Error> {
    let (data_source, actual) = first_actual(shards, table, database_name)?;
    let sql = match kind_of(shards, &data_source) {
        DatabaseKind::MySql => format!("SHOW INDEX FROM `{actual}`"),
        DatabaseKind::Sqlite => format!(
            "SELECT '{actual}' AS \"Table\", 1 - l.\"unique\" AS \"Non_unique\", \
             CASE l.origin WHEN 'pk' THEN 'PRIMARY' ELSE l.name END AS \"Key_name\", \
             i.seqno + 1 AS \"Seq_in_index\", i.name AS \"Column_name\" \
             FROM pragma_index_list('{actual}') l, pragma_index_info(l.name) i \
             ORDER BY l.name, i.seqno"
        ),
        DatabaseKind::Postgres => {
            return Err(Error::unsupported("SHOW INDEX on PostgreSQL data sources"));
        }
    };
    let mut outcome = shards.run_on(&data_source, &sql).await?;
    for row in &mut outcome.rows {
        if let Some(first) = row.first_mut() {
            *first = Value::Text(table.to_owned());
        }
    }
    Ok(Reply::Rows {
        columns: outcome.columns,
        rows: outcome.rows,
    })
}

async fn columns(
    shards: &Shards<'_>,
    table: &str,
    full: bool,
    pattern: Option<&str>,
    database_name: &str,
) -> Result<Reply, Error> {
    let (data_source, actual) = first_actual(shards, table, database_name)?;
    let sql = match kind_of(shards, &data_source) {
        DatabaseKind::MySql if full => format!("SHOW FULL COLUMNS FROM `{actual}`"),
        DatabaseKind::MySql => format!("SHOW COLUMNS FROM `{actual}`"),
        DatabaseKind::Sqlite => format!(
            "SELECT name AS \"Field\", type AS \"Type\", \
             CASE WHEN \"notnull\" = 0 THEN 'YES' ELSE 'NO' END AS \"Null\", \
             CASE WHEN pk > 0 THEN 'PRI' ELSE '' END AS \"Key\", \
             dflt_value AS \"Default\", '' AS \"Extra\" \
             FROM pragma_table_info('{actual}') ORDER BY cid"
        ),
        DatabaseKind::Postgres => format!(
            "SELECT column_name::text AS \"Field\", data_type::text AS \"Type\", \
             is_nullable::text AS \"Null\", '' AS \"Key\", column_default::text AS \"Default\", \
             '' AS \"Extra\" FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = '{actual}' \
             ORDER BY ordinal_position"
        ),
    };
    let mut outcome = shards.run_on(&data_source, &sql).await?;
    if outcome.rows.is_empty() {
        return Err(no_such_table(database_name, table));
    }
    if let Some(pattern) = pattern {
        outcome
            .rows
            .retain(|row| matches!(row.first(), Some(Value::Text(field)) if like(field, pattern)));
    }
    Ok(Reply::Rows {
        columns: outcome.columns,
        rows: outcome.rows,
    })
}

fn default_data_source(shards: &Shards<'_>) -> Option<String> {
    let config = shards.config;
    config
        .sharding
        .default_data_source
        .clone()
        .or_else(|| config.data_sources.keys().next().cloned())
}

fn kind_of(shards: &Shards<'_>, data_source: &str) -> DatabaseKind {
    shards
        .config
        .data_sources
        .get(data_source)
        .map_or(DatabaseKind::MySql, |d| d.kind)
}

fn no_such_table(database_name: &str, table: &str) -> Error {
    Error::new(
        ErrorKind::UnknownTable,
        format!("Table '{database_name}.{table}' doesn't exist"),
    )
}

#[cfg(test)]
mod tests;
