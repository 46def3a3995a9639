//! MySQL's session values (user variables, `LAST_INSERT_ID()`, `ROW_COUNT()`, `FOUND_ROWS()`)
//! written into a statement's text as literals, since the shards do not share the session's.

use keyshard_router::{SessionValues, substitute_session_values};
use keyshard_types::{Dialect, Value};

use super::Engine;
use crate::error::Error;
use crate::session::Session;

impl Engine {
    /// MySQL: `sql` with the session's user variables, `LAST_INSERT_ID()` and `ROW_COUNT()`
    /// written in as literals, when it names any.
    pub(super) fn with_user_variables(
        &self,
        session: &Session,
        sql: &str,
    ) -> Result<Option<String>, Error> {
        let variables = &session.mysql.variables;
        let values = SessionValues {
            last_insert_id: session.last_insert_id,
            row_count: session.mysql.row_count,
            found_rows: session.mysql.found_rows,
            variable: &|name| {
                variables
                    .get(name)
                    .unwrap_or(&Value::Null)
                    .to_literal(Dialect::MySql)
            },
        };
        Ok(substitute_session_values(sql, &values)?)
    }
}

/// Session values for finding whether a statement names any.
pub(super) const NO_VALUES: SessionValues<'static> = SessionValues {
    last_insert_id: 0,
    row_count: 0,
    found_rows: 0,
    variable: &|_| String::new(),
};
