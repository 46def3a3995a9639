//! Several statements in one message: PostgreSQL's simple Query, and a MySQL COM_QUERY from a
//! client with CLIENT_MULTI_STATEMENTS (`INSERT …; SELECT LAST_INSERT_ID()`). The text is cut
//! at the semicolons that end statements, as each database reads it.

use keyshard_types::Dialect;

use keyshard_router::Leading;

/// The statements of `sql`: cut at semicolons outside strings, quoted identifiers, comments
/// and (PostgreSQL) dollar quotes; blank ones dropped. A MySQL stored program's body has
/// semicolons of its own, so `CREATE PROCEDURE/FUNCTION/TRIGGER/EVENT` stays whole.
pub(crate) fn split(sql: &str, dialect: Dialect) -> Vec<&str> {
    let mysql = dialect == Dialect::MySql;
    // Almost every message is one statement, at most with a `;` at its end.
    let single = !sql.trim_end().trim_end_matches(';').contains(';')
        || mysql && Leading::of(sql) == Leading::Create && defines_a_program(sql);
    if single {
        return if is_blank(sql) { Vec::new() } else { vec![sql] };
    }
    let bytes = sql.as_bytes();
    let mut statements = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') if quote != b'`' || mysql => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    // MySQL's strings take backslash escapes; PostgreSQL's standard ones do not.
                    if mysql && quote != b'`' && bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'#' if mysql => i = line_end(bytes, i),
            // MySQL's `--` comment needs a space after it (`1--2` is arithmetic).
            b'-' if bytes.get(i + 1) == Some(&b'-')
                && (!mysql || bytes.get(i + 2).is_none_or(u8::is_ascii_whitespace)) =>
            {
                i = line_end(bytes, i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' if !mysql => i = dollar_quote_end(sql, i),
            b';' => {
                statements.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    statements.push(&sql[start.min(sql.len())..]);
    statements.retain(|s| !is_blank(s));
    statements
}

/// Whether `sql` holds nothing but white space and comments.
pub(crate) fn is_blank(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    loop {
        if let Some(comment) = rest.strip_prefix("--") {
            rest = comment
                .find('\n')
                .map_or("", |n| &comment[n + 1..])
                .trim_start();
        } else if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment
                .find("*/")
                .map_or("", |n| &comment[n + 2..])
                .trim_start();
        } else {
            return rest.is_empty();
        }
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

/// Where a `$tag$ … $tag$` opening at `at` closes (its last `$`); `at` itself when no dollar
/// quote opens there (a `$1` placeholder).
fn dollar_quote_end(sql: &str, at: usize) -> usize {
    let bytes = sql.as_bytes();
    let tag_end = bytes[at + 1..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map(|p| at + 1 + p);
    match tag_end {
        Some(end)
            if bytes[end] == b'$'
                && !bytes[at + 1..end].first().is_some_and(u8::is_ascii_digit) =>
        {
            let tag = &sql[at..=end];
            match sql[end + 1..].find(tag) {
                Some(close) => end + close + tag.len(),
                None => bytes.len(),
            }
        }
        _ => at,
    }
}

fn defines_a_program(sql: &str) -> bool {
    sql.split_whitespace().take(4).any(|w| {
        ["procedure", "function", "trigger", "event"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgresql_statement_ends() {
        let split = |sql| split(sql, Dialect::Postgres);
        assert_eq!(
            split("SELECT 1; INSERT INTO t VALUES ('a;b', \"c;\") ; -- x;\n"),
            ["SELECT 1", " INSERT INTO t VALUES ('a;b', \"c;\") "]
        );
        assert_eq!(
            split("SELECT $$a;b$$; SELECT $1"),
            ["SELECT $$a;b$$", " SELECT $1"]
        );
        assert_eq!(
            split("SELECT $x$a;$$;b$x$; SELECT 'a\\'; SELECT 2"),
            ["SELECT $x$a;$$;b$x$", " SELECT 'a\\'", " SELECT 2"]
        );
        assert_eq!(split("/* ; */ SELECT 1"), ["/* ; */ SELECT 1"]);
        assert!(split(" ; ;").is_empty());
        assert!(split(" -- only a comment").is_empty());
        assert_eq!(split("SELECT 'unterminated"), ["SELECT 'unterminated"]);
    }

    #[test]
    fn mysql_statement_ends() {
        let split = |sql| split(sql, Dialect::MySql);
        assert_eq!(
            split(
                "INSERT INTO t VALUES ('a;b', \"c;\\\"d\"); SELECT `x;y` FROM t -- ;\n; ;SELECT 1 # ;\n"
            ),
            [
                "INSERT INTO t VALUES ('a;b', \"c;\\\"d\")",
                " SELECT `x;y` FROM t -- ;\n",
                "SELECT 1 # ;\n"
            ]
        );
        assert_eq!(
            split("SELECT 1 /* ; */; SELECT 2;"),
            ["SELECT 1 /* ; */", " SELECT 2"]
        );
        assert_eq!(split("SELECT 1--2; SELECT 3"), ["SELECT 1--2", " SELECT 3"]);
        let program = "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END";
        assert_eq!(split(program), [program]);
        assert_eq!(split("SELECT 1;"), ["SELECT 1;"]);
    }
}
