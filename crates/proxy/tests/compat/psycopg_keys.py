"""psycopg 3 through Keyshard's PostgreSQL frontend: RETURNING keys of single INSERTs and of
executemany (pipelined), nested transactions (savepoints), COPY FROM STDIN, and `= ANY(%s)`
with a Python list (routed as an IN list). Prints the keys as JSON."""
import json
import sys

import psycopg

host, port = sys.argv[1], int(sys.argv[2])
conn = psycopg.connect(host=host, port=port, user="root", password="root",
                       dbname="sharding_db", autocommit=True)
insert = "INSERT INTO t_order (user_id, status) VALUES (%s, %s) RETURNING order_id"
keys = [conn.execute(insert, (1, "one")).fetchone()[0]]
with conn.cursor() as cur:
    cur.executemany(insert, [(2, "a"), (3, "b")], returning=True)
    while True:
        keys.append(cur.fetchone()[0])
        if not cur.nextset():
            break

# conn.transaction() nested: the inner one is a savepoint, rolled back by the exception.
with conn.transaction():
    keys.append(conn.execute(insert, (4, "kept")).fetchone()[0])
    try:
        with conn.transaction():
            conn.execute(insert, (5, "undone"))
            raise RuntimeError("undo the inner block")
    except RuntimeError:
        pass

# COPY FROM STDIN (text format, as psycopg writes rows): each row gets a key on its shard.
with conn.cursor() as cur:
    with cur.copy("COPY t_order (user_id, status) FROM STDIN") as copy:
        for user in (6, 7, 8):
            copy.write_row((user, "copied\ttab"))
    assert cur.rowcount == 3, cur.rowcount
copied = conn.execute("SELECT order_id, user_id, status FROM t_order WHERE user_id IN (6, 7, 8)")
rows = copied.fetchall()
assert sorted(r[1] for r in rows) == [6, 7, 8], rows
assert all(r[2] == "copied\ttab" for r in rows), rows
keys += [r[0] for r in rows]

found = conn.execute("SELECT 1 AS a FROM t_order WHERE order_id = %s LIMIT 1", (keys[0],))
assert found.fetchone() == (1,), "exists() of a stored row"
# = ANY(%s) with a Python list: psycopg sends one array parameter; exactly the rows asked for
# come back, and it routes as the IN list of the same values does (PREVIEW's units).
wanted = sorted(keys[:3])
rows = conn.execute("SELECT order_id FROM t_order WHERE order_id = ANY(%s) ORDER BY order_id",
                    (wanted + [1],)).fetchall()
assert [r[0] for r in rows] == wanted, rows
assert conn.execute("SELECT order_id FROM t_order WHERE order_id = ANY(%s)", ([],)).fetchall() == []
assert conn.execute("SELECT ARRAY[1, 2], %s::text[]", (["a b", None],)).fetchone() == ([1, 2], ["a b", None])
one = keys[0]
any_units = conn.execute(
    f"PREVIEW SELECT * FROM t_order WHERE order_id = ANY('{{{one}}}'::bigint[]) AND user_id = ANY(ARRAY[1])").fetchall()
in_units = conn.execute(f"PREVIEW SELECT * FROM t_order WHERE order_id IN ({one}) AND user_id IN (1)").fetchall()
assert len(any_units) == len(in_units) == 1, (any_units, in_units)

print(json.dumps({"keys": [str(k) for k in keys]}))
