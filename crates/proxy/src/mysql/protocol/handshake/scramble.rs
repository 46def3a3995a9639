//! The authentication challenge and the check of a `mysql_native_password` answer.

use mysql_common::auth::plugins::mysql_native_password::scramble_native;

use crate::mysql::protocol::error::ProtocolError;

/// Length of the challenge (the "scramble" or "nonce") of `mysql_native_password`.
pub(crate) const SCRAMBLE_LEN: usize = 20;

/// A fresh challenge from the OS RNG.
///
/// Bytes are kept in 1..=127 and away from `$`, as MySQL's own `generate_user_salt` does:
/// clients treat the scramble as a C string, and some as 7-bit text.
pub(crate) fn new_scramble() -> Result<[u8; SCRAMBLE_LEN], ProtocolError> {
    let mut bytes = [0u8; SCRAMBLE_LEN];
    getrandom::fill(&mut bytes).map_err(|e| ProtocolError::Io(std::io::Error::other(e)))?;
    for b in &mut bytes {
        *b &= 0x7f;
        if *b == 0 || *b == b'$' {
            *b += 1;
        }
    }
    Ok(bytes)
}

/// Whether `response` proves knowledge of `password` for this `scramble`.
///
/// An empty configured password matches only an empty response, which is what clients send
/// when they have no password.
pub(crate) fn verify_native(scramble: &[u8], password: &str, response: &[u8]) -> bool {
    match scramble_native(scramble, password.as_bytes()) {
        None => response.is_empty(),
        Some(expected) => constant_time_eq(&expected, response),
    }
}

/// Checks a password sent in the clear, NUL-terminated (caching_sha2_password's full
/// authentication, only ever asked for over TLS).
pub(crate) fn verify_clear(password: &str, response: &[u8]) -> bool {
    let sent = response.strip_suffix(&[0]).unwrap_or(response);
    constant_time_eq(password.as_bytes(), sent)
}

/// Compares without an early exit, so timing does not reveal how many leading bytes matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrambles_are_fresh_and_c_string_safe() {
        let a = new_scramble().unwrap();
        let b = new_scramble().unwrap();
        assert_ne!(a, b);
        assert!(
            a.iter()
                .chain(&b)
                .all(|&x| (1..=127).contains(&x) && x != b'$')
        );
    }

    #[test]
    fn native_password_verifies_both_ways() {
        let scramble = new_scramble().unwrap();
        let answer = scramble_native(&scramble, b"secret").unwrap();
        assert!(verify_native(&scramble, "secret", &answer));
        assert!(!verify_native(&scramble, "Secret", &answer));
        assert!(!verify_native(&scramble, "secret", &answer[..19]));
        assert!(!verify_native(&scramble, "secret", b""));
        let other = new_scramble().unwrap();
        assert!(!verify_native(&other, "secret", &answer));
    }

    #[test]
    fn clear_password_is_compared_without_its_nul() {
        assert!(verify_clear("secret", b"secret\0"));
        assert!(verify_clear("", b"\0"));
        assert!(!verify_clear("secret", b"secre\0"));
        assert!(!verify_clear("secret", b"secret\0\0"));
    }

    #[test]
    fn empty_password_accepts_only_an_empty_answer() {
        let scramble = new_scramble().unwrap();
        assert!(verify_native(&scramble, "", b""));
        let answer = scramble_native(&scramble, b"x").unwrap();
        assert!(!verify_native(&scramble, "", &answer));
    }
}
