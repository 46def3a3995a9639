#!/usr/bin/env bash
# Reads over several shards that Keyshard merges as they come (DISTINCT aggregates, HAVING,
# UNION ALL, UNION, ordered GROUP_CONCAT, expressions over aggregates) against the same reads gathered (made to by a `+ 0` or a no-op subquery,
# which only a database evaluates) and against one plain MariaDB table holding every row.
# Each statement runs RUNS times (default 200) on one connection after a warm-up; it prints
# milliseconds per statement, and checks that the three answer the same rows.
#   bash bench/merges.sh [runs]
# Needs MariaDB on 127.0.0.1:3306 (root, no password) and PyMySQL (the compatibility suite's
# venv, .ci/compat.sh). Rows: bench/lib.sh's read rows, 20,000 orders of 1,000 users.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-200}
MYSQL="mariadb --protocol=tcp -h127.0.0.1 -P3306 -uroot"
$MYSQL -e "DROP DATABASE IF EXISTS keyshard_bench_direct; CREATE DATABASE keyshard_bench_direct;
  CREATE TABLE keyshard_bench_direct.t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32));
  DROP DATABASE IF EXISTS keyshard_bench_0; CREATE DATABASE keyshard_bench_0;
  DROP DATABASE IF EXISTS keyshard_bench_1; CREATE DATABASE keyshard_bench_1;"
keyshard_bin
bench_python
WORK=$(mktemp -d)
"$KEYSHARD_BIN" serve --config bench/keyshard-mariadb.yaml > "$WORK/keyshard.log" 2>&1 &
KS=$!
trap 'kill $KS 2>/dev/null || true; rm -rf "$WORK"' EXIT
PROXY="mariadb --protocol=tcp -h127.0.0.1 -P3310 -uroot -proot sharding_db"
for _ in $(seq 1 100); do
  $PROXY -e "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
$PROXY -e "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"
read_rows_sql t_order > "$WORK/rows.sql"
$MYSQL keyshard_bench_direct < "$WORK/rows.sql"
$PROXY < "$WORK/rows.sql"

"$PYTHON" - "$RUNS" <<'PY'
import sys
import time

import pymysql

runs = int(sys.argv[1])
# (what, the statement Keyshard merges, the same statement made to be gathered)
cases = [
    ("COUNT(DISTINCT)",
     "SELECT COUNT(DISTINCT user_id) FROM t_order",
     "SELECT COUNT(DISTINCT user_id) + 0 FROM t_order"),
    ("GROUP BY … HAVING",
     "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) >= 20 AND MIN(order_id) > 1",
     "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) + 0 >= 20 AND MIN(order_id) > 1"),
    ("UNION ALL",
     "SELECT order_id FROM t_order WHERE user_id <= 20 UNION ALL SELECT order_id FROM t_order WHERE user_id > 980",
     "SELECT order_id FROM t_order WHERE user_id <= 20 UNION ALL SELECT order_id FROM t_order WHERE user_id > 980 AND order_id NOT IN (SELECT 0)"),
    ("UNION",
     "SELECT user_id FROM t_order WHERE user_id <= 100 UNION SELECT user_id FROM t_order WHERE user_id > 900",
     "SELECT user_id FROM t_order WHERE user_id <= 100 UNION SELECT user_id FROM t_order WHERE user_id > 900 AND order_id NOT IN (SELECT 0)"),
    ("GROUP_CONCAT",
     "SELECT user_id, GROUP_CONCAT(status ORDER BY order_id SEPARATOR ' ') FROM t_order WHERE user_id <= 100 GROUP BY user_id",
     "SELECT user_id, GROUP_CONCAT(status ORDER BY order_id SEPARATOR ' ') FROM t_order WHERE user_id <= 100 AND order_id NOT IN (SELECT 0) GROUP BY user_id"),
    ("SUM(…) / COUNT(*)",
     "SELECT user_id, SUM(order_id) / COUNT(*), COUNT(*) >= 20 FROM t_order GROUP BY user_id",
     "SELECT user_id, SUM(order_id) / COUNT(*), COUNT(*) >= 20 FROM t_order WHERE order_id NOT IN (SELECT 0) GROUP BY user_id"),
]
proxy = pymysql.connect(host="127.0.0.1", port=3310, user="root", password="root",
                        database="sharding_db")
direct = pymysql.connect(host="127.0.0.1", port=3306, user="root",
                         database="keyshard_bench_direct")


def timed(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    rows = sorted(map(tuple, cur.fetchall()))
    started = time.perf_counter()
    for _ in range(runs):
        cur.execute(sql)
        cur.fetchall()
    return (time.perf_counter() - started) / runs * 1000, rows


for what, merged, gathered in cases:
    (m, m_rows), (g, g_rows), (d, d_rows) = (
        timed(proxy, merged), timed(proxy, gathered), timed(direct, merged))
    assert m_rows == d_rows and g_rows == d_rows, what
    print(f"{what:18} merged {m:7.2f} ms   gathered {g:7.2f} ms   one MariaDB {d:6.2f} ms"
          f"   ({len(d_rows)} rows)")
PY
