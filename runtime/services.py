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

from memoryx.models.embeddings import (
    embedding_dims,
    make_companion_embeddings,
    make_embeddings,
    make_multilingual_embeddings,
)
from memoryx.runtime.private_files import prepare_data_dir
from memoryx.runtime.recovery import recover_projections
from memoryx.runtime.store_precision import precision_for_store
from memoryx.settings import Settings, get_settings
from memoryx.stores.graph import lifetime, make_graph_store
from memoryx.stores.projections import Projector
from memoryx.stores.sql import SQLStore
from memoryx.stores.vectors import make_vector_store

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from memoryx.stores.graph import EmbeddedFalkorDB, GraphStore
    from memoryx.stores.vectors import VectorStore

log = logging.getLogger(__name__)


class _RoleModel:
    """A role's chat model as an attribute of Services (`services.judgment_llm`): built on first read by
    `Services.chat_model`, replaced by assignment (a test's scripted model)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.role = name.removesuffix("_llm")

    def __get__(self, services: "Services | None", owner: type | None = None) -> Any:
        return self if services is None else services.chat_model(self.role)

    def __set__(self, services: "Services", model: "BaseChatModel") -> None:
        services._models[self.role] = model


@dataclass
class Services:
    settings: Settings
    sql: "SQLStore"
    vectors: "VectorStore"
    graph: "GraphStore | None"
    embeddings: "Embeddings"
    projector: "Projector"
    # per role ("extraction", "judgment", "graph"): an injected chat model or a "provider:model" spec; None
    # takes the settings' model for the role. Built on first use (`extraction_llm`, ...).
    model_choices: dict = field(default_factory=dict)
    falkordb: "EmbeddedFalkorDB | None" = None
    recovery: dict = field(default_factory=dict)  # what start-up recovery did (memoryx.runtime.recovery)
    _closed: bool = field(default=False, repr=False)
    # the models built or assigned so far: each Services its own (`dataclasses.replace` makes a copy that
    # builds its models again from `model_choices`)
    _models: dict = field(default_factory=dict, init=False, repr=False)
    _models_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def chat_model(self, role: str) -> "BaseChatModel":
        """The chat model of a role, built on its first use: a process that only reads and searches never
        loads LangChain's chat-model stack (about a second of a CLI command's start)."""
        with self._models_lock:
            if role not in self._models:
                from memoryx.models.factory import make_chat_model  # lazy: see the docstring

                chosen = self.model_choices.get(role)
                if chosen is None or isinstance(chosen, str):
                    chosen = make_chat_model(chosen or self.settings.model_for(role), self.settings, role=role)
                self._models[role] = chosen
            return self._models[role]

    extraction_llm = _RoleModel()
    judgment_llm = _RoleModel()
    graph_llm = _RoleModel()

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
    search_only: bool = False,
) -> Services:
    """Open (and for embedded backends, start) every store. Injected models and embeddings win over
    the settings; a model may also be given as a "provider:model" string. The chat models are built here, so
    that a wrong model setting fails at once. The embedded graph server starts on a thread while SQL, the
    encoder and the vectors open: its start is mostly the server process's own (a few hundred ms on the
    other core).

    `search_only` (a process that only searches, the CLI's `memoryx search`): chat models are built on first
    use, the graph store is opened (its embedded server started) by the first search that walks the graph,
    and start-up recovery replays the outbox but leaves the graph's reconciliation with SQL to the next full
    open."""

    settings = settings or get_settings()
    prepare_data_dir(settings.data_dir, private=settings.private_files)  # before any store creates a file

    choices = {role: given if given is not None else llm
               for role, given in (("extraction", extraction_llm), ("judgment", judgment_llm), ("graph", graph_llm))}
    opened: list[Any] = []
    graph_start = _GraphStart(None if search_only else settings)
    try:
        sql = SQLStore(settings.resolved_sql_url(), pool_size=settings.pg_pool_size,
                       lock_connections=settings.pg_lock_connections)
        opened.append(sql)
        # the precision its vectors were written with (an injected local encoder's own, checked against it)
        precision = precision_for_store(settings, sql, getattr(embeddings, "precision", None))
        emb = embeddings or make_embeddings(settings, precision=precision)
        vectors = make_vector_store(settings, embedding_dims(emb, settings),
                                    multilingual=make_multilingual_embeddings(settings, emb),
                                    companion=make_companion_embeddings(settings))
        opened.append(vectors)
        graph, falkordb = graph_start.result()
        if search_only and settings.graph_backend != "none":
            graph = _GraphOnFirstUse(settings)
        if falkordb is not None:
            opened.append(falkordb)
        services = Services(settings=settings, sql=sql, vectors=vectors, graph=graph, embeddings=emb,
                            projector=Projector(sql, vectors, graph, emb), model_choices=choices, falkordb=falkordb)
        if not search_only:
            for role in choices:
                services.chat_model(role)
    except Exception:
        falkordb = graph_start.result(raise_error=False)[1]
        if falkordb is not None and falkordb not in opened:
            opened.append(falkordb)
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

    services.recovery = recover_projections(services, reconcile_graph=not search_only)
    return services


class _GraphStart:
    """The graph store opened (an embedded server started) on a thread; `result()` waits for it. No settings:
    nothing to open."""

    def __init__(self, settings: Settings | None):
        self._settings = settings
        self._store: tuple = (None, None)
        self._error: BaseException | None = None
        self._thread = None
        if settings is not None and settings.graph_backend != "none":
            if settings.graph_backend == "falkordb" and not settings.falkordb_url:
                # the embedded server is stopped cleanly on SIGTERM / SIGINT by handlers only the main thread
                # can install: installed here, before the server starts on its thread
                lifetime.install_signal_handlers()
            self._thread = threading.Thread(target=self._open, name="memoryx-graph-start", daemon=True)
            self._thread.start()

    def _open(self) -> None:
        try:
            self._store = make_graph_store(self._settings)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self, raise_error: bool = True) -> tuple:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None and raise_error:
            raise self._error
        return self._store


class _GraphOnFirstUse:
    """The graph store of a process that may never walk the graph (`search_only`): opened, and an embedded
    server started, by its first use; `close` stops what was started. Every attribute but `close` is the
    store's own."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._store: Any = None
        self._server: Any = None
        self._lock = threading.Lock()

    def _opened(self) -> Any:
        with self._lock:
            if self._store is None:
                self._store, self._server = make_graph_store(self._settings)
                if self._server is not None and self._server.recovered_unclean:
                    log.warning("embedded FalkorDB stopped uncleanly last time; the next full open (an add, "
                                "`memoryx serve`) rebuilds the graph from SQL")
            return self._store

    @property
    def opened(self) -> bool:
        """Whether a use has opened the store (started the embedded server)."""
        return self._store is not None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._opened(), name)

    def close(self) -> None:
        with self._lock:
            store, server, self._store, self._server = self._store, self._server, None, None
        if store is not None:
            store.close()
        if server is not None:
            server.stop()


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
