//! Keyshard's proxy: the MySQL and PostgreSQL frontends, sessions, the statements the proxy
//! answers itself, and the server's lifecycle.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod admission;
mod calls;
mod control;
mod coordination;
mod copy;
mod dialect;
mod distsql;
mod engine;
mod error;
#[cfg(test)]
mod fuzzing;
mod identity;
mod instance;
mod intent;
mod kill;
mod listen_command;
mod load_data;
mod memory;
mod metrics;
mod mysql;
mod notify;
mod pinning;
mod postgres;
mod processlist;
mod reflection;
mod reply;
mod routines;
mod scrape;
mod server;
mod session;
mod settings;
mod shapes;
mod single_tables;
mod sql;
mod sql_prepare;
mod statements;
mod throttle;
mod tls;
mod user_variables;
mod words;
mod xa;

pub use coordination::{keyed_data_sources, start as start_coordination};
pub use server::{Server, ServerError};
