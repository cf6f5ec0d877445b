"""Linear query adapters for the bundled encoders: a question's vector moved towards where the statements that
answer such questions sit (q' = normalise((I + A) q)), documents left as they are.

An encoder embeds a question ("When did Caroline go to the support group?") and the turn that answers it ("I
went to a LGBTQ support group yesterday") as two different kinds of sentence; one matrix fitted on dev pairs
(question -> its evidence turns, against the other turns of the same history) narrows that gap for any phrasing,
without a word list. Each `A` is data beside this module (float16): `query_adapter_minilm.npz` for the bundled
MiniLM and `query_adapter_use.npz` for the companion encoder (memoryx.models.embedding_use), written by
bench/recall/fit_query_adapter.py --write [--encoder companion] from LoCoMo dev and LongMemEval_S dev with k-fold
cross-validation; this module only reads them. A matrix fits one encoder: applied to another model's vectors it
would be noise, so make_embeddings uses the MiniLM one only with the bundled MiniLM (MEMORYX_QUERY_ADAPTER).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

ADAPTER_FILE = Path(__file__).with_name("query_adapter_minilm.npz")
COMPANION_ADAPTER_FILE = Path(__file__).with_name("query_adapter_use.npz")


@lru_cache(maxsize=4)
def adapter_matrix(path: Path = ADAPTER_FILE) -> np.ndarray:
    """W = I + A (float32) of the adapter file at `path`, read once."""
    with np.load(path, allow_pickle=False) as data:
        a = np.asarray(data["A"], dtype=np.float32)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{path.name}: the adapter must be a square matrix, not {a.shape}")
    return np.eye(len(a), dtype=np.float32) + a


def adapt(vectors: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Query vectors (rows) through the adapter, L2-normalised again (the stores compare by cosine)."""
    out = np.asarray(vectors, dtype=np.float32) @ matrix.T
    return out / np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
