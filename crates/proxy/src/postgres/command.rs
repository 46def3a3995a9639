//! The command tag that completes each statement of PostgreSQL's protocol.

use keyshard_router::Leading;

use crate::reply::Reply;
use crate::sql::Sql;

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

/// The leading keyword of a `WITH` statement's main statement: the first of SELECT, INSERT,
/// UPDATE, DELETE, MERGE, VALUES or TABLE outside the parentheses of its common table
/// expressions and outside quotes. `Leading::With` when none is found.
fn main_of_with(sql: &str) -> Leading {
    let bytes = sql.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while let Some(&b) = bytes.get(i) {
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'\'' | b'"' => {
                let Some(end) = bytes[i + 1..].iter().position(|&c| c == b) else {
                    break;
                };
                i += end + 1;
            }
            b if b.is_ascii_alphabetic() => {
                let end = bytes[i..]
                    .iter()
                    .position(|c| !c.is_ascii_alphanumeric() && *c != b'_')
                    .map_or(bytes.len(), |n| i + n);
                if depth == 0 {
                    let leading = Leading::of(&sql[i..end]);
                    if leading.reads() && leading != Leading::With
                        || leading.writes_rows()
                        || leading == Leading::Merge
                    {
                        return leading;
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Leading::With
}

/// The CommandComplete tag for `sql` answered with `reply`: `INSERT 0 3`, `SELECT 2`,
/// `CREATE TABLE`, `BEGIN`, …
pub fn tag(sql: Sql<'_>, reply: &Reply) -> String {
    let returned = reply.rows_returned();
    let affected = match reply {
        Reply::Ok { affected_rows, .. } => *affected_rows,
        Reply::Rows { .. } | Reply::Streamed { .. } => returned.unwrap_or_default(),
    };
    // A WITH's tag is its main statement's, after the common table expressions.
    let leading = match sql.leading {
        Leading::With => main_of_with(sql.text),
        leading => leading,
    };
    // The tag of nearly every statement, made without upper-casing or formatting.
    let counted = match leading {
        Leading::Insert => Some(("INSERT 0 ", affected)),
        Leading::Update => Some(("UPDATE ", affected)),
        Leading::Delete => Some(("DELETE ", affected)),
        Leading::Merge => Some(("MERGE ", affected)),
        Leading::Select | Leading::With | Leading::Values | Leading::Table => {
            Some(("SELECT ", returned.unwrap_or(affected)))
        }
        _ => None,
    };
    if let Some((verb, count)) = counted {
        let mut tag = String::with_capacity(32);
        tag.push_str(verb);
        tag.push_str(itoa::Buffer::new().format(count));
        return tag;
    }
    let mut words = words(sql.text);
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
        "LOCK" => "LOCK TABLE".to_owned(),
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
    fn tags_follow_postgresql() {
        let ok = |n| Reply::Ok {
            affected_rows: n,
            last_insert_id: 0,
        };
        assert_eq!(
            tag(Sql::new("INSERT INTO t VALUES (1), (2)"), &ok(2)),
            "INSERT 0 2"
        );
        assert_eq!(
            tag(Sql::new("create table t (a int)"), &ok(0)),
            "CREATE TABLE"
        );
        assert_eq!(
            tag(Sql::new("CREATE UNIQUE INDEX i ON t (a)"), &ok(0)),
            "CREATE INDEX"
        );
        assert_eq!(
            tag(Sql::new("DROP TABLE IF EXISTS t"), &ok(0)),
            "DROP TABLE"
        );
        assert_eq!(tag(Sql::new("update t set a = 1"), &ok(3)), "UPDATE 3");
        // A WITH's tag is its main statement's, as PostgreSQL's.
        for (sql, expected) in [
            (
                "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
                "INSERT 0 3",
            ),
            (
                "with recursive r(n) as (values (1) union all select n + 1 from r where n < 3) delete from t where a in (select n from r)",
                "DELETE 3",
            ),
            (
                "WITH d AS (DELETE FROM t RETURNING a) SELECT ')', a FROM d",
                "SELECT 3",
            ),
            (
                "WITH \"insert\" AS (SELECT '(') UPDATE t SET a = 1",
                "UPDATE 3",
            ),
            (
                "WITH x AS MATERIALIZED (SELECT 1) MERGE INTO t USING x ON true WHEN MATCHED THEN DELETE",
                "MERGE 3",
            ),
        ] {
            assert_eq!(tag(Sql::new(sql), &ok(3)), expected, "{sql}");
        }
        assert_eq!(tag(Sql::new("begin"), &ok(0)), "BEGIN");
        let rows = Reply::Rows {
            columns: Vec::new(),
            rows: vec![Vec::new(), Vec::new()],
        };
        assert_eq!(
            tag(Sql::new("INSERT INTO t VALUES (1), (2) RETURNING *"), &rows),
            "INSERT 0 2"
        );
        assert_eq!(tag(Sql::new("SELECT * FROM t"), &rows), "SELECT 2");
    }
}
