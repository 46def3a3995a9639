"""mysql-connector-python (pure Python) or mysqlclient (libmariadb) through Keyshard's MySQL
frontend: lastrowid of single-row INSERTs, of executemany (both rewrite it into one multi-row
INSERT) and, for Connector/Python, of a server-side prepared statement. argv: host port library
(connector or mysqlclient). Prints the keys acknowledged as JSON."""
import json
import sys

host, port, library = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if library == "connector":
    import mysql.connector

    conn = mysql.connector.connect(host=host, port=port, user="root", password="root",
                                   database="sharding_db", autocommit=True,
                                   use_pure=True)
else:
    import MySQLdb

    conn = MySQLdb.connect(host=host, port=port, user="root", password="root",
                           database="sharding_db", autocommit=True)

keys = []
cur = conn.cursor()
cur.execute("INSERT INTO t_order (user_id, status) VALUES (%s, %s)", (1, "one"))
keys.append(cur.lastrowid)
cur.executemany("INSERT INTO t_order (user_id, status) VALUES (%s, %s)",
                [(2, "a"), (3, "b"), (4, "c")])
keys += [cur.lastrowid + i for i in range(3)]
if library == "connector":
    prepared = conn.cursor(prepared=True)
    prepared.execute("INSERT INTO t_order (user_id, status) VALUES (%s, %s)", (5, "prepared"))
    keys.append(prepared.lastrowid)
cur.execute("SELECT 1 AS a FROM t_order WHERE order_id = %s LIMIT 1", (keys[0],))
assert cur.fetchone() == (1,), "exists() of a stored row"
print(json.dumps({"keys": [str(k) for k in keys]}))
