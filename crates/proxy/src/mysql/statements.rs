//! Several statements in one COM_QUERY, as a client with CLIENT_MULTI_STATEMENTS sends them
//! (`INSERT …; SELECT LAST_INSERT_ID()`): the text is cut at the semicolons that end
//! statements, and each statement answers in turn.

use crate::words::starts_with_any;

/// The statements of `sql`: cut at semicolons outside strings, quoted identifiers and
/// comments; blank ones dropped. A stored program's body has semicolons of its own, so
/// `CREATE PROCEDURE/FUNCTION/TRIGGER/EVENT` stays whole.
pub(crate) fn split(sql: &str) -> Vec<&str> {
    // Almost every query is one statement, at most with a `;` at its end.
    if !sql.trim_end().trim_end_matches(';').contains(';') {
        return vec![sql];
    }
    if starts_with_any(sql, &["create"]) && defines_a_program(sql) {
        return vec![sql];
    }
    let bytes = sql.as_bytes();
    let mut statements = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    // A backslash escapes the next character in strings, not in identifiers.
                    if bytes[i] == b'\\' && quote != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'#' => i = line_end(bytes, i),
            b'-' if bytes.get(i + 1) == Some(&b'-')
                && bytes.get(i + 2).is_none_or(u8::is_ascii_whitespace) =>
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
            b';' => {
                statements.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    statements.push(&sql[start.min(sql.len())..]);
    statements.retain(|s| !s.trim().is_empty());
    statements
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
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
    fn semicolons_that_end_statements_only() {
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
        assert!(split(" ; ;").is_empty());
        assert_eq!(split("SELECT 'unclosed;"), ["SELECT 'unclosed;"]);
    }
}
