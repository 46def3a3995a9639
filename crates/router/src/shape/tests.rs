use keyshard_types::{Dialect, Value};

use super::lexical::Word;
use super::*;

fn shape(sql: &str, dialect: Dialect) -> Option<(String, Vec<Value>)> {
    Shape::of(sql, dialect).map(|s| {
        for (range, value) in s.ranges.iter().zip(&s.values) {
            assert!(!sql[range.clone()].is_empty(), "{value:?}");
        }
        (s.text, s.values)
    })
}

#[test]
fn literals_become_placeholders() {
    let (text, values) = shape(
        "INSERT INTO t_order (user_id, status, amount) VALUES (7, 'new', -2.5), (-8,'x y',0)",
        Dialect::MySql,
    )
    .unwrap();
    assert_eq!(
        text,
        "INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?,?,?)"
    );
    assert_eq!(
        values,
        [
            Value::Int(7),
            Value::Text("new".into()),
            Value::Double(-2.5),
            Value::Int(-8),
            Value::Text("x y".into()),
            Value::Int(0),
        ]
    );
    let (text, _) = shape(
        "insert into \"T\" (a, b) values (1, 'é') returning a",
        Dialect::Postgres,
    )
    .unwrap();
    assert_eq!(text, "insert into \"T\" (a, b) values ($1, $2) returning a");
}

#[test]
fn words_tables_and_expressions_stay_in_the_shape() {
    let (text, values) = shape(
        "REPLACE INTO t_order_1 (a, `b c`) VALUES (NULL, DEFAULT) ON DUPLICATE KEY UPDATE a = 3",
        Dialect::MySql,
    )
    .unwrap();
    assert_eq!(
        text,
        "REPLACE INTO t_order_1 (a, `b c`) VALUES (NULL, DEFAULT) ON DUPLICATE KEY UPDATE a = ?"
    );
    assert_eq!(values, [Value::Int(3)]);
}

#[test]
fn anything_subtle_is_shapeless() {
    for sql in [
        "SHOW TABLES",
        "INSERT INTO t (a) VALUES ('it''s')",
        "INSERT INTO t (a) VALUES ('a\\'b')",
        "INSERT INTO t (a) VALUES (E'x')",
        "INSERT INTO t (a) VALUES (X'0a')",
        "INSERT INTO t (a) VALUES (_utf8'x')",
        "INSERT INTO t (a) VALUES (DATE '2020-01-01')",
        "INSERT INTO t (a) VALUES ('a' 'b')",
        "INSERT INTO t (a) VALUES (1e5)",
        "INSERT INTO t (a) VALUES (1abc)",
        "INSERT INTO t (a) VALUES (.5)",
        "INSERT INTO t (a) VALUES (-0)",
        "INSERT INTO t (a) VALUES (?)",
        "INSERT INTO t (a) VALUES (1) -- c",
        "INSERT INTO t (a) VALUES (1) /* c */",
        "INSERT INTO t (a) VALUES (1) # c",
        "INSERT INTO t (a) VALUES (\"x\")",
        "INSERT INTO t (a) VALUES ('unclosed)",
        "INSERT INTO t (a) VALUES (x1 - 5)",
    ] {
        assert_eq!(shape(sql, Dialect::MySql), None, "{sql}");
    }
    for sql in [
        "INSERT INTO t (a) VALUES ($1)",
        "INSERT INTO t (a) VALUES ($$x$$)",
        "INSERT INTO \"t\"\"x\" (a) VALUES (1)",
    ] {
        assert_eq!(shape(sql, Dialect::Postgres), None, "{sql}");
    }
}

#[test]
fn reads_and_writes_cut_their_where_clause_only() {
    let (text, values) = shape(
        "SELECT a, COALESCE(b, 'x'), 3 FROM t WHERE user_id = 7 AND (s IN ('a', -2) OR c >= 1.5) \
         ORDER BY 1, 2 LIMIT 5, 10",
        Dialect::MySql,
    )
    .unwrap();
    assert_eq!(
        text,
        "SELECT a, COALESCE(b, 'x'), 3 FROM t WHERE user_id = ? AND (s IN (?, ?) OR c >= ?) \
         ORDER BY 1, 2 LIMIT 5, 10"
    );
    assert_eq!(
        values,
        [
            Value::Int(7),
            Value::Text("a".into()),
            Value::Int(-2),
            Value::Double(1.5)
        ]
    );
    let (text, values) = shape(
        "update t set status = 'x', n = 2 where id = 5 and d > DATE '2020-01-01' returning 1",
        Dialect::Postgres,
    )
    .unwrap();
    assert_eq!(
        text,
        "update t set status = 'x', n = 2 where id = $1 and d > DATE '2020-01-01' returning 1"
    );
    assert_eq!(values, [Value::Int(5)]);
    let (text, values) = shape("DELETE FROM t WHERE a - 5 = b", Dialect::MySql).unwrap();
    assert_eq!(text, "DELETE FROM t WHERE a - 5 = b");
    assert!(values.is_empty());
}

#[test]
fn rows_alike_fold_into_the_first() {
    let sql = "INSERT INTO t (a, b) VALUES (1, 'x'), (-2, 'y'),(3, 'z') \
               ON DUPLICATE KEY UPDATE b = 'w'";
    let folded = Shape::of(sql, Dialect::MySql).unwrap();
    assert_eq!(
        folded.text(),
        "INSERT INTO t (a, b) VALUES (?, ?) ON DUPLICATE KEY UPDATE b = ?"
    );
    assert_eq!(folded.values().len(), 7);
    assert_eq!(folded.folded_rows(), Some(3));
    let first = folded.first_row_only(sql).unwrap();
    assert_eq!(
        first,
        "INSERT INTO t (a, b) VALUES (1, 'x') ON DUPLICATE KEY UPDATE b = 'w'"
    );
    let one = Shape::of(&first, Dialect::MySql).unwrap();
    assert_eq!((one.text(), one.folded_rows()), (folded.text(), None));

    for (sql, text, rows) in [
        (
            "insert into t (a, b) values (1, 'x'), (2, 'y') on conflict (a) do update set b = 'z'",
            "insert into t (a, b) values ($1, $2) on conflict (a) do update set b = $3",
            2,
        ),
        (
            "INSERT INTO t (a) VALUES (DEFAULT), (DEFAULT) RETURNING a",
            "INSERT INTO t (a) VALUES (DEFAULT) RETURNING a",
            2,
        ),
        (
            "INSERT INTO t (a, b) VALUES (upper('a'), 1), (upper('b'), 2)",
            "INSERT INTO t (a, b) VALUES (upper($1), $2)",
            2,
        ),
    ] {
        let shape = Shape::of(sql, Dialect::Postgres).unwrap();
        assert_eq!((shape.text(), shape.folded_rows()), (text, Some(rows)));
    }
}

#[test]
fn rows_that_differ_beyond_their_literals_stay_apart() {
    for sql in [
        "INSERT INTO t (a, b) VALUES (1, 'x')",
        "INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL)",
        "INSERT INTO t (a, b) VALUES (1, 'x'), (2,'y')",
        "INSERT INTO t (a) VALUES (1), (2, 3)",
        "INSERT INTO t (a) VALUES ROW(1), ROW(2)",
        "INSERT INTO t (a) VALUES (1) (2)",
        "INSERT INTO t (a) VALUES (1), 2",
        "INSERT INTO t (a) SELECT a FROM u WHERE b = 1",
    ] {
        let shape = Shape::of(sql, Dialect::MySql);
        assert_eq!(shape.and_then(|s| s.folded_rows()), None, "{sql}");
    }
}

#[test]
fn words_are_told_apart_by_length_first_letter_and_spelling() {
    for (word, kind) in [
        ("SELECT", Word::Select),
        ("Union", Word::SetOperation),
        ("intersect", Word::SetOperation),
        ("EXCEPT", Word::SetOperation),
        ("where", Word::Where),
        ("GROUP", Word::EndsWhere),
        ("order", Word::EndsWhere),
        ("having", Word::EndsWhere),
        ("LIMIT", Word::EndsWhere),
        ("offset", Word::EndsWhere),
        ("fetch", Word::EndsWhere),
        ("FOR", Word::EndsWhere),
        ("lock", Word::EndsWhere),
        ("window", Word::EndsWhere),
        ("RETURNING", Word::EndsWhere),
        ("into", Word::EndsWhere),
        ("selects", Word::Other),
        ("orders", Word::Other),
        ("ordex", Word::Other),
        ("user_id", Word::Other),
        ("", Word::Other),
    ] {
        assert!(Word::of(word.as_bytes()) == kind, "{word}");
    }
}

#[test]
fn subqueries_set_operations_and_runs_of_literals_are_shapeless() {
    for sql in [
        "SELECT a FROM t WHERE id IN (SELECT id FROM u)",
        "SELECT a FROM (SELECT a FROM t) x WHERE a = 1",
        "SELECT a FROM t WHERE a = 1 UNION SELECT a FROM u",
        "SELECT a FROM t WHERE a = 1 EXCEPT TABLE u",
        "UPDATE t SET a = (SELECT 1) WHERE id = 1",
        "SELECT a FROM t WHERE a = 'x' 'y'",
        "SELECT a FROM t WHERE a = 1 WHERE b = 2",
        "SELECT a FROM t WHERE a = -'1'",
        "SELECT a FROM t WHERE a = ?",
        "SELECT a FROM t WHERE a = 1)",
        "SELECT a FROM t WHERE a = 'x' -- c",
    ] {
        assert_eq!(shape(sql, Dialect::MySql), None, "{sql}");
    }
}
