"""The graph truth's shared pieces, used by entities.py, relations.py and graph_truth.py: its tables as Core
(`ENTITIES`, `RELATIONS`), the key that makes one entity per scope and name (`graph_scope_key`), the scope
columns of a Core INSERT, bound parameters for lists and scope conditions, and the relation rows read with
the names of their ends.

The graph steps of every add read and write these rows; through the ORM (identity map, unit of work,
per-statement cache keys) they cost about twice the statements themselves, so they go through Core, with
the statements built once.
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.stores.sql.schema import EntityRow, RelationRow, relation_dict

ENTITIES = EntityRow.__table__
RELATIONS = RelationRow.__table__
_SOURCE, _TARGET = ENTITIES.alias("source_entity"), ENTITIES.alias("target_entity")


def relations_with_names() -> sa.Select:
    """Relation rows with the names of their ends (one statement instead of rows, then their names)."""
    return (select(RELATIONS, _SOURCE.c.name.label("source_name"), _TARGET.c.name.label("target_name"))
            .select_from(RELATIONS.outerjoin(_SOURCE, _SOURCE.c.id == RELATIONS.c.source_id)
                         .outerjoin(_TARGET, _TARGET.c.id == RELATIONS.c.target_id)))


def named_relation_dict(row) -> dict:
    """relation_dict of a `relations_with_names` row."""
    return relation_dict(row, {row.source_id: row.source_name, row.target_id: row.target_name})


def expanding(name: str = "ids") -> sa.BindParameter:
    """A bound list parameter (`IN (...)` of any length, one statement in the cache)."""
    return sa.bindparam(name, expanding=True)


def in_scope(table: sa.Table, scope_shape: tuple[tuple[str, bool], ...]) -> list:
    """scope_where's conditions with the values as bound parameters `scope_<field>`: one statement per shape
    of scope (which fields are unset)."""
    return [table.c[k].is_(None) if unset else table.c[k] == sa.bindparam(f"scope_{k}") for k, unset in scope_shape]


ENTITIES_BY_ID = select(ENTITIES).where(ENTITIES.c.id.in_(expanding()))


def graph_scope_key(scope: Scope) -> str:
    """The `scope_key` column of an entity or relation of `scope`."""
    # Not scope.key(): that renders None as '-', so user_id='-' would collide with "no user". JSON keeps
    # None distinct; sha1 keeps the indexed column short whatever the ids look like.
    # group_id is appended only when set, so the keys of entities written before groups existed stay the same.
    fields = SCOPE_FIELDS if scope.group_id else SCOPE_FIELDS[:3]
    raw = json.dumps([getattr(scope, f) for f in fields], ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


def scope_columns(scope: Scope) -> dict[str, str | None]:
    """Every scope column, unset ones None: the values of a Core INSERT (executemany wants the same keys)."""
    return {k: getattr(scope, k) for k in SCOPE_FIELDS}
