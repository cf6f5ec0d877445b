"""The fitted ranking: each candidate's generic signals -> one score, with weights fitted on data.

The recall paths and the rank node's first stages gather, for every candidate, signals that do not depend on
how a question is phrased: each path's scaled score and rank (dense, multilingual, cross-lingual, BM25, graph
walk, the query's period, preferences), the context a neighbouring hit lends, recency, importance, access,
validity, whether a later memory of the same owner says nearly the same thing, length, memory type, the side of
a chat that said it, and the signals the query analysis reads from the question and the memory (a named
period, a name, a place, a figure...). `features` turns them into one vector; a logistic model over it,
`sigmoid(scale x (w . x) + bias)`, gives each candidate's relevance (scaled so the best is 1), which the seeds'
final score blends with importance, recency and access by the settings' weights
(memoryx.search.scoring.final_scores), so those knobs and a caller's `threshold` keep their meaning.

The weights are data (`ranker_model.json` beside this module), written by `bench/recall/fit_ranker.py` from the
shared dev sets (a pairwise logistic model per question, then the scale and bias calibrated pointwise); this
module only reads them. A feature the file does not name weighs 0; a name the file has and this module does not
compute is refused at load, so a model and the code that feeds it cannot drift apart silently.

A trace of every search's candidates and their features can be collected (`collect_traces`), which is how the
fitting script sees what the ranking saw, through the public API and its defaults.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memoryx.search.access import today
from memoryx.search.scoring import access_score, decay, epoch_of, event_time

MODEL_FILE = Path(__file__).with_name("ranker_model.json")

PATHS = ("dense", "multilingual", "crosslingual", "keyword", "graph", "time", "preference")
# what the query analysis and expand_context read from a question and a memory together (nodes/expand_context.py)
MATCH_SIGNALS = ("in_period", "names", "when_time", "amount", "preference", "role", "someone_else", "own_not_theirs",
                 "relation", "naming", "attribute")
BEST = 8  # "later among the best": the place in time among the best candidates by the pool's order
STATEMENT_CHARS = 300  # a later memory saying nearly the same thing: compared among fact-sized texts only
NEWER_TOP = 30  # ... of the best candidates by the pool's order (pairs cost ~5 us each)
SIMILAR = 0.25  # word overlap (Jaccard) from which a later memory may say the same thing anew

# the seeds' factors of the final score, weighted by the settings (MEMORYX_WEIGHT_*), not fitted: the model gives the
# relevance they are blended with (memoryx.search.scoring.final_scores); a model weight for them is refused
BLEND = ("recency", "importance", "access")

FEATURES: tuple[str, ...] = (
    *(f"{p}_score" for p in PATHS), *(f"{p}_rr" for p in PATHS), "dense_cosine", "multilingual_cosine", "context",
    *MATCH_SIGNALS,
    "recency", "importance", "access", "length", "episodic", "superseded", "summarized",
    "newer_similar", "later_in_time", "later_among_best", "current_x_later", "current_x_later_among_best",
    "current_x_newer_similar", "current_x_ended", "dense_unread",
    "other_side", "covers",
)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".,!?;:()\"'“”‘’。，！？、") for w in text.lower().split()) - {""}


def _newer_similar(cands: list[dict]) -> dict[int, float]:
    """For each fact-sized candidate among the best NEWER_TOP, the largest word overlap with a later one (same
    owner, later event): 'superseded by something newer' as a signal, whatever words say the change."""
    top = [c for c in cands[:NEWER_TOP] if len(c["memory"].get("memory") or "") <= STATEMENT_CHARS]
    facts = [(c, event_time(c["memory"]), _words(c["memory"].get("memory") or ""),
              c["memory"].get("user_id") or c["memory"].get("agent_id")) for c in top]
    out: dict[int, float] = {}
    for c, ts, words, owner in facts:
        if ts is None or not words:
            continue
        best = 0.0
        for other, ts2, words2, owner2 in facts:
            if other is c or ts2 is None or ts2 <= ts or owner2 != owner or not words2:
                continue
            overlap = len(words & words2) / len(words | words2)
            best = max(best, overlap)
        if best >= SIMILAR:
            out[id(c)] = best
    return out


def features(cands: list[dict], plan, settings, now: float) -> list[list[float]]:
    """One feature vector (FEATURES' order) per candidate (their `memory` rows read); cands best first by the
    pool's order."""
    half = float(settings.recency_half_life_days)
    day = today()  # the clock's day, as final_scores reads accesses
    times = [event_time(c["memory"]) for c in cands]
    known = [t for t in times if t is not None]
    lo, span = (min(known), max(known) - min(known)) if known else (0.0, 0.0)
    newer = _newer_similar(cands)
    best = [t for t in times[:BEST] if t is not None]
    best_lo, best_span = (min(best), max(best) - min(best)) if best else (0.0, 0.0)
    current = 1.0 if (plan.current or plan.current_value or plan.still) else 0.0
    # the main encoder's similarity to a question in a script it was not trained on is close to noise
    reads = 1.0 if plan.encoder_reads_query else 0.0
    rows = []
    for i, (c, ts) in enumerate(zip(cands, times)):
        mem, sig = c["memory"], c.get("signals") or {}
        norm, ranks = c.get("path_norm") or {}, c.get("path_ranks") or {}
        text = mem.get("memory") or ""
        imp = mem.get("importance")
        ended_at = epoch_of(mem.get("invalid_at"))
        later = (ts - lo) / span if ts is not None and span > 0 else 0.0
        later_best = (ts - best_lo) / best_span if i < BEST and ts is not None and best_span > 0 else 0.0
        similar = newer.get(id(c), 0.0)
        said = (mem.get("metadata") or {}).get("role")
        row = [float(norm.get(p, 0.0)) * (reads if p == "dense" else 1.0) for p in PATHS]
        row += [(1.0 / (1.0 + ranks[p]) if p in ranks else 0.0) * (reads if p == "dense" else 1.0) for p in PATHS]
        raw = c.get("path_scores") or {}  # the similarity itself, comparable across questions
        row += [float(raw.get("dense", 0.0)) * reads, float(raw.get("multilingual", 0.0))]
        row.append(float(sig.get("context", 0.0)))
        row += [float(sig.get(s, 0.0)) for s in MATCH_SIGNALS]
        row += [decay(ts, half, now), 0.5 if imp is None else max(0.0, min(1.0, float(imp))), access_score(mem, day),
                min(1.0, math.log1p(len(text)) / math.log1p(2000)),
                1.0 if mem.get("memory_type") == "episodic" else 0.0,
                1.0 if ended_at is not None and ended_at <= now else 0.0,
                1.0 if mem.get("status") == "summarized" else 0.0,
                similar, later, later_best, current * later, current * later_best, current * similar,
                current * (1.0 if c.get("ended") else 0.0), float(norm.get("dense", 0.0)) * (1.0 - reads),
                1.0 if plan.role is not None and said and said != plan.role else 0.0,
                1.0 if c.get("covers") else 0.0]
        rows.append(row)
    return rows


@dataclass(frozen=True)
class FittedModel:
    weights: tuple[float, ...]  # FEATURES' order
    scale: float
    bias: float
    source: str  # what it was fitted on, as the file says

    def scores(self, rows: list[list[float]]) -> list[float]:
        out = []
        for row in rows:
            z = self.scale * sum(w * x for w, x in zip(self.weights, row)) + self.bias
            out.append(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))
        return out


def model_from(data: dict) -> FittedModel:
    """A model from the file's JSON: {"features": {name: weight}, "scale", "bias", "fitted_on"}; a feature this
    module does not compute, or one of the blended factors, is an error (the file and the code disagree)."""
    weights = data.get("features") or {}
    unknown = sorted(set(weights) - set(FEATURES) | (set(weights) & set(BLEND)))
    if unknown:
        raise ValueError(f"ranker model names features this code does not compute: {unknown}; refit it with "
                         "bench/recall/fit_ranker.py")
    return FittedModel(weights=tuple(float(weights.get(f, 0.0)) for f in FEATURES),
                       scale=float(data.get("scale", 1.0)), bias=float(data.get("bias", 0.0)),
                       source=str(data.get("fitted_on", "")))


@lru_cache(maxsize=1)
def fitted_model() -> FittedModel | None:
    """The shipped model, None when the package has none (the hand-weighted order then stands)."""
    if not MODEL_FILE.exists():
        return None
    return model_from(json.loads(MODEL_FILE.read_text(encoding="utf-8")))


# -------------------------------------------------------------------------------------------- traces

_TRACES: ContextVar[list | None] = ContextVar("memoryx_ranking_traces", default=None)


@contextmanager
def collect_traces() -> Iterator[list[dict]]:
    """Within the block, every search appends {"query", "ids", "features", "hand"} (the candidates in the pool's
    order, their feature vectors, and the hand-weighted score of each) to the yielded list."""
    traces: list[dict] = []
    token = _TRACES.set(traces)
    try:
        yield traces
    finally:
        _TRACES.reset(token)


def tracing() -> list | None:
    return _TRACES.get()
