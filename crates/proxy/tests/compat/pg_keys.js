// node pg through Keyshard's PostgreSQL frontend: RETURNING keys (BIGINT arrives as a string,
// exact), a savepoint rolled back inside a transaction, and `= ANY($1)` with a JavaScript array
// (node pg sends it as the text '{"1","2"}' of an untyped parameter). Prints the keys as JSON.
const { Client } = require('pg');

async function main() {
  const [host, port] = process.argv.slice(2);
  const client = new Client({
    host, port: Number(port), user: 'root', password: 'root', database: 'sharding_db',
  });
  await client.connect();
  const insert = 'INSERT INTO t_order (user_id, status) VALUES ($1, $2) RETURNING order_id';
  const keys = [(await client.query(insert, [1, 'pg'])).rows[0].order_id];
  await client.query('BEGIN');
  keys.push((await client.query(insert, [2, 'kept'])).rows[0].order_id);
  await client.query('SAVEPOINT a');
  await client.query(insert, [3, 'undone']);
  await client.query('ROLLBACK TO SAVEPOINT a');
  await client.query('COMMIT');

  // = ANY($1) with an array: exactly the rows asked for; one key and its user reach one node.
  const wanted = [...keys].sort();
  const found = await client.query(
    'SELECT order_id FROM t_order WHERE order_id = ANY($1) ORDER BY order_id', [[...wanted, '1']]);
  const got = found.rows.map((r) => r.order_id);
  if (JSON.stringify(got) !== JSON.stringify(wanted.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)))) {
    throw new Error(`= ANY found ${got}, wanted ${wanted}`);
  }
  const arrays = await client.query("SELECT ARRAY[1, 2] AS a, ARRAY['x', NULL] AS b");
  if (JSON.stringify(arrays.rows[0]) !== JSON.stringify({ a: [1, 2], b: ['x', null] })) {
    throw new Error(`array results ${JSON.stringify(arrays.rows[0])}`);
  }
  const units = await client.query(
    `PREVIEW SELECT * FROM t_order WHERE order_id = ANY('{${keys[0]}}'::int8[]) AND user_id = ANY(ARRAY[1])`);
  if (units.rows.length !== 1) {
    throw new Error(`= ANY of one key reaches ${units.rows.length} nodes`);
  }
  await client.end();
  console.log(JSON.stringify({ keys: keys.map(String) }));
}

main().catch((e) => { console.error(e); process.exit(1); });
