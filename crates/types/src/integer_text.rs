//! Integers read from their decimal text: the shards' text-format results, clients' text
//! parameters and literals, each read on every row or statement that carries one.

/// A decimal integer's ASCII digits, with an optional `-`, as `i64`; `None` for anything else
/// or a value out of range.
pub fn ascii_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() {
        return None;
    }
    // Eighteen digits cannot overflow, so only a nineteenth (snowflake keys have nineteen) is
    // added with checks: a checked step per digit cost as much again as the whole parse. Eight
    // digits at a time cost about what two do one by one.
    let (head, last) = digits.split_at(digits.len().min(18));
    let mut eights = head.chunks_exact(8);
    let mut value: u64 = 0;
    for eight in &mut eights {
        value = value * 100_000_000 + eight_digits(eight)?;
    }
    for &b in eights.remainder() {
        value = value * 10 + digit(b)?;
    }
    for &b in last {
        value = value.checked_mul(10)?.checked_add(digit(b)?)?;
    }
    if negative {
        0i64.checked_sub_unsigned(value)
    } else {
        i64::try_from(value).ok()
    }
}

fn digit(b: u8) -> Option<u64> {
    let digit = b.wrapping_sub(b'0');
    (digit <= 9).then_some(u64::from(digit))
}

/// Eight ASCII digits (the first the most significant) as their value, in a few steps over one
/// word: each step joins neighbouring groups, digits into pairs, pairs into fours, fours into
/// the eight. `None` when a byte is not a digit.
fn eight_digits(eight: &[u8]) -> Option<u64> {
    const NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let word = u64::from_le_bytes(eight.try_into().ok()?);
    // Every byte 0x30..=0x39: its high nibble 3, and still 3 with 6 added.
    if word & NIBBLES != ZEROS || word.wrapping_add(0x0606_0606_0606_0606) & NIBBLES != ZEROS {
        return None;
    }
    let word = word & 0x0F0F_0F0F_0F0F_0F0F;
    let word = (word * 10 + (word >> 8)) & 0x00FF_00FF_00FF_00FF;
    let word = (word * 100 + (word >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((word * 10_000 + (word >> 32)) & 0xFFFF_FFFF)
}

#[cfg(test)]
mod tests {
    use super::ascii_i64;

    #[test]
    fn integer_text_is_read_as_the_standard_parse_reads_it() {
        // Every length up to 21 and every kind of byte at every place, from a fixed seed.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let bytes = b"0123456789-+ .x/:\x00\xff";
        for _ in 0..200_000 {
            let len = (next() % 22) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 10 {
                    0 => bytes[(next() % bytes.len() as u64) as usize],
                    _ => b'0' + (next() % 10) as u8,
                })
                .collect();
            let standard = std::str::from_utf8(&text)
                .ok()
                .filter(|t| !t.starts_with('+'))
                .and_then(|t| t.parse::<i64>().ok());
            assert_eq!(
                ascii_i64(&text),
                standard,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn integer_text_is_read_without_a_utf8_check_and_strictly() {
        for v in [
            0,
            7,
            -7,
            i64::MAX,
            i64::MIN,
            1_234_567_890,
            999_999_999_999_999_999,
            -999_999_999_999_999_999,
            1_000_000_000_000_000_000,
        ] {
            assert_eq!(ascii_i64(v.to_string().as_bytes()), Some(v), "{v}");
        }
        for text in [
            "",
            "-",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "18446744073709551616",
            "-18446744073709551615",
            "00000000000000000001x",
            "x",
        ] {
            assert_eq!(ascii_i64(text.as_bytes()), None, "{text}");
        }
    }
}
