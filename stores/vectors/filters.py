"""Filter translation: one algorithm (`_Dialect`), two dialects of Qdrant condition types.

`_EdgeDialect` builds ``qdrant_edge`` types for the embedded engine, `_ClientDialect` builds
``qdrant_client.models`` types for a server; both translate the same `memoryx.core.filters` tree and scope, because
both backends store the same payload.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

from memoryx.core.filters import And, Cond, FilterNode, Not, Or, parse_filters, payload_key
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError

_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_]+$")


def json_path(key: str) -> str:
    """Payload key -> Qdrant JSON path; segments with spaces/punctuation are quoted."""
    parts = key.split(".")
    out = []
    for p in parts:
        if not p:
            raise InvalidInputError(f"Filter key {key!r} has an empty path segment")
        if '"' in p or "\\" in p:
            raise InvalidInputError(f"Filter key {key!r}: quotes and backslashes are not supported in keys")
        out.append(p if _SIMPLE_KEY.match(p) else f'"{p}"')
    return ".".join(out)


# Booleans in metadata are also kept as "true"/"false" keywords under this payload key: the edge engine
# matches keywords, not JSON booleans (memoryx.stores.vectors.edge.bool_shadow writes them).
BOOL_SHADOW = "_bools"


class _Dialect:
    """Factories for the condition types of one Qdrant Python API."""

    def value(self, key: str, v: str | int | bool): raise NotImplementedError
    def any(self, key: str, vs: list[str]): raise NotImplementedError
    def substring(self, key: str, s: str): raise NotImplementedError
    def range(self, key: str, **bounds: float): raise NotImplementedError
    def empty(self, key: str): raise NotImplementedError
    def filter(self, must=None, should=None, must_not=None): raise NotImplementedError

    # -- the algorithm ----------------------------------------------------------------------------------
    def eq(self, key: str, v: Any):
        if v is None:
            return self.empty(key)
        if isinstance(v, bool) or isinstance(v, str):
            return self.value(key, v)
        # numbers: a degenerate range matches 3, 3.0 and floats alike (MatchValue takes no floats)
        return self.range(key, gte=float(v), lte=float(v))

    def any_of(self, key: str, values: Sequence[Any]):
        strs = [v for v in values if isinstance(v, str)]
        conds = [self.any(key, strs)] if strs or not values else []
        conds += [self.eq(key, v) for v in values if not isinstance(v, str)]
        return conds[0] if len(conds) == 1 else self.filter(should=conds)

    def cond(self, c: Cond):
        key = json_path(payload_key(c.field))
        op, v = c.op, c.value
        if op == "eq":
            return self.eq(key, v)
        if op == "ne":
            return self.filter(must_not=[self.eq(key, v)])
        if op == "in":
            return self.any_of(key, v)
        if op == "nin":
            return self.filter(must_not=[self.any_of(key, v)])
        if op in ("gt", "gte", "lt", "lte"):
            return self.range(key, **{op: float(v)})
        if op == "contains":
            return self.substring(key, v) if isinstance(v, str) else self.eq(key, v)
        raise InvalidInputError(f"Unknown filter operator {op!r}")

    def node(self, n: FilterNode):
        if isinstance(n, Cond):
            return self.cond(n)
        if isinstance(n, And):
            return self.filter(must=[self.node(c) for c in n.children])
        if isinstance(n, Or):
            return self.filter(should=[self.node(c) for c in n.children])
        if isinstance(n, Not):
            return self.filter(must_not=[self.node(c) for c in n.children])
        raise InvalidInputError(f"Not a filter node: {n!r}")

    def query_filter(self, scope: Scope | None, node: FilterNode | dict | None):
        # Scope.match: the set fields, and group_id empty (no group) unless the scope names one.
        must = [self.eq(k, v) for k, v in scope.match().items()] if scope is not None else []
        if isinstance(node, dict):  # convenience: a raw mem0-style filter dict
            node = parse_filters(node)
        if node is not None:
            must.append(self.node(node))
        return self.filter(must=must) if must else None


class _EdgeDialect(_Dialect):
    """The embedded engine's types. Its filters are kept by (scope, filter): one search asks for the same one
    three times (dense, keyword, the keyword path's IDF corpus), a user's scope filter comes back every search,
    and building one costs ~0.1 ms; the ``qdrant_edge`` values are never changed once built."""

    CACHE_SIZE = 1024

    def __init__(self):
        import qdrant_edge as qe

        self.qe = qe
        self._built: dict[tuple, Any] = {}

    def query_filter(self, scope: Scope | None, node: FilterNode | dict | None):
        # repr, not the node itself, in the key: dataclass equality holds 1 == 1.0 == True, which translate apart
        key = (scope, repr(node))
        try:
            return self._built[key]
        except KeyError:
            pass
        built = super().query_filter(scope, node)
        if len(self._built) >= self.CACHE_SIZE:  # a search's filter holds its own time (memoryx.ingest.add_options)
            self._built.clear()
        self._built[key] = built
        return built

    def value(self, key, v):
        return self.qe.FieldCondition(key=key, match=self.qe.MatchValue(v))

    def eq(self, key: str, v: Any):
        if isinstance(v, bool) and key.startswith("metadata."):
            return self.value(f"{BOOL_SHADOW}.{key[len('metadata.'):]}", "true" if v else "false")
        return super().eq(key, v)

    def any(self, key, vs):
        return self.qe.FieldCondition(key=key, match=self.qe.MatchAny(list(vs)))

    def substring(self, key, s):
        return self.qe.FieldCondition(key=key, match=self.qe.MatchSubstring(s))

    def range(self, key, **bounds):
        return self.qe.FieldCondition(key=key, range=self.qe.RangeFloat(**bounds))

    def empty(self, key):
        return self.qe.IsEmptyCondition(key)

    def filter(self, must=None, should=None, must_not=None):
        return self.qe.Filter(must=must, should=should, must_not=must_not)


class _ClientDialect(_Dialect):
    def __init__(self):
        from qdrant_client import models

        self.m = models

    def value(self, key, v):
        return self.m.FieldCondition(key=key, match=self.m.MatchValue(value=v))

    def any(self, key, vs):
        return self.m.FieldCondition(key=key, match=self.m.MatchAny(any=list(vs)))

    def substring(self, key, s):
        return self.m.FieldCondition(key=key, match=self.m.MatchSubstring(substring=s))

    def range(self, key, **bounds):
        return self.m.FieldCondition(key=key, range=self.m.Range(**bounds))

    def empty(self, key):
        return self.m.IsEmptyCondition(is_empty=self.m.PayloadField(key=key))

    def filter(self, must=None, should=None, must_not=None):
        return self.m.Filter(must=must, should=should, must_not=must_not)


@lru_cache(maxsize=1)
def edge_dialect() -> _EdgeDialect:
    return _EdgeDialect()


@lru_cache(maxsize=1)
def client_dialect() -> _ClientDialect:
    return _ClientDialect()


def to_edge_filter(node: FilterNode | None, scope: Scope | None = None):
    """FilterNode (+ scope) -> qdrant_edge.Filter (None when there is nothing to filter)."""
    return edge_dialect().query_filter(scope, node)


def to_qdrant_filter(node: FilterNode | None, scope: Scope | None = None):
    """FilterNode (+ scope) -> qdrant_client.models.Filter (None when there is nothing to filter)."""
    return client_dialect().query_filter(scope, node)
