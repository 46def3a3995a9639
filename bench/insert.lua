-- sysbench workload: one INSERT per event without the key column, as an application that
-- lets the database (or Keyshard) assign keys does. Run through bench/run.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query(string.format("INSERT INTO t_order (user_id, status) VALUES (%d, 'new')",
    sysbench.rand.default(1, 1000000)))
end

function thread_done()
  con:disconnect()
end
