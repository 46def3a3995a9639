//! The MySQL frontend.

mod connection;
pub mod protocol;
pub(crate) mod versioned;

pub(crate) use connection::PreparedStatement;
pub use connection::serve;
