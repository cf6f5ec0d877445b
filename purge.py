"""Purge: remove every trace of a scope from every store, so that deleting really deletes.

`delete_all` soft-deletes memories (history, raw inputs, judgments and checkpoints keep their text, by
design: they explain what happened). `purge_scope` is the other tool, for "forget me": it removes

* SQL: memories, their history, raw inputs, judgments, entities, relations and outbox rows;
* vectors: memory and entity points; graph: entities and their relations;
* LangGraph checkpoints of the scope's add runs (thread id = trace id, found through the SQL rows above
  before they go);

and then compacts what keeps deleted bytes on disk: SQLite VACUUM + WAL truncation (memoryx.db and
checkpoints.db; `secure_delete` is on for both), a rewrite of the embedded Qdrant shards and of FalkorDB's
append-only file. After a purge and close, no file under the data directory holds the scope's text.

Scope rule: every row whose scope lies within the given one, i.e. equals it on each field the given scope
sets (the rule every store uses). `Scope(user_id="alice")` purges alice's rows of every agent and run;
`Scope(user_id="alice", agent_id="bot")` only those with agent bot; `Scope(agent_id="bot")` the agent's rows
of every user. A relation of another scope that touches a purged entity goes with it.

Order: checkpoints, projections, SQL, projections again. The SQL truth goes last, so an interrupted purge
leaves rows that running purge again finds (nothing is left that only a reindex would reveal); the second
projection pass removes what a concurrent outbox replay may have re-projected in between.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Iterable

from memoryx.checkpointing import delete_threads, vacuum_checkpoints
from memoryx.scope import Scope

if TYPE_CHECKING:
    from memoryx.services import Services

log = logging.getLogger(__name__)


def purge_scope(services: "Services", scope: Scope, *, checkpointers: Iterable[Any] = (),
                compact: bool = True) -> dict:
    """Remove every trace of `scope` (see the module docstring). `checkpointers`: the savers that may hold
    the scope's add runs. `compact=False` skips the file compaction (the rows are gone, their bytes may stay
    on disk until the stores rewrite their files on their own). Returns what was removed, per store:

        {"scope": {...}, "sql": {"memories", "history", "raw_inputs", "judgments", "entities", "relations",
         "outbox"}, "vectors": {"memories", "entities"}, "graph": {"entities", "relations"},
         "checkpoints": {"threads"}, "compacted": {"sql", "checkpoints", "vectors", "graph"}, "seconds"}
    """
    started = time.perf_counter()
    sql, vectors, graph = services.sql, services.vectors, services.graph
    savers = [c for c in checkpointers if c is not None]
    with sql.scope_lock(scope):
        trace_ids = sql.scope_trace_ids(scope)
        threads = sum(delete_threads(saver, trace_ids) for saver in savers)
        removed_vectors = {"memories": vectors.count_memories(scope), "entities": vectors.count_entities(scope)}
        removed_graph = graph.counts(scope) if graph is not None else {"entities": 0, "relations": 0}
        _purge_projections(services, scope)
        rows = sql.purge_scope(scope)
        _purge_projections(services, scope, rows)
    report = {
        "scope": scope.as_dict(),
        "sql": rows["counts"],
        "vectors": removed_vectors,
        "graph": {"entities": removed_graph["entities"], "relations": removed_graph["relations"]},
        "checkpoints": {"threads": threads},
        "compacted": compact_stores(services, savers) if compact else {},
    }
    report["seconds"] = round(time.perf_counter() - started, 3)
    log.info("purged %s: %s", scope.key(), {k: report[k] for k in ("sql", "vectors", "graph", "checkpoints")})
    return report


def _purge_projections(services: "Services", scope: Scope, rows: dict | None = None) -> None:
    """Vector points and graph nodes of the scope (by the scope filter, and by id once SQL named them)."""
    services.vectors.delete_scope(scope)
    if rows is not None:
        services.vectors.delete_memories(rows["memory_ids"])
        services.vectors.delete_entities(rows["entity_ids"])
    graph = services.graph
    if graph is not None:
        graph.delete_scope(scope)
        if rows is not None:
            graph.delete_entities(rows["entity_ids"])
            graph.delete_relations(rows["relation_ids"])


def compact_stores(services: "Services", checkpointers: Iterable[Any] = ()) -> dict:
    """Rewrite the files that keep deleted bytes: {store: True when it compacted, False when it has nothing
    under the data directory to compact}."""
    out = {"sql": services.sql.compact(),
           "checkpoints": any([vacuum_checkpoints(saver) for saver in checkpointers]),
           "vectors": services.vectors.compact(),
           "graph": services.graph.compact() if services.graph is not None else False}
    return out
