//! The PostgreSQL frontend: the wire protocol (with `pgwire`'s message types and SCRAM) and
//! statement description.

mod auth;
mod command;
mod connection;
mod copy_binary;
mod describe;
mod formats;
mod operators;
mod pg_error;
mod types;
mod wire;
pub(crate) mod wire_text;

use std::sync::Arc;

use keyshard_router::Leading;

use crate::engine::Databases;
use crate::tls::Tls;

pub use connection::serve;

/// A statement prepared with the protocol (Parse), prepared once through the engine.
#[derive(Debug)]
pub(crate) struct Prepared {
    sql: String,
    /// `None` for an empty query string.
    statement: Option<crate::session::Statement>,
    description: describe::Description,
    /// What keeping it takes ([`crate::memory::kept_estimate`]).
    weight: usize,
}

impl Prepared {
    /// Its text, with the leading keyword read when it was prepared.
    fn text(&self) -> crate::sql::Sql<'_> {
        crate::sql::Sql {
            text: &self.sql,
            leading: self
                .statement
                .as_ref()
                .map_or(Leading::Other, |s| s.leading),
        }
    }
}

impl crate::memory::Weigh for Prepared {
    fn weight(&self) -> usize {
        self.weight
    }
}

/// What every PostgreSQL connection shares.
#[derive(Debug)]
pub struct Frontend {
    databases: Arc<Databases>,
    credentials: auth::Credentials,
    tls: Option<Arc<Tls>>,
}

impl Frontend {
    /// The frontend over `databases`, offering `tls` when set.
    pub(crate) fn new(databases: Arc<Databases>, tls: Option<Arc<Tls>>) -> Self {
        Self {
            tls,
            databases,
            credentials: auth::Credentials::default(),
        }
    }
}
