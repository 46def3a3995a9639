// The node drivers' reader for the *_types.py scripts: runs the queries given on stdin as JSON
// ({"connection": {...}, "queries": [[sql, [params]], ...]}) with node pg (argv[2] "pg") or
// mysql2's text protocol ("mysql2") or its prepared statements ("mysql2-prepared"), and prints
// [[sql, column names, rows of [type, value]]] as JSON for differential.py to compare.
const driver = process.argv[2];

// A value as its JavaScript type and an exact spelling of it.
function cell(value) {
  if (value === null) return ['null', 'null'];
  if (Buffer.isBuffer(value)) return ['Buffer', value.toString('hex')];
  if (value instanceof Date) {
    return ['Date', Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()];
  }
  if (typeof value === 'bigint') return ['bigint', value.toString()];
  if (typeof value === 'number') return ['number', Object.is(value, -0) ? '-0' : String(value)];
  if (typeof value !== 'object') return [typeof value, String(value)];
  const name = value.constructor ? value.constructor.name : 'Object';
  if (Array.isArray(value)) return [name, JSON.stringify(value.map(cell))];
  return [name, JSON.stringify(Object.entries(value).map(([k, v]) => [k, cell(v)]))];
}

async function readPg(connection, queries) {
  const { Client } = require('pg');
  const client = new Client(connection);
  await client.connect();
  const out = [];
  try {
    for (const [sql, params] of queries) {
      const result = await client.query(sql, params);
      out.push([sql, result.fields.map((f) => f.name),
        result.rows.map((row) => result.fields.map((f) => cell(row[f.name])))]);
    }
  } finally {
    await client.end();
  }
  return out;
}

async function readMysql2(connection, queries, prepared) {
  const mysql = require('mysql2/promise');
  const conn = await mysql.createConnection({ ...connection, rowsAsArray: true });
  const out = [];
  try {
    for (const [sql, params] of queries) {
      const [rows, fields] = prepared ? await conn.execute(sql, params) : await conn.query(sql, params);
      out.push([sql, fields.map((f) => f.name), rows.map((row) => row.map(cell))]);
    }
  } finally {
    await conn.end();
  }
  return out;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { connection, queries } = JSON.parse(Buffer.concat(chunks).toString());
  const out = driver === 'pg'
    ? await readPg(connection, queries)
    : await readMysql2(connection, queries, driver === 'mysql2-prepared');
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
