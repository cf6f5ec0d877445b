"""The companion index: every memory's vector from a second encoder of another family (the Universal Sentence
Encoder multilingual, memoryx.models.embedding_use), which the fitted ranking reads as one more opinion on each
candidate: its cosine to the question, and that cosine less the best candidate's (memoryx.search.ranker).

Why a second encoder and not a better path: the candidates' order, not their gathering, is where the misses are
(most evidence is already among the candidates), and an encoder trained on other data errs on other pairs; its
similarity carried over to the validation questions and the blind lives where no signal computed from the first
encoders' outputs did (docs/benchmarks.md). It is not searched: the search reads the stored vectors of the
candidates the other paths gathered, by id, within the caller's scope.

A sidecar of the main store (sidecar.py), in the same backend under `<prefix>_co`: every upsert, delete, scope
deletion, reset, compaction and close reaches it. Each memory's own text is embedded, not its windows, up to
its first TEXT_CHARS characters: the encoder's cost grows faster than the text (~1 ms at 100 characters, ~9 ms
at 2,000, ~60 ms at 8,000), and a long turn's later parts are the main store's windows' to find. Memories
written before the index was on have no vector here until a reindex gives them one; they read 0 for the two
signals.
"""

from __future__ import annotations

from memoryx.stores.vectors.sidecar import SidecarIndex

TEXT_CHARS = 2000


class CompanionIndex(SidecarIndex):
    """Every memory's companion vector."""

    def upsert(self, items: list[dict]) -> None:
        if not items:
            return
        store = self._opened(create=True)
        vectors = self.embeddings.embed_documents([(r.get("text") or "")[:TEXT_CHARS] for r in items])
        store.upsert_memories([{**r, "vector": v, "chunk_vectors": []} for r, v in zip(items, vectors)])
