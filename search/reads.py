"""The SQL reads of one search, few and light: the search path's own queries over the SQL store's tables.

A search reads the system of record twice: once before recall (`scope_facts`, one transaction: the user's own
names, then one statement for the scope's timeline - its live memories' ids, types and times, from which its
latest event, the "present" of a replayed log, is taken - and the scope's entities the query names), and once
after fusion (`memory_dicts` of the rows it ranks, with their latest feedback in the same statement). The
candidates' rows and their neighbouring turns come from the timeline already read (`Timeline.window`): the
statement reading them again (`context_rows`, ~100 rows scattered over the table, ~1 ms of CPU at 100k
memories) runs only for a scope larger than TIMELINE_MAX_ROWS, or when a candidate is missing from the
timeline (written since). The graph path adds one when it found memories (`SQLStore.memory_links`, one hop).
All use SQLAlchemy Core, not the ORM: loading ORM objects (and decoding each one's JSON metadata) for the ~100
rows of a context window cost more than the rest of the search together (3-4 ms of CPU at 10k memories). The
timeline is read as four columns per row; only the ~30 rows a search ranks are read whole (`memory_dicts`);
rows are unpacked by position.

These helpers read the store's tables (memoryx.stores.sql.schema) through its transaction (`_tx`: SQLite's
in-memory lock, error wrapping); they write nothing.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timezone
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.core.scope import Scope
from memoryx.core.text import normalize_name
from memoryx.stores.sql.schema import EntityRow, FeedbackRow, MemoryRow, ProfileValueRow, RelationRow
from memoryx.stores.sql.values import require_scope

_MEM = MemoryRow.__table__.c


# a query's ~40 word n-grams are normalised on every search, and most of them ("what did", "I") recur across
# searches: the normalised form is kept for the most recent ones
_normalized = lru_cache(maxsize=8192)(normalize_name)


@dataclass(frozen=True)
class ScopeFacts:
    """What the system of record says about the scope that the query analysis needs."""

    own_names: tuple[str, ...] = ()  # the user's name and aliases (profile), none in a group scope
    latest_event: tuple[datetime, datetime] | None = None  # (valid_at, created_at) of the latest event
    entities: tuple[dict, ...] = ()  # [{"id", "name"}] entities of the scope named by the candidates
    timeline: Timeline | None = None  # the scope's live memories; None for a scope over TIMELINE_MAX_ROWS


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


# A scope with at most this many memories is read whole before recall (`Timeline`): its latest event and the
# context window of its candidates come from the one statement. A larger one reads only its latest event
# there and its context window after fusion (`context_rows`), so that a search never walks a long history.
TIMELINE_MAX_ROWS = 500
_BOUNDING_COLUMNS = ("user_id", "run_id", "group_id", "agent_id")


@lru_cache(maxsize=128)
def _timeline_stmt(shape: tuple, with_entities: bool):
    """The scope's live memories (kind 0: id, type, times as stored), oldest first, or none when the scope may
    hold more than TIMELINE_MAX_ROWS: the guard counts the rows of one of the scope's ids on that id's index
    alone (an upper bound of the scope's size; at most TIMELINE_MAX_ROWS + 1 entries, so a long history costs
    no more), evaluated once, before the scope's rows are read. With
    `with_entities`, then the scope's entities whose normalised name is one of `names` (kind 1: id, name,
    created_at), oldest first: one statement instead of two (each costs ~0.1-0.2 ms of CPU in SQLAlchemy)."""
    bounding = next(k for k in _BOUNDING_COLUMNS if (k, False) in shape)
    table = MemoryRow.__table__.alias("bounding")
    probe = (select(sa.literal_column("1")).select_from(table)
             .where(table.c[bounding] == sa.bindparam(f"scope_{bounding}")).limit(sa.bindparam("probe")).subquery())
    size = select(sa.func.count()).select_from(probe).scalar_subquery()  # counts at most `probe` index entries
    memories = (select(sa.literal_column("0").label("kind"), _MEM.id, _MEM.memory_type.label("label"),
                       _as_stored(_MEM.created_at), _as_stored(_MEM.valid_at))
                .where(*_scope_where(MemoryRow, shape), _MEM.deleted_at.is_(None), size <= sa.bindparam("most")))
    if not with_entities:
        return memories.order_by(_MEM.created_at, _MEM.id)
    ec = EntityRow.__table__.c
    entities = (select(sa.literal_column("1"), ec.id, ec.name, _as_stored(ec.created_at), sa.null())
                .where(ec.normalized_name.in_(sa.bindparam("names", expanding=True)), *_scope_where(EntityRow, shape)))
    return sa.union_all(memories, entities).order_by(sa.literal_column("kind"), sa.literal_column("created_at"),
                                                     sa.literal_column("id"))


_PV = ProfileValueRow.__table__.c
_PROFILE_NAMES = (select(_PV.value)
                  .where(_PV.subject == sa.bindparam("subject"), _PV.ended_at.is_(None),
                         _PV.field.in_(("name", "alias")))
                  .order_by(_PV.first_seen_at, _PV.id))


def scope_facts(sql: Any, scope: Scope, *, profile_subject: str | None,
                entity_names: Callable[[tuple[str, ...]], list[str]]) -> ScopeFacts:
    """One read transaction: the profile names of `profile_subject`, the scope's timeline and latest event,
    and the scope's entities whose normalised name is one of `entity_names(own names)` (the strings that could
    name an entity depend on the own names: "Where does Alice live?" is looked up as "Where does User
    live?"). The statements are built once per scope shape (a search pays for executing them, not for
    composing them)."""
    shape, params = _scope_terms(scope)
    with sql._tx() as s:
        conn = s.connection()
        names: tuple[str, ...] = ()
        if profile_subject:
            names = tuple(r[0] for r in conn.execute(_PROFILE_NAMES, {"subject": profile_subject}))
        normalized = list(dict.fromkeys(_normalized(n) for n in entity_names(names)
                                        if isinstance(n, str) and n.strip()))
        stored = conn.execute(_timeline_stmt(shape, bool(normalized)),
                              {**params, "most": TIMELINE_MAX_ROWS, "probe": TIMELINE_MAX_ROWS + 1,
                               **({"names": normalized} if normalized else {})}
                              ).all()
        timeline = Timeline.of([r[1:] for r in stored if r[0] == 0])
        entities = [{"id": r[1], "name": r[2]} for r in stored if r[0] == 1]
        if timeline is not None:
            latest = timeline.latest_event
        else:  # a large scope (or an empty one): its latest event alone
            row = conn.execute(_latest_stmt(shape), params).first()
            latest = (_utc(row[0]), _utc(row[1])) if row is not None else None
    return ScopeFacts(own_names=names, latest_event=latest, entities=tuple(entities), timeline=timeline)


def _utc(value: datetime | str | None) -> datetime | None:
    """A stored time as an aware UTC datetime: from the driver's own value (see `_as_stored`) or a datetime."""
    if value is None:
        return None
    if isinstance(value, str):  # SQLite's text, parsed as SQLAlchemy's SQLite DATETIME parses it
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime | str | None) -> str | None:
    """A stored time as ISO 8601 in UTC (`_utc(value).isoformat()`). SQLite's text as SQLAlchemy writes it
    ("YYYY-MM-DD HH:MM:SS.ffffff", naive UTC) is rewritten as a string: parsing it into a datetime and
    formatting it again cost ~3 us a value, and a search formats ~100 of them."""
    if value is None:
        return None
    if value.__class__ is str and len(value) == 26 and value[10] == " " and value[19] == ".":
        if value.endswith(".000000"):  # isoformat() leaves out a zero fraction
            return f"{value[:10]}T{value[11:19]}+00:00"
        return f"{value[:10]}T{value[11:]}+00:00"
    return _utc(value).isoformat()


def _as_stored(column: Any) -> Any:
    """A time column read as the driver returns it - SQLite's text, PostgreSQL's datetime - and turned into a
    UTC datetime by `_utc` alone: the column type's own two conversions per value (SQLAlchemy's parse, then
    UTCDateTime's) cost ~1.5 us each, and a search reads ~300 of them."""
    return sa.type_coerce(column, sa.String).label(column.name)


class RowTimes:
    """What the neighbour search needs of one memory row: its id, type and times as epoch seconds (created_at,
    and the event time: valid_at, else created_at)."""

    __slots__ = ("id", "memory_type", "created", "event")

    def __init__(self, mid: str, memory_type: str | None, created: float, event: float):
        self.id = mid
        self.memory_type = memory_type
        self.created = created
        self.event = event

    @classmethod
    def of_stored(cls, mid: str, memory_type: str | None, created_at: Any, valid_at: Any) -> RowTimes:
        """From a row's stored columns (`_as_stored` text or a datetime; the event time defaults to created)."""
        created = _epoch(created_at) if created_at is not None else 0.0
        return cls(mid, memory_type, created, _epoch(valid_at) if valid_at is not None else created)


@dataclass
class Timeline:
    """The live memories of a scope, oldest first (created_at, then id: `context_rows`' order), as stored - read
    before recall by `scope_facts`. `window` answers what `context_rows` reads, from memory; only the rows it
    returns are turned into RowTimes (the rest of a long timeline costs a list entry each).

    A dataclass of its two stored fields: the plan that holds it is graph state, and a chatbot that embeds the
    search graph in a checkpointed graph saves it with LangGraph's serializer (the derived lookups are rebuilt
    on load, not saved)."""

    stored: list  # (id, memory_type, created_at, valid_at) as the driver returns them
    latest_event: tuple | None  # (valid_at, created_at) of the latest event, as ScopeFacts has it

    def __post_init__(self) -> None:
        self.created = [r[2] for r in self.stored]  # sorted: SQL's order
        self.positions = {r[0]: i for i, r in enumerate(self.stored)}

    @classmethod
    def of(cls, stored: list[tuple]) -> Timeline | None:
        """From the (id, memory_type, created_at, valid_at) rows of `_timeline_stmt`, oldest first (None when it
        read none: too large a scope, or an empty one). The latest event is the greatest valid_at compared as
        SQL compares it (SQLite's text, PostgreSQL's time): the first of equal ones, as good as SQL's pick."""
        if not stored:
            return None
        latest = None
        for row in stored:
            if row[3] is not None and (latest is None or row[3] > latest[3]):
                latest = row
        return cls(stored, (_utc(latest[3]), _utc(latest[2])) if latest is not None else None)

    def window(self, ids: list[str], seed_times: list[float], *, max_gap_s: float) -> list[RowTimes] | None:
        """`context_rows` from memory: the rows whose id is in `ids` OR whose created_at lies within `max_gap_s`
        of a seed time, oldest first; None when one of `ids` is not in the timeline (a memory written since:
        then `context_rows` reads them all)."""
        positions = self.positions
        wanted = set()
        for mid in ids:
            i = positions.get(mid)
            if i is None:
                return None
            wanted.add(i)
        created = self.created
        for lo, hi in _merged_windows(seed_times, max_gap_s):
            lo_bound, hi_bound = _bound(lo, created[0]), _bound(hi, created[0])
            start = bisect_left(created, lo_bound)
            wanted.update(range(start, bisect_right(created, hi_bound, lo=start)))
        return [RowTimes.of_stored(*self.stored[i]) for i in sorted(wanted)]


def _bound(ts: float, stored: datetime | str) -> datetime | str:
    """Epoch seconds as `context_rows` binds them (to the microsecond, UTC), in the form of the stored times it
    is compared with: SQLite's text as SQLAlchemy writes it (compared as text, as SQLite compares it), else an
    aware datetime."""
    when = datetime.fromtimestamp(ts, tz=timezone.utc)
    if isinstance(stored, str):
        return (f"{when.year:04d}-{when.month:02d}-{when.day:02d} {when.hour:02d}:{when.minute:02d}:"
                f"{when.second:02d}.{when.microsecond:06d}")
    return when


_NAIVE_EPOCH = datetime(1970, 1, 1)


def _epoch(value: datetime | str) -> float:
    """Epoch seconds of a stored time (naive = UTC; `_as_stored` text or a datetime), as _utc(value).timestamp().
    A naive time's distance from the naive epoch is the timedelta `timestamp()` divides, without an aware copy
    built first: ~4x cheaper, and a search converts ~300 of them (its context window)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        return (value - _NAIVE_EPOCH).total_seconds()
    return value.timestamp()


@lru_cache(maxsize=256)
def _context_stmt(shape: tuple, with_ids: bool, windows: int):
    when = _MEM.created_at.type
    conds = [_MEM.id.in_(sa.bindparam("ids", expanding=True))] if with_ids else []
    conds += [_MEM.created_at.between(sa.bindparam(f"lo{i}", type_=when), sa.bindparam(f"hi{i}", type_=when))
              for i in range(windows)]
    return (select(_MEM.id, _MEM.memory_type, _as_stored(_MEM.created_at), _as_stored(_MEM.valid_at))
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
        rows = s.connection().execute(_context_stmt(shape, bool(ids), len(windows)), params).all()
    return [RowTimes.of_stored(*row) for row in rows]  # by position: cheaper than by name, ~100 rows a search


# memory_dicts reads these columns and unpacks each row by position: a row's attributes looked up by name cost
# more than the SQL itself (~1 ms of CPU for the ~35 rows of a search). deleted_at is only told apart from NULL:
# read as stored, not parsed.
_MEMORY_COLUMNS = (_MEM.id, _MEM.text, _MEM.hash, _MEM.user_id, _MEM.agent_id, _MEM.run_id, _MEM.group_id,
                   _MEM.category, _MEM.importance, _MEM.memory_type, _MEM.metadata, _as_stored(_MEM.created_at),
                   _as_stored(_MEM.updated_at), _MEM.access_count, _as_stored(_MEM.last_accessed_at),
                   _as_stored(_MEM.deleted_at), _MEM.trace_id, _MEM.status, _MEM.merged_into,
                   _as_stored(_MEM.valid_at), _as_stored(_MEM.invalid_at))

_FB = FeedbackRow.__table__.c
# a memory's latest feedback value (SQLStore.latest_feedback: newest created_at, then the greater id)
_LATEST_FEEDBACK = (select(_FB.feedback).where(_FB.memory_id == _MEM.id)
                    .order_by(_FB.created_at.desc(), _FB.id.desc()).limit(1).scalar_subquery())
_BY_ID = _MEM.id.in_(sa.bindparam("ids", expanding=True))
_MEMORIES_BY_ID = select(*_MEMORY_COLUMNS).where(_BY_ID)
_MEMORIES_WITH_FEEDBACK = select(*_MEMORY_COLUMNS, _LATEST_FEEDBACK).where(_BY_ID)


def memory_dicts(sql: Any, ids: list[str], *, feedback: dict[str, str | None] | None = None) -> dict[str, dict]:
    """{id: memory dict} of the live memories among `ids` (the shape of stores.sql.schema.memory_dict). With
    `feedback` (a dict to fill): each one's latest feedback value too, read by the same statement (what
    `latest_feedback` reads, without a statement of its own), for those that have any."""
    if not ids:
        return {}
    # deleted rows are dropped here, not in SQL: with `deleted_at IS NULL` beside `id IN (...)` SQLite's planner
    # (no statistics) walks the deleted_at index - every live row - instead of the primary key: 3 ms at 10k rows
    with sql._tx() as s:
        rows = s.connection().execute(_MEMORIES_BY_ID if feedback is None else _MEMORIES_WITH_FEEDBACK,
                                      {"ids": list(ids)}).all()
    out: dict[str, dict] = {}
    for (mid, text, hash_, user_id, agent_id, run_id, group_id, category, importance, memory_type, meta, created,
         updated, access_count, last_accessed, deleted, trace_id, status, merged_into, valid, invalid,
         *latest) in rows:
        if deleted is not None:
            continue
        out[mid] = {
            "id": mid, "memory": text, "hash": hash_, "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
            "group_id": group_id, "category": category, "importance": importance, "memory_type": memory_type,
            "metadata": dict(meta or {}), "created_at": _iso(created), "updated_at": _iso(updated),
            "access_count": access_count or 0, "last_accessed_at": _iso(last_accessed), "deleted_at": None,
            "trace_id": trace_id, "status": status or "active", "merged_into": merged_into, "valid_at": _iso(valid),
            "invalid_at": _iso(invalid)}
        if feedback is not None and latest[0] is not None:
            feedback[mid] = latest[0]
    return out


_REL = RelationRow.__table__.c
_ENT = EntityRow.__table__.c


# "valid" in a form no index serves: with `valid = 1` SQLite, which has no statistics on these tables, walks the
# low-selectivity index on `valid` (every valid relation of every scope: ~40 ms at 8,000 relations on a loaded
# machine) instead of the indexes on memory_id / source_id / target_id (~1 ms)
_VALID = sa.not_(_REL.valid.is_(False))


@lru_cache(maxsize=32)
def _around_stmt(include_invalid: bool, shape: tuple[tuple[str, bool], ...]):
    """Relations of the scope incident to an end of the valid relations the given memories state, newest first,
    with their ends' names: the one-hop walk from a search's best hits as one statement. `shape`: each scope
    field Scope.match names and whether it must be unset; the set ones are bound as `scope_<field>`."""
    ids = sa.bindparam("ids", expanding=True)
    ends = (select(_REL.source_id).where(_REL.memory_id.in_(ids), _VALID)
            .union(select(_REL.target_id).where(_REL.memory_id.in_(ids), _VALID))).subquery()
    src, dst = EntityRow.__table__.alias("src"), EntityRow.__table__.alias("dst")
    # the scope's fields (Scope.match), which SQLite reads through the index on user_id: the user's relations only
    conds = [_REL[k].is_(None) if unset else _REL[k] == sa.bindparam(f"scope_{k}") for k, unset in shape]
    conds.append(sa.or_(_REL.source_id.in_(select(ends.c[0])), _REL.target_id.in_(select(ends.c[0]))))
    if not include_invalid:
        conds.append(_VALID)
    return (select(_REL.id, _REL.source_id, src.c.name, _REL.relation, _REL.target_id, dst.c.name, _REL.memory_id,
                   _REL.valid)
            .join(src, src.c.id == _REL.source_id).join(dst, dst.c.id == _REL.target_id)
            .where(*conds).order_by(_REL.created_at.desc(), _REL.id).limit(sa.bindparam("limit")))


_AROUND_KEYS = ("id", "source_id", "source", "relation", "target_id", "target", "memory_id", "valid")


def relations_near_hits(sql: Any, scope: Scope, memory_ids: list[str], *, include_invalid: bool = False,
                     limit: int = 200) -> list[dict]:
    """The relations one hop from the entities of `memory_ids`' valid relations, read from the system of record
    in one statement (`hops` 1): what GraphStore.neighbourhood(depth=1) returns for those entities, without a
    round trip to the graph and a second statement for the seeds. The scope matches as every store's does
    (Scope.match: the fields it sets, and no group unless it names one), so a user's search walks the relations
    of the user's memories kept under an agent or a run too, as the graph's walk does."""
    if not memory_ids:
        return []
    match = require_scope(scope).match()
    shape = tuple((k, v is None) for k, v in match.items())
    params = {f"scope_{k}": v for k, v in match.items() if v is not None}
    with sql._tx() as s:
        rows = s.connection().execute(_around_stmt(bool(include_invalid), shape),
                                      {"ids": list(memory_ids), "limit": int(limit), **params}).all()
    out = []
    for r in rows:
        row = dict(zip(_AROUND_KEYS, r))
        row["valid"] = True if row["valid"] is None else bool(row["valid"])
        row["hops"] = 1
        out.append(row)
    return out


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
