"""What the client is told is what happened: an add run that raises is undone before its error is returned.

An add writes in several steps (execute_ops commits the memories, then the profile, episode and graph steps
write theirs), so a later step that raises would leave the earlier writes behind while the caller is told
the add failed. `undo_failed_run` removes them: the SQL rows (memoryx.stores.sql.run_undo: memories created,
memories changed put back, history, links, relations, raw input, profile values), then the projections
(vector points, graph edges, the entities left without a relation). It runs under the scope locks of every
owner the run touched (as a rollback does), so a concurrent add of the same user never sees half of it.

No acknowledged write is undone: the run's later steps run outside the scope lock, so another add of the same
user may have changed a memory this run wrote (and told its caller so) before this run failed. Such a memory
(a history row of another write after the run's last one on it) is left as the later write made it, and the
report, the caller's error and the run's judgment name it under "not_undone".

Steps designed to degrade (the profile model, a projection whose store is down: queued in the outbox) do not
raise and are not failures; the undo is for the cases where the caller gets an error.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from memoryx.errors import AccessDeniedError, AddFailedError, InvalidInputError, MemoryXError, NotFoundError, ScopeError
from memoryx.knowledge import memory_graph
from memoryx.lifecycle.rollback import Rollback

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)

# errors that are the caller's to fix (4xx): their message is kept as it is
_CALLERS_OWN = (InvalidInputError, ScopeError, AccessDeniedError, NotFoundError)


def undo_failed_run(services: "Services", trace_id: str, values: dict | None = None) -> dict:
    """Undo every write of the add run `trace_id` (see the module docstring). `values`: the run's last
    checkpointed state, when known (the entities it linked). Returns what was undone; raises when the
    SQL side could not be undone (the caller reports it)."""
    sql = services.sql
    owners = Rollback(services).owners([trace_id])
    with contextlib.ExitStack() as stack:
        for owner in owners:  # sorted keys: the order every writer takes them in
            stack.enter_context(sql.scope_lock(owner))
        undone = sql.undo_run_rows(trace_id)
        back = sql.revalidate_relations(undone["relations_invalidated"]) if undone["relations_invalidated"] else []
    # projections after the commit; each queued in the outbox by the undo, so a store down now converges later
    services.projector.sync_memories(undone["memories_removed"] + undone["memories_restored"])
    if undone["relations_removed"]:
        services.projector.sync_relation_ids(undone["relations_removed"])
    if back:
        services.projector.sync_relations(back)
    linked = [row.get("id") for row in ((values or {}).get("linked_entities") or {}).values() if isinstance(row, dict)]
    entities = {e for e in [*undone["entity_ends"], *linked] if e}
    orphans = memory_graph.remove_orphans(services, entities) if entities else []
    report = {"memories_removed": len(undone["memories_removed"]),
              "memories_restored": len(undone["memories_restored"]),
              "relations_removed": len(undone["relations_removed"]), "relations_valid_again": len(back),
              "entities_removed": len(orphans), "profile_values": undone["profile_values"]}
    if undone.get("kept"):  # what it could not undo without losing another caller's acknowledged write
        report["not_undone"] = [f"memory {k['memory_id']}: changed since by {k['changed_by'] or 'the API'} "
                                f"({k['event']})" for k in undone["kept"]]
    return report


def wrote_anything(report: dict | None) -> bool:
    return bool(report) and any(v for k, v in report.items() if k != "error")


def failure_message(exc: BaseException, trace_id: str, step: str | None, report: dict | None) -> str:
    """What the caller is told: what failed, that nothing of the add was kept (or what could not be undone),
    and what to do next."""
    cause = str(exc.args[0]) if isinstance(exc, MemoryXError) and exc.args else f"{type(exc).__name__}: {exc}"
    where = f" in its {step} step" if step else ""
    if report and report.get("error"):
        kept = (f" Undoing what it wrote failed too ({report['error']}); roll the run back with "
                f"`memoryx rollback {trace_id}` once the store is back.")
    elif report and report.get("not_undone"):
        kept = (f" What it had written was undone, except what another add changed since (kept as that add left "
                f"it, since that add was answered): {'; '.join(report['not_undone'])}.")
    elif wrote_anything(report):
        kept = " Everything it had written was undone; nothing of this add is kept."
    else:
        kept = " Nothing of this add was written."
    return f"The add failed{where}: {cause.rstrip('.')}.{kept} Retry the add."  # str() adds the trace id


def failed_add(exc: BaseException, trace_id: str, step: str | None, report: dict | None) -> BaseException:
    """The error to raise for a failed add: a MemoryX error keeps its type (and HTTP status) with the message
    above; any other exception becomes an AddFailedError chained to it."""
    if isinstance(exc, _CALLERS_OWN) and not (report and report.get("error")):
        return exc  # bad input, a scope refused: its message says what to change; retrying as is won't help
    message = failure_message(exc, trace_id, step, report)
    if isinstance(exc, MemoryXError):
        exc.args = (message, *exc.args[1:])
        exc.trace_id = trace_id
        return exc
    if isinstance(exc, Exception):
        error = AddFailedError(message, trace_id=trace_id)
        error.__cause__ = exc
        return error
    return exc  # KeyboardInterrupt, a cancelled task: raised as they are


def failed_step(snapshot: Any) -> str | None:
    """The step a failed run stopped in, from its last checkpoint (the node that was to run next)."""
    nxt = getattr(snapshot, "next", None)
    return ", ".join(nxt) if nxt else None
