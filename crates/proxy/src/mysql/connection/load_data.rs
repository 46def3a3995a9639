//! `LOAD DATA LOCAL INFILE`: the server asks for the file (0xFB and its name) and the client
//! sends it in packets, an empty one last.

use mysql_common::constants::CapabilityFlags;

use super::Connection;
use crate::copy::CopyIn;
use crate::error::{Error, ErrorKind};
use crate::mysql::protocol::packet::PacketIo;
use crate::reply::Reply;
use crate::tls::Stream;

impl Connection {
    /// Takes the file for `copy` and loads it: all its rows or none. `None` when the connection
    /// broke.
    pub(super) async fn load_local_file(
        &mut self,
        io: &mut PacketIo<Stream>,
        copy: &CopyIn,
    ) -> Option<Result<Reply, Error>> {
        if !self.caps.contains(CapabilityFlags::CLIENT_LOCAL_FILES) {
            return Some(Err(Error::new(
                ErrorKind::LocalFilesDisabled,
                "Loading local data is disabled; this must be enabled on both the client and \
                 server sides",
            )));
        }
        let mut request = vec![0xFB];
        request.extend_from_slice(copy.file.as_bytes());
        io.write_packet(&request);
        io.flush().await.ok()?;
        let limit = self.engine.copy_limit();
        let mut data = Vec::new();
        let mut refused = None;
        loop {
            let packet = io.read_packet().await.ok()??;
            if packet.is_empty() {
                break;
            }
            if refused.is_some() {
                continue;
            }
            if data.len() + packet.len() > limit {
                data = Vec::new();
                refused = Some(Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "LOAD DATA of more than {limit} bytes: a load is inserted as one \
                         statement (raise props.statement-memory-bytes, or split the file)"
                    ),
                ));
            } else {
                data.extend_from_slice(&packet);
            }
        }
        if let Some(error) = refused {
            return Some(Err(error));
        }
        Some(self.engine.copy_in(&mut self.session, copy, data).await)
    }
}
