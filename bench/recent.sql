-- pgbench workload: one user's last 10 orders from t_recent, which Keyshard reads from one
-- node (twenty rows there, bench/lib.sh read_rows_sql): the merge of bench/merge.sql without
-- the merge. Run through bench/cpu.sh and bench/callgrind.sh.
\set user_id random(1, 1000)
SELECT order_id, user_id, status FROM t_recent WHERE user_id = :user_id ORDER BY order_id DESC LIMIT 10;
