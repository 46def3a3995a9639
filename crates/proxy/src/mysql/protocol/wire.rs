//! Checked reading of protocol fields: every decoder goes through [`Reader`], so a short or
//! lying packet becomes [`ProtocolError::Malformed`] instead of a panic.

use mysql_common::io::ParseBuf;

use super::error::ProtocolError;

/// One checked little-endian read per fixed-width type.
macro_rules! reads {
    ($($ty:ident => $eat:ident),+ $(,)?) => {
        $(
            pub(crate) fn $ty(&mut self) -> Result<$ty, ProtocolError> {
                self.buf.$eat().ok_or_else(|| self.truncated())
            }
        )+
    };
}

/// A cursor over a payload whose every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: ParseBuf<'a>,
    /// What is being decoded, for the error message.
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Self {
            buf: ParseBuf(bytes),
            what,
        }
    }

    fn truncated(&self) -> ProtocolError {
        ProtocolError::malformed(format!("truncated {}", self.what))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ProtocolError> {
        self.buf.checked_eat_u8().ok_or_else(|| self.truncated())
    }

    reads! {
        u16 => checked_eat_u16_le,
        u32 => checked_eat_u32_le,
        u64 => checked_eat_u64_le,
        f32 => checked_eat_f32_le,
        f64 => checked_eat_f64_le,
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        self.buf.checked_eat(n).ok_or_else(|| self.truncated())
    }

    pub(crate) fn lenenc_bytes(&mut self) -> Result<&'a [u8], ProtocolError> {
        self.buf
            .checked_eat_lenenc_str()
            .ok_or_else(|| self.truncated())
    }

    /// Everything left, e.g. a `string<EOF>` field.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        self.buf.eat_all()
    }
}

/// Text from the client, which must be UTF-8: every session runs in utf8mb4.
pub(crate) fn utf8(bytes: &[u8], what: &str) -> Result<String, ProtocolError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ProtocolError::malformed(format!("{what} is not valid UTF-8")))
}

/// Appends a length-encoded integer.
pub(crate) fn put_lenenc_int(buf: &mut Vec<u8>, n: u64) {
    mysql_common::io::BufMutExt::put_lenenc_int(buf, n);
}

/// Appends a length-encoded string.
pub(crate) fn put_lenenc_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    mysql_common::io::BufMutExt::put_lenenc_str(buf, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let mut r = Reader::new(&[1, 2, 3], "test");
        assert_eq!(r.u16().unwrap(), 0x0201);
        assert!(r.u16().is_err());
        assert_eq!(r.u8().unwrap(), 3);
        assert!(r.u8().is_err());
    }

    #[test]
    fn lenenc_round_trips_and_rejects_lies() {
        for len in [0usize, 250, 251, 65_535, 65_536, 16_777_216] {
            let data = vec![7u8; len];
            let mut buf = Vec::new();
            put_lenenc_bytes(&mut buf, &data);
            assert_eq!(Reader::new(&buf, "t").lenenc_bytes().unwrap(), &data[..]);
            assert!(
                Reader::new(&buf[..buf.len() - 1], "t")
                    .lenenc_bytes()
                    .is_err()
                    || len == 0
            );
        }
        let lying = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1];
        assert!(Reader::new(&lying, "t").lenenc_bytes().is_err());
    }
}
