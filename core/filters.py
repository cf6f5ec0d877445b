"""mem0-style metadata filters: parsing into a small tree, and evaluation on memory dicts.

Accepted shapes (same as mem0's advanced filters)::

    {"city": "Paris"}                                   # eq
    {"city": {"ne": "Paris"}}                           # eq ne gt gte lt lte in nin contains
    {"score": {"gte": 3, "lt": 9}}                      # several operators on one key: all must hold
    {"city": ["Paris", "Rome"]}                         # a bare list means "in"
    {"AND": [{...}, {...}]}, {"OR": [...]}, {"NOT": [...]}   # NOT: none of the listed filters holds
    {"a": 1, "b": 2}                                    # several keys: all must hold

Keys are metadata keys (payload ``metadata.<key>``; dots reach nested dicts), except the reserved fields
``memory_type``, ``category``, ``created_at``, ``updated_at``, ``valid_at`` (when the remembered event
happened, if not when it was recorded; `event_time_range` falls back to created_at) and the scope fields
``user_id``, ``agent_id``, ``run_id``, ``group_id`` which address the memory's own fields. A key may also be written ``metadata.<key>`` explicitly
(e.g. ``metadata.category`` for a metadata key that collides with a reserved name). ``created_at`` /
``updated_at`` / ``valid_at`` take ISO-8601 strings or datetimes (naive ones are read as UTC) and are compared
as epoch seconds (payload fields ``created_ts`` / ``updated_ts`` / ``valid_ts`` in the vector stores).

Semantics follow Qdrant's (so that `matches` and the vector-store translators agree): a condition on a
list-valued field holds when any element satisfies it; ``ne``/``nin``/``NOT`` hold for a missing field;
``contains`` is "element equals" on lists and a case-sensitive substring test on strings.

The translators to Qdrant filter objects live beside each backend in ``memoryx.stores.vectors``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from memoryx.core.instants import epoch_of
from memoryx.core.limits import MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_VALUES
from memoryx.errors import InvalidInputError

# metadata key of a memory's expiry (epoch seconds), written by add's expiration_date option
EXPIRES_TS_KEY = "expires_ts"

__all__ = ["FilterNode", "Cond", "And", "Or", "Not", "parse_filters", "matches", "OPERATORS",
           "RESERVED_FIELDS", "TIME_FIELDS", "payload_key", "to_epoch", "event_time_range",
           "with_speaker"]

OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")
RANGE_OPS = ("gt", "gte", "lt", "lte")
TIME_FIELDS = ("created_at", "updated_at", "valid_at")
SCOPE_KEYS = ("user_id", "agent_id", "run_id", "group_id")
RESERVED_FIELDS = ("memory_type", "category", *TIME_FIELDS, *SCOPE_KEYS)
LOGICAL = ("AND", "OR", "NOT")

Scalar = str | int | float | bool


@dataclass(frozen=True)
class FilterNode:
    """Base of the filter tree (And / Or / Not / Cond)."""


@dataclass(frozen=True)
class Cond(FilterNode):
    """One condition. `field` is a reserved field name or 'metadata.<key>'. Time fields carry epoch seconds."""

    field: str
    op: str
    value: Any  # scalar, tuple of scalars (in/nin), or float epoch seconds for time fields


@dataclass(frozen=True)
class And(FilterNode):
    children: tuple[FilterNode, ...]


@dataclass(frozen=True)
class Or(FilterNode):
    children: tuple[FilterNode, ...]


@dataclass(frozen=True)
class Not(FilterNode):
    """Holds when none of the children holds."""

    children: tuple[FilterNode, ...]


# ---------------------------------------------------------------------------------------------------------
# parsing

def _allowed() -> str:
    return ", ".join(OPERATORS)


def to_epoch(value: Any, *, what: str = "time") -> float:
    """ISO-8601 string / datetime / epoch number -> epoch seconds (UTC for naive values), within the range
    every store holds (core.instants: years 1-9999 after the offset); InvalidInputError naming `what` else."""
    return epoch_of(value, what)


def _field_of(key: str) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidInputError(f"Filter keys must be non-empty strings, got {key!r}")
    if key in RESERVED_FIELDS or key.startswith("metadata."):
        if key == "metadata.":
            raise InvalidInputError("Filter key 'metadata.' names no metadata key")
        return key
    return f"metadata.{key}"


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def _check_value(field: str, op: str, value: Any) -> Any:
    is_time = field in TIME_FIELDS
    if op in ("in", "nin"):
        if not isinstance(value, (list, tuple, set, frozenset)):
            raise InvalidInputError(
                f"Filter operator '{op}' on '{field}' needs a list of values, got {type(value).__name__} "
                f"({value!r}). Allowed operators: {_allowed()}."
            )
        items = list(value)
        if len(items) > MAX_FILTER_VALUES:
            raise InvalidInputError(f"Filter operator '{op}' on '{field}' lists {len(items)} values; the limit is "
                                    f"{MAX_FILTER_VALUES} values per list. Split the request.")
        for v in items:
            if not _is_scalar(v):
                raise InvalidInputError(
                    f"Filter operator '{op}' on '{field}' needs a list of strings/numbers/booleans; "
                    f"found {v!r}. Allowed operators: {_allowed()}."
                )
        if is_time:
            return tuple(to_epoch(v, what=f"'{op}' on '{field}'") for v in items)
        return tuple(items)
    if op in RANGE_OPS:
        if is_time:
            if isinstance(value, (str, datetime)) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
                return to_epoch(value, what=f"'{op}' on '{field}'")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        expected = "an ISO-8601 datetime string or a datetime" if is_time else "a number"
        raise InvalidInputError(
            f"Filter operator '{op}' on '{field}' needs {expected}, got {type(value).__name__} ({value!r}). "
            f"Allowed operators: {_allowed()}."
        )
    # eq / ne / contains
    if is_time and op in ("eq", "ne"):
        if isinstance(value, (str, datetime)):
            return to_epoch(value, what=f"'{op}' on '{field}'")
    if value is None and op in ("eq", "ne"):
        return None  # "field is missing/null" (eq) / "field has a value" (ne)
    if not _is_scalar(value):
        raise InvalidInputError(
            f"Filter operator '{op}' on '{field}' needs a single string/number/boolean, got "
            f"{type(value).__name__} ({value!r}). Allowed operators: {_allowed()}."
        )
    return value


def _parse_key(key: str, spec: Any) -> FilterNode:
    field = _field_of(key)
    if isinstance(spec, dict):
        if not spec:
            raise InvalidInputError(f"Filter on '{key}' is an empty dict; use {{'op': value}} with op one of {_allowed()}")
        conds: list[FilterNode] = []
        for op, value in spec.items():
            if op not in OPERATORS:
                raise InvalidInputError(
                    f"Unknown filter operator {op!r} on '{key}'. Allowed operators: {_allowed()} "
                    f"(and the logical keys AND, OR, NOT)."
                )
            conds.append(Cond(field, op, _check_value(field, op, value)))
        return conds[0] if len(conds) == 1 else And(tuple(conds))
    if isinstance(spec, (list, tuple, set, frozenset)):
        return Cond(field, "in", _check_value(field, "in", spec))
    return Cond(field, "eq", _check_value(field, "eq", spec))


class _Budget:
    """What one filter may hold (core.limits): its conditions counted as they are parsed."""

    def __init__(self) -> None:
        self.conditions = 0

    def count(self, node: FilterNode) -> FilterNode:
        self.conditions += len(node.children) if isinstance(node, And) else 1
        if self.conditions > MAX_FILTER_CONDITIONS:
            raise InvalidInputError(f"The filter holds more than {MAX_FILTER_CONDITIONS} conditions, the limit per "
                                    "request; use an 'in' list for many values of one field, or split the request.")
        return node


def _parse(obj: Any, where: str, depth: int = 0, budget: _Budget | None = None) -> FilterNode:
    budget = budget or _Budget()
    if depth > MAX_FILTER_DEPTH:
        raise InvalidInputError(f"The filter nests AND / OR / NOT more than {MAX_FILTER_DEPTH} levels deep, the "
                                "limit; flatten it (AND of ANDs is one AND).")
    if not isinstance(obj, dict):
        raise InvalidInputError(f"{where} must be a dict such as {{'city': 'Paris'}}, got {type(obj).__name__}")
    if not obj:
        return And(())
    nodes: list[FilterNode] = []
    for key, spec in obj.items():
        if key in LOGICAL:
            if isinstance(spec, dict):
                spec = [spec]
            if not isinstance(spec, (list, tuple)):
                raise InvalidInputError(f"'{key}' needs a list of filter dicts, got {type(spec).__name__}")
            if key == "OR" and not spec:
                raise InvalidInputError("'OR' needs at least one filter dict (an empty OR would match nothing)")
            children = tuple(_parse(c, f"An item of '{key}'", depth + 1, budget) for c in spec)
            nodes.append({"AND": And, "OR": Or, "NOT": Not}[key](children))
        elif isinstance(key, str) and key.upper() in LOGICAL:
            raise InvalidInputError(f"Logical filter keys are upper case: use '{key.upper()}' instead of '{key}'")
        else:
            nodes.append(budget.count(_parse_key(key, spec)))
    return nodes[0] if len(nodes) == 1 else And(tuple(nodes))


def with_speaker(filters: dict | FilterNode | None, speaker: str | None) -> dict | FilterNode | None:
    """`filters` narrowed to what one participant of a group chat said (metadata.speaker)."""
    if speaker is None:
        return filters
    if not isinstance(speaker, str) or not speaker.strip():
        raise InvalidInputError(f"speaker must be a non-empty string, got {speaker!r}")
    cond = Cond("metadata.speaker", "eq", speaker.strip())
    if filters is None or filters == {}:
        return cond
    return And((parse_filters(filters), cond))


def parse_filters(filters: dict | None) -> FilterNode | None:
    """Parse a mem0-style filter dict. None or {} -> None. InvalidInputError names the bad operator/value."""
    if filters is None:
        return None
    if isinstance(filters, FilterNode):
        return filters
    node = _parse(filters, "filters")
    if isinstance(node, And) and not node.children:
        return None
    return node


# ---------------------------------------------------------------------------------------------------------
# evaluation

_MISSING = object()


def payload_key(field: str) -> str:
    """Payload path of a filter field in the vector stores (time fields use their epoch twin)."""
    if field == "created_at":
        return "created_ts"
    if field == "updated_at":
        return "updated_ts"
    if field == "valid_at":
        return "valid_ts"
    return field


def event_time_range(lo: float, hi: float) -> FilterNode:
    """Memories whose event happened in [lo, hi) (epoch seconds): valid_at when the memory has one (a replayed
    message's time, a dated fact), else created_at (the event was recorded as it happened)."""
    return Or((And((Cond("valid_at", "gte", float(lo)), Cond("valid_at", "lt", float(hi)))),
               And((Cond("valid_at", "eq", None), Cond("created_at", "gte", float(lo)),
                    Cond("created_at", "lt", float(hi))))))


def _lookup(memory: dict, field: str) -> Any:
    if field.startswith("metadata."):
        cur: Any = memory.get("metadata") or {}
        for part in field[len("metadata."):].split("."):
            if not isinstance(cur, dict) or part not in cur:
                return _MISSING
            cur = cur[part]
        return cur
    value = memory.get(field, _MISSING)
    if field in TIME_FIELDS and value is not _MISSING and value is not None:
        try:
            return to_epoch(value)
        except InvalidInputError:
            return _MISSING
    return value


def _values(v: Any) -> list:
    if v is _MISSING or v is None:
        return []
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _cond(c: Cond, memory: dict) -> bool:
    raw = _lookup(memory, c.field)
    vals = _values(raw)
    op, target = c.op, c.value
    if op == "eq":
        return not vals if target is None else any(_eq(v, target) for v in vals)
    if op == "ne":
        return bool(vals) if target is None else not any(_eq(v, target) for v in vals)
    if op == "in":
        return any(_eq(v, t) for v in vals for t in target)
    if op == "nin":
        return not any(_eq(v, t) for v in vals for t in target)
    if op == "contains":
        for v in vals:
            if isinstance(v, str) and isinstance(target, str):
                if target in v:
                    return True
            elif _eq(v, target):
                return True
        return False
    # ranges
    for v in vals:
        n = _num(v)
        if n is None:
            continue
        if (op == "gt" and n > target) or (op == "gte" and n >= target) or (op == "lt" and n < target) or (
            op == "lte" and n <= target
        ):
            return True
    return False


def matches(node: FilterNode | None, memory: dict) -> bool:
    """Evaluate a parsed filter on a memory dict (fields + 'metadata'). None matches everything."""
    if node is None:
        return True
    if isinstance(node, Cond):
        return _cond(node, memory)
    if isinstance(node, And):
        return all(matches(c, memory) for c in node.children)
    if isinstance(node, Or):
        return any(matches(c, memory) for c in node.children)
    if isinstance(node, Not):
        return not any(matches(c, memory) for c in node.children)
    raise InvalidInputError(f"Not a filter node: {node!r}")


def walk(node: FilterNode | None) -> Iterable[Cond]:
    """All conditions of a tree (for validation / index planning)."""
    if node is None:
        return
    if isinstance(node, Cond):
        yield node
    else:
        for c in node.children:  # type: ignore[attr-defined]
            yield from walk(c)


def alive_filter(now: float | None = None) -> dict:
    """The filter of memories not expired at `now` (epoch seconds)."""
    return {"NOT": [{f"metadata.{EXPIRES_TS_KEY}": {"lte": time.time() if now is None else now}}]}


def with_alive(filters: dict | None, now: float | None = None) -> dict:
    return {"AND": [filters, alive_filter(now)]} if filters else alive_filter(now)
