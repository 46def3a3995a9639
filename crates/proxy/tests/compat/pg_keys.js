// node pg through Keyshard's PostgreSQL frontend: RETURNING keys (BIGINT arrives as a string,
// exact) and a savepoint rolled back inside a transaction. Prints the keys as JSON.
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
  await client.end();
  console.log(JSON.stringify({ keys: keys.map(String) }));
}

main().catch((e) => { console.error(e); process.exit(1); });
