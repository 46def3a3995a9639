"""asyncpg through Keyshard's PostgreSQL frontend: RETURNING keys and a nested transaction
(savepoint) rolled back. Prints the keys as JSON."""
import asyncio
import json
import sys

import asyncpg

INSERT = "INSERT INTO t_order (user_id, status) VALUES ($1, $2) RETURNING order_id"


async def main(host, port):
    conn = await asyncpg.connect(host=host, port=port, user="root", password="root",
                                 database="sharding_db")
    keys = [await conn.fetchval(INSERT, 1, "one")]
    async with conn.transaction():
        keys.append(await conn.fetchval(INSERT, 2, "kept"))
        try:
            async with conn.transaction():
                await conn.execute(INSERT, 3, "undone")
                raise RuntimeError("undo the inner block")
        except RuntimeError:
            pass
    await conn.close()
    return keys


keys = asyncio.run(main(sys.argv[1], int(sys.argv[2])))
print(json.dumps({"keys": [str(k) for k in keys]}))
