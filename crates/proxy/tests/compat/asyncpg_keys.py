"""asyncpg through Keyshard's PostgreSQL frontend: RETURNING keys and a nested transaction
(savepoint) rolled back, and `= ANY($1)` with a list (asyncpg is told $1 is bigint[]). Prints the
keys as JSON."""
import asyncio
import json
import sys

import asyncpg

INSERT = "INSERT INTO t_order (user_id, status) VALUES ($1, $2) RETURNING order_id"


async def main(host, port):
    conn = await asyncpg.connect(host=host, port=port, user="root", password="root",
                                 database="sharding_db", command_timeout=10)
    keys = [await conn.fetchval(INSERT, 1, "one")]
    async with conn.transaction():
        keys.append(await conn.fetchval(INSERT, 2, "kept"))
        try:
            async with conn.transaction():
                await conn.execute(INSERT, 3, "undone")
                raise RuntimeError("undo the inner block")
        except RuntimeError:
            pass
    # = ANY($1) with a list: exactly the rows asked for.
    wanted = sorted(keys)
    rows = await conn.fetch("SELECT order_id FROM t_order WHERE order_id = ANY($1) ORDER BY order_id",
                            wanted + [1])
    assert [r[0] for r in rows] == wanted, rows
    assert await conn.fetch("SELECT order_id FROM t_order WHERE order_id = ANY($1)", []) == []
    one = await conn.fetch(
        "SELECT order_id FROM t_order WHERE order_id = ANY($1) AND user_id = ANY($2)", keys[:1], [1])
    assert [r[0] for r in one] == keys[:1], one
    # PREVIEW and a computed column: asyncpg describes before it executes, so the columns
    # must be known before the statement runs.
    preview = await conn.fetch(
        f"PREVIEW SELECT order_id FROM t_order WHERE order_id = {keys[0]} AND user_id = 1")
    assert len(preview) == 1 and preview[0]["data_source_name"], preview
    loud = await conn.fetch("SELECT upper(status) AS loud FROM t_order WHERE user_id = $1", 1)
    assert [r["loud"] for r in loud] == ["ONE"], loud
    returned = await conn.fetchrow(
        "INSERT INTO t_order (user_id, status) VALUES ($1, 'four') RETURNING order_id, upper(status)", 4)
    assert returned["upper"] == "FOUR", returned
    keys.append(returned["order_id"])
    await conn.close()
    return keys


keys = asyncio.run(main(sys.argv[1], int(sys.argv[2])))
print(json.dumps({"keys": [str(k) for k in keys]}))
