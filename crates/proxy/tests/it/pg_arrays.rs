//! PostgreSQL arrays through the proxy on PostgreSQL shards (issue #17 item 5): `= ANY(array)`
//! with array parameters in binary and text, array literals, and array results, each compared
//! with the same statement on one plain PostgreSQL database holding the same rows; `= ANY`
//! reaches only the shards its values route to (`--include-ignored`, `KEYSHARD_TEST_PG_URL`).

use crate::common;

use crate::common::postgres::{PgProxy, Reference, simple_rows};
use bytes::BytesMut;
use tokio_postgres::types::{Format, FromSql, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Row};

const TABLE: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
     status VARCHAR(20), tags TEXT[], scores INT[])";

/// A parameter sent as the given bytes in the text format (as node pg and psycopg send arrays),
/// whatever type the statement describes.
#[derive(Debug)]
struct Text(&'static str);

impl ToSql for Text {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }
    to_sql_checked!();
}

/// A parameter sent as these bytes in the binary format.
#[derive(Debug)]
struct Binary(Vec<u8>);

impl ToSql for Binary {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    to_sql_checked!();
}

/// A result value's bytes as they came (binary format): arrays compare byte for byte with
/// PostgreSQL's own encoding, multidimensional ones included.
#[derive(Debug, PartialEq)]
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

fn ids(rows: &[Row]) -> Vec<i64> {
    rows.iter().map(|r| r.get(0)).collect()
}

/// How many execution units PREVIEW plans for `sql`.
async fn units(client: &Client, sql: &str) -> usize {
    simple_rows(client, &format!("PREVIEW {sql}")).await.len()
}

async fn scenario(proxy: &PgProxy, reference: &Client) {
    let client = proxy.client().await;
    client.batch_execute(TABLE).await.unwrap();
    reference.batch_execute(TABLE).await.unwrap();
    let rows: Vec<String> = (1..=24)
        .map(|i| {
            let tags = ["'{a,b}'", "'{b}'", "NULL", "'{\"x y\",NULL,c}'"][i % 4];
            format!(
                "({i}, {}, 's{}', {tags}, '{{{i},{}}}')",
                i % 5,
                i % 3,
                i * 10
            )
        })
        .collect();
    let insert = format!(
        "INSERT INTO t_order (order_id, user_id, status, tags, scores) VALUES {}",
        rows.join(", ")
    );
    client.batch_execute(&insert).await.unwrap();
    reference.batch_execute(&insert).await.unwrap();

    // Binary array parameters: the proxy describes $1 as an array of the column's type, so
    // tokio-postgres sends int8[] and int4[]; the rows equal one database's.
    let by_key = "SELECT order_id FROM t_order WHERE order_id = ANY($1) ORDER BY order_id";
    let keys: Vec<i64> = vec![1, 4, 7, 22, 1000];
    let statement = client.prepare(by_key).await.unwrap();
    assert_eq!(statement.params(), &[Type::INT8_ARRAY]);
    let through = ids(&client.query(&statement, &[&keys]).await.unwrap());
    assert_eq!(through, [1, 4, 7, 22]);
    assert_eq!(
        through,
        ids(&reference.query(by_key, &[&keys]).await.unwrap())
    );
    let by_user =
        "SELECT order_id FROM t_order WHERE user_id = ANY($1) AND status <> $2 ORDER BY order_id";
    let users: Vec<i32> = vec![1, 3];
    assert_eq!(
        ids(&client.query(by_user, &[&users, &"s0"]).await.unwrap()),
        ids(&reference.query(by_user, &[&users, &"s0"]).await.unwrap())
    );
    let with_null: Vec<Option<i64>> = vec![Some(2), None, Some(3)];
    assert_eq!(
        ids(&client.query(by_key, &[&with_null]).await.unwrap()),
        [2, 3]
    );
    let empty: Vec<i64> = Vec::new();
    assert!(client.query(by_key, &[&empty]).await.unwrap().is_empty());

    // Text-format array parameters (quoted elements and NULL, as node pg and psycopg send).
    for text in ["{1,4,7}", r#"{"2", "5",NULL}"#, "{}"] {
        let param = Text(text);
        assert_eq!(
            ids(&client.query(by_key, &[&param]).await.unwrap()),
            ids(&reference.query(by_key, &[&param]).await.unwrap()),
            "{text}"
        );
    }

    // Array literals route as IN lists, in the simple and the extended protocol.
    for sql in [
        "SELECT order_id FROM t_order WHERE order_id = ANY(ARRAY[3, 6, 9]) ORDER BY order_id",
        "SELECT order_id FROM t_order WHERE order_id = ANY('{3,6,9}') ORDER BY order_id",
        "SELECT order_id FROM t_order WHERE order_id = ANY('{3,6,9}'::bigint[]) AND user_id = ANY(ARRAY[1,3,4]) ORDER BY order_id",
        "SELECT order_id FROM t_order WHERE order_id <> ALL(ARRAY[3, 6, 9]) ORDER BY order_id",
    ] {
        assert_eq!(
            simple_rows(&client, sql).await,
            simple_rows(reference, sql).await,
            "{sql}"
        );
        assert_eq!(
            ids(&client.query(sql, &[]).await.unwrap()),
            ids(&reference.query(sql, &[]).await.unwrap()),
            "{sql}"
        );
    }

    // Only the shards the values route to: t_order_${order_id % 2}, ds_${user_id % 2}.
    let in_list = "SELECT * FROM t_order WHERE order_id IN (2, 4) AND user_id IN (1, 3)";
    assert_eq!(units(&client, in_list).await, 1);
    for sql in [
        "SELECT * FROM t_order WHERE order_id = ANY(ARRAY[2, 4]) AND user_id = ANY('{1,3}'::int[])",
        "SELECT * FROM t_order WHERE order_id = ANY('{2,4}'::int8[]) AND user_id IN (1, 3)",
    ] {
        assert_eq!(units(&client, sql).await, 1, "{sql}");
    }
    assert_eq!(
        units(
            &client,
            "SELECT * FROM t_order WHERE order_id = ANY(ARRAY[1, 2])"
        )
        .await,
        4
    );
    assert_eq!(
        units(
            &client,
            "SELECT * FROM t_order WHERE order_id <> ALL(ARRAY[2, 4])"
        )
        .await,
        4
    );

    // Array results in both formats, merged from several shards, typed as PostgreSQL types
    // them; an array column can be ordered by.
    for sql in [
        "SELECT order_id, tags, scores FROM t_order ORDER BY order_id",
        "SELECT order_id, tags, scores FROM t_order WHERE order_id = ANY($1) ORDER BY scores DESC",
        "SELECT ARRAY[1, 2] AS a, ARRAY['x', NULL] AS b, ARRAY[[1.5, 2], [3, 4]]::float8[] AS c",
        // One node (ds_1.t_order_1) by `= ANY`, so array_agg is the database's own.
        "SELECT user_id, array_agg(order_id ORDER BY order_id) AS keys FROM t_order WHERE user_id = 1 AND order_id = ANY(ARRAY[1, 11, 21]) GROUP BY user_id",
        "SELECT order_id, tags FROM t_order WHERE tags IS NOT NULL ORDER BY tags, order_id",
    ] {
        let params: Vec<&(dyn ToSql + Sync)> = if sql.contains("$1") {
            vec![&keys]
        } else {
            vec![]
        };
        let through = client
            .query(sql, &params)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        let expected = reference.query(sql, &params).await.unwrap();
        assert_eq!(through.len(), expected.len(), "{sql}");
        assert!(!expected.is_empty(), "{sql}");
        for (a, b) in through.iter().zip(&expected) {
            let types = |r: &Row| {
                r.columns()
                    .iter()
                    .map(|c| c.type_().clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(types(a), types(b), "{sql}");
            for i in 0..a.len() {
                assert_eq!(
                    a.get::<_, Option<Raw>>(i),
                    b.get::<_, Option<Raw>>(i),
                    "{sql} column {i}"
                );
            }
            // And as a client reads them.
            if let Some(i) = a
                .columns()
                .iter()
                .position(|c| *c.type_() == Type::TEXT_ARRAY)
            {
                assert_eq!(
                    a.get::<_, Option<Vec<Option<String>>>>(i),
                    b.get::<_, Option<Vec<Option<String>>>>(i)
                );
            }
        }
        if params.is_empty() {
            assert_eq!(
                simple_rows(&client, sql).await,
                simple_rows(reference, sql).await,
                "{sql}"
            );
        }
    }

    // array_agg over several shards: each shard's array, joined (in no specified order, as in
    // one database); bool_and, every and bool_or as the least and the greatest boolean.
    let grouped = "SELECT user_id, array_agg(order_id), array_agg(status), bool_and(order_id > 4), \
                   every(status <> 's1'), bool_or(tags IS NULL) FROM t_order \
                   GROUP BY user_id ORDER BY user_id";
    let read = |rows: Vec<Row>| {
        rows.iter()
            .map(|r| {
                let mut keys: Vec<i64> = r.get(1);
                keys.sort_unstable();
                let mut statuses: Vec<String> = r.get(2);
                statuses.sort();
                let flags: [Option<bool>; 3] = [r.get(3), r.get(4), r.get(5)];
                (r.get::<_, i32>(0), keys, statuses, flags)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        read(client.query(grouped, &[]).await.unwrap()),
        read(reference.query(grouped, &[]).await.unwrap())
    );
    // Over no row at all, NULL as in one database.
    let empty = "SELECT array_agg(order_id), bool_and(true) FROM t_order WHERE order_id < 0";
    assert_eq!(
        simple_rows(&client, empty).await,
        simple_rows(reference, empty).await
    );
    // An ordered array_agg over several shards is gathered, and ordered as in one database.
    let ordered = "SELECT array_agg(order_id ORDER BY order_id) FROM t_order";
    assert_eq!(
        simple_rows(&client, ordered).await,
        simple_rows(reference, ordered).await
    );

    // Malformed array parameters: the error PostgreSQL gives, and the connection stays usable.
    let code = |e: tokio_postgres::Error| e.code().map(|c| c.code().to_owned());
    for param in [Text("{1,2"), Text("{1,x}"), Text("1,2")] {
        let ours = client
            .query(by_key, &[&param])
            .await
            .map(|_| ())
            .map_err(code);
        let theirs = reference
            .query(by_key, &[&param])
            .await
            .map(|_| ())
            .map_err(code);
        assert_eq!(ours, theirs, "{param:?}");
        assert_eq!(ours, Err(Some("22P02".to_owned())), "{param:?}");
    }
    let truncated = Binary(vec![
        0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0x7f, 0xff, 0xff, 0xff,
    ]);
    let ours = client
        .query(by_key, &[&truncated])
        .await
        .map(|_| ())
        .map_err(code);
    let theirs = reference
        .query(by_key, &[&truncated])
        .await
        .map(|_| ())
        .map_err(code);
    assert_eq!(ours, theirs);
    assert_eq!(ours, Err(Some("08P01".to_owned())));
    assert_eq!(
        ids(&client.query(by_key, &[&keys]).await.unwrap()),
        [1, 4, 7, 22]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn arrays_on_postgres_shards_match_one_database() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let reference = Reference::create("keyshard_pg_arrays").await;
    scenario(&proxy, &reference.client).await;
    proxy.stop().await;
    reference.drop_database().await;
    shards.cleanup().await;
}
