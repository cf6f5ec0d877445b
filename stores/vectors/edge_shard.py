"""The embedded vector backend's shards: their lifecycle, apart from the queries (edge.py). One open
``qdrant_edge.EdgeShard`` per directory per process, shared by reference count (`SharedShard`): opened with
its payload indexes, readers/writer locked, flushed and closed when the last user releases it or at exit;
the owner file beside it that names the process holding the directory; and the rewrite that compacts a
shard into a fresh copy, safe against a crash halfway (`rewrite_shard`).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import sys
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Sequence

from memoryx.errors import StoreUnavailableError
from memoryx.stores.vectors.base import DENSE, FLOAT_INDEXES, KEYWORD_INDEXES, SPARSE
from memoryx.stores.vectors.readahead import warm_in_background

log = logging.getLogger(__name__)


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


class SharedShard:
    """One open EdgeShard per directory per process (a second open of the same WAL fails even in-process)."""

    _registry: dict[str, "SharedShard"] = {}
    _registry_lock = threading.Lock()
    # Set by a process about to end with os._exit (runtime/process_exit.py): closing a shard then flushes it if
    # this process wrote to it and leaves it to the kernel, instead of closing it, which syncs every mapped file
    # of every segment once more (~40 msyncs per shard, 0.1-0.2 s on a slow disk) though nothing is left to
    # write. The shard objects are kept here so that nothing frees them before the process ends.
    leave_open_at_exit = False
    _left_open: list[Any] = []
    # Set by a process that goes on searching after it opens its shards (`read_ahead_shards`): each shard opened
    # then has its files read ahead (readahead.py). Off otherwise: a one-shot command would queue up to 256 MiB
    # of reads a shard that it may never use, then exit.
    read_ahead = False

    def __init__(self, path: Path, shard: Any, dims: int):
        self.path = path
        self.shard = shard
        self.dims = dims
        self.indexes: tuple[Sequence[str], Sequence[str]] = (KEYWORD_INDEXES, FLOAT_INDEXES)
        self.refs = 0
        self.rw = _RWLock()        # reads shared; close exclusive
        self.wlock = threading.Lock()  # serialises updates (searches run alongside)
        self.closed = False
        # a shard this process never wrote to has nothing to flush: flushing it still syncs every mapped
        # file of every segment (tens of ms each on a slow disk), which a read-only command would pay at exit
        self.written = False
        self.warming: threading.Thread | None = None  # the read-ahead of its files, in a process that reads ahead

    @classmethod
    def acquire(cls, path: Path, dims: int, keyword_indexes: Sequence[str] = KEYWORD_INDEXES,
                float_indexes: Sequence[str] = FLOAT_INDEXES) -> "SharedShard":
        key = str(path.resolve())
        with cls._registry_lock:
            shared = cls._registry.get(key)
            if shared is None or shared.closed:
                _finish_rewrite(path)
                shard = _open_shard(path, dims)
                try:
                    created = _ensure_edge_indexes(shard, keyword_indexes, float_indexes)
                except BaseException:
                    shard.close()
                    raise
                shared = cls(path, shard, dims)
                shared.written = created
                shared.indexes = (tuple(keyword_indexes), tuple(float_indexes))
                if cls.read_ahead:  # the segments' pages in the cache before the first searches fault them in
                    shared.warming = warm_in_background(path)
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
                if self.written:
                    self.shard.flush()
            finally:
                if SharedShard.leave_open_at_exit:
                    SharedShard._left_open.append(self.shard)
                else:
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


atexit.register(SharedShard.close_all)


def read_ahead_shards() -> list[threading.Thread]:
    """From now on, read ahead the files of every shard this process opens, and start it for the shards it has
    open already (a server opened its memory before it knew it would serve). Returns the read-aheads started."""
    with SharedShard._registry_lock:
        SharedShard.read_ahead = True
        cold = [s for s in SharedShard._registry.values() if not s.closed and s.warming is None]
        for shared in cold:
            shared.warming = warm_in_background(shared.path)
    return [s.warming for s in cold if s.warming is not None]


def _owner_file(path: Path) -> Path:
    return path.parent / f".{path.name}.owner.json"


def _write_owner(path: Path) -> None:
    try:
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


# A query runs in the calling thread, not on the shard's search pool. The pool (one thread per CPU by default)
# parallelises a query across segments; a search here reads one scope of one appendable segment (~0.5-1 ms), and
# handing it to the pool and back cost more than the query: 2-core machine, 100k memories / 1,000 users, a
# keyword search 2.2-2.4 ms of process CPU through the pool against 1.5-1.9 in the caller, and a dense search
# beside a busy Python thread 2.5-3.1 ms against 1.5-1.6. The engine releases the GIL either way, and concurrent
# searches still run side by side, each in its own thread. Stored in the shard's edge_config.json like the rest.
SEARCH_THREADS = 1


def _edge_config(dims: int):
    import qdrant_edge as qe

    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dims, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        max_search_threads=SEARCH_THREADS,
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


def _rewrite_paths(path: Path) -> tuple[Path, Path]:
    return path.parent / f".{path.name}.rewrite", path.parent / f".{path.name}.old"


def _finish_rewrite(path: Path) -> None:
    """Complete or undo a shard rewrite a crash interrupted: the old shard is kept until the new one is in
    place, so one of the two is always whole."""
    new, old = _rewrite_paths(path)
    if old.exists() and not path.exists():
        old.rename(path)  # killed between the two renames: the old shard is whole, the new one may not be
    shutil.rmtree(new, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


def rewrite_shard(path: Path, shard: Any, dims: int, keyword_indexes: Sequence[str],
                  float_indexes: Sequence[str]) -> Any:
    """Copy the live points of `shard` (open at `path`) into a fresh shard, swap it in, return it open."""
    import qdrant_edge as qe

    new, old = _rewrite_paths(path)
    shutil.rmtree(new, ignore_errors=True)
    fresh = qe.EdgeShard.create(str(new), _edge_config(dims))
    try:
        _ensure_edge_indexes(fresh, keyword_indexes, float_indexes)
        offset = None
        while True:
            records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=1024, with_payload=True,
                                                            with_vector=True))
            if records:
                fresh.update(qe.UpdateOperation.upsert_points(
                    [qe.Point(str(r.id), r.vector, r.payload or {}) for r in records]))
            if offset is None:
                break
        fresh.flush()
    finally:
        fresh.close()
    shard.close()
    try:
        path.rename(old)
        new.rename(path)
    finally:
        _finish_rewrite(path)  # removes the old copy, or puts it back if the swap failed half-way
    return qe.EdgeShard.load(str(path), _edge_config(dims))


def _ensure_edge_indexes(shard, keyword_indexes: Sequence[str], float_indexes: Sequence[str]) -> bool:
    """Create the missing payload indexes; True when one was created."""
    import qdrant_edge as qe

    have = set(shard.info().payload_schema)
    missing = [(f, qe.PayloadSchemaType.Keyword) for f in keyword_indexes if f not in have]
    missing += [(f, qe.PayloadSchemaType.Float) for f in float_indexes if f not in have]
    for f, kind in missing:
        shard.update(qe.UpdateOperation.create_field_index(f, kind))
    return bool(missing)

