//! Whole multi-packet responses: a result set, and COM_STMT_PREPARE's answer.

use keyshard_types::Value;
use mysql_common::constants::{CapabilityFlags, ColumnType, StatusFlags};
use tokio::io::{AsyncRead, AsyncWrite};

use super::column::ResultColumn;
use super::{binary_row, put_eof, put_ok, text_row};
use crate::mysql::protocol::packet::PacketIo;
use crate::mysql::protocol::wire::put_lenenc_int;

/// Writes a result set to `io` without flushing: column count, column definitions, an EOF
/// (unless CLIENT_DEPRECATE_EOF), rows, and the terminating EOF or OK. Rows are in the text
/// protocol (COM_QUERY) or, when `binary`, the binary protocol (COM_STMT_EXECUTE), where each
/// value is converted to its column's declared type.
///
/// `status` goes into the terminating packet (add SERVER_MORE_RESULTS_EXISTS there when another
/// result follows). A result set needs at least one column: with none an OK packet is written.
/// With `extended_metadata` (MariaDB's, negotiated) each column definition carries it.
pub fn write_result_set<S>(
    io: &mut PacketIo<S>,
    capabilities: CapabilityFlags,
    extended_metadata: bool,
    columns: &[ResultColumn],
    rows: &[Vec<Value>],
    binary: bool,
    status: StatusFlags,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if columns.is_empty() {
        io.write_packet_with(|buf| put_ok(buf, capabilities, 0, 0, status, 0, ""));
        return;
    }
    write_result_head(io, capabilities, extended_metadata, columns, status);
    write_rows(io, columns, rows, binary);
    io.write_packet_with(|buf| put_eof(buf, capabilities, status));
}

/// Writes what comes before a result set's rows: the column count and definitions, and an EOF
/// unless CLIENT_DEPRECATE_EOF. `columns` must not be empty.
pub fn write_result_head<S>(
    io: &mut PacketIo<S>,
    capabilities: CapabilityFlags,
    extended_metadata: bool,
    columns: &[ResultColumn],
    status: StatusFlags,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    io.write_packet_with(|buf| put_lenenc_int(buf, columns.len() as u64));
    write_definitions(io, capabilities, extended_metadata, columns, status);
}

/// Writes result rows of `columns`, in the text protocol or, when `binary`, the binary one.
pub fn write_rows<S>(
    io: &mut PacketIo<S>,
    columns: &[ResultColumn],
    rows: &[Vec<Value>],
    binary: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    for row in rows {
        io.write_packet_with(|buf| match binary {
            true => binary_row::encode_row(buf, columns, row),
            false => text_row::encode_row(buf, columns.len(), row),
        });
    }
}

/// Writes COM_STMT_PREPARE_OK for a statement with `params` placeholders and result columns
/// `columns` (empty for statements without a result set), without flushing. Each list of
/// definitions is followed by an EOF packet unless CLIENT_DEPRECATE_EOF was negotiated.
pub fn write_prepare_ok<S>(
    io: &mut PacketIo<S>,
    capabilities: CapabilityFlags,
    extended_metadata: bool,
    stmt_id: u32,
    params: usize,
    columns: &[ResultColumn],
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // The protocol counts both in 16 bits; MySQL itself refuses more than 65,535 placeholders.
    let params = u16::try_from(params).unwrap_or(u16::MAX);
    let columns = &columns[..columns.len().min(usize::from(u16::MAX))];
    let mut buf = vec![0x00];
    buf.extend_from_slice(&stmt_id.to_le_bytes());
    buf.extend_from_slice(&(columns.len() as u16).to_le_bytes());
    buf.extend_from_slice(&params.to_le_bytes());
    buf.push(0x00);
    buf.extend_from_slice(&0u16.to_le_bytes());
    io.write_packet(&buf);

    let status = StatusFlags::SERVER_STATUS_AUTOCOMMIT;
    if params > 0 {
        // MySQL describes every placeholder the same way: a binary VAR_STRING named "?".
        let mut param = ResultColumn::text("?");
        param.column_type = ColumnType::MYSQL_TYPE_VAR_STRING;
        param.charset = 63;
        param.length = 0;
        let definition = param.definition(extended_metadata);
        for _ in 0..params {
            io.write_packet(&definition);
        }
        if !capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            io.write_packet_with(|buf| put_eof(buf, capabilities, status));
        }
    }
    if !columns.is_empty() {
        write_definitions(io, capabilities, extended_metadata, columns, status);
    }
}

fn write_definitions<S>(
    io: &mut PacketIo<S>,
    capabilities: CapabilityFlags,
    extended_metadata: bool,
    columns: &[ResultColumn],
    status: StatusFlags,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    for column in columns {
        io.write_packet_with(|buf| column.put_definition(buf, extended_metadata));
    }
    if !capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
        io.write_packet_with(|buf| put_eof(buf, capabilities, status));
    }
}
