"""What `Memory` and `AsyncMemory` share: settings, the stores and graphs, input checks and the direct
store operations. Everything here is synchronous; the two front ends (memory.py, async_memory.py) decide
how it runs.

`add` and `search` run the LangGraph workflows (memoryx.graphs.add / memoryx.graphs.search) with the live
stores injected through `context=Context(services=...)`; the add graph is compiled with the configured
checkpointer and every run's thread id is its trace id. The other operations go straight to the system of
record (SQL), then bring the projections (vectors, graph) in step; the graph side of update / delete /
delete_all is memoryx.memory_graph's, as in the add graph.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from typing import Any

from memoryx import memory_graph
from memoryx.checkpointing import close_checkpointer, make_checkpointer
from memoryx.context import Context
from memoryx.errors import InvalidInputError, NotFoundError, ScopeError
from memoryx.mem0_config import settings_from_config
from memoryx.scope import Scope
from memoryx.services import Services, build_services
from memoryx.settings import Settings, get_settings

ADD_RUN_NAME = "memoryx_add"
RESUME_RUN_NAME = "memoryx_add_resume"
SEARCH_RUN_NAME = "memoryx_search"

_PAGE = 500
_VERDICTS = ("CORRECT", "INCORRECT", "PARTIAL")


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


def _interrupts_of(out: Any) -> list:
    if isinstance(out, dict):
        return list(out.get("__interrupt__") or [])
    return []


class MemoryCore:
    """Everything both front-ends share. All methods are synchronous."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, **overrides: Any):
        self.settings = _resolve_settings(settings, overrides)
        if services is None:
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

    def context(self, **overrides: Any) -> Context:
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
                from memoryx.graphs.add import compile_add_graph

                self._checkpointer = make_checkpointer(self.settings)
                self._add_graph = compile_add_graph(self._checkpointer)
            return self._add_graph

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
        return inp, self.run_config(trace_id, ADD_RUN_NAME, user_id, agent_id, run_id)

    def check_review(self, graph, review: bool | None) -> None:
        if (self.settings.review if review is None else review) and graph.checkpointer is None:
            raise InvalidInputError("Review pauses the add run in a checkpoint, but MEMORYX_CHECKPOINTER=none; "
                                    "set it to auto, sqlite, postgres or memory.")

    def run_config(self, trace_id: str, name: str, user_id=None, agent_id=None, run_id=None) -> dict:
        from memoryx.graphs.add import add_run_config

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
        """The operations a paused run waits on: from the run's interrupts, else from its checkpoint."""
        if snapshot is not None:
            interrupts = [*interrupts, *(itr for task in snapshot.tasks for itr in task.interrupts)]
        for itr in interrupts:
            if isinstance(itr.value, dict) and "operations" in itr.value:
                return itr.value["operations"]
            if isinstance(itr.value, list):
                return itr.value
        if snapshot is not None and snapshot.next:
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
        text = text.strip()
        # the model call first, outside the lock (as in the add graph): a failing call writes nothing
        extracted = self._relations_of({**current, "memory": text}, trace_id)
        with sql.scope_lock(_scope(current.get("user_id"), current.get("agent_id"), current.get("run_id"))):
            row = sql.update_memory(memory_id, text=text, metadata=metadata, trace_id=trace_id, actor=actor)
            self.services.projector.sync_memories([memory_id])
            relations = (memory_graph.apply_memory_update(self.services, row, *extracted, trace_id=trace_id)
                         if extracted is not None else memory_graph.empty_changes())
        return {"message": "Memory updated successfully!", "id": memory_id, "memory": row.get("memory"),
                "previous_memory": current.get("memory"), "relations": relations, "trace_id": trace_id}

    def _relations_of(self, memory: dict, trace_id: str) -> tuple[list[dict], list[dict]] | None:
        """What the graph model reads in the memory's new text; None when the memory has no graph (no graph
        backend, or an assistant's own memory, which the add graph keeps out of the user's graph too)."""
        if self.services.graph is None or (memory.get("metadata") or {}).get("owner") == "agent":
            return None
        return memory_graph.extract_memory_relations(self.services, memory, trace_id=trace_id)

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
        memory_graph.cascade_memory_delete(self.services, [memory_id], trace_id=trace_id)

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
            memory_graph.clear_scope(self.services, scope, trace_id=trace_id)
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
            with contextlib.suppress(Exception):  # closing goes on for the services
                close_checkpointer(saver)
        if self._owns_services:
            self.services.close()


def scope_arg(scope: Scope | dict | None, user_id=None, agent_id=None, run_id=None) -> Scope | None:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, dict):
        return _scope(**{k: scope.get(k) for k in ("user_id", "agent_id", "run_id")})
    if scope is not None:
        raise ScopeError(f"scope must be a Scope or a dict of user_id/agent_id/run_id, got {type(scope).__name__}")
    return _optional_scope(user_id, agent_id, run_id)


class MemoryFront:
    """What Memory and AsyncMemory share: construction from settings/config and access to the core."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, **overrides: Any):
        self._core = MemoryCore(settings, llm=llm, extraction_llm=extraction_llm, judgment_llm=judgment_llm,
                           graph_llm=graph_llm, embeddings=embeddings, services=services, **overrides)

    @classmethod
    def from_config(cls, config: dict, **kwargs: Any):
        return cls(settings_from_config(config), **kwargs)

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def services(self) -> Services:
        return self._core.services
