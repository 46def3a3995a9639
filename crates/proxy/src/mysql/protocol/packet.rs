//! Packet framing: the 4-byte header (3-byte length, sequence id) and the splitting of
//! payloads of 16 MiB − 1 bytes and more into continuation packets.

use std::pin::Pin;

use tokio::io::{AsyncBufRead, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::error::ProtocolError;
use crate::tls::{Tls, Upgrade};

/// The largest payload one physical packet carries; a packet this long is continued by the next.
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// The default limit on a reassembled payload (MySQL's own `max_allowed_packet` is 64 MiB).
pub const DEFAULT_MAX_PAYLOAD: usize = 64 * 1024 * 1024;

/// The most of a packet's announced length reserved before its bytes arrive: the whole of a
/// usual statement, and no more than the connection's read buffer already takes.
const ANNOUNCED_ROOM: usize = 4 * 1024;

/// A client connection seen as a sequence of logical packets.
///
/// Writes are buffered until [`PacketIo::flush`] so that a whole response (a result set is many
/// packets) goes out in as few syscalls as possible.
#[derive(Debug)]
pub struct PacketIo<S> {
    stream: BufReader<S>,
    sequence: u8,
    max_payload: usize,
    write_buf: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> PacketIo<S> {
    /// Wraps a connected stream; the first packet written (the server greeting) has sequence id 0.
    #[cfg(test)]
    pub fn new(stream: S) -> Self {
        Self::with_max_payload(stream, DEFAULT_MAX_PAYLOAD)
    }

    /// Changes the limit on a reassembled payload (low until the client has logged in).
    pub fn set_max_payload(&mut self, max_payload: usize) {
        self.max_payload = max_payload;
    }

    /// Like [`PacketIo::new`] with another limit on the size of a reassembled payload.
    pub fn with_max_payload(stream: S, max_payload: usize) -> Self {
        Self {
            stream: BufReader::new(stream),
            sequence: 0,
            max_payload,
            write_buf: Vec::new(),
        }
    }

    /// Reads one logical packet, reassembling continuation packets.
    ///
    /// Returns `Ok(None)` when the peer closed the connection cleanly before a header, and
    /// [`ProtocolError::TooLarge`] — before buffering the excess — when the payload would exceed
    /// the limit; the caller then closes the connection, as the rest of the packet is unread.
    /// The next packet written gets the received sequence id + 1.
    pub async fn read_packet(&mut self) -> Result<Option<Vec<u8>>, ProtocolError> {
        let mut payload = Vec::new();
        loop {
            let Some((len, sequence)) = self.read_header(payload.is_empty()).await? else {
                return Ok(None);
            };
            let size = payload.len() + len;
            if size > self.max_payload {
                return Err(ProtocolError::TooLarge { size });
            }
            // A payload of several chunks (allowed only after login) gets room for the largest
            // payload at once: grown by doubling, it would leave every smaller copy behind in
            // the allocator, twice its size in all. Untouched room takes no memory.
            if len == MAX_CHUNK && payload.is_empty() && self.max_payload > MAX_CHUNK {
                payload.reserve_exact(self.max_payload);
            }
            // Otherwise room for what the header claims up to a few KiB, one allocation for a
            // usual statement, and beyond that grown as the bytes arrive: a client that
            // announces 16 MiB and sends nothing must not cost 16 MiB.
            payload.reserve(len.min(ANNOUNCED_ROOM));
            let read = (&mut self.stream)
                .take(len as u64)
                .read_to_end(&mut payload)
                .await?;
            if read < len {
                return Err(ProtocolError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            self.sequence = sequence.wrapping_add(1);
            if len < MAX_CHUNK {
                return Ok(Some(payload));
            }
        }
    }

    /// Reads a header; `None` only for EOF before its first byte of the first chunk.
    async fn read_header(&mut self, first: bool) -> Result<Option<(usize, u8)>, ProtocolError> {
        let mut header = [0u8; 4];
        let mut filled = 0;
        while filled < header.len() {
            let n = self.stream.read(&mut header[filled..]).await?;
            if n == 0 {
                if filled == 0 && first {
                    return Ok(None);
                }
                return Err(ProtocolError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            filled += n;
        }
        let len =
            usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
        Ok(Some((len, header[3])))
    }

    /// Buffers one logical packet with the next sequence id.
    ///
    /// A payload of [`MAX_CHUNK`] bytes or more is split; when its length is an exact multiple
    /// of `MAX_CHUNK` an empty packet follows, because the reader stops only at a short chunk.
    pub fn write_packet(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let len = rest.len().min(MAX_CHUNK);
            let (chunk, tail) = rest.split_at(len);
            // `len` fits in 3 bytes: it is at most MAX_CHUNK.
            self.write_buf.extend_from_slice(&[
                len as u8,
                (len >> 8) as u8,
                (len >> 16) as u8,
                self.sequence,
            ]);
            self.write_buf.extend_from_slice(chunk);
            self.sequence = self.sequence.wrapping_add(1);
            rest = tail;
            if len < MAX_CHUNK {
                return;
            }
        }
    }

    /// Buffers one logical packet whose payload `body` appends to the buffer it is given:
    /// written in place, with no payload built apart and copied (what a result's every row
    /// and column definition did). A payload of [`MAX_CHUNK`] bytes or more is split as
    /// [`PacketIo::write_packet`] splits it.
    pub fn write_packet_with(&mut self, body: impl FnOnce(&mut Vec<u8>)) {
        let start = self.write_buf.len();
        // The header, filled in once the payload's length is known.
        self.write_buf.extend_from_slice(&[0; 4]);
        body(&mut self.write_buf);
        let len = self.write_buf.len() - start - 4;
        if len >= MAX_CHUNK {
            let payload = self.write_buf.split_off(start + 4);
            self.write_buf.truncate(start);
            self.write_packet(&payload);
            return;
        }
        // `len` fits in 3 bytes: it is below MAX_CHUNK.
        self.write_buf[start..start + 4].copy_from_slice(&[
            len as u8,
            (len >> 8) as u8,
            (len >> 16) as u8,
            self.sequence,
        ]);
        self.sequence = self.sequence.wrapping_add(1);
    }

    /// Sends everything buffered by [`PacketIo::write_packet`].
    pub async fn flush(&mut self) -> Result<(), ProtocolError> {
        if !self.write_buf.is_empty() {
            self.stream.write_all(&self.write_buf).await?;
            self.write_buf.clear();
        }
        self.stream.flush().await?;
        Ok(())
    }

    /// Starts a new command: the client numbers its command packet 0.
    pub fn reset_sequence(&mut self) {
        self.sequence = 0;
    }

    /// The sequence id the next packet written will carry.
    #[cfg(test)]
    pub fn sequence(&self) -> u8 {
        self.sequence
    }
}

impl<S: Upgrade> PacketIo<S> {
    /// Turns the connection to TLS after the client's SSLRequest; the packets that follow
    /// go on numbering from it.
    pub async fn start_tls(&mut self, tls: &Tls) -> Result<(), ProtocolError> {
        let buffered = self.stream.buffer().to_vec();
        Pin::new(&mut self.stream).consume(buffered.len());
        self.stream.get_mut().start_tls(tls, buffered).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::duplex;

    fn framed(seq: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut out = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
        out.extend_from_slice(payload);
        out
    }

    #[tokio::test]
    async fn reads_a_packet_and_follows_its_sequence() {
        let (mut client, server) = duplex(1024);
        client.write_all(&framed(7, b"\x03SELECT 1")).await.unwrap();
        let mut io = PacketIo::new(server);
        assert_eq!(io.read_packet().await.unwrap().unwrap(), b"\x03SELECT 1");
        assert_eq!(io.sequence(), 8);
        io.write_packet(b"ok");
        io.flush().await.unwrap();
        let mut got = [0u8; 6];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(got, *b"\x02\x00\x00\x08ok");
    }

    #[test]
    fn a_packet_written_in_place_is_framed_as_one_written_whole() {
        // Around the split at MAX_CHUNK, and with the sequence going on from packet to packet.
        for len in [
            0,
            1,
            250,
            251,
            70_000,
            MAX_CHUNK - 1,
            MAX_CHUNK,
            MAX_CHUNK + 5,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let (whole, _) = duplex(8);
            let mut whole = PacketIo::new(whole);
            let (in_place, _) = duplex(8);
            let mut in_place = PacketIo::new(in_place);
            for _ in 0..2 {
                whole.write_packet(&payload);
                in_place.write_packet_with(|buf| buf.extend_from_slice(&payload));
            }
            assert!(whole.write_buf == in_place.write_buf, "{len} bytes");
            assert_eq!(whole.sequence(), in_place.sequence(), "{len} bytes");
        }
    }

    #[tokio::test]
    async fn empty_payload_round_trips() {
        let (client, server) = duplex(64);
        let mut writer = PacketIo::new(client);
        writer.write_packet(b"");
        writer.flush().await.unwrap();
        let mut reader = PacketIo::new(server);
        assert_eq!(reader.read_packet().await.unwrap().unwrap(), b"");
    }

    #[tokio::test]
    async fn large_payloads_split_and_reassemble() {
        for len in [
            MAX_CHUNK - 1,
            MAX_CHUNK,
            MAX_CHUNK + 1,
            2 * MAX_CHUNK,
            2 * MAX_CHUNK + 5,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let (client, server) = duplex(1 << 20);
            let mut writer = PacketIo::new(client);
            writer.write_packet(&payload);
            let expected_packets = len / MAX_CHUNK + 1;
            assert_eq!(writer.sequence() as usize, expected_packets, "len {len}");
            let send = tokio::spawn(async move {
                writer.flush().await.unwrap();
                writer
            });
            let mut reader = PacketIo::new(server);
            let got = reader.read_packet().await.unwrap().unwrap();
            assert!(got == payload, "len {len}: payload differs");
            assert_eq!(reader.sequence() as usize, expected_packets);
            drop(send.await.unwrap());
        }
    }

    #[tokio::test]
    async fn oversized_payload_is_rejected_before_buffering() {
        let (mut client, server) = duplex(64);
        client.write_all(&[0xff, 0xff, 0xff, 0]).await.unwrap();
        let mut io = PacketIo::with_max_payload(server, 1024);
        match io.read_packet().await {
            Err(ProtocolError::TooLarge { size }) => assert_eq!(size, MAX_CHUNK),
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn oversized_after_continuation_is_rejected() {
        let payload = vec![1u8; MAX_CHUNK + 10];
        let (client, server) = duplex(1 << 20);
        let mut writer = PacketIo::new(client);
        writer.write_packet(&payload);
        let send = tokio::spawn(async move { writer.flush().await });
        let mut reader = PacketIo::with_max_payload(server, MAX_CHUNK + 5);
        assert!(matches!(
            reader.read_packet().await,
            Err(ProtocolError::TooLarge { size }) if size == MAX_CHUNK + 10
        ));
        drop(reader);
        let _ = send.await;
    }

    #[tokio::test]
    async fn eof_before_header_is_none() {
        let (client, server) = duplex(64);
        drop(client);
        let mut io = PacketIo::new(server);
        assert!(io.read_packet().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn truncated_header_and_payload_are_errors() {
        for bytes in [
            &b"\x05\x00"[..],
            b"\x05\x00\x00\x00abc",
            b"\xff\xff\xff\x00",
        ] {
            let (mut client, server) = duplex(64);
            client.write_all(bytes).await.unwrap();
            drop(client);
            let mut io = PacketIo::new(server);
            assert!(io.read_packet().await.is_err(), "{bytes:?}");
        }
    }
}
