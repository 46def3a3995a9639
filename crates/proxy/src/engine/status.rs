//! MySQL's `SHOW GLOBAL STATUS`, answered from what the proxy counts.

use keyshard_backend::{Column, SqlType};
use keyshard_router::Value;

use super::Engine;
use crate::reply::Reply;

impl Engine {
    /// MySQL's `SHOW GLOBAL STATUS`, from what the proxy counts (the shards' would count the
    /// pooled connections every client shares): uptime, sessions, statements by kind.
    pub(super) fn global_status(&self, like: Option<&str>) -> Reply {
        let uptime = self.started.elapsed().as_secs();
        let questions = self.metrics.statements_answered();
        let statuses = [
            ("Com_delete", self.metrics.statements_of("delete")),
            ("Com_insert", self.metrics.statements_of("insert")),
            ("Com_select", self.metrics.statements_of("select")),
            ("Com_update", self.metrics.statements_of("update")),
            ("Queries", questions),
            ("Questions", questions),
            ("Threads_connected", self.sessions.count() as u64),
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
