-- One INSERT without the key column per event, as a server-side prepared statement.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare("INSERT INTO t_order (user_id, status) VALUES (?, 'new')")
  param = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(param)
end
function event()
  param:set(sysbench.rand.default(1, 1000000))
  stmt:execute()
end
function thread_done()
  stmt:close()
  con:disconnect()
end
