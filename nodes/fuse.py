"""fuse: the recall paths' best-first lists -> one list with a fused relevance in [0, 1] and the paths that
found each hit ("sources"). The first stage of the rank node (nodes/rank.py).

Weighted fusion (MEMORYX_FUSION=weighted, the default) min-max normalises each path's scores and sums them
with the path weights of MEMORYX_SEARCH_TUNING; reciprocal-rank fusion (rrf) sums weight / (rrf_k + rank),
every path counting alike and the period-restricted list half.

Min-max takes a list's last hit as the floor: right for a full list, whose end is where matching gives out,
wrong for a path that found fewer hits than it was asked for. A keyword search that matched two memories of a
small store has no non-match at its end, and min-max would give the second hit - "night shifts" for "What
shifts am I working?" - no keyword credit at all. The paths that return only matches (keyword, graph,
preference) are therefore scaled by their best score alone when their list is short; the similarity paths
(dense, multilingual, time) rank every memory and keep min-max. The bridge between languages
(crosslingual) comes scored against a floor of its own and is taken as it is.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.runtime.context import Context
from memoryx.search.state import RankState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

PATHS = ("dense", "multilingual", "crosslingual", "keyword", "graph", "time", "preference")
RRF_WEIGHTS = {"dense": 1.0, "multilingual": 1.0, "crosslingual": 1.0, "keyword": 1.0, "graph": 1.0, "time": 0.5,
               "preference": 0.5}
MATCH_PATHS = frozenset({"keyword", "graph", "preference"})  # every hit matched; a short list ran out of matches
ABSOLUTE_PATHS = frozenset({"crosslingual"})  # scores already on [0, 1] against a floor (search/crosslingual.py)


def _minmax(values: list[float], floor: float | None = None) -> list[float]:
    if not values:
        return []
    lo, hi = (min(values) if floor is None else floor), max(values)
    if hi - lo < 1e-12:
        return [1.0] * len(values)
    return [max(0.0, (v - lo) / (hi - lo)) for v in values]


def fuse_hits(path_hits: dict[str, list[dict]], *, method: str, weights: dict[str, float], rrf_k: int,
              asked: int | None = None) -> list[dict]:
    """Fuse best-first hit lists (`asked`: the hits each path was asked for; a match path that returned fewer
    is scaled from 0, not from its last hit). Returns [{"id", "relevance" (0..1), "sources", "path_scores",
    "payload"}]."""
    fused: dict[str, dict] = {}
    for path in PATHS:
        hits = path_hits.get(path) or []
        if not hits:
            continue
        w = float(weights.get(path, 0.0))
        short = path in MATCH_PATHS and asked is not None and len(hits) < asked
        norm = [float(h["score"]) for h in hits] if path in ABSOLUTE_PATHS else \
            _minmax([h["score"] for h in hits], floor=0.0 if short else None)
        if method == "weighted":
            contrib = [w * n for n in norm]
        else:
            contrib = [w / (rrf_k + rank + 1) for rank in range(len(hits))]
        seen: set[str] = set()
        for rank, (h, c, n) in enumerate(zip(hits, contrib, norm)):
            if h["id"] in seen:
                continue
            seen.add(h["id"])
            item = fused.setdefault(h["id"], {"id": h["id"], "relevance": 0.0, "sources": [], "path_scores": {},
                                              "payload": {}, "path_ranks": {}, "path_norm": {}})
            item["relevance"] += c
            item["sources"].append(path)
            item["path_scores"][path] = round(float(h["score"]), 6)
            item["path_ranks"][path] = rank  # the fitted ranking reads each path's rank and scaled score
            item["path_norm"][path] = float(n)
            if h.get("covers"):  # the best hit of one event of a two-event question (memoryx.search.events)
                item["covers"] = sorted(set(item.get("covers") or ()) | set(h["covers"]))
            if h.get("payload") and not item["payload"]:
                item["payload"] = h["payload"]
    items = sorted(fused.values(), key=lambda x: -x["relevance"])
    top = items[0]["relevance"] if items else 0.0
    for it in items:
        it["relevance"] = it["relevance"] / top if top > 0 else 0.0
    return items


def fuse(state: RankState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    t = plan.tuning
    if plan.fusion == "rrf":
        weights = RRF_WEIGHTS
    else:
        weights = {"dense": t.weight_dense if plan.encoder_reads_query else t.weight_dense_unread,
                   # what the main encoder cannot read, the multilingual one reads in its place
                   "multilingual": t.weight_dense, "crosslingual": t.weight_crosslingual,
                   "keyword": t.weight_keyword, "graph": t.weight_graph,
                   "time": t.weight_time, "preference": t.weight_time}
    fused = fuse_hits({"dense": state.get("dense_hits") or [], "multilingual": state.get("multilingual_hits") or [],
                       "crosslingual": state.get("crosslingual_hits") or [],
                       "keyword": state.get("keyword_hits") or [],
                       "graph": state.get("graph_hits") or [], "time": state.get("time_hits") or [],
                       "preference": state.get("preference_hits") or []},
                      method=plan.fusion, weights=weights, rrf_k=plan.rrf_k, asked=plan.candidate_k)
    return {"fused": fused, "timings": {"fuse": elapsed_ms(start)}}
