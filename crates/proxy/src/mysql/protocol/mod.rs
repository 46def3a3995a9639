//! The MySQL client/server wire protocol, server side: packet framing, the connection phase,
//! command decoding and response encoding. No session state lives here: the frontend keeps
//! prepared statements, parameter types and long data, and passes them in.
//!
//! Decoders never panic on client bytes: everything a client sends goes through checked
//! readers and ends in [`error::ProtocolError`] at worst.

pub(crate) mod command;
pub(crate) mod error;
pub(crate) mod handshake;
pub(crate) mod packet;
pub(crate) mod response;
mod temporal;
mod wire;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
