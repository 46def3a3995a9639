//! Reads, writes and transactions through the PostgreSQL frontend on PostgreSQL shards: every
//! query's answer through the proxy equals the same query on one plain PostgreSQL database
//! holding the same rows (`--include-ignored`, with `KEYSHARD_TEST_PG_URL`).

use crate::common;

use crate::common::postgres::{PgProxy, PgShards, Reference};
use tokio_postgres::{Client, SimpleQueryMessage};

const TABLES: [&str; 3] = [
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(20), amount INT)",
    "CREATE TABLE t_user (id INT PRIMARY KEY, name VARCHAR(20))",
    "CREATE TABLE t_dict (code VARCHAR(20) PRIMARY KEY, label VARCHAR(20))",
];

/// Column names and rows as text, numbers with a fraction rounded to 4 places (PostgreSQL's
/// AVG is NUMERIC with many digits; merged over shards it is a double).
type Table = (Vec<String>, Vec<Vec<Option<String>>>);

async fn fetch(client: &Client, sql: &str) -> Table {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    let mut names = Vec::new();
    let mut rows = Vec::new();
    for message in messages {
        // The columns come first, so that an empty result's are compared too.
        if let SimpleQueryMessage::RowDescription(columns) = &message {
            names = columns.iter().map(|c| c.name().to_owned()).collect();
        }
        if let SimpleQueryMessage::Row(row) = message {
            if names.is_empty() {
                names = row.columns().iter().map(|c| c.name().to_owned()).collect();
            }
            rows.push(
                (0..row.len())
                    .map(|i| {
                        row.get(i).map(|v| match v.parse::<f64>() {
                            Ok(f) if v.contains('.') => format!("{f:.4}"),
                            _ => v.to_owned(),
                        })
                    })
                    .collect(),
            );
        }
    }
    (names, rows)
}

/// A value's bytes in whatever format it came, whatever its type.
struct Raw(Vec<u8>);

impl<'a> tokio_postgres::types::FromSql<'a> for Raw {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }
}

/// The rows of `sql` run in the extended protocol: each value's bytes in the binary format, in
/// hex.
async fn fetch_binary(client: &Client, sql: &str) -> Table {
    let rows = client
        .query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    let names = rows
        .first()
        .map(|r| r.columns().iter().map(|c| c.name().to_owned()).collect())
        .unwrap_or_default();
    let rows = rows
        .iter()
        .map(|row| {
            (0..row.len())
                .map(|i| {
                    let raw: Option<Raw> = row.get(i);
                    raw.map(|Raw(b)| b.iter().map(|byte| format!("{byte:02x}")).collect())
                })
                .collect()
        })
        .collect();
    (names, rows)
}

async fn execute(client: &Client, sql: &str) -> u64 {
    client
        .execute(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows a statement sent as text changed.
async fn simple_execute(client: &Client, sql: &str) -> u64 {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    messages
        .iter()
        .find_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(0)
}

const QUERIES: &[&str] = &[
    "SELECT order_id, user_id, status, amount FROM t_order ORDER BY order_id",
    "SELECT * FROM t_order ORDER BY amount DESC, order_id",
    "SELECT order_id, amount FROM t_order ORDER BY amount NULLS FIRST, order_id LIMIT 5",
    "SELECT order_id FROM t_order ORDER BY order_id LIMIT 3 OFFSET 4",
    // SQLAlchemy's asyncpg and psycopg dialects cast the LIMIT; Hibernate aliases a table
    // with its own name.
    "SELECT order_id FROM t_order ORDER BY order_id LIMIT 3::INTEGER OFFSET CAST(1 AS BIGINT)",
    "SELECT t_order.order_id, t_order.amount FROM t_order t_order ORDER BY t_order.amount DESC, t_order.order_id LIMIT 4",
    "SELECT COUNT(*), COUNT(amount), SUM(amount), MIN(amount), MAX(amount), AVG(amount) FROM t_order",
    "SELECT user_id, COUNT(*), SUM(amount), AVG(amount) FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT status, COUNT(*) AS n, MAX(amount) AS top FROM t_order GROUP BY status ORDER BY n DESC, status",
    "SELECT * FROM t_order WHERE user_id = 3 ORDER BY order_id",
    "SELECT order_id, status FROM t_order WHERE user_id IN (1, 2) AND status = 'paid' ORDER BY order_id",
    "SELECT t_order.order_id FROM t_order WHERE t_order.amount > 50 ORDER BY t_order.order_id",
    "SELECT o.order_id, d.label FROM t_order o JOIN t_dict d ON o.status = d.code ORDER BY o.order_id",
    "SELECT * FROM t_user ORDER BY id",
    "SELECT label FROM t_dict ORDER BY code",
    // Ordered string aggregates: each node's pieces joined in the call's order.
    "SELECT user_id, string_agg(status, '; ' ORDER BY amount DESC NULLS LAST, order_id) AS s, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT string_agg(status || ':' || order_id, ',' ORDER BY order_id) FROM t_order",
    "SELECT status, string_agg(status, '|' ORDER BY status DESC, order_id) FROM t_order GROUP BY status ORDER BY 1",
    "SELECT user_id, string_agg(DISTINCT status, ',' ORDER BY status DESC) FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT string_agg(DISTINCT status, '|') FROM t_order",
];

/// Expressions over aggregates, computed from the merged aggregates.
const COMPUTED: &[&str] = &[
    "SELECT user_id, SUM(amount) / COUNT(*) AS mean, COUNT(*) >= 8 AS many, MAX(amount) - MIN(amount) AS spread FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT SUM(amount) * 2 + COUNT(*) AS x, COUNT(amount) / 3 AS third, -SUM(amount) * 0.25 FROM t_order",
    "SELECT status, SUM(amount) / COUNT(*) AS mean FROM t_order GROUP BY status ORDER BY mean DESC",
    "SELECT COUNT(*) + 1, SUM(amount) / COUNT(*) FROM t_order WHERE amount > 100000",
    "SELECT kind, SUM(price) / COUNT(price) AS mean, SUM(price) * 1.5 - COUNT(*) AS y, MIN(price) < 5 FROM t_event GROUP BY kind ORDER BY kind",
];

/// Reads no merge answers: their rows are gathered on one data source, where PostgreSQL runs
/// them as written (schema-qualified names, ordered aggregates and casts included).
const GATHERED: &[&str] = &[
    "SELECT DISTINCT status FROM t_order ORDER BY status",
    "SELECT COUNT(DISTINCT status), COUNT(DISTINCT user_id) FROM public.t_order",
    // INTERSECT and EXCEPT: a row on one node in one branch and on another in the other.
    "SELECT status FROM t_order INTERSECT SELECT status FROM t_order WHERE amount > 20 ORDER BY 1",
    "SELECT amount FROM t_order EXCEPT SELECT amount FROM t_order WHERE user_id = 1 ORDER BY 1",
    "SELECT status FROM t_order EXCEPT SELECT status FROM t_order WHERE user_id = 1 AND amount > 80 ORDER BY 1",
    "SELECT order_id FROM t_order ORDER BY order_id LIMIT 2 * 3 OFFSET (1 + 1)",
    // DISTINCT aggregates over no row at all: still the one row of zero and NULLs.
    "SELECT COUNT(DISTINCT status), SUM(DISTINCT amount), AVG(DISTINCT amount) FROM t_order WHERE amount > 100000",
    "SELECT user_id, COUNT(DISTINCT status) FROM t_order GROUP BY user_id HAVING COUNT(DISTINCT status) > 1 ORDER BY user_id",
    "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) > 7 ORDER BY user_id",
    "SELECT COUNT(1) FROM (SELECT 1 FROM t_order WHERE amount > 20) AS _wrapped",
    "SELECT EXISTS(SELECT 1 FROM t_order WHERE status = 'paid')",
    "SELECT status FROM t_order UNION SELECT code FROM t_dict ORDER BY 1",
    "SELECT status FROM t_order INTERSECT SELECT code FROM t_dict ORDER BY 1",
    "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY order_id) AS rn FROM t_order ORDER BY order_id",
    "SELECT string_agg(status, ',' ORDER BY order_id) FROM t_order WHERE user_id = 2",
    "SELECT status, array_agg(amount ORDER BY amount NULLS FIRST, order_id) FROM t_order GROUP BY status ORDER BY status",
    "SELECT SUM(amount)::numeric / COUNT(*) AS mean FROM t_order",
    "SELECT o.order_id, u.name FROM t_order o JOIN t_user u ON o.user_id = u.id ORDER BY o.order_id",
    "WITH paid AS (SELECT * FROM t_order WHERE status = 'paid') SELECT user_id, COUNT(*) FROM paid GROUP BY user_id ORDER BY 1",
    "SELECT a.order_id, b.order_id FROM t_order a JOIN t_order b ON a.user_id = b.user_id AND a.amount < b.amount WHERE a.user_id = 3 ORDER BY 1, 2",
    "SELECT order_id FROM t_order ORDER BY order_id LIMIT (SELECT COUNT(*) FROM t_user)",
];

/// Random SELECTs (see `common::random_select`), each compared with the plain database as a
/// set of rows, column names included, and run twice.
async fn random_selects(client: &Client, reference: &Client) {
    use crate::common::random_select::{Paths, RandomSelects, fixes_its_order, seed};
    let mut selects = RandomSelects::new(seed(), false).for_postgres();
    let mut paths = Paths::default();
    for _ in 0..300 {
        let sql = selects.select();
        let mut through = fetch(client, &sql).await;
        // Again: an ordered read over two tables of a data source is merged by the proxy the
        // first time, sent as one UNION ALL statement after (see the backend's `combined`).
        let mut again = fetch(client, &sql).await;
        let mut expected = fetch(reference, &sql).await;
        if !fixes_its_order(&sql) {
            through.1.sort();
            again.1.sort();
            expected.1.sort();
        }
        assert_eq!(again, through, "{sql}, again");
        assert_eq!(through, expected, "{sql}");
        // In the extended protocol, byte for byte in the binary format (twice through the
        // proxy: a combined read's second run is prepared as one statement).
        let mut through = fetch_binary(client, &sql).await;
        let mut again = fetch_binary(client, &sql).await;
        let mut expected = fetch_binary(reference, &sql).await;
        if !fixes_its_order(&sql) {
            through.1.sort();
            again.1.sort();
            expected.1.sort();
        }
        assert_eq!(again, through, "{sql}, extended again");
        assert_eq!(through, expected, "{sql}, extended");
        let (_, preview) = fetch(client, &format!("PREVIEW {sql}")).await;
        let preview: Vec<String> = preview.into_iter().filter_map(|r| r[1].clone()).collect();
        paths.count(&preview);
    }
    println!("random SELECTs: {paths}");
    assert!(paths.gathered > 0 && paths.merged > 0, "{paths}");
}

async fn scenario(proxy: &PgProxy, reference: &Client) {
    let client = proxy.client().await;
    for sql in TABLES {
        execute(&client, sql).await;
        execute(reference, sql).await;
    }
    let statuses = ["new", "paid", "shipped"];
    let rows: Vec<String> = (0..40usize)
        .map(|i| {
            let amount = if i % 7 == 0 {
                "NULL".to_owned()
            } else {
                ((i * 37) % 100).to_string()
            };
            format!("({}, '{}', {amount})", i % 5 + 1, statuses[i % 3])
        })
        .collect();
    let insert = format!(
        "INSERT INTO t_order (user_id, status, amount) VALUES {}",
        rows.join(", ")
    );
    assert_eq!(execute(&client, &insert).await, 40);
    let (_, stored) = fetch(
        &client,
        "SELECT order_id, user_id, status, amount FROM t_order",
    )
    .await;
    assert_eq!(stored.len(), 40);
    for row in &stored {
        let value = |i: usize| row[i].clone().unwrap_or_else(|| "NULL".to_owned());
        execute(
            reference,
            &format!(
                "INSERT INTO t_order VALUES ({}, {}, '{}', {})",
                value(0),
                value(1),
                value(2),
                value(3)
            ),
        )
        .await;
    }
    for sql in [
        common::random_select::event_table("TIMESTAMP", "JSONB", "UUID"),
        common::random_select::event_rows(),
    ] {
        execute(&client, &sql).await;
        execute(reference, &sql).await;
    }
    for sql in [
        "INSERT INTO t_user VALUES (1, 'ann'), (2, 'bob')",
        "INSERT INTO t_dict VALUES ('new', 'New'), ('paid', 'Paid'), ('shipped', 'Shipped')",
    ] {
        execute(&client, sql).await;
        execute(reference, sql).await;
    }
    for sql in QUERIES.iter().chain(GATHERED).chain(COMPUTED) {
        let expected = fetch(reference, sql).await;
        assert!(!expected.1.is_empty(), "{sql} returns nothing to compare");
        assert_eq!(fetch(&client, sql).await, expected, "{sql}");
        if sql.contains("string_agg(status") || COMPUTED.contains(sql) {
            let (_, preview) = fetch(&client, &format!("PREVIEW {sql}")).await;
            assert!(common::random_select::is_merged(preview), "{sql} is merged");
        }
    }
    random_selects(&client, reference).await;
    ranges(&client, reference).await;

    // A gathered read with parameters, described before it runs, in the binary format.
    let sql = "SELECT DISTINCT status, MAX(amount) OVER (PARTITION BY status) AS top FROM t_order WHERE amount > $1 ORDER BY status";
    let through = client.query(sql, &[&10i32]).await.unwrap();
    let expected = reference.query(sql, &[&10i32]).await.unwrap();
    assert_eq!(through.len(), expected.len());
    for (a, b) in through.iter().zip(&expected) {
        assert_eq!(a.columns()[1].type_(), b.columns()[1].type_());
        assert_eq!(a.get::<_, String>(0), b.get::<_, String>(0));
        assert_eq!(a.get::<_, Option<i32>>(1), b.get::<_, Option<i32>>(1));
    }
    let none = client.query(sql, &[&1000i32]).await.unwrap();
    assert!(none.is_empty());

    // A gathered locking read locks what it reads on every node, in the reader's transaction:
    // another client's UPDATE of such a row waits (and times out), as on one database.
    let other = proxy.client().await;
    other
        .batch_execute("SET lock_timeout = '500ms'")
        .await
        .unwrap();
    client.batch_execute("BEGIN").await.unwrap();
    let locked = fetch(
        &client,
        "SELECT o.order_id, u.name FROM t_order o JOIN t_user u ON u.id = o.user_id WHERE o.user_id IN (1, 2) FOR UPDATE OF o",
    )
    .await;
    assert!(!locked.1.is_empty());
    let update = "UPDATE t_order SET amount = amount WHERE user_id = 2";
    let error = other.batch_execute(update).await.unwrap_err();
    assert_eq!(error.code().map(|c| c.code()), Some("55P03"), "{error:?}");
    client.batch_execute("ROLLBACK").await.unwrap();
    other.batch_execute(update).await.unwrap();

    // EXPLAIN: each node's plan after a line naming the node and the statement it runs there;
    // EXPLAIN ANALYZE of a write is refused, since it would make the write.
    let plan = common::postgres::simple_rows(
        &client,
        "EXPLAIN (COSTS OFF) SELECT order_id FROM t_order WHERE user_id = 1",
    )
    .await;
    let headers: Vec<&str> = plan
        .iter()
        .filter_map(|r| r[0].as_deref())
        .filter(|line| line.starts_with("ds_"))
        .collect();
    assert_eq!(
        headers,
        [
            "ds_1: EXPLAIN (COSTS OFF) SELECT order_id FROM t_order_0 WHERE user_id = 1",
            "ds_1: EXPLAIN (COSTS OFF) SELECT order_id FROM t_order_1 WHERE user_id = 1"
        ]
    );
    assert!(plan.len() > headers.len(), "{plan:?}");
    let refused = client
        .simple_query("EXPLAIN ANALYZE DELETE FROM t_order")
        .await
        .unwrap_err();
    assert_eq!(refused.code().map(|c| c.code()), Some("0A000"), "{refused}");

    // Parameters through the extended protocol route and merge the same way.
    let rows = client
        .query(
            "SELECT order_id, user_id FROM t_order WHERE user_id = $1 OR user_id = $2 ORDER BY order_id LIMIT $3::INTEGER",
            &[&1i32, &2i32, &5i32],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 5);
    let key: i64 = rows[2].get(0);
    let user: i32 = rows[2].get(1);
    let preview = fetch(
        &client,
        &format!("PREVIEW SELECT * FROM t_order WHERE order_id = {key} AND user_id = {user}"),
    )
    .await;
    assert_eq!(preview.1.len(), 1, "{preview:?}");

    // Merged aggregates in the binary format, typed as PostgreSQL types them (AVG is NUMERIC).
    let sql = "SELECT user_id, COUNT(*), SUM(amount), AVG(amount) FROM t_order GROUP BY user_id ORDER BY user_id";
    let through = client.query(sql, &[]).await.unwrap();
    let expected = reference.query(sql, &[]).await.unwrap();
    assert_eq!(through.len(), expected.len());
    for (a, b) in through.iter().zip(&expected) {
        assert_eq!(a.columns()[3].type_(), b.columns()[3].type_());
        assert_eq!(a.get::<_, i32>(0), b.get::<_, i32>(0));
        assert_eq!(a.get::<_, i64>(1), b.get::<_, i64>(1));
        assert_eq!(a.get::<_, i64>(2), b.get::<_, i64>(2));
    }

    // UPDATE and DELETE by key change exactly their row.
    let update = format!("UPDATE t_order SET status = 'refunded' WHERE order_id = {key}");
    assert_eq!(execute(&client, &update).await, 1);
    execute(reference, &update).await;
    let delete = format!("DELETE FROM t_order WHERE order_id = {}", {
        let k: i64 = rows[3].get(0);
        k
    });
    assert_eq!(execute(&client, &delete).await, 1);
    execute(reference, &delete).await;
    for sql in &QUERIES[..2] {
        assert_eq!(
            fetch(&client, sql).await,
            fetch(reference, sql).await,
            "{sql}"
        );
    }

    // Text statements of one shape: the proxy parses the first two and binds the others through
    // it; each answers as the plain database does, whichever shards its literals pick.
    let (_, stored) = fetch(&client, common::compare::STORED_KEYS).await;
    let (reads, writes) = common::compare::shaped_statements(&stored);
    for sql in &reads {
        assert_eq!(
            fetch(&client, sql).await,
            fetch(reference, sql).await,
            "{sql}"
        );
    }
    for sql in &writes {
        assert_eq!(simple_execute(&client, sql).await, 1, "{sql}");
        simple_execute(reference, sql).await;
    }
    for (sql, rows) in &common::compare::bulk_statements() {
        assert_eq!(simple_execute(&client, sql).await, *rows, "{sql}");
        simple_execute(reference, sql).await;
    }
    assert_eq!(
        fetch(&client, QUERIES[0]).await,
        fetch(reference, QUERIES[0]).await
    );

    // A transaction over two shards: ROLLBACK leaves nothing, COMMIT both.
    let ours = "SELECT COUNT(*) FROM t_order WHERE status = 'tx'";
    let two = "INSERT INTO t_order (user_id, status) VALUES (1001, 'tx'), (1002, 'tx')";
    client.batch_execute("BEGIN").await.unwrap();
    execute(&client, two).await;
    assert_eq!(fetch(&client, ours).await.1[0][0].as_deref(), Some("2"));
    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(fetch(&client, ours).await.1[0][0].as_deref(), Some("0"));
    client.batch_execute("BEGIN").await.unwrap();
    execute(&client, two).await;
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(fetch(&client, ours).await.1[0][0].as_deref(), Some("2"));
}

/// `t_timed`: a table per month of 2026, the first half on ds_0, by INTERVAL over a timestamp.
const TIMED_TABLE: &str = "    t_timed:
      actualDataNodes: ds_0.t_timed_20260${1..6},ds_1.t_timed_20260${7..9},ds_1.t_timed_2026${10..12}
      tableStrategy:
        standard:
          shardingColumn: created_at
          shardingAlgorithmName: by_month
  shardingAlgorithms:";

const BY_MONTH: &str = "    by_month:
      type: INTERVAL
      props:
        datetime-pattern: \"yyyy-MM-dd HH:mm:ss\"
        datetime-lower: \"2026-01-01 00:00:00\"
        datetime-upper: \"2026-12-31 23:59:59\"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
  keyGenerators:";

/// `y-m-d h:00:00` UTC, as tokio-postgres binds a timestamp: in PostgreSQL's binary form.
fn utc(year: i64, month: i64, day: i64, hour: u64) -> std::time::SystemTime {
    // Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(days as u64 * 86_400 + hour * 3_600)
}

/// INTERVAL over a PostgreSQL timestamp: rows land in their month's table, whether the value
/// is written in the statement or bound in the binary form, and range conditions read only
/// the tables they can match while answering as the plain database does.
async fn ranges(client: &Client, reference: &Client) {
    let create = "CREATE TABLE t_timed (id INT PRIMARY KEY, created_at TIMESTAMP NOT NULL, price NUMERIC(10,2))";
    execute(client, create).await;
    execute(reference, create).await;
    let rows: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "({i}, '2026-{:02}-{:02} {:02}:{:02}:00', {}.{:02})",
                i % 12 + 1,
                (i * 7) % 28 + 1,
                (i * 5) % 24,
                (i * 13) % 60,
                i % 9,
                (i * 31) % 100
            )
        })
        .collect();
    let insert = format!("INSERT INTO t_timed VALUES {}", rows.join(", "));
    execute(client, &insert).await;
    execute(reference, &insert).await;
    let bound = "INSERT INTO t_timed (id, created_at, price) VALUES ($1, $2, 1.5)";
    for i in 40..48i32 {
        let at = utc(2026, i64::from(i % 12 + 1), 28, 23);
        client.execute(bound, &[&i, &at]).await.unwrap();
        reference.execute(bound, &[&i, &at]).await.unwrap();
    }
    for (sql, units) in [
        (
            "SELECT id, created_at, price FROM t_timed WHERE created_at BETWEEN '2026-03-01' AND '2026-04-30 23:59:59' ORDER BY id",
            2,
        ),
        (
            "SELECT id, created_at FROM t_timed WHERE created_at >= TIMESTAMP '2026-11-15' ORDER BY created_at",
            2,
        ),
        (
            "SELECT COUNT(*), SUM(price) FROM t_timed WHERE created_at > '2026-06-30 12:00'::timestamp AND created_at <= '2026-08-01'",
            3,
        ),
    ] {
        assert_eq!(
            fetch(client, sql).await,
            fetch(reference, sql).await,
            "{sql}"
        );
        let (_, preview) = fetch(client, &format!("PREVIEW {sql}")).await;
        assert_eq!(preview.len(), units, "{sql}: {preview:?}");
    }
    // Random ranges, at month boundaries and beyond the configured span: never a row fewer
    // (or more) than the plain database.
    let mut ranges = common::random_select::RandomRanges::new(common::random_select::seed());
    for _ in 0..200 {
        let sql = ranges.timed();
        assert_eq!(
            fetch(client, &sql).await,
            fetch(reference, &sql).await,
            "{sql}"
        );
    }
    // Each month's condition reads its month's table alone: finding every row of the month
    // there shows each row was stored in it.
    for month in 1..=12 {
        let next = match month {
            12 => "2027-01-01".to_owned(),
            _ => format!("2026-{:02}-01", month + 1),
        };
        let sql = format!(
            "SELECT count(*) FROM t_timed WHERE created_at >= '2026-{month:02}-01' \
             AND created_at < '{next}'"
        );
        assert_eq!(
            fetch(client, &sql).await.1,
            [[Some("4".to_owned())]],
            "{sql}"
        );
        assert_eq!(
            fetch(client, &format!("PREVIEW {sql}")).await.1.len(),
            1,
            "{sql}"
        );
    }
    let count = "SELECT COUNT(*) FROM t_timed WHERE created_at BETWEEN $1 AND $2";
    let (from, to) = (utc(2026, 5, 1, 0), utc(2026, 5, 31, 23));
    let through: i64 = client.query_one(count, &[&from, &to]).await.unwrap().get(0);
    let expected: i64 = reference
        .query_one(count, &[&from, &to])
        .await
        .unwrap()
        .get(0);
    assert_eq!((through, expected), (4, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn queries_on_postgres_shards_match_one_database() {
    let shards = PgShards::postgres().await;
    // The default rule (t_order over ds_{0,1}.t_order_{0,1}), plus a broadcast table.
    let yaml = common::postgres::yaml(&shards.url(0), &shards.url(1), false).replace(
        "  shardingAlgorithms:",
        "    t_event:\n      actualDataNodes: ds_${0..1}.t_event\n      databaseStrategy:\n        \
         standard:\n          shardingColumn: user_id\n          \
         shardingAlgorithmName: database_inline\n  shardingAlgorithms:",
    )
    .replace("  shardingAlgorithms:", TIMED_TABLE)
    .replace("  keyGenerators:", BY_MONTH)
        + "- !BROADCAST\n  tables: [t_dict]\n";
    let proxy = PgProxy::start(&yaml).await;
    let reference = Reference::create("keyshard_pg_reference").await;
    scenario(&proxy, &reference.client).await;
    proxy.stop().await;
    reference.drop_database().await;
    shards.cleanup().await;
}

/// A proxy over fresh PostgreSQL shards with pools of one connection per data source, and a
/// client of it.
async fn on_pools_of_one() -> (PgShards, PgProxy, Client) {
    let shards = PgShards::postgres().await;
    let mut yaml = common::postgres::yaml(&shards.url(0), &shards.url(1), false);
    for i in 0..2 {
        let url = format!("url: {}", shards.url(i));
        yaml = yaml.replace(&url, &format!("{url}\n    maxPoolSize: 1"));
    }
    let proxy = PgProxy::start(&yaml).await;
    let client = proxy.client().await;
    (shards, proxy, client)
}

/// Results of the same and of other columns alternate on one shard connection, which keeps
/// the RowDescriptions it met last and reuses their columns (vendor/README.md): each read, in
/// the simple and the extended protocol, answers as a plain PostgreSQL database answers it,
/// every time, whether its columns were met just before, evicted since, or never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn kept_row_descriptions_answer_as_a_plain_database() {
    let (shards, proxy, client) = on_pools_of_one().await;
    let reference = Reference::create("keyshard_pg_kept").await;
    let rows = "INSERT INTO t_order (order_id, user_id, status, amount) VALUES \
                (11, 1, 'a', 5), (12, 1, 'b', 6), (13, 2, 'c', 7), (14, 2, 'd', 8)";
    for sql in [TABLES[0], rows] {
        execute(&client, sql).await;
        execute(&reference.client, sql).await;
    }
    // The same names over other types (JSON, NUMERIC, TIMESTAMPTZ, UUID), other tables'
    // columns, constants.
    let reads = [
        "SELECT order_id, status FROM t_order WHERE user_id = 1 ORDER BY order_id",
        "SELECT order_id, status FROM t_order WHERE user_id = 2 ORDER BY order_id",
        "SELECT status AS order_id, order_id AS status FROM t_order WHERE user_id = 1 ORDER BY status",
        "SELECT 1 AS v",
        "SELECT '{\"a\": 1}'::jsonb AS v",
        "SELECT 1.50 AS v, amount AS w FROM t_order WHERE user_id = 2 ORDER BY amount",
        "SELECT TIMESTAMPTZ '2020-01-02 03:04:05.123+00' AS v, \
         '123e4567-e89b-12d3-a456-426614174000'::uuid AS w, 12.345::numeric(10, 3) AS x",
    ];
    for i in common::KEPT_ORDER {
        let sql = reads[i];
        assert_eq!(
            fetch(&client, sql).await,
            fetch(&reference.client, sql).await,
            "{sql}"
        );
        assert_eq!(
            fetch_binary(&client, sql).await,
            fetch_binary(&reference.client, sql).await,
            "{sql} (extended)"
        );
    }
    drop(client);
    proxy.stop().await;
    reference.drop_database().await;
    shards.cleanup().await;
}

/// Several clients share pools of one connection per data source while they read long results
/// of the columns applications have (NUMERIC prices, TIMESTAMPTZ, JSONB, UUID), which go out as
/// the shards send them: every client's rows, in the simple and the extended protocol, are a
/// plain PostgreSQL database's, each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn typed_streamed_reads_share_pools_of_one_connection() {
    let (shards, proxy, client) = on_pools_of_one().await;
    let reference = Reference::create("keyshard_pg_streamed").await;
    let create = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
                  status VARCHAR(20), price NUMERIC(10, 2), created_at TIMESTAMPTZ, doc JSONB, \
                  ref UUID)";
    execute(&client, create).await;
    execute(&reference.client, create).await;
    // 1,500 rows, about 375 a node: more than a batch (256), so each node's rows stream.
    for chunk in 0..15 {
        let rows: Vec<String> = (1..=100)
            .map(|i| {
                let id = chunk * 100 + i;
                format!(
                    "({id}, {}, 's{id}', {id}.{:02}, '2024-03-{:02} {:02}:{:02}:07.5+00', \
                     '{{\"n\": {id}, \"tags\": [\"a\", null]}}', \
                     '00000000-0000-4000-8000-{id:012}')",
                    1 + (id / 2) % 2,
                    id % 100,
                    1 + id % 28,
                    id % 24,
                    id % 60,
                )
            })
            .collect();
        let insert = format!("INSERT INTO t_order VALUES {}", rows.join(", "));
        assert_eq!(execute(&client, &insert).await, 100);
        assert_eq!(execute(&reference.client, &insert).await, 100);
    }
    let sql = "SELECT * FROM t_order";
    // The shards' order is not defined: rows are compared sorted.
    let sorted = |(names, mut rows): Table| {
        rows.sort();
        (names, rows)
    };
    let text = sorted(fetch(&reference.client, sql).await);
    let binary = sorted(fetch_binary(&reference.client, sql).await);
    assert_eq!(text.1.len(), 1_500);
    let readers = (0..4).map(|_| async {
        let client = proxy.client().await;
        for _ in 0..2 {
            assert_eq!(sorted(fetch(&client, sql).await), text);
            assert_eq!(sorted(fetch_binary(&client, sql).await), binary);
        }
    });
    futures_util::future::join_all(readers).await;
    drop(client);
    proxy.stop().await;
    reference.drop_database().await;
    shards.cleanup().await;
}
