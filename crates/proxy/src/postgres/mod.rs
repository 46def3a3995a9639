//! The PostgreSQL frontend: the wire protocol (with `pgwire`'s message types and SCRAM), the
//! session statements PostgreSQL clients send, and statement description.

mod admin;
mod auth;
mod command;
mod connection;
mod describe;
mod formats;
mod pg_error;
mod types;
mod wire;

use std::sync::Arc;

use crate::engine::Engine;
use crate::tls::Tls;

pub use connection::serve;

/// What every PostgreSQL connection shares.
#[derive(Debug)]
pub struct Frontend {
    engine: Arc<Engine>,
    catalog: describe::Catalog,
    credentials: auth::Credentials,
    tls: Option<Arc<Tls>>,
}

impl Frontend {
    /// The frontend over `engine`, offering `tls` when set.
    pub fn new(engine: Arc<Engine>, tls: Option<Arc<Tls>>) -> Self {
        Self {
            tls,
            catalog: describe::Catalog::new(Arc::clone(&engine)),
            engine,
            credentials: auth::Credentials::default(),
        }
    }
}
