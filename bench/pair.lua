-- sysbench workload: one two-row INSERT per event whose rows go to the two data sources
-- (user_id even → ds_0, odd → ds_1), so every statement commits on both. Run through
-- bench/xa.sh.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  local user = 2 * sysbench.rand.default(1, 500000)
  con:query(string.format(
    "INSERT INTO t_order (user_id, status) VALUES (%d, 'new'), (%d, 'new')", user, user + 1))
end

function thread_done()
  con:disconnect()
end
