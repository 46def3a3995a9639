"""SQLAlchemy 2 ORM with a key the proxy's UUID generator fills in (server_default=FetchedValue):
SQLAlchemy reads it back with RETURNING, one object at a time and in an add_all batch.
argv: host port url-scheme. Prints the keys as JSON."""
import json
import sys
import uuid

from sqlalchemy import FetchedValue, Integer, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "t_item"
    item_id: Mapped[str] = mapped_column(String(36), primary_key=True,
                                         server_default=FetchedValue())
    user_id: Mapped[int] = mapped_column(Integer)


host, port, scheme = sys.argv[1], sys.argv[2], sys.argv[3]
engine = create_engine(f"{scheme}://root:root@{host}:{port}/sharding_db")
keys = []
with Session(engine) as session:
    one = Item(user_id=1)
    session.add(one)
    session.flush()
    keys.append(one.item_id)
    batch = [Item(user_id=u) for u in (2, 3, 4)]
    session.add_all(batch)
    session.commit()
    keys += [item.item_id for item in batch]
    for key, user in zip(keys, (1, 2, 3, 4)):
        uuid.UUID(key)
        assert session.get(Item, key).user_id == user, key
print(json.dumps({"keys": keys}))
