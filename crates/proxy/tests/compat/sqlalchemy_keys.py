"""SQLAlchemy 2 ORM through Keyshard: objects added one by one and in an add_all batch get
their generated keys, and a nested transaction (savepoint) is rolled back. argv: host port url-scheme
(mysql+pymysql or postgresql+psycopg). Prints the keys as JSON."""
import json
import sys

from sqlalchemy import (BigInteger, FetchedValue, Integer, MetaData, String, Table, create_engine,
                        inspect, select)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "t_order"
    order_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32))


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
engine = create_engine(f"{scheme}://root:root@{host}:{port}/sharding_db")
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

# Reflection reads the logic table: on MySQL has_table() runs DESCRIBE `db`.`t`; on PostgreSQL
# every step reads pg_catalog, where the proxy shows the logic table in place of its actual ones.
inspector = inspect(engine)
assert inspector.has_table("t_order") and not inspector.has_table("t_nowhere")
names = inspector.get_table_names()
assert "t_order" in names, names
assert not [n for n in names if n.startswith(("t_order_", "keyshard_"))], names
reflected = Table("t_order", MetaData(), autoload_with=engine)
assert [c.name for c in reflected.columns] == ["order_id", "user_id", "status"], reflected
assert [c.name for c in reflected.primary_key] == ["order_id"], reflected.primary_key

with Session(engine) as session:
    fetched = FetchedOrder(user_id=8, status="fetched")
    session.add(fetched)
    session.commit()
    assert fetched.order_id, "the key the proxy generated, read back"
    keys.append(fetched.order_id)
print(json.dumps({"keys": [str(k) for k in keys]}))
