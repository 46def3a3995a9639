//! Session statements in SQL that the engine answers from the session: `SET @x = …` (MySQL
//! user variables) and PREPARE / EXECUTE / DEALLOCATE.

use keyshard_router::{Leading, bind_placeholders};
use keyshard_types::{Dialect, Value};

use super::Engine;
use super::prepared::load_prepared;
use crate::error::{Error, ErrorKind};
use crate::intent::Intent;
use crate::memory::Reserved;
use crate::reply::Reply;
use crate::session::{Effect, Session};
use crate::sql::Sql;
use crate::{sql_prepare, user_variables};

impl Engine {
    /// PREPARE, EXECUTE and DEALLOCATE sent as SQL: the text is kept in the session, checked
    /// when it runs (one with parameters for its syntax when prepared, too); an execution binds its arguments (MySQL: user variables' values;
    /// PostgreSQL: the expressions written) into it and runs it as text.
    pub(super) async fn sql_prepare(
        &self,
        session: &mut Session,
        command: sql_prepare::Command<'_>,
    ) -> Result<Reply, Error> {
        let dialect = session.dialect;
        let unknown = |name: &str, verb: &str| sql_prepare::unknown(dialect, name, verb);
        match command {
            sql_prepare::Command::Prepare { name, text } => {
                let text = match text {
                    sql_prepare::Text::Sql(text) => text,
                    sql_prepare::Text::Variable(variable) => {
                        match session.mysql.variables.get(&variable.to_lowercase()) {
                            Some(Value::Text(text)) => text.clone(),
                            _ => {
                                return Err(Error::new(
                                    ErrorKind::Syntax,
                                    format!("PREPARE {name} FROM @{variable}: it holds no text"),
                                ));
                            }
                        }
                    }
                };
                match Intent::of(Sql::new(&text), dialect) {
                    // The load's data comes with the statement that names it, never later.
                    Intent::CopyIn(_) => return Err(load_prepared()),
                    // Both databases refuse it; `PREPARE s FROM 'EXECUTE s'` would otherwise
                    // run itself for ever.
                    Intent::SqlPrepare(_) => return Err(not_preparable(&text, dialect)),
                    // As a protocol-level prepare does: one that takes parameters cannot run
                    // as text without them, so a syntax error is the client's to hear now,
                    // not as a wrong argument count at EXECUTE.
                    Intent::Routed if super::prepared::takes_parameters(&text, dialect) => {
                        if let Err(e) = self.plan_with_tree(&text, dialect).await
                            && e.kind == ErrorKind::Syntax
                        {
                            return Err(e);
                        }
                    }
                    _ => {}
                }
                let statements = &mut session.sql_statements;
                if !statements.contains_key(&name)
                    && statements.len() >= sql_prepare::MAX_STATEMENTS
                {
                    return Err(Error::new(
                        ErrorKind::TooManyStatements,
                        format!(
                            "Can't create more than max_prepared_stmt_count statements (current \
                             value: {})",
                            sql_prepare::MAX_STATEMENTS
                        ),
                    ));
                }
                statements.insert(&session.memory, name, text, "PREPARE")?;
                Ok(Reply::done())
            }
            sql_prepare::Command::Execute { name, args } => {
                let Some(text) = session.sql_statements.get(&name).cloned() else {
                    return Err(unknown(&name, "EXECUTE"));
                };
                let values: Vec<String> = match dialect {
                    Dialect::MySql => args
                        .iter()
                        .map(|variable| {
                            let value = session.mysql.variables.get(&variable.to_lowercase());
                            value.unwrap_or(&Value::Null).to_literal(dialect)
                        })
                        .collect(),
                    Dialect::Postgres => args.iter().map(|arg| (*arg).to_owned()).collect(),
                };
                let Some(bound) = bind_placeholders(&text, dialect, &values) else {
                    return Err(match dialect {
                        Dialect::MySql => {
                            Error::new(ErrorKind::BadArguments, "Incorrect arguments to EXECUTE")
                        }
                        Dialect::Postgres => Error::new(
                            ErrorKind::Syntax,
                            format!("wrong number of parameters for prepared statement \"{name}\""),
                        ),
                    });
                };
                Box::pin(self.query_text(session, Sql::new(&bound), Reserved::Whole)).await
            }
            // PostgreSQL's DEALLOCATE reaches statements prepared with the protocol too.
            sql_prepare::Command::Deallocate { name: Some(name) } => {
                let sql_level = session.sql_statements.remove(&name).is_some();
                match dialect {
                    // Its frontend holds those prepared with the protocol, and answers.
                    Dialect::Postgres => {
                        let or_fail = !sql_level;
                        session.effects.push(Effect::Deallocate { name, or_fail });
                        Ok(Reply::done())
                    }
                    Dialect::MySql if sql_level => Ok(Reply::done()),
                    Dialect::MySql => Err(unknown(&name, "DEALLOCATE PREPARE")),
                }
            }
            sql_prepare::Command::Deallocate { name: None } => {
                session.sql_statements.clear();
                session.effects.push(Effect::DeallocateAll);
                Ok(Reply::done())
            }
        }
    }

    /// `SET @a = expr, …`: the expressions are evaluated together by `SELECT expr, …`
    /// through the proxy, so they may read sharded tables, other variables and
    /// `LAST_INSERT_ID()`; the values are kept in the session.
    pub(super) async fn set_user_variables(
        &self,
        session: &mut Session,
        assignments: &[(String, &str)],
    ) -> Result<Reply, Error> {
        let exprs: Vec<&str> = assignments.iter().map(|(_, expr)| *expr).collect();
        let select = format!("SELECT {}", exprs.join(", "));
        // The values are the session's to keep, not the client's to read.
        session.stream = None;
        let select = Sql {
            text: &select,
            leading: Leading::Select,
        };
        let values = match Box::pin(self.query_text(session, select, Reserved::Whole)).await? {
            Reply::Rows { mut rows, .. } if rows.len() == 1 => rows.swap_remove(0),
            _ => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    "SET @variable: its value is not one row",
                ));
            }
        };
        let names: Vec<String> = assignments.iter().map(|(name, _)| name.clone()).collect();
        store_variables(session, &names, values)?;
        Ok(Reply::done())
    }

    /// MySQL's `SELECT SQL_CALC_FOUND_ROWS …`: the statement without the modifier, then its
    /// rows counted without its LIMIT, which `FOUND_ROWS()` answers next (see
    /// `keyshard_router::calc_found_rows`).
    pub(super) async fn calc_found_rows(
        &self,
        session: &mut Session,
        calc: keyshard_router::CalcFoundRows,
    ) -> Result<Reply, Error> {
        let select = Sql::new(&calc.select);
        let reply = Box::pin(self.answer_text(session, select, Reserved::Whole)).await?;
        // The count is the proxy's own, not the client's to read.
        session.stream = None;
        let count = Sql::new(&calc.count);
        let counted = Box::pin(self.answer_text(session, count, Reserved::Whole)).await?;
        let count = match &counted {
            Reply::Rows { rows, .. } => rows.first().and_then(|r| r.first()),
            Reply::Ok { .. } | Reply::Streamed { .. } => None,
        };
        let count = match count {
            Some(Value::Int(n)) => u64::try_from(*n).ok(),
            Some(Value::UInt(n)) => Some(*n),
            Some(Value::Text(text)) => text.parse().ok(),
            Some(Value::Wire(wire)) => wire.text().and_then(|t| t.parse().ok()),
            _ => None,
        };
        session.mysql.calculated_found_rows =
            Some(count.ok_or_else(|| Error::unsupported("counting SQL_CALC_FOUND_ROWS' rows"))?);
        Ok(reply)
    }

    /// MySQL's `SELECT … INTO @a, @b`: the SELECT without its INTO, its one row stored in the
    /// session's variables (see `keyshard_router::select_into_variables`). No row changes
    /// nothing; more than one is refused, as MySQL refuses them.
    pub(super) async fn select_into(
        &self,
        session: &mut Session,
        into: keyshard_router::SelectInto,
    ) -> Result<Reply, Error> {
        let refused = |errno: u16, sqlstate: &str, message: &str| {
            let kind = ErrorKind::Shard {
                mysql_errno: Some(errno),
                sqlstate: Some(sqlstate.to_owned()),
            };
            Err(Error::new(kind, message))
        };
        // The rows are the session's to keep, not the client's to read.
        session.stream = None;
        let select = Sql::new(&into.select);
        let (columns, mut rows) =
            match Box::pin(self.answer_text(session, select, Reserved::Whole)).await? {
                Reply::Rows { columns, rows } => (columns, rows),
                Reply::Ok { .. } | Reply::Streamed { .. } => {
                    return refused(1172, "42000", "SELECT … INTO found no result");
                }
            };
        if columns.len() != into.variables.len() {
            return refused(
                1222,
                "21000",
                "The used SELECT statements have a different number of columns",
            );
        }
        match rows.len() {
            0 => Ok(Reply::Ok {
                affected_rows: 0,
                last_insert_id: 0,
            }),
            1 => {
                store_variables(session, &into.variables, rows.swap_remove(0))?;
                Ok(Reply::Ok {
                    affected_rows: 1,
                    last_insert_id: 0,
                })
            }
            _ => refused(1172, "42000", "Result consisted of more than one row"),
        }
    }
}

/// Stores `values` as the session's user variables `names`, within its bounds.
fn store_variables(
    session: &mut Session,
    names: &[String],
    values: Vec<Value>,
) -> Result<(), Error> {
    let new = names
        .iter()
        .filter(|name| !session.mysql.variables.contains_key(name.as_str()))
        .count();
    if session.mysql.variables.len() + new > user_variables::MAX_VARIABLES {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "a session keeps at most {} user variables",
                user_variables::MAX_VARIABLES
            ),
        ));
    }
    for (name, value) in names.iter().zip(values) {
        let what = format!("SET @{name}");
        session
            .mysql
            .variables
            .insert(&session.memory, name.clone(), value, &what)?;
    }
    Ok(())
}

/// The refusal of PREPARE, EXECUTE or DEALLOCATE as the text of a PREPARE.
fn not_preparable(text: &str, dialect: Dialect) -> Error {
    let message = match dialect {
        Dialect::MySql => {
            "This command is not supported in the prepared statement protocol yet".to_owned()
        }
        Dialect::Postgres => format!(
            "syntax error at or near \"{}\"",
            keyshard_router::leading::first_word(text)
        ),
    };
    Error::new(ErrorKind::NotPreparable, message)
}
