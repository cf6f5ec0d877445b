"""The embedded backend: the Qdrant engine in-process (``qdrant_edge.EdgeShard``). `EdgeVectorStore` holds
the queries and writes over its shards; the shards' lifecycle (open and share per directory, close, the
owner file, the compacting rewrite) is edge_shard.py, and filters are translated by filters.py
(`edge_dialect`).

One shard per collection under ``<data_dir>/qdrant/<prefix>_memories`` and ``<prefix>_entities``. The
default backend: no server.

Known limits of qdrant-edge-py 0.9, measured:

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

from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memoryx.core.scope import SCOPE_FIELDS
from memoryx.errors import StoreUnavailableError
from memoryx.stores.vectors.base import (
    DENSE,
    SPARSE,
    VectorHit,
    VectorStore,
    batched,
    hit_id,
    memory_payload,
)
from memoryx.stores.vectors.edge_shard import SharedShard, rewrite_shard
from memoryx.stores.vectors.filters import BOOL_SHADOW, edge_dialect


def bool_shadow(value: Any) -> Any:
    """Metadata booleans as 'true'/'false' strings at the same paths (None when there are none).

    Work-around for qdrant-edge-py 0.9, whose MatchValue(True) is converted to the integer 1 and never
    matches a JSON boolean; the edge backend filters booleans on this keyword shadow instead.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        out = {k: sv for k, v in value.items() if (sv := bool_shadow(v)) is not None}
        return out or None
    if isinstance(value, list):
        return [("true" if x else "false") for x in value if isinstance(x, bool)] or None
    return None


class EdgeVectorStore(VectorStore):
    """Qdrant engine in-process. One process per data dir (see `StoreUnavailableError` on open).

    Thread-safe: searches run concurrently; updates are serialised; close() waits for running calls.
    Several instances over the same directory in one process share the shard (reference counted).
    Points are durable through Qdrant's write-ahead log; close() (and process exit) flushes segments.
    """

    def __init__(self, path: Path, dims: int, *, prefix: str = "memoryx", chunk_chars: int = 0,
                 focus_chars: int = 0):
        super().__init__(dims, prefix=prefix, chunk_chars=chunk_chars, focus_chars=focus_chars)
        self.path = Path(path)
        self._memories = SharedShard.acquire(self.path / f"{prefix}_memories", self.dims)  # clear error if missing
        try:
            self._entities = SharedShard.acquire(self.path / f"{prefix}_entities", self.dims, SCOPE_FIELDS, ())
        except BaseException:
            self._memories.release()
            raise
        import qdrant_edge as qe

        self.qe = qe
        self._dialect = edge_dialect()

    def _memory_payload(self, item: dict) -> dict:
        payload = memory_payload(item)
        shadow = bool_shadow(payload["metadata"])
        if shadow:
            payload[BOOL_SHADOW] = shadow
        return payload

    @staticmethod
    def _hit(p) -> VectorHit:
        payload = p.payload or {}
        payload.pop(BOOL_SHADOW, None)
        return VectorHit(hit_id(p.id, payload), float(p.score), payload)

    @contextmanager
    def _read(self, s: SharedShard):
        with s.rw.read():
            if s.closed or self._closed:
                raise StoreUnavailableError(f"The vector store at {self.path} is closed")
            yield s.shard

    @contextmanager
    def _write(self, s: SharedShard):
        with s.rw.read(), s.wlock:
            if s.closed or self._closed:
                raise StoreUnavailableError(f"The vector store at {self.path} is closed")
            s.written = True
            yield s.shard

    # -- primitives -----------------------------------------------------------------------------------
    def _point(self, pid: str, vectors: dict[str, Any], payload: dict):
        if SPARSE in vectors:
            vectors = {**vectors, SPARSE: self.qe.SparseVector(*vectors[SPARSE])}
        return self.qe.Point(pid, vectors, payload)

    def _upsert(self, s: SharedShard, points: list) -> None:
        with self._write(s) as shard:
            for chunk in batched(points):
                shard.update(self.qe.UpdateOperation.upsert_points(chunk))

    def _delete(self, s: SharedShard, pids: list[str]) -> None:
        with self._write(s) as shard:
            for chunk in batched(pids):
                shard.update(self.qe.UpdateOperation.delete_points(chunk))

    def _dense(self, s: SharedShard, vector, flt, limit: int, threshold) -> list[VectorHit]:
        qe = self.qe
        req = qe.QueryRequest(limit=limit, query=qe.Query.Nearest(vector, using=DENSE), filter=flt,
                              with_payload=True, score_threshold=threshold)
        with self._read(s) as shard:
            res = shard.query(req)
        return [self._hit(p) for p in res]

    def _dense_batch(self, s: SharedShard, vectors, flt, limit: int, threshold) -> list[list[VectorHit]]:
        qe = self.qe
        reqs = [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(v, using=DENSE), filter=flt, with_payload=True,
                                score_threshold=threshold) for v in vectors]
        with self._read(s) as shard:
            res = shard.query_batch(qe.QueryBatchRequest(reqs))
        return [[self._hit(p) for p in points] for points in res]

    def _vectors(self, s: SharedShard, pids: list[str]) -> dict[str, list[float]]:
        with self._read(s) as shard:
            records = shard.retrieve(pids, False, [DENSE])
        return {str(r.id): list(r.vector[DENSE]) for r in records if r.vector and DENSE in r.vector}

    def _sparse(self, s: SharedShard, ids, values, flt, corpus, limit: int) -> list[VectorHit]:
        qe = self.qe
        req = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(qe.SparseVector(ids, values), using=SPARSE),
            filter=flt,
            with_payload=True,
            params=qe.SearchParams(idf=qe.IdfParams(corpus=corpus)),
        )
        with self._read(s) as shard:
            res = shard.query(req)
        return [self._hit(p) for p in res]

    def _sparse_batch(self, s: SharedShard, queries, flt, corpus, limit: int) -> list[list[VectorHit]]:
        qe = self.qe
        params = qe.SearchParams(idf=qe.IdfParams(corpus=corpus))
        reqs = [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(qe.SparseVector(ids, values), using=SPARSE),
                                filter=flt, with_payload=True, params=params) for ids, values in queries]
        with self._read(s) as shard:
            res = shard.query_batch(qe.QueryBatchRequest(reqs))
        return [[self._hit(p) for p in points] for points in res]

    def _count(self, s: SharedShard, flt) -> int:
        with self._read(s) as shard:
            return int(shard.count(self.qe.CountRequest(exact=True, filter=flt)))

    def _delete_where(self, s: SharedShard, flt) -> None:
        with self._write(s) as shard:
            shard.update(self.qe.UpdateOperation.delete_points_by_filter(flt))

    def _clear(self, s: SharedShard) -> None:
        self._delete_where(s, self.qe.Filter())

    def _shutdown(self) -> None:
        self._closed = True
        for s in (self._memories, self._entities):
            s.release()

    # -- edge-only maintenance ------------------------------------------------------------------------
    def flush(self) -> None:
        for s in (self._memories, self._entities):
            with self._write(s) as shard:
                shard.flush()

    def compact(self) -> bool:
        """Rewrite both shards with their live points only. Neither `optimize()` (it vacuums only segments
        of 1,000+ vectors with 20 % deleted) nor `flush()` removes a deleted point's payload from the
        segment files, and the write-ahead log keeps every update it has seen; a fresh shard holds neither.
        Blocking: searches and writes wait (seconds per 100k points)."""
        for s in (self._memories, self._entities):
            with s.rw.write():
                if s.closed or self._closed:
                    raise StoreUnavailableError(f"The vector store at {self.path} is closed")
                s.shard = rewrite_shard(s.path, s.shard, s.dims, *s.indexes)
        for sidecar in self.sidecars():
            sidecar.compact()
        return True

    def optimize(self) -> bool:
        """Build HNSW / merge segments / vacuum deletes (blocking; minutes for 100k+ points). Optional:
        scope-filtered searches are fast without it because the keyword index pre-filters the points."""
        changed = False
        for s in (self._memories, self._entities):
            with self._write(s) as shard:
                changed = bool(shard.optimize()) or changed
        return changed

    def __repr__(self) -> str:
        return f"EdgeVectorStore(path={str(self.path)!r}, dims={self.dims}, prefix={self.prefix!r})"
