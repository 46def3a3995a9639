"""psycopg 3 through Keyshard's PostgreSQL frontend: RETURNING keys of single INSERTs and of
executemany (pipelined), nested transactions (savepoints), and COPY FROM STDIN. Prints the keys as JSON."""
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
print(json.dumps({"keys": [str(k) for k in keys]}))
