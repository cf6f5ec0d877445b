"""A second dense index, in a multilingual encoder's space, for the owners who write Chinese or Japanese.

The default encoder (MiniLM) was trained on English: a question asked in English over a memory said in Chinese
("What breed is my cat?" over "我家团子是一只英短蓝猫"), or in Chinese over one said in English, shares no word
and no meaningful vector with it. multilingual-e5-small bridges them, but costs ~4x MiniLM per text, so it is
paid only where it can help: an owner (a user, an agent or a group) is multilingual from the first write
that brings a memory written in Chinese, Japanese or Korean (not an English one naming 张伟), and from then on
each of their memories written gets a vector here too. An owner who only ever writes English pays one check
per search (whether the index exists; a count once another owner has made it).

The index is a vector store of the same backend as the main one under its own collection prefix
(``<prefix>_xl_memories``), written and cleared together with the main store (`VectorStore.multilingual`):
every upsert, delete, scope deletion, reset, compaction and close of the main store reaches it, so a purge or a
reindex covers it by construction. Texts, and the narrow windows of mid-length texts (chunks.py, the
main store's widths), are embedded here (E5's "passage: " side), from the payload text.
Memories written before their owner's first CJK memory keep only the main vector; a reindex gives every
memory of a multilingual owner one.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, Callable

from memoryx.core.filters import And, Cond
from memoryx.core.scope import Scope
from memoryx.core.text import CJK_CHAR

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.core.filters import FilterNode
    from memoryx.stores.vectors.base import VectorHit, VectorStore

SCRIPT = "script"  # payload field of a point here: the script its text is written in (script_of)
OWNER_FIELDS = ("user_id", "agent_id", "group_id")  # a run belongs to its owner: runs share the owner's state


def owner_scope(item: dict) -> Scope:
    """The owner of a memory item: its user, agent and group (not its run), or its run when it has nothing else."""
    fields = {k: item[k] for k in OWNER_FIELDS if item.get(k)}
    return Scope(**fields) if fields else Scope(run_id=item["run_id"])


_LETTER = re.compile(r"[^\W\d_]")
CJK_SHARE = 0.3  # of a text's letters: below it, an English text naming 张伟 or a dish, which MiniLM reads well enough


def mostly_cjk(text: str | None) -> bool:
    """The text is written in Chinese, Japanese or Korean: such characters are at least CJK_SHARE of its letters
    (not `models.graph_tools.has_cjk`, which any one such character satisfies)."""
    if not text or CJK_CHAR.search(text) is None:
        return False
    return len(CJK_CHAR.findall(text)) >= CJK_SHARE * len(_LETTER.findall(text))


def script_of(text: str | None) -> str:
    """"cjk" for a text written in Chinese, Japanese or Korean, else "latin": what the search's bridge filters on."""
    return "cjk" if mostly_cjk(text) else "latin"


class MultilingualIndex:
    """The owners' multilingual vectors. `open_store`: opens the VectorStore of the encoder's dimensions (with
    the main store's narrow windows: a sentence of a mid-length message gets a vector of its own, as there),
    called on first need; `exists`: whether that store has
    been created (an embedded one is a directory), so a data directory whose owners never wrote CJK text never
    opens or creates it; None: always open it. `embeddings`: the multilingual encoder (LangChain's interface),
    loaded on its first text."""

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
    def upsert(self, items: list[dict]) -> None:
        """Give the items of multilingual owners a vector: an owner is multilingual when one of these items
        has CJK text or the index already holds one of theirs. Other owners' items are left out (they have
        no vector here to replace)."""
        groups: dict[Scope, list[dict]] = {}
        for item in items:
            groups.setdefault(owner_scope(item), []).append(item)
        writes_cjk = {owner for owner, rows in groups.items() if any(mostly_cjk(r.get("text")) for r in rows)}
        store = self._opened(create=bool(writes_cjk))
        if store is None:
            return
        keep = [r for owner, rows in groups.items() if owner in writes_cjk or store.count_memories(owner) > 0
                for r in rows]
        if not keep:
            return
        # the narrow windows of a mid-length text; a long one the engine reads in 512-token windows of its own
        # (the main store's wide windows would cost a multilingual embedding each, ~1 s per long chat turn)
        windows = [store.chunk_texts(text) if len(text := r.get("text") or "") <= store.chunk_chars else []
                   for r in keep]
        vectors = iter(self.embeddings.embed_documents([r.get("text") or "" for r in keep]
                                                       + [t for ts in windows for t in ts]))
        own = [next(vectors) for _ in keep]
        store.upsert_memories([{**r, "vector": v, "chunk_vectors": [next(vectors) for _ in ts],
                                SCRIPT: script_of(r.get("text"))} for r, v, ts in zip(keep, own, windows)])

    def delete(self, ids: list[str]) -> None:
        if (store := self._opened(create=False)) is not None:
            store.delete_memories(ids)

    def delete_scope(self, scope: Scope) -> None:
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
        """Open the store and load the encoder now, if any owner has memories here: else a server's first search
        waits for the open (every search asks `holds`; ~150 ms for an embedded shard) and the first search of
        such an owner for the encoder's load. Nothing when no owner ever wrote CJK text, or once the index is
        closed. Whether it warmed."""
        with self._lock:
            if self._closed:
                return False
            self._open_locked(create=False)
            store = self._store
        if store is None or not store.count_memories():
            return False
        self.embeddings.embed_query("query")
        return True

    def holds(self, scope: Scope) -> bool:
        """Whether any memory in this search scope has a multilingual vector (the search pays the encoder
        only then)."""
        store = self._opened(create=False)
        return store is not None and store.count_memories(scope) > 0

    def vectors(self, ids: list[str]) -> dict[str, list[float]]:
        """{memory id: its multilingual vector} for the ids that have one (`ids`: memories the caller's scope
        already holds, such as a search's candidates)."""
        store = self._opened(create=False)
        return store.memory_vectors(ids) if store is not None and ids else {}

    def search(self, vector: list[float], scope: Scope, *, limit: int, filters: "FilterNode | None" = None,
               script: str | None = None) -> list["VectorHit"]:
        """Best-first hits; `script` keeps only memories written in that script (script_of)."""
        store = self._opened(create=False)
        if store is None:
            return []
        if script is not None:
            only = Cond(SCRIPT, "eq", script)
            filters = only if filters is None else And((filters, only))
        return store.search_memories(vector, scope, limit=limit, filters=filters)
