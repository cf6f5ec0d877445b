"""The fitted ranking: each candidate's generic signals -> one score, with weights fitted on data.

The recall paths and the rank node's first stages gather, for every candidate, signals that do not depend on how a
question is phrased: each path's scaled score and rank (dense, multilingual, cross-lingual, BM25, graph walk, the
query's period, preferences), the language-centred similarity (memoryx.search.centered), the context a neighbouring
hit lends, recency, importance, access, validity, whether a later memory of the same owner says nearly the same
thing, length, whether it writes a number, memory type, the side of a chat that said it, the companion encoder's
cosine (memoryx.stores.vectors.companion), and the signals the query analysis reads from the question and the
memory (a named period, a relation, a figure...). `feature_matrix` turns them into one vector each; a logistic
model over it, `sigmoid(scale x (w . x) + bias)`, mixed with gradient-boosted trees over the same vector (each
scaled so the best candidate is 1; memoryx.search.ranker_trees), gives each candidate's relevance, which the seeds'
final score blends with importance, recency and access by the settings' weights
(memoryx.search.scoring.final_scores), so those knobs and a caller's `threshold` keep their meaning.

The weights and trees are data (`ranker_model.json` beside this module, and `ranker_model_without_companion.json`
for a memory whose companion index is off), written by `bench/recall/fit_ranker.py`
from the shared dev sets (a pairwise logistic model per question, then the scale and bias calibrated pointwise; the
trees as a ranking, LambdaRank); this module only reads them. A feature the file does not name weighs 0; a name the
file has and this module does not compute is refused at load, so a model and the code that feeds it cannot drift
apart silently.

A trace of every search's candidates and their features can be collected (`collect_traces`), which is how the
fitting script sees what the ranking saw, through the public API and its defaults.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from pathlib import Path

import numpy as np

from memoryx.search.access import today
from memoryx.search.ranker_trees import Trees, trees_from
from memoryx.search.scoring import access_score, decay, epoch_of, event_time

MODEL_FILE = Path(__file__).with_name("ranker_model.json")
# the model for a memory whose companion index is off (MEMORYX_COMPANION_VECTORS=false), fitted without its two
# signals: the shipped model, fitted with them, ranks worse than this one when they all read 0
MODEL_WITHOUT_COMPANION = Path(__file__).with_name("ranker_model_without_companion.json")

PATHS = ("dense", "multilingual", "crosslingual", "keyword", "graph", "time", "preference")
# what the query analysis and expand_context read from a question and a memory together (nodes/expand_context.py)
MATCH_SIGNALS = ("in_period", "when_time", "amount", "preference", "role", "someone_else", "own_not_theirs",
                 "relation", "naming", "attribute")
BEST = 8  # "later among the best": the place in time among the best candidates by the pool's order
STATEMENT_CHARS = 300  # a later memory saying nearly the same thing: compared among fact-sized texts only
NEWER_TOP = 30  # ... of the best candidates by the pool's order (pairs cost ~5 us each)
SIMILAR = 0.25  # word overlap (Jaccard) from which a later memory may say the same thing anew
# A place in time counts whole days from the pool's earliest event: memories written the same day as the earliest
# (one add, a loop of adds) sit at one place however many seconds each write took, so the same words written the
# same way rank the same way; a finer clock would split them at some second of the loop.
DAY_SECONDS = 86400.0

# the seeds' factors of the final score, weighted by the settings (MEMORYX_WEIGHT_*), not fitted: the model gives the
# relevance they are blended with (memoryx.search.scoring.final_scores); a model weight for them is refused
BLEND = ("recency", "importance", "access")

FEATURES: tuple[str, ...] = (
    *(f"{p}_score" for p in PATHS), *(f"{p}_rr" for p in PATHS),
    "dense_cosine", "multilingual_cosine", "multilingual_centered", "context",
    *MATCH_SIGNALS,
    "recency", "importance", "access", "length", "episodic", "superseded", "summarized",
    "newer_similar", "later_in_time", "later_among_best", "current_x_later", "current_x_later_among_best",
    "current_x_newer_similar", "current_x_ended", "dense_unread",
    "other_side", "covers", "figure", "companion_cosine", "companion_gap",
)


_PUNCTUATION = ".,!?;:()\"'“”‘’。，！？、"


def _words(text: str) -> frozenset[str]:
    words = text.lower().split()
    return frozenset(map(str.strip, words, repeat(_PUNCTUATION, len(words)))) - {""}


# each feature's column, and the columns filled from a candidate's per-path and per-signal dicts
COLUMN = {name: j for j, name in enumerate(FEATURES)}
_SCORE_COL = {p: COLUMN[f"{p}_score"] for p in PATHS}
_RR_COL = {p: COLUMN[f"{p}_rr"] for p in PATHS}
_SIGNAL_COL = {s: COLUMN[s] for s in ("context", *MATCH_SIGNALS)}
_LOG_2000 = math.log1p(2000)
_DIGIT = re.compile(r"\d")  # a decimal digit of any script (ASCII, full-width, ...)


def _newer_similar(cands: list[dict], times: list[float | None]) -> np.ndarray:
    """For each fact-sized candidate among the best NEWER_TOP, the largest word overlap (Jaccard) with a later one
    (same owner, later event), when it reaches SIMILAR, else 0: 'superseded by something newer' as a signal,
    whatever words say the change. `times`: the candidates' event times. All pairs at once: the overlaps are
    ratios of whole word counts, exactly as a pair-by-pair count gives them."""
    out = np.zeros(len(cands))
    rows, words, owners = [], [], []
    for i, c in enumerate(cands[:NEWER_TOP]):
        mem = c["memory"]
        text = mem.get("memory") or ""
        if len(text) > STATEMENT_CHARS or times[i] is None:
            continue
        w = _words(text)
        if w:
            rows.append(i)
            words.append(w)
            owners.append(mem.get("user_id") or mem.get("agent_id"))
    if len(rows) < 2:
        return out
    vocab: dict[str, int] = {}
    at_row, at_col = [], []
    for r, w in enumerate(words):
        for word in w:
            at_row.append(r)
            at_col.append(vocab.setdefault(word, len(vocab)))
    incidence = np.zeros((len(rows), len(vocab)))
    incidence[at_row, at_col] = 1.0
    shared = incidence @ incidence.T  # whole counts: exact in float64
    sizes = incidence.sum(axis=1)
    overlap = shared / (sizes[:, None] + sizes[None, :] - shared)
    ts = np.array([times[i] for i in rows])
    ids = {o: k for k, o in enumerate(dict.fromkeys(owners))}
    owner = np.array([ids[o] for o in owners])
    later = (ts[None, :] > ts[:, None]) & (owner[None, :] == owner[:, None])
    best = np.where(later, overlap, 0.0).max(axis=1)
    out[rows] = np.where(best >= SIMILAR, best, 0.0)
    return out


def _states_figure(text: str) -> bool:
    """The text writes a number in digits (any script's): what an amount, a count, a date or a price is made of,
    whatever words go with it."""
    return _DIGIT.search(text) is not None


def _place_in_time(ts: np.ndarray) -> np.ndarray:
    """Each time's place between the earliest and the latest of `ts`, 0 to 1, in whole days after the earliest
    (all 0 when they fall within a day of it)."""
    if not ts.size:
        return ts
    days = np.floor((ts - float(ts.min())) / DAY_SECONDS)
    span = float(days.max())
    return days / span if span > 0 else np.zeros(len(ts))


def feature_matrix(cands: list[dict], plan, settings, now: float) -> np.ndarray:
    """The candidates' feature vectors (a row each, FEATURES' order; their `memory` rows read); cands best first
    by the pool's order. What is the same for every candidate is read once per search; what differs is read from
    each candidate's dicts in one pass, and the arithmetic over them is done a column at a time."""
    n = len(cands)
    x = np.zeros((n, len(FEATURES)))
    if not n:
        return x
    half = float(settings.recency_half_life_days)
    day = today()  # the clock's day, as final_scores reads accesses
    # the main encoder's similarity to a question in a script it was not trained on is close to noise
    reads = 1.0 if plan.encoder_reads_query else 0.0
    role = plan.role
    score_col, rr_col, signal_col = _SCORE_COL, _RR_COL, _SIGNAL_COL
    times: list[float | None] = []
    at_row: list[int] = []
    at_col: list[int] = []
    values: list[float] = []
    # per candidate: dense scaled score, dense cosine, multilingual cosine, recency, importance, access, length,
    # episodic, superseded, summarized, ended, other side, covers, figure
    per: list[tuple] = []
    for i, c in enumerate(cands):
        mem = c["memory"]
        ts = event_time(mem)
        times.append(ts)
        dense = 0.0
        norm = c.get("path_norm")
        if norm:
            for p, v in norm.items():
                if p == "dense":
                    dense = float(v)
                elif p in score_col:
                    at_row.append(i)
                    at_col.append(score_col[p])
                    values.append(float(v))
        ranks = c.get("path_ranks")
        if ranks:
            for p, r in ranks.items():
                if p in rr_col:
                    at_row.append(i)
                    at_col.append(rr_col[p])
                    values.append(1.0 / (1.0 + r))
        sig = c.get("signals")
        if sig:
            for s, v in sig.items():
                if s in signal_col:
                    at_row.append(i)
                    at_col.append(signal_col[s])
                    values.append(float(v))
        raw = c.get("path_scores")  # the similarity itself, comparable across questions
        imp = mem.get("importance")
        ended_at = mem.get("invalid_at")
        if ended_at is not None:
            ended_at = epoch_of(ended_at)
        said = (mem.get("metadata") or {}).get("role")
        text = mem.get("memory") or ""
        per.append((dense, float(raw.get("dense", 0.0)) if raw else 0.0,
                    float(raw.get("multilingual", 0.0)) if raw else 0.0,
                    decay(ts, half, now), 0.5 if imp is None else max(0.0, min(1.0, float(imp))),
                    access_score(mem, day) if mem.get("access_count") else 0.0,
                    min(1.0, math.log1p(len(text)) / _LOG_2000),
                    mem.get("memory_type") == "episodic", ended_at is not None and ended_at <= now,
                    mem.get("status") == "summarized", bool(c.get("ended")),
                    role is not None and bool(said) and said != role, bool(c.get("covers")),
                    _states_figure(text)))
    x[at_row, at_col] = values
    cols = np.array(per, dtype=float).T
    dense_norm, ended = cols[0], cols[10]
    col = COLUMN
    x[:, col["dense_score"]] = dense_norm * reads
    x[:, col["dense_rr"]] *= reads
    x[:, col["dense_cosine"]] = cols[1] * reads
    x[:, col["dense_unread"]] = dense_norm * (1.0 - reads)
    x[:, [col[f] for f in ("multilingual_cosine", "recency", "importance", "access", "length", "episodic",
                           "superseded", "summarized")]] = cols[2:10].T
    x[:, col["multilingual_centered"]] = [c.get("centered", 0.0) for c in cands]  # memoryx.search.centered
    x[:, col["other_side"]] = cols[11]
    x[:, col["covers"]] = cols[12]
    x[:, col["figure"]] = cols[13]
    # the companion encoder's cosine, and that cosine less the best candidate's (0 where a memory has no vector)
    read = [i for i, c in enumerate(cands) if "companion" in c]
    if read:
        cos = np.array([cands[i]["companion"] for i in read])
        x[read, col["companion_cosine"]] = cos
        x[read, col["companion_gap"]] = cos - cos.max()
    # the place in time among all candidates, and among the best BEST by the pool's order
    ts = np.array([np.nan if t is None else t for t in times])
    known = ~np.isnan(ts)
    later = np.zeros(n)
    later[known] = _place_in_time(ts[known])
    later_best = np.zeros(n)
    best = known[:BEST]
    later_best[:BEST][best] = _place_in_time(ts[:BEST][best])
    similar = _newer_similar(cands, times)
    current = 1.0 if (plan.current or plan.current_value or plan.still) else 0.0
    x[:, col["newer_similar"]] = similar
    x[:, col["later_in_time"]] = later
    x[:, col["later_among_best"]] = later_best
    x[:, col["current_x_later"]] = current * later
    x[:, col["current_x_later_among_best"]] = current * later_best
    x[:, col["current_x_newer_similar"]] = current * similar
    x[:, col["current_x_ended"]] = current * ended
    return x


def features(cands: list[dict], plan, settings, now: float) -> list[list[float]]:
    """`feature_matrix` as lists (what a trace records)."""
    return feature_matrix(cands, plan, settings, now).tolist()


@dataclass(frozen=True)
class FittedModel:
    weights: tuple[float, ...]  # FEATURES' order
    scale: float
    bias: float
    source: str  # what it was fitted on, as the file says
    trees: Trees | None = None  # the blend partner (memoryx.search.ranker_trees), when the file has one

    def scores(self, rows) -> list[float]:
        """Each row's probability (rows: a feature matrix, or lists in FEATURES' order). The weighted sum adds
        the features in FEATURES' order, a column at a time, as a row-by-row sum would."""
        x = np.asarray(rows, dtype=float)
        if x.size == 0:
            return []
        z = np.zeros(len(x))
        for j, w in enumerate(self.weights):
            if w:  # a zero weight adds nothing
                z += w * x[:, j]
        return [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, self.scale * v + self.bias)))) for v in z.tolist()]

    def relevance(self, rows) -> list[float]:
        """Each row's relevance: the linear probability scaled so the best is 1, mixed with the trees' (scaled
        alike) by their share."""
        p = self.scores(rows)
        top = max(p, default=0.0)
        rel = [v / top if top > 0 else 0.0 for v in p]
        if self.trees is None or not rel or self.trees.share <= 0:
            return rel
        q = self.trees.squashed(np.asarray(rows, dtype=float))
        q = q / q.max() if q.max() > 0 else q
        share = self.trees.share
        return [(1.0 - share) * a + share * b for a, b in zip(rel, q.tolist())]


def model_from(data: dict) -> FittedModel:
    """A model from the file's JSON: {"features": {name: weight}, "scale", "bias", "fitted_on", optionally "trees"};
    a feature this module does not compute, or one of the blended factors, is an error (the file and the code
    disagree)."""
    weights = data.get("features") or {}
    unknown = sorted(set(weights) - set(FEATURES) | (set(weights) & set(BLEND)))
    if unknown:
        raise ValueError(f"ranker model names features this code does not compute: {unknown}; refit it with "
                         "bench/recall/fit_ranker.py")
    return FittedModel(weights=tuple(float(weights.get(f, 0.0)) for f in FEATURES),
                       scale=float(data.get("scale", 1.0)), bias=float(data.get("bias", 0.0)),
                       source=str(data.get("fitted_on", "")),
                       trees=trees_from(data["trees"], {f: j for f, j in COLUMN.items() if f not in BLEND})
                       if data.get("trees") else None)


@lru_cache(maxsize=2)
def fitted_model(companion: bool = True) -> FittedModel | None:
    """The shipped model (`companion`: the companion index is on; else the model fitted without its signals,
    where the package has one), None when the package has none (the hand-weighted order then stands)."""
    path = MODEL_FILE if companion or not MODEL_WITHOUT_COMPANION.exists() else MODEL_WITHOUT_COMPANION
    if not path.exists():
        return None
    return model_from(json.loads(path.read_text(encoding="utf-8")))


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
