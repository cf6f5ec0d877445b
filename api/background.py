"""In-process consolidation for an embedded `Memory` / `AsyncMemory` (settings.consolidate_in_process).

`memoryx serve` schedules consolidation in its event loop (memoryx.lifecycle.schedule); a `Memory` used inside
an application has no server, so, when asked to, it runs the same cycle in a background thread of its own:
every settings.consolidate_interval_s, one pass per owner of memories in batches of
settings.consolidate_batch_size, each retried as the server retries it (`consolidate_cycle`). The interval's
run is claimed first (`run_claimed`), so two processes on one PostgreSQL run one cycle per interval between
them. A pass takes its owner's scope lock, so it waits for (never runs beside) an add of the same owner.
`close()` stops the thread before the stores close: a pass under way finishes first (close waits for it).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from memoryx.api.consolidation import consolidate
from memoryx.lifecycle.schedule import consolidate_cycle, run_claimed

if TYPE_CHECKING:  # pragma: no cover
    from memoryx.api.memory_core import MemoryCore

log = logging.getLogger(__name__)


class _Passes:
    """What the cycle calls: the core's settings, services and one pass per scope."""

    def __init__(self, core: "MemoryCore"):
        self.settings, self.services, self._core = core.settings, core.services, core

    def consolidate(self, **scope: Any) -> dict:
        return consolidate(self._core, scope.get("user_id"), scope.get("agent_id"), scope.get("run_id"),
                           group_id=scope.get("group_id"))


class InProcessConsolidation:
    """The background thread; `cycles` counts the cycles it ran, `last` is the last cycle's totals."""

    def __init__(self, core: "MemoryCore", interval_s: float):
        self.interval_s = interval_s
        self.cycles = 0
        self.last: dict | None = None
        self._passes = _Passes(core)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memoryx-consolidate", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                mine, totals = run_claimed(self._passes.services.sql, "consolidate", self.interval_s,
                                           lambda: consolidate_cycle(self._passes))
            except Exception as exc:  # noqa: BLE001 - the thread outlives a store that is briefly down
                log.warning("in-process consolidation failed (retried in %g s): %s", self.interval_s, exc)
                continue
            if mine:
                self.cycles += 1
                self.last = totals
                log.info("in-process consolidation cycle: %s", totals)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the pass under way (if any); returns once the thread has ended (or `timeout` passed)."""
        self._stop.set()
        self._thread.join(timeout)


def start_in_process(core: "MemoryCore") -> InProcessConsolidation | None:
    s = core.settings
    if not s.consolidate_in_process or s.consolidate_interval_s <= 0:
        return None
    return InProcessConsolidation(core, s.consolidate_interval_s)


__all__ = ["InProcessConsolidation", "start_in_process"]
