"""SQL first, then projections: keeps the vector and graph stores in step with the system of record.

The SQL database is the truth. The vector store (memories + entity embeddings) and the graph store are
projections of it: every sync reads the current SQL rows and makes the projection match, so a sync is
idempotent and can be replayed at any time. A projection write that fails is queued in the SQL outbox
(`projection_outbox`) and retried by `retry_pending()`; `reindex()` rebuilds a scope from scratch.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memoryx.core.scope import Scope

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from memoryx.stores.graph import GraphStore
    from memoryx.stores.sql import SQLStore
    from memoryx.stores.vectors import VectorStore

log = logging.getLogger(__name__)


def _scope_of(row: dict) -> Scope:
    return Scope(user_id=row.get("user_id"), agent_id=row.get("agent_id"), run_id=row.get("run_id"),
                 group_id=row.get("group_id"))


def memory_point(row: dict, vector: list[float], chunk_vectors: list[list[float]] | None = None) -> dict:
    """The vector-store item of a SQL memory row (`chunk_vectors`: of the windows of a long text)."""
    return {
        "id": row["id"],
        "vector": vector,
        "chunk_vectors": chunk_vectors or [],
        "text": row["memory"],
        "user_id": row.get("user_id"),
        "agent_id": row.get("agent_id"),
        "run_id": row.get("run_id"),
        "group_id": row.get("group_id"),
        "valid_at": row.get("valid_at"),  # the event time; recency and time windows read it
        "memory_type": row.get("memory_type"),
        "category": row.get("category"),
        "importance": row.get("importance"),
        "created_at": row.get("created_at"),
        "updated_at": row.get("updated_at"),
        "metadata": row.get("metadata") or {},
        "status": row.get("status"),  # consolidation: filtered on by search
    }


def _ms(iso: str | None) -> int | None:
    if not iso:
        return None
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def entity_point(row: dict, vector: list[float]) -> dict:
    return {"id": row["id"], "vector": vector, "name": row["name"], "entity_type": row.get("entity_type"),
            "user_id": row.get("user_id"), "agent_id": row.get("agent_id"), "run_id": row.get("run_id"),
            "group_id": row.get("group_id")}


def relation_edge(row: dict) -> dict:
    """The graph-store edge of a SQL relation row (times as epoch ms: FalkorDB's Bolt has no datetime)."""
    return {
        "id": row["id"], "source_id": row["source_id"], "target_id": row["target_id"],
        "relation": row["relation"], "memory_id": row.get("memory_id"), "valid": bool(row.get("valid", True)),
        "created_at_ms": _ms(row.get("created_at")), "invalidated_at_ms": _ms(row.get("invalidated_at")),
        "invalidated_by": row.get("invalidated_by"),
        # event time: when the relation held in the world, apart from when it was recorded
        "valid_at_ms": _ms(row.get("valid_at")), "invalid_at_ms": _ms(row.get("invalid_at")),
    }


def _by_scope(rows: list[dict]) -> dict[Scope, list[dict]]:
    grouped: dict[Scope, list[dict]] = {}
    for r in rows:
        grouped.setdefault(_scope_of(r), []).append(r)
    return grouped


class Projector:
    def __init__(self, sql: "SQLStore", vectors: "VectorStore", graph: "GraphStore | None", embeddings: "Embeddings"):
        self.sql = sql
        self.vectors = vectors
        self.graph = graph
        self.embeddings = embeddings

    # Public syncs never raise for a projection failure: the SQL write stands, and the outbox makes the
    # projection converge later. The SQL write queued the targets in the outbox in its own transaction
    # (SQLStoreBase._record_intent), so a process killed between the commit and the projection leaves a
    # job that `retry_pending()` replays (at start and periodically: memoryx.runtime.recovery). A sync reads the
    # job ids first and clears only those once projected. The _project_* variants raise.
    def sync_memories(self, ids: list[str], *, vectors: list[list[float]] | None = None) -> None:
        """Make the vector store match SQL for these memory ids. `vectors` (same order as ids) saves a
        second embedding pass when the caller already embedded the texts."""
        self._sync("memory", ids, lambda: self._project_memories(ids, vectors))

    def sync_entities(self, ids: list[str], *, vectors: list[list[float]] | None = None) -> None:
        """Project entity rows: graph nodes + entity embeddings. Missing rows are deleted from both.
        `vectors` (same order as ids) are the name embeddings the caller already computed."""
        self._sync("entity", ids, lambda: self._project_entities(ids, vectors))

    def sync_relations(self, relations: list[dict]) -> None:
        """Project relation rows (as returned by SQLStore) into the graph, including their validity."""
        if self.graph is None:
            return
        self._sync("relation", [r["id"] for r in relations], lambda: self._project_relations(relations))

    def sync_relation_ids(self, ids: list[str]) -> None:
        """Make the graph match SQL for these relation ids: a relation row gone from SQL loses its edge."""
        if self.graph is None:
            return
        self._sync("relation", ids, lambda: self._project_relation_ids(ids, {}))

    def project_recorded(self, intents: list[tuple[str, str, str]], *, memories: dict[str, dict] | None = None,
                         memory_vectors: dict[str, list[float]] | None = None,
                         entities: dict[str, dict | None] | None = None,
                         entity_vectors: dict[str, list[float]] | None = None,
                         relations: list[dict] | None = None) -> None:
        """Project what one `SQLStore.transaction()` committed, then clear exactly its jobs with the store's
        next write transaction (no read of the job ids, no second read of the rows just written,
        no transaction of their own).

        `intents`: `sql.recorded_intents()` right after the block. The rows the caller already holds (as its
        writes returned them, under the scope lock) save the reads: `memories` / `entities` {id: row, or
        None for an entity deleted}, `relations` [rows]; targets without a row are read from SQL. Rows given
        without an intent of this transaction (a replayed write) are projected too. Vectors given are
        reused. Never raises for a projection failure: the kind's jobs stay queued with the error."""
        if self.sql.in_transaction():
            raise RuntimeError("project after the transaction commits, not inside it")
        targets: dict[str, list[str]] = {"memory": [], "entity": [], "relation": []}
        jobs: dict[str, list[str]] = {"memory": [], "entity": [], "relation": []}
        for kind, target, job in intents:
            if kind in targets:
                targets[kind].append(target)
                jobs[kind].append(job)
        targets["memory"] += list(memories or {})
        targets["entity"] += list(entities or {})
        rel_rows = {r["id"]: r for r in relations or []}
        targets["relation"] += list(rel_rows)
        failed: set[str] = set()

        def attempt(kind: str, ids: list[str], project) -> Any:
            if not ids or kind in failed:
                return None
            try:
                return project(ids)
            except Exception as exc:
                log.warning("%s projection failed for %d rows, queued for retry: %s", kind, len(ids), exc)
                self.sql.enqueue_projections(kind=kind, target_ids=ids, error=repr(exc))
                failed.add(kind)
                return None

        unique = {kind: list(dict.fromkeys(ids)) for kind, ids in targets.items()}
        attempt("memory", unique["memory"], lambda ids: self._project_memories(ids, rows=memories, given=memory_vectors))
        # live entities, then relations (an edge needs its end nodes), then the deleted entities (an invalidated
        # edge to an orphan is written first, then goes with its node)
        gone = attempt("entity", unique["entity"], lambda ids: self._project_entities(
            ids, rows=entities, given=entity_vectors, delete_gone=False)) or []
        attempt("relation", unique["relation"], lambda ids: self._project_relation_ids(ids, rel_rows))
        attempt("entity", gone, self._delete_entities)
        # with the next write transaction (an add's next step, or the next add), not one of their own
        self.sql.clear_projections_later([job for kind in jobs if kind not in failed for job in jobs[kind]])

    def _project_relation_ids(self, ids: list[str], known: dict[str, dict]) -> None:
        missing = [i for i in ids if i not in known]
        rows = [known[i] for i in ids if i in known] + (self.sql.get_relations(missing) if missing else [])
        if self.graph is not None:
            found = {r["id"] for r in rows}
            gone = [i for i in ids if i not in found]
            self._project_relations(rows)
            if gone:
                self.graph.delete_relations(gone)

    def _sync(self, kind: str, ids: list[str], project) -> None:
        if not ids:
            return
        if self.sql.in_transaction():  # projecting an uncommitted write could show what a rollback undoes
            raise RuntimeError("project after the transaction commits, not inside it")
        jobs = self.sql.projection_jobs(kind=kind, target_ids=ids)  # before projecting: see the outbox docs
        try:
            project()
        except Exception as exc:
            log.warning("%s projection failed for %d rows, queued for retry: %s", kind, len(ids), exc)
            self.sql.enqueue_projections(kind=kind, target_ids=ids, error=repr(exc))
            return
        self.sql.clear_projections(jobs)

    def _project_memories(self, ids: list[str], vectors: list[list[float]] | None = None, *,
                          rows: dict[str, dict] | None = None, given: dict[str, list[float]] | None = None) -> None:
        if not ids:
            return
        given = dict(given or {}) | (dict(zip(ids, vectors)) if vectors is not None else {})
        # one read for the ids the caller did not hand over (a statement per id added up on every
        # add); an id not found was hard-deleted and a soft-deleted one is gone too: the projection keeps neither
        known = {i: r for i, r in (rows or {}).items() if i in set(ids) and r is not None}
        unknown = [i for i in ids if i not in known]
        rows = known | ({r["id"]: r for r in self.sql.get_memories_any(unknown)} if unknown else {})
        live = [rows[i] for i in dict.fromkeys(ids) if i in rows and not rows[i].get("deleted_at")]
        gone = [i for i in ids if i not in rows or rows[i].get("deleted_at")]
        if live:
            self.vectors.upsert_memories(self.memory_points(live, given))
        if gone:
            self.vectors.delete_memories(gone)

    def memory_points(self, rows: list[dict], given: dict[str, list[float]]) -> list[dict]:
        """The vector-store items of memory rows: the vectors `given` ({id: vector}) reused; the other texts and
        the windows of long texts (`VectorStore.chunk_texts`) embedded here, in one pass."""
        missing = [r for r in rows if r["id"] not in given]
        windows = {r["id"]: ts for r in rows if (ts := self.vectors.chunk_texts(r["memory"]))}
        texts = [r["memory"] for r in missing] + [t for ts in windows.values() for t in ts]
        vecs = iter(self.embeddings.embed_documents(texts) if texts else [])
        own = dict(given) | {r["id"]: next(vecs) for r in missing}
        window_vecs = {mid: [next(vecs) for _ in ts] for mid, ts in windows.items()}
        return [memory_point(r, own[r["id"]], window_vecs.get(r["id"])) for r in rows]

    def _delete_entities(self, gone: list[str]) -> None:
        self.vectors.delete_entities(gone)
        if self.graph is not None:
            self.graph.delete_entities(gone)

    def _project_entities(self, ids: list[str], vectors: list[list[float]] | None = None, *,
                          rows: dict[str, dict | None] | None = None, given: dict[str, list[float]] | None = None,
                          delete_gone: bool = True) -> list[str]:
        """Upsert the live entities; delete the gone ones (or, with delete_gone=False, return them for the
        caller to delete after the relations). Returns the gone ids."""
        if not ids:
            return
        given = {k: v for k, v in (given or {}).items() if v is not None} | (
            {k: v for k, v in zip(ids, vectors) if v is not None} if vectors is not None else {})
        handed = {i: (rows or {})[i] for i in ids if i in (rows or {})}  # None: deleted by the caller
        unknown = [i for i in ids if i not in handed]
        live = [r for r in handed.values() if r is not None] + (self.sql.get_entities(unknown) if unknown else [])
        known = {r["id"] for r in live}
        gone = [i for i in ids if i not in known]
        if live:
            missing = [r for r in live if r["id"] not in given]
            if missing:
                given.update(zip([r["id"] for r in missing], self.embeddings.embed_documents([r["name"] for r in missing])))
            self.vectors.upsert_entities([entity_point(r, given[r["id"]]) for r in live])
            if self.graph is not None:
                for scope, scope_rows in _by_scope(live).items():
                    self.graph.upsert_entities(
                        scope, [{"id": r["id"], "name": r["name"], "entity_type": r.get("entity_type") or "entity"}
                                for r in scope_rows]
                    )
        if gone and delete_gone:
            self._delete_entities(gone)
        return gone

    def _project_relations(self, relations: list[dict]) -> None:
        if not relations or self.graph is None:
            return
        for scope, rows in _by_scope(relations).items():
            self.graph.upsert_relations(scope, [relation_edge(r) for r in rows])

    # --- recovery ------------------------------------------------------------------------------
    def retry_pending(self, limit: int = 500, *, min_age_s: float = 0.0) -> int:
        """Replay queued projection writes (jobs at least `min_age_s` old). Returns how many completed.
        Each replay reads the current SQL rows, so replaying a job that its writer also projects is harmless;
        a job re-queued meanwhile has a new id and survives `complete_projection`."""
        done = 0
        for job in self.sql.pending_projections(limit=limit, min_age_s=min_age_s):
            try:
                if job["kind"] == "memory":
                    self._project_memories([job["target_id"]])
                elif job["kind"] == "entity":
                    self._project_entities([job["target_id"]])
                elif job["kind"] == "relation":
                    rows = self.sql.get_relations([job["target_id"]])
                    if rows:
                        self._project_relations(rows)
                    elif self.graph is not None:
                        self.graph.delete_relations([job["target_id"]])
                self.sql.complete_projection(job["id"])
                done += 1
            except Exception as exc:
                self.sql.fail_projection(job["id"], repr(exc))
        return done

    def rebuild_graph(self, *, batch_size: int = 1000) -> dict:
        """Rebuild the whole graph projection from SQL (entities, then relations with their validity).
        Run at start when the embedded graph server died uncleanly and may have lost its last writes."""
        if self.graph is None:
            return {"entities": 0, "relations": 0}
        self.graph.reset()
        entities = self.sql.list_entities(None)
        for scope, rows in _by_scope(entities).items():
            for i in range(0, len(rows), batch_size):
                self.graph.upsert_entities(scope, [
                    {"id": r["id"], "name": r["name"], "entity_type": r.get("entity_type") or "entity"}
                    for r in rows[i : i + batch_size]
                ])
        relations = self.sql.list_relations(None, include_invalid=True)
        self._project_relations(relations)
        return {"entities": len(entities), "relations": len(relations)}

    def reconcile_graph(self) -> dict | None:
        """Rebuild the graph from SQL when its counts (entities, relations, valid relations) differ from
        SQL's: the check made at every start, so that a graph that lost writes (a server killed before its
        append-only file was synced, a projection lost to a crash before the outbox existed) converges
        without anyone asking. Returns the rebuild's figures, or None when the graph already matched."""
        if self.graph is None:
            return None
        truth, shown = self.sql.graph_counts(), self.graph.counts(None)
        if all(truth[k] == shown.get(k) for k in truth):
            return None
        log.warning("graph projection differs from SQL (graph %s, SQL %s); rebuilding it from SQL", shown, truth)
        return self.rebuild_graph()

    def reindex(self, scope: Scope | None = None, *, batch_size: int = 256) -> dict:
        """Rebuild the projections of a scope (or of everything) from SQL. Raises if a store is down."""
        started = time.perf_counter()
        if scope is None:
            self.vectors.reset()
            if self.graph is not None:
                self.graph.reset()
        else:
            self.vectors.delete_scope(scope)
            if self.graph is not None:
                self.graph.delete_scope(scope)
        memories = self.sql.list_memories(scope, limit=None)
        for i in range(0, len(memories), batch_size):
            chunk = memories[i : i + batch_size]  # live rows already in hand: no per-id re-read
            self.vectors.upsert_memories(self.memory_points(chunk, {}))
        entities = self.sql.list_entities(scope)
        for i in range(0, len(entities), batch_size):
            self._project_entities([e["id"] for e in entities[i : i + batch_size]])
        relations = self.sql.list_relations(scope, include_invalid=True)
        self._project_relations(relations)
        # the scope is rebuilt from the truth: what the outbox still holds for it can now succeed
        self.retry_pending()
        return {
            "memories": len(memories),
            "entities": len(entities),
            "relations": len(relations),
            "seconds": round(time.perf_counter() - started, 3),
        }
