"""peewee through Keyshard: rows inserted, then read as peewee reads them: count() as
`SELECT COUNT(1) FROM (…) AS _wrapped`, exists(), distinct() and a subquery, which the proxy
gathers from the shards. argv: host port. Prints the keys of the rows it stored, as JSON."""
import json
import sys

from peewee import BigIntegerField, CharField, IntegerField, Model, MySQLDatabase, fn

host, port = sys.argv[1], int(sys.argv[2])
db = MySQLDatabase("sharding_db", host=host, port=port, user="root", password="root")


class Order(Model):
    order_id = BigIntegerField(primary_key=True)
    user_id = IntegerField()
    status = CharField()

    class Meta:
        database = db
        table_name = "t_order"


db.connect()
rows = [{"user_id": u, "status": s} for u, s in
        [(1, "new"), (2, "new"), (3, "paid"), (4, "paid"), (5, "paid"), (6, "shipped")]]
Order.insert_many(rows).execute()

paid = Order.select().where(Order.status == "paid")
assert paid.count() == 3, paid.count()
assert paid.exists()
assert not Order.select().where(Order.status == "lost").exists()
statuses = [o.status for o in Order.select(Order.status).distinct().order_by(Order.status)]
assert statuses == ["new", "paid", "shipped"], statuses
assert Order.select(Order.status).distinct().count() == 3
busy = (Order.select(Order.status, fn.COUNT(Order.order_id).alias("n"))
        .group_by(Order.status).having(fn.COUNT(Order.order_id) > 1).order_by(Order.status))
assert [(o.status, o.n) for o in busy] == [("new", 2), ("paid", 3)], list(busy)
in_paid = Order.select().where(Order.user_id.in_(Order.select(Order.user_id)
                                                 .where(Order.status == "paid")))
assert in_paid.count() == 3

keys = [o.order_id for o in Order.select(Order.order_id)]
print(json.dumps({"keys": [str(k) for k in keys]}))
