"""Filter translation for the PostgreSQL backend: the same algorithm as the Qdrant dialects (`_Dialect`), written
as SQL over the point's columns and its JSONB payload.

A condition on a payload field is a SQL/JSON path predicate, e.g. ``$."metadata"."city" ? (@ == "Paris")``.
Lax mode gives Qdrant's semantics without extra code: a path that reaches an array tests each element (a
condition on a list holds when any element satisfies it), and comparing values of different types is
"unknown", never true (``"3" > 2`` and ``true == 1`` do not hold). The scope's fields are real, indexed
columns. Values are written into the path as JSON literals and the whole path is a bound parameter, so
neither a value nor a key can change the SQL; keys with quotes or backslashes are refused by `json_path`.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memoryx.core.filters import FilterNode
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.stores.vectors.filters import _Dialect

_RANGE_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


@dataclass(frozen=True)
class SqlFilter:
    """A WHERE fragment and its bound parameters (names unique per fragment, so fragments combine)."""

    sql: str
    params: dict[str, Any] = field(default_factory=dict)


TRUE = SqlFilter("TRUE")
FALSE = SqlFilter("FALSE")


def _literal(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        raise InvalidInputError(f"Filter values must be finite numbers, got {v!r}")
    return json.dumps(v, ensure_ascii=False)


def _path(key: str) -> str:
    """A `json_path` key (segments, quoted when not simple) -> an SQL/JSON path with every segment quoted."""
    return "$" + "".join("." + json.dumps(seg.strip('"'), ensure_ascii=False) for seg in key.split("."))


class _SqlDialect(_Dialect):
    """`SqlFilter` factories over a table with scope columns and a JSONB ``payload`` column."""

    def __init__(self):
        self._names = itertools.count()

    def _param(self, value: Any) -> tuple[str, dict]:
        name = f"f{next(self._names)}"
        return f":{name}", {name: value}

    def _exists(self, key: str, predicate: str) -> SqlFilter:
        ref, params = self._param(f"{_path(key)} ? ({predicate})")
        return SqlFilter(f"jsonb_path_exists(payload, CAST({ref} AS jsonpath))", params)

    def value(self, key: str, v):
        return self._exists(key, f"@ == {_literal(v)}")

    def any(self, key: str, vs):
        if not vs:
            return FALSE
        return self._exists(key, " || ".join(f"@ == {_literal(v)}" for v in vs))

    def substring(self, key: str, s: str):
        return self._exists(key, f'@ like_regex {_literal(s)} flag "q"')  # "q": the pattern is a plain string

    def range(self, key: str, **bounds: float):
        return self._exists(key, " && ".join(f"@ {_RANGE_OPS[op]} {_literal(float(v))}" for op, v in bounds.items()))

    def empty(self, key: str):
        # missing, null and [] alike (as Qdrant's IsEmpty)
        ref, params = self._param(f"{_path(key)} ? (@ != null)")
        return SqlFilter(f"NOT jsonb_path_exists(payload, CAST({ref} AS jsonpath))", params)

    def filter(self, must=None, should=None, must_not=None):
        parts: list[SqlFilter] = list(must or [])
        if should:
            parts.append(_join(should, " OR "))
        parts += [SqlFilter(f"NOT ({f.sql})", f.params) for f in must_not or []]
        return _join(parts, " AND ") if parts else TRUE

    def query_filter(self, scope: Scope | None, node: FilterNode | dict | None):
        columns: list[SqlFilter] = []
        if scope is not None:
            for k, v in scope.match().items():  # the scope's fields are columns with their own indexes
                if v is None:
                    columns.append(SqlFilter(f"{k} IS NULL"))
                else:
                    ref, params = self._param(v)
                    columns.append(SqlFilter(f"{k} = {ref}", params))
        rest = super().query_filter(None, node)
        parts = columns + ([rest] if rest is not None else [])
        return _join(parts, " AND ") if parts else None


def _join(parts: list[SqlFilter], op: str) -> SqlFilter:
    if len(parts) == 1:
        return parts[0]
    params: dict[str, Any] = {}
    for p in parts:
        params.update(p.params)
    return SqlFilter("(" + op.join(f"({p.sql})" for p in parts) + ")", params)


@lru_cache(maxsize=1)
def sql_dialect() -> _SqlDialect:
    return _SqlDialect()


def to_sql_filter(node: FilterNode | None, scope: Scope | None = None) -> SqlFilter | None:
    """FilterNode (+ scope) -> a WHERE fragment over the pgvector tables (None when nothing is filtered)."""
    return sql_dialect().query_filter(scope, node)
