"""Django's ORM through Keyshard: save() of a new and of an existing row, .exists(), nested
atomic() (a savepoint) rolled back, bulk_create (on PostgreSQL an INSERT … SELECT from
UNNEST that returns each row's key), and inspectdb. argv: host port engine (mysql or
postgresql). Prints the keys of the rows it expects stored, as JSON."""
import datetime
import io
import json
import sys
import uuid
from decimal import Decimal

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
from django.db.models import Count, Max, Min, Subquery, Sum  # noqa: E402


class Order(models.Model):
    order_id = models.BigAutoField(primary_key=True)
    user_id = models.IntegerField()
    status = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True, null=True)
    updated_at = models.DateTimeField(auto_now=True, null=True)
    price = models.DecimalField(max_digits=10, decimal_places=2, null=True)
    doc = models.JSONField(null=True)
    ref = models.UUIDField(null=True)

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

# Every column type an application has comes back as it went in, in its Python type, and
# filters, ordering and aggregates over the shards compare by value.
prices = {7: Decimal("12.34"), 8: Decimal("5.00"), 9: Decimal("99.99"), 10: Decimal("0.10")}
typed = {}
for user, price in prices.items():
    made = Order.objects.create(user_id=user, status="typed", price=price, ref=uuid.uuid4(),
                                doc={"user": user, "tags": ["a", "é"], "ratio": 0.5})
    typed[user] = made
    keys.append(made.order_id)
for user, made in typed.items():
    back = Order.objects.get(order_id=made.order_id)
    assert back.price == prices[user] and isinstance(back.price, Decimal), back.price
    assert back.doc == {"user": user, "tags": ["a", "é"], "ratio": 0.5}, back.doc
    assert back.ref == made.ref and isinstance(back.ref, uuid.UUID), back.ref
    assert back.created_at == made.created_at, (back.created_at, made.created_at)
    assert back.created_at.tzinfo is not None, back.created_at
    assert Order.objects.get(ref=made.ref).order_id == made.order_id
cheap = list(Order.objects.filter(price__lt=Decimal("50")).order_by("-price", "order_id")
             .values_list("price", flat=True))
assert cheap == [Decimal("12.34"), Decimal("5.00"), Decimal("0.10")], cheap
newest = list(Order.objects.filter(status="typed").order_by("-created_at", "-order_id")
              .values_list("order_id", flat=True))
expected = sorted(typed.values(), key=lambda o: (o.created_at, o.order_id), reverse=True)
assert newest == [o.order_id for o in expected], (newest, expected)
since = typed[7].created_at - datetime.timedelta(seconds=1)
assert Order.objects.filter(created_at__gte=since, status="typed").count() == 4
totals = Order.objects.filter(status="typed").aggregate(Sum("price"), Max("created_at"),
                                                         Min("price"))
assert totals["price__sum"] == Decimal("117.43"), totals
assert totals["price__min"] == Decimal("0.10"), totals
assert totals["created_at__max"] == max(o.created_at for o in typed.values()), totals

# Reads the shards cannot merge are gathered onto one data source and answered there:
# distinct(), a distinct count per group, a Subquery, and count() of a distinct queryset (a
# COUNT over a subquery).
statuses = list(Order.objects.filter(status__in=["bulk", "typed"])
                .values_list("status", flat=True).distinct().order_by("status"))
assert statuses == ["bulk", "typed"], statuses
per_status = (Order.objects.filter(status__in=["bulk", "typed"]).values("status")
              .annotate(users=Count("user_id", distinct=True)).order_by("status"))
assert [(r["status"], r["users"]) for r in per_status] == [("bulk", 3), ("typed", 4)], per_status
bulk_users = Order.objects.filter(status="bulk").values("user_id")
assert Order.objects.filter(user_id__in=Subquery(bulk_users)).count() == 3
all_statuses = set(Order.objects.values_list("status", flat=True))
assert Order.objects.values("status").distinct().count() == len(all_statuses), all_statuses

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
