//! The proxy end to end, one test binary (linking sqlx, tokio and pgwire once): a module per
//! subject, the helpers in `common`.

mod batching;
mod clients;
mod common;
mod compat;
mod copy;
mod distsql;
mod fleet;
mod identity;
mod isolation;
mod metrics;
mod moves;
mod multi_statements;
mod mysql_frontend;
mod pg_arrays;
mod pg_frontend;
mod pg_queries;
mod queries;
mod reflection;
mod replicas;
mod robustness;
mod savepoints;
mod session_state;
mod sql_prepare;
mod tls;
mod types;
mod user_variables;
