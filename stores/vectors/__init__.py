"""Vector projection of memories and entities: three backends, one contract.

* `EdgeVectorStore` (`edge.py`) — the Qdrant engine in-process, one shard per collection. The default: no
  server.
* `QdrantServerVectorStore` (`server.py`) — a Qdrant server (or the client's local mode in tests) through
  langchain-qdrant.
* `PgVectorStore` (`pgvector.py`) — tables in the PostgreSQL of the system of record (pgvector), shared by
  several worker processes; its filters are SQL/JSON paths (`sql_filters.py`).

All inherit every public method from `VectorStore` (`base.py`) and only implement its primitives. Every
collection holds a dense cosine vector named ``dense`` and a sparse vector ``keywords`` with Qdrant's IDF
modifier: the sparse vector of a text is `memoryx.core.text.sparse_vector` (hashed tokens, BM25-saturated term
frequencies) so that a sparse dot product with IDF is BM25 (pgvector's tables keep it as two arrays, scored in SQL). IDF statistics are computed over the caller's
scope (``IdfParams(corpus=<scope filter>)``), so one tenant's vocabulary never shapes another's scores.
Filters are translated per backend by `filters.py` and `sql_filters.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memoryx.errors import InvalidInputError
from memoryx.stores.vectors.base import DENSE, SPARSE, VectorHit, VectorStore
from memoryx.stores.vectors.companion import CompanionIndex
from memoryx.stores.vectors.edge import EdgeVectorStore
from memoryx.stores.vectors.edge_shard import read_ahead_shards
from memoryx.stores.vectors.filters import to_edge_filter, to_qdrant_filter
from memoryx.stores.vectors.multilingual import MultilingualIndex

if TYPE_CHECKING:  # pragma: no cover
    from langchain_core.embeddings import Embeddings

    from memoryx.settings import Settings
    from memoryx.stores.vectors.pgvector import PgVectorStore
    from memoryx.stores.vectors.server import QdrantServerVectorStore, make_qdrant_client

__all__ = [
    "VectorHit",
    "VectorStore",
    "EdgeVectorStore",
    "QdrantServerVectorStore",
    "PgVectorStore",
    "make_vector_store",
    "MultilingualIndex",
    "CompanionIndex",
    "read_ahead_shards",
    "make_qdrant_client",
    "to_edge_filter",
    "to_qdrant_filter",
    "DENSE",
    "SPARSE",
]


# The server and pgvector backends are imported when named (SQLAlchemy, LangChain's documents): a process on
# the embedded default opens its vectors without them.
def __getattr__(name: str):
    if name == "PgVectorStore":
        from memoryx.stores.vectors.pgvector import PgVectorStore

        return PgVectorStore
    if name in ("QdrantServerVectorStore", "make_qdrant_client"):
        from memoryx.stores.vectors import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_vector_store(settings: "Settings", dims: int, *, embeddings: "Embeddings | None" = None,
                      multilingual: "Embeddings | None" = None, companion: "Embeddings | None" = None) -> VectorStore:
    """The vector store selected by MEMORYX_VECTOR_BACKEND ('edge' default, 'qdrant' or 'pgvector'); with a
    `multilingual` encoder, its multilingual index (multilingual.py) in the same backend, `<prefix>_xl`; with a
    `companion` encoder, its companion index (companion.py), `<prefix>_co`."""
    store = _backend(settings, dims, prefix=settings.collection_prefix, embeddings=embeddings,
                     chunk_chars=settings.vector_chunk_chars, focus_chars=settings.vector_focus_chars)
    if multilingual is not None:
        prefix = f"{settings.collection_prefix}_xl"
        store.multilingual = MultilingualIndex(
            lambda: _backend(settings, int(multilingual.dims), prefix=prefix, embeddings=multilingual,
                             chunk_chars=settings.vector_chunk_chars, focus_chars=settings.vector_focus_chars),
            multilingual, _embedded_exists(settings, prefix))
    if companion is not None:
        co_prefix = f"{settings.collection_prefix}_co"
        store.companion = CompanionIndex(
            lambda: _backend(settings, int(companion.dims), prefix=co_prefix, embeddings=companion, chunk_chars=0,
                             focus_chars=0),
            companion, _embedded_exists(settings, co_prefix))
    return store


def _embedded_exists(settings: "Settings", prefix: str):
    """For the embedded backend, whether a sidecar's store was ever created (a directory: not made until it is
    first written); None for a server backend (its collection is opened, and made, on first need)."""
    if settings.vector_backend != "edge":
        return None
    path = Path(settings.data_dir) / "qdrant" / f"{prefix}_memories"
    return path.exists


def _backend(settings: "Settings", dims: int, *, prefix: str, embeddings: "Embeddings | None", chunk_chars: int,
             focus_chars: int) -> VectorStore:
    if settings.vector_backend == "edge":
        if settings.vector_readahead:  # before the open, so that the shards opened now are read ahead too
            read_ahead_shards()
        return EdgeVectorStore(Path(settings.data_dir) / "qdrant", dims, prefix=prefix, chunk_chars=chunk_chars,
                               focus_chars=focus_chars)
    if settings.vector_backend == "qdrant":
        from memoryx.stores.vectors.server import QdrantServerVectorStore, make_qdrant_client

        return QdrantServerVectorStore(make_qdrant_client(settings), dims, prefix=prefix, embeddings=embeddings,
                                       chunk_chars=chunk_chars, focus_chars=focus_chars)
    if settings.vector_backend == "pgvector":
        from memoryx.stores.vectors.pgvector import PgVectorStore

        return PgVectorStore(settings.resolved_sql_url(), dims, prefix=prefix, hnsw=settings.pgvector_hnsw,
                             chunk_chars=chunk_chars, pool_size=settings.pg_pool_size, focus_chars=focus_chars)
    raise InvalidInputError(f"MEMORYX_VECTOR_BACKEND={settings.vector_backend!r}: use 'edge', 'qdrant' or 'pgvector'")
