-- sysbench workload: one user's last 10 orders per event from t_recent, as text, which
-- Keyshard reads from one node (twenty rows there, bench/lib.sh read_rows_sql): the merge of
-- bench/merge.lua without the merge. Run through bench/cpu.sh and bench/callgrind.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query(string.format(
    "SELECT order_id, user_id, status FROM t_recent WHERE user_id = %d ORDER BY order_id DESC LIMIT 10",
    sysbench.rand.default(1, 1000)))
end

function thread_done()
  con:disconnect()
end
