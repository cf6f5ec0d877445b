"""bench/recall/probes.py measures a signal before it is built: its columns must be what they say, computed from a
trace of a real search and the store's own vectors, and appended to the rows compare_signals.py fits, or its
figures would be for another signal."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from memoryx.api.memory import Memory
from memoryx.search.ranker import FEATURES, collect_traces
from tests.support import shared_embeddings

RECALL = Path(__file__).resolve().parents[2] / "bench" / "recall"


def _probes():
    sys.path.insert(0, str(RECALL))  # probes.py imports the harness's stores.py beside it
    try:
        spec = importlib.util.spec_from_file_location("probes", RECALL / "probes.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(RECALL))


SAID = ["I bought a red mug at the flea market.", "I bought a red mug at the flea market today.",
        "I bought a red mug at a flea market.", "Can you suggest a good mug for tea?",
        "My sister Ana lives in Lisbon and teaches physics？"]


def _traced_row(tmp_path) -> tuple[dict, Memory]:
    m = Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings())
    m.add_many([{"messages": [{"role": "user", "content": t, "timestamp": f"2024-03-0{i + 1}T10:00:00+00:00"}],
                 "user_id": "owner"} for i, t in enumerate(SAID)], infer=False)
    with collect_traces() as traces:
        m.search("Where did I buy my mug?", user_id="owner", limit=5)
    trace = traces[-1]
    row = {"question": {"query": "Where did I buy my mug?"}, "set": "lives", "ids": trace["ids"],
           "texts": trace["texts"], "aggregate": trace.get("aggregate"),
           "X": np.array(trace["features"], dtype=float)}
    return row, m


def test_asks_and_question_columns(tmp_path):
    probes = _probes()
    row, m = _traced_row(tmp_path)
    m.close()
    names = probes.with_probe([row], "asks", tmp_path)
    assert names == ["asks"] and row["X"].shape[1] == len(FEATURES) + 1
    asks = dict(zip(row["texts"], row["X"][:, -1]))
    assert asks["Can you suggest a good mug for tea?"] == 1.0
    assert asks["My sister Ana lives in Lisbon and teaches physics？"] == 1.0  # the full-width mark
    assert asks["I bought a red mug at the flea market."] == 0.0
    names = probes.with_probe([row], "question", tmp_path)
    extra = row["X"][:, -len(names):]
    assert (extra == extra[0]).all()  # the same for every candidate of the question
    assert extra[0, 0] == row["X"][:, FEATURES.index("dense_cosine")].max()


def test_centrality_reads_the_stores_vectors(tmp_path):
    """The three near-copies are each other's nearest neighbours, so they are the pool's most central memories;
    the statement about a sister shares nothing with them and is the least central. CSLS is the question's
    cosine less that centrality."""
    probes = _probes()
    row, m = _traced_row(tmp_path)
    got = m.services.vectors.memory_vectors(row["ids"])
    m.close()
    assert set(got) == set(row["ids"])
    cols = probes._centrality(row, got)
    central = dict(zip(row["texts"], cols[:, 0]))
    copies = [central[t] for t in SAID[:3]]
    assert min(copies) > central[SAID[3]] > central[SAID[4]]
    cosine = row["X"][:, FEATURES.index("dense_cosine")]
    assert np.allclose(cols[:, 1], np.where(cosine != 0, cosine - cols[:, 0], 0.0))
    v = np.array([got[i] for i in row["ids"]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    sims = v @ v.T
    first = [j for j in range(len(v)) if j != 0]
    expected = np.sort(sims[0, first])[::-1][:probes.NEIGHBOURS].mean()
    assert abs(cols[0, 0] - expected) < 1e-5


def test_stepping_over_near_copies_keeps_the_top_and_moves_only_copies():
    """bench/recall/fit_redundancy.py: a near-copy of a hit already taken steps below a candidate that says
    something else; nothing moves without a penalty, and the top hit never does."""
    spec = importlib.util.spec_from_file_location("fit_redundancy", RECALL / "fit_redundancy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    texts = ["I've clocked 347 miles on my bike since the start of the year",
             "I have clocked 347 miles on my bike since the start of the year!",
             "The bike lights I had installed were $40",
             "我骑车上班，单程五公里。"]
    scores = np.array([0.9, 0.85, 0.8, 0.5])
    row = {"texts": texts}
    assert module.redundancy_order(row, scores, 0.5, 0.0) == [0, 1, 2, 3]
    assert module.redundancy_order(row, scores, 0.5, 0.2) == [0, 2, 1, 3]
    # the lights share one token of four with the miles ("bike"): below the bar, they pay nothing
    assert module.redundancy_order(row, scores, 0.3, 5.0) == [0, 2, 3, 1]
