//! The data of a `COPY … TO STDOUT`, one data node after the other, in the session's
//! transaction when it has one.

use bytes::Bytes;
use keyshard_router::ExecutionUnit;
use tokio::sync::mpsc::Sender;

use super::Engine;
use crate::error::Error;
use crate::session::Session;

impl Engine {
    /// Runs `unit` of a planned `COPY … TO STDOUT`, sending its data to `sink` chunk by chunk.
    pub(crate) async fn copy_out(
        &self,
        session: &mut Session,
        unit: &ExecutionUnit,
        sink: Sender<Bytes>,
    ) -> Result<(), Error> {
        Ok(self
            .backend
            .copy_out(session.transaction.as_mut(), unit, sink)
            .await?)
    }
}
