-- pgbench workload: a point SELECT by both sharding columns (one data node), of a row that is
-- there (bench/lib.sh read_rows_sql). Run through bench/cpu.sh and bench/callgrind.sh.
\set user_id random(1, 1000)
\set order_id 1000000000000 + :user_id * 100 + random(0, 19)
SELECT order_id, user_id, status FROM t_order WHERE user_id = :user_id AND order_id = :order_id;
