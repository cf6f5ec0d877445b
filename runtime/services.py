"""The live objects the graphs run on: stores, embeddings and chat models, built from one Settings.

`build_services()` is what `Memory()` calls. Callers inject the services into every graph run through
`Context(services=...)`; only a process that serves the graphs itself (`langgraph dev`, LangGraph Platform)
runs them without: `memoryx.runtime.context.services_of` then uses `serving_services()`, the one set this process
builds from MEMORYX_ settings on first use.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memoryx.models.embeddings import embedding_dims, make_embeddings
from memoryx.models.factory import make_chat_model
from memoryx.runtime.private_files import make_private, tighten_umask
from memoryx.runtime.recovery import recover_projections
from memoryx.settings import Settings, get_settings
from memoryx.stores.graph import make_graph_store
from memoryx.stores.projections import Projector
from memoryx.stores.sql import SQLStore
from memoryx.stores.vectors import make_vector_store

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from memoryx.stores.graph import EmbeddedFalkorDB, GraphStore
    from memoryx.stores.vectors import VectorStore

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    sql: "SQLStore"
    vectors: "VectorStore"
    graph: "GraphStore | None"
    embeddings: "Embeddings"
    projector: "Projector"
    extraction_llm: "BaseChatModel"
    judgment_llm: "BaseChatModel"
    graph_llm: "BaseChatModel"
    falkordb: "EmbeddedFalkorDB | None" = None
    recovery: dict = field(default_factory=dict)  # what start-up recovery did (memoryx.runtime.recovery)
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        """Close every store and stop the embedded graph server if this process started it."""
        if self._closed:
            return
        self._closed = True
        for name, closer in (
            ("vector store", getattr(self.vectors, "close", None)),
            ("graph store", getattr(self.graph, "close", None)),
            ("sql store", getattr(self.sql, "close", None)),
            ("embedded FalkorDB", getattr(self.falkordb, "stop", None)),
        ):
            if closer is None:  # no graph backend or embedded server (or a test's stand-in with nothing to close)
                continue
            try:
                closer()
            except Exception as exc:  # closing must go on for the other stores
                log.warning("closing the %s failed: %s", name, exc)

    def __enter__(self) -> "Services":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def build_services(
    settings: Settings | None = None,
    *,
    llm: "BaseChatModel | str | None" = None,
    extraction_llm: "BaseChatModel | str | None" = None,
    judgment_llm: "BaseChatModel | str | None" = None,
    graph_llm: "BaseChatModel | str | None" = None,
    embeddings: "Embeddings | None" = None,
) -> Services:
    """Open (and for embedded backends, start) every store. Injected models and embeddings win over
    the settings; a model may also be given as a "provider:model" string."""

    settings = settings or get_settings()
    if settings.private_files:
        tighten_umask()  # before any store creates a file: native engines use the process umask
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if settings.private_files:
        make_private(settings.data_dir)

    def model(role: str, given: Any) -> "BaseChatModel":
        chosen = given if given is not None else llm
        if chosen is None or isinstance(chosen, str):
            return make_chat_model(chosen or settings.model_for(role), settings, role=role)
        return chosen

    opened: list[Any] = []
    try:
        sql = SQLStore(settings.resolved_sql_url(), pool_size=settings.pg_pool_size,
                       lock_connections=settings.pg_lock_connections)
        opened.append(sql)
        emb = embeddings or make_embeddings(settings)
        vectors = make_vector_store(settings, embedding_dims(emb, settings))
        opened.append(vectors)
        graph, falkordb = None, None
        if settings.graph_backend != "none":
            graph, falkordb = make_graph_store(settings)
        if falkordb is not None:
            opened.append(falkordb)
        services = Services(
            settings=settings,
            sql=sql,
            vectors=vectors,
            graph=graph,
            embeddings=emb,
            projector=Projector(sql, vectors, graph, emb),
            extraction_llm=model("extraction", extraction_llm),
            judgment_llm=model("judgment", judgment_llm),
            graph_llm=model("graph", graph_llm),
            falkordb=falkordb,
        )
    except Exception:
        # a half-built set of stores must not keep the embedded servers or shard locks alive
        for thing in reversed(opened):
            for closer in ("close", "stop"):
                if hasattr(thing, closer):
                    try:
                        getattr(thing, closer)()
                    except Exception:
                        pass
                    break
        raise
    # a crashed earlier process: graph rebuilt after an unclean stop, outbox replayed, graph reconciled with SQL

    services.recovery = recover_projections(services)
    return services


_serving: Services | None = None
_serving_lock = threading.Lock()


def serving_services() -> Services:
    """The services of a process serving the graphs with no services injected (langgraph dev, LangGraph
    Platform): built from MEMORYX_ settings on first use, then shared by every run of the process."""
    global _serving
    with _serving_lock:
        if _serving is None or _serving._closed:
            _serving = build_services()
        return _serving
