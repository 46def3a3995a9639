// node mysql2 with its defaults (keys as JavaScript numbers, no bigNumberStrings) through a
// Keyshard whose SNOWFLAKE layout keeps keys below 2^53: insertId of query() and execute(),
// and of a multi-row INSERT (first + i), all exact. Prints the keys as JSON.
const mysql = require('mysql2/promise');

async function main() {
  const [host, port] = process.argv.slice(2);
  const conn = await mysql.createConnection({
    host, port: Number(port), user: 'root', password: 'root', database: 'sharding_db',
  });
  const keys = [];
  const insert = 'INSERT INTO t_order (user_id, status) VALUES (?, ?)';
  for (let i = 0; i < 20; i++) {
    const [queried] = await conn.query(insert, [i, 'query']);
    const [executed] = await conn.execute(insert, [i, 'execute']);
    keys.push(queried.insertId, executed.insertId);
  }
  const [many] = await conn.query(
    "INSERT INTO t_order (user_id, status) VALUES (3, 'a'), (4, 'b'), (5, 'c')");
  keys.push(many.insertId, many.insertId + 1, many.insertId + 2);
  const [rows] = await conn.query('SELECT order_id FROM t_order');
  await conn.end();
  if (!keys.every(Number.isSafeInteger) || !rows.every((r) => Number.isSafeInteger(r.order_id))) {
    throw new Error(`a key beyond 2^53: ${JSON.stringify(keys)}`);
  }
  console.log(JSON.stringify({ keys: keys.map(String) }));
}

main().catch((e) => { console.error(e); process.exit(1); });
