"""Language-centred similarity: how near a memory is to the question under the multilingual encoder, with each
script's mean vector taken out of both, so a memory written in another language than the question's is scored on
the same scale as one in its own.

A multilingual encoder puts every sentence of a language near that language's offset (its vectors' mean has a
length of ~0.9 of a unit vector): an English question is nearer any English memory than the Japanese one that
answers it, so the raw cosine ranks "Yuki is pregnant" above 「ゆきの誕生日は3月5日」 for "When is Yuki's birthday?".
Subtracting the offset (the question script's mean of questions from the question, the memory script's mean of
statements from the memory) leaves what each is about. The means are data (`language_means.npz` beside this module,
written by bench/recall/fit_language_means.py); the fitted ranking weighs the result as one of its signals
(memoryx.search.ranker, "multilingual_centered").

Only where the scope holds the multilingual index (an owner who writes Chinese or Japanese): the candidates'
vectors are read from it, not embedded again; a candidate without one (written before its owner's first CJK
memory, until a reindex) scores 0, as every candidate of an owner who only writes English does.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from memoryx.stores.vectors.multilingual import script_of

MEANS_FILE = Path(__file__).with_name("language_means.npz")


@lru_cache(maxsize=1)
def language_means() -> dict[str, np.ndarray] | None:
    """{"query_<script>" | "document_<script>": mean vector} (scripts: "cjk", "latin"); None when the package has
    no means file (the signal then reads 0, as the fitted ranking does without its model file)."""
    if not MEANS_FILE.exists():
        return None
    with np.load(MEANS_FILE) as data:
        return {k: np.asarray(data[k], dtype=np.float32) for k in data.files if k != "fitted_on"}


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def centered_cosines(query_vector, query_text: str, vectors: dict[str, list[float]],
                     texts: dict[str, str]) -> dict[str, float]:
    """{memory id: the cosine of the question and the memory, each less its script's mean, floored at 0} for the
    memories in `vectors` (their multilingual vectors; `texts`: each memory's text, whose script picks its mean;
    `query_text`: the text the question's vector embeds). Nothing when the means are missing or of another size."""
    means = language_means()
    q = np.asarray(query_vector, dtype=np.float32)
    if not vectors or means is None or means["query_latin"].shape != q.shape:  # (another encoder's vectors)
        return {}
    q = _unit_rows(q - means[f"query_{script_of(query_text)}"])
    ids = list(vectors)
    docs = np.array([vectors[i] for i in ids], dtype=np.float32)
    cjk = np.array([script_of(texts.get(i)) == "cjk" for i in ids])
    docs[cjk] -= means["document_cjk"]
    docs[~cjk] -= means["document_latin"]
    cos = np.maximum(_unit_rows(docs) @ q, 0.0)
    return dict(zip(ids, cos.tolist()))
