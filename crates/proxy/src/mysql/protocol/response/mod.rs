//! Encoders for the server's answers. Each returns or writes packet payloads; the caller
//! flushes the [`PacketIo`](super::packet::PacketIo).

mod binary_row;
mod column;
mod result_set;
mod text_row;

pub use column::{Naming, ResultColumn};
pub use result_set::{write_prepare_ok, write_result_head, write_result_set, write_rows};

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::packets::{ErrPacket, ServerError, SqlState};
use mysql_common::proto::MySerialize;

use super::wire::{put_lenenc_bytes, put_lenenc_int};

/// Room for an OK packet besides its info: a header, two length-encoded integers of at most
/// nine bytes, the status and warnings, and the info's length.
const OK_ROOM: usize = 1 + 9 + 9 + 4 + 9;

/// Appends an OK packet to `buf`.
///
/// `info` (e.g. "Rows matched: 1  Changed: 1  Warnings: 0") is omitted when empty.
pub fn put_ok(
    buf: &mut Vec<u8>,
    capabilities: CapabilityFlags,
    affected_rows: u64,
    last_insert_id: u64,
    status: StatusFlags,
    warnings: u16,
    info: &str,
) {
    buf.reserve(OK_ROOM + info.len());
    buf.push(0x00);
    put_lenenc_int(buf, affected_rows);
    put_lenenc_int(buf, last_insert_id);
    if capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        buf.extend_from_slice(&status.bits().to_le_bytes());
        buf.extend_from_slice(&warnings.to_le_bytes());
    } else if capabilities.contains(CapabilityFlags::CLIENT_TRANSACTIONS) {
        buf.extend_from_slice(&status.bits().to_le_bytes());
    }
    // MySQL's net_send_ok writes the info length-encoded, whatever the manual says.
    if !info.is_empty() {
        put_lenenc_bytes(buf, info.as_bytes());
    }
}

/// An ERR packet. `sqlstate` should be five characters; anything else becomes `HY000`.
pub fn err(code: u16, sqlstate: &str, message: &str) -> Vec<u8> {
    let state = <[u8; 5]>::try_from(sqlstate.as_bytes()).unwrap_or(*b"HY000");
    let mut buf = Vec::new();
    let error = ServerError::new(code, Some(SqlState::new(state)), message.as_bytes());
    ErrPacket::Error(error).serialize(&mut buf);
    buf
}

/// Appends the packet that ends column definitions or rows to `buf`: with
/// CLIENT_DEPRECATE_EOF an OK packet with the 0xFE header, otherwise a classic EOF packet.
pub fn put_eof(buf: &mut Vec<u8>, capabilities: CapabilityFlags, status: StatusFlags) {
    if capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
        // The OK packet's body under EOF's header.
        let start = buf.len();
        put_ok(buf, capabilities, 0, 0, status, 0, "");
        buf[start] = 0xFE;
    } else {
        buf.extend_from_slice(&[0xFE, 0, 0]);
        buf.extend_from_slice(&status.bits().to_le_bytes());
    }
}

#[cfg(test)]
mod tests;
