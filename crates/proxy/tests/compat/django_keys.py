"""Django's ORM through Keyshard: save() of a new and of an existing row, .exists(), nested
atomic() (a savepoint) rolled back, bulk_create (on PostgreSQL an INSERT … SELECT from
UNNEST that returns each row's key), and inspectdb. argv: host port engine (mysql or
postgresql). Prints the keys of the rows it expects stored, as JSON."""
import io
import json
import sys

host, port, engine = sys.argv[1], sys.argv[2], sys.argv[3]
if engine == "mysql":
    # Django's MySQL backend is written for mysqlclient; PyMySQL stands in for it.
    import pymysql

    pymysql.install_as_MySQLdb()

import django
from django.conf import settings

settings.configure(
    DATABASES={"default": {
        "ENGINE": f"django.db.backends.{engine}", "NAME": "sharding_db", "USER": "root",
        "PASSWORD": "root", "HOST": host, "PORT": port,
    }},
    INSTALLED_APPS=[], USE_TZ=True,
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import models, transaction  # noqa: E402


class Order(models.Model):
    order_id = models.BigAutoField(primary_key=True)
    user_id = models.IntegerField()
    status = models.CharField(max_length=32)

    class Meta:
        app_label = "keyshard"
        db_table = "t_order"


keys = []
order = Order(user_id=1, status="new")
order.save()
keys.append(order.order_id)
assert Order.objects.filter(order_id=order.order_id).exists(), "exists() of a stored row"
assert not Order.objects.filter(order_id=-1).exists(), "exists() of a missing row"

# save() of an existing row writes every column, the sharding column included.
order.status = "edited"
order.save()
assert Order.objects.get(order_id=order.order_id, user_id=1).status == "edited"

with transaction.atomic():
    kept = Order.objects.create(user_id=2, status="kept")
    keys.append(kept.order_id)
    try:
        with transaction.atomic():
            Order.objects.create(user_id=3, status="undone")
            raise RuntimeError("undo the inner block")
    except RuntimeError:
        pass

bulk = Order.objects.bulk_create([Order(user_id=u, status="bulk") for u in (4, 5, 6)])
if engine == "mysql":
    # One multi-row INSERT; MySQL returns no keys for it, so they are read back.
    keys += list(Order.objects.filter(status="bulk").values_list("order_id", flat=True))
else:
    # PostgreSQL: INSERT … SELECT * FROM UNNEST(…) RETURNING, each object given its own key.
    for created in bulk:
        assert Order.objects.get(order_id=created.order_id).user_id == created.user_id
    keys += [created.order_id for created in bulk]

# inspectdb reads the catalog (information_schema on MySQL, pg_catalog on PostgreSQL): the
# logic table, under its name, with its columns.
out = io.StringIO()
call_command("inspectdb", "t_order", stdout=out)
model = out.getvalue()
for line in ("class TOrder(models.Model):", "order_id = models.BigIntegerField(primary_key=True",
             "user_id = models.IntegerField(", "status = models.CharField(",
             "db_table = 't_order'"):
    assert line in model, model

print(json.dumps({"keys": [str(k) for k in keys]}))
