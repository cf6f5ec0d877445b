"""Recovery and upkeep: what brings the stores back in step after a crash, without anyone asking.

- `recover_projections(services)` runs when services are built: a graph whose embedded server stopped
  uncleanly is rebuilt from SQL; the projection outbox (written in the same transaction as each SQL change)
  is replayed; then the graph's counts are compared with SQL's and the graph is rebuilt when they differ.
- `replay_outbox(services)` replays the outbox until it is empty; `memoryx serve` also runs it periodically
  (memoryx.lifecycle.schedule.replay_loop), so a projection that failed (a store briefly down) converges
  without a restart.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

_BATCH = 500


def replay_outbox(services: Any, *, min_age_s: float = 0.0) -> int:
    """Replay the outbox until it is empty or a batch makes no progress. Returns the jobs completed."""
    total = 0
    while True:
        done = services.projector.retry_pending(_BATCH, min_age_s=min_age_s)
        total += done
        if done < _BATCH:
            return total


def recover_projections(services: Any, *, reconcile_graph: bool = True) -> dict:
    """Start-up recovery of the projections (see the module docs). Never raises: a store still down leaves
    the jobs queued for the periodic replay, the next start or `memoryx reindex`. `reconcile_graph=False` (a
    process that only searches) skips the comparison of the graph's counts with SQL's."""
    report: dict[str, Any] = {"graph_rebuilt": None, "replayed": 0}
    try:
        falkordb = services.falkordb
        if falkordb is not None and falkordb.recovered_unclean:
            # a graph server that died without a clean shutdown may miss its last second of writes
            log.warning("embedded FalkorDB stopped uncleanly last time; rebuilding the graph from SQL")
            report["graph_rebuilt"] = services.projector.rebuild_graph()
        report["replayed"] = replay_outbox(services)
        if report["replayed"]:
            log.info("replayed %d pending projection writes", report["replayed"])
        if report["graph_rebuilt"] is None and reconcile_graph:
            report["graph_rebuilt"] = services.projector.reconcile_graph()
    except Exception as exc:  # noqa: BLE001 - recovery must not stop the stores from opening
        log.warning("pending projection writes could not be replayed yet: %s", exc)
        report["error"] = repr(exc)
    return report
