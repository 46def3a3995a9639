//! MySQL's `SHOW [GLOBAL | SESSION] STATUS`, answered from what the proxy counts.

use keyshard_backend::Column;
use keyshard_types::SqlType;
use keyshard_types::Value;

use super::Engine;
use crate::metrics::CountedAs;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// MySQL's `SHOW GLOBAL STATUS`, or with `session` its `SHOW [SESSION] STATUS`, from what
    /// the proxy counts (the shards' would count the pooled connections every client shares):
    /// uptime and sessions, and statements by kind of the proxy or of the session.
    pub(super) fn status(&self, like: Option<&str>, session: Option<&Session>) -> Reply {
        let uptime = self.started.elapsed().as_secs();
        let of = |kind: CountedAs| match session {
            Some(session) => session.mysql.statements.of(kind),
            None => self.metrics().statements_of(kind),
        };
        let questions = match session {
            Some(session) => session.mysql.statements.total(),
            None => self.metrics().statements_answered(),
        };
        let statuses = [
            ("Com_delete", of(CountedAs::Delete)),
            ("Com_insert", of(CountedAs::Insert)),
            ("Com_select", of(CountedAs::Select)),
            ("Com_update", of(CountedAs::Update)),
            ("Queries", questions),
            ("Questions", questions),
            ("Threads_connected", self.instance.sessions.count() as u64),
            ("Uptime", uptime),
            ("Uptime_since_flush_status", uptime),
        ];
        Reply::Rows {
            columns: vec![
                Column::new("Variable_name", SqlType::VarChar),
                Column::new("Value", SqlType::VarChar),
            ],
            rows: statuses
                .iter()
                .filter(|(name, _)| like.is_none_or(|p| crate::words::like(name, p)))
                .map(|(name, value)| {
                    vec![
                        Value::Text((*name).to_owned()),
                        Value::Text(value.to_string()),
                    ]
                })
                .collect(),
        }
    }
}
