"""A sidecar index: a second vector store beside the main one, in another encoder's space, written and cleared with
it. The main store (`VectorStore.sidecars`) hands every upsert, delete, scope deletion, reset, compaction and close
to each of its sidecars, so a purge or a reindex covers them by construction. Which memories a sidecar holds and
what it embeds is the subclass's choice (`upsert`): the multilingual index (multilingual.py) holds the owners who
write Chinese, Japanese or Korean, the companion index (companion.py) every memory.

A sidecar is opened on first need. `exists` says whether its store was ever created (an embedded one is a
directory), so a data directory whose sidecar was never written never opens or creates it; None: always open it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.stores.vectors.base import VectorStore


class SidecarIndex:
    """`open_store`: opens the VectorStore of the encoder's dimensions, called on first need; `embeddings`: the
    sidecar's encoder (LangChain's interface), loaded on its first text."""

    def __init__(self, open_store: Callable[[], "VectorStore"], embeddings: Any,
                 exists: Callable[[], bool] | None = None):
        self._open_store = open_store
        self._exists = exists
        self._store: "VectorStore | None" = None
        self._lock = threading.Lock()
        self._closed = False  # a warm-up still running when the memory closes must not open the store again
        self.embeddings = embeddings

    def _opened(self, create: bool) -> "VectorStore | None":
        """The store, opened now if need be; None when it was never created and `create` is False."""
        if self._store is None:
            with self._lock:
                self._open_locked(create)
        return self._store

    def _open_locked(self, create: bool) -> None:
        """Open the store unless it is open or (without `create`) was never created; the caller holds the lock."""
        if self._store is None and (create or self._exists is None or self._exists()):
            self._store = self._open_store()

    # -- writes (called by the main store) ----------------------------------------------------------
    def upsert(self, items: list[dict]) -> None:  # pragma: no cover - each sidecar says what it holds
        raise NotImplementedError

    def delete(self, ids: list[str]) -> None:
        if (store := self._opened(create=False)) is not None:
            store.delete_memories(ids)

    def delete_scope(self, scope) -> None:
        if (store := self._opened(create=False)) is not None:
            store.delete_scope(scope)

    def reset(self) -> None:
        if (store := self._opened(create=False)) is not None:
            store.reset()

    def compact(self) -> bool:
        store = self._opened(create=False)
        return store.compact() if store is not None else False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            store, self._store = self._store, None
        if store is not None:
            store.close()

    # -- reads ---------------------------------------------------------------------------------------
    def warm(self) -> bool:
        """Open the store and load the encoder now, if it holds any memory: else a server's first search waits for
        the open (~150 ms for an embedded shard) and for the encoder's load. Nothing when the sidecar was never
        written, or once it is closed. Whether it warmed."""
        with self._lock:
            if self._closed:
                return False
            self._open_locked(create=False)
            store = self._store
        if store is None or not store.count_memories():
            return False
        self.embeddings.embed_query("query")
        return True

    def holds(self, scope) -> bool:
        """Whether any memory in this search scope has a vector here (the search pays the encoder only then)."""
        store = self._opened(create=False)
        return store is not None and store.count_memories(scope) > 0

    def vectors(self, ids: list[str]) -> dict[str, list[float]]:
        """{memory id: its vector here} for the ids that have one (`ids`: memories the caller's scope already
        holds, such as a search's candidates)."""
        store = self._opened(create=False)
        return store.memory_vectors(ids) if store is not None and ids else {}
