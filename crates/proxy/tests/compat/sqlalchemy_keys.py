"""SQLAlchemy 2 ORM through Keyshard: objects added one by one and in an add_all batch get
their generated keys, and a nested transaction (savepoint) is rolled back. argv: host port url-scheme
(mysql+pymysql, postgresql+psycopg or postgresql+asyncpg). Prints the keys as JSON."""
import datetime
import json
import sys
import uuid
from decimal import Decimal

from sqlalchemy import (JSON, BigInteger, DateTime, FetchedValue, Integer, MetaData, Numeric,
                        String, Table, Uuid, create_engine, func, inspect, select)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "t_order"
    order_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime.datetime | None] = mapped_column(DateTime(timezone=True))
    price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
    doc: Mapped[dict | None] = mapped_column(JSON)
    # Stored as text on MySQL (CHAR(36)), as PostgreSQL's uuid.
    ref: Mapped[uuid.UUID | None] = mapped_column(Uuid(native_uuid=True))


class Fetched(DeclarativeBase):
    pass


class FetchedOrder(Fetched):
    """The same table with a key the server fills in: SQLAlchemy reads it back with RETURNING,
    which it uses on MariaDB (as the proxy says its MariaDB shards are) and PostgreSQL."""
    __tablename__ = "t_order"
    order_id: Mapped[int] = mapped_column(BigInteger, primary_key=True,
                                          server_default=FetchedValue())
    user_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32))


host, port, scheme = sys.argv[1], sys.argv[2], sys.argv[3]
# The asyncpg dialect runs under the synchronous API through async_fallback (greenlets).
fallback = "?async_fallback=true" if scheme.endswith("+asyncpg") else ""
engine = create_engine(f"{scheme}://root:root@{host}:{port}/sharding_db{fallback}")
keys = []
with Session(engine) as session:
    for user in (1, 2):
        order = Order(user_id=user, status="orm")
        session.add(order)
        session.flush()
        keys.append(order.order_id)
    session.commit()

    kept = Order(user_id=3, status="kept")
    session.add(kept)
    session.flush()
    keys.append(kept.order_id)
    nested = session.begin_nested()
    session.add(Order(user_id=4, status="undone"))
    session.flush()
    nested.rollback()
    session.commit()

    # add_all: one batch (on PostgreSQL an INSERT … SELECT from VALUES … RETURNING), each
    # object given the key of its own row.
    batch = [Order(user_id=u, status="batch") for u in (5, 6, 7)]
    session.add_all(batch)
    session.commit()
    for order in batch:
        assert session.get(Order, order.order_id).user_id == order.user_id
    keys += [order.order_id for order in batch]

    # save() of an existing row writes every column, sharding columns included.
    again = session.get(Order, keys[0])
    assert again is not None and again.user_id == 1, "the row by its key"
    again.status = "edited"
    session.commit()
    edited = session.scalars(select(Order.status).where(Order.order_id == keys[0])).one()
    assert edited == "edited", edited

# Column types as they went in, filters, ordering and aggregates over the shards by value.
postgres = scheme.startswith("postgresql")
at = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
when = {7: at, 8: at + datetime.timedelta(days=200, microseconds=1), 9: at - datetime.timedelta(days=400)}
prices = {7: Decimal("12.34"), 8: Decimal("5.00"), 9: Decimal("99.99")}
with Session(engine) as session:
    typed = {}
    for user in (7, 8, 9):
        # MySQL's DATETIME holds no zone: the UTC wall time goes in, naive.
        created = when[user] if postgres else when[user].replace(tzinfo=None)
        typed[user] = Order(user_id=user, status="typed", created_at=created, price=prices[user],
                            doc={"user": user, "tags": ["a", "é"]}, ref=uuid.uuid4())
    session.add_all(typed.values())
    session.commit()
    keys += [o.order_id for o in typed.values()]
with Session(engine) as session:
    for user, made in typed.items():
        back = session.get(Order, made.order_id)
        assert back.price == prices[user] and isinstance(back.price, Decimal), back.price
        assert back.doc == {"user": user, "tags": ["a", "é"]}, back.doc
        assert back.ref == made.ref, (back.ref, made.ref)
        expected = when[user] if postgres else when[user].replace(tzinfo=None)
        assert back.created_at == expected, (back.created_at, expected)
    typed_rows = select(Order).where(Order.status == "typed")
    newest = session.scalars(typed_rows.order_by(Order.created_at.desc())).all()
    assert [o.user_id for o in newest] == [8, 7, 9], [o.user_id for o in newest]
    cheap = session.scalars(select(Order.price).where(Order.price < Decimal("50"))
                            .order_by(Order.price)).all()
    assert cheap == [Decimal("5.00"), Decimal("12.34")], cheap
    total, latest = session.execute(select(func.sum(Order.price), func.max(Order.created_at))
                                     .where(Order.status == "typed")).one()
    assert total == Decimal("117.33"), total
    assert latest == (when[8] if postgres else when[8].replace(tzinfo=None)), latest
    in_range = session.scalars(select(Order.user_id).where(
        Order.created_at >= (at if postgres else at.replace(tzinfo=None))).order_by(Order.user_id)).all()
    assert in_range == [7, 8], in_range

# Reads the shards cannot merge are gathered onto one data source and answered there: DISTINCT,
# a COUNT over a subquery; .limit() is a parameter (psycopg and asyncpg cast it to INTEGER).
with Session(engine) as session:
    statuses = session.scalars(select(Order.status).distinct()
                               .where(Order.status.in_(["batch", "typed"]))
                               .order_by(Order.status)).all()
    assert statuses == ["batch", "typed"], statuses
    users = select(Order.user_id).where(Order.status == "typed").distinct().subquery()
    assert session.scalar(select(func.count()).select_from(users)) == 3
    first = session.scalars(select(Order.user_id).where(Order.status == "typed")
                            .order_by(Order.user_id).limit(2).offset(1)).all()
    assert first == [8, 9], first

# Reflection reads the logic table: on MySQL has_table() runs DESCRIBE `db`.`t`; on PostgreSQL
# every step reads pg_catalog, where the proxy shows the logic table in place of its actual ones.
inspector = inspect(engine)
assert inspector.has_table("t_order") and not inspector.has_table("t_nowhere")
names = inspector.get_table_names()
assert "t_order" in names, names
assert not [n for n in names if n.startswith(("t_order_", "keyshard_"))], names
reflected = Table("t_order", MetaData(), autoload_with=engine)
assert [c.name for c in reflected.columns] == [
    "order_id", "user_id", "status", "created_at", "updated_at", "price", "doc", "ref"], reflected
assert [c.name for c in reflected.primary_key] == ["order_id"], reflected.primary_key

with Session(engine) as session:
    fetched = FetchedOrder(user_id=8, status="fetched")
    session.add(fetched)
    session.commit()
    assert fetched.order_id, "the key the proxy generated, read back"
    keys.append(fetched.order_id)
print(json.dumps({"keys": [str(k) for k in keys]}))
