# ActiveRecord (Debian's ruby-activerecord) through Keyshard, on mysql2 (ARGV[2] "mysql2") or
# pg ("postgresql"): the connection's own setup queries, table_exists?, records with timestamps
# ActiveRecord fills in, a DECIMAL price, a JSON document and a UUID saved with keys Keyshard
# generates, read back in their Ruby types, filtered, ordered, aggregated, updated and
# destroyed. Prints the keys of the rows it expects stored, as JSON.
require "active_record"
require "bigdecimal"
require "json"

host, port, adapter = ARGV
ActiveRecord::Base.default_timezone = :utc
ActiveRecord::Base.establish_connection(
  adapter: adapter, host: host, port: Integer(port), username: "root", password: "root",
  database: "sharding_db", pool: 2
)

class Order < ActiveRecord::Base
  self.table_name = "t_order"
  self.primary_key = "order_id"
end

def check(what, got, want)
  raise "#{what}: got #{got.inspect}, want #{want.inspect}" unless got == want
end

mysql = adapter == "mysql2"
check("table_exists? t_order", Order.connection.table_exists?("t_order"), true)
check("table_exists? t_nowhere", Order.connection.table_exists?("t_nowhere"), false)

base = Time.utc(2026, 1, 2, 3, 4, 5, 678_000)
prices = %w[12.34 5.00 99.99 0.10]
made = [7, 8, 9, 10].each_with_index.map do |user, i|
  order = Order.create!(
    user_id: user, status: "ar", price: BigDecimal(prices[i]),
    # MariaDB's JSON is a LONGTEXT to ActiveRecord 6.1, which then stores a Hash's `to_s`:
    # the application writes JSON text there, as it must without Keyshard.
    doc: mysql ? { "user" => user, "tags" => ["é", i] }.to_json : { "user" => user, "tags" => ["é", i] },
    ref: "00000000-0000-4000-8000-00000000000#{i}"
  )
  # ActiveRecord stamps created_at and updated_at itself; one is set apart to order by it.
  order.update!(created_at: base + i * 60)
  order
end
keys = made.map(&:order_id)
check("keys", keys.all? { |k| k.is_a?(Integer) && k > 0 }, true)

back = Order.where(status: "ar").order(:user_id).to_a
check("rows", back.size, 4)
back.each_with_index do |got, i|
  check("order_id", got.order_id, keys[i])
  check("price", got.price, BigDecimal(prices[i]))
  check("price type", got.price.class, BigDecimal)
  check("created_at", got.created_at.to_f.round(3), (base + i * 60).to_f.round(3))
  check("updated_at set", got.updated_at.is_a?(Time), true)
  doc = got.doc.is_a?(String) ? JSON.parse(got.doc) : got.doc
  check("doc", [doc["user"], doc["tags"]], [[7, 8, 9, 10][i], ["é", i]])
  check("ref", got.ref, "00000000-0000-4000-8000-00000000000#{i}")
end

newest = Order.where(status: "ar").order(created_at: :desc, order_id: :asc).limit(2)
check("newest", newest.pluck(:user_id), [10, 9])
cheap = Order.where(status: "ar").where("price < ?", 50).order(price: :desc).pluck(:price)
check("cheap", cheap, prices.values_at(0, 1, 3).map { |p| BigDecimal(p) })
check("since", Order.where(status: "ar").where("created_at >= ?", base + 60).count, 3)
check("sum", Order.where(status: "ar").sum(:price), BigDecimal("117.43"))
check("max", Order.where(status: "ar").maximum(:created_at).to_f.round(3), (base + 180).to_f.round(3))
check("minimum", Order.where(status: "ar").minimum(:price), BigDecimal("0.10"))
check("distinct", Order.where(status: "ar").distinct.pluck(:status), ["ar"])
check("exists?", Order.where(status: "ar", user_id: 8).exists?, true)

# A record saved again by its key, then one destroyed.
first = Order.find_by!(order_id: keys[0], user_id: 7)
first.update!(status: "ar")
gone = Order.find_by!(order_id: keys[3], user_id: 10)
gone.destroy!
check("destroyed", Order.where(order_id: keys[3]).exists?, false)
keys.pop

Order.transaction do
  Order.create!(user_id: 11, status: "ar-undone")
  raise ActiveRecord::Rollback
end
check("rolled back", Order.where(status: "ar-undone").exists?, false)

puts JSON.generate({ "keys" => keys.map(&:to_s) })
