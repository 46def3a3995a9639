-- sysbench workload: bench/select.lua's point SELECT by both sharding columns as a server-side
-- prepared statement (COM_STMT_EXECUTE), of a row that is there. Run through bench/cpu.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare(
    "SELECT order_id, user_id, status FROM t_order WHERE user_id = ? AND order_id = ?")
  user = stmt:bind_create(sysbench.sql.type.INT)
  order = stmt:bind_create(sysbench.sql.type.BIGINT)
  stmt:bind_param(user, order)
end

function event()
  local u = sysbench.rand.default(1, 1000)
  user:set(u)
  -- 10^12 + user * 100 + k (bench/lib.sh read_rows_sql): exact in a Lua double.
  order:set(1000000000000 + u * 100 + sysbench.rand.default(0, 19))
  stmt:execute()
end

function thread_done()
  stmt:close()
  con:disconnect()
end
