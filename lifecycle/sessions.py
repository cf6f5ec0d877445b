"""The end of a session (a run): what `session.end` means and when it is published.

A run (a conversation: the adds that share a run_id) ends once: when `Memory.end_run` closes it, or when a
consolidation pass finds it idle for longer than settings.working_memory_ttl_hours and closes it the same
way. Either writes the run's end mark (a raw input whose metadata has "run_end", which also clears the
run's working turns) and publishes one `session.end`; an add never does (a chat is many adds). A run
already ended (nothing said and nothing working since its last end mark) ends no second time.

Payload (memoryx.core.events adds "event" and "at"):

    {"event": "session.end", "reason": "end_run" | "idle", "run_id": "chat-7", "user_id": "ann",
     "agent_id": null, "group_id": null, "trace_id": "<the end_run call or the consolidation pass>",
     "kept": ["<ids kept as short-term>"], "archived": ["<ids archived>"], "at": 1765000000.0}
"""

from __future__ import annotations

import uuid

from memoryx.core.events import SESSION_END
from memoryx.core.scope import Scope

END_RUN, IDLE = "end_run", "idle"


def run_is_open(sql, scope: Scope, working: list[dict]) -> bool:
    """Whether the run of `scope` has anything since its last end: turns said, or memories still working."""
    return bool(working) or bool(sql.run_turns(scope, 1))


def end_mark_id(trace_id: str, run_id: str) -> str:
    """The end mark's own id when one pass ends several runs (a raw input is kept once per id)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memoryx-run-end:{trace_id}:{run_id}"))


def mark_ended(sql, scope: Scope, trace_id: str) -> None:
    """The run's end mark: its working turns are cleared (Memory.working_memory), a later end_run sees it ended."""
    sql.save_raw_input(trace_id=trace_id, scope=scope, messages=[], metadata={"run_end": True})


def publish_end(sql, scope: Scope, *, trace_id: str, reason: str, kept: list[str], archived: list[str]) -> dict:
    """One `session.end` for the run of `scope` (see the module docstring for the payload)."""
    return sql.events.publish(SESSION_END, {"reason": reason, "run_id": scope.run_id, "user_id": scope.user_id,
                                            "agent_id": scope.agent_id, "group_id": scope.group_id,
                                            "trace_id": trace_id, "kept": list(kept), "archived": list(archived)})


__all__ = ["END_RUN", "IDLE", "end_mark_id", "mark_ended", "publish_end", "run_is_open"]
