//! MySQL's executable comments: `/*! … */` runs its text, `/*!40101 … */` only on servers of
//! that version or later, and MariaDB's `/*M!100100 … */` only on MariaDB. mysqldump and
//! mariadb-dump write their session settings this way. The proxy answers as the server it
//! names itself (the identity module's `Identity::mysql_server` makes the [`Server`] here), so
//! the comments run as they would there: their text takes the comment's place, and a comment
//! for another server stays a comment.

use std::borrow::Cow;

/// The server whose comments run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Server {
    /// `10.11.19` is 101119, `8.0.36` 80036.
    pub(crate) version: u32,
    pub(crate) mariadb: bool,
}

impl Server {
    /// Whether a comment for `version` (none: every version) runs here. MariaDB skips the
    /// versions of MySQL 5.7 and 8 (50700 to 99999), which it never was.
    fn runs(&self, version: Option<u32>, mariadb_only: bool) -> bool {
        if mariadb_only && !self.mariadb {
            return false;
        }
        match version {
            None => true,
            Some(v) if self.mariadb && (50700..100_000).contains(&v) => false,
            Some(v) => v <= self.version,
        }
    }
}

/// `sql` with the executable comments that run on `server` opened; unchanged (borrowed) when
/// it has none.
pub(crate) fn opened(sql: &str, server: Server) -> Cow<'_, str> {
    let bytes = sql.as_bytes();
    let executable = memchr::memchr_iter(b'/', bytes).any(|at| {
        let rest = &bytes[at + 1..];
        rest.starts_with(b"*!") || rest.starts_with(b"*M!")
    });
    if !executable {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let (mut copied, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    if quote != b'`' && bytes[i] == b'\\' {
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
                let end = sql[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n);
                let body = &sql[i + 2..end];
                let (mariadb_only, body) = match body.strip_prefix("M!") {
                    Some(rest) => (true, Some(rest)),
                    None => (false, body.strip_prefix('!')),
                };
                if let Some(body) = body {
                    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                    let (version, text) = match digits {
                        5 | 6 => (body[..digits].parse().ok(), &body[digits..]),
                        _ => (None, body),
                    };
                    if server.runs(version, mariadb_only) {
                        out.push_str(&sql[copied..i]);
                        // A space each side, as the server reads it: `1/*!+1*/` is `1 +1 `.
                        out.push(' ');
                        out.push_str(text);
                        out.push(' ');
                        copied = (end + 2).min(sql.len());
                    }
                }
                i = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(sql);
    }
    out.push_str(sql.get(copied..).unwrap_or_default());
    // A comment that stays before the opened text (mariadb-dump's sandbox line) would hide
    // the statement's first word from the proxy, which reads it to know the statement.
    let start = out.len() - leading_comments(&out).len();
    out.drain(..start);
    Cow::Owned(out)
}

/// `sql` after the white space and comments it starts with.
fn leading_comments(sql: &str) -> &str {
    let mut rest = sql.trim_start();
    loop {
        if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment.find("*/").map_or("", |n| &comment[n + 2..]);
        } else if rest.starts_with('#') || rest.starts_with("-- ") {
            rest = rest.find('\n').map_or("", |n| &rest[n + 1..]);
        } else {
            return rest;
        }
        rest = rest.trim_start();
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARIADB: Server = Server {
        version: 101119,
        mariadb: true,
    };
    const MYSQL: Server = Server {
        version: 80036,
        mariadb: false,
    };

    #[test]
    fn comments_run_as_on_the_server_named() {
        let sql = "SELECT 1 /*!80000 + 1 */, 1 /*!50700 + 1 */, 1 /*!50699 + 1 */, \
                   1 /*!100000 + 1 */, 1 /*!999999 + 1 */, 1 /*M!100000 + 1 */, 1 /*!+1 */, \
                   1 /*M!+1*/, 1 /*!101119 +1*/, 1 /*!101120 +1*/";
        // Which comments run (MariaDB 10.11.19 answers 2 for those, 1 for the others).
        let ran = |server| {
            let opened = opened(sql, server);
            opened
                .split(',')
                .map(|item| u8::from(!item.contains("/*")))
                .collect::<Vec<_>>()
        };
        assert_eq!(ran(MARIADB), [0, 0, 1, 1, 0, 1, 1, 1, 1, 0]);
        assert_eq!(ran(MYSQL), [1, 1, 1, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(
            opened("/*!40101 SET NAMES utf8mb4 */;", MARIADB),
            "SET NAMES utf8mb4  ;"
        );
        assert_eq!(
            opened(
                "/*M!999999 enable the sandbox mode */ \n# dump\n/*!40101 SET @a=1 */",
                MARIADB
            ),
            "SET @a=1  "
        );
    }

    #[test]
    fn strings_and_other_comments_are_left_alone() {
        for sql in [
            "SELECT '/*!1 x */', \"/*!1 y */\", `/*!1`",
            "SELECT 1 -- /*!1 x */\n",
            "SELECT 1 # /*!1 x */",
            "SELECT /* plain */ 1",
            "/*M!999999\\- enable the sandbox mode */ SELECT 1",
            "SELECT 'it\\'s /*!1 x */'",
            "SELECT 1 /*! unterminated",
        ] {
            let opened = opened(sql, MARIADB);
            if sql.contains("unterminated") {
                assert_eq!(opened, "SELECT 1   unterminated ");
            } else {
                assert_eq!(opened, sql);
            }
        }
    }
}
