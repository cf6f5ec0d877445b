"""Memory layers: working, short-term, long-term.

- working: a memory written in a run (its scope has a run_id) while the run is open. When the run ends
  (`Memory.end_run`, or a consolidation pass finds the run idle for settings.working_memory_ttl_hours) each
  working memory is kept as short-term when it mattered (importance >= working_keep_importance, or it was
  recalled) and archived otherwise (restorable, never deleted).
- short-term: every other memory until promoted.
- long-term: a short-term memory recalled >= promote_access times or of importance >= promote_importance
  (a consolidation pass promotes it).

The layer is stored in the memory's metadata ("layer"); a memory without one is working when it has a
run_id and short-term otherwise, so nothing written before layers existed needs a migration.
"""

from __future__ import annotations

from memoryx.lifecycle.forgetting import last_used

WORKING, SHORT_TERM, LONG_TERM = "working", "short_term", "long_term"
LAYERS = (WORKING, SHORT_TERM, LONG_TERM)
_SKIP = ("merged", "archived")


def layer_of(memory: dict) -> str:
    layer = (memory.get("metadata") or {}).get("layer")
    if layer in LAYERS:
        return layer
    return WORKING if memory.get("run_id") else SHORT_TERM


def promotions(memories: list[dict], *, min_access: int, min_importance: float, skip: set[str] = frozenset()) -> list[dict]:
    """Short-term memories that become long-term: [{"id", "layer", "reason"}]."""
    out = []
    for m in memories:
        if m["status"] in _SKIP or m["id"] in skip or layer_of(m) != SHORT_TERM:
            continue
        access, importance = int(m.get("access_count") or 0), float(m.get("importance") or 0.0)
        if access >= min_access or importance >= min_importance:
            why = (f"recalled {access} times >= {min_access}" if access >= min_access
                   else f"importance {importance} >= {min_importance}")
            out.append({"id": m["id"], "layer": LONG_TERM, "reason": f"short-term -> long-term: {why}"})
    return out


def close_run(memories: list[dict], *, keep_importance: float, why: str,
              skip: set[str] = frozenset()) -> tuple[list[dict], list[dict]]:
    """The working memories of an ended run: (kept as short-term [{"id", "layer", "reason"}], archived
    [{"id", "text", "reason"}])."""
    kept, archived = [], []
    for m in memories:
        if m["status"] in _SKIP or m["id"] in skip or layer_of(m) != WORKING:
            continue
        access, importance = int(m.get("access_count") or 0), float(m.get("importance") or 0.0)
        if importance >= keep_importance or access > 0:
            kept.append({"id": m["id"], "layer": SHORT_TERM,
                         "reason": f"{why}; working -> short-term (importance {importance}, {access} accesses)"})
        else:
            archived.append({"id": m["id"], "text": m["memory"],
                             "reason": f"{why}; working memory of importance {importance} never recalled: archived"})
    return kept, archived


def idle_runs(memories: list[dict], now: float, ttl_hours: float) -> set[str]:
    """Run ids whose working memories were all last used more than `ttl_hours` before `now` (0: never)."""
    if ttl_hours <= 0:
        return set()
    latest: dict[str, float] = {}
    for m in memories:
        if m.get("run_id") and layer_of(m) == WORKING and m["status"] not in _SKIP:
            used = last_used(m) or now
            latest[m["run_id"]] = max(latest.get(m["run_id"], 0.0), used)
    return {run for run, t in latest.items() if (now - t) > ttl_hours * 3600.0}


__all__ = ["LAYERS", "WORKING", "SHORT_TERM", "LONG_TERM", "layer_of", "promotions", "close_run", "idle_runs"]
