-- pgbench workload: one user's last 10 orders, which Keyshard reads from the two tables of one
-- data source (ten rows from each, bench/lib.sh read_rows_sql) and merges. Run through
-- bench/cpu.sh and bench/callgrind.sh.
\set user_id random(1, 1000)
SELECT order_id, user_id, status FROM t_order WHERE user_id = :user_id ORDER BY order_id DESC LIMIT 10;
