"""Vector projection of memories and entities: two backends, one contract.

* `EdgeVectorStore` — the Qdrant engine in-process (``qdrant_edge.EdgeShard``), one shard per collection
  under ``<data_dir>/qdrant/<prefix>_memories`` and ``<prefix>_entities``. The default: no server.
* `QdrantServerVectorStore` — a Qdrant server (or the client's local mode in tests) through
  ``langchain_qdrant.QdrantVectorStore`` (dense search) and the ``QdrantClient`` (writes, sparse keyword
  search, payload indexes, deletes, counts).

Both collections hold a dense cosine vector named ``dense`` and a sparse vector ``keywords`` with Qdrant's
IDF modifier: the sparse vector of a text is `memoryx.text.sparse_vector` (hashed tokens, BM25-saturated
term frequencies) so that a sparse dot product with IDF is BM25. IDF statistics are computed over the
caller's scope (``IdfParams(corpus=<scope filter>)``), so one tenant's vocabulary never shapes another's
scores.

Payload of a memory point (the same in both backends, so one filter translator serves both)::

    {"id", "text", "hash", "user_id", "agent_id", "run_id", "memory_type", "category", "importance",
     "created_at" (ISO), "created_ts" (epoch s), "updated_at", "updated_ts", "metadata": {...}}

Scope fields are only written when set. Keyword payload indexes: user_id, agent_id, run_id, memory_type,
category; float indexes: created_ts, updated_ts (entities: the scope fields only). Point ids are the memory
ids (uuid strings); any other string id is mapped to a stable uuid5 and the original is kept in
``payload["id"]``. Every query carries the scope as exact matches on the fields the Scope sets.

Known limits of the embedded backend (qdrant-edge-py 0.9), measured:

* One process per directory: the shard's WAL is locked. A second process gets `StoreUnavailableError`
  naming the directory and the holder (pid/command from ``.<collection>.owner.json``); within one process
  the shard is shared (reference counted), so building services twice is fine.
* No background optimiser: points live in appendable segments with payload indexes; a scope-filtered search
  pre-filters by the keyword index and scores exactly (p99 0.5 ms at 100k points / 1k users). A scope with
  very many points (tens of thousands) scans them all; `EdgeVectorStore.optimize()` builds HNSW and vacuums
  deletes (blocking: ~1 min per 100k points) for such cases.
* ``MatchValue(True)`` is converted to the integer 1 by the 0.9 bindings and never matches a JSON boolean:
  boolean metadata is mirrored as "true"/"false" under ``payload["_bools"]`` and filtered there (the field is
  stripped from hits).
* Durability: updates go through Qdrant's WAL (a killed process loses nothing on reopen); close() flushes.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import threading
import uuid
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol, Sequence, runtime_checkable

from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.filters import And, Cond, FilterNode, Not, Or, parse_filters, payload_key, to_epoch
from memoryx.scope import SCOPE_FIELDS, Scope
from memoryx.text import normalize_name, query_sparse_vector, sparse_vector

if TYPE_CHECKING:  # pragma: no cover
    from langchain_core.embeddings import Embeddings
    from qdrant_client import QdrantClient

    from memoryx.settings import Settings

__all__ = [
    "VectorHit",
    "VectorStore",
    "EdgeVectorStore",
    "QdrantServerVectorStore",
    "make_vector_store",
    "to_edge_filter",
    "to_qdrant_filter",
    "DENSE",
    "SPARSE",
]

log = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "keywords"
KEYWORD_INDEXES = ("user_id", "agent_id", "run_id", "memory_type", "category")
FLOAT_INDEXES = ("created_ts", "updated_ts")
_BATCH = 512  # points per update operation / request
_ID_NAMESPACE = uuid.UUID("6f1c7a52-3e0b-4d5e-9a57-6d656d6f7279")


@dataclass
class VectorHit:
    id: str
    score: float
    payload: dict = field(default_factory=dict)


@runtime_checkable
class VectorStore(Protocol):
    dims: int

    def upsert_memories(self, items: list[dict]) -> None: ...
    def delete_memories(self, ids: list[str]) -> None: ...
    def search_memories(self, vector, scope: Scope, *, limit: int = 5, threshold: float | None = None,
                        filters: FilterNode | None = None) -> list[VectorHit]: ...
    def keyword_search(self, text: str, scope: Scope, *, limit: int = 10,
                       filters: FilterNode | None = None) -> list[VectorHit]: ...
    def upsert_entities(self, items: list[dict]) -> None: ...
    def search_entities(self, vector, scope: Scope, *, limit: int = 5, threshold: float | None = None) -> list[VectorHit]: ...
    def delete_entities(self, ids: list[str]) -> None: ...
    def delete_scope(self, scope: Scope) -> None: ...
    def count_memories(self, scope: Scope | None = None) -> int: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...


# =========================================================================================================
# payloads (shared by both backends)

def point_id(item_id: Any) -> str:
    """Qdrant point id of one of our ids: the uuid itself, else a stable uuid5 of the string."""
    if isinstance(item_id, uuid.UUID):
        return str(item_id)
    if not isinstance(item_id, str) or not item_id:
        raise InvalidInputError(f"Vector point ids must be non-empty strings, got {item_id!r}")
    try:
        return str(uuid.UUID(item_id))
    except ValueError:
        return str(uuid.uuid5(_ID_NAMESPACE, item_id))


def _vector(v: Any, dims: int, what: str) -> list[float]:
    if v is None:
        raise InvalidInputError(f"{what}: 'vector' is missing")
    if hasattr(v, "tolist"):
        v = v.tolist()
    if len(v) != dims:
        raise InvalidInputError(
            f"{what}: vector has {len(v)} dimensions, the collection has {dims}. The embedding model changed? "
            "Keep MEMORYX_EMBEDDING_MODEL/MEMORYX_EMBEDDING_DIMS, or reindex into a new data dir / collection prefix."
        )
    return v


def _iso(value: Any) -> tuple[str, float]:
    if value is None:
        value = datetime.now(timezone.utc)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.isoformat(), value.timestamp()
    if isinstance(value, str):
        return value, to_epoch(value, what="created_at")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        dt = datetime.fromtimestamp(float(value), tz=timezone.utc)
        return dt.isoformat(), float(value)
    raise InvalidInputError(f"created_at/updated_at must be an ISO string or datetime, got {value!r}")


def _json_safe(obj: Any) -> Any:
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(obj).__name__}")
    try:
        json.dumps(obj)
        return obj
    except (TypeError, ValueError):
        return json.loads(json.dumps(obj, default=str))


def memory_payload(item: dict) -> dict:
    created_at, created_ts = _iso(item.get("created_at"))
    upd = item.get("updated_at")
    updated_at, updated_ts = _iso(upd) if upd is not None else (created_at, created_ts)
    payload: dict[str, Any] = {
        "id": str(item["id"]),
        "text": item.get("text") if item.get("text") is not None else item.get("memory", ""),
        "memory_type": item.get("memory_type") or "fact",
        "category": item.get("category"),
        "importance": float(item["importance"]) if item.get("importance") is not None else 0.5,
        "created_at": created_at,
        "created_ts": created_ts,
        "updated_at": updated_at,
        "updated_ts": updated_ts,
        "metadata": _json_safe(item.get("metadata")),
    }
    if item.get("hash"):
        payload["hash"] = item["hash"]
    for k in SCOPE_FIELDS:
        if item.get(k):
            payload[k] = item[k]
    if not any(item.get(k) for k in SCOPE_FIELDS):
        raise InvalidInputError(f"Memory {item.get('id')!r} has no user_id/agent_id/run_id; every point needs a scope")
    return payload


def entity_payload(item: dict) -> dict:
    name = item.get("name") or ""
    payload: dict[str, Any] = {
        "id": str(item["id"]),
        "name": name,
        "normalized_name": normalize_name(name),
        "entity_type": item.get("entity_type") or "entity",
    }
    for k in SCOPE_FIELDS:
        if item.get(k):
            payload[k] = item[k]
    if not any(item.get(k) for k in SCOPE_FIELDS):
        raise InvalidInputError(f"Entity {item.get('id')!r} has no user_id/agent_id/run_id; every point needs a scope")
    return payload


BOOL_SHADOW = "_bools"


def _bool_shadow(value: Any) -> Any:
    """Metadata booleans as 'true'/'false' strings at the same paths (None when there are none).

    Work-around for qdrant-edge-py 0.9, whose MatchValue(True) is converted to the integer 1 and never
    matches a JSON boolean; the edge backend filters booleans on this keyword shadow instead.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        out = {k: sv for k, v in value.items() if (sv := _bool_shadow(v)) is not None}
        return out or None
    if isinstance(value, list):
        return [("true" if x else "false") for x in value if isinstance(x, bool)] or None
    return None


def _hit_id(pid: Any, payload: dict | None) -> str:
    if payload and payload.get("id"):
        return str(payload["id"])
    return str(pid)


def _check_scope(scope: Scope) -> Scope:
    if not isinstance(scope, Scope):
        raise InvalidInputError(f"scope must be a memoryx.scope.Scope, got {type(scope).__name__}")
    return scope


# =========================================================================================================
# filter translation: one algorithm, two dialects (qdrant_edge types / qdrant_client.models types)

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
        must = [self.value(k, v) for k, v in scope.as_dict().items()] if scope is not None else []
        if isinstance(node, dict):  # convenience: a raw mem0-style filter dict
            node = parse_filters(node)
        if node is not None:
            must.append(self.node(node))
        return self.filter(must=must) if must else None


class _EdgeDialect(_Dialect):
    def __init__(self):
        import qdrant_edge as qe

        self.qe = qe

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


_EDGE: _EdgeDialect | None = None
_CLIENT: _ClientDialect | None = None


def _edge() -> _EdgeDialect:
    global _EDGE
    if _EDGE is None:
        _EDGE = _EdgeDialect()
    return _EDGE


def _client_dialect() -> _ClientDialect:
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = _ClientDialect()
    return _CLIENT


def to_edge_filter(node: FilterNode | None, scope: Scope | None = None):
    """FilterNode (+ scope) -> qdrant_edge.Filter (None when there is nothing to filter)."""
    return _edge().query_filter(scope, node)


def to_qdrant_filter(node: FilterNode | None, scope: Scope | None = None):
    """FilterNode (+ scope) -> qdrant_client.models.Filter (None when there is nothing to filter)."""
    return _client_dialect().query_filter(scope, node)


# =========================================================================================================
# small readers/writer lock: many concurrent searches, exclusive close/reset

class _RWLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._readers:
                self._cond.wait()
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


# =========================================================================================================
# Embedded backend: qdrant-edge

class _SharedShard:
    """One open EdgeShard per directory per process (a second open of the same WAL fails even in-process)."""

    _registry: dict[str, "_SharedShard"] = {}
    _registry_lock = threading.Lock()

    def __init__(self, path: Path, shard: Any, dims: int):
        self.path = path
        self.shard = shard
        self.dims = dims
        self.refs = 0
        self.rw = _RWLock()        # reads shared; close exclusive
        self.wlock = threading.Lock()  # serialises updates (searches run alongside)
        self.closed = False

    @classmethod
    def acquire(cls, path: Path, dims: int, keyword_indexes: Sequence[str] = KEYWORD_INDEXES,
                float_indexes: Sequence[str] = FLOAT_INDEXES) -> "_SharedShard":
        key = str(path.resolve())
        with cls._registry_lock:
            shared = cls._registry.get(key)
            if shared is None or shared.closed:
                shard = _open_shard(path, dims)
                try:
                    _ensure_edge_indexes(shard, keyword_indexes, float_indexes)
                except BaseException:
                    shard.close()
                    raise
                shared = cls(path, shard, dims)
                cls._registry[key] = shared
                _write_owner(path)
            elif shared.dims != dims:
                raise StoreUnavailableError(
                    f"The vector collection at {path} is already open in this process with {shared.dims} "
                    f"dimensions; {dims} were requested. Use one embedding model (MEMORYX_EMBEDDING_MODEL) per data dir."
                )
            shared.refs += 1
            return shared

    def release(self) -> None:
        # Closed under the registry lock so that a concurrent re-open of the same path waits for the WAL
        # to be released instead of failing with "locked".
        with self._registry_lock:
            self.refs -= 1
            if self.refs > 0 or self.closed:
                return
            self._registry.pop(str(self.path.resolve()), None)
            self._close()

    def _close(self) -> None:
        with self.rw.write():
            if self.closed:
                return
            self.closed = True
            try:
                self.shard.flush()
            finally:
                self.shard.close()
                _clear_owner(self.path)

    @classmethod
    def close_all(cls) -> None:
        with cls._registry_lock:
            items = list(cls._registry.values())
            cls._registry.clear()
        for s in items:
            try:
                s._close()
            except Exception:  # pragma: no cover - best effort at exit
                log.exception("closing vector shard %s failed", s.path)


atexit.register(_SharedShard.close_all)


def _owner_file(path: Path) -> Path:
    return path.parent / f".{path.name}.owner.json"


def _write_owner(path: Path) -> None:
    try:
        import sys

        _owner_file(path).write_text(json.dumps({
            "pid": os.getpid(),
            "command": " ".join(sys.argv)[:300],
            "opened_at": datetime.now(timezone.utc).isoformat(),
        }))
    except OSError:  # pragma: no cover - informational only
        pass


def _clear_owner(path: Path) -> None:
    try:
        f = _owner_file(path)
        if f.exists() and json.loads(f.read_text()).get("pid") == os.getpid():
            f.unlink()
    except (OSError, ValueError):  # pragma: no cover
        pass


def _owner_hint(path: Path) -> str:
    try:
        info = json.loads(_owner_file(path).read_text())
        return f" It was opened by process {info.get('pid')} ({info.get('command')!r}) at {info.get('opened_at')}."
    except (OSError, ValueError):
        return ""


def _edge_config(dims: int):
    import qdrant_edge as qe

    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dims, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def _open_shard(path: Path, dims: int):
    try:
        import qdrant_edge as qe
    except ImportError as exc:  # pragma: no cover
        raise StoreUnavailableError(
            "The embedded vector store needs qdrant-edge-py (pip install qdrant-edge-py), or set "
            "MEMORYX_VECTOR_BACKEND=qdrant with MEMORYX_QDRANT_URL."
        ) from exc
    path.mkdir(parents=True, exist_ok=True)
    existing = any(path.iterdir())
    try:
        if existing:
            return qe.EdgeShard.load(str(path), _edge_config(dims))
        return qe.EdgeShard.create(str(path), _edge_config(dims))
    except Exception as exc:
        msg = str(exc)
        if "WouldBlock" in msg or "Can't init WAL" in msg:
            raise StoreUnavailableError(
                f"The embedded vector store directory {path} is locked by another process (its write-ahead log "
                f"is held open).{_owner_hint(path)} The embedded Qdrant engine allows one process per data dir: "
                "stop the other process (e.g. the server while you use the CLI), give this one its own "
                "MEMORYX_DATA_DIR, or run a Qdrant server (MEMORYX_VECTOR_BACKEND=qdrant, MEMORYX_QDRANT_URL=...) "
                "which removes the limit."
            ) from exc
        if "incompatible" in msg.lower():
            raise StoreUnavailableError(
                f"The vector collection at {path} was created with a different configuration ({msg}). The "
                "embedding size must not change: keep MEMORYX_EMBEDDING_MODEL/MEMORYX_EMBEDDING_DIMS, or use a new "
                "MEMORYX_DATA_DIR / MEMORYX_COLLECTION_PREFIX and reindex from SQL."
            ) from exc
        raise StoreUnavailableError(f"Could not open the embedded vector store at {path}: {msg}") from exc


def _ensure_edge_indexes(shard, keyword_indexes: Sequence[str], float_indexes: Sequence[str]) -> None:
    import qdrant_edge as qe

    have = set(shard.info().payload_schema)
    for f in keyword_indexes:
        if f not in have:
            shard.update(qe.UpdateOperation.create_field_index(f, qe.PayloadSchemaType.Keyword))
    for f in float_indexes:
        if f not in have:
            shard.update(qe.UpdateOperation.create_field_index(f, qe.PayloadSchemaType.Float))


class EdgeVectorStore:
    """Qdrant engine in-process. One process per data dir (see `StoreUnavailableError` on open).

    Thread-safe: searches run concurrently; updates are serialised; close() waits for running calls.
    Several instances over the same directory in one process share the shard (reference counted).
    Points are durable through Qdrant's write-ahead log; close() (and process exit) flushes segments.
    """

    def __init__(self, path: Path, dims: int, *, prefix: str = "memoryx"):
        if int(dims) <= 0:
            raise InvalidInputError(f"dims must be positive, got {dims}")
        self.dims = int(dims)
        self.path = Path(path)
        self.prefix = prefix
        self._closed = False
        self._mem = _SharedShard.acquire(self.path / f"{prefix}_memories", self.dims)  # clear error if missing
        try:
            self._ent = _SharedShard.acquire(self.path / f"{prefix}_entities", self.dims, SCOPE_FIELDS, ())
        except BaseException:
            self._mem.release()
            raise
        import qdrant_edge as qe

        self.qe = qe
        self._d = _edge()

    @staticmethod
    def _memory_payload(item: dict) -> dict:
        payload = memory_payload(item)
        shadow = _bool_shadow(payload["metadata"])
        if shadow:
            payload[BOOL_SHADOW] = shadow
        return payload

    @staticmethod
    def _hit(p) -> VectorHit:
        payload = p.payload or {}
        payload.pop(BOOL_SHADOW, None)
        return VectorHit(_hit_id(p.id, payload), float(p.score), payload)

    # -- plumbing -------------------------------------------------------------------------------------
    @contextmanager
    def _read(self, s: _SharedShard):
        with s.rw.read():
            if s.closed or self._closed:
                raise StoreUnavailableError(f"The vector store at {self.path} is closed")
            yield s.shard

    @contextmanager
    def _write(self, s: _SharedShard):
        with s.rw.read(), s.wlock:
            if s.closed or self._closed:
                raise StoreUnavailableError(f"The vector store at {self.path} is closed")
            yield s.shard

    def _points(self, items: list[dict], build: Callable[[dict], dict], text_key: str, what: str) -> list:
        qe = self.qe
        pts = []
        seen: dict[str, int] = {}
        for item in items:
            if "id" not in item:
                raise InvalidInputError(f"{what}: every item needs an 'id'")
            payload = build(item)
            vec: dict[str, Any] = {DENSE: _vector(item.get("vector"), self.dims, f"{what} {item['id']!r}")}
            ids, vals = sparse_vector(payload.get(text_key) or "")
            if ids:
                vec[SPARSE] = qe.SparseVector(ids, vals)
            pid = point_id(item["id"])
            if pid in seen:  # last write wins inside one batch
                pts[seen[pid]] = qe.Point(pid, vec, payload)
            else:
                seen[pid] = len(pts)
                pts.append(qe.Point(pid, vec, payload))
        return pts

    def _upsert(self, s: _SharedShard, pts: list) -> None:
        with self._write(s) as shard:
            for i in range(0, len(pts), _BATCH):
                shard.update(self.qe.UpdateOperation.upsert_points(pts[i : i + _BATCH]))

    def _delete(self, s: _SharedShard, ids: Iterable[str]) -> None:
        pids = list(dict.fromkeys(point_id(i) for i in ids))
        if not pids:
            return
        with self._write(s) as shard:
            for i in range(0, len(pids), _BATCH):
                shard.update(self.qe.UpdateOperation.delete_points(pids[i : i + _BATCH]))

    def _dense(self, s: _SharedShard, vector, scope: Scope, limit: int, threshold, node) -> list[VectorHit]:
        qe = self.qe
        req = qe.QueryRequest(
            limit=max(1, int(limit)),
            query=qe.Query.Nearest(_vector(vector, self.dims, "query"), using=DENSE),
            filter=self._d.query_filter(_check_scope(scope), node),
            with_payload=True,
            score_threshold=threshold,
        )
        with self._read(s) as shard:
            res = shard.query(req)
        return [self._hit(p) for p in res]

    # -- memories -------------------------------------------------------------------------------------
    def upsert_memories(self, items: list[dict]) -> None:
        if items:
            self._upsert(self._mem, self._points(items, self._memory_payload, "text", "memory"))

    def delete_memories(self, ids: list[str]) -> None:
        self._delete(self._mem, ids)

    def search_memories(self, vector, scope: Scope, *, limit=5, threshold: float | None = None,
                        filters: FilterNode | None = None) -> list[VectorHit]:
        return self._dense(self._mem, vector, scope, limit, threshold, filters)

    def keyword_search(self, text: str, scope: Scope, *, limit=10, filters: FilterNode | None = None) -> list[VectorHit]:
        qe = self.qe
        _check_scope(scope)
        ids, vals = query_sparse_vector(text or "")
        if not ids:
            return []
        req = qe.QueryRequest(
            limit=max(1, int(limit)),
            query=qe.Query.Nearest(qe.SparseVector(ids, vals), using=SPARSE),
            filter=self._d.query_filter(scope, filters),
            with_payload=True,
            params=qe.SearchParams(idf=qe.IdfParams(corpus=self._d.query_filter(scope, None))),
        )
        with self._read(self._mem) as shard:
            res = shard.query(req)
        return [self._hit(p) for p in res]

    def count_memories(self, scope: Scope | None = None) -> int:
        flt = self._d.query_filter(scope, None) if scope is not None else None
        with self._read(self._mem) as shard:
            return int(shard.count(self.qe.CountRequest(exact=True, filter=flt)))

    # -- entities -------------------------------------------------------------------------------------
    def upsert_entities(self, items: list[dict]) -> None:
        if items:
            self._upsert(self._ent, self._points(items, entity_payload, "name", "entity"))

    def search_entities(self, vector, scope: Scope, *, limit=5, threshold=None) -> list[VectorHit]:
        return self._dense(self._ent, vector, scope, limit, threshold, None)

    def delete_entities(self, ids: list[str]) -> None:
        self._delete(self._ent, ids)

    def count_entities(self, scope: Scope | None = None) -> int:
        flt = self._d.query_filter(scope, None) if scope is not None else None
        with self._read(self._ent) as shard:
            return int(shard.count(self.qe.CountRequest(exact=True, filter=flt)))

    # -- maintenance ----------------------------------------------------------------------------------
    def delete_scope(self, scope: Scope) -> None:
        flt = self._d.query_filter(_check_scope(scope), None)
        for s in (self._mem, self._ent):
            with self._write(s) as shard:
                shard.update(self.qe.UpdateOperation.delete_points_by_filter(flt))

    def reset(self) -> None:
        for s in (self._mem, self._ent):
            with self._write(s) as shard:
                shard.update(self.qe.UpdateOperation.delete_points_by_filter(self.qe.Filter()))

    def flush(self) -> None:
        for s in (self._mem, self._ent):
            with self._write(s) as shard:
                shard.flush()

    def optimize(self) -> bool:
        """Build HNSW / merge segments / vacuum deletes (blocking; minutes for 100k+ points). Optional:
        scope-filtered searches are fast without it because the keyword index pre-filters the points."""
        changed = False
        for s in (self._mem, self._ent):
            with self._write(s) as shard:
                changed = bool(shard.optimize()) or changed
        return changed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for s in (self._mem, self._ent):
            s.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"EdgeVectorStore(path={str(self.path)!r}, dims={self.dims}, prefix={self.prefix!r})"


# =========================================================================================================
# Server backend: langchain-qdrant over QdrantClient

@lru_cache(maxsize=1)
def _make_lc_store_class():
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore

    class _PayloadQdrantVectorStore(QdrantVectorStore):
        """QdrantVectorStore whose Documents carry the whole point payload (our payload is flat: scope fields
        and dates live beside 'text' and 'metadata'), and which validates the collection once at start-up
        instead of on every search (one less round trip per query)."""

        @classmethod
        def _document_from_point(cls, scored_point, collection_name, content_payload_key, metadata_payload_key):
            payload = dict(scored_point.payload or {})
            payload["_id"] = scored_point.id
            payload["_collection_name"] = collection_name
            return Document(page_content=payload.get(content_payload_key) or "", metadata=payload)

        @classmethod
        def _validate_collection_for_dense(cls, client, collection_name, vector_name, distance, dense_embeddings):
            if isinstance(dense_embeddings, list):
                return None  # query vectors: sizes are checked by MemoryX before the call
            return super()._validate_collection_for_dense(client, collection_name, vector_name, distance,
                                                           dense_embeddings)

    return _PayloadQdrantVectorStore


def _is_local_client(client) -> bool:
    inner = getattr(client, "_client", None)
    return type(inner).__name__ in ("QdrantLocal", "AsyncQdrantLocal")


class QdrantServerVectorStore:
    """Qdrant server (or `QdrantClient(':memory:'|path=...)` local mode) behind langchain-qdrant.

    Dense search goes through `langchain_qdrant.QdrantVectorStore.similarity_search_with_score_by_vector`
    (exposed as `.langchain_memories` for LangChain retrievers when `embeddings` is given); writes carry
    precomputed dense + sparse vectors and our flat payload, so they use the client directly, as do the
    sparse keyword search, payload indexes, deletes and counts.
    """

    def __init__(self, client: "QdrantClient", dims: int, *, prefix: str = "memoryx",
                 embeddings: "Embeddings | None" = None):
        from qdrant_client import models

        if int(dims) <= 0:
            raise InvalidInputError(f"dims must be positive, got {dims}")
        self.m = models
        self.client = client
        self.dims = int(dims)
        self.prefix = prefix
        self.memories_collection = f"{prefix}_memories"
        self.entities_collection = f"{prefix}_entities"
        self._local = _is_local_client(client)
        self._lock = threading.RLock() if self._local else None  # local mode is not thread-safe
        self._scoped_idf = True
        self._closed = False
        self._d = _client_dialect()
        with self._guard():
            for name in (self.memories_collection, self.entities_collection):
                self._ensure_collection(name)
        cls = _make_lc_store_class()
        kwargs = dict(
            client=client,
            embedding=embeddings,
            vector_name=DENSE,
            sparse_vector_name=SPARSE,
            content_payload_key="text",
            metadata_payload_key="metadata",
            validate_embeddings=False,
            validate_collection_config=False,
        )
        self.langchain_memories = cls(collection_name=self.memories_collection, **kwargs)
        self.langchain_entities = cls(collection_name=self.entities_collection, **{**kwargs, "content_payload_key": "name"})

    # -- plumbing -------------------------------------------------------------------------------------
    def _guard(self):
        if self._closed:
            raise StoreUnavailableError("The Qdrant vector store is closed")
        return self._lock if self._lock is not None else nullcontext()

    def _ensure_collection(self, name: str) -> None:
        m = self.m
        from langchain_qdrant import QdrantVectorStore
        from langchain_qdrant.qdrant import QdrantVectorStoreError

        try:
            exists = self.client.collection_exists(name)
        except Exception as exc:
            raise StoreUnavailableError(
                f"Qdrant is not reachable ({exc}). Check MEMORYX_QDRANT_URL / MEMORYX_QDRANT_API_KEY, or use the "
                "embedded store (MEMORYX_VECTOR_BACKEND=edge)."
            ) from exc
        if not exists:
            self.client.create_collection(
                collection_name=name,
                vectors_config={DENSE: m.VectorParams(size=self.dims, distance=m.Distance.COSINE)},
                sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            )
        else:
            try:
                QdrantVectorStore._validate_collection_for_dense(self.client, name, DENSE, m.Distance.COSINE,
                                                                 [0.0] * self.dims)
                QdrantVectorStore._validate_collection_for_sparse(self.client, name, SPARSE)
            except (QdrantVectorStoreError, ValueError) as exc:
                raise StoreUnavailableError(
                    f"Qdrant collection {name!r} does not fit this configuration: {exc} Keep "
                    "MEMORYX_EMBEDDING_MODEL/MEMORYX_EMBEDDING_DIMS, or choose another MEMORYX_COLLECTION_PREFIX "
                    "and reindex."
                ) from exc
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # local mode: "payload indexes have no effect"
            for f in KEYWORD_INDEXES:
                schema = (m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
                          if f == "user_id" else m.PayloadSchemaType.KEYWORD)
                self.client.create_payload_index(name, f, field_schema=schema, wait=True)
            for f in FLOAT_INDEXES:
                self.client.create_payload_index(name, f, field_schema=m.PayloadSchemaType.FLOAT, wait=True)

    def _points(self, items: list[dict], build: Callable[[dict], dict], text_key: str, what: str) -> list:
        m = self.m
        by_id: dict[str, Any] = {}
        for item in items:
            if "id" not in item:
                raise InvalidInputError(f"{what}: every item needs an 'id'")
            payload = build(item)
            vec: dict[str, Any] = {DENSE: _vector(item.get("vector"), self.dims, f"{what} {item['id']!r}")}
            ids, vals = sparse_vector(payload.get(text_key) or "")
            if ids:
                vec[SPARSE] = m.SparseVector(indices=ids, values=vals)
            pid = point_id(item["id"])
            by_id[pid] = m.PointStruct(id=pid, vector=vec, payload=payload)
        return list(by_id.values())

    def _upsert(self, collection: str, pts: list) -> None:
        with self._guard():
            for i in range(0, len(pts), _BATCH):
                self.client.upsert(collection, points=pts[i : i + _BATCH], wait=True)

    def _delete(self, collection: str, ids: Iterable[str]) -> None:
        pids = list(dict.fromkeys(point_id(i) for i in ids))
        if not pids:
            return
        with self._guard():
            for i in range(0, len(pids), _BATCH):
                self.client.delete(collection, points_selector=self.m.PointIdsList(points=pids[i : i + _BATCH]),
                                   wait=True)

    def _dense(self, lc, vector, scope: Scope, limit: int, threshold, node) -> list[VectorHit]:
        flt = self._d.query_filter(_check_scope(scope), node)
        vec = _vector(vector, self.dims, "query")
        with self._guard():
            docs = lc.similarity_search_with_score_by_vector(vec, k=max(1, int(limit)), filter=flt,
                                                             score_threshold=threshold)
        hits = []
        for doc, score in docs:
            payload = dict(doc.metadata)
            pid = payload.pop("_id", None)
            payload.pop("_collection_name", None)
            hits.append(VectorHit(_hit_id(pid, payload), float(score), payload))
        return hits

    def _count(self, collection: str, scope: Scope | None) -> int:
        flt = self._d.query_filter(scope, None) if scope is not None else None
        with self._guard():
            return int(self.client.count(collection, count_filter=flt, exact=True).count)

    # -- memories -------------------------------------------------------------------------------------
    def upsert_memories(self, items: list[dict]) -> None:
        if items:
            self._upsert(self.memories_collection, self._points(items, memory_payload, "text", "memory"))

    def delete_memories(self, ids: list[str]) -> None:
        self._delete(self.memories_collection, ids)

    def search_memories(self, vector, scope: Scope, *, limit=5, threshold: float | None = None,
                        filters: FilterNode | None = None) -> list[VectorHit]:
        return self._dense(self.langchain_memories, vector, scope, limit, threshold, filters)

    def keyword_search(self, text: str, scope: Scope, *, limit=10, filters: FilterNode | None = None) -> list[VectorHit]:
        m = self.m
        _check_scope(scope)
        ids, vals = query_sparse_vector(text or "")
        if not ids:
            return []
        kwargs = dict(
            collection_name=self.memories_collection,
            query=m.SparseVector(indices=ids, values=vals),
            using=SPARSE,
            query_filter=self._d.query_filter(scope, filters),
            limit=max(1, int(limit)),
            with_payload=True,
        )
        with self._guard():
            if self._scoped_idf:
                try:
                    res = self.client.query_points(
                        **kwargs,
                        search_params=m.SearchParams(idf=m.IdfCorpusParams(corpus=self._d.query_filter(scope, None))),
                    )
                except Exception as exc:  # older servers: no per-corpus IDF -> collection-wide IDF
                    if "idf" not in str(exc).lower():
                        raise
                    log.warning("Qdrant server does not support scoped IDF (%s); using collection-wide IDF", exc)
                    self._scoped_idf = False
                    res = self.client.query_points(**kwargs)
            else:
                res = self.client.query_points(**kwargs)
        return [VectorHit(_hit_id(p.id, p.payload), float(p.score), p.payload or {}) for p in res.points]

    def count_memories(self, scope: Scope | None = None) -> int:
        return self._count(self.memories_collection, scope)

    # -- entities -------------------------------------------------------------------------------------
    def upsert_entities(self, items: list[dict]) -> None:
        if items:
            self._upsert(self.entities_collection, self._points(items, entity_payload, "name", "entity"))

    def search_entities(self, vector, scope: Scope, *, limit=5, threshold=None) -> list[VectorHit]:
        return self._dense(self.langchain_entities, vector, scope, limit, threshold, None)

    def delete_entities(self, ids: list[str]) -> None:
        self._delete(self.entities_collection, ids)

    def count_entities(self, scope: Scope | None = None) -> int:
        return self._count(self.entities_collection, scope)

    # -- maintenance ----------------------------------------------------------------------------------
    def delete_scope(self, scope: Scope) -> None:
        flt = self._d.query_filter(_check_scope(scope), None)
        with self._guard():
            for name in (self.memories_collection, self.entities_collection):
                self.client.delete(name, points_selector=self.m.FilterSelector(filter=flt), wait=True)

    def reset(self) -> None:
        with self._guard():
            for name in (self.memories_collection, self.entities_collection):
                self.client.delete_collection(name)
                self._ensure_collection(name)

    def close(self) -> None:
        if self._closed:
            return
        with self._lock if self._lock is not None else nullcontext():
            self._closed = True
            try:
                self.client.close()
            except Exception:  # pragma: no cover
                log.debug("closing the Qdrant client failed", exc_info=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"QdrantServerVectorStore(prefix={self.prefix!r}, dims={self.dims}, local={self._local})"


# =========================================================================================================

def make_qdrant_client(settings: "Settings") -> "QdrantClient":
    from qdrant_client import QdrantClient

    url = (settings.qdrant_url or "").strip()
    if not url:
        raise StoreUnavailableError(
            "MEMORYX_VECTOR_BACKEND=qdrant needs MEMORYX_QDRANT_URL (e.g. http://localhost:6333, or ':memory:' / a "
            "directory for the client's local test mode)."
        )
    try:
        if url == ":memory:":
            return QdrantClient(location=":memory:")
        if "://" in url:
            return QdrantClient(url=url, api_key=settings.qdrant_api_key, timeout=30)
        Path(url).expanduser().mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(Path(url).expanduser()))
    except Exception as exc:
        raise StoreUnavailableError(f"Could not create the Qdrant client for MEMORYX_QDRANT_URL={url!r}: {exc}") from exc


def make_vector_store(settings: "Settings", dims: int, *, embeddings: "Embeddings | None" = None) -> VectorStore:
    """The vector store selected by MEMORYX_VECTOR_BACKEND ('edge' default, or 'qdrant')."""
    if settings.vector_backend == "edge":
        return EdgeVectorStore(Path(settings.data_dir) / "qdrant", dims, prefix=settings.collection_prefix)
    if settings.vector_backend == "qdrant":
        return QdrantServerVectorStore(make_qdrant_client(settings), dims, prefix=settings.collection_prefix,
                                       embeddings=embeddings)
    raise InvalidInputError(f"MEMORYX_VECTOR_BACKEND={settings.vector_backend!r}: use 'edge' or 'qdrant'")
