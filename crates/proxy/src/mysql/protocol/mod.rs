//! The MySQL client/server wire protocol, server side: packet framing, the connection phase,
//! command decoding and response encoding. No session state lives here: the frontend keeps
//! prepared statements, parameter types and long data, and passes them in.
//!
//! Decoders never panic on client bytes: everything a client sends goes through checked
//! readers and ends in [`ProtocolError`] at worst.

pub mod command;
pub mod error;
pub mod handshake;
pub mod packet;
pub mod response;
mod temporal;
mod wire;

pub use command::{Command, ExecuteRequest, decode_command, decode_params};
pub use error::ProtocolError;
pub use handshake::{Client, Greeting, accept, server_capabilities};
pub use packet::PacketIo;
pub use response::{ResultColumn, eof, err, ok, write_prepare_ok, write_result_set};

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
