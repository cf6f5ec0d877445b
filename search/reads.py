"""The SQL reads of one search, few and light: the search path's own queries over the SQL store's tables.

A search reads the system of record twice: once before recall (`scope_facts`: the user's own names, the
scope's latest event - the "present" of a replayed log - and the scope's entities the query names, in one
transaction), and once after fusion (`context_rows`: the candidates' rows and their neighbouring turns; then,
in one transaction, `memory_dicts` of the rows it ranks and their `latest_feedback`).
Both use SQLAlchemy Core, not the ORM: loading ORM objects (and decoding each one's JSON metadata) for the
~100 rows of a context window cost more than the rest of the search together (3-4 ms of CPU at 10k
memories). The context window is read as four columns per row (`context_rows`); only the ~30 rows a search
ranks are read whole (`memory_dicts`).

These helpers read the store's tables (memoryx.stores.sql.schema) through its transaction (`_tx`: SQLite's
in-memory lock, error wrapping); they write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import UTC, datetime, timezone
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.scope import Scope
from memoryx.stores.sql.schema import EntityRow, FeedbackRow, MemoryRow, ProfileValueRow
from memoryx.stores.sql.values import require_scope
from memoryx.text import normalize_name

_MEM = MemoryRow.__table__.c


@dataclass(frozen=True)
class ScopeFacts:
    """What the system of record says about the scope that the query analysis needs."""

    own_names: tuple[str, ...] = ()  # the user's name and aliases (profile), none in a group scope
    latest_event: tuple[datetime, datetime] | None = None  # (valid_at, created_at) of the latest event
    entities: tuple[dict, ...] = ()  # [{"id", "name"}] entities of the scope named by the candidates


def _scope_terms(scope: Scope) -> tuple[tuple, dict]:
    """(the shape of the scope's conditions, their bound values): statements are built once per shape."""
    match = require_scope(scope).match()
    shape = tuple(sorted((k, v is None) for k, v in match.items()))
    return shape, {f"scope_{k}": v for k, v in match.items() if v is not None}


def _scope_where(model: Any, shape: tuple) -> list:
    """scope_where (stores.sql.values) with bound parameters instead of values: the same conditions."""
    return [getattr(model, k).is_(None) if is_none else getattr(model, k) == sa.bindparam(f"scope_{k}")
            for k, is_none in shape]


@lru_cache(maxsize=64)
def _latest_stmt(shape: tuple):
    return (select(_MEM.valid_at, _MEM.created_at)
            .where(*_scope_where(MemoryRow, shape), _MEM.deleted_at.is_(None), _MEM.valid_at.is_not(None))
            .order_by(_MEM.valid_at.desc()).limit(1))


@lru_cache(maxsize=64)
def _entities_stmt(shape: tuple):
    ec = EntityRow.__table__.c
    return (select(ec.id, ec.name)
            .where(ec.normalized_name.in_(sa.bindparam("names", expanding=True)), *_scope_where(EntityRow, shape))
            .order_by(ec.created_at, ec.id))


_PV = ProfileValueRow.__table__.c
_PROFILE_NAMES = (select(_PV.value)
                  .where(_PV.subject == sa.bindparam("subject"), _PV.ended_at.is_(None),
                         _PV.field.in_(("name", "alias")))
                  .order_by(_PV.first_seen_at, _PV.id))


def scope_facts(sql: Any, scope: Scope, *, profile_subject: str | None,
                entity_names: Callable[[tuple[str, ...]], list[str]]) -> ScopeFacts:
    """One read transaction: the profile names of `profile_subject`, the scope's latest event, and the scope's
    entities whose normalised name is one of `entity_names(own names)` (the strings that could name an entity
    depend on the own names: "Where does Alice live?" is looked up as "Where does User live?"). The
    statements are built once per scope shape (a search pays for executing them, not for composing them)."""
    shape, params = _scope_terms(scope)
    with sql._tx() as s:
        conn = s.connection()
        names: tuple[str, ...] = ()
        if profile_subject:
            names = tuple(r[0] for r in conn.execute(_PROFILE_NAMES, {"subject": profile_subject}))
        normalized = list(dict.fromkeys(normalize_name(n) for n in entity_names(names)
                                        if isinstance(n, str) and n.strip()))
        latest = conn.execute(_latest_stmt(shape), params).first()
        entities: list[dict] = []
        if normalized:
            entities = [{"id": r[0], "name": r[1]}
                        for r in conn.execute(_entities_stmt(shape), {**params, "names": normalized})]
    return ScopeFacts(own_names=names,
                      latest_event=(_utc(latest[0]), _utc(latest[1])) if latest is not None else None,
                      entities=tuple(entities))


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime | None) -> str | None:
    return _utc(value).isoformat() if value is not None else None


class RowTimes:
    """What the neighbour search needs of one memory row: its id, type and times as epoch seconds (created_at,
    and the event time: valid_at, else created_at)."""

    __slots__ = ("id", "memory_type", "created", "event")

    def __init__(self, mid: str, memory_type: str | None, created: datetime | None, valid: datetime | None):
        self.id = mid
        self.memory_type = memory_type
        self.created = _utc(created).timestamp() if created is not None else 0.0
        self.event = _utc(valid).timestamp() if valid is not None else self.created


@lru_cache(maxsize=256)
def _context_stmt(shape: tuple, with_ids: bool, windows: int):
    when = _MEM.created_at.type
    conds = [_MEM.id.in_(sa.bindparam("ids", expanding=True))] if with_ids else []
    conds += [_MEM.created_at.between(sa.bindparam(f"lo{i}", type_=when), sa.bindparam(f"hi{i}", type_=when))
              for i in range(windows)]
    return (select(_MEM.id, _MEM.memory_type, _MEM.created_at, _MEM.valid_at)
            .where(*_scope_where(MemoryRow, shape), _MEM.deleted_at.is_(None), sa.or_(*conds))
            .order_by(_MEM.created_at, _MEM.id))


def context_rows(sql: Any, scope: Scope, ids: list[str], seed_times: list[float], *,
                 max_gap_s: float) -> list[RowTimes]:
    """The live memories of `scope` whose id is in `ids` OR whose created_at lies within `max_gap_s` of one of
    `seed_times` (epoch seconds), oldest first: the rows of SQLStore.rows_with_context, as RowTimes (four
    columns; the memory dicts of the few a search keeps come from `memory_dicts`)."""
    shape, params = _scope_terms(scope)
    windows = _merged_windows(seed_times, max_gap_s)
    if not ids and not windows:
        return []
    if ids:
        params["ids"] = list(ids)
    for i, (lo, hi) in enumerate(windows):
        params[f"lo{i}"] = datetime.fromtimestamp(lo, tz=timezone.utc)
        params[f"hi{i}"] = datetime.fromtimestamp(hi, tz=timezone.utc)
    with sql._tx() as s:
        return [RowTimes(*r) for r in s.connection().execute(_context_stmt(shape, bool(ids), len(windows)), params)]


_MEMORIES_BY_ID = select(MemoryRow.__table__).where(_MEM.id.in_(sa.bindparam("ids", expanding=True)))


def memory_dicts(sql: Any, ids: list[str]) -> dict[str, dict]:
    """{id: memory dict} of the live memories among `ids` (the shape of stores.sql.schema.memory_dict)."""
    if not ids:
        return {}
    # deleted rows are dropped here, not in SQL: with `deleted_at IS NULL` beside `id IN (...)` SQLite's planner
    # (no statistics) walks the deleted_at index - every live row - instead of the primary key: 3 ms at 10k rows
    with sql._tx() as s:
        rows = [r for r in s.connection().execute(_MEMORIES_BY_ID, {"ids": list(ids)}) if r.deleted_at is None]
    return {r.id: {
        "id": r.id, "memory": r.text, "hash": r.hash, "user_id": r.user_id, "agent_id": r.agent_id,
        "run_id": r.run_id, "group_id": r.group_id, "category": r.category, "importance": r.importance,
        "memory_type": r.memory_type, "metadata": dict(r.metadata or {}), "created_at": _iso(r.created_at),
        "updated_at": _iso(r.updated_at), "access_count": r.access_count or 0,
        "last_accessed_at": _iso(r.last_accessed_at), "deleted_at": _iso(r.deleted_at), "trace_id": r.trace_id,
        "status": r.status or "active", "merged_into": r.merged_into, "valid_at": _iso(r.valid_at),
        "invalid_at": _iso(r.invalid_at)} for r in rows}


_FB = FeedbackRow.__table__.c
_FEEDBACK_BY_MEMORY = (select(_FB.memory_id, _FB.feedback, _FB.created_at, _FB.id)
                       .where(_FB.memory_id.in_(sa.bindparam("ids", expanding=True))))


def latest_feedback(sql: Any, ids: list[str]) -> dict[str, str | None]:
    """{memory id: its latest feedback value} for those of `ids` that have any (SQLStore.latest_feedback as one
    Core statement: the search reads it with the rows it ranks, in their transaction, instead of one more ORM
    transaction after the graph)."""
    if not ids:
        return {}
    latest: dict[str, tuple] = {}
    with sql._tx() as s:
        for mid, value, created, rid in s.connection().execute(_FEEDBACK_BY_MEMORY, {"ids": list(dict.fromkeys(ids))}):
            if mid not in latest or (created, rid) > latest[mid][1:]:
                latest[mid] = (value, created, rid)
    return {mid: v[0] for mid, v in latest.items()}


def _merged_windows(seed_times: list[float], gap: float) -> list[tuple[float, float]]:
    """[ts - gap, ts + gap] windows of the seeds, overlapping ones merged (fewer OR terms, same rows)."""
    out: list[list[float]] = []
    for ts in sorted(seed_times):
        lo, hi = ts - gap, ts + gap
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(a, b) for a, b in out]
