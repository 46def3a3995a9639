//! Words in statement text, read without parsing: searching, splitting lists, LIKE. What a
//! statement's first word decides is `keyshard_router::Leading`'s, read once (see
//! `intent::Sql`).

/// Where `needle` (lower-case ASCII) occurs in `haystack`, case-insensitively: each start.
/// A vectorised search for its first letter in either case, then a compare, so that a long
/// statement that holds none costs a pass of `memchr`, not a compare per byte.
pub(crate) fn find_ignore_ascii_case<'a>(
    haystack: &'a [u8],
    needle: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    let first = needle.first().copied().unwrap_or(0);
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), haystack).filter(move |&at| {
        haystack
            .get(at..at + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

/// Splits a list (a projection, `SET` assignments, arguments) at the commas outside
/// parentheses and quotes.
pub(crate) fn split_top_level(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('\'' | '"' | '`', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('(', None) => depth += 1,
            (')', None) => depth -= 1,
            (',', None) if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

/// SQL LIKE with `%`, `_` and `\` escapes, case-insensitive, in O(text × pattern): on a mismatch only the
/// latest `%` is retried, one byte further, since an earlier `%` could not match more than it.
/// (Retrying every `%` is exponential: `'%%%%%%%%%%%%%%%%%%%%z'` tied up a runtime thread.)
pub(crate) fn like(text: &str, pattern: &str) -> bool {
    let (t, p) = (text.as_bytes(), pattern.as_bytes());
    let (mut ti, mut pi) = (0, 0);
    // After the latest `%`: where the pattern resumes, and the text position it took up to.
    let mut retry: Option<(usize, usize)> = None;
    while ti < t.len() {
        // How much of the pattern matches this text byte: `\x` is x itself.
        let step = match p.get(pi) {
            Some(b'%') => {
                pi += 1;
                retry = Some((pi, ti));
                continue;
            }
            Some(b'\\') if pi + 1 < p.len() => p[pi + 1].eq_ignore_ascii_case(&t[ti]).then_some(2),
            Some(&c) if c == b'_' || c.eq_ignore_ascii_case(&t[ti]) => Some(1),
            _ => None,
        };
        match step {
            Some(n) => {
                pi += n;
                ti += 1;
            }
            None => match retry {
                Some((resume, taken)) => {
                    pi = resume;
                    ti = taken + 1;
                    retry = Some((resume, taken + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'%')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_found_in_either_case() {
        let found = |h: &str, n: &str| {
            find_ignore_ascii_case(h.as_bytes(), n.as_bytes()).collect::<Vec<_>>()
        };
        assert_eq!(found("SELECT nextVal('s'), Val", "val"), [11, 21]);
        assert_eq!(found("lock", "lock"), [0]);
        assert_eq!(found("loc", "lock"), Vec::<usize>::new());
        assert_eq!(found("", "x"), Vec::<usize>::new());
    }

    #[test]
    fn lists_split_at_top_level_commas() {
        assert_eq!(
            split_top_level("a, f(b, c), 'd,e'"),
            ["a", " f(b, c)", " 'd,e'"]
        );
    }
}
