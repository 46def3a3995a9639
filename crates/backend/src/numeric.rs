//! PostgreSQL's binary NUMERIC: a header of digit count, weight (the power of 10000 of the
//! first digit), sign and display scale, then base-10000 digits. The proxy carries numerics as
//! their exact decimal text and converts at the edges.

/// Binary NUMERIC as decimal text; `None` when the bytes are not one.
pub fn binary_to_text(bytes: &[u8]) -> Option<String> {
    let word = |i: usize| -> Option<u16> {
        Some(u16::from_be_bytes([
            *bytes.get(i * 2)?,
            *bytes.get(i * 2 + 1)?,
        ]))
    };
    let count = usize::from(word(0)?);
    let weight = i64::from(word(1)? as i16);
    let sign = word(2)?;
    let scale = usize::from(word(3)?);
    if sign == 0xC000 {
        return Some("NaN".to_owned());
    }
    let digits: Vec<u16> = (0..count).map(|i| word(4 + i)).collect::<Option<_>>()?;
    let digit = |position: i64| -> u16 {
        usize::try_from(position)
            .ok()
            .and_then(|p| digits.get(p).copied())
            .unwrap_or(0)
    };
    let mut out = String::new();
    if sign == 0x4000 {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        out.push_str(&digit(0).to_string());
        for position in 1..=weight {
            out.push_str(&format!("{:04}", digit(position)));
        }
    }
    if scale > 0 {
        let mut fraction = String::new();
        let mut position = weight + 1;
        while fraction.len() < scale {
            fraction.push_str(&format!("{:04}", digit(position)));
            position += 1;
        }
        fraction.truncate(scale);
        out.push('.');
        out.push_str(&fraction);
    }
    Some(out)
}

/// Decimal text (`[-]digits[.digits]`, or `NaN`) as PostgreSQL's binary NUMERIC; `None` when
/// the text is not such a number.
pub fn text_to_binary(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    let header = |count: u16, weight: i16, sign: u16, scale: u16| {
        [count, weight as u16, sign, scale]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect::<Vec<u8>>()
    };
    if text.eq_ignore_ascii_case("nan") {
        return Some(header(0, 0, 0xC000, 0));
    }
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
        return None;
    }
    let scale = u16::try_from(frac.len()).ok()?;
    // Base-10000 digits: the integer part grouped from the point leftwards, the fraction
    // rightwards.
    let int_pad = (4 - int.len() % 4) % 4;
    let padded_int: String = "0".repeat(int_pad) + int;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let padded_frac: String = frac.to_owned() + &"0".repeat(frac_pad);
    let group = |s: &str| s.parse::<u16>().ok();
    let int_groups: Vec<u16> = padded_int
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).ok().and_then(group))
        .collect::<Option<_>>()?;
    let frac_groups: Vec<u16> = padded_frac
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).ok().and_then(group))
        .collect::<Option<_>>()?;
    let mut weight = int_groups.len() as i64 - 1;
    let mut groups: Vec<u16> = int_groups.into_iter().chain(frac_groups).collect();
    let leading = groups.iter().take_while(|g| **g == 0).count();
    groups.drain(..leading);
    weight -= leading as i64;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        return Some(header(0, 0, 0, scale));
    }
    let sign = if negative { 0x4000 } else { 0 };
    let mut out = header(
        u16::try_from(groups.len()).ok()?,
        i16::try_from(weight).ok()?,
        sign,
        scale,
    );
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        for word in [digits.len() as u16, weight as u16, sign, scale]
            .into_iter()
            .chain(digits.iter().copied())
        {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out
    }

    #[test]
    fn binary_numerics_read_as_text() {
        assert_eq!(binary_to_text(&numeric(0, 0, 0, &[])).unwrap(), "0");
        assert_eq!(
            binary_to_text(&numeric(1, 0, 0, &[1, 2345])).unwrap(),
            "12345"
        );
        assert_eq!(
            binary_to_text(&numeric(0, 0x4000, 4, &[15, 5000])).unwrap(),
            "-15.5000"
        );
        assert_eq!(
            binary_to_text(&numeric(-1, 0, 5, &[12])).unwrap(),
            "0.00120"
        );
        assert_eq!(
            binary_to_text(&numeric(-2, 0, 8, &[7])).unwrap(),
            "0.00000007"
        );
        assert_eq!(binary_to_text(&numeric(1, 0, 0, &[2])).unwrap(), "20000");
        assert!(binary_to_text(&[0, 1]).is_none());
    }

    #[test]
    fn text_round_trips_through_binary() {
        for text in [
            "0",
            "12345",
            "-15.5000",
            "0.00120",
            "0.00000007",
            "20000",
            "17636.571428571429",
            "-0.66666666666666666667",
            "1.0",
            "NaN",
            "0.000",
        ] {
            let binary = text_to_binary(text).unwrap();
            assert_eq!(binary_to_text(&binary).unwrap(), text, "{text}");
        }
        assert_eq!(text_to_binary("12345"), Some(numeric(1, 0, 0, &[1, 2345])));
        assert!(text_to_binary("1e5").is_none());
        assert!(text_to_binary("").is_none());
    }
}
