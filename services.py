"""The live objects the graphs run on: stores, embeddings and chat models, built from one Settings.

`build_services()` is what `Memory()` calls; `get_default_services()` is the lazily built process-wide
instance that graphs use when no services are injected (for example under `langgraph dev`).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memoryx.settings import Settings, get_settings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from memoryx.stores.graph import EmbeddedFalkorDB, GraphStore
    from memoryx.stores.projections import Projector
    from memoryx.stores.sql import SQLStore
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
    _closed: bool = field(default=False, repr=False)

    @property
    def offline(self) -> bool:
        """True when any role runs on the offline rule-based model (demo/test model)."""
        from memoryx.models.offline import OfflineChatModel

        return any(isinstance(m, OfflineChatModel) for m in (self.extraction_llm, self.judgment_llm, self.graph_llm))

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
            if closer is None:
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
    from memoryx.embeddings import embedding_dims, make_embeddings
    from memoryx.models.factory import make_chat_model
    from memoryx.stores.projections import Projector
    from memoryx.stores.sql import SQLStore
    from memoryx.stores.vectors import make_vector_store

    settings = settings or get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)

    def model(role: str, given: Any) -> "BaseChatModel":
        chosen = given if given is not None else llm
        if chosen is None or isinstance(chosen, str):
            return make_chat_model(chosen or settings.model_for(role), settings)
        return chosen

    opened: list[Any] = []
    try:
        sql = SQLStore(settings.resolved_sql_url())
        opened.append(sql)
        emb = embeddings or make_embeddings(settings)
        vectors = make_vector_store(settings, embedding_dims(emb, settings))
        opened.append(vectors)
        graph, falkordb = None, None
        if settings.graph_backend != "none":
            from memoryx.stores.graph import make_graph_store

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
    # replay projection writes that a crashed or failed earlier run left in the outbox
    try:
        if falkordb is not None and getattr(falkordb, "recovered_unclean", False):
            # the embedded graph snapshots every second: after a crash, rebuild it from the SQL truth
            log.warning("embedded FalkorDB stopped uncleanly last time; rebuilding the graph from SQL")
            services.projector.rebuild_graph()
        replayed = services.projector.retry_pending()
        if replayed:
            log.info("replayed %d pending projection writes", replayed)
    except Exception as exc:  # a store still down: the jobs stay queued for the next start or reindex
        log.warning("pending projection writes could not be replayed yet: %s", exc)
    return services


_default: Services | None = None
_default_lock = threading.Lock()


def get_default_services() -> Services:
    """Process-wide services from MEMORYX_ settings, built on first use (langgraph dev, LangServe)."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = build_services()
        return _default


def set_default_services(services: Services | None) -> None:
    """Install (or clear) the process-wide services, e.g. the ones a server already opened."""
    global _default
    with _default_lock:
        _default = services
