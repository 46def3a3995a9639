//! Statement text as PostgreSQL's simple protocol sees it: several statements in one Query
//! message, and the command tag that completes each.

use crate::reply::Reply;

/// Splits a Query message's text at the semicolons that end statements: not those inside
/// quotes, quoted identifiers, dollar quotes or comments. Empty statements are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut statements = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => {
                let quote = bytes[i];
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
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                // $tag$ … $tag$, where tag is empty or an identifier.
                let tag_end = bytes[i + 1..]
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .map(|p| i + 1 + p);
                if let Some(end) = tag_end
                    && bytes[end] == b'$'
                    && !bytes[i + 1..end].first().is_some_and(u8::is_ascii_digit)
                {
                    let tag = &sql[i..=end];
                    match sql[end + 1..].find(tag) {
                        Some(close) => i = end + 1 + close + tag.len() - 1,
                        None => i = bytes.len(),
                    }
                }
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
    statements.into_iter().filter(|s| !is_blank(s)).collect()
}

/// Whether `sql` holds nothing but white space and comments.
pub fn is_blank(sql: &str) -> bool {
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

/// The words of a statement, comments before the first skipped.
fn words(sql: &str) -> impl Iterator<Item = &str> {
    let mut rest = sql.trim_start();
    while rest.starts_with("--") || rest.starts_with("/*") {
        rest = if let Some(c) = rest.strip_prefix("--") {
            c.find('\n').map_or("", |i| &c[i + 1..]).trim_start()
        } else {
            let c = &rest[2..];
            c.find("*/").map_or("", |i| &c[i + 2..]).trim_start()
        };
    }
    rest.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
}

/// The CommandComplete tag for `sql` answered with `reply`: `INSERT 0 3`, `SELECT 2`,
/// `CREATE TABLE`, `BEGIN`, …
pub fn tag(sql: &str, reply: &Reply) -> String {
    let (affected, returned) = match reply {
        Reply::Ok { affected_rows, .. } => (*affected_rows, None),
        Reply::Rows { rows, .. } => (rows.len() as u64, Some(rows.len() as u64)),
    };
    let mut words = words(sql);
    // Upper-cased one word at a time: this runs for every statement, mostly INSERTs.
    let first = words.next().unwrap_or_default().to_ascii_uppercase();
    let first = first.as_str();
    match first {
        "INSERT" => format!("INSERT 0 {affected}"),
        "UPDATE" | "DELETE" | "MERGE" | "COPY" | "FETCH" | "MOVE" => format!("{first} {affected}"),
        "SELECT" | "WITH" | "VALUES" | "TABLE" | "PREVIEW" => {
            format!("SELECT {}", returned.unwrap_or(affected))
        }
        "SHOW" => "SHOW".to_owned(),
        "BEGIN" | "START" => "BEGIN".to_owned(),
        "COMMIT" | "END" => "COMMIT".to_owned(),
        "ROLLBACK" | "ABORT" => "ROLLBACK".to_owned(),
        "TRUNCATE" => "TRUNCATE TABLE".to_owned(),
        "CREATE" | "DROP" | "ALTER" => {
            let words: Vec<String> = words.take(5).map(str::to_ascii_uppercase).collect();
            // CREATE [OR REPLACE] [UNIQUE | TEMP | …] INDEX → CREATE INDEX.
            let object = words
                .iter()
                .find(|w| {
                    !matches!(
                        w.as_str(),
                        "OR" | "REPLACE"
                            | "UNIQUE"
                            | "TEMP"
                            | "TEMPORARY"
                            | "UNLOGGED"
                            | "GLOBAL"
                            | "LOCAL"
                            | "MATERIALIZED"
                    )
                })
                .map(String::as_str)
                .unwrap_or("TABLE");
            let object = if words.iter().any(|w| w == "MATERIALIZED") && object == "VIEW" {
                "MATERIALIZED VIEW"
            } else {
                object
            };
            format!("{first} {object}")
        }
        "" => String::new(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_statement_ends_only() {
        assert_eq!(
            split_statements("SELECT 1; INSERT INTO t VALUES ('a;b', \"c;\") ; -- x;\n"),
            ["SELECT 1", " INSERT INTO t VALUES ('a;b', \"c;\") "]
        );
        assert_eq!(
            split_statements("SELECT $$a;b$$; SELECT $1"),
            ["SELECT $$a;b$$", " SELECT $1"]
        );
        assert_eq!(split_statements("/* ; */ SELECT 1"), ["/* ; */ SELECT 1"]);
        assert!(split_statements(" ; ;").is_empty());
        assert_eq!(
            split_statements("SELECT 'unterminated"),
            ["SELECT 'unterminated"]
        );
    }

    #[test]
    fn tags_follow_postgresql() {
        let ok = |n| Reply::Ok {
            affected_rows: n,
            last_insert_id: 0,
        };
        assert_eq!(tag("INSERT INTO t VALUES (1), (2)", &ok(2)), "INSERT 0 2");
        assert_eq!(tag("create table t (a int)", &ok(0)), "CREATE TABLE");
        assert_eq!(
            tag("CREATE UNIQUE INDEX i ON t (a)", &ok(0)),
            "CREATE INDEX"
        );
        assert_eq!(tag("DROP TABLE IF EXISTS t", &ok(0)), "DROP TABLE");
        assert_eq!(tag("update t set a = 1", &ok(3)), "UPDATE 3");
        assert_eq!(tag("begin", &ok(0)), "BEGIN");
        let rows = Reply::Rows {
            columns: Vec::new(),
            rows: vec![Vec::new(), Vec::new()],
        };
        assert_eq!(
            tag("INSERT INTO t VALUES (1), (2) RETURNING *", &rows),
            "INSERT 0 2"
        );
        assert_eq!(tag("SELECT * FROM t", &rows), "SELECT 2");
    }
}
