"""A second dense index, in a multilingual encoder's space, for the owners who write Chinese or Japanese.

The default encoder (MiniLM) was trained on English: a question asked in English over a memory said in Chinese
("What breed is my cat?" over "我家团子是一只英短蓝猫"), or in Chinese over one said in English, shares no word
and no meaningful vector with it. multilingual-e5-small bridges them, but costs ~4x MiniLM per text, so it is
paid only where it can help: an owner (a user, an agent or a group) is multilingual from the first write
that brings a memory written in Chinese, Japanese or Korean (not an English one naming 张伟), and from then on
each of their memories written gets a vector here too. An owner who only ever writes English pays one check
per search (whether the index exists; a count once another owner has made it).

The index is a vector store of the same backend as the main one under its own collection prefix
(``<prefix>_xl_memories``), written and cleared together with the main store (a sidecar, sidecar.py):
every upsert, delete, scope deletion, reset, compaction and close of the main store reaches it, so a purge or a
reindex covers it by construction. Texts, and the narrow windows of mid-length texts (chunks.py, the
main store's widths), are embedded here (E5's "passage: " side), from the payload text.
Memories written before their owner's first CJK memory keep only the main vector; a reindex gives every
memory of a multilingual owner one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memoryx.core.filters import And, Cond
from memoryx.core.scope import Scope
from memoryx.core.text import CJK_CHAR
from memoryx.stores.vectors.sidecar import SidecarIndex

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.core.filters import FilterNode
    from memoryx.stores.vectors.base import VectorHit

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


class MultilingualIndex(SidecarIndex):
    """The owners' multilingual vectors (a sidecar of the main store, sidecar.py), with the main store's narrow
    windows: a sentence of a mid-length message gets a vector of its own, as there."""

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
