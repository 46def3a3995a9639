-- pgbench workload: a point SELECT by both sharding columns (one data node). Run through
-- bench/cpu.sh and bench/callgrind.sh.
\set user_id random(1, 1000000)
\set order_id random(1, 1000000)
SELECT order_id, user_id, status FROM t_order WHERE user_id = :user_id AND order_id = :order_id;
