// node mysql2 through Keyshard's MySQL frontend: insertId of query() and of execute() (a
// prepared statement whose numbers arrive as DOUBLE), and of a multi-row INSERT. Keys exceed
// 2^53, so they are asked for as strings. Prints the keys as JSON.
const mysql = require('mysql2/promise');

async function main() {
  const [host, port] = process.argv.slice(2);
  const conn = await mysql.createConnection({
    host, port: Number(port), user: 'root', password: 'root', database: 'sharding_db',
    supportBigNumbers: true, bigNumberStrings: true,
  });
  const keys = [];
  const insert = 'INSERT INTO t_order (user_id, status) VALUES (?, ?)';
  const [queried] = await conn.query(insert, [1, 'query']);
  keys.push(String(queried.insertId));
  const [executed] = await conn.execute(insert, [2, 'execute']);
  keys.push(String(executed.insertId));
  const [many] = await conn.query(
    "INSERT INTO t_order (user_id, status) VALUES (3, 'a'), (4, 'b')");
  const first = BigInt(many.insertId);
  keys.push(String(first), String(first + 1n));
  await conn.end();
  console.log(JSON.stringify({ keys }));
}

main().catch((e) => { console.error(e); process.exit(1); });
