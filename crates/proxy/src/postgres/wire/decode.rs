//! One whole frontend message, once framed, checked and decoded: every count and length in
//! its body is checked against the body before pgwire reads it, the frequent messages
//! (Query, Parse, Describe, Execute, Sync) are decoded here, and a decoder panic on a
//! malformed body is caught.

use std::panic::AssertUnwindSafe;

use bytes::BytesMut;
use pgwire::messages::extendedquery::{Describe, Execute, Parse, Sync};
use pgwire::messages::simplequery::Query;
use pgwire::messages::{DecodeContext, PgWireFrontendMessage};

use super::{WireError, be_u32};

/// A cursor over a message body that fails instead of reading past the end.
struct Body<'a>(&'a [u8]);

impl<'a> Body<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("body ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u16(&mut self) -> Result<usize, &'static str> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_be_bytes([b[0], b[1]])))
    }

    fn i32(&mut self) -> Result<i32, &'static str> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string's bytes, without the NUL.
    fn cstring(&mut self) -> Result<&'a [u8], &'static str> {
        // A Query's and a Parse's SQL: searched a word at a time, not byte by byte.
        let end = memchr::memchr(0, self.0).ok_or("string without its terminator")?;
        self.take(end + 1).map(|s| &s[..end])
    }
}

/// Parse, Describe, Execute and Sync, which come with every statement of the extended
/// protocol, decoded here with every count and length checked as [`check_body`] does: pgwire
/// would scan each string twice more (a NUL search, then a lossy UTF-8 conversion). `None`:
/// the message is checked, then decoded by pgwire.
fn decode_extended(kind: u8, body: &[u8]) -> Option<PgWireFrontendMessage> {
    // pgwire's reading: an empty name is the unnamed statement or portal.
    fn name(bytes: &[u8]) -> Option<Option<String>> {
        if bytes.is_empty() {
            return Some(None);
        }
        std::str::from_utf8(bytes).ok().map(|s| Some(s.to_owned()))
    }
    let mut body = Body(body);
    Some(match kind {
        b'P' => {
            let statement = name(body.cstring().ok()?)?;
            let query = std::str::from_utf8(body.cstring().ok()?).ok()?.to_owned();
            let count = body.u16().ok()?;
            let types = body.take(count * 4).ok()?;
            let types = types.chunks_exact(4).map(be_u32).collect();
            PgWireFrontendMessage::Parse(Parse::new(statement, query, types))
        }
        b'D' => {
            let target = *body.take(1).ok()?.first()?;
            let portal = name(body.cstring().ok()?)?;
            PgWireFrontendMessage::Describe(Describe::new(target, portal))
        }
        b'E' => {
            let portal = name(body.cstring().ok()?)?;
            let max_rows = body.i32().ok()?;
            PgWireFrontendMessage::Execute(Execute::new(portal, max_rows))
        }
        b'S' => PgWireFrontendMessage::Sync(Sync::new()),
        _ => return None,
    })
}

/// A Query read by [`Wire::read_large`] (type byte, length, text, NUL), its text taken
/// without a copy.
pub(super) fn large_query(mut message: Vec<u8>) -> Result<PgWireFrontendMessage, WireError> {
    // Past the type byte and length, whose bytes may be zero.
    if memchr::memchr(0, &message[5..]) != Some(message.len() - 6) {
        return Err(WireError::Malformed(
            "message 'Q': the query is not one NUL-terminated string".into(),
        ));
    }
    message.pop();
    message.drain(..5);
    match String::from_utf8(message) {
        Ok(query) => Ok(PgWireFrontendMessage::Query(Query::new(query))),
        Err(e) => {
            let byte = e.as_bytes().get(e.utf8_error().valid_up_to());
            Err(WireError::NotUtf8 {
                byte: byte.copied().unwrap_or_default(),
                extended: false,
            })
        }
    }
}

/// Checks and decodes one whole message: type byte, length, body.
pub(super) fn decode_message(
    mut message: BytesMut,
    context: &DecodeContext,
) -> Result<PgWireFrontendMessage, WireError> {
    let kind = message[0];
    // Checked while decoded; one that does not decode is checked below, for its error.
    if let Some(decoded) = decode_extended(kind, &message[5..]) {
        return Ok(decoded);
    }
    // pgwire's decoders trust the counts inside a body; check them first, so that a lying
    // message is refused rather than read past its end.
    check_body(kind, &message[5..]).map_err(|e| {
        WireError::Malformed(format!(
            "message '{}': {e}",
            char::from(kind).escape_default()
        ))
    })?;
    // A Query, the most frequent message, is decoded here: pgwire would scan its text twice
    // more (a NUL search, then a lossy UTF-8 conversion) after the check below.
    if kind == b'Q' {
        let body = &message[5..];
        let text = memchr::memchr(0, body).map_or(body, |end| &body[..end]);
        return match std::str::from_utf8(text) {
            Ok(query) => Ok(PgWireFrontendMessage::Query(Query::new(query.to_owned()))),
            Err(e) => Err(WireError::NotUtf8 {
                byte: text.get(e.valid_up_to()).copied().unwrap_or_default(),
                extended: false,
            }),
        };
    }
    // pgwire would replace invalid UTF-8 with U+FFFD, and the shards would store that.
    if let Some(byte) = invalid_text(kind, &message[5..]) {
        return Err(WireError::NotUtf8 {
            byte,
            extended: kind != b'Q',
        });
    }
    let decoded = std::panic::catch_unwind(AssertUnwindSafe(|| {
        PgWireFrontendMessage::decode(&mut message, context)
    }));
    match decoded {
        Ok(Ok(Some(message))) => Ok(message),
        Ok(Ok(None)) => Err(WireError::Malformed(format!(
            "message '{}' is incomplete",
            char::from(kind).escape_default()
        ))),
        Ok(Err(e)) => Err(WireError::Malformed(e.to_string())),
        Err(_) => Err(WireError::Malformed(format!(
            "message '{}' has an invalid body",
            char::from(kind).escape_default()
        ))),
    }
}

/// The first byte that is not UTF-8 in the statement names and SQL of a Query or Parse body
/// (already checked by [`check_body`]).
fn invalid_text(kind: u8, body: &[u8]) -> Option<u8> {
    let strings = match kind {
        b'Q' => 1,
        b'P' => 2,
        _ => return None,
    };
    body.split(|b| *b == 0).take(strings).find_map(|text| {
        std::str::from_utf8(text)
            .err()
            .map(|e| text[e.valid_up_to()])
    })
}

/// Checks that the counts and lengths in the body of a message of type `kind` stay within it.
fn check_body(kind: u8, body: &[u8]) -> Result<(), &'static str> {
    let mut body = Body(body);
    match kind {
        b'Q' => body.cstring().map(|_| ()),
        b'P' => {
            body.cstring()?;
            body.cstring()?;
            let types = body.u16()?;
            body.take(types * 4).map(|_| ())
        }
        b'B' => {
            body.cstring()?;
            body.cstring()?;
            let formats = body.u16()?;
            body.take(formats * 2)?;
            for _ in 0..body.u16()? {
                let len = body.i32()?;
                if len >= 0 {
                    body.take(len as usize)?;
                } else if len != -1 {
                    return Err("negative parameter length");
                }
            }
            let formats = body.u16()?;
            body.take(formats * 2).map(|_| ())
        }
        b'D' | b'C' => {
            body.take(1)?;
            body.cstring().map(|_| ())
        }
        b'E' => {
            body.cstring()?;
            body.i32().map(|_| ())
        }
        _ => Ok(()),
    }
}

/// Checks a SASLInitialResponse body (mechanism, then a length-prefixed response) before
/// pgwire reads it.
pub fn check_sasl_initial(body: &[u8]) -> Result<(), &'static str> {
    let mut body = Body(body);
    body.cstring()?;
    let len = body.i32()?;
    if len >= 0 {
        body.take(len as usize)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::LARGE_MESSAGE;
    use super::*;

    #[test]
    fn lying_bodies_are_refused() {
        assert!(check_body(b'B', &[0, 0, 0xff, 0xff, 0, 1]).is_err());
        assert!(check_body(b'B', &[0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 1]).is_err());
        assert!(check_body(b'B', &[0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0]).is_ok());
        assert!(check_body(b'P', &[0, b'x', 0, 0xff, 0xff]).is_err());
        assert!(check_body(b'P', &[0, b'x', 0, 0, 1, 0, 0, 0, 23]).is_ok());
        assert!(check_body(b'D', &[]).is_err());
        assert!(check_body(b'E', &[0, 0, 0]).is_err());
        assert!(check_body(b'Q', b"SELECT 1").is_err());
        assert!(check_sasl_initial(b"SCRAM-SHA-256\0\0\0\0\x05abc").is_err());
    }

    /// Random, truncated and lying bodies of every frontend message type: each is refused or
    /// decoded, and none gets as far as making pgwire's decoder panic (which `check_body` is
    /// there to prevent; the panic would be caught, but it means a check is missing).
    #[test]
    fn random_messages_never_reach_a_decoder_panic() {
        for seed in crate::fuzzing::seeds(0x9E37_79B9_7F4A_7C15) {
            let mut rng = crate::fuzzing::Rng::new(seed);
            let mut next = move || rng.next();
            let kinds = b"QPBEDCSHXpdcf!";
            let mut context = DecodeContext::default();
            context.awaiting_frontend_ssl = false;
            context.awaiting_frontend_startup = false;
            for _ in 0..20_000 {
                let kind = kinds[(next() % kinds.len() as u64) as usize];
                let len = (next() % 48) as usize;
                let body: Vec<u8> = (0..len)
                    .map(|_| match next() % 6 {
                        0 => 0,
                        1 => 0xff,
                        2 => (next() % 4) as u8,
                        3 => b'a',
                        _ => next() as u8,
                    })
                    .collect();
                let mut message = BytesMut::with_capacity(5 + len);
                message.extend_from_slice(&[kind]);
                message.extend_from_slice(&((len + 4) as u32).to_be_bytes());
                message.extend_from_slice(&body);
                let decoded = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    decode_message(message, &context)
                }));
                match decoded {
                    Ok(Err(WireError::Malformed(m))) if m.contains("invalid body") => {
                        panic!("pgwire panicked on '{}' {body:?}", char::from(kind))
                    }
                    Ok(_) => {}
                    Err(_) => panic!("a check panicked on '{}' {body:?}", char::from(kind)),
                }
            }
        }
    }

    /// What is decoded here is what pgwire decodes from the same bytes.
    #[test]
    fn extended_messages_decode_as_pgwire_decodes_them() {
        let mut context = DecodeContext::default();
        context.awaiting_frontend_ssl = false;
        context.awaiting_frontend_startup = false;
        let bodies: [(u8, &[u8]); 8] = [
            (b'P', b"\0INSERT INTO t VALUES ($1)\0\0\0"),
            (b'P', b"s1\0SELECT $1, $2\0\0\x02\0\0\0\x17\0\0\0\x19"),
            (b'P', b"\0\0\0\0"),
            (b'D', b"P\0"),
            (b'D', b"Sstatement\0"),
            (b'E', b"\0\0\0\0\0"),
            (b'E', b"portal\0\0\0\0\x05"),
            (b'S', b""),
        ];
        for (kind, body) in bodies {
            let mut message = BytesMut::new();
            message.extend_from_slice(&[kind]);
            message.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
            message.extend_from_slice(body);
            let ours = decode_extended(kind, body).unwrap();
            let theirs = PgWireFrontendMessage::decode(&mut message, &context)
                .unwrap()
                .unwrap();
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        }
        // Not UTF-8: left to pgwire's path, which refuses it.
        assert!(decode_extended(b'P', b"\0SELECT '\xff'\0\0\0").is_none());
    }

    #[test]
    fn sql_that_is_not_utf8_is_found() {
        assert_eq!(invalid_text(b'Q', b"SELECT 'caf\xc3\xa9'\0"), None);
        assert_eq!(invalid_text(b'Q', b"SELECT '\xff'\0"), Some(0xff));
        assert_eq!(invalid_text(b'P', b"s\0SELECT '\xc3('\0\0\0"), Some(0xc3));
        assert_eq!(invalid_text(b'P', b"\xfe\0SELECT 1\0\0\0"), Some(0xfe));
        assert_eq!(invalid_text(b'B', b"\xff\0\0"), None);
    }

    /// A large Query is one NUL-terminated string after its type byte and length, whose bytes
    /// may be zero themselves.
    #[test]
    fn large_queries_are_checked_after_their_length() {
        let query = |text: &[u8]| {
            let mut message = vec![b'Q'];
            message.extend_from_slice(&((text.len() + 4) as u32).to_be_bytes());
            message.extend_from_slice(text);
            large_query(message)
        };
        let long = format!("SELECT '{}'\0", "x".repeat(LARGE_MESSAGE));
        match query(long.as_bytes()) {
            Ok(PgWireFrontendMessage::Query(q)) => assert_eq!(q.query.len(), long.len() - 1),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            query(b"SELECT 1\0; SELECT 2\0"),
            Err(WireError::Malformed(_))
        ));
        assert!(matches!(query(b"SELECT 1"), Err(WireError::Malformed(_))));
        assert!(matches!(
            query(b"SELECT '\xff'\0"),
            Err(WireError::NotUtf8 { byte: 0xff, .. })
        ));
    }
}
