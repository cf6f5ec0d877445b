"""The server backend: a Qdrant server (or the client's local mode in tests) through langchain-qdrant.

Dense search goes through ``langchain_qdrant.QdrantVectorStore``; writes, the sparse keyword search, payload
indexes, deletes and counts use the ``QdrantClient``.
"""

from __future__ import annotations

import logging
import threading
import warnings
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from memoryx.errors import StoreUnavailableError
from memoryx.stores.vectors.base import (
    DENSE,
    FLOAT_INDEXES,
    KEYWORD_INDEXES,
    SPARSE,
    VectorHit,
    VectorStore,
    batched,
    hit_id,
)
from memoryx.stores.vectors.filters import client_dialect

if TYPE_CHECKING:  # pragma: no cover
    from langchain_core.embeddings import Embeddings
    from qdrant_client import QdrantClient

    from memoryx.settings import Settings

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _make_lc_store_class():
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


def _as_langchain_embeddings(embeddings: Any) -> None:
    """langchain-qdrant accepts only an instance of LangChain's `Embeddings`. MemoryX's local encoder implements
    that interface without inheriting the base class (its import costs a command half a second): registered
    here as a virtual subclass of it."""
    if embeddings is None:
        return
    from langchain_core.embeddings import Embeddings

    if not isinstance(embeddings, Embeddings) and all(
            callable(getattr(embeddings, name, None)) for name in ("embed_documents", "embed_query")):
        Embeddings.register(type(embeddings))


class QdrantServerVectorStore(VectorStore):
    """Qdrant server (or `QdrantClient(':memory:'|path=...)` local mode) behind langchain-qdrant.

    Dense search goes through `langchain_qdrant.QdrantVectorStore.similarity_search_with_score_by_vector`
    (exposed as `.langchain_memories` for LangChain retrievers when `embeddings` is given); writes carry
    precomputed dense + sparse vectors and our flat payload, so they use the client directly, as do the
    sparse keyword search, payload indexes, deletes and counts.
    """

    def __init__(self, client: "QdrantClient", dims: int, *, prefix: str = "memoryx",
                 embeddings: "Embeddings | None" = None, chunk_chars: int = 0,
                 focus_chars: int = 0):
        from qdrant_client import models

        super().__init__(dims, prefix=prefix, chunk_chars=chunk_chars, focus_chars=focus_chars)
        self.m = models
        self.client = client
        self.memories_collection = self._memories = f"{prefix}_memories"
        self.entities_collection = self._entities = f"{prefix}_entities"
        self._local = _is_local_client(client)
        self._lock = threading.RLock() if self._local else None  # local mode is not thread-safe
        self._scoped_idf = True
        self._dialect = client_dialect()
        with self._guard():
            for name in (self.memories_collection, self.entities_collection):
                self._ensure_collection(name)
        cls = _make_lc_store_class()
        _as_langchain_embeddings(embeddings)
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
        self._langchain = {self.memories_collection: self.langchain_memories,
                           self.entities_collection: self.langchain_entities}

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

    # -- primitives -----------------------------------------------------------------------------------
    def _point(self, pid: str, vectors: dict[str, Any], payload: dict):
        m = self.m
        if SPARSE in vectors:
            ids, vals = vectors[SPARSE]
            vectors = {**vectors, SPARSE: m.SparseVector(indices=ids, values=vals)}
        return m.PointStruct(id=pid, vector=vectors, payload=payload)

    def _upsert(self, collection: str, points: list) -> None:
        with self._guard():
            for chunk in batched(points):
                self.client.upsert(collection, points=chunk, wait=True)

    def _delete(self, collection: str, pids: list[str]) -> None:
        with self._guard():
            for chunk in batched(pids):
                self.client.delete(collection, points_selector=self.m.PointIdsList(points=chunk), wait=True)

    def _dense(self, collection: str, vector, flt, limit: int, threshold) -> list[VectorHit]:
        with self._guard():
            docs = self._langchain[collection].similarity_search_with_score_by_vector(
                vector, k=limit, filter=flt, score_threshold=threshold)
        hits = []
        for doc, score in docs:
            payload = dict(doc.metadata)
            pid = payload.pop("_id", None)
            payload.pop("_collection_name", None)
            hits.append(VectorHit(hit_id(pid, payload), float(score), payload))
        return hits

    def _vectors(self, collection: str, pids: list[str]) -> dict[str, list[float]]:
        with self._guard():
            records = self.client.retrieve(collection, ids=pids, with_payload=False, with_vectors=[DENSE])
        return {str(r.id): list(r.vector[DENSE]) for r in records if isinstance(r.vector, dict) and DENSE in r.vector}

    def _sparse(self, collection: str, ids, values, flt, corpus, limit: int) -> list[VectorHit]:
        m = self.m
        kwargs = dict(
            collection_name=collection,
            query=m.SparseVector(indices=ids, values=values),
            using=SPARSE,
            query_filter=flt,
            limit=limit,
            with_payload=True,
        )
        with self._guard():
            if self._scoped_idf:
                try:
                    res = self.client.query_points(
                        **kwargs, search_params=m.SearchParams(idf=m.IdfCorpusParams(corpus=corpus)))
                except Exception as exc:  # older servers: no per-corpus IDF -> collection-wide IDF
                    if "idf" not in str(exc).lower():
                        raise
                    log.warning("Qdrant server does not support scoped IDF (%s); using collection-wide IDF", exc)
                    self._scoped_idf = False
                    res = self.client.query_points(**kwargs)
            else:
                res = self.client.query_points(**kwargs)
        return [VectorHit(hit_id(p.id, p.payload), float(p.score), p.payload or {}) for p in res.points]

    def _count(self, collection: str, flt) -> int:
        with self._guard():
            return int(self.client.count(collection, count_filter=flt, exact=True).count)

    def _delete_where(self, collection: str, flt) -> None:
        with self._guard():
            self.client.delete(collection, points_selector=self.m.FilterSelector(filter=flt), wait=True)

    def _clear(self, collection: str) -> None:
        with self._guard():
            self.client.delete_collection(collection)
            self._ensure_collection(collection)

    def _shutdown(self) -> None:
        with self._lock if self._lock is not None else nullcontext():
            self._closed = True
            try:
                self.client.close()
            except Exception:  # pragma: no cover
                log.debug("closing the Qdrant client failed", exc_info=True)

    def __repr__(self) -> str:
        return f"QdrantServerVectorStore(prefix={self.prefix!r}, dims={self.dims}, local={self._local})"


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
