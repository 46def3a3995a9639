//! The MySQL frontend.

mod connection;
pub mod protocol;
pub(crate) mod versioned;

pub use connection::serve;
