"""The in-process event bus: `memory.added / updated / deleted / archived / merged / rolled_back`, and
`session.end` (a run - a conversation - ended: memoryx.lifecycle.sessions), `memory.accessed` (a search's
hits, one event per search) and `schedule.daily` (the daily job ran). docs/memory-model.md shows each
payload with an example.

The SQL store publishes one event per history row it writes, right after the row's transaction commits
(stores/sql/memories.py `_publish`), so every path that changes a memory — the add graph, infer=False adds,
`Memory.update` / `delete`, a rollback — reaches subscribers the same way, and a write that was rolled back
publishes nothing. `Memory.on(event, fn)` subscribes (`"*"` for every event) and returns a handle that
unsubscribes when called.

Subscribers run synchronously in the writer's thread, often while the writer holds the scope lock: keep
them quick and never write memories of the same user from one (hand the work to a queue, as the server's
webhooks do: memoryx.runtime.webhooks). A subscriber that raises is logged and skipped; the write it follows stands.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from memoryx.errors import InvalidInputError

log = logging.getLogger(__name__)

MEMORY_ADDED = "memory.added"
MEMORY_UPDATED = "memory.updated"
MEMORY_DELETED = "memory.deleted"
MEMORY_ARCHIVED = "memory.archived"
MEMORY_MERGED = "memory.merged"
MEMORY_ROLLED_BACK = "memory.rolled_back"
# not about one memory: published with `publish` and their own payload
SESSION_END = "session.end"  # a run ended (end_run, or idle past the setting): once per run, never per add
MEMORY_ACCESSED = "memory.accessed"  # one per search with hits: the ids recalled, batched
SCHEDULE_DAILY = "schedule.daily"  # the daily job ran: what it found and did
EVENTS = (MEMORY_ADDED, MEMORY_UPDATED, MEMORY_DELETED, MEMORY_ARCHIVED, MEMORY_MERGED, MEMORY_ROLLED_BACK,
          SESSION_END, MEMORY_ACCESSED, SCHEDULE_DAILY)
ANY = "*"

# history row event -> bus event. Consolidation's events (memoryx.stores.sql.lifecycle) map onto the six:
# a summary is a new memory, the survivor of a merge and a summarised source are updated ones.
_HISTORY_EVENTS = {
    "ADD": MEMORY_ADDED, "SUMMARY": MEMORY_ADDED,
    "UPDATE": MEMORY_UPDATED, "MERGE": MEMORY_UPDATED, "SUMMARIZED": MEMORY_UPDATED, "RESTORE": MEMORY_UPDATED,
    "DELETE": MEMORY_DELETED, "ARCHIVE": MEMORY_ARCHIVED, "MERGED": MEMORY_MERGED, "ROLLBACK": MEMORY_ROLLED_BACK,
}

Subscriber = Callable[[dict], Any]


def history_event(history_event_name: str) -> str:
    """The bus event of a history row's event name (unknown names count as updates)."""
    return _HISTORY_EVENTS.get(history_event_name, MEMORY_UPDATED)


class EventBus:
    """Subscribers per event name. Thread-safe; emit never raises because of a subscriber."""

    def __init__(self) -> None:
        self._subs: dict[str, list[Subscriber]] = {}
        self._lock = threading.Lock()

    def on(self, event: str, fn: Subscriber) -> Callable[[], None]:
        """Call `fn(payload)` after each `event` (one of EVENTS, or "*"). Returns the unsubscribe handle."""
        if event != ANY and event not in EVENTS:
            raise InvalidInputError(f"Unknown event {event!r}; use one of {', '.join(EVENTS)} or '*'.")
        if not callable(fn):
            raise InvalidInputError(f"The subscriber of {event!r} must be callable, got {type(fn).__name__}.")
        with self._lock:
            self._subs.setdefault(event, []).append(fn)

        def unsubscribe() -> None:
            with self._lock:
                subs = self._subs.get(event) or []
                if fn in subs:
                    subs.remove(fn)

        return unsubscribe

    def emit(self, event: str, *, memory: dict, previous_memory: str | None = None, trace_id: str | None = None,
             actor: str | None = None) -> dict:
        """Deliver one event to its subscribers and the "*" ones, in subscription order. Returns the payload."""
        payload = {
            "event": event, "memory_id": memory.get("id"), "memory": memory.get("memory"),
            "previous_memory": previous_memory, "trace_id": trace_id, "actor": actor,
            "user_id": memory.get("user_id"), "agent_id": memory.get("agent_id"), "run_id": memory.get("run_id"),
            "status": memory.get("status"), "deleted": bool(memory.get("deleted_at")), "at": time.time(),
        }
        return self._deliver(event, payload)

    def publish(self, event: str, payload: dict) -> dict:
        """Deliver an event that is not about one memory (session.end, memory.accessed, schedule.daily)."""
        payload = {"event": event, **payload, "at": time.time()}
        return self._deliver(event, payload)

    def _deliver(self, event: str, payload: dict) -> dict:
        with self._lock:
            subs = list(self._subs.get(event) or ()) + list(self._subs.get(ANY) or ())
        for fn in subs:
            try:
                fn(dict(payload))  # a copy each: one subscriber cannot change what the next one sees
            except Exception:  # noqa: BLE001 - a subscriber never breaks the write it follows
                log.exception("event subscriber %r failed on %s", fn, event)
        return payload

    def subscriber_count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._subs.values())
