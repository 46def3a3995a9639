"""Every column type read by real PostgreSQL drivers through Keyshard and from one plain
PostgreSQL database holding the same rows, compared value by value and type by type: psycopg 3
with text results (its default) and with binary ones, with and without a parameter, asyncpg
(binary), node pg (text) and pgjdbc (text, and binary with prepareThreshold=-1). argv: host proxy_port plain_port plain_database (the plain server's user is
postgres, trusted). Prints each difference and exits 1 on any; prints {"keys": []} when all
agree."""
import asyncio
import datetime
import sys

import asyncpg
import psycopg
from psycopg.types.enum import EnumInfo, register_enum

from differential import compare, inserts, node_reader, pgjdbc_reader

host, port, plain_port, plain_db = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

# (column, type, values for rows 1..5): typical, edge and NULL values, within what the drivers'
# Python types hold (no BC or infinite dates, intervals under a million days: type matrix
# tests/types.rs compares those on the wire).
COLUMNS = [
    ("c_int2", "int2", ["-32768", "32767", "0", "NULL", "7"]),
    ("c_int8", "int8", ["-9223372036854775808", "9223372036854775807", "0", "NULL", "1"]),
    ("c_numeric", "numeric", ["'NaN'", "'-Infinity'", "123456789012345678901234567890.123456789", "NULL", "0.10"]),
    ("c_num_p", "numeric(10,2)", ["9.50", "-12345678.99", "0", "NULL", "1.05"]),
    ("c_float4", "float4", ["0.1", "'-Infinity'", "3.4028235e38", "NULL", "'NaN'"]),
    ("c_float8", "float8", ["0.1", "1.7976931348623157e308", "5e-324", "NULL", "'-0'"]),
    ("c_bool", "bool", ["true", "false", "true", "NULL", "false"]),
    ("c_text", "text", ["'😀 text'", "''", "repeat('x', 1000)", "NULL", "E'line\\nbreak'"]),
    ("c_varchar", "varchar(20)", ["'𝄞 music'", "''", "'plain'", "NULL", "'Ünï'"]),
    ("c_char", "char(5)", ["'ab'", "''", "'abcde'", "NULL", "'ä'"]),
    ("c_bytea", "bytea", ["'\\x00ff'", "''", "'\\xdeadbeef'", "NULL", "'\\x01'"]),
    ("c_date", "date", ["'2024-02-29'", "'0001-01-01'", "'9999-12-31'", "NULL", "'2000-01-01'"]),
    ("c_time", "time(3)", ["'12:34:56.789'", "'00:00:00'", "'23:59:59.999'", "NULL", "'23:59:59'"]),
    ("c_timetz", "timetz", ["'12:34:56+05:30'", "'00:00:00-12'", "'23:59:59+14'", "NULL", "'01:00:00Z'"]),
    ("c_ts", "timestamp(6)", ["'2024-02-29 12:34:56.123456'", "'0001-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "NULL", "'2000-01-01'"]),
    ("c_tstz", "timestamptz", ["'2024-02-29 12:34:56.5+02'", "'1970-01-01 00:00:00Z'", "'9999-12-30 23:59:59Z'", "NULL", "'2000-01-01 00:00:00-08'"]),
    ("c_interval", "interval", ["'3 days 04:05:06.7'", "'-1000 days'", "'0'", "NULL", "'P1DT2H'"]),
    ("c_uuid", "uuid", ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "NULL", "'123e4567-e89b-12d3-a456-426614174000'"]),
    ("c_json", "json", ["'{\"a\": 1, \"b\": [true, null]}'", "'[]'", "'\"😀\"'", "NULL", "'{}'"]),
    ("c_jsonb", "jsonb", ["'{\"a\": 1.50, \"b\": [true, null]}'", "'[]'", "'\"😀\"'", "NULL", "'{}'"]),
    ("c_inet", "inet", ["'192.168.1.1/24'", "'::1'", "'10.0.0.1'", "NULL", "'2001:db8::/32'"]),
    ("c_cidr", "cidr", ["'192.168.1.0/24'", "'::/0'", "'10.0.0.0/8'", "NULL", "'2001:db8::/32'"]),
    ("c_macaddr", "macaddr", ["'08:00:2b:01:02:03'", "'00:00:00:00:00:00'", "'ff:ff:ff:ff:ff:ff'", "NULL", "'01:02:03:04:05:06'"]),
    ("c_bit", "bit(4)", ["B'1010'", "B'0000'", "B'1111'", "NULL", "B'0001'"]),
    ("c_varbit", "varbit", ["B'101'", "B''", "B'1111111111'", "NULL", "B'0'"]),
    ("c_range", "int4range", ["'[1,5)'", "'empty'", "'(,10]'", "NULL", "'[2,3]'"]),
    ("c_tsrange", "tsrange", ["'[2024-01-01,2024-02-01 10:00)'", "'empty'", "'(2000-01-01,)'", "NULL", "'[2024-01-01,2024-01-01]'"]),
    ("c_int4s", "int4[]", ["'{1,2,3}'", "'{}'", "'{{1,2},{3,4}}'", "NULL", "'[0:1]={7,8}'"]),
    ("c_texts", "text[]", ["'{a,\"b c\",NULL}'", "'{}'", "'{\"\"}'", "NULL", "'{x}'"]),
    ("c_numerics", "numeric[]", ["'{1.5,NaN}'", "'{}'", "'{0}'", "NULL", "'{-1.25}'"]),
    ("c_dates", "date[]", ["'{2024-02-29,9999-12-31}'", "'{}'", "'{2000-01-01}'", "NULL", "'{1999-12-31}'"]),
    ("c_mood", "mood", ["'sad'", "'happy'", "'ok'", "NULL", "'sad'"]),
    ("c_moods", "mood[]", ["'{sad,happy}'", "'{}'", "'{ok,NULL}'", "NULL", "'{happy}'"]),
    ("c_price", "price", ["0.50", "999999.99", "0", "NULL", "12.30"]),
    ("c_uuids", "uuid[]", ["'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'", "'{}'", "'{00000000-0000-0000-0000-000000000000}'", "NULL", "'{}'"]),
]
# A user-defined enum and a domain, created on every shard through Keyshard as on the plain
# database.
TYPES = ["CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
         "CREATE DOMAIN price AS numeric(8,2) CHECK (VALUE >= 0)"]
CREATE = ("CREATE TABLE t_order (order_id int8 PRIMARY KEY, user_id int4 NOT NULL, "
          + ", ".join(f"{name} {ty}" for name, ty, _ in COLUMNS) + ")")
ROWS = inserts(COLUMNS, 5)
# Each column merged over every node, a row of one node (also through a parameter), and
# expressions; asyncpg and psycopg's binary cursors read them in the binary format.
QUERIES = [(f"SELECT order_id, {name} FROM t_order ORDER BY order_id", ()) for name, _, _ in COLUMNS] + [
    ("SELECT * FROM t_order WHERE order_id = 2 AND user_id = 2", ()),
    ("SELECT * FROM t_order WHERE order_id = %s", (3,)),
    ("SELECT order_id AS id, c_num_p * 2 AS doubled, c_tstz + interval '1 day' AS later, "
     "now() IS NOT NULL AS n FROM t_order ORDER BY order_id", ()),
    ("SELECT min(c_tstz), max(c_float8), sum(c_num_p), sum(c_float4), count(c_jsonb) FROM t_order", ()),
]


def cell(value):
    # A zoned timestamp by its instant and offset: psycopg names the zone after the session's
    # TimeZone report (a plain server's default `Etc/UTC`, Keyshard's shard setting `UTC`).
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return ("datetime", value.astimezone(datetime.timezone.utc).isoformat(), value.utcoffset())
    return (type(value).__name__, repr(value))


def psycopg_read(dsn, binary):
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        # As an application does for its enums: the type read from the catalog (through
        # Keyshard: the default data source's), its labels then loaded as a Python Enum.
        register_enum(EnumInfo.fetch(conn, "mood"), conn)
        for sql, params in QUERIES:
            cur = conn.cursor(binary=binary)
            cur.execute(sql, params or None)
            names = [d.name for d in cur.description]
            out.append((sql, names, [[cell(v) for v in row] for row in cur.fetchall()]))
    return out


async def asyncpg_read(dsn):
    out = []
    conn = await asyncpg.connect(dsn)
    try:
        for sql, params in QUERIES:
            sql = sql.replace("%s", "$1")
            statement = await conn.prepare(sql)
            names = [a.name for a in statement.get_attributes()]
            rows = await statement.fetch(*params)
            out.append((sql, names, [[cell(v) for v in row.values()] for row in rows]))
    finally:
        await conn.close()
    return out


DSNS = {
    "proxy": f"host={host} port={port} user=root password=root dbname=sharding_db",
    "plain": f"host={host} port={plain_port} user=postgres dbname={plain_db}",
}


def url(dsn):
    parts = dict(p.split("=", 1) for p in dsn.split())
    return (f"postgresql://{parts['user']}:{parts.get('password', '')}@{parts['host']}:"
            f"{parts['port']}/{parts['dbname']}")


for dsn in DSNS.values():
    with psycopg.connect(dsn, autocommit=True) as conn:
        for ty in TYPES:
            conn.execute(ty)
        conn.execute(CREATE)
        for row in ROWS:
            conn.execute(row)
NODE = {
    "proxy": {"host": host, "port": port, "user": "root", "password": "root", "database": "sharding_db"},
    "plain": {"host": host, "port": plain_port, "user": "postgres", "database": plain_db},
}
NODE_QUERIES = [(sql.replace("%s", "$1"), list(params)) for sql, params in QUERIES]
# prepareThreshold=-1: binary results from the first execution; 0: never server-prepared, text.
JDBC = {
    threshold: {
        "proxy": (f"jdbc:postgresql://{host}:{port}/sharding_db?prepareThreshold={threshold}",
                  "root", "root"),
        "plain": (f"jdbc:postgresql://{host}:{plain_port}/{plain_db}?prepareThreshold={threshold}",
                  "postgres", ""),
    }
    for threshold in (0, -1)
}
compare([
    ("psycopg text", lambda target: psycopg_read(DSNS[target], False)),
    ("psycopg binary", lambda target: psycopg_read(DSNS[target], True)),
    ("asyncpg", lambda target: asyncio.run(asyncpg_read(url(DSNS[target])))),
    ("node pg", node_reader("pg", NODE, NODE_QUERIES)),
    ("pgjdbc text", pgjdbc_reader(JDBC[0], QUERIES)),
    ("pgjdbc binary", pgjdbc_reader(JDBC[-1], QUERIES)),
])
