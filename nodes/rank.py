"""rank: the ranking stage of the search graph and its last node - fusion (nodes/fuse.py), the SQL rows and
their neighbouring context (nodes/expand_context.py), the final score (`score` below), the reranker
(nodes/rerank.py) when the plan names one, and the mem0-shaped result (nodes/finalize.py).

Why one node and not five: these stages always run one after the other, each needing the last one's output,
and every LangGraph step costs ~0.3-0.5 ms of CPU in the caller's thread (task preparation, writes, channel
updates, a conditional edge's state read) - about a tenth of a search. Each stage stays its own function
returning partial state, in its own module, and reports its own time in `timings`; only `result` (and the
timings) leave the node.

score: the fitted model's relevance over each candidate's signals (memoryx.search.ranker; the hand-weighted order
and its rules with the tuning knob ranker="hand"; where the scope holds the multilingual index, the candidates'
stored multilingual vectors are read for the language-centred signal, memoryx.search.centered, and their stored
companion vectors for the companion encoder's cosine, memoryx.stores.vectors.companion), blended with
importance, recency decay and access frequency (memoryx.search.scoring, weights from the settings), then the
threshold and the query's period as a filter (memoryx.search.periods). Keeps `limit` hits, or the reranker's
`rerank_top` when a reranker is configured.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import numpy as np

from memoryx.core.runs import elapsed_ms
from memoryx.errors import StoreUnavailableError
from memoryx.nodes.expand_context import expand_context
from memoryx.nodes.finalize import finalize
from memoryx.nodes.fuse import fuse
from memoryx.nodes.rerank import rerank
from memoryx.runtime.context import Context, services_of
from memoryx.search.centered import centered_cosines
from memoryx.search.current import has_ended, newer_on_topic_first, prefer_latest, superseded_last
from memoryx.search.events import covering_first
from memoryx.search.periods import by_period, in_period
from memoryx.search.ranker import feature_matrix, fitted_model, tracing
from memoryx.search.relations import about_someone_else
from memoryx.search.scoring import final_scores, ordered
from memoryx.search.spread import session_of, spread
from memoryx.search.state import RankState, SearchState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)
_WARNED: set[str] = set()  # the sidecar indexes whose unreadable vectors were said (once a process, not a search)


def score(state: RankState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    settings = services_of(runtime).settings
    cands = list(state.get("candidates") or [])
    companion = services_of(runtime).vectors.companion is not None
    model = fitted_model(companion) if plan.tuning.ranker == "fitted" else None
    traces = tracing()
    now = plan.now if plan.now is not None else time.time()
    featured = model is not None or traces is not None
    if featured:
        _language_centered(cands, state, runtime)
        _companion_cosines(cands, state, runtime)
    rows = feature_matrix(cands, plan, settings, now) if featured else None
    if model is None or traces is not None:
        ranked = _hand_ranked(cands, plan, settings)
        if traces is not None:
            traces.append({"query": plan.query, "ids": [c["id"] for c in cands], "features": rows.tolist(),
                           "texts": [c["memory"].get("memory") or "" for c in cands],
                           "metadata": [c["memory"].get("metadata") or {} for c in cands],
                           "hand": [c["id"] for c in ranked], **_replay_inputs(cands, plan, now)})
    if model is not None:
        for c, rel in zip(cands, model.relevance(rows)):
            c["relevance"] = rel
        final_scores(cands, settings, now=plan.now)  # the seeds' blend with importance, recency and access
        ranked = superseded_last(ordered(cands, None), plan.now)
    if plan.threshold is not None:
        ranked = [c for c in ranked if c["score"] >= plan.threshold]
    keep = max(plan.limit, plan.tuning.rerank_top if plan.reranker else 0)
    return {"ranked": by_period(plan, ranked)[:keep], "timings": {"rank": elapsed_ms(start)}}


def _language_centered(cands: list[dict], state: RankState, runtime: Runtime[Context]) -> None:
    """Each candidate's language-centred similarity to the question (memoryx.search.centered), where the scope holds
    the multilingual index and the search embedded the question for it."""
    if not state["plan"].multilingual:
        return
    vectors = state.get("query_vectors")
    read = _stored_and_query(services_of(runtime).vectors.multilingual, vectors, cands, "multilingual",
                             "the language-centred signal")
    if read is None:
        return
    stored, query = read  # the query's vector: the one the multilingual paths searched with (cached)
    by_id = {c["id"]: c for c in cands}
    texts = {mid: by_id[mid]["memory"].get("memory") or "" for mid in stored}
    for mid, value in centered_cosines(query, vectors.text, stored, texts).items():
        by_id[mid]["centered"] = value


def _companion_cosines(cands: list[dict], state: RankState, runtime: Runtime[Context]) -> None:
    """Each candidate's cosine to the question under the companion encoder (memoryx.stores.vectors.companion)."""
    read = _stored_and_query(services_of(runtime).vectors.companion, state.get("query_vectors"), cands, "companion",
                             "their signal")
    if read is None:
        return
    stored, query = read
    ids = list(stored)
    cosines = np.asarray([stored[i] for i in ids], dtype=np.float32) @ np.asarray(query, dtype=np.float32)
    by_id = {c["id"]: c for c in cands}
    for mid, value in zip(ids, cosines.tolist()):
        by_id[mid]["companion"] = value


def _stored_and_query(index, vectors, cands: list[dict], name: str, signal: str) -> tuple[dict, list[float]] | None:
    """A sidecar index's stored vectors of the candidates and its encoder's vector of the question, or None when
    the index is off, the search embedded nothing, or no candidate has a vector there. The ids are the candidates
    expand_context read from SQL within the caller's scope, so the vectors read are that scope's. A store or
    encoder that fails here costs the signal (it reads 0), never the search; said once a process per index."""
    if index is None or vectors is None or not cands:
        return None
    try:
        stored = index.vectors([c["id"] for c in cands])
        return (stored, vectors.of(index.embeddings)) if stored else None
    except StoreUnavailableError as exc:
        if name not in _WARNED:
            _WARNED.add(name)
            log.warning("the %s vectors could not be read; searches rank without %s until they can: %s", name,
                        signal, exc)
        return None


def _replay_inputs(cands: list[dict], plan, now: float) -> dict:
    """What a trace needs to replay the steps after the model (superseded_last, by_period): which candidates
    had ended by `now`, and, when the query names a period that filters, which fall inside it; each candidate's
    day and whether the question gathers across sessions (what bench/recall/fit_spread.py spreads by)."""
    ended = [has_ended(c["memory"], now) for c in cands]
    inside = [in_period(plan, c["memory"]) for c in cands] if plan.period_filter is not None else None
    return {"ended": ended, "period_filter": plan.period_filter, "in_window": inside,
            "days": [session_of(c["memory"]) for c in cands], "aggregate": plan.aggregate}


def _hand_ranked(cands: list[dict], plan, settings) -> list[dict]:
    """The hand-weighted order: relevance with the tuning's bonuses, importance, recency and access by the
    settings' weights, and the present-tense, aggregation and two-event rules (memoryx.search.tuning)."""
    if plan.current or plan.current_value:  # how things stand now: the latest of the close candidates first,
        # a relation that ended below those that hold (memoryx.search.current)
        prefer_latest(cands, plan.tuning.current_bonus, plan.current_value, newest=plan.current,
                      statements=plan.one_relation or plan.still)
    newer_on_topic_first(cands, plan.now_topic, plan.tuning.current_bonus, about_someone_else)
    final_scores(cands, settings, now=plan.now)
    ranked = superseded_last(ordered(cands, None), plan.now)
    if plan.aggregate:  # gathered across sessions: a crowded session yields its place (memoryx.search.spread)
        ranked = spread(ranked, plan.tuning.session_spread)
    if plan.tuning.event_cover:  # a two-event question: each event's best hit near the top (memoryx.search.events)
        ranked = covering_first(ranked)
    return ranked


STAGES = (fuse, expand_context, score)


def rank(state: SearchState, runtime: Runtime[Context]) -> dict:
    view = RankState(**state)  # each stage reads what the stages before it wrote
    timings: dict = {}

    def run(stage) -> None:
        part = stage(view, runtime)
        timings.update(part.pop("timings", {}))
        view.update(part)

    if not view["plan"].empty:  # nothing searched: finalize returns the empty result
        for stage in STAGES:
            run(stage)
        if view["plan"].reranker and view.get("ranked"):
            run(rerank)
    run(finalize)
    return {"result": view["result"], "timings": timings}
