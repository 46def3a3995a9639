//! `LOAD DATA LOCAL INFILE`: the server asks for the file (0xFB and its name) and the client
//! sends it in packets, an empty one last; its rows are inserted as they arrive (see
//! `engine::copy_in`).

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
        let mut load = match self.engine.load_start(&mut self.session, copy).await {
            Ok(load) => load,
            Err(e) => return Some(Err(e)),
        };
        let mut request = vec![0xFB];
        request.extend_from_slice(copy.file.as_bytes());
        io.write_packet(&request);
        io.flush().await.ok()?;
        // Rows are inserted as they arrive; after an error the rest of the file is read and
        // dropped.
        let mut failed = None;
        loop {
            let packet = io.read_packet().await.ok()??;
            if packet.is_empty() {
                break;
            }
            if failed.is_none() {
                failed = self
                    .engine
                    .load_feed(&mut self.session, &mut load, &packet)
                    .await
                    .err();
            }
        }
        Some(
            self.engine
                .load_finish(&mut self.session, load, failed)
                .await,
        )
    }
}
