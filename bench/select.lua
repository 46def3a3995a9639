-- sysbench workload: a point SELECT by both sharding columns per event, as text. Run through
-- bench/cpu.sh and bench/callgrind.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query(string.format(
    "SELECT order_id, user_id, status FROM t_order WHERE user_id = %d AND order_id = %d",
    sysbench.rand.default(1, 1000000), sysbench.rand.default(1, 1000000)))
end

function thread_done()
  con:disconnect()
end
