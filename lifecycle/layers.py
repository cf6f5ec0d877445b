"""Memory layers: working, short-term, long-term.

- working: a memory written in a run (its scope has a run_id) while the run is open. When the run ends
  (`Memory.end_run`, or a consolidation pass finds the run idle for settings.working_memory_ttl_hours) each
  working memory is kept as short-term when it mattered (importance >= working_keep_importance, or it was
  recalled) and archived otherwise (restorable, never deleted).
- short-term: every other memory until promoted.
- long-term: a short-term memory recalled >= promote_access times or of importance >= promote_importance
  (a consolidation pass promotes it), at most long_term_cap per owner: beyond it the least important go back
  to short-term.
- short-term holds what was used within short_term_window_days, at most short_term_cap per owner: what
  leaves it is folded into a long-term note and archived (memoryx.lifecycle.folding), never dropped.

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


def _rank(m: dict) -> tuple:
    """Lowest first: what a full layer gives up first (least important, least recalled, longest unused)."""
    return (float(m.get("importance") or 0.0), int(m.get("access_count") or 0), last_used(m) or 0.0, m["id"])


def layer_caps(memories: list[dict], now: float, *, promoted: set[str], skip: set[str], window_days: float,
               short_cap: int, long_cap: int) -> tuple[list[dict], list[dict]]:
    """The layers' windows and caps over one owner's memories: (demotions [{"id", "layer", "reason"}],
    expired short-term memories [{"id", "text", "reason"}] to fold and archive).

    Long-term holds at most `long_cap` (after this pass's promotions): the lowest ranked beyond it go back
    to short-term. Short-term holds what was used in the last `window_days` (0: no window), at most
    `short_cap` of them (0: no cap): the rest leave it. Immutable memories and summaries never move."""
    live = [m for m in memories if m["status"] not in _SKIP and m["id"] not in skip
            and not (m.get("metadata") or {}).get("immutable")]
    movable = [m for m in live if not (m.get("metadata") or {}).get("abstraction")]
    long_term = [m for m in movable if layer_of(m) == LONG_TERM or m["id"] in promoted]
    demoted = []
    if long_cap and len(long_term) > long_cap:
        for m in sorted(long_term, key=_rank)[:len(long_term) - long_cap]:
            demoted.append({"id": m["id"], "layer": SHORT_TERM,
                            "reason": f"long-term holds {long_cap}: the least important (importance "
                                      f"{m.get('importance')}, {m.get('access_count') or 0} recalls) goes back to short-term"})
    gone = {d["id"] for d in demoted}
    short = [m for m in movable if layer_of(m) == SHORT_TERM and m["id"] not in promoted and m["id"] not in gone
             and m.get("status") != "summarized"]
    expired: dict[str, str] = {}
    if window_days > 0:
        for m in short:
            idle = (now - (last_used(m) or now)) / 86400.0
            if idle > window_days:
                expired[m["id"]] = f"short-term window: unused for {idle:.0f} days > {window_days:g}"
    rest = [m for m in short if m["id"] not in expired]
    if short_cap and len(rest) > short_cap:
        for m in sorted(rest, key=_rank)[:len(rest) - short_cap]:
            expired[m["id"]] = f"short-term holds {short_cap}: the least important leaves it"
    by_id = {m["id"]: m for m in short}
    return demoted, [{"id": i, "text": by_id[i]["memory"], "reason": why} for i, why in expired.items()]


__all__ = ["LAYERS", "WORKING", "SHORT_TERM", "LONG_TERM", "layer_of", "promotions", "close_run", "idle_runs",
           "layer_caps", "layer_counts"]


def layer_counts(memories) -> dict[str, int]:
    """{layer: live memories in it} (merged and archived ones left out): the layer gauges a metrics
    endpoint can export, per owner or over any listing of memory rows."""
    counts = dict.fromkeys(LAYERS, 0)
    for m in memories:
        if (m.get("status") or "active") not in _SKIP:
            counts[layer_of(m)] += 1
    return counts
