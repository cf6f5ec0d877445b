"""What `Memory` and `AsyncMemory` share: settings, the stores and graphs, input checks and the direct
store operations. Everything here is synchronous; the two front ends (memory.py, async_memory.py) decide
how it runs.

`add` and `search` run the LangGraph workflows (memoryx.graphs.add / memoryx.graphs.search) with the live
stores injected through `context=Context(services=...)`; the add graph is compiled with the configured
checkpointer and every run's thread id is its trace id. The other operations go straight to the system of
record (SQL), then bring the projections (vectors, graph) in step; the graph side of update / delete /
delete_all is memoryx.knowledge.memory_graph's, as in the add graph.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from typing import Any

from memoryx.api.context_reads import ContextReads
from memoryx.api.inputs import check_id, optional_scope, resolve_settings, scope_of_ids
from memoryx.api.judgment_reads import JudgmentReads
from memoryx.api.kinds import check_kind, check_reason, record_forget
from memoryx.api.records import list_records
from memoryx.api.run_recovery import recover_add_runs
from memoryx.api.searching import SearchCalls, empty_result
from memoryx.core.scope import Scope
from memoryx.errors import ConcurrencyError, InvalidInputError, NotFoundError, ScopeError
from memoryx.graphs.add import add_run_config, compile_add_graph
from memoryx.graphs.search import graph
from memoryx.graphs.search_steps import run_search
from memoryx.ingest.add_options import option_metadata, prepare_add
from memoryx.ingest.messages import check_metadata_size
from memoryx.ingest.speakers import with_participants
from memoryx.knowledge import memory_graph
from memoryx.lifecycle import feedback as fb
from memoryx.lifecycle.explain import explain as explain_memory
from memoryx.lifecycle.purge import purge_scope
from memoryx.lifecycle.retention import prune
from memoryx.lifecycle.rollback import rollback_trace
from memoryx.models.factory import make_chat_model
from memoryx.runtime.checkpointing import close_checkpointer, make_checkpointer
from memoryx.runtime.services import build_services
from memoryx.runtime.tracing import langsmith_tracing, tracing_callbacks
from memoryx.search.access import flush_access
from memoryx.settings import Settings

log = logging.getLogger(__name__)

ADD_RUN_NAME = "memoryx_add"
SEARCH_RUN_NAME = "memoryx_search"

_PAGE = 500




def _interrupts_of(out: Any) -> list:
    if isinstance(out, dict):
        return list(out.get("__interrupt__") or [])
    return []


class MemoryCore(ContextReads, JudgmentReads, SearchCalls):
    """Everything both front-ends share. All methods are synchronous."""

    def __init__(self, settings: Settings | dict | None = None, *, llm=None, extraction_llm=None, judgment_llm=None,
                 graph_llm=None, embeddings=None, services=None, vision_llm=None, **overrides: Any):
        self.settings = resolve_settings(settings, overrides)
        self._vision_llm = vision_llm  # reads image parts (memoryx.ingest.multimodal); built from settings on first use
        if services is None:
            services = build_services(self.settings, llm=llm, extraction_llm=extraction_llm,
                                      judgment_llm=judgment_llm, graph_llm=graph_llm, embeddings=embeddings)
            self._owns_services = True
        else:
            self._owns_services = False
        self.services = services
        self.callbacks = tracing_callbacks(self.settings)  # OpenTelemetry spans when configured, else none
        self._lock = threading.Lock()
        self._add_graph = None
        self._checkpointer = None
        self._closed = False
        self.scheduler = None  # in-process consolidation (api.background), set by the front end
        # add runs cut short by a crash: resumed when this Memory opened the stores itself
        self.recovered_runs: dict = {}
        self.pruned: dict = {}  # what retention deleted at start
        if self._owns_services:
            self.recovered_runs = recover_add_runs(self)
            self.pruned = self._prune_at_start()

    # --- graphs -------------------------------------------------------------------------------------

    def add_graph(self):
        """The add graph compiled with the configured checkpointer (built once, on first use)."""
        with self._lock:
            if self._add_graph is None:
                self._checkpointer = make_checkpointer(self.settings)
                self._add_graph = compile_add_graph(self._checkpointer)
            return self._add_graph

    @staticmethod
    def search_graph():
        return graph

    def add_input(self, messages, user_id, agent_id, run_id, metadata, infer, trace_id, *,
                  expiration_date=None, immutable: bool = False, agent_memory: str | None = None,
                  instructions: dict | None = None, group_id: str | None = None,
                  participants: dict | None = None) -> tuple[dict, dict]:
        scope_of_ids(user_id, agent_id, run_id, group_id)  # fail fast with a ScopeError naming the fields
        messages = with_participants(messages, participants, group_id)
        if messages is None:
            raise InvalidInputError("messages is missing; pass a string or a list of {'role', 'content'} dicts.")
        if isinstance(messages, dict) or (hasattr(messages, "content") and hasattr(messages, "type")):
            messages = [messages]  # one {"role", "content"} dict or one LangChain message
        if not isinstance(messages, (str, list)):
            raise InvalidInputError(f"messages must be a string or a list of {{'role', 'content'}} dicts, got {type(messages).__name__}.")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}.")
        metadata = option_metadata(metadata, expiration_date, immutable)  # mem0's options ride in metadata
        if trace_id is not None:
            self._check_trace_id(trace_id, scope_of_ids(user_id, agent_id, run_id, group_id))
        trace_id = trace_id or str(uuid.uuid4())
        inp = {"messages": messages, "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
               "metadata": metadata, "infer": bool(infer), "trace_id": trace_id}
        if group_id is not None:  # a group chat
            inp["group_id"] = group_id
        if agent_memory is not None:  # "tenant" | "global"; validate_input checks it (default: the setting)
            inp["agent_memory"] = agent_memory
        if instructions:  # per-call custom instructions (memoryx.ingest.add_options.instruction_input)
            inp["instructions"] = instructions
        return inp, self.run_config(trace_id, ADD_RUN_NAME, user_id, agent_id, run_id)

    def vision_model(self):
        """The model that reads image parts, or None: not configured (the offline model reads no image)."""
        spec = self.settings.vision_llm
        if self._vision_llm is None and spec and spec.strip().lower() != "offline":
            self._vision_llm = make_chat_model(spec, self.settings, "extraction")
        return self._vision_llm

    def prepare_add(self, messages, metadata, infer, **options) -> tuple:
        """(messages, metadata, infer, instructions, warnings) after mem0's add options that change what is
        added: images read, a procedural run summarised, custom instructions checked (add_options)."""

        return prepare_add(self.services, self.vision_model(), messages, metadata, infer, **options)

    def _check_trace_id(self, trace_id: Any, scope: Scope) -> None:
        """A caller-chosen trace id may replay a run of the same scope (idempotent ids), never reach another
        scope's run: its judgment record and checkpoint thread are keyed by that id."""
        trace_id = check_id(trace_id, "trace_id")
        try:
            row = self.services.sql.get_judgment(trace_id)
        except NotFoundError:
            return
        keys = ("user_id", "agent_id", "run_id", "group_id")
        if any(row.get(k) for k in keys) and {k: row.get(k) for k in keys} != {k: getattr(scope, k) for k in keys}:
            raise ScopeError(f"trace_id {trace_id!r} is another scope's run; pass no trace_id (MemoryX generates one).")

    def finished_before(self, trace_id: str, given: str | None) -> bool:
        """Whether a caller-chosen trace id names a run that already wrote: if its replay fails, the undo
        must not remove what the earlier run wrote (one read, only when the caller chose the id)."""
        if given is None:
            return False
        sql = self.services.sql
        return sql.trace_statuses([trace_id]).get(trace_id) == "done" or bool(sql.trace_history(trace_id))

    @contextlib.contextmanager
    def running(self, trace_id: str):
        """Held around an add run: the run's lock (stores/sql `run_lock`) tells other workers it is alive, so
        their recovery never resumes it beside this one."""
        with self.services.sql.run_lock(trace_id) as mine:
            if not mine:
                raise ConcurrencyError(f"Add run {trace_id!r} is running in another worker; wait for it, or pass no "
                                       "trace_id (MemoryX generates one).")
            yield

    def check_review(self, graph, review: bool | None) -> None:
        if (self.settings.review if review is None else review) and graph.checkpointer is None:
            raise InvalidInputError("Review pauses the add run in a checkpoint, but MEMORYX_CHECKPOINTER=none; "
                                    "set it to auto, sqlite, postgres or memory.")

    def run_config(self, trace_id: str, name: str, user_id=None, agent_id=None, run_id=None) -> dict:
        config = add_run_config(trace_id, user_id=user_id, agent_id=agent_id, run_id=run_id, services=self.services,
                                run_name=name)
        return {**config, "callbacks": self.callbacks} if self.callbacks else config

    def search_config(self) -> dict:
        return {"run_name": SEARCH_RUN_NAME, **({"callbacks": self.callbacks} if self.callbacks else {})}

    def search_traced(self) -> bool:
        """A search runs as the LangGraph graph when someone watches it (OpenTelemetry or LangSmith): it then
        has its run, step and model spans. Otherwise its steps are called directly (`run_search`), which
        spares the graph's per-step bookkeeping, several ms of a search that takes ten."""
        return bool(self.callbacks) or langsmith_tracing()

    def search_result(self, inp: dict) -> dict:
        """The search's result for its checked input (`search_input`), `memory.accessed` published."""
        if self.search_traced():
            out = graph.invoke(inp, self.search_config(), context=self.context())
        else:
            out = run_search(inp, self.context())
        return self.searched(inp, dict(out.get("result") or empty_result()))

    def finish_add(self, out: Any, trace_id: str, snapshot_fn) -> dict:
        interrupts = _interrupts_of(out)
        if interrupts or (out.get("result") is None if isinstance(out, dict) else True):
            snapshot = snapshot_fn()
            pending = self._pending(interrupts, snapshot)
            if pending is not None:
                paused = {"results": [], "relations": {"added_entities": [], "deleted_entities": []},
                          "trace_id": trace_id, "status": "awaiting_review", "pending_operations": pending}
                return paused
        result = dict((out or {}).get("result") or {})
        result.setdefault("results", [])
        result.setdefault("trace_id", trace_id)  # no session.end: a conversation is many adds (lifecycle.sessions)
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
        return self.services.sql.get_memory(check_id(memory_id), scope=scope)

    def get_all(self, user_id, agent_id, run_id, limit, filters, group_id=None, include_archived=False) -> dict:
        return list_records(self.services.sql, scope_of_ids(user_id, agent_id, run_id, group_id), limit, filters,
                            include_archived)

    def update(self, memory_id, text, metadata, scope: Scope | None = None, actor: str = "api") -> dict:
        memory_id = check_id(memory_id)
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("text must be a non-empty string; to remove a memory use delete().")
        if len(text) > self.settings.max_message_chars:
            raise InvalidInputError(f"text is {len(text)} characters; the limit is MEMORYX_MAX_MESSAGE_CHARS={self.settings.max_message_chars}.")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}.")
        if metadata is not None:
            check_metadata_size(metadata, self.settings.max_metadata_bytes)  # strict JSON, bounded (as add)
            metadata = option_metadata(metadata)  # expiration_date set or cleared (None) keeps expires_ts in step
        sql = self.services.sql
        current = sql.get_memory(memory_id, scope=scope)
        trace_id = str(uuid.uuid4())
        text = text.strip()
        # the model call first, outside the lock (as in the add graph): a failing call writes nothing
        extracted = self._relations_of({**current, "memory": text}, trace_id)
        with sql.scope_lock(scope_of_ids(current.get("user_id"), current.get("agent_id"), current.get("run_id"),
                                        current.get("group_id"))):
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

    def delete(self, memory_id, scope: Scope | None = None, actor: str = "api", trace_id: str | None = None,
               reason: str | None = None) -> dict:
        memory_id = check_id(memory_id)
        reason = check_reason(reason)
        sql = self.services.sql
        current = sql.get_memory(memory_id, scope=scope)
        trace_id = trace_id or str(uuid.uuid4())
        owner = scope_of_ids(current.get("user_id"), current.get("agent_id"), current.get("run_id"),
                             current.get("group_id"))
        with sql.scope_lock(owner):
            self._delete_locked(memory_id, trace_id, actor)
        if reason:  # why it was forgotten, in the judgment log beside the add runs (review page, explain, audit)
            record_forget(sql, trace_id, owner, current, reason, actor)
        return {"message": "Memory deleted successfully!", "id": memory_id, "trace_id": trace_id}

    def classify(self, memory_id, memory_type: str | None = None, importance: float | None = None,
                 scope: Scope | None = None, actor: str = "api") -> dict:
        """Set a memory's type and/or importance as the caller judged them (a tool's memory_add), recorded as an
        UPDATE of the same text; the importance factors say who gave it."""
        memory_id = check_id(memory_id)
        memory_type, importance = check_kind(memory_type, importance)
        sql = self.services.sql
        current = sql.get_memory(memory_id, scope=scope)
        factors = {**(current.get("importance_factors") or {}), "given_by": actor} if importance is not None else None
        with sql.scope_lock(scope_of_ids(current.get("user_id"), current.get("agent_id"), current.get("run_id"),
                                        current.get("group_id"))):
            row = sql.update_memory(memory_id, text=current["memory"], memory_type=memory_type, importance=importance,
                                    importance_factors=factors, actor=actor)
            self.services.projector.sync_memories([memory_id])
        return row

    def _delete_locked(self, memory_id: str, trace_id: str, actor: str) -> None:
        self.services.sql.delete_memory(memory_id, trace_id=trace_id, actor=actor)
        self.services.projector.sync_memories([memory_id])
        memory_graph.cascade_memory_delete(self.services, [memory_id], trace_id=trace_id)

    def delete_all(self, user_id, agent_id, run_id, actor: str = "api", group_id=None) -> dict:
        scope = scope_of_ids(user_id, agent_id, run_id, group_id)
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

    def rollback(self, trace_id, force: bool = False, scope: Scope | None = None, actor: str = "api") -> dict:
        return rollback_trace(self.services, check_id(trace_id, "trace_id"), force=force, actor=actor, scope=scope)

    def on(self, event: str, fn):
        return self.services.sql.events.on(event, fn)

    def explain(self, memory_id, scope: Scope | None = None) -> dict:
        return explain_memory(self.services, check_id(memory_id), scope=scope)

    def history(self, memory_id, scope: Scope | None = None) -> list[dict]:
        memory_id = check_id(memory_id)
        self.services.sql.get_memory(memory_id, scope=scope, include_deleted=True)
        return self.services.sql.history(memory_id)

    def reset(self) -> None:
        s = self.services
        s.sql.reset()
        s.vectors.reset()
        if s.graph is not None:
            s.graph.reset()

    def count(self, user_id=None, agent_id=None, run_id=None, group_id=None) -> int:
        return self.services.sql.count_memories(optional_scope(user_id, agent_id, run_id, group_id))

    # --- feedback and projections -------------------------------------------------------------------

    def feedback(self, memory_id, feedback, reason, scope: Scope | None = None, actor: str = "api") -> dict:
        return fb.give(self.services.sql, check_id(memory_id), feedback, reason, scope=scope, actor=actor)

    def reindex(self, scope: Scope | None) -> dict:
        return self.services.projector.reindex(scope)

    # --- purge and retention (memoryx.lifecycle.purge, memoryx.lifecycle.retention) -------------------------------------

    def checkpointers(self, *extra: Any) -> list:
        """The savers that may hold add runs: this core's (opened if needed) and, for the in-process saver,
        the async front's own (`extra`); an SQL saver of the async front reaches the same file or database."""
        savers = [self.add_graph().checkpointer]
        if self.settings.checkpointer == "memory":
            savers.extend(extra)
        return [s for i, s in enumerate(savers) if s is not None and all(s is not t for t in savers[:i])]

    def purge(self, user_id, agent_id, run_id, *, compact: bool = True, savers: tuple = (), group_id=None) -> dict:
        return purge_scope(self.services, scope_of_ids(user_id, agent_id, run_id, group_id),
                           checkpointers=self.checkpointers(*savers), compact=compact)

    def _prune_at_start(self) -> dict:
        try:
            return self.prune()
        except Exception as exc:  # noqa: BLE001 - retention must not keep the stores from opening
            log.warning("retention at start failed (retried by the next start or `memoryx serve`): %s", exc)
            return {"error": repr(exc)}

    def prune(self, savers: tuple = ()) -> dict:
        return prune(self.services, self.checkpointers(*savers))

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.scheduler is not None:  # no pass may start on stores about to close
            self.scheduler.stop()
        saver, self._checkpointer = self._checkpointer, None
        if saver is not None:
            with contextlib.suppress(Exception):  # closing goes on for the services
                close_checkpointer(saver)

        flush_access(timeout=2.0)  # queued access counts are written (the writer lingers up to 50 ms)
        if self._owns_services:
            self.services.close()
