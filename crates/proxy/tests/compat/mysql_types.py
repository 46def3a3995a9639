"""Every column type read by real MySQL drivers through Keyshard and from one plain MariaDB
database holding the same rows, compared value by value and type by type: PyMySQL and
mysqlclient (text protocol), mysql-connector-python plain and with a prepared cursor (binary
protocol), node mysql2 with queries (text) and prepared statements (binary). argv: host proxy_port plain_port plain_database (the plain server's user is root,
without a password). Prints each difference and exits 1 on any; prints {"keys": []} when all
agree."""
import sys

import MySQLdb
import mysql.connector
import pymysql

from differential import compare, inserts, node_reader

host, port, plain_port, plain_db = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

# (column, type, values for rows 1..5): typical, edge and NULL values.
COLUMNS = [
    ("c_tiny", "TINYINT", ["-128", "127", "0", "NULL", "7"]),
    ("c_usmall", "SMALLINT UNSIGNED", ["65535", "0", "1", "NULL", "2"]),
    ("c_ubig", "BIGINT UNSIGNED", ["18446744073709551615", "0", "1", "NULL", "2"]),
    ("c_dec", "DECIMAL(10,2)", ["9.50", "-12345678.99", "0.00", "NULL", "1.05"]),
    ("c_dec65", "DECIMAL(65,30)", ["12345678901234567890123456789012345.123456789012345678901234567890",
                                   "-0.000000000000000000000000000001", "0", "NULL", "1"]),
    ("c_float", "FLOAT", ["0.1", "-3.40282e38", "1.17549e-38", "NULL", "1.5"]),
    ("c_double", "DOUBLE", ["0.1", "1.7976931348623157e308", "-2.2250738585072014e-308", "NULL", "1e15"]),
    ("c_bit", "BIT(8)", ["b'10100101'", "b'0'", "b'11111111'", "NULL", "b'1'"]),
    ("c_date", "DATE", ["'2024-02-29'", "'1000-01-01'", "'9999-12-31'", "NULL", "'2000-01-01'"]),
    ("c_dt", "DATETIME(6)", ["'2024-02-29 12:34:56.123456'", "'1000-01-01 00:00:00'",
                             "'9999-12-31 23:59:59.999999'", "NULL", "'2000-01-01 00:00:00.5'"]),
    ("c_ts", "TIMESTAMP(3) NULL", ["'2024-02-29 12:34:56.789'", "'1970-01-02 00:00:00'",
                                   "'2038-01-19 03:14:07.999'", "NULL", "'2000-01-01 00:00:00'"]),
    ("c_time", "TIME(6)", ["'12:34:56.5'", "'-838:59:59'", "'838:59:59'", "NULL", "'-00:00:01'"]),
    ("c_year", "YEAR", ["2024", "1901", "2155", "NULL", "0"]),
    ("c_char", "CHAR(10) CHARACTER SET utf8mb4", ["'a😀b'", "''", "'0123456789'", "NULL", "'ä'"]),
    ("c_varchar", "VARCHAR(100) CHARACTER SET utf8mb4", ["'𝄞 music 😀'", "''", "'plain'", "NULL", "'Ünï'"]),
    ("c_bin_ci", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", ["'Case'", "''", "'😀'", "NULL", "'x'"]),
    ("c_text", "TEXT", ["'😀😀'", "''", "REPEAT('x', 1000)", "NULL", "'line\\nbreak'"]),
    ("c_latin1", "VARCHAR(20) CHARACTER SET latin1", ["'café'", "'ÿ'", "''", "NULL", "'p'"]),
    ("c_binary", "BINARY(4)", ["x'00010203'", "x'FF'", "''", "NULL", "'ab'"]),
    ("c_varbinary", "VARBINARY(16)", ["x'00FF00'", "''", "x'DEADBEEF'", "NULL", "'z'"]),
    ("c_blob", "BLOB", ["x'DEADBEEF00'", "''", "REPEAT(x'00', 300)", "NULL", "'b'"]),
    ("c_enum", "ENUM('small','medium','large')", ["'small'", "'large'", "'medium'", "NULL", "'small'"]),
    ("c_set", "SET('a','b','c')", ["'a,c'", "''", "'a,b,c'", "NULL", "'b'"]),
    ("c_json", "JSON", ["'{\"a\": 1, \"b\": [true, null]}'", "'[]'", "'\"😀\"'", "NULL", "'{}'"]),
    ("c_uuid", "UUID", ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'",
                        "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "NULL", "'123e4567-e89b-12d3-a456-426614174000'"]),
]
CREATE = ("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, "
          + ", ".join(f"{name} {ty}" for name, ty, _ in COLUMNS) + ")")
ROWS = inserts(COLUMNS, 5)
# Each column merged over every node (one at a time: mysql-connector's pure binary-protocol
# reader fails on some wide rows of a plain database too), a row of one node, and expressions.
QUERIES = [f"SELECT order_id, {name} FROM t_order ORDER BY order_id" for name, _, _ in COLUMNS] + [
    "SELECT order_id, c_dec, c_dt, c_bin_ci, c_json, c_uuid FROM t_order "
    "WHERE order_id = 2 AND user_id = 2",
    "SELECT order_id AS id, CONCAT(c_bin_ci, '!') AS e, NOW(6) IS NOT NULL AS n "
    "FROM t_order ORDER BY order_id",
    "SELECT MIN(c_dt), MAX(c_float), SUM(c_dec), COUNT(c_json) FROM t_order",
]


TARGETS = {
    "proxy": {"port": port, "user": "root", "password": "root", "database": "sharding_db"},
    "plain": {"port": plain_port, "user": "root", "password": "", "database": plain_db},
}


def pymysql_connect(target):
    return pymysql.connect(host=host, autocommit=True, **TARGETS[target])


def mysqlclient_connect(target):
    t = TARGETS[target]
    return MySQLdb.connect(host=host, port=t["port"], user=t["user"], passwd=t["password"],
                           db=t["database"], autocommit=True)


def connector_connect(target):
    return mysql.connector.connect(host=host, use_pure=True, autocommit=True, **TARGETS[target])


def setup(conn):
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'")
    cur.execute(CREATE)
    for row in ROWS:
        cur.execute(row)


def reader(connect, **cursor_options):
    def read(target):
        conn = connect(target)
        out = []
        for sql in QUERIES:
            cur = conn.cursor(**cursor_options)
            cur.execute(sql)
            names = [d[0] for d in cur.description]
            rows = [[(type(v).__name__, repr(v)) for v in row] for row in cur.fetchall()]
            out.append((sql, names, rows))
        return out
    return read


NODE = {target: {"host": host, **t} for target, t in TARGETS.items()}
# BIGINT and DECIMAL as strings: exact, as mysql2 documents for such columns. mysql2 parses a
# MariaDB JSON column (a LONGTEXT on the wire) by MariaDB's extended type metadata.
for t in NODE.values():
    t.update(supportBigNumbers=True, bigNumberStrings=True)
NODE_QUERIES = [(sql, []) for sql in QUERIES]

for target in TARGETS:
    setup(pymysql_connect(target))
compare([
    ("PyMySQL", reader(pymysql_connect)),
    ("mysqlclient", reader(mysqlclient_connect)),
    ("mysql-connector", reader(connector_connect)),
    ("mysql-connector prepared", reader(connector_connect, prepared=True)),
    ("node mysql2", node_reader("mysql2", NODE, NODE_QUERIES)),
    ("node mysql2 prepared", node_reader("mysql2-prepared", NODE, NODE_QUERIES)),
])
