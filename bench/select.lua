-- sysbench workload: a point SELECT by both sharding columns per event, as text, of a row that
-- is there (bench/lib.sh read_rows_sql). Run through bench/cpu.sh and bench/callgrind.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  local user = sysbench.rand.default(1, 1000)
  -- order_id 10^12 + user * 100 + k, spelled out: Lua numbers are doubles.
  con:query(string.format(
    "SELECT order_id, user_id, status FROM t_order WHERE user_id = %d AND order_id = 1%012d",
    user, user * 100 + sysbench.rand.default(0, 19)))
end

function thread_done()
  con:disconnect()
end
