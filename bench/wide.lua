-- sysbench workload: bench/merge.lua's read over t_wide, whose rows have 20 columns of mixed
-- types (DECIMAL, floats, DATETIME, DATE, TIME, TEXT, JSON …). Run through bench/callgrind.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query(string.format(
    "SELECT * FROM t_wide WHERE user_id = %d ORDER BY order_id DESC LIMIT 10",
    sysbench.rand.default(1, 1000)))
end

function thread_done()
  con:disconnect()
end
