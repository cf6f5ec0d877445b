"""Rollback by trace id: undo every operation one run executed, from the records it left.

What a run did is read back from the system of record, whatever kind of run it was (an add, an infer=False
add, `Memory.update` / `delete`, a consolidation pass, another rollback):
- memory history rows carrying its trace id (event, old text, new text): each memory is brought back to the
  state before the run's first row on it — the old text, undeleted, or soft-deleted when the run added it;
  consolidation's status changes (MERGED, SUMMARIZED, ARCHIVE) back to active. `UNDO` maps each history
  event to its undo; `register_undo` adds one for a new event.
- relations carrying its trace id (added: invalidated now, and their entities removed once orphaned) or
  its id in `invalidated_by` (valid again). A memory whose text comes back has its relations extracted
  again from that text (one graph-model call each, as `Memory.update` does): orphan cleanup may have removed
  the entities of the relations the run invalidated, so re-validation alone could not bring them back.

The rollback is its own trace: a new trace id, ROLLBACK history rows, relations invalidated by it, and a
judgment record with operation_type ROLLBACK whose input_content is the trace rolled back (how a second
rollback of the same trace is refused). A later run that changed the same memories (and was not rolled back
itself) makes the rollback refuse with RollbackConflictError naming it; `force=True` rolls such runs back
first, newest first, each as its own rollback trace. Everything runs under the scope locks of every owner
the memories belong to, projections synced after the SQL writes.

A consolidation pass also records what its history rows cannot carry (executed_operations: metadata,
importance, last access and access counts folded into a merge's survivor, summary pointers, memory layers,
relations moved to a survivor, the entities an entity merge removed and the relations it re-pointed); its
rollback puts each back where it still holds what the pass left, in SQL and in the projections.

Not undone: the category/importance/type an UPDATE changed (history keeps text only), the status before a
restore, and the folded fields of passes recorded before that record existed. They are listed in
`not_undone`.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import TYPE_CHECKING, Callable

from memoryx.core.scope import Scope
from memoryx.errors import ConcurrencyError, InvalidInputError, NotFoundError, RollbackConflictError, ScopeError
from memoryx.knowledge import memory_graph
from memoryx.stores.locks import lock_owner

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

State = tuple[str | None, str | None]  # (text, None when soft-deleted; status, None when unchanged)
Undo = Callable[[State, dict], State]

ROLLBACK_KIND = "ROLLBACK"
_MAX_TRACES = 100  # force: the most runs one rollback undoes (a bound against a runaway chain)


def _before_text(state: State, row: dict) -> State:  # the memory showed old_memory (None: not live) before
    return row.get("old_memory"), state[1]


def _not_there(state: State, row: dict) -> State:  # the run created it
    return None, state[1]


def _active(state: State, row: dict) -> State:  # a status change of consolidation: back to active
    return state[0], "active"


UNDO: dict[str, Undo] = {
    "ADD": _not_there, "SUMMARY": _not_there,
    "UPDATE": _before_text, "DELETE": _before_text, "ROLLBACK": _before_text,
    "MERGED": _active, "SUMMARIZED": _active, "ARCHIVE": _active,
}
# events whose effect is not (fully) in the history row: undone as far as the row allows, and reported
PARTIAL = {"MERGE": "metadata, access count and relations folded into the survivor stay",
           "PROMOTE": "the memory layer (metadata) a consolidation pass changed stays",
           "RESTORE": "the status before a restore is not recorded; it stays active"}


def register_undo(event: str, fn: Undo) -> None:
    """Teach rollback a new history event: `fn((text, status), history_row) -> (text, status) before it`."""
    UNDO[event] = fn


def _scope_of(row: dict) -> Scope:
    return Scope(user_id=row.get("user_id"), agent_id=row.get("agent_id"), run_id=row.get("run_id"),
                 group_id=row.get("group_id"))


class Rollback:
    """One rollback request. `scope`: the caller's scope (tenancy) — the run must lie within it."""

    def __init__(self, services: "Services", *, actor: str = "api", scope: Scope | None = None):
        self.services = services
        self.sql = services.sql
        self.actor = actor
        self.scope = scope

    # --- reading what a run did ----------------------------------------------------------------------------

    def _judgment(self, trace_id: str) -> dict | None:
        try:
            return self.sql.get_judgment(trace_id)
        except NotFoundError:
            return None

    def _check(self, trace_id: str) -> tuple[list[dict], dict | None]:
        rows = self.sql.trace_history(trace_id)
        judgment = self._judgment(trace_id)
        added, invalidated = self.sql.relations_of_trace(trace_id)
        if not rows and not added and not invalidated and judgment is None:
            raise NotFoundError(f"No run with trace_id {trace_id!r}; list them with `memoryx judgments list`.")
        if self.scope is not None:
            records = [*(self.sql.get_memories_any([r["memory_id"] for r in rows])), *added, *invalidated,
                       *([judgment] if judgment else [])]
            if not all(self.scope.contains(r) for r in records):
                # the same words as "missing": never confirm another tenant's trace ids
                raise NotFoundError(f"No run with trace_id {trace_id!r} in this scope.")
        links = self.sql.rollback_links([trace_id])
        if trace_id in links["rolled_back"]:
            raise InvalidInputError(f"Run {trace_id} was already rolled back by {links['rolled_back'][trace_id]}.",
                                    trace_id=trace_id)
        if trace_id in links["rollbacks"]:
            raise InvalidInputError(f"{trace_id} is the rollback of {links['rollbacks'][trace_id]}; a rollback is "
                                    "not rolled back. Run the add again instead.", trace_id=trace_id)
        return rows, judgment

    def later_traces(self, trace_id: str, rows: list[dict]) -> list[str]:
        """Runs (not rolled back) that changed the run's memories after it, newest first."""
        last: dict[str, int] = {}
        for r in rows:
            last[r["memory_id"]] = r["seq"]
        if not last:
            return []
        later = [r for r in self.sql.history_after(list(last), min(last.values()))
                 if r["seq"] > last[r["memory_id"]] and r["trace_id"] != trace_id]
        newest: dict[str, int] = {}
        for r in later:
            newest[r["trace_id"] or "(untraced)"] = r["seq"]
        links = self.sql.rollback_links(list(newest))
        live = [t for t in newest if t not in links["rolled_back"] and t not in links["rollbacks"]]
        return sorted(live, key=lambda t: -newest[t])

    def plan(self, trace_id: str, force: bool) -> list[str]:
        """The runs to roll back, in order (later ones first, the asked one last)."""
        order: list[str] = []

        def visit(t: str, rows: list[dict]) -> None:
            later = self.later_traces(t, rows)
            if later and not force:
                raise RollbackConflictError(
                    f"Run {later[0]} changed the same memories after {t}" +
                    (f" (and {len(later) - 1} more: {', '.join(later[1:])})" if len(later) > 1 else "") +
                    f"; roll back {later[0]} first, or pass force=True to roll back both (newest first).",
                    trace_id=t, later_traces=later)
            for t2 in later:
                if t2 == "(untraced)":
                    raise RollbackConflictError(f"A change without a trace id touched the memories of {t} "
                                                "after it; it cannot be rolled back.", trace_id=t, later_traces=later)
                if t2 not in order:
                    visit(t2, self._check(t2)[0])
            if len(order) >= _MAX_TRACES:
                raise InvalidInputError(f"Rolling back {trace_id} would undo more than {_MAX_TRACES} runs.")
            order.append(t)

        visit(trace_id, self._check(trace_id)[0])
        return order

    def owners(self, traces: list[str]) -> list[Scope]:
        """The scopes the runs `traces` wrote into, sorted by key: the locks to take, in the order every writer
        takes them."""
        owners: dict[str, Scope] = {}
        for t in traces:
            ids = [r["memory_id"] for r in self.sql.trace_history(t)]
            records = self.sql.get_memories_any(ids) + [r for pair in self.sql.relations_of_trace(t) for r in pair]
            judgment = self._judgment(t)
            if judgment and any(judgment.get(k) for k in ("user_id", "agent_id", "run_id")):
                records.append(judgment)
            for rec in records:
                with contextlib.suppress(ScopeError):
                    owner = lock_owner(_scope_of(rec))
                    owners[owner.key()] = owner
        return [owners[k] for k in sorted(owners)]

    # --- running it ----------------------------------------------------------------------------------------

    def run(self, trace_id: str, *, force: bool = False) -> dict:
        order = self.plan(trace_id, force)
        owners = self.owners(order)
        with contextlib.ExitStack() as stack:
            for owner in owners:  # one global order (sorted keys): no deadlock with adds or other rollbacks
                stack.enter_context(self.sql.scope_lock(owner))
            order = self.plan(trace_id, force)  # again under the locks: a run may have landed meanwhile
            if any(o.key() not in {w.key() for w in owners} for o in self.owners(order)):
                raise ConcurrencyError(f"The runs to roll back for {trace_id} changed while waiting for the locks; "
                                       "retry.", trace_id=trace_id)
            done = [self._undo(t) for t in order]
        result = dict(done[-1])
        result["also_rolled_back"] = [{"trace_id": d["rolled_back_trace_id"], "rollback_trace_id": d["trace_id"]}
                                      for d in done[:-1]]
        return result

    def _targets(self, rows: list[dict]) -> tuple[dict[str, State], dict[str, dict], list[dict]]:
        """{memory id: (text, status) to bring back}, {memory id: current row}, what cannot be fully undone."""
        current = {m["id"]: m for m in self.sql.get_memories_any([r["memory_id"] for r in rows])}
        targets: dict[str, State] = {}
        partial: list[dict] = []
        for row in reversed(rows):
            mem = current.get(row["memory_id"])
            if mem is None:
                partial.append({"memory_id": row["memory_id"], "event": row["event"], "reason": "memory is gone (purged)"})
                continue
            state = targets.get(mem["id"], (None if mem.get("deleted_at") else mem["memory"], None))
            undo = UNDO.get(row["event"])
            if undo is None and row["event"] not in PARTIAL:
                partial.append({"memory_id": mem["id"], "event": row["event"], "reason": "no undo known for this event"})
                continue
            if row["event"] in PARTIAL:
                partial.append({"memory_id": mem["id"], "event": row["event"], "reason": PARTIAL[row["event"]]})
            targets[mem["id"]] = undo(state, row) if undo is not None else state
        return targets, current, partial

    def _undo(self, trace_id: str) -> dict:
        services, sql = self.services, self.sql
        rows, judgment = self._check(trace_id)
        rollback_id = str(uuid.uuid4())
        targets, current, partial = self._targets(rows)
        targets, partial, done = _consolidation_plan(judgment, targets, partial)
        # the model calls first (a failing call writes nothing): relations of every text that comes back
        extracted: dict[str, tuple] = {}
        for mid, (text, _status) in targets.items():
            mem = current[mid]
            now_text = None if mem.get("deleted_at") else mem["memory"]
            if text is not None and text != now_text and services.graph is not None and \
                    (mem.get("metadata") or {}).get("owner") != "agent":
                extracted[mid] = memory_graph.extract_memory_relations(services, {**mem, "memory": text},
                                                                       trace_id=rollback_id)
        ops: list[dict] = []
        for mid, (text, status) in targets.items():
            before = current[mid]
            after = sql.rollback_memory_state(mid, text=text, status=status, trace_id=rollback_id, actor=self.actor)
            if after.get("updated_at") != before.get("updated_at"):
                ops.append({"event": "ROLLBACK", "id": mid, "memory": text, "previous_memory":
                            None if before.get("deleted_at") else before["memory"],
                            "status": after.get("status")})
        lifecycle = self._undo_lifecycle(trace_id, rollback_id, done)
        partial += lifecycle["not_undone"]
        synced = list(dict.fromkeys([op["id"] for op in ops] + lifecycle["memories"]))
        if synced:
            services.projector.sync_memories(synced)
        relations = self._undo_graph(trace_id, rollback_id, targets, extracted)
        scope = _scope_of(judgment) if judgment and any(judgment.get(k) for k in ("user_id", "agent_id", "run_id")) \
            else (_scope_of(next(iter(current.values()))) if current else None)
        record = dict(operation_type=ROLLBACK_KIND, input_content=trace_id, executed_operations=ops,
                      parsed_operations=[{"event": "ROLLBACK", "trace_id": trace_id}], execution_success=True,
                      error_message=None, status="done", model_name=None,
                      reasoning=f"[memoryx] rollback of {trace_id} by {self.actor}: {len(ops)} memories restored, "
                                f"{len(relations['deleted_entities'])} relations invalidated, "
                                f"{len(relations['added_entities'])} relations valid again or re-extracted"
                                + "".join(f"\n[partial] {p['event']} {p['memory_id']}: {p['reason']}" for p in partial))
        if scope is not None:
            record["scope"] = scope
        sql.save_judgment(rollback_id, **record)
        return {"trace_id": rollback_id, "rolled_back_trace_id": trace_id, "results": ops, "relations": relations,
                "not_undone": partial}

    def _undo_lifecycle(self, trace_id: str, rollback_id: str, done: dict | None) -> dict:
        """What a consolidation pass (or end of run) changed beyond its history rows: its memory links
        removed; entity merges, relations moved by memory merges, folded metadata/counters and layers
        restored (SQLStore.undo_consolidation), then projected — entities before the relations that end on
        them, and each re-pointed relation's old edge dropped from the graph first (an edge's ends are part
        of it there)."""
        out = {"memories": [], "relations": [], "entities": [], "not_undone": []}
        if not done:
            return out
        services, sql = self.services, self.sql
        if done.get("links"):
            sql.delete_links_of(trace_id)
        with_entities = "entity_rows" in done  # passes before this record existed: entity merges stay
        if not (done.get("restore") or done.get("relations_moved") or (with_entities and done.get("entity_rows"))):
            return out
        out = sql.undo_consolidation(
            trace_id=rollback_id, restore=done.get("restore"), relations_moved=done.get("relations_moved"),
            entity_rows=done.get("entity_rows") if with_entities else None,
            entity_merges=done.get("entity_merges") if with_entities else None,
            repointed=done.get("relations_repointed") if with_entities else None, actor=self.actor)
        out["not_undone"] = [{"memory_id": None, **p} for p in out["not_undone"]]
        if out["entities"]:
            services.projector.sync_entities(out["entities"])
        if out["relations"]:
            if services.graph is not None:
                services.graph.delete_relations([r["id"] for r in out["relations"]])
            services.projector.sync_relations(out["relations"])
        return out

    def _undo_graph(self, trace_id: str, rollback_id: str, targets: dict[str, State], extracted: dict) -> dict:
        services, sql = self.services, self.sql
        added, invalidated = sql.relations_of_trace(trace_id)
        # the run's relations go (kept as history, invalidated by the rollback), their entities once orphaned
        gone = sql.invalidate_relations([r["id"] for r in added if r["valid"]], trace_id=rollback_id) \
            if any(r["valid"] for r in added) else []
        live = lambda mid: mid is None or (mid in targets and targets[mid][0] is not None) or (  # noqa: E731
            mid not in targets and bool(sql.get_memories([mid])))
        back = sql.revalidate_relations([r["id"] for r in invalidated if not r["valid"] and live(r.get("memory_id"))])
        if gone or back:
            services.projector.sync_relations(gone + back)
        changes = {"added_entities": [memory_graph.change_of(r) for r in back],
                   "deleted_entities": [memory_graph.change_of(r) for r in gone]}
        for mid, (entities, relations) in extracted.items():
            memory = sql.get_memory(mid)
            delta = memory_graph.apply_memory_update(services, memory, entities, relations, trace_id=rollback_id)
            changes["added_entities"] += delta["added_entities"]
            changes["deleted_entities"] += delta["deleted_entities"]
        # memories that end up deleted lose their relations as a DELETE does (those the re-extraction of a
        # rollback or a later run gave them too)
        removed = [mid for mid, (text, _) in targets.items() if text is None]
        if removed:
            cascade = memory_graph.cascade_memory_delete(services, removed, trace_id=rollback_id)
            changes["deleted_entities"] += cascade["deleted_entities"]
        memory_graph.remove_orphans(services, {e for r in added for e in (r["source_id"], r["target_id"])})
        return changes


def rollback_trace(services: "Services", trace_id: str, *, force: bool = False, actor: str = "api",
                   scope: Scope | None = None) -> dict:
    """Undo the run `trace_id` (see the module docstring). Returns {"trace_id" (the rollback's own),
    "rolled_back_trace_id", "results" (one ROLLBACK per memory changed), "relations" (mem0 shape: valid again /
    invalidated), "not_undone", "also_rolled_back" (force: the later runs undone first)}."""
    if not isinstance(trace_id, str) or not trace_id.strip():
        raise InvalidInputError(f"trace_id must be a non-empty string, got {trace_id!r}")
    return Rollback(services, actor=actor, scope=scope).run(trace_id.strip(), force=bool(force))


def _consolidation_plan(judgment: dict | None, targets: dict[str, State],
                        partial: list[dict]) -> tuple[dict[str, State], list[dict], dict | None]:
    """A consolidation pass (or end of run) recorded each changed memory's status before it
    (executed_operations.previous_status): MERGED / SUMMARIZED / ARCHIVE go back to that status (staged
    or active) rather than always active. Passes that also recorded what they folded into survivors and the
    layers they changed (`restore`) and the entities they merged away (`entity_rows`) are undone whole
    (`Rollback._undo_lifecycle`), so their MERGE / PROMOTE rows are no longer "not undone"; older passes
    still report them. Returns (targets, partial, the judgment's executed_operations or None). Writes nothing."""
    done = (judgment or {}).get("executed_operations")
    if not isinstance(done, dict):
        return targets, partial, None
    previous = done.get("previous_status") or {}
    out = {mid: (text, previous.get(mid, status) if status == "active" and previous.get(mid) in ("staged", "active")
                 else status) for mid, (text, status) in targets.items()}
    if "restore" in done:
        partial = [p for p in partial if p["event"] not in ("MERGE", "PROMOTE")]
    if "entity_rows" not in done:
        partial = partial + [{"memory_id": None, "event": "ENTITY_MERGE", "entity_id": eid,
                              "reason": "entity merge not undone (recorded before rollback could undo it): its "
                                        "relations stay on the surviving entity"}
                             for eid in done.get("entities_merged") or []]
    return out, partial, done
