-- sysbench workload: one user's last 10 orders per event, as text (a merge of two tables' ten
-- rows each in Keyshard, bench/lib.sh read_rows_sql). Run through bench/cpu.sh and
-- bench/callgrind.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query(string.format(
    "SELECT order_id, user_id, status FROM t_order WHERE user_id = %d ORDER BY order_id DESC LIMIT 10",
    sysbench.rand.default(1, 1000)))
end

function thread_done()
  con:disconnect()
end
