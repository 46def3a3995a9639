//! The PostgreSQL frontend: the wire protocol (with `pgwire`'s message types and SCRAM), the
//! session statements PostgreSQL clients send, and statement description.

mod admin;
mod auth;
mod command;
mod connection;
mod describe;
mod types;
mod wire;

use std::sync::Arc;

use keyshard_config::Config;

use crate::engine::Engine;

pub use connection::serve;

/// What every PostgreSQL connection shares.
#[derive(Debug)]
pub struct Frontend {
    engine: Arc<Engine>,
    catalog: describe::Catalog,
    credentials: auth::Credentials,
}

impl Frontend {
    /// The frontend over `engine`; `config` gives the data sources it reads column types from.
    pub fn new(
        engine: Arc<Engine>,
        config: &Config,
    ) -> Result<Self, keyshard_backend::BackendError> {
        Ok(Self {
            engine,
            catalog: describe::Catalog::new(config)?,
            credentials: auth::Credentials::default(),
        })
    }

    /// Closes the pools used to describe statements.
    pub async fn close(&self) {
        self.catalog.close().await;
    }
}
