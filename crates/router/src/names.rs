//! Identifiers as the statement writes them and as the router writes them back. Public so that
//! the frontends read names exactly as the router does.

use sqlparser::ast::{ObjectName, ObjectNamePart};

use keyshard_types::Dialect;

/// The last part of a possibly qualified name (`t_order` of `db.t_order`), unquoted; empty
/// when that part is not a plain identifier (a function call in a name, say).
pub fn last_ident(name: &ObjectName) -> &str {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => &ident.value,
        _ => "",
    }
}

/// The quote of the last part of a name (`` ` `` of `` `t_order` ``), `None` when unquoted, so
/// that a name the router writes in its place is quoted alike.
pub fn quote_of(name: &ObjectName) -> Option<char> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => ident.quote_style,
        _ => None,
    }
}

/// Column names from metadata are quoted only when they need it.
pub(crate) fn quote_for(name: &str, dialect: Dialect) -> Option<char> {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    (!plain).then(|| identifier_quote(dialect))
}

/// The quote of `dialect`'s quoted identifiers.
pub(crate) fn identifier_quote(dialect: Dialect) -> char {
    match dialect {
        Dialect::MySql => '`',
        Dialect::Postgres => '"',
    }
}

/// Writes `name` quoted with `quote` (`[` closes with `]`), doubling the closing quote inside.
pub fn push_identifier(out: &mut String, name: &str, quote: Option<char>) {
    match quote {
        None => out.push_str(name),
        Some(open) => {
            let close = if open == '[' { ']' } else { open };
            out.push(open);
            for c in name.chars() {
                if c == close {
                    out.push(c);
                }
                out.push(c);
            }
            out.push(close);
        }
    }
}
