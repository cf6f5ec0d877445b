"""execute_ops: apply the judged operations to SQL (the system of record), then to the vector projection.

Everything happens under `sql.scope_lock` of every owner the operations touch (a file lock for SQLite, a
PostgreSQL advisory lock otherwise; one lock per user id, else agent id, else run id — stores/locks.py), so
concurrent adds for one user queue up here, whatever agent or run they name, across processes too. Each SQL
write queues its projection in its own transaction (the outbox), so a crash anywhere below loses nothing:
the replay at start projects it, and a resumed run finds its deterministic ids already written.

1. Optimistic re-check: when any memory changed since retrieval (one cheap query on the history position),
   the similar memories of each fact are searched again. If another run added a memory the judge did not
   see (a concurrent add), the run goes back to retrieve_similar and is judged again (at most
   MAX_STALE_RETRIES times; memories this run wrote itself do not count). Operations a human approved in
   review are not re-judged.
2. ADD: skipped when a live memory of the scope has the same hash (exact duplicate); else inserted with a
   deterministic id uuid5(trace_id/op index), so a replay after a crash finds it instead of adding a copy.
3. UPDATE / DELETE keep the memory's id (history: ADD, UPDATE, ..., DELETE under one id). An UPDATE whose
   memory was deleted meanwhile becomes an ADD (the new fact is never lost); an UPDATE whose new text already
   exists as another memory deletes the superseded one instead of creating a duplicate.
4. The executed operations are written into the judgment record. Steps 1-4 are ONE SQL transaction
   (`SQLStore.transaction()`): the changes, their history rows and outbox intents and the judgment record
   commit together or not at all, so a crash leaves either nothing of this step (the resumed run redoes it)
   or all of it (the resumed run finds the deterministic ids and the "done" record).
5. After the commit, the written rows are projected (`Projector.project_recorded`) with the fact vectors
   computed by retrieve_similar (no second embedding pass, no re-read of the rows), and exactly the
   transaction's outbox jobs are cleared.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from memoryx.core.runs import change_marker, deterministic_id, elapsed_ms, scope_for_owner, scope_of
from memoryx.core.text import fact_key, memory_hash
from memoryx.core.timeparse import base_time
from memoryx.errors import NotFoundError
from memoryx.ingest.speakers import fact_placement
from memoryx.nodes.retrieve_similar import all_facts, search_similar
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddState
from memoryx.stores.locks import lock_owner

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

MAX_STALE_RETRIES = 2


def _owner(op: dict, facts: list[dict]) -> str:
    fi = op.get("fact_index")
    return facts[fi].get("owner", "user") if fi is not None and 0 <= fi < len(facts) else "user"


def _is_stale(services, state: dict, facts: list[dict], vectors: list, top_k: int, threshold: float) -> bool:
    """True when a memory the judge did not see (written by another run) is now among the similar ones.

    Fast path: no memory anywhere changed since retrieval (the memory-history position is the same) -> not
    stale, one cheap query. Otherwise the similar memories are searched again and compared with the
    candidates; memories written by this run itself (a replay after a crash) do not count.
    """
    if not facts or not vectors:
        return False
    before = state.get("change_marker")
    if before is not None and change_marker(services.sql) == before:
        return False
    trace_id = state.get("trace_id")
    known = {c["id"] for c in state.get("candidates") or []}
    new_ids = {mid for mid, _, _ in search_similar(services, state, facts, vectors, top_k=top_k, threshold=threshold)} - known
    if not new_ids:
        return False
    return any(row.get("trace_id") != trace_id for row in services.sql.get_memories(sorted(new_ids)))


def apply_operations(services, state: dict, ops: list[dict], facts: list[dict],
                     vectors: list) -> tuple[list[dict], list[dict], dict[str, dict], dict[str, list[float]]]:
    """Apply the operations to SQL (caller holds the scope lock and, normally, one `sql.transaction()`).
    Returns (results for the caller, executed log, written rows by id, known vectors by id): the caller
    projects the rows once the transaction has committed."""
    sql = services.sql
    trace_id = state["trace_id"]
    metadata = dict(state.get("metadata") or {})
    fact_vec = {fact_key(f["text"]): v for f, v in zip(facts, vectors or [])}
    results: list[dict] = []
    executed: list[dict] = []
    known_vectors: dict[str, list[float]] = {}
    written: dict[str, dict] = {}  # id -> the row as the write returned it (projected after the commit)

    stamps = [m["timestamp"] for m in state.get("normalized_messages") or [] if m.get("timestamp")]
    said_at = base_time(stamps[-1]).isoformat() if stamps else None

    def add(i: int, op: dict, owner: str) -> None:
        fi = op.get("fact_index")
        fact = facts[fi] if fi is not None and 0 <= fi < len(facts) else {}
        # group chats: the fact goes to the participant who stated it, metadata.speaker = the name
        scope, said_by = fact_placement(scope_for_owner(state, owner), fact, state.get("normalized_messages") or [])
        text = op["text"]
        memory_id = deterministic_id(trace_id, f"op{i}")
        dup = sql.find_by_hash(scope, memory_hash(text))
        if dup is not None and dup["id"] != memory_id:
            executed.append({"event": "NONE", "id": dup["id"], "memory": text, "op": i,
                             "reason": "exact duplicate of an existing memory: skipped"})
            return
        meta = {**metadata, **said_by, **({"owner": "agent"} if owner == "agent" else {}),
                **({"categories": fact["categories"]} if fact.get("categories") else {}),  # custom categories
                **(fact.get("time_metadata") or {})}  # event_time / time_expression (memoryx.core.timeparse)
        written[memory_id] = sql.insert_memory(scope=scope, text=text, category=fact.get("category"), importance=float(fact.get("importance", 0.5)),
                          memory_type=fact.get("memory_type") or "fact", metadata=meta, trace_id=trace_id, memory_id=memory_id,
                          valid_at=fact.get("valid_at"),  # when the event happened (extract_facts.date_facts)
                          importance_factors=fact.get("importance_factors"), confidence=fact.get("confidence"))
        results.append({"id": memory_id, "memory": text, "event": "ADD"})
        executed.append({"event": "ADD", "id": memory_id, "memory": text, "op": i})
        vec = fact_vec.get(fact_key(text))
        if vec is not None:
            known_vectors[memory_id] = vec

    for i, op in enumerate(ops):
        owner = _owner(op, facts)
        event = op["event"]
        if event == "ADD":
            add(i, op, owner)
        elif event == "UPDATE":
            scope = scope_for_owner(state, owner)
            dup = sql.find_by_hash(scope, memory_hash(op["text"]))
            if dup is not None and dup["id"] != op["id"]:
                try:
                    row = written[op["id"]] = sql.delete_memory(op["id"], trace_id=trace_id)
                except NotFoundError:
                    row = {"memory": op.get("old_memory")}
                results.append({"id": op["id"], "memory": op.get("old_memory") or row.get("memory"), "event": "DELETE"})
                executed.append({"event": "DELETE", "id": op["id"], "memory": op.get("old_memory") or row.get("memory"), "op": i,
                                 "reason": f"superseded: its new text already exists as memory {dup['id']}"})
                continue
            fi = op.get("fact_index")
            fact = facts[fi] if fi is not None and 0 <= fi < len(facts) else {}
            try:
                row = written[op["id"]] = sql.update_memory(op["id"], text=op["text"], trace_id=trace_id, category=fact.get("category"),
                                        importance=fact.get("importance"), memory_type=fact.get("memory_type"),
                                        valid_at=fact.get("valid_at"),  # the new version holds from the event time
                                        importance_factors=fact.get("importance_factors"), confidence=fact.get("confidence"))
            except NotFoundError:  # deleted meanwhile (by another run or by hand): the new fact is never lost
                executed.append({"event": "UPDATE->ADD", "id": op["id"], "op": i,
                                 "reason": "the memory was deleted meanwhile; the new fact is added instead"})
                add(i, op, owner)
                continue
            previous = op.get("old_memory")
            results.append({"id": op["id"], "memory": op["text"], "event": "UPDATE", "previous_memory": previous})
            executed.append({"event": "UPDATE", "id": op["id"], "memory": op["text"], "previous_memory": previous, "op": i})
            vec = fact_vec.get(fact_key(op["text"]))
            if vec is not None:
                known_vectors[op["id"]] = vec
        elif event == "DELETE":
            try:  # it stopped holding when the message that retracted it was said, else now
                row = written[op["id"]] = sql.delete_memory(op["id"], trace_id=trace_id, invalid_at=said_at)
            except NotFoundError:
                executed.append({"event": "NONE", "id": op["id"], "op": i, "reason": "memory no longer exists"})
                continue
            text = op.get("old_memory") or row.get("memory") or op.get("text")
            results.append({"id": op["id"], "memory": text, "event": "DELETE"})
            executed.append({"event": "DELETE", "id": op["id"], "memory": text, "op": i})
        else:
            executed.append({"event": "NONE", "id": op.get("id"), "memory": op.get("text"), "op": i})

    return results, executed, written, known_vectors


def execute_ops(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    ctx = context_of(runtime)
    ops = list(state.get("operations") or [])
    facts = all_facts(state)
    vectors = state.get("fact_vectors") or []
    # (alice, bot) and (alice) share alice's lock: take each owner's lock once
    scopes = {lock_owner(scope_for_owner(state, _owner(op, facts))) for op in ops} | {lock_owner(scope_for_owner(state, "user"))}
    with contextlib.ExitStack() as stack:
        for scope in sorted(scopes, key=lambda s: s.key()):  # one global order: no deadlock between runs
            stack.enter_context(services.sql.scope_lock(scope))
        t_lock = elapsed_ms(start)
        retries = int(state.get("stale_retries") or 0)
        reviewed = bool(state.get("review_notes"))  # a human approved these operations: they stand
        with services.sql.transaction():  # the re-check, the changes and the judgment record: one transaction
            if not reviewed and retries < MAX_STALE_RETRIES and any(op["event"] != "NONE" for op in ops) and \
                    _is_stale(services, state, facts, vectors, ctx.similar_top_k, ctx.similarity_threshold):
                return {"stale": True, "stale_retries": retries + 1,
                        "timings": {"execute_ops": elapsed_ms(start), "lock_wait": t_lock}}
            results, executed, written, known_vectors = apply_operations(services, state, ops, facts, vectors)
            record = dict((state.get("judgment") or {}).get("record") or {})
            if record:
                notes = (state.get("judgment") or {}).get("notes") or []
                record["parsed_operations"] = [dict(op) for op in ops]  # after a human review: the approved ones
                record["reasoning"] = "\n".join([f"[{op['event']}] {op['reason']}" for op in ops] +
                                                [f"[memoryx] {n}" for n in notes] + list(state.get("review_notes") or []))
            record.update(executed_operations=executed, execution_success=True, error_message=None, status="done")
            services.sql.save_judgment(state["trace_id"], scope=scope_of(state), **record)
        # still under the lock: no other writer of this scope can have changed these rows since
        services.projector.project_recorded(services.sql.recorded_intents(), memories=written,
                                            memory_vectors=known_vectors)
    return {"executed": results, "stale": False, "timings": {"execute_ops": elapsed_ms(start), "lock_wait": t_lock}}
