"""Running the consolidate graph for the front ends (Memory / AsyncMemory, the CLI, REST, the schedule).

The graph is compiled once per MemoryCore with that core's checkpointer (the add graph's saver), and each
pass's thread id is its trace id, as for add runs; a finished pass's checkpoints are deleted unless
settings.keep_finished_checkpoints. `restore` brings an archived or merged memory back.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.graphs.consolidate import compile_consolidate_graph
from memoryx.knowledge.episode_memories import flush_episodes
from memoryx.knowledge.importance import importance_at
from memoryx.lifecycle.layers import WORKING, close_run, layer_of
from memoryx.lifecycle.sessions import END_RUN, mark_ended, publish_end, run_is_open
from memoryx.runtime.checkpointing import delete_threads

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.api.memory_core import MemoryCore

RUN_NAME = "memoryx_consolidate"
_graphs: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_graphs_lock = threading.Lock()


def consolidate_graph(core: "MemoryCore"):
    with _graphs_lock:
        graph = _graphs.get(core)
        if graph is None:
            graph = _graphs[core] = compile_consolidate_graph(core.add_graph().checkpointer)
        return graph


def consolidation_input(user_id=None, agent_id=None, run_id=None, now: Any = None, dry_run: bool = False,
                        trace_id: str | None = None, group_id=None) -> tuple[dict, str]:
    Scope(user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)  # ScopeError naming the fields
    if not isinstance(dry_run, bool):
        raise InvalidInputError(f"dry_run must be true or false, got {dry_run!r}")
    if now is not None and not isinstance(now, (int, float, str)) and not hasattr(now, "timestamp"):
        raise InvalidInputError(f"now must be epoch seconds, an ISO time or a datetime, got {now!r}")
    if hasattr(now, "timestamp"):
        now = now.timestamp()
    trace_id = trace_id or str(uuid.uuid4())
    inp = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "now": now, "dry_run": dry_run,
           "trace_id": trace_id, **({"group_id": group_id} if group_id else {})}
    return inp, trace_id


def run_config(trace_id: str, user_id=None, agent_id=None, run_id=None) -> dict:
    metadata = {k: v for k, v in {"trace_id": trace_id, "user_id": user_id, "agent_id": agent_id,
                                  "run_id": run_id}.items() if v is not None}
    tags = [f"trace_id:{trace_id}"] + ([f"user_id:{user_id}"] if user_id else [])
    return {"configurable": {"thread_id": trace_id}, "run_name": RUN_NAME, "tags": tags, "metadata": metadata}


def consolidate(core: "MemoryCore", user_id=None, agent_id=None, run_id=None, now: Any = None,
                dry_run: bool = False, group_id=None) -> dict:
    """One consolidation pass over a scope; returns its report (memoryx.graphs.consolidate)."""
    inp, trace_id = consolidation_input(user_id, agent_id, run_id, now, dry_run, group_id=group_id)
    graph = consolidate_graph(core)
    config = {**run_config(trace_id, user_id, agent_id, run_id), **({"callbacks": core.callbacks} if core.callbacks else {})}
    out = graph.invoke(inp, config, context=core.context())
    if graph.checkpointer is not None and (dry_run or not core.settings.keep_finished_checkpoints):
        delete_threads(graph.checkpointer, [trace_id])
    return dict(out["report"])


def restore(core: "MemoryCore", memory_id: str, scope: Scope | None = None) -> dict:
    """An archived, merged or summarized memory back to active, under the scope lock, projected."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInputError(f"memory_id must be a non-empty string, got {memory_id!r}")
    sql = core.services.sql
    current = sql.get_memory(memory_id.strip(), scope=scope)
    trace_id = str(uuid.uuid4())
    owner = Scope(user_id=current.get("user_id"), agent_id=current.get("agent_id"), run_id=current.get("run_id"),
                  group_id=current.get("group_id"))
    with sql.scope_lock(owner):
        row = sql.restore_memory(current["id"], trace_id=trace_id)
        core.services.projector.sync_memories([row["id"]])
    return {"message": "Memory restored", "id": row["id"], "status": row["status"], "trace_id": trace_id}


def end_run(core: "MemoryCore", run_id: str, user_id=None, agent_id=None, group_id=None) -> dict:
    """Close a run (working memory): its working memories stay as short-term when they mattered
    (memoryx.lifecycle.layers.close_run), the rest are archived; under the scope lock, projected, logged as
    a judgment (operation_type END_RUN) that `rollback` undoes. Publishes `session.end` once per ended run
    (memoryx.lifecycle.sessions)."""

    if not isinstance(run_id, str) or not run_id.strip():
        raise InvalidInputError(f"run_id must be a non-empty string, got {run_id!r}")
    scope = Scope(user_id=user_id, agent_id=agent_id, run_id=run_id.strip(), group_id=group_id)
    sql, s = core.services.sql, core.settings
    trace_id = str(uuid.uuid4())
    episodes_closed: list[str] = []
    if s.episodes or s.participant_episodes:  # the run's conversation is over: its open episode gets its final narrative now
        episodes_closed = flush_episodes(core.services, scope, trace_id=trace_id)
    with sql.scope_lock(scope):
        # importance as of now (recency read from each memory's event time), as a consolidation pass reads it
        rows = [{**r, "importance": importance_at(r)} for r in sql.list_memories(scope, limit=None)
                if r.get("run_id") == scope.run_id]
        was_open = bool(episodes_closed) or run_is_open(sql, scope, [r for r in rows if layer_of(r) == WORKING
                                                                      and r["status"] not in ("merged", "archived")])
        kept, archived = close_run(rows, keep_importance=s.working_keep_importance, why=f"run {scope.run_id} ended")
        ids = {x["id"] for x in kept + archived}
        applied = sql.apply_consolidation(scope, trace_id=trace_id, seen={r["id"]: r["updated_at"] for r in rows if r["id"] in ids},
                                          merges=[], summaries=[], archives=archived, promotions=kept, actor="end_run")
        core.services.projector.sync_memories(applied["changed"])
    if applied["changed"]:
        sql.save_judgment(trace_id, scope=scope, operation_type="END_RUN", input_content=f"end of run {scope.run_id}",
                          parsed_operations={"promotions": kept, "archives": archived},
                          reasoning=f"{len(kept)} working memories kept as short-term, {len(archived)} archived",
                          executed_operations={"changed": applied["changed"], "skipped": applied["skipped"],
                                               "previous_status": applied["previous_status"],
                                               "restore": applied["restore"]},
                          execution_success=True, status="done")
    # the run's working memory (its last turns, Memory.working_memory) is cleared: an end mark among its inputs
    mark_ended(sql, scope, trace_id)
    skipped = set(applied["skipped"])
    out = {"trace_id": trace_id, "run_id": scope.run_id, "kept": [x["id"] for x in kept if x["id"] not in skipped],
           "archived": [x["id"] for x in archived if x["id"] not in skipped], "episodes_closed": episodes_closed}
    if was_open:  # an ended run ends once: a second end_run publishes nothing
        publish_end(sql, scope, trace_id=trace_id, reason=END_RUN, kept=out["kept"], archived=out["archived"])
    return out


def scopes_to_consolidate(sql) -> list[Scope]:
    """Every owner scope with staged memories or any memories at all (the schedule walks them)."""
    return sql.memory_owner_scopes()
