//! The MySQL frontend.

mod connection;
pub mod protocol;
mod statements;

pub use connection::serve;
