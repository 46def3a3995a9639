//! The MySQL frontend.

mod connection;
pub mod protocol;

pub use connection::serve;
