"""How much a memory said in another language than the question's is worth: the multilingual index's bridge
list (memoryx.stores.vectors.multilingual), scored against a floor instead of against each other.

A multilingual encoder scores a question's own language above every other (an English question is nearer any
English sentence than the Chinese one that answers it), and its cosines sit in a narrow band, so neither the
raw score nor its min-max over the few memories an owner wrote in the other script says whether one of them
answers: min-max would always hand the best of them the whole path weight. The floor is per question: its
similarity to plain sentences of that script that answer nothing ("今天天气很好。", "See you tomorrow."). A
memory no nearer the question than those gets nothing; one `margin` above it, the path's full weight.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

# Sentences that answer no question, in each script the bridge compares; the floor is the nearest of them.
NEUTRAL = {
    "cjk": ("今天天气很好。", "我们明天见吧。", "这个问题有点复杂。", "谢谢你的帮助！",
            "今日はいい天気ですね。", "また明日話しましょう。", "ちょっと考えてみます。", "ありがとうございます。"),
    "latin": ("The weather is nice today.", "See you tomorrow.", "This question is a bit complicated.",
              "Thanks for your help!", "Let me think about it.", "That sounds good to me."),
}

_vectors: "weakref.WeakKeyDictionary[object, dict[str, np.ndarray]]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def neutral_vectors(embeddings, script: str) -> np.ndarray:
    """The neutral sentences of a script as the encoder's passages (embedded once per encoder)."""
    with _lock:
        known = _vectors.get(embeddings)
        if known is not None and script in known:
            return known[script]
    vecs = np.asarray(embeddings.embed_documents(list(NEUTRAL[script])), dtype=np.float32)
    with _lock:
        _vectors.setdefault(embeddings, {})[script] = vecs
    return vecs


def bridge_scores(hits: list[dict], query_vector: list[float], embeddings, script: str,
                  margin: float) -> list[dict]:
    """The hits (memories written in `script`, best first) rescored to [0, 1] above the question's floor;
    those at or below it are left out."""
    if not hits:
        return []
    floor = float(np.max(neutral_vectors(embeddings, script) @ np.asarray(query_vector, dtype=np.float32)))
    width = max(float(margin), 1e-6)
    return [dict(h, score=min(1.0, (h["score"] - floor) / width)) for h in hits if h["score"] > floor]
