"""ORM row objects written and read through SQLAlchemy Core: one row's INSERT (`insert_row`), one UPDATE by
primary key (`update_row`), a detached read (`load_row`, `read_plain`), and keeping the session's own copies
of those rows in step (`flush_held`, `expire_held`).

An add writes a handful of new rows; the ORM unit of work (identity map, flush planning, attribute events)
cost about twice the statement itself. These helpers send the statement through Core on the session's
connection, in its transaction, and keep what the ORM would have seen consistent.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm.util import identity_key

from memoryx.stores.sql.schema import Base

_CORE_COLUMNS: dict[type, tuple[sa.Table, list[tuple[str, sa.Column]], Any]] = {}


def _core_columns(cls: type) -> tuple[sa.Table, list[tuple[str, sa.Column]], Any]:
    found = _CORE_COLUMNS.get(cls)
    if found is None:
        mapper = sa.inspect(cls)
        table = mapper.local_table
        cols = [(attr.key, attr.columns[0]) for attr in mapper.column_attrs]
        found = _CORE_COLUMNS[cls] = (table, cols, sa.insert(table))
    return found


def insert_row(session, row: Base) -> Base:
    """INSERT a new (transient) row object through Core; column defaults are applied to the object too, so it
    reads as it would after an ORM flush (an autoincrement key left unset stays unset)."""
    table, cols, stmt = _core_columns(type(row))
    values: dict[str, Any] = {}
    for key, col in cols:
        value = row.__dict__.get(key)
        if value is None and col.default is not None:
            value = col.default.arg(None) if col.default.is_callable else col.default.arg
            setattr(row, key, value)
        if value is None and col.primary_key and col.autoincrement in (True, "auto"):
            continue
        values[col.name] = value
    session.execute(stmt, [values])
    return row


def update_row(session, cls: type, key_value: Any, changes: dict[str, Any]) -> None:
    """UPDATE one row by primary key through Core (`changes` by attribute name). A copy of the row the
    session already holds is expired, so a later ORM read in the same transaction sees the new values."""
    table, cols, _ = _core_columns(cls)
    names = {key: col.name for key, col in cols}
    (pk,) = table.primary_key.columns
    flush_held(session, cls, [key_value])
    session.execute(sa.update(table).where(pk == key_value).values({names[k]: v for k, v in changes.items()}))
    expire_held(session, cls, [key_value])


def load_row(session, cls: type, key_value: Any):
    """The row as a detached object read through Core (no identity map), or None."""
    table, cols, _ = _core_columns(cls)
    (pk,) = table.primary_key.columns
    flush_held(session, cls, [key_value])
    found = session.execute(sa.select(table).where(pk == key_value)).first()
    if found is None:
        return None
    data = found._mapping
    return cls(**{key: data[col.name] for key, col in cols})


def read_plain(session, cls: type, stmt, params: dict) -> list[SimpleNamespace]:
    """Rows of `cls` that the Core `stmt` (a select of its whole table) finds, as plain objects with the
    mapped attribute names (what memory_dict & co. read): no ORM instances, no identity map. The session's
    unflushed changes are written first, as an ORM query would."""
    table, cols, _ = _core_columns(cls)
    if session.new or session.dirty or session.deleted:
        session.flush()
    return [SimpleNamespace(**{key: data[col.name] for key, col in cols})
            for data in (row._mapping for row in session.connection().execute(stmt, params))]


def flush_held(session, cls: type, keys: list) -> None:
    """Write the session's unflushed changes to these rows (by primary key) before a Core statement reads or
    updates them."""
    if session.dirty and any(session.identity_map.get(identity_key(cls, k)) in session.dirty for k in keys):
        session.flush()


def expire_held(session, cls: type, keys: list) -> None:
    """Copies of these rows the session holds are stale after a Core UPDATE: the next ORM read reloads them."""
    if not session.identity_map:
        return
    for k in keys:
        held = session.identity_map.get(identity_key(cls, k))
        if held is not None:
            session.expire(held)
