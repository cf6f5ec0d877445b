"""The vector-store contract, its payloads and the public methods both backends share.

Payload of a memory point (the same in both backends, so one filter translator serves both)::

    {"id", "text", "hash", "user_id", "agent_id", "run_id", "memory_type", "category", "importance",
     "created_at" (ISO), "created_ts" (epoch s), "updated_at", "updated_ts", "metadata": {...}, "status"}

Scope fields are only written when set. Point ids are the memory ids (uuid strings); any other string id is
mapped to a stable uuid5 and the original is kept in ``payload["id"]``. Every query carries the scope as
exact matches on the fields the Scope sets.

`VectorStore` implements every public method once, over a few primitives each backend provides
(`_point`, `_upsert`, `_delete`, `_dense`, `_sparse`, `_count`, `_delete_where`, `_clear`, `_shutdown`).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from memoryx.core.filters import Cond, FilterNode
from memoryx.core.scope import Scope
from memoryx.core.text import (
    KEYWORD_TOKENIZER, KEYWORD_TOKENIZER_FIELD, query_sparse_vector, sparse_vector, warn_stale_keywords,
)
from memoryx.errors import InvalidInputError
from memoryx.stores.vectors.chunks import CHUNK, MAX_CHUNKS, chunk_pid, text_chunks
from memoryx.stores.vectors.filters import _Dialect
from memoryx.stores.vectors.payloads import entity_payload, memory_payload

DENSE = "dense"
SPARSE = "keywords"
KEYWORD_INDEXES = ("user_id", "agent_id", "run_id", "group_id", "memory_type", "category", "status")
FLOAT_INDEXES = ("created_ts", "updated_ts", "valid_ts")
BATCH = 512  # points per update operation / request
DEPTH_LISTS = 16  # a memory search's first query is as deep as the deepest of this many recent lists needed
AGAIN = 4  # a list short of memories is asked again this many times deeper (_memories_dense)
_ID_NAMESPACE = uuid.UUID("6f1c7a52-3e0b-4d5e-9a57-6d656d6f7279")
NOT_CHUNK = Cond(CHUNK, "eq", None)  # a memory's own point, not one of its windows (chunks.py)


@dataclass
class VectorHit:
    id: str
    score: float
    payload: dict = field(default_factory=dict)


# =========================================================================================================
# payloads and ids

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


def hit_id(pid: Any, payload: dict | None) -> str:
    """Our id of a returned point: the original id kept in the payload, else the point id."""
    if payload and payload.get("id"):
        return str(payload["id"])
    return str(pid)


def batched(seq: Sequence) -> Iterator[Sequence]:
    for i in range(0, len(seq), BATCH):
        yield seq[i : i + BATCH]


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


def _check_scope(scope: Scope) -> Scope:
    if not isinstance(scope, Scope):
        raise InvalidInputError(f"scope must be a memoryx.core.scope.Scope, got {type(scope).__name__}")
    return scope


# =========================================================================================================
# the shared store

class VectorStore(ABC):
    """Memories and entities as points with a dense vector and a BM25 sparse vector, scoped per tenant.

    A backend sets `_memories` / `_entities` (its handle of each collection: a shard, a collection name)
    and `_dialect` (the filter types of its Qdrant API), and implements the primitives below.
    """

    dims: int
    prefix: str
    _memories: Any
    _entities: Any
    _dialect: _Dialect
    # the sidecar indexes (sidecar.py), written and cleared with this store; None: off. The owners' multilingual
    # vectors (multilingual.py), and every memory's vector from the companion encoder (companion.py)
    multilingual: Any = None
    companion: Any = None
    _stale_keywords_said = False  # a search met keyword vectors of another tokenizer, and said so

    def __init__(self, dims: int, *, prefix: str, chunk_chars: int = 0, focus_chars: int = 0):
        if int(dims) <= 0:
            raise InvalidInputError(f"dims must be positive, got {dims}")
        self.dims = int(dims)
        self.prefix = prefix
        self.chunk_chars = max(0, int(chunk_chars))  # window width of long texts (chunks.py); 0: no windows
        self.focus_chars = max(0, int(focus_chars))  # window width of mid-length texts (chunks.py); 0: none
        self._depths: dict[int, tuple[int, ...]] = {}  # {limit: points the last memory lists needed} (_memories_dense)
        self._closed = False

    # -- backend primitives ---------------------------------------------------------------------------
    @abstractmethod
    def _point(self, pid: str, vectors: dict[str, Any], payload: dict) -> Any:
        """One point of the backend's API; `vectors` holds DENSE and, for non-empty text, SPARSE (ids, values)."""

    @abstractmethod
    def _upsert(self, collection: Any, points: list) -> None: ...

    @abstractmethod
    def _delete(self, collection: Any, pids: list[str]) -> None:
        """Delete these point ids (unique, never empty)."""

    @abstractmethod
    def _dense(self, collection: Any, vector: list[float], flt: Any, limit: int,
               threshold: float | None) -> list[VectorHit]: ...

    def _dense_batch(self, collection: Any, vectors: list[list[float]], flt: Any, limit: int,
                     threshold: float | None) -> list[list[VectorHit]]:
        """One `_dense` per vector; a backend that plans several queries as one pass overrides it."""
        return [self._dense(collection, v, flt, limit, threshold) for v in vectors]

    @abstractmethod
    def _vectors(self, collection: Any, pids: list[str]) -> dict[str, list[float]]:
        """{point id: its stored dense vector} of these point ids (unique, never empty) that exist."""

    @abstractmethod
    def _sparse(self, collection: Any, ids: list[int], values: list[float], flt: Any, corpus: Any,
                limit: int) -> list[VectorHit]:
        """Sparse dot product with IDF computed over the points matching `corpus` (BM25 within the scope)."""

    def _sparse_batch(self, collection: Any, queries: list[tuple[list[int], list[float]]], flt: Any, corpus: Any,
                      limit: int) -> list[list[VectorHit]]:
        """One `_sparse` per (ids, values) query; a backend that plans several queries as one call overrides it."""
        return [self._sparse(collection, ids, vals, flt, corpus, limit) for ids, vals in queries]

    @abstractmethod
    def _count(self, collection: Any, flt: Any) -> int: ...

    @abstractmethod
    def _delete_where(self, collection: Any, flt: Any) -> None: ...

    @abstractmethod
    def _clear(self, collection: Any) -> None:
        """Remove every point of the collection; it stays usable."""

    @abstractmethod
    def _shutdown(self) -> None:
        """Release the backend and mark the store closed (called once)."""

    # -- shared plumbing ------------------------------------------------------------------------------
    def _filter(self, scope: Scope | None, node: FilterNode | dict | None):
        return self._dialect.query_filter(scope, node)

    def _memory_payload(self, item: dict) -> dict:
        return memory_payload(item)

    def _points(self, items: list[dict], build: Callable[[dict], dict], text_key: str, what: str) -> list:
        by_id: dict[str, Any] = {}  # last write wins inside one batch, at the first write's position
        for item in items:
            if "id" not in item:
                raise InvalidInputError(f"{what}: every item needs an 'id'")
            payload = build(item)
            vectors: dict[str, Any] = {DENSE: _vector(item.get("vector"), self.dims, f"{what} {item['id']!r}")}
            ids, vals = sparse_vector(payload.get(text_key) or "")
            if ids:
                vectors[SPARSE] = (ids, vals)
                payload[KEYWORD_TOKENIZER_FIELD] = KEYWORD_TOKENIZER  # the tokens it was made of (core.text)
            pid = point_id(item["id"])
            by_id[pid] = self._point(pid, vectors, payload)
        return list(by_id.values())

    def _delete_ids(self, collection: Any, ids: list[str]) -> None:
        pids = list(dict.fromkeys(point_id(i) for i in ids))
        if pids:
            self._delete(collection, pids)

    def _search(self, collection: Any, vector, scope: Scope, limit: int, threshold, node) -> list[VectorHit]:
        flt = self._filter(_check_scope(scope), node)
        return self._dense(collection, _vector(vector, self.dims, "query"), flt, max(1, int(limit)), threshold)

    def _count_in(self, collection: Any, scope: Scope | None) -> int:
        return self._count(collection, self._filter(scope, None) if scope is not None else None)

    # -- memories -------------------------------------------------------------------------------------
    def chunk_texts(self, text: str) -> list[str]:
        """The windows of a memory text that get vectors of their own (none for a short text): the caller
        embeds them and hands the vectors over as the item's ``chunk_vectors``."""
        return text_chunks(text or "", self.chunk_chars, self.focus_chars)

    def upsert_memories(self, items: list[dict]) -> None:
        """Write memory points; an item's ``chunk_vectors`` (the vectors of `chunk_texts(text)`) become window
        points carrying the memory's id and payload (dense only: the keyword side scores the whole text).
        Window slots the item does not fill are deleted: a text that changed or shrank leaves no stale window."""
        if not items:
            return
        points = self._points(items, self._memory_payload, "text", "memory")
        last = {point_id(item["id"]): item for item in items}
        # windows fill their slots from 0: a memory whose slot 0 is empty has no window to clear (one read by
        # id, cheaper than deleting every slot of every memory written)
        firsts = {chunk_pid(pid, 0): pid for pid in last}
        had = set()
        for chunk in batched(list(firsts)):
            had.update(firsts[c] for c in self._vectors(self._memories, list(chunk)))
        windows, stale = [], []
        for pid, item in last.items():
            vecs = list(item.get("chunk_vectors") or [])[:MAX_CHUNKS]
            payload = self._memory_payload(item) if vecs else None
            for i, v in enumerate(vecs):
                windows.append(self._point(chunk_pid(pid, i), {DENSE: _vector(v, self.dims, f"memory {item['id']!r} window")},
                                           {**payload, CHUNK: i}))
            if pid in had:
                stale += [chunk_pid(pid, i) for i in range(len(vecs), MAX_CHUNKS)]
        if stale:
            self._delete(self._memories, stale)
        self._upsert(self._memories, points + windows)
        for sidecar in self.sidecars():
            sidecar.upsert(list(last.values()))

    def delete_memories(self, ids: list[str]) -> None:
        pids = list(dict.fromkeys(point_id(i) for i in ids))
        if pids:
            self._delete(self._memories, pids + [chunk_pid(p, i) for p in pids for i in range(MAX_CHUNKS)])
        for sidecar in self.sidecars() if ids else ():
            sidecar.delete(ids)

    @staticmethod
    def _one_per_memory(hits: list[VectorHit], limit: int) -> list[VectorHit]:
        """Best-first hits with each memory once, at its best point's score (its own vector or a window's)."""
        seen: set[str] = set()
        out: list[VectorHit] = []
        for h in hits:
            if h.id in seen:
                continue
            seen.add(h.id)
            h.payload.pop(CHUNK, None)
            out.append(h)
            if len(out) >= limit:
                break
        return out

    @staticmethod
    def _depth_of(hits: list[VectorHit], limit: int) -> int | None:
        """How many of these best-first points it takes to hold `limit` memories (None: they hold fewer)."""
        seen: set[str] = set()
        for i, h in enumerate(hits):
            seen.add(h.id)
            if len(seen) >= limit:
                return i + 1
        return None

    def _memories_dense(self, vectors: list[list[float]], flt: Any, limit: int, threshold) -> list[list[VectorHit]]:
        """`limit` memories per vector. A memory with windows has several points, so `limit` points can hold
        fewer memories. The cost of a search grows with the points returned, and a second query costs a whole
        pass again: the first query asks as deep as the deepest of the last `DEPTH_LISTS` lists of this length
        needed (`limit` while there is none, so a store without windows reads no more than that; the depth
        follows the store's windows as they come and go, and when lists are alike a new one needs more than
        all of the last 16 one time in 17). A list still short of memories while more points exist is asked
        again `AGAIN` times deeper (such a list is usually just past the recent depths, and a process's first
        search knows none), up to the depth `limit` memories of MAX_CHUNKS + 1 points each can reach: the answer
        is always the one reading every point gives."""
        first = max(self._depths.get(limit, ()), default=limit)
        deepest = limit * (MAX_CHUNKS + 1)
        out, depths = [], []
        for v, hits in zip(vectors, self._dense_batch(self._memories, vectors, flt, first, threshold)):
            depth, asked = self._depth_of(hits, limit), first
            while depth is None and len(hits) >= asked and asked < deepest:
                asked = min(deepest, asked * AGAIN)
                hits = self._dense(self._memories, v, flt, asked, threshold)
                depth = self._depth_of(hits, limit)
            if depth is not None:  # a list that ran out of points says nothing about the depth
                depths.append(depth)
            out.append(self._one_per_memory(hits, limit))
        if depths:  # one tuple swapped in: concurrent searches at worst lose an observation
            self._depths[limit] = (*self._depths.get(limit, ()), *depths)[-DEPTH_LISTS:]
        return out

    def search_memories(self, vector, scope: Scope, *, limit: int = 5, threshold: float | None = None,
                        filters: FilterNode | None = None) -> list[VectorHit]:
        flt = self._filter(_check_scope(scope), filters)
        return self._memories_dense([_vector(vector, self.dims, "query")], flt, max(1, int(limit)), threshold)[0]

    def keyword_search(self, text: str, scope: Scope, *, limit: int = 10,
                       filters: FilterNode | None = None, extra: str = "") -> list[VectorHit]:
        """BM25 over the memories' sparse vectors; `extra`: words the query is widened with, at half weight."""
        return self.keyword_search_batch([text], scope, limit=limit, filters=filters, extras=[extra])[0]

    def keyword_search_batch(self, texts: list[str], scope: Scope, *, limit: int = 10,
                             filters: FilterNode | None = None,
                             extras: list[str] | None = None) -> list[list[VectorHit]]:
        """`keyword_search` for each text, in order, planned as one call (an add looks up every fact's
        keyword candidates at once)."""
        _check_scope(scope)
        queries = [query_sparse_vector(t or "", e or "") for t, e in zip(texts, extras or [""] * len(texts))]
        asked = [i for i, (ids, _) in enumerate(queries) if ids]
        out: list[list[VectorHit]] = [[] for _ in texts]
        if asked:
            # windows carry no keyword vector: the IDF statistics count the memories' own points only
            hits = self._sparse_batch(self._memories, [queries[i] for i in asked], self._filter(scope, filters),
                                      self._filter(scope, None), max(1, int(limit)))
            for i, found in zip(asked, hits):
                out[i] = found
            if not self._stale_keywords_said:  # said once per store: the cure is one reindex
                self._stale_keywords_said = warn_stale_keywords(h.payload for found in hits for h in found)
        return out

    def search_memories_batch(self, vectors: list, scope: Scope, *, limit: int = 5, threshold: float | None = None,
                              filters: FilterNode | None = None) -> list[list[VectorHit]]:
        """`search_memories` for each vector, in order (a consolidation pass looks up the neighbours of every
        new memory: one planned batch per chunk instead of one query each)."""
        flt = self._filter(_check_scope(scope), filters)
        out: list[list[VectorHit]] = []
        for chunk in batched(list(vectors)):
            out += self._memories_dense([_vector(v, self.dims, "query") for v in chunk], flt, max(1, int(limit)),
                                        threshold)
        return out

    def memory_vectors(self, ids: list[str]) -> dict[str, list[float]]:
        """{memory id: the dense vector stored for it} (ids without a point are left out): a consolidation
        pass compares what arrived with what is stored without embedding the texts again."""
        pids = {point_id(i): i for i in dict.fromkeys(ids)}
        out: dict[str, list[float]] = {}
        for chunk in batched(list(pids)):
            out.update((pids[pid], vec) for pid, vec in self._vectors(self._memories, list(chunk)).items())
        return out

    def count_memories(self, scope: Scope | None = None) -> int:
        return self._count(self._memories, self._filter(scope, NOT_CHUNK))

    # -- entities -------------------------------------------------------------------------------------
    def upsert_entities(self, items: list[dict]) -> None:
        if items:
            self._upsert(self._entities, self._points(items, entity_payload, "name", "entity"))

    def search_entities(self, vector, scope: Scope, *, limit: int = 5,
                        threshold: float | None = None) -> list[VectorHit]:
        return self._search(self._entities, vector, scope, limit, threshold, None)

    def delete_entities(self, ids: list[str]) -> None:
        self._delete_ids(self._entities, ids)

    def count_entities(self, scope: Scope | None = None) -> int:
        return self._count_in(self._entities, scope)

    # -- maintenance ----------------------------------------------------------------------------------
    def delete_scope(self, scope: Scope) -> None:
        flt = self._filter(_check_scope(scope), None)
        for collection in (self._memories, self._entities):
            self._delete_where(collection, flt)
        for sidecar in self.sidecars():
            sidecar.delete_scope(scope)

    def reset(self) -> None:
        for collection in (self._memories, self._entities):
            self._clear(collection)
        for sidecar in self.sidecars():
            sidecar.reset()

    def compact(self) -> bool:
        """Make deleted points leave the backend's files (after a purge). Backends whose storage is not under
        the data directory (a Qdrant server) have nothing to do here: False."""
        return False

    def sidecars(self) -> list:
        """The sidecar indexes that are on (sidecar.py)."""
        return [s for s in (self.multilingual, self.companion) if s is not None]

    def close(self) -> None:
        for sidecar in self.sidecars():
            sidecar.close()
        if not self._closed:
            self._shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
