//! The names a statement's function calls may have, read from its text: pinning looks them up
//! among the shards' routines, and routines learns the ones it has not met.

use keyshard_router::Leading;

/// Whether a statement led by `leading` says its effect by its words; any other holds or
/// releases state only by the functions it calls.
pub(crate) fn says_its_effect(leading: Leading) -> bool {
    matches!(
        leading,
        Leading::Create
            | Leading::Drop
            | Leading::Discard
            | Leading::Lock
            | Leading::Unlock
            | Leading::Listen
            | Leading::Unlisten
            | Leading::Declare
            | Leading::Close
    )
}

/// The names the functions `sql` calls may have, as written: each word right before a `(`
/// (quotes and schema aside), outside the statements whose words say what they do (and
/// `CALL` and `DO`, which pin whatever they call).
/// `leading`: the statement's leading keyword.
pub(crate) fn called_names(sql: &str, leading: Leading) -> impl Iterator<Item = &str> {
    let calls = !(says_its_effect(leading) || matches!(leading, Leading::Call | Leading::Do));
    let bytes = sql.as_bytes();
    let searched = if calls { bytes } else { &[] };
    // A name's bytes: ASCII letters, digits, `_`, its quotes, and any byte of a non-ASCII
    // character (so that the name starts and ends on a character boundary).
    let in_name = |b: u8| b.is_ascii_alphanumeric() || b >= 0x80 || matches!(b, b'_' | b'"' | b'`');
    memchr::memchr_iter(b'(', searched).filter_map(move |at| {
        let mut end = at;
        while end > 0 && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let start = bytes[..end]
            .iter()
            .rposition(|&b| !in_name(b))
            .map_or(0, |i| i + 1);
        let name = sql.get(start..end)?.trim_matches(['"', '`']);
        (!name.is_empty()).then_some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_a_statement_may_call_are_found() {
        let names = |sql| called_names(sql, Leading::of(sql)).collect::<Vec<_>>();
        assert_eq!(
            names("SELECT public.\"Audit\" (1), COUNT(*) FROM t WHERE x IN(1)"),
            ["Audit", "COUNT", "IN"]
        );
        assert_eq!(
            names("INSERT INTO t_order (a) VALUES (`f`(1))"),
            ["t_order", "VALUES", "f"]
        );
        assert!(names("CREATE TABLE t (id int)").is_empty());
        assert!(names("CALL p(1)").is_empty());
        assert!(names("SELECT 1").is_empty());
    }
}
