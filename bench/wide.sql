-- pgbench workload: bench/merge.sql's read over t_wide, whose rows have 20 columns of mixed
-- types (numeric, floats, timestamps, date, time, text, jsonb, uuid, inet …). Run through
-- bench/callgrind.sh.
\set user_id random(1, 1000)
SELECT * FROM t_wide WHERE user_id = :user_id ORDER BY order_id DESC LIMIT 10;
