"""The embedded vector shards opened on a thread while a CLI command imports the rest.

Opening a shard is native code that releases the GIL: loading an existing one maps its segments, creating one
(a new data directory) writes its files and payload indexes, a few hundred ms on a slow disk. Started before the
command imports LangGraph and SQLAlchemy, it overlaps them instead of following them. The shards are shared per
process and reference counted (stores/vectors/edge_shard.py), so `build_services` then finds them open;
`release()` drops this early reference once the command's own stores hold theirs. Any failure here is left to
the command's own open, which reports it with its advice.
"""

from __future__ import annotations

import threading

from memoryx.runtime.private_files import prepare_data_dir
from memoryx.settings import Settings
from memoryx.stores.vectors import VectorStore, make_vector_store


class EarlyVectors:
    def __init__(self, settings: Settings, dims: int | None):
        self._store: VectorStore | None = None
        self._thread: threading.Thread | None = None
        if settings.vector_backend != "edge" or not dims:
            return
        self._thread = threading.Thread(target=self._open, args=(settings, dims), name="memoryx-vectors-early",
                                        daemon=True)
        self._thread.start()

    def _open(self, settings: Settings, dims: int) -> None:
        try:
            prepare_data_dir(settings.data_dir, private=settings.private_files)
            self._store = make_vector_store(settings, dims)
        except Exception:  # noqa: BLE001 - the command's own open raises it again, where it is reported
            self._store = None

    def release(self) -> None:
        """Wait for the open, then drop this reference (the shards stay open while the command's stores use them)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        store, self._store = self._store, None
        if store is not None:
            store.close()
