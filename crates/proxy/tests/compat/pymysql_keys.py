"""PyMySQL through Keyshard's MySQL frontend: the keys it reports for single-row INSERTs,
executemany (rewritten into one multi-row INSERT), a savepoint rolled back inside a
transaction, and several statements in one query. Prints the keys acknowledged as JSON."""
import json
import sys

import pymysql
from pymysql.constants import CLIENT

host, port = sys.argv[1], int(sys.argv[2])
conn = pymysql.connect(host=host, port=port, user="root", password="root",
                       database="sharding_db", autocommit=True,
                       client_flag=CLIENT.MULTI_STATEMENTS)
keys = []
with conn.cursor() as cur:
    cur.execute("INSERT INTO t_order (user_id, status) VALUES (%s, %s)", (1, "one"))
    keys.append(cur.lastrowid)
    cur.executemany("INSERT INTO t_order (user_id, status) VALUES (%s, %s)",
                    [(2, "a"), (3, "b"), (4, "c")])
    keys += [cur.lastrowid + i for i in range(3)]

    # Django's exists() and Rails' exists?: answered by the shards, not by the proxy.
    cur.execute("SELECT 1 AS a FROM t_order WHERE order_id = %s LIMIT 1", (keys[0],))
    assert cur.fetchone() == (1,), "exists() of a stored row"
    cur.execute("SELECT 1 AS a FROM t_order WHERE order_id = %s LIMIT 1", (-1,))
    assert cur.fetchone() is None, "exists() of a missing row"

    # Django's atomic() inside atomic(): a savepoint rolled back, the outer work kept.
    conn.begin()
    cur.execute("INSERT INTO t_order (user_id, status) VALUES (5, 'kept')")
    keys.append(cur.lastrowid)
    cur.execute("SAVEPOINT s1")
    cur.execute("INSERT INTO t_order (user_id, status) VALUES (6, 'undone')")
    cur.execute("ROLLBACK TO SAVEPOINT s1")
    conn.commit()

    cur.execute("INSERT INTO t_order (user_id, status) VALUES (7, 'multi'); "
                "SELECT LAST_INSERT_ID()")
    assert cur.nextset(), "the second statement's result"
    keys.append(cur.fetchone()[0])
print(json.dumps({"keys": [str(k) for k in keys]}))
