"""The Python API: `Memory` and `AsyncMemory`, mem0-compatible in names and result shapes.

    from memoryx import Memory
    with Memory() as m:                       # embedded defaults under MEMORYX_DATA_DIR (.memoryx)
        m.add("I live in Berlin and I love sushi", user_id="alice")
        m.search("where does alice live?", user_id="alice")     # {"results": [...], "relations": [...]}

`add` and `search` run the LangGraph workflows (memoryx.graphs.add / memoryx.graphs.search) with the live
stores injected through `context=Context(services=...)`; the add graph is compiled with the configured
checkpointer and every run's thread id is its trace id, so a run interrupted for human review can be resumed
with `resume_add(trace_id, operations)`. The other methods go straight to the system of record (SQL) and
then bring the projections (vectors, graph) in step.

`AsyncMemory` has the same methods as coroutines: graphs run with `ainvoke`, the (synchronous) stores are
called through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

from memoryx.errors import InvalidInputError, NotFoundError, ScopeError
from memoryx.scope import Scope
from memoryx.settings import Settings, get_settings

log = logging.getLogger(__name__)

__all__ = ["AsyncMemory", "Memory", "settings_from_config"]

_PAGE = 500
_VERDICTS = ("CORRECT", "INCORRECT", "PARTIAL")


# --------------------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------------------


def _provider_spec(section: dict | None) -> tuple[str | None, dict]:
    """mem0-style {"provider": "openai", "config": {"model": ...}} -> ("openai:model", config)."""
    if not section:
        return None, {}
    if isinstance(section, str):
        return section, {}
    provider = section.get("provider")
    config = dict(section.get("config") or {})
    model = config.get("model")
    if provider in (None, "offline"):
        return provider, config
    if provider in ("huggingface", "local", "sentence-transformers") and not model:
        return "local:all-MiniLM-L6-v2", config
    if provider in ("huggingface", "sentence-transformers"):
        provider = "local"
    return (f"{provider}:{model}" if model else provider), config


def settings_from_config(config: dict | None) -> Settings:
    """Settings from a dict: either flat `Settings` fields ({"data_dir": ..., "llm": "offline"}) or a mem0
    config ({"llm": {"provider": "openai", "config": {"model": "gpt-4o-mini"}}, "embedder": {...},
    "vector_store": {"provider": "qdrant", "config": {...}}, "graph_store": {...}}). Values not given come
    from the MEMORYX_* environment as usual."""
    config = dict(config or {})
    fields: dict[str, Any] = {}
    llm = config.pop("llm", None)
    if isinstance(llm, dict):
        spec, c = _provider_spec(llm)
        if spec:
            fields["llm"] = spec
        if c.get("openai_base_url") or c.get("base_url") or c.get("ollama_base_url"):
            fields["llm_base_url"] = c.get("openai_base_url") or c.get("base_url") or c.get("ollama_base_url")
        if c.get("api_key"):
            fields["llm_api_key"] = c["api_key"]
        if c.get("temperature") is not None:
            fields["llm_temperature"] = c["temperature"]
    elif llm is not None:
        fields["llm"] = llm
    embedder = config.pop("embedder", None)
    if isinstance(embedder, dict):
        spec, c = _provider_spec(embedder)
        if spec:
            fields["embedding_model"] = spec
        if c.get("openai_base_url") or c.get("base_url"):
            fields["embedding_base_url"] = c.get("openai_base_url") or c.get("base_url")
        if c.get("api_key"):
            fields["embedding_api_key"] = c["api_key"]
        if c.get("embedding_dims"):
            fields["embedding_dims"] = c["embedding_dims"]
    elif embedder is not None:
        fields["embedding_model"] = embedder
    vs = config.pop("vector_store", None)
    if isinstance(vs, dict):
        c = dict(vs.get("config") or {})
        provider = vs.get("provider", "qdrant")
        if provider not in ("qdrant", "edge"):
            raise InvalidInputError(f"vector_store provider {provider!r} is not supported; use 'qdrant' (server) or 'edge' (embedded).")
        if provider == "qdrant" and (c.get("url") or c.get("host") or c.get("path")):
            fields["vector_backend"] = "qdrant"
            if c.get("url"):
                fields["qdrant_url"] = c["url"]
            elif c.get("host"):
                fields["qdrant_url"] = f"http://{c['host']}:{c.get('port', 6333)}"
            else:
                fields["qdrant_url"] = c["path"]
            if c.get("api_key"):
                fields["qdrant_api_key"] = c["api_key"]
        else:
            fields["vector_backend"] = "edge"
        if c.get("collection_name"):
            fields["collection_prefix"] = c["collection_name"]
        if c.get("embedding_model_dims"):
            fields["embedding_dims"] = c["embedding_model_dims"]
    gs = config.pop("graph_store", None)
    if isinstance(gs, dict):
        provider = gs.get("provider", "falkordb")
        c = dict(gs.get("config") or {})
        if provider in ("neo4j", "memgraph") or c.get("url"):
            fields["graph_backend"] = "neo4j"
            fields["neo4j_url"] = c.get("url")
            if c.get("username") is not None:
                fields["neo4j_username"] = c["username"]
            if c.get("password") is not None:
                fields["neo4j_password"] = c["password"]
        elif provider in ("none", None):
            fields["graph_backend"] = "none"
        else:
            fields["graph_backend"] = "falkordb"
    if "history_db_path" in config:  # mem0's SQLite history file
        fields["sql_url"] = f"sqlite:///{config.pop('history_db_path')}"
    config.pop("version", None)
    unknown = [k for k in config if k not in Settings.model_fields]
    if unknown:
        raise InvalidInputError(f"Unknown configuration keys {unknown}; see memoryx.Settings for the accepted fields.")
    fields.update(config)
    return Settings(**fields)


def _resolve_settings(settings: Settings | dict | None, overrides: dict) -> Settings:
    if isinstance(settings, dict):
        settings = settings_from_config(settings)
    if settings is None:
        settings = Settings(**overrides) if overrides else get_settings()
    elif overrides:
        settings = settings.model_copy(update=overrides)
    return settings


def _scope(user_id=None, agent_id=None, run_id=None) -> Scope:
    return Scope(user_id=user_id, agent_id=agent_id, run_id=run_id)


def _optional_scope(user_id=None, agent_id=None, run_id=None) -> Scope | None:
    if user_id is None and agent_id is None and run_id is None:
        return None
    return _scope(user_id, agent_id, run_id)


def _check_id(memory_id: Any, what: str = "memory_id") -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, got {memory_id!r}")
    return memory_id.strip()


def _check_limit(limit: Any, what: str = "limit") -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"{what} must be a positive integer, got {limit!r}")
    return limit


def _checkpointing_module():
    """memoryx.checkpointing (make_checkpointer / make_async_checkpointer), wherever it lives."""
    import importlib

    for name in ("memoryx.checkpointing", "memoryx.graphs.checkpointing"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return None


async def _async_checkpointer(settings: Settings) -> tuple[Any, Any]:
    """(saver, async close function) for AsyncMemory: the async twins of memoryx.checkpointing's savers
    (same database / file, so a run paused by one front-end can be resumed by the other)."""
    from memoryx.errors import StoreUnavailableError

    kind = settings.checkpointer
    url = settings.resolved_sql_url()
    if kind == "none":
        return None, None
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(), None
    if kind == "postgres" or (kind == "auto" and url.startswith(("postgresql", "postgres"))):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        conninfo = url
        for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgres+psycopg://"):
            if url.startswith(prefix):
                conninfo = "postgresql://" + url[len(prefix):]
        try:
            pool = AsyncConnectionPool(conninfo=conninfo, min_size=1, max_size=8, open=False, timeout=30,
                                       kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row})
            await pool.open()
            saver = AsyncPostgresSaver(pool)
            await saver.setup()
        except Exception as exc:  # noqa: BLE001
            raise StoreUnavailableError(f"Cannot open the PostgreSQL checkpointer at MEMORYX_SQL_URL: {exc}. "
                                        "Set MEMORYX_CHECKPOINTER=sqlite or memory to keep checkpoints elsewhere.") from exc
        return saver, pool.close
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(settings.data_dir) / "checkpoints.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(str(path), timeout=30.0)
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA busy_timeout=30000")
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    return saver, conn.close


def _interrupts_of(out: Any) -> list:
    if isinstance(out, dict):
        return list(out.get("__interrupt__") or [])
    return []


# --------------------------------------------------------------------------------------------------------
# the shared core: stores and graphs, no sync/async policy
# --------------------------------------------------------------------------------------------------------


class _Core:
    """Everything both front-ends share. All methods are synchronous."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, **overrides: Any):
        self.settings = _resolve_settings(settings, overrides)
        if services is None:
            from memoryx.services import build_services

            services = build_services(self.settings, llm=llm, extraction_llm=extraction_llm,
                                      judgment_llm=judgment_llm, graph_llm=graph_llm, embeddings=embeddings)
            self._owns_services = True
        else:
            self._owns_services = False
        self.services = services
        self._lock = threading.Lock()
        self._add_graph = None
        self._checkpointer = None
        self._closed = False

    # --- graphs -------------------------------------------------------------------------------------

    def context(self, **overrides: Any):
        from memoryx.context import Context

        s = self.settings
        values = dict(similarity_threshold=s.similarity_threshold, similar_top_k=s.similar_top_k,
                      entity_merge_threshold=s.entity_merge_threshold, review=s.review,
                      graph_enabled=self.services.graph is not None, search_mode=s.search_mode,
                      graph_expand_depth=s.graph_expand_depth, services=self.services)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Context(**values)

    def add_graph(self):
        """The add graph compiled with the configured checkpointer (built once, on first use)."""
        with self._lock:
            if self._add_graph is None:
                from memoryx.graphs import add as add_module

                saver = self._make_checkpointer()
                compile_fn = getattr(add_module, "compile_add_graph", None)
                if compile_fn is not None:
                    self._add_graph = compile_fn(saver)
                else:
                    self._add_graph = add_module.builder.compile(checkpointer=saver)
            return self._add_graph

    def _make_checkpointer(self):
        module = _checkpointing_module()
        if module is None:  # pragma: no cover - the module is written alongside
            return None
        make_checkpointer = module.make_checkpointer
        saver = make_checkpointer(self.settings)
        self._checkpointer = saver
        return saver

    @staticmethod
    def search_graph():
        from memoryx.graphs.search import graph

        return graph

    def add_input(self, messages, user_id, agent_id, run_id, metadata, infer, trace_id) -> tuple[dict, dict]:
        _scope(user_id, agent_id, run_id)  # fail fast with a ScopeError naming the fields
        if messages is None:
            raise InvalidInputError("messages is missing; pass a string or a list of {'role', 'content'} dicts.")
        if isinstance(messages, dict) or (hasattr(messages, "content") and hasattr(messages, "type")):
            messages = [messages]  # one {"role", "content"} dict or one LangChain message
        if not isinstance(messages, (str, list)):
            raise InvalidInputError(f"messages must be a string or a list of {{'role', 'content'}} dicts, got {type(messages).__name__}.")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}.")
        trace_id = trace_id or str(uuid.uuid4())
        inp = {"messages": messages, "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
               "metadata": metadata or {}, "infer": bool(infer), "trace_id": trace_id}
        return inp, self.run_config(trace_id, "memoryx.add", user_id, agent_id, run_id)

    def check_review(self, graph, review: bool | None) -> None:
        if (self.settings.review if review is None else review) and getattr(graph, "checkpointer", None) is None:
            raise InvalidInputError("Review pauses the add run in a checkpoint, but MEMORYX_CHECKPOINTER=none; "
                                    "set it to auto, sqlite, postgres or memory.")

    def run_config(self, trace_id: str, name: str, user_id=None, agent_id=None, run_id=None) -> dict:
        try:
            from memoryx.graphs.add import add_run_config
        except ImportError:  # pragma: no cover
            return {"configurable": {"thread_id": trace_id}, "run_name": name, "metadata": {"trace_id": trace_id}}
        return add_run_config(trace_id, user_id=user_id, agent_id=agent_id, run_id=run_id, services=self.services,
                              run_name=name)

    def search_input(self, query, user_id, agent_id, run_id, limit, filters, threshold, extra: dict) -> dict:
        _scope(user_id, agent_id, run_id)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string.")
        _check_limit(limit)
        if filters is not None and not isinstance(filters, dict):
            raise InvalidInputError(f"filters must be a dict, got {type(filters).__name__}.")
        if threshold is not None and not isinstance(threshold, (int, float)):
            raise InvalidInputError(f"threshold must be a number, got {threshold!r}.")
        inp = {"query": query, "user_id": user_id, "agent_id": agent_id, "run_id": run_id, "limit": limit,
               "filters": filters, "threshold": threshold}
        inp.update({k: v for k, v in extra.items() if v is not None})
        return inp

    def finish_add(self, out: Any, trace_id: str, snapshot_fn) -> dict:
        interrupts = _interrupts_of(out)
        if interrupts or (out.get("result") is None if isinstance(out, dict) else True):
            snapshot = snapshot_fn()
            pending = self._pending(interrupts, snapshot)
            if pending is not None:
                return {"results": [], "relations": {"added_entities": [], "deleted_entities": []},
                        "trace_id": trace_id, "status": "awaiting_review", "pending_operations": pending}
        result = dict((out or {}).get("result") or {})
        result.setdefault("results", [])
        result.setdefault("trace_id", trace_id)
        return result

    @staticmethod
    def _pending(interrupts: list, snapshot) -> list | None:
        for itr in interrupts or []:
            value = getattr(itr, "value", itr)
            if isinstance(value, dict) and "operations" in value:
                return value["operations"]
            if isinstance(value, list):
                return value
        if snapshot is not None:
            for task in getattr(snapshot, "tasks", ()) or ():
                for itr in getattr(task, "interrupts", ()) or ():
                    value = getattr(itr, "value", itr)
                    if isinstance(value, dict) and "operations" in value:
                        return value["operations"]
                    if isinstance(value, list):
                        return value
            if getattr(snapshot, "next", None):
                return list((snapshot.values or {}).get("operations") or [])
        return None

    # --- direct store operations (all synchronous) --------------------------------------------------

    def get(self, memory_id, scope: Scope | None = None) -> dict:
        return self.services.sql.get_memory(_check_id(memory_id), scope=scope)

    def get_all(self, user_id, agent_id, run_id, limit, filters) -> dict:
        scope = _scope(user_id, agent_id, run_id)
        limit = _check_limit(limit) or 100
        if not filters:
            return {"results": self.services.sql.list_memories(scope, limit=limit)}
        from memoryx.filters import matches, parse_filters

        node = parse_filters(filters)
        out: list[dict] = []
        offset = 0
        while len(out) < limit:
            page = self.services.sql.list_memories(scope, limit=_PAGE, offset=offset)
            out.extend(m for m in page if matches(node, m))
            if len(page) < _PAGE:
                break
            offset += _PAGE
        return {"results": out[:limit]}

    def update(self, memory_id, text, metadata, scope: Scope | None = None, actor: str = "api") -> dict:
        memory_id = _check_id(memory_id)
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("text must be a non-empty string; to remove a memory use delete().")
        if len(text) > self.settings.max_message_chars:
            raise InvalidInputError(f"text is {len(text)} characters; the limit is MEMORYX_MAX_MESSAGE_CHARS={self.settings.max_message_chars}.")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}.")
        sql = self.services.sql
        current = sql.get_memory(memory_id, scope=scope)
        trace_id = str(uuid.uuid4())
        with sql.scope_lock(_scope(current.get("user_id"), current.get("agent_id"), current.get("run_id"))):
            row = sql.update_memory(memory_id, text=text.strip(), metadata=metadata, trace_id=trace_id, actor=actor)
        self.services.projector.sync_memories([memory_id])
        return {"message": "Memory updated successfully!", "id": memory_id, "memory": row.get("memory"),
                "previous_memory": current.get("memory"), "trace_id": trace_id}

    def delete(self, memory_id, scope: Scope | None = None, actor: str = "api", trace_id: str | None = None) -> dict:
        memory_id = _check_id(memory_id)
        sql = self.services.sql
        current = sql.get_memory(memory_id, scope=scope)
        trace_id = trace_id or str(uuid.uuid4())
        with sql.scope_lock(_scope(current.get("user_id"), current.get("agent_id"), current.get("run_id"))):
            self._delete_locked(memory_id, trace_id, actor)
        return {"message": "Memory deleted successfully!", "id": memory_id, "trace_id": trace_id}

    def _delete_locked(self, memory_id: str, trace_id: str, actor: str) -> None:
        self.services.sql.delete_memory(memory_id, trace_id=trace_id, actor=actor)
        self.services.projector.sync_memories([memory_id])
        self._cascade_graph(memory_id, trace_id)

    def _cascade_graph(self, memory_id: str, trace_id: str) -> None:
        """Invalidate the relations the deleted memory supported and drop entities left without any."""
        from memoryx.nodes.graph_conflicts import cascade_memory_delete

        cascade_memory_delete(self.services, [memory_id], trace_id=trace_id)

    def _clear_scope_graph(self, scope: Scope, trace_id: str) -> None:
        """What is left of the scope's knowledge graph once its memories are gone (relations that no
        memory backs, their entities)."""
        sql = self.services.sql
        valid = [r for r in sql.list_relations(scope) if r.get("valid", True)]
        if valid:
            self.services.projector.sync_relations(sql.invalidate_relations([r["id"] for r in valid], trace_id=trace_id))
        entity_ids = [e["id"] for e in sql.list_entities(scope)]
        orphans = [e["id"] for e in sql.orphan_entities(entity_ids)] if entity_ids else []
        if orphans:
            sql.delete_entities(orphans)
            self.services.projector.sync_entities(orphans)

    def delete_all(self, user_id, agent_id, run_id, actor: str = "api") -> dict:
        scope = _scope(user_id, agent_id, run_id)
        sql = self.services.sql
        trace_id = str(uuid.uuid4())
        deleted = 0
        with sql.scope_lock(scope):
            while True:
                page = sql.list_memories(scope, limit=_PAGE, offset=0)
                if not page:
                    break
                for row in page:
                    self._delete_locked(row["id"], trace_id, actor)
                    deleted += 1
            self._clear_scope_graph(scope, trace_id)
        return {"message": "Memories deleted successfully!", "deleted": deleted, "trace_id": trace_id}

    def history(self, memory_id, scope: Scope | None = None) -> list[dict]:
        memory_id = _check_id(memory_id)
        self.services.sql.get_memory(memory_id, scope=scope, include_deleted=True)
        return self.services.sql.history(memory_id)

    def reset(self) -> None:
        s = self.services
        s.sql.reset()
        s.vectors.reset()
        if s.graph is not None:
            s.graph.reset()

    def count(self, user_id=None, agent_id=None, run_id=None) -> int:
        return self.services.sql.count_memories(_optional_scope(user_id, agent_id, run_id))

    def get_context(self, query, user_id, agent_id, run_id, max_tokens, limit, search_result: dict) -> dict:
        from memoryx.context_block import build_context

        return build_context(search_result, max_tokens=max_tokens)

    # --- judgments ----------------------------------------------------------------------------------

    def judgment(self, trace_id, scope: Scope | None = None) -> dict:
        row = self.services.sql.get_judgment(_check_id(trace_id, "trace_id"))
        if scope is not None and not scope.contains(row):
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with `memoryx judgments list`.")
        return row

    def list_judgments(self, user_id, agent_id, run_id, limit, offset) -> list[dict]:
        return self.services.sql.list_judgments(_optional_scope(user_id, agent_id, run_id),
                                                limit=_check_limit(limit) or 50, offset=offset or 0)

    def verify(self, trace_id, result, notes) -> dict:
        trace_id = _check_id(trace_id, "trace_id")
        if not isinstance(result, str) or result.upper() not in _VERDICTS:
            raise InvalidInputError(f"result must be one of {', '.join(_VERDICTS)}, got {result!r}.")
        return self.services.sql.verify_judgment(trace_id, result.upper(), notes)

    def judgment_stats(self, user_id, agent_id, run_id) -> dict:
        return self.services.sql.judgment_stats(_optional_scope(user_id, agent_id, run_id))

    def reindex(self, scope: Scope | None) -> dict:
        return self.services.projector.reindex(scope)

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        saver, self._checkpointer = self._checkpointer, None
        if saver is not None:
            module = _checkpointing_module()
            with contextlib.suppress(Exception):
                if module is not None and hasattr(module, "close_checkpointer"):
                    module.close_checkpointer(saver)
                elif getattr(saver, "conn", None) is not None:
                    saver.conn.close()
        if self._owns_services:
            self.services.close()


def _scope_arg(scope: Scope | dict | None, user_id=None, agent_id=None, run_id=None) -> Scope | None:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, dict):
        return _scope(**{k: scope.get(k) for k in ("user_id", "agent_id", "run_id")})
    if scope is not None:
        raise ScopeError(f"scope must be a Scope or a dict of user_id/agent_id/run_id, got {type(scope).__name__}")
    return _optional_scope(user_id, agent_id, run_id)


# --------------------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------------------


class _MemoryFront:
    """What Memory and AsyncMemory share: construction from settings/config and access to the core."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, **overrides: Any):
        self._core = _Core(settings, llm=llm, extraction_llm=extraction_llm, judgment_llm=judgment_llm,
                           graph_llm=graph_llm, embeddings=embeddings, services=services, **overrides)

    @classmethod
    def from_config(cls, config: dict, **kwargs: Any):
        return cls(settings_from_config(config), **kwargs)

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def services(self):
        return self._core.services


class Memory(_MemoryFront):
    """Long-term memory, mem0-compatible. See the module docstring.

    Args:
        settings: a `Settings`, a config dict (flat settings or mem0 style), or None for MEMORYX_* env.
        llm: a LangChain chat model used for every role (or per role: extraction_llm, judgment_llm, graph_llm).
        embeddings: a LangChain `Embeddings`.
        services: already built `memoryx.services.Services` to share (not closed by `close()`).
        **overrides: individual settings fields, e.g. `data_dir="/tmp/mx"`, `review=True`.
    """

    # --- graphs -------------------------------------------------------------------------------------

    def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
            metadata: dict | None = None, infer: bool = True, trace_id: str | None = None,
            review: bool | None = None) -> dict:
        """Remember what matters in `messages` (a string or a list of {"role", "content"} dicts).

        Returns `{"results": [{"id", "memory", "event", "previous_memory"?}], "relations": {...}, "trace_id"}`.
        With review on (settings.review or review=True) nothing is written yet: the result has
        `"status": "awaiting_review"` and `"pending_operations"`; approve or edit them with `resume_add`.
        """
        core = self._core
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id)
        graph = core.add_graph()
        core.check_review(graph, review)
        out = graph.invoke(inp, config, context=core.context(review=review))
        return core.finish_add(out, inp["trace_id"], lambda: self._snapshot(graph, config))

    def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        """Continue an add run paused for review. `operations`: the approved (possibly edited) list; None
        approves the pending ones as they are, [] rejects them all."""
        from langgraph.types import Command

        core = self._core
        graph = core.add_graph()
        config = core.run_config(_check_id(trace_id, "trace_id"), "memoryx.add.resume")
        snapshot = self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        out = graph.invoke(Command(resume=resume), config, context=core.context())
        return core.finish_add(out, trace_id, lambda: self._snapshot(graph, config))

    @staticmethod
    def _snapshot(graph, config):
        try:
            return graph.get_state(config)
        except ValueError:  # no checkpointer
            return None

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict | None = None,
               threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
               relation_types: list[str] | None = None, include_invalid: bool | None = None) -> dict:
        """Memories relevant to `query`, best first: `{"results": [{"id", "memory", "score", ...}], "relations": [...]}`."""
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid})
        out = core.search_graph().invoke(inp, {"run_name": "memoryx.search"}, context=core.context())
        return dict(out.get("result") or {"results": [], "relations": []})

    def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None, max_tokens: int = 1000, limit: int = 20) -> dict:
        """A prompt-ready block of the memories relevant to `query`, within `max_tokens`."""
        found = self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)
        return self._core.get_context(query, user_id, agent_id, run_id, max_tokens, limit, found)

    # --- records ------------------------------------------------------------------------------------

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None) -> dict:
        """One memory by id. With a scope, a memory outside it is reported as not found."""
        return self._core.get(memory_id, _optional_scope(user_id, agent_id, run_id))

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                limit: int = 100, filters: dict | None = None) -> dict:
        """`{"results": [...]}`: the scope's memories, newest first."""
        return self._core.get_all(user_id, agent_id, run_id, limit, filters)

    def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        return self._core.update(memory_id, text, metadata)

    def delete(self, memory_id: str) -> dict:
        return self._core.delete(memory_id)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict:
        return self._core.delete_all(user_id, agent_id, run_id)

    def history(self, memory_id: str) -> list[dict]:
        """Events of one memory, oldest first: {"event", "old_memory", "new_memory", "trace_id", "created_at", ...}."""
        return self._core.history(memory_id)

    def reset(self) -> None:
        """Delete every memory, entity, relation, judgment and history row of every scope."""
        self._core.reset()

    # --- judgments ----------------------------------------------------------------------------------

    def judgments(self, trace_id: str) -> dict:
        return self._core.judgment(trace_id)

    def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       limit: int = 50, offset: int = 0) -> list[dict]:
        return self._core.list_judgments(user_id, agent_id, run_id, limit, offset)

    def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return self._core.verify(trace_id, result, notes)

    def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                       run_id: str | None = None) -> dict:
        return self._core.judgment_stats(user_id, agent_id, run_id)

    def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                agent_id: str | None = None, run_id: str | None = None) -> dict:
        """Rebuild the vector and graph projections of a scope (all scopes when None) from SQL."""
        return self._core.reindex(_scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the stores; stops the embedded graph server this instance started."""
        self._core.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --------------------------------------------------------------------------------------------------------
# AsyncMemory
# --------------------------------------------------------------------------------------------------------


class AsyncMemory(_MemoryFront):
    """`Memory` for asyncio. Graphs run natively with `ainvoke`; store calls run in worker threads.

    Construct it directly (the stores open synchronously, once) or with `await AsyncMemory.create(...)`
    to keep the event loop free while the embedded stores start.
    """

    def __init__(self, settings: Settings | dict | None = None, **kwargs: Any):
        super().__init__(settings, **kwargs)
        self._agraph = None
        self._asaver = None
        self._asaver_close = None
        self._alock: asyncio.Lock | None = None

    @classmethod
    async def create(cls, settings: Settings | dict | None = None, **kwargs: Any) -> "AsyncMemory":
        return await asyncio.to_thread(cls, settings, **kwargs)

    async def _add_graph(self):
        """The add graph compiled with an async checkpointer when one is configured."""
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            if self._agraph is None:
                self._agraph = await self._compile_async()
        return self._agraph

    async def _compile_async(self):
        from memoryx.graphs import add as add_module

        checkpointing = _checkpointing_module()
        maker = getattr(checkpointing, "make_async_checkpointer", None) if checkpointing else None
        if maker is not None:
            saver = maker(self._core.settings)
            if asyncio.iscoroutine(saver):
                saver = await saver
            closer = getattr(checkpointing, "aclose_checkpointer", None)
            self._asaver_close = (lambda: closer(saver)) if closer else None
        else:
            saver, self._asaver_close = await _async_checkpointer(self._core.settings)
        self._asaver = saver
        compile_fn = getattr(add_module, "compile_add_graph", None)
        return compile_fn(saver) if compile_fn else add_module.builder.compile(checkpointer=saver)

    # --- graphs -------------------------------------------------------------------------------------

    async def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, metadata: dict | None = None, infer: bool = True,
                  trace_id: str | None = None, review: bool | None = None) -> dict:
        core = self._core
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id)
        graph = await self._add_graph()
        core.check_review(graph, review)
        out = await graph.ainvoke(inp, config, context=core.context(review=review))
        snapshot = await self._snapshot(graph, config)
        return core.finish_add(out, inp["trace_id"], lambda: snapshot)

    async def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        from langgraph.types import Command

        core = self._core
        graph = await self._add_graph()
        config = core.run_config(_check_id(trace_id, "trace_id"), "memoryx.add.resume")
        snapshot = await self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        out = await graph.ainvoke(Command(resume=resume), config, context=core.context())
        snapshot = await self._snapshot(graph, config)
        return core.finish_add(out, trace_id, lambda: snapshot)

    @staticmethod
    async def _snapshot(graph, config):
        try:
            return await graph.aget_state(config)
        except (ValueError, NotImplementedError):
            try:
                return await asyncio.to_thread(graph.get_state, config)
            except ValueError:
                return None

    async def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, limit: int = 10, filters: dict | None = None,
                     threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
                     relation_types: list[str] | None = None, include_invalid: bool | None = None) -> dict:
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid})
        out = await core.search_graph().ainvoke(inp, {"run_name": "memoryx.search"}, context=core.context())
        return dict(out.get("result") or {"results": [], "relations": []})

    async def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                          run_id: str | None = None, max_tokens: int = 1000, limit: int = 20) -> dict:
        found = await self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)
        return await asyncio.to_thread(self._core.get_context, query, user_id, agent_id, run_id, max_tokens,
                                       limit, found)

    # --- records ------------------------------------------------------------------------------------

    async def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.get, memory_id, _optional_scope(user_id, agent_id, run_id))

    async def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      limit: int = 100, filters: dict | None = None) -> dict:
        return await asyncio.to_thread(self._core.get_all, user_id, agent_id, run_id, limit, filters)

    async def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        return await asyncio.to_thread(self._core.update, memory_id, text, metadata)

    async def delete(self, memory_id: str) -> dict:
        return await asyncio.to_thread(self._core.delete, memory_id)

    async def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.delete_all, user_id, agent_id, run_id)

    async def history(self, memory_id: str) -> list[dict]:
        return await asyncio.to_thread(self._core.history, memory_id)

    async def reset(self) -> None:
        await asyncio.to_thread(self._core.reset)

    async def judgments(self, trace_id: str) -> dict:
        return await asyncio.to_thread(self._core.judgment, trace_id)

    async def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
        return await asyncio.to_thread(self._core.list_judgments, user_id, agent_id, run_id, limit, offset)

    async def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.verify, trace_id, result, notes)

    async def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.judgment_stats, user_id, agent_id, run_id)

    async def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                      agent_id: str | None = None, run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.reindex, _scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    async def close(self) -> None:
        closer, self._asaver_close, self._asaver = self._asaver_close, None, None
        if closer is not None:
            with contextlib.suppress(Exception):
                res = closer()
                if asyncio.iscoroutine(res):
                    await res
        await asyncio.to_thread(self._core.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
