"""The SQL reads of one search, few and light: the search path's own queries over the SQL store's tables.

A search reads the system of record twice: once before recall (`scope_facts`: the user's own names, the
scope's latest event - the "present" of a replayed log - and the scope's entities the query names, in one
transaction), and once after fusion (`rows_with_context`: the candidates' rows and their neighbouring turns).
Both use SQLAlchemy Core, not the ORM: loading ORM objects (and decoding each one's JSON metadata) for the
~100 rows of a context window cost more than the rest of the search together (3-4 ms of CPU at 10k
memories). The context window is read as four columns per row (`context_rows`); only the ~30 rows a search
ranks are read whole (`memory_dicts`).

These helpers read the store's tables (memoryx.stores.sql.schema) through its transaction (`_tx`: SQLite's
in-memory lock, error wrapping); they write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timezone
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.scope import Scope
from memoryx.stores.sql.schema import EntityRow, MemoryRow, ProfileValueRow
from memoryx.stores.sql.values import require_scope, scope_where
from memoryx.text import normalize_name

_MEM = MemoryRow.__table__.c


@dataclass(frozen=True)
class ScopeFacts:
    """What the system of record says about the scope that the query analysis needs."""

    own_names: tuple[str, ...] = ()  # the user's name and aliases (profile), none in a group scope
    latest_event: tuple[datetime, datetime] | None = None  # (valid_at, created_at) of the latest event
    entities: tuple[dict, ...] = ()  # [{"id", "name"}] entities of the scope named by the candidates


def scope_facts(sql: Any, scope: Scope, *, profile_subject: str | None,
                entity_names: Callable[[tuple[str, ...]], list[str]]) -> ScopeFacts:
    """One read transaction: the profile names of `profile_subject`, the scope's latest event, and the scope's
    entities whose normalised name is one of `entity_names(own names)` (the strings that could name an entity
    depend on the own names: "Where does Alice live?" is looked up as "Where does User live?")."""
    scope = require_scope(scope)
    with sql._tx() as s:
        names: tuple[str, ...] = ()
        if profile_subject:
            pv = ProfileValueRow.__table__.c
            names = tuple(r[0] for r in s.connection().execute(
                select(pv.value).where(pv.subject == profile_subject, pv.ended_at.is_(None),
                                       pv.field.in_(("name", "alias")))
                .order_by(pv.first_seen_at, pv.id)))
        normalized = list(dict.fromkeys(normalize_name(n) for n in entity_names(names)
                                        if isinstance(n, str) and n.strip()))
        latest = s.connection().execute(
            select(_MEM.valid_at, _MEM.created_at)
            .where(*scope_where(MemoryRow, scope), _MEM.deleted_at.is_(None), _MEM.valid_at.is_not(None))
            .order_by(_MEM.valid_at.desc()).limit(1)).first()
        entities: list[dict] = []
        if normalized:
            ec = EntityRow.__table__.c
            entities = [{"id": r[0], "name": r[1]} for r in s.connection().execute(
                select(ec.id, ec.name).where(ec.normalized_name.in_(normalized), *scope_where(EntityRow, scope))
                .order_by(ec.created_at, ec.id))]
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


def context_rows(sql: Any, scope: Scope, ids: list[str], seed_times: list[float], *,
                 max_gap_s: float) -> list[RowTimes]:
    """The live memories of `scope` whose id is in `ids` OR whose created_at lies within `max_gap_s` of one of
    `seed_times` (epoch seconds), oldest first: the rows of SQLStore.rows_with_context, as RowTimes (four
    columns; the memory dicts of the few a search keeps come from `memory_dicts`)."""
    scope = require_scope(scope)
    conds = [_MEM.id.in_(list(ids))] if ids else []
    for lo, hi in _merged_windows(seed_times, max_gap_s):
        conds.append(_MEM.created_at.between(datetime.fromtimestamp(lo, tz=timezone.utc),
                                             datetime.fromtimestamp(hi, tz=timezone.utc)))
    if not conds:
        return []
    stmt = (select(_MEM.id, _MEM.memory_type, _MEM.created_at, _MEM.valid_at)
            .where(*scope_where(MemoryRow, scope), _MEM.deleted_at.is_(None), sa.or_(*conds))
            .order_by(_MEM.created_at, _MEM.id))
    with sql._tx() as s:
        return [RowTimes(*r) for r in s.connection().execute(stmt)]


def memory_dicts(sql: Any, ids: list[str]) -> dict[str, dict]:
    """{id: memory dict} of the live memories among `ids` (the shape of stores.sql.schema.memory_dict)."""
    if not ids:
        return {}
    # deleted rows are dropped here, not in SQL: with `deleted_at IS NULL` beside `id IN (...)` SQLite's planner
    # (no statistics) walks the deleted_at index - every live row - instead of the primary key: 3 ms at 10k rows
    with sql._tx() as s:
        rows = [r for r in s.connection().execute(select(MemoryRow.__table__).where(_MEM.id.in_(list(ids))))
                if r.deleted_at is None]
    return {r.id: {
        "id": r.id, "memory": r.text, "hash": r.hash, "user_id": r.user_id, "agent_id": r.agent_id,
        "run_id": r.run_id, "group_id": r.group_id, "category": r.category, "importance": r.importance,
        "memory_type": r.memory_type, "metadata": dict(r.metadata or {}), "created_at": _iso(r.created_at),
        "updated_at": _iso(r.updated_at), "access_count": r.access_count or 0,
        "last_accessed_at": _iso(r.last_accessed_at), "deleted_at": _iso(r.deleted_at), "trace_id": r.trace_id,
        "status": r.status or "active", "merged_into": r.merged_into, "valid_at": _iso(r.valid_at),
        "invalid_at": _iso(r.invalid_at)} for r in rows}


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
