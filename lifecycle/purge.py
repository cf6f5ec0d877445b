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
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterable

from memoryx.core.scope import Scope
from memoryx.knowledge.episodes import (
    drop_participant,
    episode_text,
    offline_narratives,
    parse_transcript,
    unit_of_turns,
    unit_transcript,
)
from memoryx.runtime.checkpointing import delete_threads, vacuum_checkpoints

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)


def purge_scope(services: "Services", scope: Scope, *, checkpointers: Iterable[Any] = (),
                compact: bool = True) -> dict:
    """Remove every trace of `scope` (see the module docstring). `checkpointers`: the savers that may hold
    the scope's add runs. `compact=False` skips the file compaction (the rows are gone, their bytes may stay
    on disk until the stores rewrite their files on their own). Returns what was removed, per store:

        {"scope": {...}, "sql": {"memories", "history", "raw_inputs", "judgments", "entities", "relations",
         "outbox"}, "vectors": {"memories", "entities"}, "graph": {"entities", "relations"},
         "checkpoints": {"threads"}, "compacted": {"sql", "checkpoints", "vectors", "graph"}, "seconds",
         "groups": {group_id: {"sql", "vectors", "graph", "checkpoints", "shared"}}}

    A user scope (user_id set, no group_id) also purges the user's traces in every group chat they took part
    in, one entry per group under "groups" (`_purge_participant`).
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
    }
    groups = sql.participant_groups(scope)  # a user's words in group chats are the user's data too
    if groups:
        report["groups"] = {g: _purge_participant(services, replace(scope, group_id=g), savers) for g in groups}
    report["compacted"] = compact_stores(services, savers) if compact else {}
    report["seconds"] = round(time.perf_counter() - started, 3)
    log.info("purged %s: %s", scope.key(), {k: report[k] for k in ("sql", "vectors", "graph", "checkpoints")})
    return report


def _purge_participant(services: "Services", scope: Scope, savers: list) -> dict:
    """A user's traces in one group chat: every row under the participant within the group (`scope` =
    the user's scope + group_id: memories, their history, entities, relations, links, feedback, raw inputs and
    judgments of their own adds, checkpoints of the runs that wrote them), then their words out of the group's
    shared records: their turns out of the group's episodes (narratives rewritten from the turns left; an
    episode left with none goes), their messages out of the group's raw inputs, their memory ids out of the
    group's profile, and from the group's judgments (their lines, facts and operations; a free-text field that
    names them is replaced by a redaction note). Other participants' memories are not touched."""

    sql, vectors, graph = services.sql, services.vectors, services.graph
    group = Scope(group_id=scope.group_id)
    with sql.scope_lock(group):
        threads = sum(delete_threads(saver, sql.scope_trace_ids(scope)) for saver in savers)
        removed_vectors = {"memories": vectors.count_memories(scope), "entities": vectors.count_entities(scope)}
        removed_graph = graph.counts(scope) if graph is not None else {"entities": 0, "relations": 0}
        theirs = sql.list_memories(scope, limit=None, include_deleted=True)
        names = {scope.user_id} | {str((m.get("metadata") or {}).get("speaker") or "") for m in theirs}
        texts = {m["memory"] for m in theirs if m.get("memory")}
        names.discard("")
        _purge_projections(services, scope)
        rows = sql.purge_scope(scope)
        _purge_projections(services, scope, rows)
        redacted, emptied = [], []
        for ep in sql.list_memories(group, limit=None, categories=["episode"]):
            meta = dict(ep.get("metadata") or {})
            turns = list(meta.get("turns") or [])
            left = drop_participant(turns, names)
            narratives = {k: v for k, v in (meta.get("narratives") or {}).items() if k.casefold() not in
                          {n.casefold() for n in names}}
            if len(left) == len(turns) and narratives == (meta.get("narratives") or {}):
                continue
            if not left:
                emptied.append(ep["id"])
                continue
            unit = unit_of_turns(left)
            narratives = offline_narratives(parse_transcript(unit_transcript(unit)))
            meta.update(turns=left, narratives=narratives, participants=unit.participants, start=unit.start,
                        end=unit.end, messages=len(left), title=None,
                        fact_ids=[i for i in meta.get("fact_ids") or [] if i not in set(rows["memory_ids"])])
            sql.redact_memory(ep["id"], text=episode_text(narratives, unit.start, unit.end), metadata=meta)
            redacted.append(ep["id"])
        if emptied:
            sql.hard_delete_memories(emptied)
            vectors.delete_memories(emptied)
        if redacted:
            services.projector.sync_memories(redacted)
        shared = sql.redact_participant(scope.group_id, names, set(rows["memory_ids"]), texts)
    return {"sql": rows["counts"], "vectors": removed_vectors,
            "graph": {"entities": removed_graph["entities"], "relations": removed_graph["relations"]},
            "checkpoints": {"threads": threads},
            "shared": {"episodes_redacted": len(redacted), "episodes_removed": len(emptied), **shared}}


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
