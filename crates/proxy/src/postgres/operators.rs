//! `OPERATOR(pg_catalog.=)`: the operator syntax pg_dump and psql write so that a user's
//! operators cannot shadow the catalog's. sqlparser does not read it, so the proxy writes the
//! operator itself in its place before it reads the statement: the same operator, since
//! `pg_catalog` is searched first whenever a search path does not place it later (and pg_dump
//! and psql run with an empty one or the default).

use std::borrow::Cow;

/// `sql` with each `OPERATOR(pg_catalog.op)` outside strings, quoted names and comments written
/// as `op`; unchanged (borrowed) when it has none.
pub(crate) fn plain(sql: &str) -> Cow<'_, str> {
    // Looked for with memchr: every PostgreSQL statement passes here, and a compare at each
    // byte cost a point SELECT 2 % of its instructions.
    if crate::words::find_ignore_ascii_case(sql.as_bytes(), b"operator(")
        .next()
        .is_none()
    {
        return Cow::Borrowed(sql);
    }
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let (mut copied, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(bytes.len(), |n| i + 3 + n);
            }
            b'o' | b'O' if starts_word(bytes, i) => {
                if let Some((op, end)) = catalog_operator(sql, i) {
                    out.push_str(&sql[copied..i]);
                    out.push(' ');
                    out.push_str(op);
                    out.push(' ');
                    copied = end;
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(sql);
    }
    out.push_str(&sql[copied..]);
    Cow::Owned(out)
}

/// Whether a word may begin at `i` (not inside another word or a `$n`).
fn starts_word(bytes: &[u8], i: usize) -> bool {
    i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'$'))
}

/// `OPERATOR ( pg_catalog . op )` at `at`: the operator, and where the text after it begins.
fn catalog_operator(sql: &str, at: usize) -> Option<(&str, usize)> {
    let rest = &sql[at..];
    let head = rest.get(..8)?;
    if !head.eq_ignore_ascii_case("operator") {
        return None;
    }
    let inner = rest[8..].trim_start().strip_prefix('(')?.trim_start();
    let schema = inner.get(..10)?;
    if !schema.eq_ignore_ascii_case("pg_catalog") {
        return None;
    }
    let inner = inner[10..].trim_start().strip_prefix('.')?.trim_start();
    let close = inner.find(')')?;
    let op = inner[..close].trim_end();
    let is_operator = !op.is_empty() && op.bytes().all(|b| b"+-*/<>=~!@#%^&|`?".contains(&b));
    is_operator.then(|| (op, sql.len() - inner.len() + close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_operators_are_written_plainly() {
        let sql = "SELECT c.oid FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n \
                   ON n.oid OPERATOR(pg_catalog.=) c.relnamespace WHERE c.relkind \
                   operator( pg_catalog . = ) ANY (array['r']) AND c.relname \
                   OPERATOR(pg_catalog.~) '^(t_order)$'";
        assert_eq!(
            plain(sql),
            "SELECT c.oid FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n \
             ON n.oid  =  c.relnamespace WHERE c.relkind  =  ANY (array['r']) AND c.relname  ~  \
             '^(t_order)$'"
        );
    }

    #[test]
    fn other_text_is_left_alone() {
        for sql in [
            "SELECT 'OPERATOR(pg_catalog.=)'",
            "SELECT \"OPERATOR(pg_catalog.=)\"",
            "SELECT 1 -- OPERATOR(pg_catalog.=)",
            "SELECT 1 /* OPERATOR(pg_catalog.=) */",
            "SELECT a OPERATOR(myschema.===) b",
            "SELECT my_operator(pg_catalog.x)",
            "SELECT 1 OPERATOR(pg_catalog.",
        ] {
            assert_eq!(plain(sql), sql);
        }
    }
}
