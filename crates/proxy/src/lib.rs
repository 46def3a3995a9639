//! Keyshard's proxy: the MySQL and PostgreSQL frontends, sessions, the statements the proxy
//! answers itself, and the server's lifecycle.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod admin;
mod catalog;
mod control;
mod coordination;
mod distsql;
mod engine;
mod error;
#[cfg(test)]
mod fuzzing;
mod memory;
mod metrics;
pub mod mysql;
pub mod postgres;
mod reply;
mod scrape;
mod server;
mod session;
mod shapes;
mod sql_prepare;
mod statements;
mod throttle;
pub mod tls;
mod user_variables;
mod words;
mod xa;

pub use coordination::start as start_coordination;
pub use engine::Engine;
pub use error::{Error, ErrorKind};
pub use reply::Reply;
pub use server::{Server, ServerError};
pub use session::{Session, Statement, StatementKind};
