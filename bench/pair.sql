-- pgbench workload: one two-row INSERT per transaction whose rows go to the two data sources
-- (user_id even → ds_0, odd → ds_1). Run through bench/xa.sh.
\set even random(1, 500000) * 2
\set odd :even + 1
INSERT INTO t_order (user_id, status) VALUES (:even, 'new'), (:odd, 'new');
