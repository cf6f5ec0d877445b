"""Fusion, context expansion, ranking, optional reranking and the final output of the search graph.

    fuse            recall paths -> one list with a fused relevance in [0, 1] and the paths that found each hit
    expand_context  SQL rows of the candidates (scope, liveness and filters re-checked on the system of record),
                    time / name / "when" boosts, then neighbouring-memory propagation (see search_tuning)
    rank            final score = relevance + importance + recency decay + access frequency (weights from
                    settings), threshold
    rerank          optional: cross-encoder ("cross-encoder:<path>") or chat model (any other spec)
    finalize        limit, mem0-shaped output, and access recording in a background thread (never delays the
                    reply)
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.filters import matches, parse_filters, to_epoch
from memoryx.nodes.search_query import scope_of
from memoryx.nodes.search_tuning import tuning
from memoryx.state import SearchState

log = logging.getLogger(__name__)

PATHS = ("dense", "keyword", "graph", "time")
SOURCE_ORDER = ("dense", "keyword", "graph", "time", "context")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


# ---------------------------------------------------------------------------------------------------- fuse


def _minmax(values: list[float]) -> list[float]:
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return [1.0] * len(values)
    return [(v - lo) / (hi - lo) for v in values]


def fuse_hits(path_hits: dict[str, list[dict]], *, method: str, weights: dict[str, float], rrf_k: int) -> list[dict]:
    """Fuse best-first hit lists. Returns [{"id", "relevance" (0..1), "sources", "path_scores", "payload"}]."""
    fused: dict[str, dict] = {}
    for path in PATHS:
        hits = path_hits.get(path) or []
        if not hits:
            continue
        w = float(weights.get(path, 0.0))
        if method == "weighted":
            contrib = [w * s for s in _minmax([h["score"] for h in hits])]
        else:
            contrib = [w / (rrf_k + rank + 1) for rank in range(len(hits))]
        seen: set[str] = set()
        for h, c in zip(hits, contrib):
            if h["id"] in seen:
                continue
            seen.add(h["id"])
            item = fused.setdefault(h["id"], {"id": h["id"], "relevance": 0.0, "sources": [], "path_scores": {},
                                              "payload": {}})
            item["relevance"] += c
            item["sources"].append(path)
            item["path_scores"][path] = round(float(h["score"]), 6)
            if h.get("payload") and not item["payload"]:
                item["payload"] = h["payload"]
    items = sorted(fused.values(), key=lambda x: -x["relevance"])
    top = items[0]["relevance"] if items else 0.0
    for it in items:
        it["relevance"] = it["relevance"] / top if top > 0 else 0.0
    return items


def fuse(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    settings = services.settings
    t = tuning(settings)
    weights = {"dense": t["weight_dense"], "keyword": t["weight_keyword"], "graph": t["weight_graph"],
               "time": t["weight_time"]}
    method = getattr(settings, "fusion", "rrf") or "rrf"
    if method == "rrf":  # rank fusion: the paths count equally, the period-restricted list half
        weights = {"dense": 1.0, "keyword": 1.0, "graph": 1.0, "time": 0.5}
    fused = fuse_hits({"dense": state.get("dense_hits") or [], "keyword": state.get("keyword_hits") or [],
                       "graph": state.get("graph_hits") or [], "time": state.get("time_hits") or []},
                      method=method, weights=weights, rrf_k=int(getattr(settings, "rrf_k", 60) or 60))
    return {"fused": fused, "timings": {"fuse": _ms(start)}}


# ------------------------------------------------------------------------------------------ expand_context

_TIME_TEXT = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last (night|week|weekend|month|year|summer|winter|spring|fall|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|next (week|weekend|month|year)|"
    r"this (morning|afternoon|evening|week|weekend|month|year)|recently|(19|20)\d{2}|"
    r"(on|last|this|next) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"january|february|march|april|june|july|august|september|october|november|december)\b"
    r"|昨天|前天|今天|明天|上周|上星期|上个月|去年|前年|下周|下个月|明年|\d+\s*年|\d+\s*月|\d+\s*[日号]"
    r"|昨日|一昨日|先週|先月|昨年|来週|来月|来年|今朝|今週",
    re.I,
)


def _name_pattern(name: str) -> re.Pattern:
    if re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", name):
        return re.compile(re.escape(name), re.I)
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.I)


def _mentions(memory: dict, pattern: re.Pattern) -> bool:
    if pattern.search(memory.get("memory") or ""):
        return True
    meta = memory.get("metadata") or {}
    for key in ("name", "speaker", "actor", "author"):
        v = meta.get(key)
        if isinstance(v, str) and pattern.fullmatch(v.strip()):
            return True
    return False


def _epoch(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return to_epoch(value)
    except Exception:
        return None




def neighbours(rows: list[dict], seed_ids: list[str], *, window: int, max_gap_s: float) -> dict[str, list[tuple[int, str]]]:
    """[(distance, id)] of the memories stored just before / after each seed, from `rows` (oldest first, complete
    within max_gap_s of each seed), at most `window` on each side and `max_gap_s` away."""
    pos = {r["id"]: i for i, r in enumerate(rows)}
    times = [_epoch(r["created_at"]) or 0.0 for r in rows]
    out: dict[str, list[tuple[int, str]]] = {}
    for sid in seed_ids:
        i = pos.get(sid)
        if i is None:
            continue
        found: list[tuple[int, str]] = []
        for step in (-1, 1):
            j, dist = i + step, 1
            while 0 <= j < len(rows) and dist <= window and abs(times[j] - times[i]) <= max_gap_s:
                found.append((dist, rows[j]["id"]))
                j += step
                dist += 1
        out[sid] = found
    return out


def _from_payload(mid: str, payload: dict) -> dict:
    """A memory dict from a vector-store payload (the SQL row replaces it before the final ranking)."""
    mem = {"id": mid, "memory": payload.get("text") or "", "metadata": payload.get("metadata") or {},
           "created_at": payload.get("created_at"), "updated_at": payload.get("updated_at"),
           "memory_type": payload.get("memory_type"), "category": payload.get("category"),
           "importance": payload.get("importance"), "hash": payload.get("hash")}
    for k in ("user_id", "agent_id", "run_id"):
        mem[k] = payload.get(k)
    return mem


def expand_context(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    services = services_of(runtime)
    sql = services.sql
    t = tuning(services.settings)
    scope = scope_of(state)
    node = parse_filters(state.get("filters"))
    limit = int(plan["limit"])
    fused = state.get("fused") or []
    pool = [dict(c, sources=list(c["sources"])) for c in fused[: max(4 * int(t["candidate_k"]), 4 * limit)]]

    # memory dicts from the vector payloads (dense/keyword hits; filters were pushed down there). Hits of the
    # graph path alone carry no payload: their SQL rows come with the final fetch (filters checked there).
    cands: list[dict] = []
    for c in pool:
        payload = c.pop("payload", None)
        c["memory"] = _from_payload(c["id"], payload) if payload else None
        cands.append(c)

    # boosts --------------------------------------------------------------------------------------------
    window = plan.get("time_window")
    names = list(dict.fromkeys([e["name"] for e in state.get("graph_entities") or []] + list(plan.get("names") or [])))
    patterns = [_name_pattern(n) for n in names[:8]]
    when = bool(plan.get("when"))
    for c in cands:
        mem = c["memory"]
        if mem is None:
            continue
        bonus = 0.0
        if window:
            ts = _epoch(mem.get("created_at"))
            if ts is not None and window[0] <= ts < window[1]:
                bonus += t["time_bonus"]
        if patterns:
            hit = sum(1 for p in patterns if _mentions(mem, p))
            bonus += t["name_bonus"] * hit / len(patterns)
        if when and _TIME_TEXT.search(mem.get("memory") or ""):
            bonus += t["when_bonus"]
        c["relevance"] += bonus

    # context propagation + the SQL rows, in one statement ---------------------------------------------
    # The system of record decides liveness, scope, filters and access counts of everything returned.
    by_id = {c["id"]: c for c in cands}
    cands.sort(key=lambda x: -x["relevance"])
    keep = max(3 * limit, 30, int(t["rerank_top"]) if plan.get("reranker") else 0)
    weight, win = float(t["context_weight"]), int(t["context_window"])
    gap = float(t["context_max_gap_minutes"]) * 60.0
    types = set(t["context_types"] or ())
    seeds = [c for c in cands[: int(t["context_seeds"])]
             if c["memory"] is not None and (not types or c["memory"].get("memory_type") in types)] \
        if weight > 0 and win > 0 else []
    seed_times = [ts for ts in (_epoch(c["memory"].get("created_at")) for c in seeds) if ts is not None]
    try:
        rows = sql.rows_with_context(scope, [c["id"] for c in cands[:keep]], seed_times, max_gap_s=gap)
    except Exception as exc:  # never fail a search on the context step: plain rows, no propagation
        log.warning("context expansion failed: %s", exc)
        rows, seeds = sql.get_memories([c["id"] for c in cands[:keep]]), []
    truth = {r["id"]: r for r in rows}
    if seeds:
        turns = [r for r in rows if not types or r.get("memory_type") in types]
        adj = neighbours(turns, [c["id"] for c in seeds], window=win, max_gap_s=gap)
        loans: dict[str, float] = {}
        for seed in seeds:
            for dist, mid in adj.get(seed["id"], []):
                loan = weight * seed["relevance"] * float(t["context_decay"]) ** (dist - 1)
                if loan > loans.get(mid, 0.0):
                    loans[mid] = loan
        for mid, loan in loans.items():
            c = by_id.get(mid)
            if c is None:  # found only through its neighbour
                c = by_id[mid] = {"id": mid, "relevance": 0.0, "sources": [], "path_scores": {}, "memory": None}
            c["relevance"] += loan
            c["sources"].append("context")

    out: list[dict] = []
    for c in sorted(by_id.values(), key=lambda x: -x["relevance"]):
        mem = truth.get(c["id"])
        if mem is None or not scope.contains(mem) or not matches(node, mem):
            continue  # deleted since it was projected, outside the scope, or failing the filters
        c["memory"] = mem
        out.append(c)
        if len(out) >= keep:
            break
    top = out[0]["relevance"] if out else 0.0
    for c in out:
        c["relevance"] = c["relevance"] / top if top > 0 else 0.0
    return {"candidates": out, "timings": {"expand_context": _ms(start)}}


# ---------------------------------------------------------------------------------------------------- rank


def recency(mem: dict, half_life_days: float, now: float) -> float:
    ts = _epoch(mem.get("created_at"))
    if ts is None or half_life_days <= 0:
        return 0.0
    age_days = max(0.0, (now - ts) / 86400.0)
    return 0.5 ** (age_days / half_life_days)


def access_score(mem: dict) -> float:
    n = mem.get("access_count") or 0
    return min(1.0, math.log1p(max(0, n)) / math.log1p(50))


def final_scores(cands: list[dict], settings: Any, now: float | None = None) -> None:
    """Set c["score"] = weighted mix of relevance, importance, recency decay and access frequency (0..1)."""
    now = time.time() if now is None else now
    w_rel = float(settings.weight_relevance)
    w_imp = float(settings.weight_importance)
    w_rec = float(settings.weight_recency)
    w_acc = float(settings.weight_access)
    total = w_rel + w_imp + w_rec + w_acc
    if total <= 0:
        w_rel, total = 1.0, 1.0
    half = float(settings.recency_half_life_days)
    for c in cands:
        mem = c["memory"]
        imp = mem.get("importance")
        imp = 0.5 if imp is None else max(0.0, min(1.0, float(imp)))
        c["score"] = (w_rel * c["relevance"] + w_imp * imp + w_rec * recency(mem, half, now)
                      + w_acc * access_score(mem)) / total


def rank(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    cands = list(state.get("candidates") or [])
    final_scores(cands, services.settings)
    cands.sort(key=lambda c: -c["score"])
    threshold = state.get("threshold")
    if threshold is not None:
        cands = [c for c in cands if c["score"] >= float(threshold)]
    keep = max(int(state["plan"]["limit"]), int(tuning(services.settings)["rerank_top"])
               if getattr(services.settings, "reranker", None) else 0)
    return {"ranked": cands[:keep], "timings": {"rank": _ms(start)}}


# -------------------------------------------------------------------------------------------------- rerank

_cross_encoders: dict[str, Any] = {}
_ce_lock = threading.Lock()


def _cross_encoder(path: str):
    with _ce_lock:
        if path not in _cross_encoders:
            from sentence_transformers import CrossEncoder

            _cross_encoders[path] = CrossEncoder(path, device="cpu")
        return _cross_encoders[path]


def _llm_scores(services: Any, spec: str, query: str, texts: list[str]) -> list[float]:
    from langchain_core.messages import HumanMessage, SystemMessage

    from memoryx.models.factory import make_chat_model

    llm = make_chat_model(spec, services.settings)
    listing = "\n".join(f"{i}. {t}" for i, t in enumerate(texts))
    msg = llm.invoke([
        SystemMessage(content="Rate how useful each memory is for answering the question, 0 (useless) to 10 "
                              'Answer JSON only: {"scores": [n, n, ...]} in the order given.'),
        HumanMessage(content=f"Question: {query}\n\nMemories:\n{listing}"),
    ])
    text = msg.content if isinstance(msg.content, str) else json.dumps(msg.content)
    m = re.search(r"\{.*\}", text, re.S)
    scores = json.loads(m.group(0)).get("scores") if m else None
    if not isinstance(scores, list) or len(scores) != len(texts):
        raise ValueError("the reranker model did not return one score per memory")
    return [max(0.0, min(1.0, float(s) / 10.0)) for s in scores]


def rerank(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    spec = getattr(services.settings, "reranker", None) or ""
    ranked = [dict(c) for c in state.get("ranked") or []]
    if not ranked:
        return {"timings": {"rerank": _ms(start)}}
    query = state["plan"]["query"]
    texts = [c["memory"]["memory"] for c in ranked]
    try:
        if spec.startswith("cross-encoder:"):
            raw = _cross_encoder(spec.split(":", 1)[1]).predict([(query, t) for t in texts])
            scores = [1.0 / (1.0 + math.exp(-float(s))) for s in raw]
        else:
            scores = _llm_scores(services, spec, query, texts)
    except Exception as exc:  # keep the fused order
        log.warning("reranker %r failed, keeping the fused ranking: %s", spec, exc)
        return {"timings": {"rerank": _ms(start)}}
    for c, s in zip(ranked, scores):
        c["relevance"] = 0.5 * c["relevance"] + 0.5 * s
        c["sources"] = [*c["sources"], "rerank"]
    final_scores(ranked, services.settings)
    ranked.sort(key=lambda c: -c["score"])
    threshold = state.get("threshold")
    if threshold is not None:
        ranked = [c for c in ranked if c["score"] >= float(threshold)]
    return {"ranked": ranked, "timings": {"rerank": _ms(start)}}


# ------------------------------------------------------------------------------------------------ finalize

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_pending: list[Future] = []


def _access_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryx-access")
            atexit.register(flush_access)
        return _executor


def _record(sql: Any, ids: list[str]) -> None:
    try:
        sql.record_access(ids)
    except Exception as exc:  # a closed store at shutdown, a locked database: never the caller's problem
        log.debug("recording access of %d memories failed: %s", len(ids), exc)


def record_access_later(sql: Any, ids: list[str]) -> Future | None:
    """Queue `sql.record_access(ids)` on a background thread; returns at once."""
    if not ids:
        return None
    fut = _access_executor().submit(_record, sql, list(ids))
    with _executor_lock:
        _pending[:] = [f for f in _pending if not f.done()]
        _pending.append(fut)
    return fut


def flush_access(timeout: float | None = 10.0) -> None:
    """Wait until the queued access records are written (tests, shutdown)."""
    with _executor_lock:
        pending = list(_pending)
    for f in pending:
        try:
            f.result(timeout=timeout)
        except Exception:
            pass


_FIELDS = ("user_id", "agent_id", "run_id", "memory_type", "category")


def format_result(c: dict) -> dict:
    mem = c["memory"]
    out = {
        "id": mem["id"],
        "memory": mem["memory"],
        "score": round(float(c["score"]), 6),
        "sources": [s for s in SOURCE_ORDER if s in c["sources"]] + [s for s in c["sources"] if s not in SOURCE_ORDER],
        "metadata": mem.get("metadata") or {},
        "created_at": mem.get("created_at"),
        "updated_at": mem.get("updated_at"),
        "hash": mem.get("hash"),
    }
    for k in _FIELDS:
        out[k] = mem.get(k)
    return out


def format_relations(relations: list[dict], limit: int, include_invalid: bool) -> list[dict]:
    out: list[dict] = []
    seen: set[tuple] = set()
    for r in relations:
        key = (r.get("source"), r.get("relation"), r.get("target"))
        if key in seen or not r.get("source") or not r.get("target"):
            continue
        seen.add(key)
        item = {"source": r["source"], "relationship": r["relation"], "destination": r["target"]}
        if include_invalid:
            item["valid"] = r.get("valid", True) is not False
        out.append(item)
        if len(out) >= limit:
            break
    return out


def finalize(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state.get("plan") or {}
    if plan.get("empty"):
        return {"result": {"results": [], "relations": []}, "timings": {"finalize": _ms(start)}}
    limit = int(plan.get("limit") or 10)
    ranked = (state.get("ranked") or [])[:limit]
    results = [format_result(c) for c in ranked]
    relations = format_relations(state.get("graph_relations") or [], limit, bool(state.get("include_invalid")))
    if results and state.get("record_access", True):
        record_access_later(services_of(runtime).sql, [r["id"] for r in results])
    return {"result": {"results": results, "relations": relations}, "timings": {"finalize": _ms(start)}}
