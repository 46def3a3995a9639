//! A client's transaction: on each data source it touches, one connection holding one local
//! transaction, from the first statement there until COMMIT or ROLLBACK.
//!
//! Statements run one data source after the other on the held connections. A statement that
//! runs as several units (several data sources, or several tables of one) is wrapped in a
//! savepoint on each data source it touches, so that when one part fails the others are undone and the transaction goes on as it was before the statement, as a
//! single database would leave it. COMMIT commits the data sources in turn: should one fail
//! after another committed, the transaction is half committed (avoiding that needs XA).

use keyshard_router::{ExecutionUnit, Plan};
use sqlx::{Executor, IntoArguments, MySql, Postgres, Sqlite};

use crate::driver::Driver;
use crate::execute::run_statement;
use crate::outcome::UnitResult;
use crate::{Backend, BackendError, Outcome, Pool};

/// The savepoint a multi-shard statement runs under.
const SAVEPOINT: &str = "keyshard_statement";

/// An open transaction across data sources; empty until its first statement.
#[derive(Debug, Default)]
pub struct Transaction {
    parts: Vec<(String, Part)>,
}

/// One data source's local transaction, owning its connection.
#[derive(Debug)]
enum Part {
    MySql(sqlx::Transaction<'static, MySql>),
    Postgres(sqlx::Transaction<'static, Postgres>),
    Sqlite(sqlx::Transaction<'static, Sqlite>),
}

impl Transaction {
    /// A transaction that has touched no data source yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The data sources it holds a connection on.
    pub fn data_sources(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().map(|(name, _)| name.as_str())
    }

    fn part(&mut self, data_source: &str) -> Option<&mut Part> {
        self.parts
            .iter_mut()
            .find(|(name, _)| name == data_source)
            .map(|(_, part)| part)
    }
}

impl Part {
    async fn begin(pool: &Pool) -> Result<Self, sqlx::Error> {
        Ok(match pool {
            Pool::MySql(c) => {
                Part::MySql(sqlx::Transaction::begin(c.acquire().await?, None).await?)
            }
            Pool::Postgres(c) => {
                Part::Postgres(sqlx::Transaction::begin(c.acquire().await?, None).await?)
            }
            Pool::Sqlite(c) => {
                Part::Sqlite(sqlx::Transaction::begin(c.acquire().await?, None).await?)
            }
        })
    }

    async fn run(&mut self, unit: &ExecutionUnit) -> Result<UnitResult, sqlx::Error> {
        match self {
            Part::MySql(tx) => run_statement::<MySql>(tx, &unit.sql, &unit.params).await,
            Part::Postgres(tx) => run_statement::<Postgres>(tx, &unit.sql, &unit.params).await,
            Part::Sqlite(tx) => run_statement::<Sqlite>(tx, &unit.sql, &unit.params).await,
        }
    }

    async fn command(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        match self {
            Part::MySql(tx) => command::<MySql>(tx, sql).await,
            Part::Postgres(tx) => command::<Postgres>(tx, sql).await,
            Part::Sqlite(tx) => command::<Sqlite>(tx, sql).await,
        }
    }

    async fn end(self, commit: bool) -> Result<(), sqlx::Error> {
        match (self, commit) {
            (Part::MySql(tx), true) => tx.commit().await,
            (Part::MySql(tx), false) => tx.rollback().await,
            (Part::Postgres(tx), true) => tx.commit().await,
            (Part::Postgres(tx), false) => tx.rollback().await,
            (Part::Sqlite(tx), true) => tx.commit().await,
            (Part::Sqlite(tx), false) => tx.rollback().await,
        }
    }
}

async fn command<D: Driver>(conn: &mut D::Connection, sql: &str) -> Result<(), sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    conn.execute(sqlx::raw_sql(sql)).await.map(|_| ())
}

impl Backend {
    /// Runs `plan` inside `transaction`, beginning a local transaction on each data source it
    /// touches for the first time.
    pub async fn execute_in(
        &self,
        transaction: &mut Transaction,
        plan: &Plan,
    ) -> Result<Outcome, BackendError> {
        let mut touched: Vec<&str> = Vec::new();
        for unit in &plan.units {
            if !touched.contains(&unit.data_source.as_str()) {
                touched.push(&unit.data_source);
            }
        }
        for data_source in &touched {
            if transaction.part(data_source).is_none() {
                let part = Part::begin(self.pool(data_source)?)
                    .await
                    .map_err(|e| BackendError::from_sqlx(data_source, e))?;
                transaction.parts.push(((*data_source).to_owned(), part));
            }
        }
        // One unit is one statement on one database, atomic by itself; several units (shards
        // on several data sources, or several tables of one) are made atomic by a savepoint.
        let guarded = plan.units.len() > 1;
        if guarded {
            self.on_each(transaction, &touched, &format!("SAVEPOINT {SAVEPOINT}"))
                .await?;
        }
        let mut results = Vec::with_capacity(plan.units.len());
        let mut failure = None;
        for unit in &plan.units {
            self.show(unit);
            let part = transaction
                .part(&unit.data_source)
                .ok_or_else(|| BackendError::UnknownDataSource(unit.data_source.clone()))?;
            match part.run(unit).await {
                Ok(result) => results.push(result),
                Err(e) => {
                    failure = Some(BackendError::from_sqlx(&unit.data_source, e));
                    break;
                }
            }
        }
        if guarded {
            let end = match failure {
                Some(_) => format!("ROLLBACK TO SAVEPOINT {SAVEPOINT}"),
                None => format!("RELEASE SAVEPOINT {SAVEPOINT}"),
            };
            self.on_each(transaction, &touched, &end).await?;
        }
        match failure {
            Some(error) => Err(error),
            None => Outcome::of(plan, results),
        }
    }

    async fn on_each(
        &self,
        transaction: &mut Transaction,
        data_sources: &[&str],
        sql: &str,
    ) -> Result<(), BackendError> {
        for data_source in data_sources {
            if let Some(part) = transaction.part(data_source) {
                part.command(sql)
                    .await
                    .map_err(|e| BackendError::from_sqlx(data_source, e))?;
            }
        }
        Ok(())
    }

    /// Commits every data source's part, in the order they were touched; the first failure is
    /// reported after the rest were still tried.
    pub async fn commit(&self, transaction: Transaction) -> Result<(), BackendError> {
        self.end(transaction, true).await
    }

    /// Rolls every data source's part back.
    pub async fn rollback(&self, transaction: Transaction) -> Result<(), BackendError> {
        self.end(transaction, false).await
    }

    async fn end(&self, transaction: Transaction, commit: bool) -> Result<(), BackendError> {
        let mut first_error = None;
        for (data_source, part) in transaction.parts {
            if let Err(e) = part.end(commit).await {
                first_error.get_or_insert(BackendError::from_sqlx(&data_source, e));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
