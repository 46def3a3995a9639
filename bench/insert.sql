-- pgbench workload: one INSERT per transaction without the key column, as an application that
-- lets the database (or Keyshard) assign keys does. Run through bench/pg-run.sh.
\set user_id random(1, 1000000)
INSERT INTO t_order (user_id, status) VALUES (:user_id, 'new');
